// The exec-boundary guard in each real host (issues 22, 31, 32): `herdr-link setup` installs the
// herdr shim and the host's wiring (the shim first on PATH, $HERDR_BIN_PATH naming it, the host's
// presence key in its commands' environment, login shells included); a `herdr agent wait`
// started by another program (python's subprocess through $HERDR_BIN_PATH, a Makefile recipe, a
// detached `setsid -f`, a login shell) then reaches Herdr while the session is dormant and is
// refused by the shim once it is active (exit 77, the guard's reason), and the fake Herdr's argv
// log holds no such wait; `herdr agent list` still runs through the shim, through PATH and
// through $HERDR_BIN_PATH. Codex runs in its default sandbox (`workspace-write`) as well as
// `danger-full-access`; Claude Code with its sandbox on as well as off (where this machine has
// what Claude Code's Linux sandbox needs).

import assert from "node:assert/strict"
import { symlinkSync, mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { test } from "node:test"
import { assertRunHealthy, projectWorld, runRoute } from "./lib/e2e.mjs"
import { claude, codex, gemini, opencodeMcp, opencodePlugin, qwen, setup } from "./lib/hosts.mjs"
import { NODE_MODULES, Sandbox } from "./lib/sandbox.mjs"
import { startModel } from "./lib/model.mjs"
import { playGoals } from "./lib/script.mjs"

// Programs the text guard cannot follow, each ending in an exec of the shim (through PATH or
// $HERDR_BIN_PATH). The wait's own output (Herdr's agent record, with pane ids) stays out of the
// model's view.
const PY_WAIT = `python3 -c "import os,subprocess,sys; sys.exit(subprocess.run([os.environ['HERDR_BIN_PATH'],'agent','wait','beta'],stdout=subprocess.DEVNULL).returncode)"; echo "py-exit=$?"`
const MAKE_WAIT = `make -s -f herdr-wait.mk; echo "make-exit=$?"`
const MAKEFILE = "all:\n\therdr agent wait beta >/dev/null\n"
// Detached: the wait runs after its parents exited; the command waits for its exit status (a
// sandbox ends every process of its own when the command ends).
const setsidWait = (tag) =>
  `setsid -f sh detach.sh ${tag}; i=0; while [ ! -s setsid-${tag}.rc ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; echo "setsid-exit=$(cat setsid-${tag}.rc)"; cat setsid-${tag}.err`
const DETACH_SH = 'sleep 0.5; herdr agent wait beta >/dev/null 2>"setsid-$1.err"; echo $? >"setsid-$1.rc"\n'
// A login shell resets PATH from the system profile; setup's block in the login profile puts
// the shim back.
const LOGIN_WAIT = `bash -l login-wait.sh; echo "login-exit=$?"`
const LOGIN_SH = "herdr agent wait beta >/dev/null\n"
const LIST = `herdr agent list >/dev/null && echo list-ran; "$HERDR_BIN_PATH" agent list >/dev/null && echo binpath-list-ran; echo "herdr-is=$(command -v herdr)"; echo "binpath-is=$HERDR_BIN_PATH"`
// Gemini CLI and Qwen Code (issue 30): the PATH-started and Python-started waits, without the
// detached and login-shell cases; Gemini CLI's shell tool refuses any command substitution, so
// its list check has none.
const LIST_QWEN = `herdr agent list >/dev/null && echo list-ran; echo "herdr-is=$(command -v herdr)"`
const LIST_GEMINI = `herdr agent list >/dev/null && echo list-ran; command -v herdr | sed 's/^/herdr-is=/'`

function world(kind) {
  return (sb) =>
    projectWorld(sb, [
      { agent: kind, name: "brain", status: "working" },
      { agent: "pi", name: "beta", status: "working" },
    ])
}

const waits = (sb) => sb.argvLog().filter((a) => a.includes("agent") && a.includes("wait"))
const lists = (sb) => sb.argvLog().filter((a) => a[0] === "agent" && a[1] === "list")

/** Codex in its default sandbox: only `sandbox_mode` changed from the suite's config. */
const codexWorkspaceWrite = {
  ...codex,
  name: "codex-workspace-write",
  setup(sb, model) {
    const host = codex.setup(sb, model)
    const file = join(sb.root, "codex-home", "config.toml")
    const text = readFileSync(file, "utf8")
    assert.match(text, /^sandbox_mode = "danger-full-access"$/m)
    writeFileSync(file, text.replace(/^sandbox_mode = "danger-full-access"$/m, 'sandbox_mode = "workspace-write"'))
    return host
  },
}

// Claude Code's Linux sandbox needs bubblewrap and socat: Codex's package brings a bubblewrap
// (used when none is installed); socat must be on the machine (run.sh installs it).
const CODEX_BWRAP = join(NODE_MODULES, "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap")
const onPath = (name) => (process.env.PATH ?? "").split(":").some((d) => d && existsSync(join(d, name)))

/** Claude Code with its Bash sandbox on (its defaults: no Unix sockets, own namespaces). */
const claudeSandboxed = {
  ...claude,
  name: "claude-sandbox",
  setup(sb, model) {
    const host = claude.setup(sb, model)
    const file = join(sb.home, ".claude", "settings.json")
    const settings = JSON.parse(readFileSync(file, "utf8"))
    settings.sandbox = { enabled: true, autoAllowBashIfSandboxed: true }
    writeFileSync(file, JSON.stringify(settings, null, 2))
    const extra = []
    if (!onPath("bwrap")) {
      mkdirSync(join(sb.root, "sandbox-bin"), { recursive: true })
      symlinkSync(CODEX_BWRAP, join(sb.root, "sandbox-bin", "bwrap"))
      extra.push(join(sb.root, "sandbox-bin"))
    }
    const socat = (process.env.PATH ?? "").split(":").find((d) => d && existsSync(join(d, "socat")))
    if (socat) extra.push(socat)
    return { ...host, env: { ...host.env, PATH: [...extra, host.env.PATH].join(":") } }
  },
}

const ONLY = process.env.HERDR_E2E_ONLY?.split(",")
const ALL = [claude, claudeSandboxed, codex, codexWorkspaceWrite, opencodeMcp, opencodePlugin]
const ROUTES = ALL.filter((r) => !ONLY || ONLY.includes(r.name))

for (const route of ROUTES) {
  test(`${route.name}: the herdr shim lets waits through while dormant and refuses them once active`, async () => {
    // run.sh installs socat; a machine without it fails here rather than skipping the sandbox.
    assert.ok(route !== claudeSandboxed || onPath("socat"), "socat is not installed (Claude Code's Linux sandbox needs it)")
    const goals = [
      { bash: LIST },
      { bash: PY_WAIT },
      { bash: MAKE_WAIT },
      { bash: setsidWait("dormant") },
      { bash: LOGIN_WAIT },
      { link: "activate" },
      { bash: PY_WAIT },
      { bash: MAKE_WAIT },
      { bash: setsidWait("active") },
      { bash: LOGIN_WAIT },
      { bash: LIST },
    ]
    const shimDir = (sb) => join(sb.xdg.data, "herdr-link", "shim")
    const routeWithShim = {
      ...route,
      setup(sb, model) {
        sb.file("project/herdr-wait.mk", MAKEFILE)
        sb.file("project/detach.sh", DETACH_SH)
        sb.file("project/login-wait.sh", LOGIN_SH)
        const host = route.setup(sb, model)
        if (route === opencodePlugin) {
          // The plugin route has no setup command of its own (its files are copied,
          // hosts/opencode/README.md); the shim link and the login-profile block are what any
          // `herdr-link setup` creates.
          setup(sb, "claude")
        }
        return host
      },
    }
    const run = await runRoute(routeWithShim, goals, { world: world(route.agentKind) })
    try {
      assertRunHealthy(run)
      const [list, dPy, dMake, dSetsid, dLogin, , aPy, aMake, aSetsid, aLogin, aList] = run.steps.map((s) => String(s.output))
      const d = run.describe()
      const shim = `${shimDir(run.sb)}/herdr`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      // The host's commands find the shim first on PATH and in $HERDR_BIN_PATH.
      assert.match(list, new RegExp(`herdr-is=${shim}\\n`), d)
      assert.match(list, new RegExp(`binpath-is=${shim}\\n`), d)
      if (route === claudeSandboxed) {
        // Claude Code's default sandbox lets no command create a Unix socket: Herdr itself is
        // out of reach from inside (its own CLI cannot connect), and so is the shim's holder.
        // Dormant, nothing of Link's holds the wait back: it goes on to Herdr, which the sandbox
        // keeps out of reach. Active, the shim sees its host's holder but cannot ask it, and
        // refuses (docs/guard.md, "Host sandboxes").
        for (const [out, name] of [[dPy, "py"], [dMake, "make"], [dSetsid, "setsid"], [dLogin, "login"]]) {
          assert.doesNotMatch(out, new RegExp(`${name}-exit=(0|77)\\b`), d)
          assert.doesNotMatch(out, /Blocked by Herdr Link/, d)
        }
        assert.match(dPy, /server_not_running/, d)
        for (const out of [aPy, aSetsid]) assert.match(out, /cannot tell whether Herdr Link is active/, d)
      } else {
        // Dormant: every wait reached Herdr.
        assert.match(dPy, /py-exit=0/, d)
        assert.match(dMake, /make-exit=0/, d)
        assert.match(dSetsid, /setsid-exit=0/, d)
        assert.match(dLogin, /login-exit=0/, d)
        assert.match(list, /list-ran/, d)
        assert.match(list, /binpath-list-ran/, d)
        assert.equal(waits(run.sb).length, 4, `waits before activation: ${JSON.stringify(waits(run.sb))}\n${d}`)
      }
      // Active: the shim refused them all (the command ran: the text guard let it through),
      // with the guard's reason and its own exit status; nothing more reached Herdr.
      assert.match(aPy, /py-exit=77/, d)
      assert.match(aPy, /Blocked by Herdr Link/, d)
      assert.match(aMake, /make-exit=2/, d)
      assert.match(aMake, /Blocked by Herdr Link/, d)
      assert.match(aMake, /Error 77/, d)
      assert.match(aSetsid, /setsid-exit=77/, d)
      assert.match(aSetsid, /Blocked by Herdr Link/, d)
      assert.match(aLogin, /login-exit=77/, d)
      const before = route === claudeSandboxed ? 0 : 4
      assert.equal(waits(run.sb).length, before, `waits after activation: ${JSON.stringify(waits(run.sb))}\n${d}`)
      if (route !== claudeSandboxed) {
        assert.match(aList, /list-ran/, d)
        assert.match(aList, /binpath-list-ran/, d)
        assert.ok(lists(run.sb).length >= 4, `agent list calls: ${JSON.stringify(lists(run.sb))}`)
      }
    } finally {
      await run.done()
    }
  })
}

// Gemini CLI and Qwen Code run each command as `bash -c` in the environment the host was started
// with (the startup-file block setup writes puts the shim there).
for (const route of [gemini, qwen].filter((r) => !ONLY || ONLY.includes(r.name))) {
  test(`${route.name}: the herdr shim lets waits through while dormant and refuses them once active`, async () => {
    const list = route === gemini ? LIST_GEMINI : LIST_QWEN
    // Qwen Code's shell tool (child_process, not streaming) takes the output it has read when
    // the shell exits, without waiting for the pipes to close: on a busy machine the last
    // lines, or all of them, were lost (seen twice in full runs). The shell stays a moment
    // after its output so Qwen Code reads it; the assertions below are unchanged.
    const settle = (command) => (route === qwen ? `${command}; sleep 1` : command)
    const goals = [
      { bash: settle(list) },
      { bash: settle(PY_WAIT) },
      { bash: settle(MAKE_WAIT) },
      { link: "activate" },
      { bash: settle(PY_WAIT) },
      { bash: settle(MAKE_WAIT) },
      { bash: settle(list) },
    ]
    const shimDir = (sb) => join(sb.xdg.data, "herdr-link", "shim")
    const routeWithShim = {
      ...route,
      setup(sb, model) {
        sb.file("project/herdr-wait.mk", MAKEFILE)
        const host = route.setup(sb, model)
        return host
      },
    }
    const run = await runRoute(routeWithShim, goals, { world: world(route.agentKind) })
    try {
      assertRunHealthy(run)
      const [list, dPy, dMake, , aPy, aMake, aList] = run.steps.map((s) => String(s.output))
      const d = run.describe()
      // The host's commands find the shim first on PATH.
      assert.match(list, /list-ran/, d)
      assert.match(list, new RegExp(`herdr-is=${shimDir(run.sb).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/herdr`), d)
      // Dormant: both waits reached Herdr.
      assert.match(dPy, /py-exit=0/, d)
      assert.match(dMake, /make-exit=0/, d)
      assert.equal(waits(run.sb).length, 2, `waits before activation: ${JSON.stringify(waits(run.sb))}`)
      // Active: the shim refused both (the command ran: the text guard let it through), with
      // the guard's reason and its own exit status; nothing more reached Herdr.
      assert.match(aPy, /py-exit=77/, d)
      assert.match(aPy, /Blocked by Herdr Link/, d)
      assert.match(aMake, /make-exit=2/, d)
      assert.match(aMake, /Blocked by Herdr Link/, d)
      assert.match(aMake, /Error 77/, d)
      assert.match(aList, /list-ran/, d)
      assert.equal(waits(run.sb).length, 2, `waits after activation: ${JSON.stringify(waits(run.sb))}`)
      assert.ok(lists(run.sb).length >= 2, `agent list calls: ${JSON.stringify(lists(run.sb))}`)
    } finally {
      await run.done()
    }
  })
}

// OpenCode, plugin route: two sessions in one OpenCode process (the main session and the
// subagent session its `task` tool starts), one activated. The library answers the shim for the
// session whose command asks (its marker, $HERDR_LINK_SESSION): the dormant session's wait
// reaches Herdr, the active one's is refused.
if (!ONLY || ONLY.includes("opencode-plugin-sessions")) {
  test("opencode-plugin: a wait from a dormant session reaches Herdr while another session of the process is active", async () => {
    const SUB = "SUBAGENT-TASK: run the check"
    // The subagent's conversation starts with its task's prompt; the main one's with the user's.
    const isSub = (body) => JSON.stringify((body?.messages ?? []).find((m) => m.role === "user") ?? "").includes(SUB)
    const naming = opencodePlugin.naming
    const sub = playGoals([{ bash: PY_WAIT }], naming)
    const main = playGoals([{ link: "activate" }, { bash: "unused" }, { bash: PY_WAIT }], naming)
    const decide = (conversation, body) => {
      if (conversation.tools.length === 0) return { text: "Herdr Link session" }
      if (isSub(body)) return sub(conversation, body)
      if (conversation.calls.length === 1) {
        return { tool: "task", input: { description: "check", prompt: SUB, subagent_type: "general" } }
      }
      return main(conversation, body)
    }
    const sb = new Sandbox("opencode-plugin-sessions")
    sb.world(world("opencode")(sb))
    const model = await startModel(decide)
    try {
      const host = opencodePlugin.setup(sb, model)
      setup(sb, "claude") // the shim link and login-profile block any `herdr-link setup` makes
      const result = await sb.run(host.cmd, host.args("Use Herdr: talk to the worker agent."), { env: host.env })
      const summary = () =>
        `exit ${result.code}\n${model.requests.map((r) => `${r.path} ${isSub(r.body) ? "[sub]" : "[main]"} -> ${JSON.stringify(r.decision).slice(0, 160)}`).join("\n")}\n${result.stderr.slice(-1500)}`
      assert.equal(result.code, 0, summary())
      const outputs = (pick) => {
        const last = model.requests.filter((r) => r.conversation && pick(r.body)).at(-1)
        return (last?.conversation.calls ?? []).filter((c) => c.name === "bash").map((c) => String(c.output))
      }
      const [subWait] = outputs(isSub)
      const mainWaits = outputs((b) => !isSub(b))
      assert.match(subWait ?? "", /py-exit=0/, `the dormant (subagent) session's wait\n${summary()}`)
      assert.equal(mainWaits.length, 1, summary())
      assert.match(mainWaits[0], /py-exit=77/, `the active session's wait\n${summary()}`)
      assert.match(mainWaits[0], /Blocked by Herdr Link/, summary())
      assert.equal(waits(sb).length, 1, `waits that reached Herdr: ${JSON.stringify(waits(sb))}\n${summary()}`)
    } finally {
      await model.close()
      const left = sb.leftovers()
      sb.cleanup()
      assert.deepEqual(left, [], `processes of the run survived: ${left.join(", ")}`)
    }
  })
}
