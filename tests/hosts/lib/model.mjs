// A scripted fake model on 127.0.0.1 that speaks the four wire APIs the real hosts use:
// Anthropic Messages (Claude Code), OpenAI Responses (Codex), OpenAI Chat Completions
// (OpenCode through @ai-sdk/openai-compatible, Qwen Code) and the Gemini API's
// generateContent (Gemini CLI), streamed as server-sent events (Gemini's plain
// `:generateContent` side requests as one JSON answer).
//
// Every request is parsed into one shape (`Conversation`: the tools offered, the system text,
// and the tool calls already made with their results), handed to a `decide(conversation)`
// function, and its answer (a tool call or plain text) is encoded back in the request's API.
// Steps are decided from the conversation, never from a request counter, because hosts make
// side requests (titles, quota checks). Every request body is recorded.

import { createServer } from "node:http"

/**
 * @typedef {{name: string, namespace?: string, description: string, deferred: boolean}} ToolDef
 * @typedef {{name: string, namespace?: string, input: any, output: string, isError: boolean}} Call
 * @typedef {{api: string, tools: ToolDef[], system: string, calls: Call[], referenced: string[]}} Conversation
 * @typedef {{tool: string, namespace?: string, input: object} | {text: string}} Decision
 */

/** Text of a content value (string, or a list of blocks with `text`/`content`). */
function textOf(content) {
  if (content == null) return ""
  if (typeof content === "string") return content
  if (Array.isArray(content)) return content.map(textOf).join("\n")
  if (typeof content === "object") {
    if (typeof content.text === "string") return content.text
    if (content.content !== undefined) return textOf(content.content)
    if (typeof content.output === "string") return content.output
  }
  return ""
}

function parseArgs(text) {
  if (typeof text !== "string") return text ?? {}
  try {
    return JSON.parse(text)
  } catch {
    return { _raw: text }
  }
}

/** Anthropic Messages request → Conversation. */
function fromAnthropic(body) {
  const tools = (body.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description ?? "",
    deferred: t.defer_loading === true,
  }))
  const uses = new Map()
  const calls = []
  const referenced = []
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue
    for (const b of m.content) {
      if (b.type === "tool_use") {
        const call = { name: b.name, input: b.input, output: "", isError: false, pending: true }
        uses.set(b.id, call)
        calls.push(call)
      } else if (b.type === "tool_result") {
        const call = uses.get(b.tool_use_id)
        if (call) {
          const blocks = Array.isArray(b.content) ? b.content : [b.content]
          // Claude Code appends its own <system-reminder> blocks to tool results.
          call.output = textOf(blocks.filter((c) => !String(c?.text ?? c).startsWith("<system-reminder>")))
          call.isError = b.is_error === true
          delete call.pending
        }
        for (const c of Array.isArray(b.content) ? b.content : []) {
          if (c.type === "tool_reference" && c.tool_name) referenced.push(c.tool_name)
        }
      }
    }
  }
  const system = textOf(body.system)
  return { api: "anthropic", tools, system, calls: calls.filter((c) => !c.pending), referenced }
}

/** OpenAI Responses request → Conversation. */
function fromResponses(body) {
  const tools = []
  for (const t of body.tools ?? []) {
    if (t.type === "namespace" && Array.isArray(t.tools)) {
      for (const inner of t.tools) {
        tools.push({ name: inner.name, namespace: t.name, description: inner.description ?? "", deferred: false })
      }
    } else {
      tools.push({ name: t.name ?? t.type, description: t.description ?? "", deferred: false })
    }
  }
  const byId = new Map()
  const calls = []
  for (const item of body.input ?? []) {
    if (item.type === "function_call" || item.type === "custom_tool_call") {
      const call = {
        name: item.name,
        namespace: item.namespace,
        input: parseArgs(item.arguments ?? item.input),
        output: "",
        isError: false,
        pending: true,
      }
      byId.set(item.call_id, call)
      calls.push(call)
    } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      const call = byId.get(item.call_id)
      if (call) {
        const out = item.output
        call.output = typeof out === "string" ? out : textOf(out?.content ?? out)
        call.isError = out?.success === false
        delete call.pending
      }
    }
  }
  const system = [body.instructions ?? ""]
    .concat((body.input ?? []).filter((i) => i.role === "developer" || i.role === "system").map((i) => textOf(i.content)))
    .join("\n")
  return { api: "responses", tools, system, calls: calls.filter((c) => !c.pending), referenced: [] }
}

