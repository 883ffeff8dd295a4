// The Link flow in each real host, driven by the scripted model (issue 11): dormant → activate
// → peers → send → send outside the workspace → close. Run through run.sh.

import assert from "node:assert/strict"
import { test } from "node:test"
import { activationIndex, assertRunHealthy, exposure, holdsContract, jsonOf, runRoute } from "./lib/e2e.mjs"
import { PINNED, claude, claudeInline, codex, codexWorkspaceWrite, gemini, opencodeMcp, opencodePlugin, qwen } from "./lib/hosts.mjs"
import { linkSurface, strings } from "./lib/script.mjs"
import { tier1Tools } from "./lib/surface.mjs"
import { IN_NETNS, Sandbox, assertLoopbackOnly, interfaces } from "./lib/sandbox.mjs"

const MESSAGE = "Please review the design in docs/design.md."

export const LINK_FLOW = [
  { link: "activate" },
  { link: "peers" },
  { link: "send", args: { to: "worker", message: MESSAGE } },
  { link: "send", args: { to: "stranger", message: "Are you there?" } },
  { link: "close", args: { agent: "worker" } },
]

/**
 * What each pinned host version guarantees about the Tier 1 tools after activation
 * (`notifications/tools/list_changed`): `tier1By` is the latest goal of LINK_FLOW at which the
 * host has shown them (null: never shown). Which step first sees them is a race between the
 * host refreshing its tool list and the next model request, so the tests bound it and print the
 * observed sequence; they never pin it. A new pinned version must be run and recorded here.
 */
const EXPOSURE = {
  // deferred behind ToolSearch: the gateway, then each Tier 1 tool is loaded once
  claude: { version: PINNED["@anthropic-ai/claude-code"], tier1By: { "2.1.332": 3 }, toolSearch: true },
  "claude-inline": { version: PINNED["@anthropic-ai/claude-code"], tier1By: { "2.1.332": 3 } },
  // Codex ignores list_changed
  codex: { version: PINNED["@openai/codex"], tier1By: { "0.171.0": null } },
  "codex-workspace-write": { version: PINNED["@openai/codex"], tier1By: { "0.171.0": null } },
  "opencode-mcp": { version: PINNED["opencode-linux-x64"], tier1By: { "1.18.33": 3 } },
  // the plugin is single-gateway by design, whatever the version
  "opencode-plugin": { version: PINNED["opencode-linux-x64"], tier1By: { "1.18.33": null } },
  // Gemini CLI re-lists the tools on list_changed (docs/hosts-gemini-qwen.md)
  gemini: { version: PINNED["@google/gemini-cli"], tier1By: { "0.61.0": 3 } },
  // Qwen Code's MCP client has no list_changed handler
  qwen: { version: PINNED["@qwen-code/qwen-code"], tier1By: { "0.24.4": null } },
}

/**
 * Asserts what the host guarantees about the tools of each step, and returns the observed
 * sequence: activation through the gateway; every later goal through its Tier 1 tool exactly
 * when the host offered it callable at that step, through the gateway's dispatch otherwise;
 * a host that shows Tier 1 at all shows it by goal `tier1By` and never takes it back.
 */
function assertExposure(run, route) {
  const { steps } = run
  const exp = EXPOSURE[route.name]
  const bound = exp.tier1By[exp.version]
  assert.ok(bound !== undefined, `${route.name} ${exp.version}: no recorded tool exposure for this version; run it and record it in EXPOSURE`)
  const seen = exposure(run, route.naming)
  const styles = steps.map((s) => s.style)
  const observed = steps.map((s, i) => `${s.goal.link}=${s.style}${seen[i].shown ? "" : "(no tier1 offered)"}`).join(" ")
  const where = `${observed}\n${run.describe()}`
  assert.equal(styles[0], "gateway", `activation goes through the gateway: ${where}`)
  for (const [i, s] of steps.entries()) {
    assert.ok(seen[i].carried, `no request carried goal ${i}: ${where}`)
    if (i > 0) assert.equal(s.style, seen[i].tier1 ? "tier1" : "gateway", `goal ${i} did not take the road the host offered: ${where}`)
  }
  const first = seen.findIndex((e) => e.shown)
  if (bound === null) {
    assert.equal(first, -1, `${route.name} showed Tier 1 tools: ${where}`)
    assert.deepEqual(new Set(styles), new Set(["gateway"]), where)
  } else {
    assert.ok(first > 0 && first <= bound, `Tier 1 not shown by goal ${bound}: ${where}`)
    for (let i = first; i < steps.length; i++) assert.ok(seen[i].shown, `the host took Tier 1 back at goal ${i}: ${where}`)
    for (let i = first + 1; i < steps.length; i++) assert.equal(styles[i], "tier1", `goal ${i} after Tier 1 was shown: ${where}`)
  }
  // Claude Code defers every Link tool: each one the flow used is loaded exactly once.
  const searches = Math.max(...run.requests.map((r) => r.conversation?.calls.filter((c) => c.name === "ToolSearch").length ?? 0))
  const loaded = exp.toolSearch ? new Set(steps.map((s) => s.name)).size : 0
  assert.equal(searches, loaded, `ToolSearch calls: ${where}`)
  console.log(`# ${route.name} ${exp.version}: ${observed}`)
}

