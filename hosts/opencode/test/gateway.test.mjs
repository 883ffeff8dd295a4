// The single-gateway presentation: registration, schema, activation per
// sessionID, the system transform, and how errors reach the model.
import assert from "node:assert/strict"
import { test } from "node:test"
import {
  BASE_SYSTEM,
  callJson,
  callTool,
  enterHerdr,
  importPlugin,
  initPlugin,
  leaveHerdr,
  setupWorld,
  systemFor,
  toolContext,
  z,
} from "./harness.mjs"
import { activeGatewayContract, directSession, gatewayCatalog, toolCall } from "./direct.mjs"

const world = setupWorld()
const opts = (sessionID) => ({ sessionID, directory: world.dir })
const ACTIVATED = { status: "active", capabilities: ["start", "peers", "send", "close"] }
const CONTRACT_FIRST_LINE = "Herdr Link is the agent channel for the current Herdr workspace."

/** How many entries of a system prompt carry the given text. */
const countWith = (system, text) => system.filter((s) => s.includes(text)).length

test("the module exports one plugin function, as a named and as the default export", async () => {
  const mod = await importPlugin()
  assert.deepEqual(Object.keys(mod).sort(), ["HerdrLinkPlugin", "default"])
  assert.equal(typeof mod.default, "function")
  assert.equal(mod.HerdrLinkPlugin, mod.default)
})

test("registers only the herdr_link gateway, the system transform, and no tool.definition hook", async () => {
  const hooks = await initPlugin(world.dir)
  assert.deepEqual(Object.keys(hooks.tool), ["herdr_link"])
  assert.deepEqual(Object.keys(hooks).sort(), [
    "dispose",
    "event",
    "experimental.chat.system.transform",
    "shell.env",
    "tool",
    "tool.execute.before",
  ])
  assert.equal(typeof hooks["experimental.chat.system.transform"], "function")
  assert.equal("tool.definition" in hooks, false)
  for (const tier1 of ["herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]) {
    assert.equal(tier1 in hooks.tool, false, `${tier1} must not be registered`)
  }
})

test("the tool description and argument schema are the library's, converted to zod", async () => {
  const hooks = await initPlugin(world.dir)
  const def = hooks.tool.herdr_link
  const catalog = gatewayCatalog()
  assert.equal(catalog.tools.length, 1)
  const lib = catalog.tools[0]
  assert.equal(lib.name, "herdr_link")
  assert.equal(def.description, lib.description)
  assert.match(def.description, /only when the user explicitly asks to use Herdr/)
  assert.match(def.description, /handling an inbound Herdr Link message/)
  assert.doesNotMatch(def.description, /final send/)

  // Same keys in the same order.
  assert.deepEqual(Object.keys(def.args), Object.keys(lib.input_schema.properties))
  assert.deepEqual(Object.keys(def.args), ["action", "arguments"])

  // What OpenCode sends the model (zod -> JSON Schema) matches the library's schema.
  const sent = z.toJSONSchema(z.object(def.args))
  for (const [key, want] of Object.entries(lib.input_schema.properties)) {
    const got = sent.properties[key]
    assert.equal(got.type, want.type, `${key}.type`)
    assert.equal(got.description, want.description, `${key}.description`)
    assert.ok(typeof got.description === "string" && got.description.length > 0, `${key} has a description`)
    assert.deepEqual(got.enum, want.enum, `${key}.enum`)
    assert.deepEqual(got.items, want.items, `${key}.items`)
  }
  assert.deepEqual(sent.required ?? [], lib.input_schema.required ?? [])
})

test("the action enum accepts start/peers/send/close or nothing and rejects activate", async () => {
  const hooks = await initPlugin(world.dir)
  const schema = z.object(hooks.tool.herdr_link.args)
  for (const ok of [{}, { action: "peers" }, { action: "send" }, { action: "start" }, { action: "close" }]) {
    assert.equal(schema.safeParse(ok).success, true, JSON.stringify(ok))
  }
  for (const bad of [{ action: "activate" }, { action: "wait" }, { action: 1 }, { arguments: "x" }, { arguments: ["x"] }]) {
    assert.equal(schema.safeParse(bad).success, false, JSON.stringify(bad))
  }
  const send = { action: "send", arguments: { to: "a", message: "m" } }
  assert.deepEqual(schema.safeParse(send).data, send, "the arguments object reaches the library whole")
  const start = { action: "start", arguments: { name: "n", kind: "pi", args: ["--x"] } }
  assert.deepEqual(schema.safeParse(start).data, start)
})

test("the dispatcher is tiny in every state; the per-action semantics arrive with the Contract", async () => {
  const hooks = await initPlugin(world.dir)
  const def = hooks.tool.herdr_link
  // One static definition (OpenCode has no per-session tool API): action + an arguments object,
  // and a description with no Tier 1 semantics.
  assert.deepEqual(Object.keys(def.args), ["action", "arguments"])
  for (const tier1 of ["config_agent", "cwd", "kind", "later tool step", "delivery only", "lifecycle", "Closing sends no message"]) {
    assert.ok(!def.description.includes(tier1), `dormant description mentions "${tier1}"`)
  }
  const dormant = (await systemFor(hooks, "ses_tiny")).join("\n")
  assert.ok(!dormant.includes("Arguments:"), "nothing about actions while dormant")

  await callJson(hooks, {}, opts("ses_tiny"))
  assert.deepEqual(Object.keys(hooks.tool.herdr_link.args), ["action", "arguments"], "same tool once active")
  const contract = (await systemFor(hooks, "ses_tiny")).at(-1)
  assert.ok(contract.startsWith(CONTRACT_FIRST_LINE))
  for (const fragment of [
    '{"action": <action>, "arguments": {...}}',
    '- action "start" (herdr_link_start): ',
    "    name (string, required): ",
    "    config_agent (string, optional): ",
    "    args (array of strings, optional, at most ",
    '- action "peers" (herdr_link_peers): ',
    '- action "send" (herdr_link_send): ',
    "    to (string, required): ",
    "    message (string, required, at most ",
    '- action "close" (herdr_link_close): ',
    "    agent (string, required): ",
    '"sent" is delivery only',
    "Closing sends no message",
  ]) {
    assert.ok(contract.includes(fragment), `active Contract lacks ${JSON.stringify(fragment)}`)
  }

  // A model following it: the arguments object goes through OpenCode's schema to the library.
  const peers = await callJson(hooks, { action: "peers", arguments: {} }, opts("ses_tiny"))
  assert.equal(peers.self.name, "brain")
})

test("{} activates the session, is idempotent, and the Contract appears exactly once", async () => {
  const hooks = await initPlugin(world.dir)
  assert.deepEqual(await systemFor(hooks, "ses_A"), BASE_SYSTEM, "dormant before activation")
  assert.deepEqual(await callJson(hooks, {}, opts("ses_A")), ACTIVATED)
  assert.deepEqual(await callJson(hooks, {}, opts("ses_A")), ACTIVATED)

  const first = await systemFor(hooks, "ses_A")
  assert.equal(first.length, BASE_SYSTEM.length + 1)
  assert.deepEqual(first.slice(0, BASE_SYSTEM.length), BASE_SYSTEM, "existing entries are kept")
  assert.equal(countWith(first, CONTRACT_FIRST_LINE), 1)

  // A second transform over the same system array adds nothing.
  const again = await systemFor(hooks, "ses_A", first)
  assert.equal(again.length, BASE_SYSTEM.length + 1)
  assert.equal(countWith(again, CONTRACT_FIRST_LINE), 1)

  // Every new LLM call (a fresh system array) gets it once again.
  const next = await systemFor(hooks, "ses_A")
  assert.deepEqual(next, first)
})

test("the injected entry is the library's Contract plus the gateway appendix", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses_C"))
  const injected = (await systemFor(hooks, "ses_C")).at(-1)
  assert.equal(injected, activeGatewayContract())
  assert.ok(injected.startsWith(`${CONTRACT_FIRST_LINE}\n\n1. Reply path:`), injected.slice(0, 120))
  for (const fragment of [
    "single herdr_link gateway",
    "later tool step",
    "caller owns the lifecycle decision",
    "Closing sends no message",
  ]) {
    assert.ok(injected.includes(fragment), `missing "${fragment}"`)
  }
  for (const forbidden of ["final send", "final message", "send first"]) {
    assert.ok(!injected.includes(forbidden), `must not contain "${forbidden}"`)
  }
})

