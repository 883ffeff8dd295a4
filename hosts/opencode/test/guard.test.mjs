// The Bash guard in OpenCode's `tool.execute.before`: hl_bash_guard for that
// OpenCode session; a block throws the library's reason (what the model sees).
import assert from "node:assert/strict"
import { test } from "node:test"
import { callJson, initPlugin, setupWorld } from "./harness.mjs"
import { guardActive } from "./direct.mjs"

const world = setupWorld()
const opts = (sessionID) => ({ sessionID, directory: world.dir })
const WAIT = "herdr agent wait worker"
const PROMPT_WAIT = "herdr agent prompt worker hi --wait"

/** Runs the hook as OpenCode does before a tool call; returns the thrown error or null. */
async function before(hooks, tool, sessionID, args) {
  const output = { args }
  try {
    await hooks["tool.execute.before"]({ tool, sessionID, callID: "call_1" }, output)
    return null
  } catch (err) {
    return err
  }
}

test("a session that never activated Herdr Link is never blocked", async () => {
  const hooks = await initPlugin(world.dir)
  assert.equal(typeof hooks["tool.execute.before"], "function")
  for (const command of [WAIT, PROMPT_WAIT, `sh -c '${WAIT}'`]) {
    assert.equal(await before(hooks, "bash", "ses-dormant", { command }), null, command)
  }
  assert.deepEqual(world.calls().filter((a) => a.includes("wait")), [])
})

test("after activation a wait is blocked with the library's reasons; other calls pass", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses-a"))
  const wait = await before(hooks, "bash", "ses-a", { command: WAIT })
  assert.ok(wait instanceof Error)
  const lib2 = guardActive(WAIT)
  assert.equal(lib2.code, 2)
  assert.equal(wait.message, lib2.reason)
  assert.match(wait.message, /end your turn/i)
  const prompt = await before(hooks, "bash", "ses-a", { command: PROMPT_WAIT })
  const lib1 = guardActive(PROMPT_WAIT)
  assert.equal(lib1.code, 1)
  assert.equal(prompt.message, lib1.reason)
  // Only the gateway exists here: the reason names its send action, never herdr_link_send.
  assert.match(prompt.message, /herdr_link tool with action "send"/)
  assert.doesNotMatch(prompt.message, /herdr_link_send/)

  // Ordinary commands, mentions, other tools and malformed args run.
  assert.equal(await before(hooks, "bash", "ses-a", { command: "ls -la" }), null)
  assert.equal(await before(hooks, "bash", "ses-a", { command: `echo "${WAIT}"` }), null)
  assert.equal(await before(hooks, "read", "ses-a", { filePath: "/x", command: WAIT }), null)
  assert.equal(await before(hooks, "herdr_link", "ses-a", { command: WAIT }), null)
  assert.equal(await before(hooks, "bash", "ses-a", { command: ["herdr", "agent", "wait"] }), null)
  assert.equal(await before(hooks, "bash", "ses-a", {}), null)
  assert.equal(await before(hooks, "bash", "ses-a", undefined), null)
  assert.equal(await before(hooks, "bash", undefined, { command: WAIT }), null)

  // Another session of the same OpenCode stays dormant.
  assert.equal(await before(hooks, "bash", "ses-b", { command: WAIT }), null)
  await callJson(hooks, {}, opts("ses-b"))
  assert.ok((await before(hooks, "bash", "ses-b", { command: WAIT })) instanceof Error)
  // The guard itself never runs Herdr.
  assert.deepEqual(world.calls().filter((a) => a.includes("wait")), [])
})

test("a deleted session is dormant again", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses-del"))
  assert.ok((await before(hooks, "bash", "ses-del", { command: WAIT })) instanceof Error)
  await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses-del" } } } })
  assert.equal(await before(hooks, "bash", "ses-del", { command: WAIT }), null)
})
