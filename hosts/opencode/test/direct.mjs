// A direct binding of the library for the tests, independent of the plugin's
// own loader: used to compare what the plugin shows OpenCode with what the
// library itself answers.
import koffi from "koffi"
import { LIB } from "./harness.mjs"

const lib = koffi.load(LIB)
const hlFree = lib.func("hl_free", "void", ["void *"])
const Owned = koffi.disposable("str", (p) => hlFree(p))
const presentationFn = lib.func("hl_presentation", Owned, ["str"])
const toolCallFn = lib.func("hl_tool_call", Owned, ["str"])
const sessionStartFn = lib.func("hl_session_start", "void", ["str"])
const isActiveFn = lib.func("hl_is_active", "int32_t", ["str"])
const sessionEndFn = lib.func("hl_session_end", "void", ["str"])

let n = 0
/** A session key of the test's own, never used by the plugin. */
export function directSession() {
  const key = `direct-test:${process.pid}:${++n}`
  sessionStartFn(key)
  return key
}
export const presentation = (request) => JSON.parse(presentationFn(JSON.stringify(request)))
export const toolCall = (request) => JSON.parse(toolCallFn(JSON.stringify(request)))
export const isActive = (session) => isActiveFn(session) !== 0

/** The gateway catalog as the library publishes it. */
export function gatewayCatalog() {
  return presentation({ session: directSession(), style: "gateway", view: "catalog" })
}

/** The Contract text the library gives an active gateway session. */
export function activeGatewayContract() {
  const session = directSession()
  const res = toolCall({ session, tool: "herdr_link", input: {} })
  if (!res.ok) throw new Error(`direct activation failed: ${JSON.stringify(res)}`)
  return presentation({ session, style: "gateway" }).contract
}

const bashGuardFn = lib.func(
  "int32_t hl_bash_guard_in_style(const char *session, const char *command, const char *style, _Out_ void **reason_out)",
)
/** What the library's guard answers for `command` in an active session of the test's own, in
 * the words of `style` (default "gateway", the plugin's). */
export function guardActive(command, style = "gateway") {
  const session = directSession()
  const res = toolCall({ session, tool: "herdr_link", input: {} })
  if (!res.ok) throw new Error(`direct activation failed: ${JSON.stringify(res)}`)
  const out = [null]
  const code = bashGuardFn(session, command, style, out)
  let reason = null
  if (out[0]) {
    reason = koffi.decode(out[0], "char", -1)
    hlFree(out[0])
  }
  // End it again: a process with an active session answers for itself to the herdr shim and
  // the guard hook (docs/guard.md, "Activation presence"), and this test process is the host
  // of the hooks and servers the tests start.
  sessionEndFn(session)
  return { code, reason }
}