test("activation is per sessionID; no sessionID means no Contract", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses_iso_A"))
  assert.equal(countWith(await systemFor(hooks, "ses_iso_A"), CONTRACT_FIRST_LINE), 1)
  assert.deepEqual(await systemFor(hooks, "ses_iso_B"), BASE_SYSTEM, "B stays dormant while A is active")
  assert.deepEqual(await systemFor(hooks, undefined), BASE_SYSTEM, "absent sessionID: fail closed")
  assert.deepEqual(await systemFor(hooks, ""), BASE_SYSTEM, "empty sessionID: fail closed")

  await callJson(hooks, {}, opts("ses_iso_B"))
  assert.equal(countWith(await systemFor(hooks, "ses_iso_B"), CONTRACT_FIRST_LINE), 1, "B activates on its own")
  assert.equal(countWith(await systemFor(hooks, "ses_iso_A"), CONTRACT_FIRST_LINE), 1, "A is still active")
})

test("a fresh plugin instance starts with every session dormant", async () => {
  const first = await initPlugin(world.dir)
  await callJson(first, {}, opts("ses_fresh"))
  assert.equal(countWith(await systemFor(first, "ses_fresh"), CONTRACT_FIRST_LINE), 1)

  const second = await initPlugin(world.dir)
  assert.deepEqual(await systemFor(second, "ses_fresh"), BASE_SYSTEM, "new instance: dormant")
  assert.equal(countWith(await systemFor(first, "ses_fresh"), CONTRACT_FIRST_LINE), 1, "old instance unchanged")

  // The second instance touching the same sessionID (even with a rejected
  // call) leaves the first instance's activation alone.
  await assert.rejects(second.tool.herdr_link.execute({ action: "bogus" }, toolContext("ses_fresh", world.dir)))
  assert.equal(countWith(await systemFor(first, "ses_fresh"), CONTRACT_FIRST_LINE), 1, "old instance still active")
})

