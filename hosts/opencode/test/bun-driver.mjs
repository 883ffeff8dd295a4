// Run with Bun (as OpenCode runs plugins): loads the bundle, so the library
// is opened through bun:ffi, and drives it like OpenCode. Prints one JSON
// report line on stdout for test/bun.test.mjs to check.
import { tool } from "@opencode-ai/plugin"

// Make koffi unloadable, so everything below can only work through bun:ffi.
Bun.plugin({
  name: "no-koffi-under-bun",
  setup(build) {
    build.onLoad({ filter: /node_modules[\/\\]koffi[\/\\]/ }, () => ({
      contents: "throw new Error('koffi is blocked in this Bun run')",
      loader: "js",
    }))
  },
})
let koffiBlocked = false
try {
  await import("koffi")
} catch {
  koffiBlocked = true
}

const bundle = new URL("../dist/herdr-link.opencode.js", import.meta.url).href
const mod = await import(bundle)
const plugin = mod.default
const report = {
  runtime: typeof Bun === "undefined" ? "node" : "bun",
  koffiBlocked,
  sameExport: mod.HerdrLinkPlugin === plugin,
}

const hooks = await plugin({ directory: process.cwd(), worktree: process.cwd() }, {})
report.hookKeys = Object.keys(hooks)
report.toolKeys = Object.keys(hooks.tool ?? {})
const def = hooks.tool.herdr_link
const ctx = (sessionID) => ({
  sessionID,
  messageID: "m",
  agent: "build",
  directory: process.cwd(),
  worktree: process.cwd(),
  abort: new AbortController().signal,
  metadata() {},
  async ask() {},
})
const call = async (args, sessionID) => {
  const parsed = tool.schema.object(def.args).parse(args)
  try {
    return { ok: JSON.parse(await def.execute(parsed, ctx(sessionID))) }
  } catch (e) {
    return { error: String(e?.message ?? e) }
  }
}
const system = async (sessionID) => {
  const out = { system: ["base"] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, out)
  return out.system
}

report.dormantSystem = await system("bun-a")
report.activate = await call({}, "bun-a")
report.activeSystem = await system("bun-a")
report.otherSystem = await system("bun-b")
report.peers = await call({ action: "peers" }, "bun-a")
report.send = await call({ action: "send", arguments: { to: "worker", message: "hello from bun" } }, "bun-a")
report.badSend = await call({ action: "send", arguments: { message: "no target" } }, "bun-a")
const guard = async (sessionID, command) => {
  try {
    await hooks["tool.execute.before"]({ tool: "bash", sessionID, callID: "c" }, { args: { command } })
    return null
  } catch (e) {
    return String(e?.message ?? e)
  }
}
report.guardActiveWait = await guard("bun-a", "herdr agent wait worker")
report.guardActiveLs = await guard("bun-a", "ls")
report.guardDormantWait = await guard("bun-b", "herdr agent wait worker")
console.log(JSON.stringify(report))