test("the runs are isolated from the network, and an outside attempt is caught", async () => {
  if (IN_NETNS) assert.deepEqual(interfaces(), ["lo"], "run.sh's network namespace must hold only lo")
  else console.log("# not in a fresh network namespace (unshare unavailable): sockets are still watched")
  // Inside the namespace the socket watch must see an attempt to reach anything else
  // (TEST-NET-2 here: its SYN waits on `lo` until the run is killed).
  if (!IN_NETNS) return
  const sb = new Sandbox("watch")
  try {
    const probe = 'require("net").connect(443, "198.51.100.7").on("error", () => {}); setTimeout(() => {}, 5000)'
    const r = await sb.run(process.execPath, ["-e", probe], { timeoutMs: 1500 })
    assert.ok(r.sockets.some((s) => s.includes("198.51.100.7:443")), `the watch missed it: ${r.sockets}`)
    assert.throws(() => assertLoopbackOnly(r.sockets), /other than 127\.0\.0\.1/)
  } finally {
    sb.cleanup()
  }
})

/** What the MCP appendix says in each MCP route, and what it must not say there. */
const HOST_FORM = {
  claude: { says: "herdr_link_send -> mcp__herdr_link__herdr_link_send", never: ["herdr_link_send -> herdr_link_herdr_link_send"] },
  "claude-inline": { says: "herdr_link_send -> mcp__herdr_link__herdr_link_send", never: ["herdr_link_send -> herdr_link_herdr_link_send"] },
  codex: { says: "the tools sit in the namespace mcp__herdr_link", never: ["herdr_link_send -> mcp__", "(for example mcp__herdr_link__"] },
  "opencode-mcp": { says: "herdr_link_send -> herdr_link_herdr_link_send", never: ["herdr_link_send -> mcp__"] },
  gemini: { says: "herdr_link_send -> mcp_herdr_link_herdr_link_send", never: ["herdr_link_send -> mcp__", "herdr_link_send -> herdr_link_herdr_link_send"] },
  qwen: { says: "call mcp__herdr_link__herdr_link with action start, send, peers or close", never: ["herdr_link_send -> ", "(for example mcp__herdr_link__"] },
}

const ONLY = process.env.HERDR_E2E_ONLY?.split(",")