test("any dispatched action also activates the session", async () => {
  const hooks = await initPlugin(world.dir)
  assert.deepEqual(await systemFor(hooks, "ses_dispatch"), BASE_SYSTEM)
  const peers = await callJson(hooks, { action: "peers" }, opts("ses_dispatch"))
  assert.ok(Array.isArray(peers.peers))
  assert.equal(countWith(await systemFor(hooks, "ses_dispatch"), CONTRACT_FIRST_LINE), 1)
})

test("a deleted session is forgotten", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses_del"))
  assert.equal(countWith(await systemFor(hooks, "ses_del"), CONTRACT_FIRST_LINE), 1)
  await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_del" } } } })
  assert.deepEqual(await systemFor(hooks, "ses_del"), BASE_SYSTEM)
  // Other events change nothing.
  await callJson(hooks, {}, opts("ses_keep"))
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_keep" } } })
  assert.equal(countWith(await systemFor(hooks, "ses_keep"), CONTRACT_FIRST_LINE), 1)
})

test("dispose forgets every session of the instance", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses_disp_1"))
  await callJson(hooks, {}, opts("ses_disp_2"))
  assert.equal(countWith(await systemFor(hooks, "ses_disp_1"), CONTRACT_FIRST_LINE), 1)
  await hooks.dispose()
  assert.deepEqual(await systemFor(hooks, "ses_disp_1"), BASE_SYSTEM)
  assert.deepEqual(await systemFor(hooks, "ses_disp_2"), BASE_SYSTEM)
})

test("an unknown action is rejected: by the schema in OpenCode, by the library if it gets through", async () => {
  const hooks = await initPlugin(world.dir)
  const before = world.calls().length
  await assert.rejects(callTool(hooks, "herdr_link", { action: "activate" }, opts("ses_bad")), /invalid arguments/)
  assert.equal(world.calls().length, before, "the schema rejection never reaches Herdr")

  // A host that skipped validation: the library answers INVALID_REQUEST.
  await assert.rejects(
    hooks.tool.herdr_link.execute({ action: "bogus" }, toolContext("ses_bad", world.dir)),
    (err) => {
      assert.match(err.message, /^INVALID_REQUEST: .+/)
      assert.match(err.message, /bogus/)
      assert.equal(err.code, "INVALID_REQUEST")
      return true
    },
  )
})

test("errors are thrown with the library's CODE: reason text", async () => {
  const hooks = await initPlugin(world.dir)
  const cases = [
    { action: "send", arguments: { message: "no recipient" } },
    { action: "send", arguments: { to: "ghost", message: "hi" } },
    { action: "send", arguments: { to: "worker" } },
    { action: "close" },
    { action: "close", arguments: { agent: "ghost" } },
    { action: "start" },
    { action: "start", arguments: { name: "x1", config_agent: "a", kind: "pi", args: [] } },
  ]
  for (const args of cases) {
    const expected = toolCall({ session: directSession(), tool: "herdr_link", input: args, context_dir: world.dir })
    assert.equal(expected.ok, false, `the library rejects ${JSON.stringify(args)}`)
    await assert.rejects(callJson(hooks, args, opts("ses_err")), (err) => {
      assert.ok(err instanceof Error)
      assert.match(err.message, /^[A-Z_]+: .+/)
      assert.equal(err.message, expected.error.message, JSON.stringify(args))
      assert.equal(err.code, expected.error.code)
      return true
    })
  }
  const ghost = await callJson(hooks, { action: "send", arguments: { to: "ghost", message: "hi" } }, opts("ses_err")).catch((e) => e)
  assert.equal(ghost.message, "PEER_NOT_FOUND: target agent is not a live peer")
  assert.equal(world.prompts().length, 0, "nothing was delivered")
})

test("losing the Herdr environment inside a session surfaces NOT_IN_HERDR", async () => {
  const hooks = await initPlugin(world.dir)
  await callJson(hooks, {}, opts("ses_env"))
  leaveHerdr()
  try {
    await assert.rejects(callJson(hooks, { action: "peers" }, opts("ses_env")), (err) => {
      assert.match(err.message, /^NOT_IN_HERDR: /)
      assert.equal(err.code, "NOT_IN_HERDR")
      return true
    })
  } finally {
    enterHerdr(world.state)
  }
  const peers = await callJson(hooks, { action: "peers" }, opts("ses_env"))
  assert.equal(peers.self.name, "brain")
})

test("a tool call without a sessionID is refused before reaching the library", async () => {
  const hooks = await initPlugin(world.dir)
  const before = world.calls().length
  await assert.rejects(
    hooks.tool.herdr_link.execute({ action: "peers" }, { ...toolContext("", world.dir) }),
    (err) => {
      assert.match(err.message, /^INVALID_REQUEST: /)
      return true
    },
  )
  assert.equal(world.calls().length, before)
})
