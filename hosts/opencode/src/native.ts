// Loading and calling the herdr-link C library.
//
// Under Bun (how OpenCode runs plugins) the library is opened with `bun:ffi`,
// under Node with koffi. Both backends expose the same small surface; every
// char* the library returns is copied into a JS string and released with
// hl_free straight away.

import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export interface HerdrLinkLibrary {
  /** Path the library was loaded from. */
  readonly path: string
  /** Which FFI backend is in use: "bun:ffi" or "koffi". */
  readonly backend: "bun:ffi" | "koffi"
  sessionStart(session: string): void
  sessionEnd(session: string): void
  isActive(session: string): boolean
  presentation(requestJson: string): string
  /** hl_tool_call; off the JS thread where the backend allows it (koffi). */
  toolCall(requestJson: string): Promise<string>
  /** hl_bash_guard_in_style: 0 allow, 1 block, 2 block and end the turn, with the library's
   * reason in the words of `style`. */
  bashGuard(session: string, command: string, style: string): GuardVerdict
  version(): string
}

/** The outcome of hl_bash_guard (reason: null when allowed). */
export interface GuardVerdict {
  code: number
  reason: string | null
}

export function libraryFileName(platform: NodeJS.Platform = process.platform): string {
  if (platform === "win32") return "herdr_link.dll"
  if (platform === "darwin") return "libherdr_link.dylib"
  return "libherdr_link.so"
}

function moduleDir(): string | undefined {
  try {
    return dirname(fileURLToPath(import.meta.url))
  } catch {
    return undefined
  }
}

/**
 * Where the library is looked for, in order: $HERDR_LINK_LIB; next to this
 * file; $CARGO_TARGET_DIR/{release,debug}; the repository's target/ dir
 * (this file lives in hosts/opencode/dist/ or hosts/opencode/src/).
 */
export function libraryCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = libraryFileName()
  const out: string[] = []
  if (env.HERDR_LINK_LIB) return [resolve(env.HERDR_LINK_LIB)]
  const here = moduleDir()
  if (here) out.push(join(here, file))
  if (env.CARGO_TARGET_DIR) {
    out.push(join(resolve(env.CARGO_TARGET_DIR), "release", file))
    out.push(join(resolve(env.CARGO_TARGET_DIR), "debug", file))
  }
  if (here) {
    const repoTarget = resolve(here, "..", "..", "..", "target")
    out.push(join(repoTarget, "release", file))
    out.push(join(repoTarget, "debug", file))
  }
  return out
}

const loaded = new Map<string, Promise<HerdrLinkLibrary>>()

/** Finds and opens the library (once per path per process). */
export function loadLibrary(env: NodeJS.ProcessEnv = process.env): Promise<HerdrLinkLibrary> {
  const candidates = libraryCandidates(env)
  const path = candidates.find((p) => existsSync(p))
  if (!path) {
    return Promise.reject(
      new Error(
        `herdr-link: cannot find ${libraryFileName()}; set HERDR_LINK_LIB or put it next to the plugin (looked in: ${candidates.join(", ")})`,
      ),
    )
  }
  let lib = loaded.get(path)
  if (!lib) {
    lib = isBun() ? openWithBun(path) : openWithKoffi(path)
    lib.catch(() => loaded.delete(path))
    loaded.set(path, lib)
  }
  return lib
}

function isBun(): boolean {
  return typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"
}

// ---------------------------------------------------------------- koffi (Node)

interface KoffiFn {
  (...args: unknown[]): unknown
  async(...args: unknown[]): void
}
interface KoffiModule {
  load(path: string): {
    func(name: string, result: unknown, args: unknown[]): KoffiFn
    func(prototype: string): KoffiFn
  }
  disposable(type: unknown, free: (ptr: unknown) => void): unknown
  decode(ptr: unknown, type: string, len: number): string
}