for (const route of [claude, claudeInline, codex, codexWorkspaceWrite, opencodeMcp, opencodePlugin, gemini, qwen].filter((r) => !ONLY || ONLY.includes(r.name))) {
  test(`${route.name}: the Link flow in the real host`, async () => {
    // Herdr submits a prompt 300 ms after typing it, and closing the receiver first would
    // lose it (real Herdr too): the close goal waits until the send's submission is in
    // (`herdr fake prompts` waits for pending Enters), so the delivery asserted below never
    // races the host's next step.
    const sb = new Sandbox(route.name)
    const goals = LINK_FLOW.map((g) => (g.link === "close" ? { ...g, before: () => sb.prompts() } : g))
    const run = await runRoute(route, goals, { sandbox: sb })
    try {
      assertRunHealthy(run)
      const { steps, sb } = run

      // Dormant: before activation the model is offered the gateway and nothing else.
      const act = activationIndex(run, route.naming)
      assert.ok(act > 0, `no request after activation\n${run.describe()}`)
      const before = run.requests.slice(0, act).filter((r) => r.conversation?.tools.length)
      assert.ok(before.length > 0, "no dormant request with tools")
      for (const r of before) {
        const { callable, deferred } = linkSurface(r.conversation, r.body, route.naming)
        const offered = [...new Set([...callable.keys(), ...deferred.keys()])].sort()
        assert.deepEqual(offered, ["herdr_link"], `dormant ${route.name} offered ${offered}`)
        assert.ok(!holdsContract(r), "the Contract reached the model before activation")
      }

      // The gateway {} activates.
      assert.deepEqual(jsonOf(steps[0].output), { status: "active", capabilities: ["start", "peers", "send", "close"] }, run.describe())

      // The Contract reaches the model after activation.
      const after = run.requests.slice(act)
      const contractSeen = after.some(holdsContract)
      // (MCP routes: the activation result and the active gateway; the plugin: the system prompt)
      assert.ok(contractSeen, `the Contract never reached the model after activation\n${run.describe()}`)
      // From the activating step on: the very first request after the gateway call holds it.
      assert.ok(holdsContract(run.requests[act]), `the first request after activation holds no Contract\n${run.describe()}`)
      // MCP routes: the appendix names the tools as this host shows them (from initialize's
      // clientInfo), never another host's form.
      const form = HOST_FORM[route.name]
      if (form) {
        const text = strings(run.requests[act].body)
        const appendix = text.slice(text.indexOf("Herdr Link starts dormant"), text.indexOf("Herdr Link starts dormant") + 1200)
        assert.ok(text.includes(form.says), `${route.name}: the appendix does not say ${JSON.stringify(form.says)}; it says:\n${appendix}\n${run.describe()}`)
        for (const wrong of form.never) assert.ok(!text.includes(wrong), `${route.name}: the appendix says ${JSON.stringify(wrong)}`)
      }
      if (route === opencodePlugin) {
        // Single gateway: tiny while dormant; every action's semantics arrive with activation,
        // in the system prompt.
        const gatewayText = (r) => JSON.stringify(r.body.tools.find((t) => t.function?.name === "herdr_link"))
        for (const r of before) assert.doesNotMatch(gatewayText(r), /config_agent/, "the dormant gateway carries per-action arguments")
        const system = run.requests.at(-1).conversation.system
        for (const action of ["start", "peers", "send", "close"]) assert.match(system, new RegExp(`action "${action}"`), `no "${action}" semantics in the active system prompt`)
        assert.match(system, /config_agent/)
      }

      // Peers: same-workspace only.
      const peers = jsonOf(steps[1].output)
      assert.equal(peers?.self?.name, "brain", run.describe())
      assert.deepEqual(peers.peers.map((p) => p.name), ["worker"], run.describe())

      // Send reaches the peer: the wrapper and the envelope are in the fake Herdr's prompt log.
      const sent = jsonOf(steps[2].output)
      assert.equal(sent?.status, "sent", run.describe())
      assert.equal(sent.to, "worker")
      const prompts = sb.prompts()
      assert.equal(prompts.length, 1, `prompts: ${JSON.stringify(prompts)}`)
      assert.equal(prompts[0].name, "worker")
      const lines = prompts[0].text.split("\n")
      assert.ok(lines[0].startsWith("[herdr-link/1]"), prompts[0].text)
      assert.deepEqual(JSON.parse(lines.at(-1)), { protocol: "herdr-link/1", id: sent.id, from: "brain", to: "worker", message: MESSAGE })

      // A send to another workspace's agent is PEER_NOT_FOUND, and nothing is delivered.
      assert.match(String(steps[3].output), /PEER_NOT_FOUND/, run.describe())
      assert.equal(jsonOf(steps[3].output)?.status, undefined)

      // Close closes.
      assert.deepEqual(jsonOf(steps[4].output), { status: "closed", agent: "worker" }, run.describe())
      assert.ok(sb.argvLog().some((a) => a[0] === "pane" && a[1] === "close"), `no pane close in ${JSON.stringify(sb.argvLog())}`)

      // Tier 1 tools or gateway dispatch, whichever the host offered at each step.
      assertExposure(run, route)
    } finally {
      await run.done()
    }
  })
}

// A model that only ever sees the gateway (Codex and Qwen Code never show Tier 1; Claude Code defers it): the
// request that follows activation must give it every action's inputs and rules, and a start, a
// send and a close made only through `herdr_link {"action":…}` with exactly those inputs work.
const GATEWAY_ONLY = [
  { link: "activate" },
  { link: "start", via: "gateway", args: { name: "helper", kind: "pi", args: [] } },
  { link: "send", via: "gateway", args: { to: "helper", message: MESSAGE } },
  { link: "close", via: "gateway", args: { agent: "helper" } },
]