/** OpenAI Chat Completions request → Conversation. */
function fromChat(body) {
  const tools = (body.tools ?? []).map((t) => ({
    name: t.function?.name ?? t.name,
    description: t.function?.description ?? "",
    deferred: false,
  }))
  const byId = new Map()
  const calls = []
  const system = []
  for (const m of body.messages ?? []) {
    if (m.role === "system") system.push(textOf(m.content))
    for (const tc of m.tool_calls ?? []) {
      const call = { name: tc.function?.name, input: parseArgs(tc.function?.arguments), output: "", isError: false, pending: true }
      byId.set(tc.id, call)
      calls.push(call)
    }
    if (m.role === "tool") {
      const call = byId.get(m.tool_call_id)
      if (call) {
        call.output = textOf(m.content)
        delete call.pending
      }
    }
  }
  return { api: "chat", tools, system: system.join("\n"), calls: calls.filter((c) => !c.pending), referenced: [] }
}

/**
 * Gemini API request (`models/<model>:generateContent` / `:streamGenerateContent`) →
 * Conversation. A model turn's `functionCall` parts are answered by the next user turn's
 * `functionResponse` parts, by id when both carry one, else in order of the same name.
 */
function fromGemini(body) {
  const tools = []
  for (const t of body.tools ?? []) {
    for (const d of t.functionDeclarations ?? []) tools.push({ name: d.name, description: d.description ?? "", deferred: false })
  }
  const calls = []
  const pending = []
  for (const c of body.contents ?? []) {
    for (const part of c.parts ?? []) {
      if (part.functionCall) {
        const call = { name: part.functionCall.name, id: part.functionCall.id, input: part.functionCall.args ?? {}, output: "", isError: false, pending: true }
        calls.push(call)
        pending.push(call)
      } else if (part.functionResponse) {
        const r = part.functionResponse
        const i = pending.findIndex((p) => (r.id && p.id ? p.id === r.id : p.name === r.name))
        if (i < 0) continue
        const [call] = pending.splice(i, 1)
        const response = r.response ?? {}
        call.output = typeof response.output === "string" ? response.output : typeof response.error === "string" ? response.error : JSON.stringify(response)
        call.isError = response.error !== undefined
        delete call.pending
      }
    }
  }
  return { api: "gemini", tools, system: textOf(body.systemInstruction?.parts ?? []), calls: calls.filter((c) => !c.pending), referenced: [] }
}

let seq = 0
const nextId = (prefix) => `${prefix}_${Date.now().toString(36)}${(seq++).toString(36)}`
const sse = (event, data) => (event ? `event: ${event}\n` : "") + `data: ${JSON.stringify(data)}\n\n`

function anthropicStream(body, decision) {
  const id = nextId("msg")
  const usage = { input_tokens: 10, output_tokens: 5 }
  let out = sse("message_start", {
    type: "message_start",
    message: { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage },
  })
  if ("tool" in decision) {
    out += sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: nextId("toolu"), name: decision.tool, input: {} },
    })
    out += sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(decision.input) },
    })
  } else {
    out += sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    out += sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: decision.text } })
  }
  out += sse("content_block_stop", { type: "content_block_stop", index: 0 })
  out += sse("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "tool" in decision ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: 5 },
  })
  out += sse("message_stop", { type: "message_stop" })
  return out
}