async function openWithKoffi(path: string): Promise<HerdrLinkLibrary> {
  const imported = (await import("koffi")) as unknown as { default?: KoffiModule } & KoffiModule
  const koffi: KoffiModule = imported.default ?? imported
  const lib = koffi.load(path)
  const hlFree = lib.func("hl_free", "void", ["void *"])
  // A char* result that koffi turns into a JS string and then hands to hl_free.
  const OwnedStr = koffi.disposable("str", (ptr) => {
    hlFree(ptr)
  })
  const hlSessionStart = lib.func("hl_session_start", "void", ["str"])
  const hlSessionEnd = lib.func("hl_session_end", "void", ["str"])
  const hlIsActive = lib.func("hl_is_active", "int32_t", ["str"])
  const hlPresentation = lib.func("hl_presentation", OwnedStr, ["str"])
  const hlToolCall = lib.func("hl_tool_call", OwnedStr, ["str"])
  const hlVersion = lib.func("hl_version", "str", [])
  const hlBashGuard = lib.func(
    "int32_t hl_bash_guard_in_style(const char *session, const char *command, const char *style, _Out_ void **reason_out)",
  ) as KoffiFn
  return {
    path,
    backend: "koffi",
    sessionStart: (s) => void hlSessionStart(s),
    sessionEnd: (s) => void hlSessionEnd(s),
    isActive: (s) => hlIsActive(s) !== 0,
    presentation: (req) => expectString(hlPresentation(req), "hl_presentation"),
    toolCall: (req) =>
      new Promise<string>((ok, fail) => {
        hlToolCall.async(req, (err: unknown, res: unknown) => {
          if (err) fail(err)
          else {
            try {
              ok(expectString(res, "hl_tool_call"))
            } catch (e) {
              fail(e)
            }
          }
        })
      }),
    bashGuard: (session, command, style) => {
      const out: unknown[] = [null]
      const code = hlBashGuard(session, command, style, out) as number
      const ptr = out[0]
      if (!ptr) return { code, reason: null }
      try {
        return { code, reason: koffi.decode(ptr, "char", -1) }
      } finally {
        hlFree(ptr)
      }
    },
    version: () => expectString(hlVersion(), "hl_version"),
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

async function openWithBun(path: string): Promise<HerdrLinkLibrary> {
  // A computed specifier keeps bundlers and Node from trying to resolve it.
  const spec = "bun:ffi"
  const ffi = (await import(spec)) as BunFfi
  const { symbols } = ffi.dlopen(path, {
    hl_session_start: { args: ["ptr"], returns: "void" },
    hl_session_end: { args: ["ptr"], returns: "void" },
    hl_is_active: { args: ["ptr"], returns: "i32" },
    hl_presentation: { args: ["ptr"], returns: "ptr" },
    hl_tool_call: { args: ["ptr"], returns: "ptr" },
    hl_free: { args: ["ptr"], returns: "void" },
    hl_version: { args: [], returns: "ptr" },
    hl_bash_guard_in_style: { args: ["ptr", "ptr", "ptr", "ptr"], returns: "i32" },
  })
  const cstr = (s: string) => Buffer.from(s + "\0", "utf8")
  const take = (ptr: unknown, what: string): string => {
    if (!ptr) throw new Error(`herdr-link: ${what} returned NULL`)
    try {
      return String(new ffi.CString(ptr))
    } finally {
      symbols.hl_free(ptr)
    }
  }
  return {
    path,
    backend: "bun:ffi",
    sessionStart: (s) => void symbols.hl_session_start(cstr(s)),
    sessionEnd: (s) => void symbols.hl_session_end(cstr(s)),
    isActive: (s) => symbols.hl_is_active(cstr(s)) !== 0,
    presentation: (req) => take(symbols.hl_presentation(cstr(req)), "hl_presentation"),
    // bun:ffi calls are synchronous; the library call runs on the JS thread.
    toolCall: async (req) => take(symbols.hl_tool_call(cstr(req)), "hl_tool_call"),
    bashGuard: (session, command, style) => {
      // One pointer-sized out slot; the library stores the reason there (or NULL).
      const out = new BigUint64Array(1)
      const code = symbols.hl_bash_guard_in_style(cstr(session), cstr(command), cstr(style), out) as number
      const ptr = Number(out[0])
      return { code, reason: ptr ? take(ptr, "hl_bash_guard_in_style") : null }
    },
    version: () => {
      const ptr = symbols.hl_version()
      if (!ptr) return ""
      return String(new ffi.CString(ptr)) // static string: not freed
    },
  }
}

function expectString(value: unknown, what: string): string {
  if (typeof value !== "string") throw new Error(`herdr-link: ${what} returned NULL`)
  return value
}