/** The entry of `action` in the gateway's action reference within `text`, or undefined. */
function actionEntry(text, action, tool) {
  const head = `\n- action "${action}" (${tool}): `
  const at = text.indexOf(head)
  if (at < 0) return undefined
  const rest = text.slice(at + head.length)
  const end = rest.search(/\n- action "|\n[^ \n]/)
  return end < 0 ? rest : rest.slice(0, end)
}

const TIER1 = await tier1Tools()
const ACTION_OF = { herdr_link_start: "start", herdr_link_peers: "peers", herdr_link_send: "send", herdr_link_close: "close" }

for (const route of [claude, codex, codexWorkspaceWrite, qwen].filter((r) => !ONLY || ONLY.includes(r.name))) {
  test(`${route.name}: the gateway alone carries every action, and a start, a send and a close through it work`, async () => {
    const sb = new Sandbox(`${route.name}-gw`)
    const goals = GATEWAY_ONLY.map((g) => (g.link === "close" ? { ...g, before: () => sb.prompts() } : g))
    const run = await runRoute(route, goals, { sandbox: sb })
    try {
      assertRunHealthy(run)
      const d = run.describe()
      assert.deepEqual(run.steps.map((s) => s.style), ["gateway", "gateway", "gateway", "gateway"], d)

      // What the model holds right after activation: for each action, every input field of the
      // Tier 1 schema the server lists, with its type and whether it is required, its
      // description, and the tool's own description (its rules and its result).
      const act = activationIndex(run, route.naming)
      const text = strings(run.requests[act].body)
      for (const tool of TIER1) {
        const action = ACTION_OF[tool.name]
        const entry = actionEntry(text, action, tool.name)
        assert.ok(entry, `${route.name}: no entry for action ${action} after activation\n${d}`)
        const props = tool.inputSchema.properties ?? {}
        const required = tool.inputSchema.required ?? []
        for (const [key, p] of Object.entries(props)) {
          const type = p.type === "array" ? `array of ${p.items.type}s` : p.type
          const line = `\n    ${key} (${type}, ${required.includes(key) ? "required" : "optional"}`
          assert.ok(entry.includes(line), `${route.name} ${action}: no ${JSON.stringify(line)} in\n${entry}`)
          assert.ok(entry.includes(p.description), `${route.name} ${action}.${key}: description missing`)
        }
        // The Tier 1 description without the sentence MCP adds to every Tier 1 tool.
        const own = tool.description.slice(0, tool.description.indexOf(" For normal inter-agent messaging"))
        assert.ok(own.length > 0 && entry.startsWith(own), `${route.name} ${action}: the tool's description is not the entry's\n${entry}`)
        assert.match(entry, /Result: \{/, `${route.name} ${action}: no result`)
      }
      const start = actionEntry(text, "start", "herdr_link_start")
      for (const rule of ["exactly one launch source", "kind and args together", "config_agent never goes with kind or args", "with and cwd never go together"]) {
        assert.ok(start.includes(rule), `${route.name}: start rule ${JSON.stringify(rule)} missing`)
      }
      assert.match(actionEntry(text, "send", "herdr_link_send"), /At most 128,000 bytes as the message envelope encodes it/)
      assert.match(actionEntry(text, "close", "herdr_link_close"), /caller owns the lifecycle decision/)

      // Start, send and close through the gateway alone, with exactly those inputs.
      const [, started, sent, closed] = run.steps
      assert.deepEqual(jsonOf(started.output), { status: "started", agent: "helper", kind: "pi" }, d)
      assert.ok(sb.argvLog().some((a) => a[0] === "agent" && a[1] === "start" && a[2] === "helper"), JSON.stringify(sb.argvLog()))
      assert.equal(jsonOf(sent.output)?.status, "sent", d)
      const prompts = sb.prompts()
      assert.deepEqual(prompts.map((p) => p.name), ["helper"], JSON.stringify(prompts))
      assert.equal(JSON.parse(prompts[0].text.split("\n").at(-1)).message, MESSAGE)
      assert.deepEqual(jsonOf(closed.output), { status: "closed", agent: "helper" }, d)
      assert.ok(sb.argvLog().some((a) => a[0] === "pane" && a[1] === "close"), JSON.stringify(sb.argvLog()))
    } finally {
      await run.done()
    }
  })
}
