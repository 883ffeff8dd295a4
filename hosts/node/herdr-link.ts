// The one Node/Bun binding of the herdr-link C ABI (include/herdr_link.h), shared by the Pi
// extension (hosts/pi) and the OpenCode plugin (hosts/opencode): each host links this file as
// its src/native.ts. Only marshalling lives here: JSON in, JSON out, every string the library
// returns released with hl_free. Under Node the library is opened with koffi, which the host
// passes in (it resolves koffi from its own node_modules); under Bun with bun:ffi.
//
// Where the library is looked for, in this order (the first file that exists wins):
//   1. $HERDR_LINK_LIB (then nothing else);
//   2. the host's own directory: the directory of its entry module, then that directory's
//      parent (the package root, where hosts/pi/pack.sh puts the library);
//   3. $CARGO_TARGET_DIR/release, then $CARGO_TARGET_DIR/debug;
//   4. the repository's target/release, then target/debug (two levels above the package root:
//      hosts/<host>/ in a checkout).

import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** One tool as `hl_presentation` describes it. */
export interface PresentedTool {
  name: string
  description: string
  input_schema: Record<string, unknown>
  [extra: string]: unknown
}

/** An `hl_presentation` document. */
export interface Presentation {
  tools: PresentedTool[]
  contract: string | null
  error?: { code: string; message: string }
}

/** An `hl_tool_call` response. */
export interface ToolCallResponse {
  ok: boolean
  result?: unknown
  error?: { code: string; message: string }
  active: boolean
  tools_changed: boolean
  /** Present on the call that activated the session and on every activation call. */
  contract?: string
}

/** Outcome of `hl_bash_guard_in_style`: 0 allow, 1 block, 2 block and end the turn. */
export interface GuardVerdict {
  code: number
  reason: string | null
}

/** The library, opened. */
export interface HerdrLink {
  /** Path the library was loaded from. */
  readonly path: string
  /** Which FFI backend is in use. */
  readonly backend: "koffi" | "bun:ffi"
  version(): string
  sessionStart(session: string): void
  sessionEnd(session: string): void
  isActive(session: string): boolean
  /** `hl_presentation`, parsed (an error document is returned as it is). */
  presentation(request: object): Presentation
  /** `hl_tool_call`, off the JS thread where the backend allows it (koffi). */
  toolCall(request: object): Promise<ToolCallResponse>
  /** `hl_bash_guard_in_style`: the verdict, with the reason in the words of `style`. */
  bashGuard(session: string, command: string, style: string): GuardVerdict
  /**
   * `hl_command_env`: the variables to set in a shell command's environment (`env`: its current
   * PATH and HERDR_BIN_PATH) so every `herdr` it starts meets the herdr shim: the shim first on
   * PATH, HERDR_BIN_PATH naming it (the real Herdr kept in HERDR_LINK_HERDR). Empty outside
   * Herdr, without the shim, or when already set.
   */
  commandEnv(env: { PATH?: string; HERDR_BIN_PATH?: string }): Record<string, string>
}

/** `hl_command_env`'s answer as a map of variables (nothing when it refused the request). */
function commandEnvOf(text: string | null): Record<string, string> {
  if (!text) return {}
  const parsed = JSON.parse(text) as Record<string, unknown>
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(parsed)) if (typeof v === "string") out[k] = v
  return out
}

/** The library's file name on `platform`. */
export function libraryFileName(platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return "herdr_link.dll"
  if (platform === "darwin") return "libherdr_link.dylib"
  return "libherdr_link.so"
}

/** The search order above, for a host whose entry module is `entryUrl` (its import.meta.url). */
export function libraryCandidates(entryUrl: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.HERDR_LINK_LIB) return [resolve(env.HERDR_LINK_LIB)]
  const file = libraryFileName()
  const here = dirname(fileURLToPath(entryUrl))
  const packageRoot = resolve(here, "..")
  const out = [join(here, file), join(packageRoot, file)]
  if (env.CARGO_TARGET_DIR) {
    const target = resolve(env.CARGO_TARGET_DIR)
    out.push(join(target, "release", file), join(target, "debug", file))
  }
  const repoTarget = resolve(packageRoot, "..", "..", "target")
  out.push(join(repoTarget, "release", file), join(repoTarget, "debug", file))
  return [...new Set(out)]
}

/** The first candidate that exists; throws, naming every place looked at, when none does. */
export function findLibrary(entryUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const candidates = libraryCandidates(entryUrl, env)
  const path = candidates.find((candidate) => existsSync(candidate))
  if (!path) {
    throw new Error(
      `herdr-link: cannot find ${libraryFileName()}; set HERDR_LINK_LIB or put it next to the host (looked at: ${candidates.join(", ")})`,
    )
  }
  return path
}

/**
 * True when Herdr set the variables the library needs in this pane (`HERDR_ENV=1`,
 * `HERDR_BIN_PATH`, `HERDR_PANE_ID`: the library's own gate, src/env.rs). A host asks it only
 * when the library cannot be loaded: outside a pane the host is a quiet no-op, inside one the
 * missing library is an error worth showing.
 */
export function inHerdrPane(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.HERDR_ENV === "1" && !!env.HERDR_BIN_PATH && !!env.HERDR_PANE_ID
}

/** Whether this runtime is Bun (where bun:ffi replaces koffi). */
export function isBun(): boolean {
  return typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"
}

function parse<T>(what: string, text: string | null): T {
  if (text === null) throw new Error(`herdr-link: ${what} returned NULL`)
  try {
    return JSON.parse(text) as T
  } catch {
    throw new Error(`herdr-link: ${what} returned text that is not JSON: ${text.slice(0, 200)}`)
  }
}

