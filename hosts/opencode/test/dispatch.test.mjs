// Each gateway action, driven like OpenCode, reaching the fake Herdr.
import assert from "node:assert/strict"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { test } from "node:test"
import { callJson, initPlugin, setupWorld } from "./harness.mjs"

/** brain (us) and worker in w1, a named shell-less "tester" in w1 too, "outsider" in w2. */
function peersWorld(cwd) {
  return {
    workspaces: [
      {
        cwd,
        tabs: [
          {
            panes: [
              { agent: "opencode", name: "brain", status: "idle" },
              { agent: "pi", name: "worker", status: "working" },
            ],
          },
          { panes: [{ agent: "claude", name: "tester", status: "blocked" }, {}] },
        ],
      },
      { cwd, tabs: [{ panes: [{ agent: "pi", name: "outsider" }] }] },
    ],
  }
}

test("action peers lists the live same-workspace agents", async () => {
  const world = setupWorld(peersWorld("/tmp"))
  const hooks = await initPlugin(world.dir)
  const res = await callJson(hooks, { action: "peers" }, { sessionID: "s_peers", directory: world.dir })
  assert.equal(res.self.name, "brain")
  const names = res.peers.map((p) => p.name).sort()
  assert.deepEqual(names, ["tester", "worker"], "outsider (other workspace) and the shell pane are left out")
  const worker = res.peers.find((p) => p.name === "worker")
  assert.equal(worker.state, "working")
  assert.ok(world.calls().some((a) => a.join(" ") === "agent list"), "asked Herdr for the agent list")
})

test("action send delivers one prompt with the Link envelope", async () => {
  const world = setupWorld()
  const hooks = await initPlugin(world.dir)
  // Controls a terminal would act on travel escaped; JSON.parse gives back exactly what was sent.
  const message = "hello from opencode: keep A\u007f\u007f\u007fB intact \u0085\u009b2J \u2028\u2029 \u0000 end"
  const res = await callJson(
    hooks,
    { action: "send", arguments: { to: "worker", message } },
    { sessionID: "s_send", directory: world.dir },
  )
  assert.equal(res.status, "sent")
  assert.equal(res.to, "worker")
  assert.match(res.id, /^hl_/)

  const prompts = world.prompts()
  assert.equal(prompts.length, 1)
  assert.equal(prompts[0].pane_id, "w1:p2")
  const lines = prompts[0].text.split("\n")
  assert.match(lines[0], /^\[herdr-link\/1\]/)
  assert.doesNotMatch(prompts[0].text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/)
  const envelope = JSON.parse(lines.at(-1))
  assert.deepEqual(
    { from: envelope.from, to: envelope.to, message: envelope.message, id: envelope.id },
    { from: "brain", to: "worker", message, id: res.id },
  )
})

test("action start (explicit) creates a new tab in the context directory and starts the agent", async () => {
  const world = setupWorld()
  const project = join(world.dir, "project")
  mkdirSync(project)
  const hooks = await initPlugin(world.dir)
  const res = await callJson(
    hooks,
    { action: "start", arguments: { name: "helper", kind: "pi", args: ["--model", "m1"] } },
    { sessionID: "s_start", directory: project },
  )
  assert.deepEqual(res, { status: "started", agent: "helper", kind: "pi" })

  const calls = world.calls().map((a) => a.join(" "))
  const tabCreate = calls.find((c) => c.startsWith("tab create"))
  assert.equal(tabCreate, `tab create --workspace w1 --cwd ${project} --no-focus`)
  const start = calls.find((c) => c.startsWith("agent start"))
  const startMatch = /^agent start helper --kind pi --pane (w1:p\d+) -- --model m1$/.exec(start ?? "")
  assert.ok(startMatch, `agent start argv: ${start}`)

  const tabs = world.world().workspaces[0].tabs
  assert.equal(tabs.length, 2, "a second tab exists")
  const pane = tabs[1].panes.find((p) => p.name === "helper")
  assert.ok(pane, "the new tab holds the helper agent")
  assert.equal(pane.process, "pi")
  assert.equal(pane.cwd, project)
  assert.equal(startMatch[1], pane.id, "started in the new tab's root pane")
})

