// End-to-end tests of the Pi host glue inside the real Pi coding agent (npm), driven over RPC by
// a scripted model (Pi's faux provider), against the fake Herdr CLI.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PACKAGE_DIR, PiRpc, makeWorld, piCommand, readJsonLines, removeWorlds, requirements } from "./harness.mjs";

const TIER1 = ["herdr_link_start", "herdr_link_peers", "herdr_link_send", "herdr_link_close"];
const GATEWAY = "herdr_link";
const LINK_TOOLS = [GATEWAY, ...TIER1];
const CONTRACT_HEAD = "Herdr Link is the agent channel for the current Herdr workspace.";
const PROBE = "probe_other_extension"; // registered by the scripted model's extension

const WORLD = {
  workspaces: [
    {
      cwd: "/p",
      tabs: [
        {
          panes: [
            { cwd: "/p", agent: "pi", name: "brain", status: "idle" },
            { cwd: "/p", agent: "pi", name: "worker", status: "idle" },
          ],
        },
      ],
    },
  ],
};

function herdrEnv(req) {
  return { HERDR_ENV: "1", HERDR_BIN_PATH: req.fake, HERDR_PANE_ID: "w1:p1" };
}

/** The Contract as the repository's PROTOCOL.md states it: the first ```text block after "## 3.". */
function protocolContract() {
  const lines = readFileSync(join(PACKAGE_DIR, "..", "..", "PROTOCOL.md"), "utf8").split("\n");
  let i = lines.findIndex((line) => line.startsWith("## 3."));
  assert.ok(i >= 0, "PROTOCOL.md has a section 3");
  while (i < lines.length && lines[i].trimEnd() !== "```text") i++;
  const body = [];
  for (i++; i < lines.length; i++) {
    if (lines[i].trimEnd() === "```") return body.join("\n");
    body.push(lines[i]);
  }
  throw new Error("PROTOCOL.md: no Contract block in section 3");
}

/** Model requests logged by the scripted model for the prompt whose script is `script`. */
function requestsFor(dirs, script) {
  const key = JSON.stringify(script);
  return readJsonLines(dirs.modelLog).filter((entry) => JSON.stringify(entry.prompt) === key);
}

function linkTools(tools) {
  return tools.filter((name) => name.startsWith(GATEWAY));
}

let req;
// A missing runtime fails this test (and cancels the rest): nothing is skipped.
test("runtimes are present: Node >= 22.19, Pi from npm, the library, the fake Herdr", () => {
  req = requirements();
  console.log(`# Pi ${req.piVersion} on Node ${process.version}; library ${req.lib}; fake ${req.fake}`);
});
before(() => {
  req ??= requirements();
});
after(() => removeWorlds());

describe("outside Herdr", () => {
  for (const [label, env] of [
    ["no Herdr variables", {}],
    ["HERDR_ENV alone", { HERDR_ENV: "1" }],
  ]) {
    test(`is a no-op with ${label}`, async () => {
      const dirs = makeWorld(req, null);
      const pi = new PiRpc(req, dirs, env);
      try {
        const marker = join(dirs.project, "guard-off");
        const script = [
          { tool: "bash", args: { command: `touch ${marker}; herdr agent wait worker || true` } },
          { text: "done" },
        ];
        const run = await pi.prompt(script);
        const requests = requestsFor(dirs, script);
        assert.equal(requests.length, 2);
        for (const request of requests) {
          assert.deepEqual(linkTools(request.tools), [], "no Link tool is declared");
          assert.ok(request.tools.includes("bash"));
          assert.ok(!request.system.includes(CONTRACT_HEAD), "no Contract");
        }
        assert.equal(run.toolResult("bash").isError, false);
        assert.ok(existsSync(marker), "no Bash guard outside Herdr");
      } finally {
        await pi.close();
      }
    });
  }
});

