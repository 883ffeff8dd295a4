// OpenCode glue for herdr-link: the single-gateway presentation.
//
// OpenCode gets one tool, `herdr_link`, whose description and argument schema
// come from the library (hl_presentation, style "gateway"): a tiny dispatcher,
// `action` plus an `arguments` object, the same while dormant and active; the
// per-action semantics reach the model with the Contract. Every call is
// forwarded to hl_tool_call with the OpenCode session id as the session key;
// activation, dispatch, validation and the Contract all live in the library.
// The glue adds the library's Contract text to the system prompt of active
// sessions through `experimental.chat.system.transform`, which OpenCode runs
// before every model request, so the step right after the activating call
// already has it; the activation result itself therefore does not repeat it.
// It runs the library's Bash guard (hl_bash_guard_in_style, style "gateway")
// on every `bash` call in `tool.execute.before`, and gives every shell command
// the herdr shim's environment and its session's marker in `shell.env`.

import { tool, type Hooks, type Plugin } from "@opencode-ai/plugin"
import { findLibrary, inHerdrPane, isBun, openWithBun, openWithKoffi, type HerdrLink, type Koffi } from "./native.js"
import { zodShapeFromJsonSchema } from "./schema.js"

const GATEWAY_TOOL = "herdr_link"
const STYLE = "gateway"

const loaded = new Map<string, Promise<HerdrLink>>()

/** Finds (the one search order of ./native.ts) and opens the library, once per path per
 * process: bun:ffi under Bun (how OpenCode runs plugins), koffi under Node. */
async function loadLibrary(): Promise<HerdrLink> {
  const path = findLibrary(import.meta.url)
  let lib = loaded.get(path)
  if (!lib) {
    lib = isBun()
      ? openWithBun(path)
      : import("koffi").then((m) => openWithKoffi(path, ((m as { default?: unknown }).default ?? m) as Koffi))
    lib.catch(() => loaded.delete(path))
    loaded.set(path, lib)
  }
  return lib
}

let instances = 0

/** The error the model sees: its message is the library's "CODE: reason" text. */
class HerdrLinkError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message.startsWith(`${code}:`) ? message : `${code}: ${message}`)
    this.name = "HerdrLinkError"
    this.code = code
  }
}

export const HerdrLinkPlugin: Plugin = async () => {
  let lib: HerdrLink
  try {
    lib = await loadLibrary()
  } catch (err) {
    // Outside Herdr the plugin is a no-op whether or not the library is installed.
    if (!inHerdrPane(process.env)) return {}
    throw err
  }

  // Session keys are scoped to this plugin instance, so a new instance (an
  // OpenCode restart or reload) starts with every session dormant.
  const instance = `opencode:${process.pid}.${++instances}.${Date.now().toString(36)}`
  const sessionKey = (sessionID: string) => `${instance}:${sessionID}`

  const catalog = lib.presentation({ session: instance, style: STYLE, view: "catalog" })
  if (!Array.isArray(catalog.tools) || catalog.tools.length === 0) return {} // not in Herdr
  const gateway = catalog.tools.find((t) => t.name === GATEWAY_TOOL)
  if (!gateway) {
    throw new Error(`herdr-link: the library's gateway presentation has no ${GATEWAY_TOOL} tool`)
  }

  // Starts the library's background self-naming for this process (never blocks).
  lib.sessionStart(instance)

  const known = new Set<string>()
  const register = (sessionID: string): string => {
    const key = sessionKey(sessionID)
    if (!known.has(sessionID)) {
      known.add(sessionID)
      lib.sessionStart(key)
    }
    return key
  }

  const hooks: Hooks = {
    tool: {
      [GATEWAY_TOOL]: tool({
        description: gateway.description,
        args: zodShapeFromJsonSchema(tool.schema, gateway.input_schema),
        async execute(args, context) {
          if (!context?.sessionID) {
            throw new HerdrLinkError("INVALID_REQUEST", "herdr_link was called without a session id")
          }
          const request: Record<string, unknown> = {
            session: register(context.sessionID),
            tool: GATEWAY_TOOL,
            input: args ?? {},
            style: STYLE, // single-gateway: the library dispatches the action
          }
          if (context.directory) request.context_dir = context.directory
          const response = await lib.toolCall(request)
          if (response.ok) return JSON.stringify(response.result)
          const error = response.error ?? { code: "INVALID_RESPONSE", message: "herdr-link gave no error text" }
          throw new HerdrLinkError(error.code, error.message)
        },
      }),
    },

    "experimental.chat.system.transform": async (input, output) => {
      const sessionID = input?.sessionID
      if (!sessionID || !known.has(sessionID)) return // unknown sessions are dormant
      const view = lib.presentation({ session: sessionKey(sessionID), style: STYLE })
      const contract = view.contract
      if (typeof contract !== "string" || contract === "") return
      if (output.system.some((part) => typeof part === "string" && part.includes(contract))) return
      output.system.push(contract)
    },

    // The herdr shim's environment for every shell command OpenCode runs: the shim first on
    // PATH and named by $HERDR_BIN_PATH (the real Herdr kept in $HERDR_LINK_HERDR), so a `herdr`
    // any program starts (python, make, a script) is judged by its real argv; where the shim
    // lives and when it applies is the library's rule (hl_command_env). And the session's marker
    // ($HERDR_LINK_SESSION), so the library answers for that session only, even for a command
    // that left this process's tree (docs/guard.md, "Activation presence").
    "shell.env": async (input, output) => {
      Object.assign(
        output.env,
        lib.commandEnv({
          PATH: output.env.PATH ?? process.env.PATH ?? "",
          HERDR_BIN_PATH: output.env.HERDR_BIN_PATH ?? process.env.HERDR_BIN_PATH,
        }),
      )
      // A session that never called herdr_link is registered (dormant) so the library knows
      // the marker is one of its own, and answers "no" for it.
      if (input?.sessionID) output.env.HERDR_LINK_SESSION = register(input.sessionID)
    },

    // The Bash guard (hl_bash_guard) for this OpenCode session: throwing blocks the call and
    // the model gets the library's reason. Unknown sessions never activated: always allowed.
    "tool.execute.before": async (input, output) => {
      if (input?.tool !== "bash") return
      const sessionID = input.sessionID
      if (!sessionID || !known.has(sessionID)) return
      const command = (output?.args as { command?: unknown } | undefined)?.command
      if (typeof command !== "string") return
      // Style "gateway": the reason names the gateway's send action, the only way to send here.
      const verdict = lib.bashGuard(sessionKey(sessionID), command, STYLE)
      if (verdict.code !== 0) {
        throw new Error(verdict.reason ?? `herdr-link: hl_bash_guard returned ${verdict.code}`)
      }
    },

    event: async ({ event }) => {
      if (event.type !== "session.deleted") return
      const sessionID = event.properties.info.id
      if (known.delete(sessionID)) lib.sessionEnd(sessionKey(sessionID))
    },

    dispose: async () => {
      for (const sessionID of known) lib.sessionEnd(sessionKey(sessionID))
      known.clear()
      lib.sessionEnd(instance)
    },
  }
  return hooks
}

export default HerdrLinkPlugin
