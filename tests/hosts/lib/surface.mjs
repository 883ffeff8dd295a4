// The Tier 1 surface as the server itself lists it once active, read over a short MCP session
// with `herdr-link mcp` outside any host: what a host that refreshes its tools would show, and
// so what the gateway's text must carry for a host that never does.

import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { LINK_BIN, Sandbox } from "./sandbox.mjs"
import { standardWorld } from "./e2e.mjs"

/** The active `tools/list` of `herdr-link mcp`, Tier 1 only: [{name, description, inputSchema}]. */
export async function tier1Tools() {
  const sb = new Sandbox("surface")
  sb.world(standardWorld(sb, "pi"))
  const server = spawn(LINK_BIN, ["mcp"], { env: sb.env(), cwd: sb.project, stdio: ["pipe", "pipe", "inherit"] })
  const lines = createInterface({ input: server.stdout })[Symbol.asyncIterator]()
  // One request at a time, each answered before the next is written.
  const ask = async (id, method, params) => {
    server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    for (;;) {
      const { value, done } = await lines.next()
      assert.ok(!done, `herdr-link mcp ended before answering ${method}`)
      const frame = JSON.parse(value)
      if (frame.id === id) return frame
    }
  }
  try {
    await ask(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "surface-probe", version: "0" } })
    server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
    await ask(1, "tools/call", { name: "herdr_link", arguments: {} })
    const list = await ask(2, "tools/list", {})
    const tools = list.result.tools.filter((t) => t.name !== "herdr_link")
    assert.deepEqual(tools.map((t) => t.name), ["herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"])
    return tools
  } finally {
    server.stdin.end()
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)))
    sb.cleanup()
  }
}