describe("inside Herdr (fake)", () => {
  let dirs;
  let pi;
  before(() => {
    dirs = makeWorld(req, WORLD);
    // `write` is switched off by the user: activation must not bring it back.
    pi = new PiRpc(req, dirs, herdrEnv(req), { extraArgs: ["--tools", "-write"] });
  });
  after(async () => {
    if (pi) await pi.close();
  });

  let dormant; // the first model request: what a dormant session shows the model

  test("dormant: the gateway is the only active Link tool, no Contract, no Bash guard", async () => {
    const marker = join(dirs.project, "dormant-bash-ran");
    const script = [
      { tool: "bash", args: { command: `touch ${marker} && echo herdr agent wait worker` } },
      { text: "ok" },
    ];
    const run = await pi.prompt(script);
    const requests = requestsFor(dirs, script);
    assert.equal(requests.length, 2);
    dormant = requests[0];
    assert.deepEqual(linkTools(dormant.tools), [GATEWAY]);
    for (const kept of ["read", "bash", "edit", PROBE]) assert.ok(dormant.tools.includes(kept), kept);
    assert.ok(!dormant.tools.includes("write"), "the user's tool selection stands");
    assert.deepEqual(dormant.active, dormant.tools);
    assert.ok(!dormant.system.includes(CONTRACT_HEAD), "no Contract while dormant");
    assert.equal(run.toolResult("bash").isError, false);
    assert.ok(existsSync(marker), "a dormant session never intercepts Bash");
  });

  test("the gateway activates: Tier 1 appended to the active set, in order", async () => {
    const script = [{ tool: GATEWAY, args: {} }, { text: "activated" }];
    const run = await pi.prompt(script);
    const gateway = run.toolResult(GATEWAY);
    assert.equal(gateway.isError, false);
    const result = JSON.parse(gateway.text);
    assert.equal(result.status, "active");
    assert.deepEqual(result.capabilities, ["start", "peers", "send", "close"]);
    assert.deepEqual(gateway.details, result, "details carry the same result");

    const requests = requestsFor(dirs, script);
    assert.equal(requests.length, 2);
    assert.deepEqual(requests[0].tools, dormant.tools, "nothing changes before the gateway runs");
    assert.deepEqual(requests[1].tools, [...dormant.tools, ...TIER1], "additive, order kept");
    assert.deepEqual(requests[1].active, [...dormant.active, ...TIER1]);
  });

  test("a second gateway call changes nothing", async () => {
    const script = [{ tool: GATEWAY, args: {} }, { text: "still active" }];
    const run = await pi.prompt(script);
    assert.equal(JSON.parse(run.toolResult(GATEWAY).text).status, "active");
    const requests = requestsFor(dirs, script);
    assert.deepEqual(requests[1].tools, [...dormant.tools, ...TIER1]);
  });

  test("the gateway never dispatches in Pi: an action given to it is ignored", async () => {
    const argvBefore = readJsonLines(`${dirs.state}.argv.jsonl`).length;
    const script = [
      { tool: GATEWAY, args: { action: "close", arguments: { agent: "worker" } } },
      { text: "ignored" },
    ];
    const run = await pi.prompt(script);
    const gateway = run.toolResult(GATEWAY);
    assert.equal(gateway.isError, false, gateway.text);
    assert.deepEqual(JSON.parse(gateway.text), {
      status: "active",
      capabilities: ["start", "peers", "send", "close"],
    });
    const calls = readJsonLines(`${dirs.state}.argv.jsonl`).slice(argvBefore);
    assert.deepEqual(calls, [], "the gateway made no Herdr call (nothing closed)");
  });

  test("active: the Contract is appended to the system prompt; send reaches Herdr", async () => {
    const message = "hello worker, from the Pi host test";
    const script = [{ tool: "herdr_link_send", args: { to: "worker", message } }, { text: "sent" }];
    const run = await pi.prompt(script);
    const [request] = requestsFor(dirs, script);
    assert.ok(request.system.startsWith(`${dormant.system}\n\n`), "the Contract is appended to Pi's prompt");
    const contract = request.system.slice(dormant.system.length + 2);
    assert.ok(contract.startsWith(`${CONTRACT_HEAD}\n\n1. `), contract);
    assert.equal(contract, protocolContract());

    const send = run.toolResult("herdr_link_send");
    assert.equal(send.isError, false, send.text);
    const receipt = JSON.parse(send.text);
    assert.equal(receipt.status, "sent");
    assert.equal(receipt.to, "worker");
    assert.equal(typeof receipt.id, "string");
    assert.deepEqual(send.details, receipt);

    // The fake's submissions, once the pending Enter is pressed (Herdr submits 300 ms later).
    const listed = spawnSync(req.fake, ["fake", "prompts"], { env: { HERDR_FAKE_STATE: dirs.state }, encoding: "utf8" });
    assert.equal(listed.status, 0, listed.stderr);
    const prompts = JSON.parse(listed.stdout);
    const delivered = prompts.filter((p) => p.text.includes(message));
    assert.equal(delivered.length, 1, JSON.stringify(prompts));
    assert.equal(delivered[0].pane_id, "w1:p2");
  });

  test("errors reach the model as the CODE: reason text", async () => {
    const script = [{ tool: "herdr_link_send", args: { to: "ghost", message: "hi" } }, { text: "noted" }];
    const run = await pi.prompt(script);
    const send = run.toolResult("herdr_link_send");
    assert.equal(send.isError, true);
    assert.equal(send.text, "PEER_NOT_FOUND: target agent is not a live peer");
  });

  test("Bash `herdr agent wait` is blocked before it runs and ends the turn", async () => {
    const marker = join(dirs.project, "wait-ran");
    const argvBefore = readJsonLines(`${dirs.state}.argv.jsonl`).length;
    const script = [
      { tool: "bash", args: { command: `touch ${marker} && herdr agent wait worker` } },
      { text: "the turn should have ended before this" },
    ];
    const run = await pi.prompt(script);
    const bash = run.toolResult("bash");
    assert.equal(bash.isError, true);
    assert.ok(bash.text.length > 0, "the block carries the library's reason");
    assert.ok(!existsSync(marker), "the command never ran");
    assert.equal(requestsFor(dirs, script).length, 1, "no model request after the blocked call");
    const argv = readJsonLines(`${dirs.state}.argv.jsonl`).slice(argvBefore);
    assert.ok(!argv.some((entry) => JSON.stringify(entry).includes("wait")), JSON.stringify(argv));
  });

  test("Bash `herdr agent prompt --wait` is blocked but the turn goes on", async () => {
    const marker = join(dirs.project, "prompt-wait-ran");
    const script = [
      { tool: "bash", args: { command: `touch ${marker} && herdr agent prompt worker hi --wait` } },
      { text: "switching to herdr_link_send" },
    ];
    const run = await pi.prompt(script);
    assert.equal(run.toolResult("bash").isError, true);
    assert.ok(!existsSync(marker), "the command never ran");
    assert.equal(requestsFor(dirs, script).length, 2, "the model keeps its turn");
  });

  test("peers lists the worker; close runs on its own, after its sibling", async () => {
    const script = [
      { tools: [{ tool: "herdr_link_peers" }, { tool: "herdr_link_close", args: { agent: "worker" } }] },
      { text: "closed" },
    ];
    const run = await pi.prompt(script);
    const peers = run.toolResult("herdr_link_peers");
    assert.equal(peers.isError, false, peers.text);
    const directory = JSON.parse(peers.text);
    assert.equal(directory.self.name, "brain");
    assert.deepEqual(directory.peers.map((peer) => peer.name), ["worker"]);

    const close = run.toolResult("herdr_link_close");
    assert.equal(close.isError, false, close.text);
    assert.deepEqual(JSON.parse(close.text), { status: "closed", agent: "worker" });

    // Sequential: no other call of the batch runs while the close runs.
    const order = run.events
      .filter((e) => e.type === "tool_execution_start" || e.type === "tool_execution_end")
      .map((e) => `${e.type === "tool_execution_start" ? "start" : "end"}:${e.toolName}`);
    const closeStart = order.indexOf("start:herdr_link_close");
    assert.equal(order[closeStart + 1], "end:herdr_link_close", order.join(" "));
    assert.ok(order.indexOf("end:herdr_link_peers") < closeStart, order.join(" "));
  });

  test("a new session starts dormant again", async () => {
    const data = await pi.command({ type: "new_session" });
    assert.equal(data.cancelled, false);
    const marker = join(dirs.project, "fresh-bash-ran");
    const script = [
      { tool: "bash", args: { command: `touch ${marker} && echo herdr agent wait worker` } },
      { text: "fresh" },
    ];
    const run = await pi.prompt(script);
    const [request] = requestsFor(dirs, script);
    assert.deepEqual(linkTools(request.tools), [GATEWAY]);
    assert.ok(!request.system.includes(CONTRACT_HEAD), "no Contract in the new session");
    assert.equal(run.toolResult("bash").isError, false);
    assert.ok(existsSync(marker), "the guard is off again");
  });
});

