// Herdr Link for Pi: maps Pi's extension API onto the herdr-link C ABI.
//
// Everything the model sees (tool names, descriptions, schemas, the Contract) and every protocol
// decision (activation, the Bash guard, errors, which results carry the Contract) comes from the
// library. This file only decides where in Pi each piece goes ("deferred" presentation: every
// tool registered, the Tier 1 tools kept out of the active set until the session is active; the
// Contract as its own text block of the result that carries it, and in the system prompt from
// the next user prompt on).

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import koffi from "koffi";
import { findLibrary, inHerdrPane, openWithKoffi, type HerdrLink, type Presentation, type PresentedTool } from "./native.ts";

const STYLE = "deferred";
/** Session key used only to read the catalog at load time, before any Pi session exists. */
const CATALOG_SESSION = "pi:catalog";

/**
 * Gives this process's environment, which Pi's bash tool gives every command, the herdr shim's
 * environment: the shim first on PATH and named by $HERDR_BIN_PATH (the real Herdr kept in
 * $HERDR_LINK_HERDR, where the shim finds it; the library's own Herdr calls then pass through
 * the shim, which never stops them). A `herdr` any program starts (python, make, a script) is
 * then judged by its real argv against the session's activation. Where the shim lives and when
 * it applies is the library's rule (`hl_command_env`).
 */
function putShimFirst(link: HerdrLink, env: NodeJS.ProcessEnv): void {
  Object.assign(env, link.commandEnv({ PATH: env.PATH ?? "", HERDR_BIN_PATH: env.HERDR_BIN_PATH }));
}

/** `hl_presentation`, with an error document turned into an exception. */
function present(link: HerdrLink, request: object): Presentation {
  const document = link.presentation(request);
  if (document.error) throw new Error(`herdr-link: ${document.error.message}`);
  return document;
}

/** "herdr_link_start" -> "Herdr Link Start" (Pi wants a human label for its UI). */
function labelFor(name: string): string {
  return name
    .split("_")
    .filter((word) => word.length > 0)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(" ");
}

function sessionKey(ctx: ExtensionContext): string {
  return ctx.sessionManager.getSessionId();
}

export default function herdrLink(pi: ExtensionAPI): void {
  let link: HerdrLink;
  try {
    link = openWithKoffi(findLibrary(import.meta.url), koffi);
  } catch (error) {
    // Outside Herdr the extension is a no-op whether or not the library is installed.
    if (!inHerdrPane(process.env)) return;
    throw error;
  }

  const catalog = present(link, { session: CATALOG_SESSION, style: STYLE, view: "catalog" }).tools;
  if (catalog.length === 0) return; // Outside Herdr: register nothing, handle nothing.
  putShimFirst(link, process.env);
  const catalogNames = catalog.map((tool) => tool.name);

  /** Names the library shows the session now (dormant: the gateway; active: every tool). */
  const visibleNames = (session: string): string[] =>
    present(link, { session, style: STYLE }).tools.map((tool) => tool.name);

  for (const tool of catalog) registerTool(pi, link, tool, visibleNames);

  pi.on("session_start", async (_event, ctx) => {
    const session = sessionKey(ctx);
    link.sessionStart(session);
    // The session's marker for its commands (Pi runs one session at a time): the library
    // answers the shim for this session, also for a command that left Pi's process tree.
    process.env.HERDR_LINK_SESSION = session;
    const visible = new Set(visibleNames(session));
    const hidden = new Set(catalogNames.filter((name) => !visible.has(name)));
    pi.setActiveTools(pi.getActiveTools().filter((name) => !hidden.has(name)));
  });

  pi.on("session_shutdown", async (_event, ctx) => {
    link.sessionEnd(sessionKey(ctx));
  });

  pi.on("before_agent_start", async (event, ctx) => {
    const { contract } = present(link, { session: sessionKey(ctx), style: STYLE });
    if (typeof contract !== "string") return undefined;
    return { systemPrompt: `${event.systemPrompt}\n\n${contract}` };
  });

  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return undefined;
    const command = (event.input as { command?: unknown }).command;
    if (typeof command !== "string") return undefined;
    const verdict = link.bashGuard(sessionKey(ctx), command, STYLE);
    if (verdict.code === 0) return undefined;
    const reason = verdict.reason ?? undefined;
    return verdict.code === 2 ? { block: true, reason, terminate: true } : { block: true, reason };
  });
}

function registerTool(
  pi: ExtensionAPI,
  link: HerdrLink,
  tool: PresentedTool,
  visibleNames: (session: string) => string[],
): void {
  pi.registerTool({
    name: tool.name,
    label: typeof tool.label === "string" ? tool.label : labelFor(tool.name),
    description: tool.description,
    // hl_presentation gives plain JSON Schema, which Pi validates as is.
    parameters: tool.input_schema as never,
    // Pi runs sibling calls in parallel; a batch holding a close runs one call at a time.
    ...(tool.sequential === true ? { executionMode: "sequential" as const } : {}),
    ...(typeof tool.prompt_snippet === "string" ? { promptSnippet: tool.prompt_snippet } : {}),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const session = sessionKey(ctx);
      const response = await link.toolCall({
        session,
        tool: tool.name,
        input: params ?? {},
        context_dir: ctx.cwd,
        // Deferred style: the gateway only activates; the capabilities are the Tier 1 tools.
        style: STYLE,
      });
      if (response.tools_changed) {
        // Additive: keep the current set and its order, append what the session now shows.
        const active = pi.getActiveTools();
        const present = new Set(active);
        const added = visibleNames(session).filter((name) => !present.has(name));
        if (added.length > 0) pi.setActiveTools([...active, ...added]);
      }
      // The activating call's result carries the Contract: the model sees the rules in the very
      // next step of this turn (Pi's system prompt changes only at the next user prompt).
      const contract = typeof response.contract === "string" ? response.contract : undefined;
      if (!response.ok) {
        const message = response.error?.message ?? "INVALID_RESPONSE: herdr-link gave no error text";
        throw new Error(contract === undefined ? message : `${message}\n\n${contract}`);
      }
      const text = (value: string) => ({ type: "text" as const, text: value });
      return {
        content: [text(JSON.stringify(response.result)), ...(contract === undefined ? [] : [text(contract)])],
        details: response.result,
      };
    },
  });
}
