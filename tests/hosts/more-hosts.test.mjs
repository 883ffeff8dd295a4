// GitHub Copilot CLI, Factory Droid, Cline and Kimi Code (issue 41), one lean run each,
// configured only by `herdr-link setup <host>` (plus the scripted model): a wait runs while the
// session is dormant, activation goes through the gateway, a send reaches Herdr (through the
// gateway's `action` where the host never shows Tier 1), and the active wait is blocked by the
// guard hook before the shell runs, its reason reaching the model; a wait the text cannot show
// is refused by the herdr shim (exit 77); no raw id reaches the model.

import assert from "node:assert/strict"
import { test } from "node:test"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assertRunHealthy, projectWorld, runRoute } from "./lib/e2e.mjs"
import { cline, copilot, droid, kimi } from "./lib/more-hosts.mjs"
import { REPO } from "./lib/sandbox.mjs"

const END_TURN = (() => {
  const text = readFileSync(join(REPO, "src", "guard", "mod.rs"), "utf8")
  const m = /const REASON_END_TURN: &str =\s*"((?:[^"\\]|\\[\s\S])*)";/.exec(text)
  return m[1].replace(/\\\n\s*/g, "").replace(/\\(["\\])/g, "$1").slice(0, 60)
})()
const WAIT = "herdr agent wait beta >/dev/null && echo wait-returned"

const ONLY = process.env.HERDR_E2E_ONLY?.split(",")
for (const route of [copilot, droid, cline, kimi].filter((r) => !ONLY || ONLY.includes(r.name))) {
  test(`${route.name}: dormant wait runs, activation, a send, and the active wait is blocked`, async () => {
    const goals = [
      { bash: WAIT },
      { link: "activate" },
      { link: "send", args: { to: "beta", message: "hello from the e2e test" } },
      { bash: "echo shell-ran; " + WAIT },
      // A herdr whose arguments the text cannot know: the hook leaves it to the herdr shim,
      // first on the command's PATH through setup's startup-file block, which refuses it.
      { bash: `sh -c 'herdr "$@"' _ agent wait beta >/dev/null 2>&1; echo shim-rc=$?` },
    ]
    const world = (sb) =>
      projectWorld(sb, [
        { agent: route.agentKind, name: "brain", status: "working" },
        { agent: "pi", name: "beta", status: "idle" },
      ])
    const started = Date.now()
    const run = await runRoute(route, goals, { world })
    try {
      console.log(`# ${route.name}: ${run.steps.map((s) => `${s.style ?? "missing"}`).join(" ")} in ${Date.now() - started} ms`)
      assertRunHealthy(run)
      const [dormant, activate, send, active, shimmed] = run.steps
      assert.match(String(dormant.output), /wait-returned/, run.describe())
      assert.equal(activate.style, "gateway", run.describe())
      assert.match(String(activate.output), /\\?"status\\?":\s*\\?"active/, run.describe())
      assert.ok(["gateway", "tier1"].includes(send.style), run.describe())
      assert.equal(run.sb.prompts().length, 1, `the send did not reach Herdr\n${run.describe()}`)
      assert.ok(String(active.output).includes(END_TURN), `the guard did not block\n${run.describe()}`)
      assert.doesNotMatch(String(active.output), /shell-ran/, `the shell ran: the hook did not block\n${run.describe()}`)
      assert.match(String(shimmed.output), /shim-rc=77/, `the herdr shim did not refuse the wait\n${run.describe()}`)
      const waits = run.sb.argvLog().filter((a) => a[0] === "agent" && a[1] === "wait")
      assert.equal(waits.length, 1, `agent wait calls: ${JSON.stringify(waits)}`)
    } finally {
      await run.done()
    }
  })
}
