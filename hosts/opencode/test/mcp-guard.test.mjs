// OpenCode on the MCP route (herdr-link mcp under `mcp` in opencode.json, no
// Herdr Link library plugin): the small guard plugin that `herdr-link setup
// opencode` writes runs `herdr-link guard --host opencode` before each bash
// call. This test process plays the `opencode` process: it starts
// `herdr-link mcp` as its child and loads that plugin file, so the hook (also
// its child) shares the server's activation as in a real OpenCode.
import assert from "node:assert/strict"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { test } from "node:test"
import { pathToFileURL } from "node:url"
import { ROOT, setupWorld, tempDir } from "./harness.mjs"
import { guardActive } from "./direct.mjs"

const BIN = process.env.HERDR_LINK_BIN ? resolve(process.env.HERDR_LINK_BIN) : ""
if (!BIN || !existsSync(BIN)) throw new Error(`HERDR_LINK_BIN=${BIN}: the herdr-link binary is required (see run-tests.sh)`)
const WAIT = "herdr agent wait worker"
const PROMPT_WAIT = "herdr agent prompt worker hi --wait"
// The plugin as `herdr-link setup opencode` writes it, into a home of its own: the plugin file
// with its values filled in, and the shim directory it puts first on PATH.
const SETUP_HOME = tempDir("herdr-link-mcp-guard-setup-")
const SETUP_ENV = {
  PATH: process.env.PATH,
  HOME: SETUP_HOME,
  XDG_CONFIG_HOME: join(SETUP_HOME, "config"),
  XDG_DATA_HOME: join(SETUP_HOME, "data"),
  XDG_STATE_HOME: join(SETUP_HOME, "state"),
}
execFileSync(BIN, ["setup", "opencode"], { env: SETUP_ENV, stdio: ["ignore", "ignore", "inherit"] })
const PLUGIN_FILE = join(SETUP_ENV.XDG_CONFIG_HOME, "opencode", "plugins", "herdr-link-guard.js")
const SHIM_DIR = join(SETUP_ENV.XDG_DATA_HOME, "herdr-link", "shim")

/** Loads the guard plugin setup wrote. */
async function loadGuardPlugin() {
  assert.ok(existsSync(PLUGIN_FILE), `setup wrote no plugin at ${PLUGIN_FILE}`)
  assert.ok(!readFileSync(PLUGIN_FILE, "utf8").includes("__HERDR_LINK_"), "every value is filled in")
  const mod = await import(pathToFileURL(PLUGIN_FILE).href)
  const plugins = [...new Set(Object.values(mod))]
  assert.equal(plugins.length, 1)
  return plugins[0]({ directory: process.cwd() }, {})
}

/** `herdr-link mcp` as a child of this process, spoken to in JSON-RPC lines. */
function startMcp() {
  const child = spawn(BIN, ["mcp"], { stdio: ["pipe", "pipe", "inherit"], env: process.env })
  const waiting = new Map()
  createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line)
    if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg)
  })
  let id = 0
  const request = (method, params) =>
    new Promise((ok) => {
      waiting.set(++id, ok)
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    })
  const exited = new Promise((ok) => child.on("exit", (code, signal) => ok({ code, signal })))
  return { child, request, exited }
}

async function handshake(server) {
  const init = await server.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "fake-opencode", version: "0" },
  })
  assert.equal(init.result.serverInfo.name, "herdr-link")
  server.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
}

async function before(hooks, command, tool = "bash") {
  try {
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_mcp", callID: "c1" }, { args: { command } })
    return null
  } catch (err) {
    return err.message
  }
}

test("the MCP-route guard plugin shares the server's activation", async () => {
  const world = setupWorld()
  const hooks = await loadGuardPlugin()
  let server = startMcp()
  try {
    await handshake(server)
    assert.equal(await before(hooks, WAIT), null, "dormant: allowed")

    const r = await server.request("tools/call", { name: "herdr_link", arguments: {} })
    assert.match(r.result.content[0].text, /"status":"active"/)
    assert.equal(await before(hooks, WAIT), guardActive(WAIT).reason)
    assert.equal(await before(hooks, PROMPT_WAIT), guardActive(PROMPT_WAIT, "mcp").reason)
    assert.equal(await before(hooks, "ls -la"), null)
    assert.equal(await before(hooks, WAIT, "read"), null)

    // A crashed server is dormant; a new connection starts dormant.
    server.child.kill("SIGKILL")
    await server.exited
    assert.equal(await before(hooks, WAIT), null, "server killed: allowed")
    server = startMcp()
    await handshake(server)
    assert.equal(await before(hooks, WAIT), null, "new connection: dormant")
    await server.request("tools/call", { name: "herdr_link", arguments: { action: "activate" } })
    assert.ok(await before(hooks, WAIT))
    server.child.stdin.end()
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    assert.equal(await before(hooks, WAIT), null, "server exited: allowed")
  } finally {
    server.child.kill("SIGKILL")
  }
  assert.deepEqual(world.calls().filter((a) => a.includes("wait")), [])
})

test("the guard plugin puts the herdr shim first on PATH for shell commands inside Herdr", async () => {
  const hooks = await loadGuardPlugin()
  const out = { env: {} }
  await hooks["shell.env"]({ cwd: process.cwd() }, out)
  assert.equal(out.env.PATH, `${SHIM_DIR}:${process.env.PATH}`)
  const again = { env: { PATH: out.env.PATH } }
  await hooks["shell.env"]({ cwd: process.cwd() }, again)
  assert.equal(again.env.PATH, out.env.PATH, "once")
  // Herdr 0.8.2 and later name their binary in HERDR_BIN_PATH: the commands get the shim there,
  // the real Herdr kept for it, and this process's presence key (the library's rule, through
  // `herdr-link shim-env --json`).
  const named = { env: { HERDR_BIN_PATH: "/opt/herdr" } }
  await hooks["shell.env"]({ cwd: process.cwd() }, named)
  assert.equal(named.env.HERDR_BIN_PATH, join(SHIM_DIR, "herdr"))
  assert.equal(named.env.HERDR_LINK_HERDR, "/opt/herdr")
  assert.match(named.env.HERDR_LINK_PRESENCE ?? "", new RegExp(`^${process.pid}-\\d+$`))
})

test("outside Herdr the plugin does not even run the hook", async () => {
  const hooks = await loadGuardPlugin()
  const saved = process.env.HERDR_ENV
  delete process.env.HERDR_ENV
  try {
    assert.equal(await before(hooks, WAIT), null)
  } finally {
    if (saved !== undefined) process.env.HERDR_ENV = saved
  }
})
