// One end-to-end run: a sandbox and fake Herdr world, the scripted model playing `goals`, one
// real host process on a route from hosts.mjs, then every record a test asserts on.

import assert from "node:assert/strict"
import { startModel } from "./model.mjs"
import { linkSurface, playGoals, strings, trace } from "./script.mjs"
import { Sandbox, assertLoopbackOnly, contractText, rawIds } from "./sandbox.mjs"

/** Per-run time limit for one host process. */
export const RUN_LIMIT_MS = Number(process.env.HERDR_E2E_RUN_LIMIT_MS || 240_000)

/**
 * The standard world: workspace 1 holds the host itself ("brain", pane w1:p1, the host's kind)
 * and "worker"; workspace 2 holds "stranger".
 */
export function standardWorld(sb, kind) {
  const world = projectWorld(sb, [
    { agent: kind, name: "brain", status: "working" },
    { agent: "pi", name: "worker", status: "idle" },
  ])
  world.workspaces.push({ cwd: "/elsewhere", tabs: [{ panes: [{ cwd: "/elsewhere", agent: "pi", name: "stranger", status: "idle" }] }] })
  return world
}

/** One workspace in the project with one tab holding `panes` (each in the project directory). */
export function projectWorld(sb, panes) {
  return { workspaces: [{ cwd: sb.project, tabs: [{ panes: panes.map((p) => ({ cwd: sb.project, ...p })) }] }] }
}

/** The parsed JSON result inside a tool output (Codex prefixes "Wall time…\nOutput:"). */
export function jsonOf(output) {
  const text = String(output ?? "").trim()
  for (const candidate of [text, ...text.split("\n").reverse()]) {
    try {
      return JSON.parse(candidate)
    } catch {}
  }
  return undefined
}

/**
 * Runs `route` with the scripted model playing `goals`. Options: `world` (sandbox → world JSON),
 * `sandbox`, `overrides`, `ids` (to share another
 * run's world), `prompt`. Returns {sb, model, result, steps, requests}. The caller must call `done()` (tears everything down and checks that no
 * process of the run survived).
 */
export async function runRoute(route, goals, opts = {}) {
  const { world, prompt = "Use Herdr: talk to the worker agent." } = opts
  const sb = opts.sandbox ?? new Sandbox(route.name)
  Object.assign(sb.overrides, opts.overrides ?? {})
  // `world: null` runs in another run's world (`ids` gives its ids).
  if (world === null) sb.ids = opts.ids()
  else sb.world(world ? world(sb) : standardWorld(sb, route.agentKind))
  const model = await startModel(playGoals(goals, route.naming))
  let host, result
  try {
    host = route.setup(sb, model)
    result = await sb.run(host.cmd, host.args(prompt), { env: host.env, timeoutMs: RUN_LIMIT_MS })
    // What the host leaves running on purpose (Cline's hub daemon) is stopped here, by pid.
    host.afterRun?.()
  } catch (e) {
    // A failed setup or run still closes the model server: an open one keeps the test file's
    // process alive, and the files after it never run.
    await model.close()
    sb.cleanup()
    throw e
  }
  const steps = trace(model.requests, goals, route.naming)
  const run = {
    sb,
    model,
    result,
    steps,
    requests: model.requests,
    async done() {
      await model.close()
      if (process.env.HERDR_E2E_KEEP === "1") {
        sb.file("requests.jsonl", model.requests.map((r) => JSON.stringify({ path: r.path, body: r.body, decision: r.decision })).join("\n"))
      }
      const left = sb.leftovers()
      sb.cleanup()
      assert.deepEqual(left, [], `processes of the ${route.name} run survived its teardown: ${left.join(", ")}`)
    },
    /** A readable summary for assertion messages. */
    describe() {
      const lines = steps.map((s, i) => `  ${i}: ${JSON.stringify(s.goal)} -> ${s.missing ? "MISSING" : `${s.style} ${s.name} ${JSON.stringify(s.input)} => ${String(s.output).slice(0, 300)}`}`)
      return [
        `${route.name}: exit ${result.code} signal ${result.signal} timedOut ${result.timedOut}`,
        ...lines,
        `requests: ${model.requests.map((r) => r.path + (r.decision ? " -> " + JSON.stringify(r.decision).slice(0, 120) : "")).join("\n  ")}`,
        `stderr: ${result.stderr.slice(-1500)}`,
        `stdout: ${result.stdout.slice(-1500)}`,
      ].join("\n")
    },
  }
  return run
}

