// OpenCode runs plugins under Bun: the same bundle, loaded by Bun, opens the
// library through bun:ffi. bun comes from the committed lock file (npm ci).
import assert from "node:assert/strict"
import { join } from "node:path"
import { test } from "node:test"
import { FAKE_BIN, HERE, LIB, SELF_PANE, runUnderBun, setupWorld } from "./harness.mjs"
import { guardActive } from "./direct.mjs"

test("under Bun the plugin loads through bun:ffi and serves the gateway", () => {
  const world = setupWorld()
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HERDR_LINK_LIB: LIB,
    HERDR_ENV: "1",
    HERDR_BIN_PATH: FAKE_BIN,
    HERDR_PANE_ID: SELF_PANE,
    HERDR_FAKE_STATE: world.state,
  }
  const r = runUnderBun(join(HERE, "bun-driver.mjs"), env)
  assert.equal(r.runtime, "bun")
  assert.equal(r.koffiBlocked, true, "koffi cannot load in this run, so the library went through bun:ffi")
  assert.equal(r.sameExport, true)
  assert.deepEqual(r.toolKeys, ["herdr_link"])
  assert.ok(r.hookKeys.includes("experimental.chat.system.transform"))

  assert.deepEqual(r.dormantSystem, ["base"])
  assert.deepEqual(r.activate.ok, { status: "active", capabilities: ["start", "peers", "send", "close"] })
  assert.equal(r.activeSystem.length, 2)
  assert.ok(r.activeSystem[1].startsWith("Herdr Link is the agent channel for the current Herdr workspace."))
  assert.deepEqual(r.otherSystem, ["base"])

  assert.equal(r.peers.ok.self.name, "brain")
  assert.deepEqual(r.peers.ok.peers.map((p) => p.name), ["worker"])
  assert.equal(r.send.ok.status, "sent")
  const prompts = world.prompts()
  assert.equal(prompts.length, 1)
  assert.ok(prompts[0].text.endsWith(`"message":"hello from bun"}`), prompts[0].text)
  assert.match(r.badSend.error, /^[A-Z_]+: .+/)
  // The Bash guard through bun:ffi's out pointer: the library's reason, freed by the glue.
  assert.equal(r.guardActiveWait, guardActive("herdr agent wait worker").reason)
  assert.match(r.guardActiveWait, /end your turn/i)
  assert.equal(r.guardActiveLs, null)
  assert.equal(r.guardDormantWait, null)
})