describe("installed with `pi install`", () => {
  test("Pi loads the package from its settings (package.json `pi.extensions`)", async () => {
    const dirs = makeWorld(req, WORLD);
    piCommand(req, dirs, ["install", PACKAGE_DIR]);
    assert.match(piCommand(req, dirs, ["list"]), /hosts\/pi/);
    const pi = new PiRpc(req, dirs, herdrEnv(req), { installed: true });
    try {
      const script = [{ tool: GATEWAY, args: {} }, { text: "activated" }];
      const run = await pi.prompt(script);
      const requests = requestsFor(dirs, script);
      assert.deepEqual(linkTools(requests[0].tools), [GATEWAY]);
      assert.equal(JSON.parse(run.toolResult(GATEWAY).text).status, "active");
      assert.deepEqual(linkTools(requests[1].tools), LINK_TOOLS);
    } finally {
      await pi.close();
    }
  });
});

describe("packaged with pack.sh: no checkout, no HERDR_LINK_LIB", () => {
  test("pi install of the unpacked tarball loads the library it carries", async () => {
    const tarball = process.env.HERDR_LINK_PI_PACKAGE;
    assert.ok(tarball && existsSync(tarball), "HERDR_LINK_PI_PACKAGE names the packed tarball (run-tests.sh packs it)");
    const dirs = makeWorld(req, WORLD);
    // Unpacked where no ../../target exists: only the library inside the package can be found.
    const download = join(dirs.root, "download");
    mkdirSync(download);
    const untar = spawnSync("tar", ["xzf", tarball, "-C", download], { encoding: "utf8" });
    assert.equal(untar.status, 0, untar.stderr);
    const pkg = join(download, "package");
    assert.ok(existsSync(join(pkg, "node_modules", "koffi", "package.json")), "koffi is bundled");
    const noLib = { HERDR_LINK_LIB: undefined };
    piCommand(req, dirs, ["install", pkg], noLib);
    assert.match(piCommand(req, dirs, ["list"], noLib), /download\/package/);
    const pi = new PiRpc(req, dirs, { ...herdrEnv(req), ...noLib }, { installed: true });
    try {
      const script = [{ tool: GATEWAY, args: {} }, { text: "activated" }];
      const run = await pi.prompt(script);
      const requests = requestsFor(dirs, script);
      assert.deepEqual(linkTools(requests[0].tools), [GATEWAY]);
      assert.equal(JSON.parse(run.toolResult(GATEWAY).text).status, "active");
      assert.deepEqual(linkTools(requests[1].tools), LINK_TOOLS);
    } finally {
      await pi.close();
    }
  });
});
