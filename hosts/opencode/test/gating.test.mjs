// The environment gate and library discovery, as OpenCode would see them at
// plugin init.
import assert from "node:assert/strict"
import { test } from "node:test"
import { FAKE_BIN, LIB, SELF_PANE, enterHerdr, initPlugin, leaveHerdr, setupWorld } from "./harness.mjs"

test("outside Herdr the plugin is a no-op: hooks are {}", async () => {
  leaveHerdr()
  const hooks = await initPlugin()
  assert.deepEqual(hooks, {})
})

test("a partial Herdr environment is still outside Herdr", async () => {
  const partial = [
    { HERDR_ENV: "1" },
    { HERDR_ENV: "1", HERDR_BIN_PATH: FAKE_BIN },
    { HERDR_ENV: "1", HERDR_PANE_ID: SELF_PANE },
    { HERDR_BIN_PATH: FAKE_BIN, HERDR_PANE_ID: SELF_PANE },
    { HERDR_ENV: "0", HERDR_BIN_PATH: FAKE_BIN, HERDR_PANE_ID: SELF_PANE },
  ]
  for (const env of partial) {
    leaveHerdr()
    Object.assign(process.env, env)
    assert.deepEqual(await initPlugin(), {}, `env ${JSON.stringify(env)}`)
  }
  leaveHerdr()
})

test("inside Herdr the same plugin registers hooks (the gate is what changed)", async () => {
  setupWorld()
  const hooks = await initPlugin()
  assert.deepEqual(Object.keys(hooks.tool ?? {}), ["herdr_link"])
  leaveHerdr()
})

test("outside Herdr a missing library is not an error", async () => {
  leaveHerdr()
  process.env.HERDR_LINK_LIB = "/nonexistent/libherdr_link.so"
  try {
    assert.deepEqual(await initPlugin(), {})
  } finally {
    process.env.HERDR_LINK_LIB = LIB
  }
})

test("inside Herdr a missing library fails init with a message naming the path", async () => {
  enterHerdr()
  process.env.HERDR_LINK_LIB = "/nonexistent/libherdr_link.so"
  try {
    await assert.rejects(initPlugin(), (err) => {
      assert.match(err.message, /cannot find (lib)?herdr_link\.(so|dylib|dll)/)
      assert.match(err.message, /\/nonexistent\/libherdr_link\.so/)
      return true
    })
  } finally {
    process.env.HERDR_LINK_LIB = LIB
    leaveHerdr()
  }
})