// ---------------------------------------------------------------- koffi (Node)

interface KoffiFn {
  (...args: unknown[]): unknown
  async(...args: unknown[]): void
}

/** The part of koffi this binding uses (the host passes its own koffi module). */
export interface Koffi {
  load(path: string): { func(prototype: string): KoffiFn }
  decode(ptr: unknown, type: string, len: number): unknown
}

/** Opens the library at `path` with koffi. */
export function openWithKoffi(path: string, koffi: Koffi): HerdrLink {
  const lib = koffi.load(path)
  // Returned strings are taken as raw pointers so that each one is decoded once and then
  // handed back to the library's own allocator through hl_free.
  const hlFree = lib.func("void hl_free(void *s)")
  const hlVersion = lib.func("const char *hl_version(void)")
  const hlSessionStart = lib.func("void hl_session_start(const char *session)")
  const hlSessionEnd = lib.func("void hl_session_end(const char *session)")
  const hlIsActive = lib.func("int32_t hl_is_active(const char *session)")
  const hlPresentation = lib.func("void *hl_presentation(const char *request_json)")
  const hlToolCall = lib.func("void *hl_tool_call(const char *request_json)")
  const hlCommandEnv = lib.func("void *hl_command_env(const char *request_json)")
  const hlBashGuard = lib.func(
    "int32_t hl_bash_guard_in_style(const char *session, const char *command, const char *style, _Out_ void **reason_out)",
  )
  const take = (pointer: unknown): string | null => {
    if (pointer === null || pointer === undefined) return null
    try {
      return koffi.decode(pointer, "char", -1) as string
    } finally {
      hlFree(pointer)
    }
  }
  return {
    path,
    backend: "koffi",
    version: () => hlVersion() as string,
    sessionStart: (session) => void hlSessionStart(session),
    sessionEnd: (session) => void hlSessionEnd(session),
    isActive: (session) => hlIsActive(session) === 1,
    presentation: (request) =>
      parse<Presentation>("hl_presentation", take(hlPresentation(JSON.stringify(request)))),
    // The call may run the Herdr CLI, so it runs on koffi's worker thread, off the event loop.
    toolCall: (request) =>
      new Promise<ToolCallResponse>((ok, fail) => {
        hlToolCall.async(JSON.stringify(request), (error: unknown, pointer: unknown) => {
          if (error) return fail(error)
          try {
            ok(parse<ToolCallResponse>("hl_tool_call", take(pointer)))
          } catch (failure) {
            fail(failure)
          }
        })
      }),
    bashGuard: (session, command, style) => {
      const reasonOut: unknown[] = [null]
      const code = hlBashGuard(session, command, style, reasonOut) as number
      return { code, reason: take(reasonOut[0]) }
    },
    commandEnv: (env) => commandEnvOf(take(hlCommandEnv(JSON.stringify(env)))),
  }
}

// ------------------------------------------------------------- bun:ffi (Bun)

interface BunFfi {
  dlopen(
    path: string,
    symbols: Record<string, { args: string[]; returns: string }>,
  ): { symbols: Record<string, (...args: unknown[]) => unknown> }
  CString: new (ptr: unknown) => string
}

/** Opens the library at `path` with bun:ffi (Bun only). */
export async function openWithBun(path: string): Promise<HerdrLink> {
  // A computed specifier keeps bundlers and Node from trying to resolve it.
  const spec = "bun:ffi"
  const ffi = (await import(spec)) as BunFfi
  const { symbols } = ffi.dlopen(path, {
    hl_session_start: { args: ["ptr"], returns: "void" },
    hl_session_end: { args: ["ptr"], returns: "void" },
    hl_is_active: { args: ["ptr"], returns: "i32" },
    hl_presentation: { args: ["ptr"], returns: "ptr" },
    hl_tool_call: { args: ["ptr"], returns: "ptr" },
    hl_command_env: { args: ["ptr"], returns: "ptr" },
    hl_free: { args: ["ptr"], returns: "void" },
    hl_version: { args: [], returns: "ptr" },
    hl_bash_guard_in_style: { args: ["ptr", "ptr", "ptr", "ptr"], returns: "i32" },
  })
  const cstr = (s: string) => Buffer.from(s + "\0", "utf8")
  const take = (ptr: unknown): string | null => {
    if (!ptr) return null
    try {
      return String(new ffi.CString(ptr))
    } finally {
      symbols.hl_free!(ptr)
    }
  }
  return {
    path,
    backend: "bun:ffi",
    version: () => {
      const ptr = symbols.hl_version!()
      return ptr ? String(new ffi.CString(ptr)) : "" // static string: not freed
    },
    sessionStart: (s) => void symbols.hl_session_start!(cstr(s)),
    sessionEnd: (s) => void symbols.hl_session_end!(cstr(s)),
    isActive: (s) => symbols.hl_is_active!(cstr(s)) === 1,
    presentation: (request) =>
      parse<Presentation>("hl_presentation", take(symbols.hl_presentation!(cstr(JSON.stringify(request))))),
    // bun:ffi calls are synchronous; the library call runs on the JS thread.
    toolCall: async (request) =>
      parse<ToolCallResponse>("hl_tool_call", take(symbols.hl_tool_call!(cstr(JSON.stringify(request))))),
    bashGuard: (session, command, style) => {
      // One pointer-sized out slot; the library stores the reason there (or NULL).
      const out = new BigUint64Array(1)
      const code = symbols.hl_bash_guard_in_style!(cstr(session), cstr(command), cstr(style), out) as number
      return { code, reason: take(Number(out[0])) }
    },
    commandEnv: (env) => commandEnvOf(take(symbols.hl_command_env!(cstr(JSON.stringify(env))))),
  }
}