function responsesStream(body, decision) {
  const id = nextId("resp")
  const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model: body.model, status: "in_progress", output: [] }
  let item
  if ("tool" in decision) {
    item = { type: "function_call", id: nextId("fc"), call_id: nextId("call"), name: decision.tool, arguments: JSON.stringify(decision.input), status: "completed" }
    if (decision.namespace) item.namespace = decision.namespace
  } else {
    item = { type: "message", id: nextId("m"), role: "assistant", status: "completed", content: [{ type: "output_text", text: decision.text, annotations: [] }] }
  }
  let out = sse("response.created", { type: "response.created", response: base })
  out += sse("response.output_item.added", { type: "response.output_item.added", output_index: 0, item })
  out += sse("response.output_item.done", { type: "response.output_item.done", output_index: 0, item })
  out += sse("response.completed", {
    type: "response.completed",
    response: { ...base, status: "completed", output: [item], usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } },
  })
  return out
}

/** A whole (non-streamed) chat completion: Qwen Code's side queries ask with `stream: false`. */
function chatCompletion(body, decision) {
  const message = "tool" in decision
    ? { role: "assistant", content: null, tool_calls: [{ id: nextId("call"), type: "function", function: { name: decision.tool, arguments: JSON.stringify(decision.input) } }] }
    : { role: "assistant", content: decision.text }
  return {
    id: nextId("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: "tool" in decision ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }
}

function chatStream(body, decision) {
  const id = nextId("chatcmpl")
  const chunk = (delta, finish) =>
    sse(null, { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })
  let out
  if ("tool" in decision) {
    out = chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: nextId("call"), type: "function", function: { name: decision.tool, arguments: JSON.stringify(decision.input) } }] }, null)
    out += chunk({}, "tool_calls")
  } else {
    out = chunk({ role: "assistant", content: decision.text }, null)
    out += chunk({}, "stop")
  }
  out += sse(null, { id, object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
  return out + "data: [DONE]\n\n"
}

/** One Gemini API response (a whole answer: the stream sends it as one chunk). */
function geminiResponse(body, decision) {
  const part = "tool" in decision ? { functionCall: { name: decision.tool, args: decision.input } } : { text: decision.text }
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "scripted",
    responseId: nextId("gem"),
  }
}

function geminiStream(body, decision) {
  return `data: ${JSON.stringify(geminiResponse(body, decision))}\r\n\r\n`
}

const ROUTES = [
  { match: (p) => p.startsWith("/v1/messages") && !p.includes("count_tokens"), parse: fromAnthropic, stream: anthropicStream },
  { match: (p) => p.startsWith("/v1/responses"), parse: fromResponses, stream: responsesStream },
  { match: (p) => p.startsWith("/v1/chat/completions"), parse: fromChat, stream: chatStream, json: (body, d) => (body.stream === false ? chatCompletion(body, d) : undefined) },
  { match: (p) => /\/models\/[^/:]+:streamGenerateContent/.test(p), parse: fromGemini, stream: geminiStream },
  { match: (p) => /\/models\/[^/:]+:generateContent/.test(p), parse: fromGemini, json: geminiResponse },
]

/**
 * Starts the model server. `decide(conversation, body)` returns the next Decision (or a
 * promise of it, to hold a step until something else happened).
 * Returns {port, url, requests, close}; `requests` holds {method, path, body, conversation,
 * decision} for every request, in arrival order.
 */
export async function startModel(decide) {
  const requests = []
  const server = createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      const record = { method: req.method, path: req.url, raw, body: null, conversation: null, decision: null }
      requests.push(record)
      try {
        record.body = raw ? JSON.parse(raw) : null
      } catch {
        record.body = null
      }
      const route = record.body && req.method === "POST" ? ROUTES.find((r) => r.match(req.url)) : undefined
      if (req.url.includes("count_tokens") || req.url.includes(":countTokens")) {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ input_tokens: 10, totalTokens: 10 }))
        return
      }
      if (!route) {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { type: "not_found", message: `scripted model: no route ${req.method} ${req.url}` } }))
        return
      }
      const answer = async () => {
        try {
          record.conversation = route.parse(record.body)
          record.decision = await decide(record.conversation, record.body)
        } catch (e) {
          record.error = String(e?.stack ?? e)
          record.decision = { text: `scripted model error: ${e?.message ?? e}` }
        }
        const whole = route.json?.(record.body, record.decision)
        if (whole) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify(whole))
          return
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
        res.end(route.stream(record.body, record.decision))
      }
      answer()
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = server.address().port
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}
