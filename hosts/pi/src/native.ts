// Binding of the herdr-link C ABI (include/herdr_link.h) through koffi.
// Only marshalling lives here: JSON in, JSON out, every returned string released with hl_free.

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import koffi from "koffi";

/** One tool as `hl_presentation` describes it. */
export interface PresentedTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface Presentation {
  tools: PresentedTool[];
  contract: string | null;
  error?: { code: string; message: string };
}

export interface ToolCallResponse {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
  active: boolean;
  tools_changed: boolean;
  /** Present on the call that activated the session and on every activation call: the text to
   * show the model together with the result. */
  contract?: string;
}

/** Outcome of `hl_bash_guard`: 0 allow, 1 block, 2 block and end the turn. */
export interface GuardVerdict {
  code: number;
  reason: string | null;
}

export interface HerdrLink {
  readonly path: string;
  version(): string;
  sessionStart(session: string): void;
  sessionEnd(session: string): void;
  isActive(session: string): boolean;
  presentation(request: object): Presentation;
  toolCall(request: object): Promise<ToolCallResponse>;
  /** `hl_bash_guard_in_style`: the verdict, with the reason in the words of `style`. */
  bashGuard(session: string, command: string, style: string): GuardVerdict;
}

function libraryFileName(): string {
  if (process.platform === "darwin") return "libherdr_link.dylib";
  if (process.platform === "win32") return "herdr_link.dll";
  return "libherdr_link.so";
}

/**
 * Where the library is looked for, in order: `HERDR_LINK_LIB`; the file next to the extension
 * (this directory, then the package root); the cargo target directory of the repository that
 * holds this package (`../../target/release`, then `../../target/debug`).
 */
export function libraryCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = env.HERDR_LINK_LIB;
  if (fromEnv) return [resolve(fromEnv)];
  const here = dirname(fileURLToPath(import.meta.url));
  const packageRoot = resolve(here, "..");
  const file = libraryFileName();
  return [
    join(here, file),
    join(packageRoot, file),
    join(packageRoot, "..", "..", "target", "release", file),
    join(packageRoot, "..", "..", "target", "debug", file),
  ];
}

export function loadHerdrLink(env: NodeJS.ProcessEnv = process.env): HerdrLink {
  const candidates = libraryCandidates(env);
  const path = candidates.find((candidate) => existsSync(candidate));
  if (!path) {
    throw new Error(
      `herdr-link: native library not found (set HERDR_LINK_LIB); looked at: ${candidates.join(", ")}`,
    );
  }
  const lib = koffi.load(path);

  // Returned strings are taken as raw pointers so that each one is decoded once and then
  // handed back to the library's own allocator through hl_free.
  const hlFree = lib.func("void hl_free(void *s)");
  const hlVersion = lib.func("const char *hl_version(void)");
  const hlSessionStart = lib.func("void hl_session_start(const char *session)");
  const hlSessionEnd = lib.func("void hl_session_end(const char *session)");
  const hlIsActive = lib.func("int32_t hl_is_active(const char *session)");
  const hlPresentation = lib.func("void *hl_presentation(const char *request_json)");
  const hlToolCall = lib.func("void *hl_tool_call(const char *request_json)");
  const hlBashGuard = lib.func(
    "int32_t hl_bash_guard_in_style(const char *session, const char *command, const char *style, _Out_ void **reason_out)",
  );

  const takeString = (pointer: unknown): string | null => {
    if (pointer === null || pointer === undefined) return null;
    try {
      return koffi.decode(pointer, "char", -1) as string;
    } finally {
      hlFree(pointer);
    }
  };
  const takeJson = <T>(what: string, pointer: unknown): T => {
    const text = takeString(pointer);
    if (text === null) throw new Error(`herdr-link: ${what} returned NULL`);
    return JSON.parse(text) as T;
  };

  return {
    path,
    version: () => hlVersion() as string,
    sessionStart: (session) => void hlSessionStart(session),
    sessionEnd: (session) => void hlSessionEnd(session),
    isActive: (session) => hlIsActive(session) === 1,
    presentation: (request) => {
      const document = takeJson<Presentation>("hl_presentation", hlPresentation(JSON.stringify(request)));
      if (document.error) throw new Error(`herdr-link: ${document.error.message}`);
      return document;
    },
    // The call may run the Herdr CLI, so it runs on koffi's worker thread, off the event loop.
    toolCall: (request) =>
      new Promise<ToolCallResponse>((resolvePromise, reject) => {
        hlToolCall.async(JSON.stringify(request), (error: unknown, pointer: unknown) => {
          if (error) {
            reject(error);
            return;
          }
          try {
            resolvePromise(takeJson<ToolCallResponse>("hl_tool_call", pointer));
          } catch (failure) {
            reject(failure);
          }
        });
      }),
    bashGuard: (session, command, style) => {
      const reasonOut: unknown[] = [null];
      const code = hlBashGuard(session, command, style, reasonOut) as number;
      return { code, reason: takeString(reasonOut[0]) };
    },
  };
}