test("action start (configured) finds .agents/agent_config.json through context.directory", async () => {
  const world = setupWorld()
  const project = join(world.dir, "configured")
  mkdirSync(join(project, ".agents"), { recursive: true })
  writeFileSync(
    join(project, ".agents", "agent_config.json"),
    JSON.stringify({
      agents: {
        reviewer: {
          placement: { mode: "new_tab", label: "review" },
          variants: [{ kind: "pi", args: ["--thinking", "high"] }],
        },
      },
    }),
  )
  const hooks = await initPlugin(world.dir)

  // Same call from a directory without the config file: the library cannot find it.
  await assert.rejects(
    callJson(hooks, { action: "start", arguments: { name: "rev1", config_agent: "reviewer" } }, { sessionID: "s_cfg", directory: world.dir }),
    (err) => {
      assert.match(err.message, /^START_CONFIG_NOT_FOUND: /)
      return true
    },
  )

  const res = await callJson(
    hooks,
    { action: "start", arguments: { name: "rev1", config_agent: "reviewer" } },
    { sessionID: "s_cfg", directory: project },
  )
  assert.deepEqual(res, { status: "started", agent: "rev1", kind: "pi" })
  const calls = world.calls().map((a) => a.join(" "))
  assert.ok(calls.includes(`tab create --workspace w1 --cwd ${project} --label review --no-focus`), calls.join("\n"))
  assert.ok(calls.some((c) => /^agent start rev1 --kind pi --pane w1:p\d+ -- --thinking high$/.test(c)), calls.join("\n"))
})

test("action close closes the named agent's live pane", async () => {
  // worker sits behind two shell panes, so its pane is w1:p4, not the next id after ours.
  const world = setupWorld({
    workspaces: [
      { cwd: "/tmp", tabs: [{ panes: [{ agent: "opencode", name: "brain" }, {}, {}, { agent: "pi", name: "worker" }] }] },
    ],
  })
  const hooks = await initPlugin(world.dir)
  const res = await callJson(hooks, { action: "close", arguments: { agent: "worker" } }, { sessionID: "s_close", directory: world.dir })
  assert.deepEqual(res, { status: "closed", agent: "worker" })
  const closes = world.calls().filter((a) => a[0] === "pane" && a[1] === "close")
  assert.deepEqual(closes, [["pane", "close", "w1:p4"]])
  const panes = world.world().workspaces.flatMap((w) => w.tabs.flatMap((t) => t.panes))
  assert.deepEqual(panes.map((p) => p.id), ["w1:p1", "w1:p2", "w1:p3"], "only worker's pane is gone")
  assert.equal(world.prompts().length, 0, "closing sends no message")
})

test("parallel tool calls of one session all complete (library calls run off the JS thread)", async () => {
  const world = setupWorld()
  const hooks = await initPlugin(world.dir)
  const o = { sessionID: "s_parallel", directory: world.dir }
  const results = await Promise.all([
    callJson(hooks, { action: "peers" }, o),
    callJson(hooks, { action: "send", arguments: { to: "worker", message: "one" } }, o),
    callJson(hooks, { action: "send", arguments: { to: "worker", message: "two" } }, o),
    callJson(hooks, {}, o),
  ])
  assert.deepEqual(results[0].peers.map((p) => p.name), ["worker"])
  assert.equal(results[1].status, "sent")
  assert.equal(results[2].status, "sent")
  assert.notEqual(results[1].id, results[2].id)
  assert.equal(results[3].status, "active")
  const messages = world.prompts().map((p) => JSON.parse(p.text.split("\n").at(-1)).message).sort()
  assert.deepEqual(messages, ["one", "two"])
})
