// The Bash guard in each real host (issue 12 item 5): `herdr agent wait` runs while the session
// is dormant and is blocked once it is active, with the reason reaching the model; a prompt
// with --wait is blocked with verdict 1's reason; an ordinary command still runs; two host
// processes of the same user keep separate activation.

import assert from "node:assert/strict"
import { test } from "node:test"
import { assertRunHealthy, projectWorld, runRoute } from "./lib/e2e.mjs"
import { claude, codex, codexWorkspaceWrite, gemini, opencodeMcp, opencodePlugin, qwen } from "./lib/hosts.mjs"
import { REPO, Sandbox } from "./lib/sandbox.mjs"
import { readFileSync } from "node:fs"
import { join } from "node:path"

/** One of the guard's model-facing reasons, read from the library's source (src/guard/mod.rs). */
function reason(name) {
  const text = readFileSync(join(REPO, "src", "guard", "mod.rs"), "utf8")
  const m = new RegExp(`const ${name}: &str =\\s*"((?:[^"\\\\]|\\\\[\\s\\S])*)";`).exec(text)
  assert.ok(m, `src/guard/mod.rs has no ${name} string constant`)
  // Rust string continuation (backslash, newline, indentation) and escapes.
  const literal = m[1].replace(/\\\n\s*/g, "").replace(/\\(["\\])/g, "$1")
  return new RegExp(literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
}
const END_TURN_REASON = reason("REASON_END_TURN")
// Verdict 1's reason names the way to send the model has in that host: the gateway's send
// action where only the gateway exists (Codex, the OpenCode plugin), both ways elsewhere.
const BLOCK_REASON = {
  claude: reason("REASON_BLOCK_EITHER"),
  codex: reason("REASON_BLOCK_GATEWAY"),
  "codex-workspace-write": reason("REASON_BLOCK_GATEWAY"),
  "opencode-mcp": reason("REASON_BLOCK_EITHER"),
  "opencode-plugin": reason("REASON_BLOCK_GATEWAY"),
  gemini: reason("REASON_BLOCK_EITHER"),
  qwen: reason("REASON_BLOCK_GATEWAY"),
}
const ORDINARY = "echo ordinary-bash-ran"
// The wait's own output (Herdr's agent record, with pane ids) stays out of the model's view.
const WAIT = "herdr agent wait beta >/dev/null && echo wait-returned"

/** brain (the host, w1:p1), beta (w1:p2), brain2 (a second host of the same kind, w1:p3). */
function guardWorld(kind) {
  return (sb) =>
    projectWorld(sb, [
      { agent: kind, name: "brain", status: "working" },
      { agent: "pi", name: "beta", status: "working" },
      { agent: kind, name: "brain2", status: "working" },
    ])
}

const waits = (sb) => sb.argvLog().filter((a) => a[0] === "agent" && a[1] === "wait")
const prompts = (sb) => sb.argvLog().filter((a) => a[0] === "agent" && a[1] === "prompt")

const ONLY = process.env.HERDR_E2E_ONLY?.split(",")
const ROUTES = [claude, codex, codexWorkspaceWrite, opencodeMcp, opencodePlugin, gemini, qwen].filter((r) => !ONLY || ONLY.includes(r.name))

// Gemini CLI and Qwen Code: the active wait starts with a command that shows whether the shell
// ran at all, so the check tells the hook's block (before the shell) from the herdr shim's
// refusal (inside it), which would give the same reason.
const SHELL_RAN = "echo shell-ran; "

for (const route of ROUTES) {
  test(`${route.name}: the guard allows a wait while dormant and blocks it once active`, async () => {
    const before = route === gemini || route === qwen ? SHELL_RAN : ""
    const goals = [
      { bash: WAIT },
      { link: "activate" },
      { bash: before + WAIT },
      { bash: "herdr agent prompt beta hi --wait >/dev/null" },
      { bash: ORDINARY },
    ]
    const run = await runRoute(route, goals, { world: guardWorld(route.agentKind) })
    try {
      assertRunHealthy(run)
      const [dormantWait, , activeWait, promptWait, ordinary] = run.steps
      assert.doesNotMatch(String(dormantWait.output), /Blocked by Herdr Link/, run.describe())
      assert.match(String(dormantWait.output), /wait-returned/, run.describe())
      assert.match(String(activeWait.output), END_TURN_REASON, run.describe())
      if (before) assert.doesNotMatch(String(activeWait.output), /shell-ran/, `the shell ran: the hook did not block\n${run.describe()}`)
      assert.match(String(promptWait.output), BLOCK_REASON[route.name], run.describe())
      assert.match(String(ordinary.output), /ordinary-bash-ran/, run.describe())
      // Only the dormant wait reached Herdr; the blocked prompt never did.
      assert.equal(waits(run.sb).length, 1, `agent wait calls: ${JSON.stringify(waits(run.sb))}`)
      assert.deepEqual(prompts(run.sb), [])
    } finally {
      await run.done()
    }
  })

  test(`${route.name}: two host processes keep separate activation`, async () => {
    // Both runs belong to one user: same runtime dir and the same Herdr world, other panes.
    let activated
    const aActivated = new Promise((r) => (activated = r))
    let bWaited
    const bDone = new Promise((r) => (bWaited = r))
    const a = [
      { link: "activate" },
      { bash: WAIT, before: () => (activated(), bDone) },
    ]
    const b = [{ bash: WAIT, before: () => aActivated }, { bash: ORDINARY, before: () => bWaited() }]
    const shared = new Sandbox(`${route.name}-a`)
    const [runA, runB] = await Promise.all([
      runRoute(route, a, { sandbox: shared, world: guardWorld(route.agentKind) }),
      runRoute(route, b, {
        world: null,
        overrides: { XDG_RUNTIME_DIR: shared.runtime, HERDR_FAKE_STATE: shared.state, HERDR_PANE_ID: "w1:p3" },
        ids: () => shared.ids,
      }),
    ])
    try {
      assertRunHealthy(runA)
      assertRunHealthy(runB)
      assert.match(String(runA.steps[1].output), END_TURN_REASON, runA.describe())
      assert.match(String(runB.steps[0].output), /wait-returned/, runB.describe())
      assert.equal(waits(shared).length, 1, `agent wait calls: ${JSON.stringify(waits(shared))}`)
    } finally {
      await runA.done()
      await runB.done()
    }
  })
}
