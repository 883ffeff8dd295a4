// Test-only Pi extension: a scripted model built on Pi's own faux provider (@earendil-works/pi-ai).
//
// Each user prompt the test sends is JSON: {"script":[step, ...]}, where a step is
// {"tool": name, "args": {...}} (one tool call), {"tools": [{"tool","args"}, ...]} (one batch)
// or {"text": "..."} (a final answer). The model answers the N-th request of a run with step N,
// where N counts the assistant messages after the prompt, and "script exhausted" past the end.
//
// Before answering it appends one JSON line to $HL_MODEL_LOG with what the model was shown:
// the system prompt and the declared tool names, rebuilt from the transcript the same way a
// provider would see them, the text blocks of every tool result in the transcript, plus Pi's
// active tool list (pi.getActiveTools()) at that moment.
// The test asserts on that log.

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  getCurrentSystemPrompt,
  getCurrentTools,
  type FauxResponseFactory,
} from "@earendil-works/pi-ai";
import { appendFileSync } from "node:fs";

interface ToolStep {
  tool: string;
  args?: Parameters<typeof fauxToolCall>[1];
}
type Step = ToolStep | { tools: ToolStep[] } | { text: string };

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block && block.type === "text" ? String(block.text) : "")).join("");
}

export default function scriptedModel(pi: ExtensionAPI): void {
  const log = process.env.HL_MODEL_LOG;
  if (!log) throw new Error("scripted-model: HL_MODEL_LOG is not set");
  const faux = fauxProvider({
    provider: "scripted",
    models: [{ id: "herdr-script", name: "Herdr Link script", reasoning: false, input: ["text"] }],
  });

  const answer: FauxResponseFactory = (context) => {
    // Keep one response queued at all times so the model never runs dry.
    faux.appendResponses([answer]);
    const messages = context.messages as ReadonlyArray<{ role: string; content?: unknown; toolName?: string }>;
    let promptIndex = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.role === "user") {
        promptIndex = i;
        break;
      }
    }
    const prompt = promptIndex >= 0 ? messageText(messages[promptIndex]!.content) : "";
    const script = (JSON.parse(prompt) as { script: Step[] }).script;
    const step = messages.slice(promptIndex + 1).filter((m) => m.role === "assistant").length;
    appendFileSync(
      log,
      `${JSON.stringify({
        prompt: script,
        step,
        system: getCurrentSystemPrompt(context.messages),
        tools: getCurrentTools(context.messages).map((tool) => tool.name),
        results: messages
          .filter((m) => m.role === "toolResult")
          .map((m) => ({
            tool: m.toolName,
            blocks: Array.isArray(m.content)
              ? m.content.filter((b) => b && b.type === "text").map((b) => String(b.text))
              : [],
          })),
        active: pi.getActiveTools(),
      })}\n`,
    );
    const next = script[step];
    if (!next) return fauxAssistantMessage("script exhausted");
    if ("text" in next) return fauxAssistantMessage(next.text);
    const calls = "tools" in next ? next.tools : [next];
    return fauxAssistantMessage(
      calls.map((call) => fauxToolCall(call.tool, call.args ?? {})),
      { stopReason: "toolUse" },
    );
  };
  faux.setResponses([answer]);
  pi.registerProvider(faux.provider);

  // A tool of another extension, active from registration on: the Link glue must leave it be.
  pi.registerTool({
    name: "probe_other_extension",
    label: "Probe",
    description: "Test-only tool of another extension.",
    parameters: { type: "object", properties: {} } as never,
    async execute() {
      return { content: [{ type: "text" as const, text: "probe" }], details: undefined };
    },
  });
}