/** Checks every run must pass: finished in time, loopback only, all goals played, no raw ids. */
export function assertRunHealthy(run) {
  const { result } = run
  assert.equal(result.timedOut, false, `the host run hit the time limit\n${run.describe()}`)
  assert.equal(result.code, 0, `the host exited with ${result.code}\n${run.describe()}`)
  assertLoopbackOnly(result.sockets)
  assert.ok(result.sockets.length > 0, "the socket watch saw no connection at all (it cannot be working)")
  for (const [i, s] of run.steps.entries()) assert.ok(!s.missing, `goal ${i} (${JSON.stringify(s.goal)}) was never played\n${run.describe()}`)
  const errors = run.requests.filter((r) => r.error)
  assert.deepEqual(errors.map((r) => r.error), [], "the scripted model failed on a request")
  assert.ok(run.sb.ids.includes("w1:p1"), `world ids: ${run.sb.ids}`)
  for (const r of run.requests) {
    const ids = rawIds(r.raw, run.sb.ids)
    assert.deepEqual(ids, [], `a raw Herdr id reached the model in ${r.path}: ${ids.join(", ")}`)
  }
}

/** Index of the first request whose conversation already holds the activation result. */
export function activationIndex(run, naming) {
  return run.requests.findIndex((r) => r.conversation && r.conversation.calls.some((c) => c.name !== "ToolSearch" && isGateway(c, naming) && Object.keys(c.input ?? {}).length === 0))
}

function isGateway(call, naming) {
  if (naming.namespace) return call.namespace === naming.namespace && call.name === "herdr_link"
  return call.name === `${naming.prefix}herdr_link`
}

/** Does the Contract (PROTOCOL.md §3) appear in what this request gave the model? */
export function holdsContract(request) {
  const contract = contractText()
  const text = strings(request.body)
  return text.includes(contract) || text.includes(JSON.stringify(contract).slice(1, -1))
}

/**
 * What the host offered at each goal of a run, read from the requests that decided it (those
 * whose conversation already held exactly that many Link or shell calls): `shown` when any
 * Tier 1 tool was offered (callable or deferred), `tier1` when the goal's own Tier 1 tool was
 * callable in the request whose answer carried the goal. When the host refreshes its tool list
 * after `tools/list_changed` races the next model request, so tests assert on these facts and
 * never on a fixed step.
 */
export function exposure(run, naming) {
  const isSearch = (c) => c.name === "ToolSearch"
  return run.steps.map((step, i) => {
    const at = run.requests.filter((r) => r.conversation?.tools.length && r.conversation.calls.filter((c) => !isSearch(c)).length === i)
    let shown = false
    for (const r of at) {
      const { callable, deferred } = linkSurface(r.conversation, r.body, naming)
      if ([...callable.keys(), ...deferred.keys()].some((c) => c !== "herdr_link")) shown = true
    }
    const carrier = at.filter((r) => r.decision && "tool" in r.decision && r.decision.tool !== "ToolSearch").at(-1)
    let tier1 = false
    if (carrier && step.goal.link && step.goal.link !== "activate") {
      tier1 = linkSurface(carrier.conversation, carrier.body, naming).callable.has(`herdr_link_${step.goal.link}`)
    }
    return { shown, tier1, carried: Boolean(carrier) }
  })
}
