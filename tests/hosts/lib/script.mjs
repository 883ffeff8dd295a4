// The scripted model's behaviour: a list of goals (Link actions and shell commands) played in
// order, each decided from the conversation the host sends. It uses a Tier 1 tool when the host
// shows it (loading it through Claude Code's ToolSearch when the host lists it as deferred) and
// the gateway's `action` dispatch otherwise, like a model that reads its tool list.

const CANONICAL = ["herdr_link", "herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"]

/**
 * How a route names the Link tools. `prefix`: the host's prefix before the canonical name
 * (`mcp__herdr_link__` in Claude Code, `herdr_link_` for OpenCode's MCP route); `namespace`: the
 * Responses API namespace (Codex); `shell`: the host's shell tool when the API alone does not
 * say it (Gemini CLI and Qwen Code: `run_shell_command`, taking `command`).
 * @typedef {{prefix: string, namespace?: string, shell?: string}} Naming
 */

/** Canonical Link tool name of an offered tool, or undefined. */
function canonicalOf(tool, naming) {
  if (naming.namespace) {
    return tool.namespace === naming.namespace && CANONICAL.includes(tool.name) ? tool.name : undefined
  }
  if (!tool.name.startsWith(naming.prefix)) return undefined
  const rest = tool.name.slice(naming.prefix.length)
  return CANONICAL.includes(rest) ? rest : undefined
}

/**
 * Names Claude Code announces as deferred ("available via ToolSearch") in the messages, and
 * those Factory Droid lists after "Deferred tools:".
 */
function announcedDeferred(body) {
  const names = new Set()
  const text = JSON.stringify(body?.messages ?? [])
  for (const m of text.matchAll(/deferred tools are now available via ToolSearch.*?:((?:\\n[A-Za-z0-9_]+)+)/g)) {
    for (const n of m[1].split("\\n")) if (n) names.add(n)
  }
  for (const m of text.matchAll(/Deferred tools:((?:\\n[A-Za-z0-9_-]+)+)/g)) {
    for (const n of m[1].split("\\n")) if (n) names.add(n)
  }
  return names
}

/**
 * What the model can see of the Link tools in one request: `callable` (canonical → tool to
 * call) and `deferred` (canonical → host name that needs a ToolSearch first).
 */
export function linkSurface(conversation, body, naming) {
  const callable = new Map()
  const deferred = new Map()
  const referenced = new Set(conversation.referenced)
  for (const t of conversation.tools) {
    const c = canonicalOf(t, naming)
    if (!c) continue
    if (!t.deferred || referenced.has(t.name)) callable.set(c, { tool: t.name, namespace: t.namespace })
    else deferred.set(c, t.name)
  }
  for (const name of announcedDeferred(body)) {
    const c = canonicalOf({ name }, naming)
    if (c && !callable.has(c)) deferred.set(c, name)
  }
  return { callable, deferred }
}

/** The shell tool call for a host API (or the route's own shell tool and its input). */
function shellCall(api, command, naming) {
  if (naming.shellInput) return { tool: naming.shell, input: naming.shellInput(command) }
  if (naming.shell) return { tool: naming.shell, input: { command, description: "run a command" } }
  if (api === "anthropic") return { tool: "Bash", input: { command, description: "run a command" } }
  if (api === "responses") return { tool: "exec_command", input: { cmd: command } }
  return { tool: "bash", input: { command, description: "run a command" } }
}

const isSearch = (call) => call.name === "ToolSearch"

/**
 * A `decide` function for the model server. `goals` are `{link: "activate"|"start"|"peers"|
 * "send"|"close", args?, via?}` or `{bash: "command"}`, played in order; then the model answers
 * "done". `via: "gateway"` plays a Link goal through the gateway's `action` even when the host
 * offers its Tier 1 tool (a model that only ever reads the gateway). A goal
 * with `before: () => Promise` is held until that promise settles (to interleave two hosts).
 * Requests without tools (title generation and other side requests) get plain text.
 */
export function playGoals(goals, naming) {
  return (conversation, body) => {
    if (conversation.tools.length === 0) return { text: "Herdr Link session" }
    // A side request offering tools of its own (Qwen Code's structured `respond_in_schema`)
    // but not the host's shell tool: not a step of the goals.
    const shell = shellCall(conversation.api, "", naming).tool
    if (!conversation.tools.some((t) => t.name === shell)) {
      // Qwen Code's auto approval mode asks the model itself whether a shell command may run:
      // the scripted model lets every command through (the guard is what is under test).
      if (conversation.tools.some((t) => t.name === "respond_in_schema")) return { tool: "respond_in_schema", input: { shouldBlock: false } }
      return { text: "Herdr Link session" }
    }
    const made = conversation.calls.filter((c) => !isSearch(c))
    const goal = goals[made.length]
    if (!goal) return { text: "done" }
    if (goal.before) return Promise.resolve(goal.before()).then(() => decideGoal(goal, conversation, body, made))
    return decideGoal(goal, conversation, body, made)
  }

  function decideGoal(goal, conversation, body, made) {
    if (goal.bash !== undefined) return shellCall(conversation.api, goal.bash, naming)
    const { callable, deferred } = linkSurface(conversation, body, naming)
    const last = conversation.calls.at(-1)
    const searched = (name) => last && isSearch(last) && String(last.input?.query ?? "").includes(name)
    const via = (canonical, input) => {
      const t = callable.get(canonical)
      return { tool: t.tool, namespace: t.namespace, input }
    }
    const load = (name) => ({ tool: "ToolSearch", input: { query: `select:${name}`, max_results: 5 } })
    if (goal.link !== "activate" && goal.via !== "gateway") {
      const tier1 = `herdr_link_${goal.link}`
      if (callable.has(tier1)) return via(tier1, goal.args ?? {})
      if (deferred.has(tier1) && !searched(deferred.get(tier1))) return load(deferred.get(tier1))
    }
    if (!callable.has("herdr_link")) {
      if (deferred.has("herdr_link") && !searched(deferred.get("herdr_link"))) return load(deferred.get("herdr_link"))
      return { text: `scripted model: the herdr_link gateway is not available (goal ${made.length})` }
    }
    if (goal.link === "activate") return via("herdr_link", {})
    return via("herdr_link", { action: goal.link, arguments: goal.args ?? {} })
  }
}

/**
 * The goals as played: each with the call that carried it (`style` "tier1", "gateway" or
 * "shell"), its output and error flag. Read from the request that holds the most calls.
 */
export function trace(requests, goals, naming) {
  const convs = requests.map((r) => r.conversation).filter((c) => c && c.tools.length)
  const longest = convs.reduce((a, c) => (c.calls.length >= (a?.calls.length ?? -1) ? c : a), undefined)
  const made = (longest?.calls ?? []).filter((c) => !isSearch(c))
  return goals.map((goal, i) => {
    const call = made[i]
    if (!call) return { goal, missing: true }
    const canonical = canonicalOf(call, naming)
    const style = goal.bash !== undefined ? "shell" : canonical === "herdr_link" ? "gateway" : canonical ? "tier1" : "other"
    return { goal, style, name: call.name, input: call.input, output: call.output, isError: call.isError }
  })
}

/** Every string inside a JSON value, joined (for searching what the model received). */
export function strings(value) {
  const out = []
  const walk = (v) => {
    if (typeof v === "string") out.push(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === "object") Object.values(v).forEach(walk)
  }
  walk(value)
  return out.join("\n")
}
