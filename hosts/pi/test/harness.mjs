// Test harness: runs the real Pi CLI from npm in RPC mode with this package and the scripted
// model loaded, against the fake Herdr. Missing runtimes are errors, never skips.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_DIR = resolve(PACKAGE_DIR, "..", "..");
const SCRIPTED_MODEL = join(PACKAGE_DIR, "test", "scripted-model.ts");
const MIN_NODE = [22, 19];

function fail(message) {
  throw new Error(`pi host tests cannot run: ${message}`);
}

/** Everything the tests need, resolved once; throws (so the test fails) when something is missing. */
export function requirements() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    fail(`Pi needs Node >= ${MIN_NODE.join(".")}, this is ${process.version} (use run-tests.sh)`);
  }

  const piPackage = join(PACKAGE_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "package.json");
  if (!existsSync(piPackage)) fail("@earendil-works/pi-coding-agent is not installed (run npm ci in hosts/pi)");
  const piManifest = JSON.parse(readFileSync(piPackage, "utf8"));
  const piCli = join(dirname(piPackage), piManifest.bin.pi);
  if (!existsSync(piCli)) fail(`Pi CLI missing at ${piCli}`);

  const libFile = process.platform === "darwin" ? "libherdr_link.dylib" : "libherdr_link.so";
  const lib = firstExisting("HERDR_LINK_LIB", [
    join(REPO_DIR, "target", "release", libFile),
    join(REPO_DIR, "target", "debug", libFile),
  ]);
  const fake = firstExisting("HERDR_FAKE_BIN", [
    join(REPO_DIR, "target", "release", "herdr"),
    join(REPO_DIR, "target", "debug", "herdr"),
  ]);
  const bin = firstExisting("HERDR_LINK_BIN", [
    join(REPO_DIR, "target", "release", "herdr-link"),
    join(REPO_DIR, "target", "debug", "herdr-link"),
  ]);
  return { piCli, piVersion: piManifest.version, lib, fake, bin };
}

function firstExisting(envName, fallbacks) {
  const fromEnv = process.env[envName];
  if (fromEnv) {
    if (!existsSync(fromEnv)) fail(`${envName}=${fromEnv} does not exist`);
    return resolve(fromEnv);
  }
  const found = fallbacks.find((path) => existsSync(path));
  if (!found) fail(`set ${envName}; not found at ${fallbacks.join(", ")}`);
  return found;
}

const scratchRoots = [];

/** Removes the scratch worlds, unless HERDR_LINK_PI_KEEP=1 asks to keep them for a look. */
export function removeWorlds() {
  if (process.env.HERDR_LINK_PI_KEEP === "1") {
    console.log(`# kept: ${scratchRoots.join(" ")}`);
    return;
  }
  for (const root of scratchRoots.splice(0)) rmSync(root, { recursive: true, force: true, maxRetries: 5 });
}

/** A scratch world: project dir, Pi config dir, fake Herdr state, model log. */
export function makeWorld(req, world) {
  const root = mkdtempSync(join(tmpdir(), "herdr-link-pi-"));
  scratchRoots.push(root);
  const dirs = {
    root,
    project: join(root, "project"),
    home: join(root, "home"),
    agentDir: join(root, "pi-agent"),
    state: join(root, "herdr", "state.json"),
    modelLog: join(root, "model.jsonl"),
  };
  for (const dir of [dirs.project, dirs.home, dirs.agentDir, dirname(dirs.state)]) {
    mkdirSync(dir, { recursive: true });
  }
  if (world) {
    const run = spawnSync(req.fake, ["fake", "world"], {
      input: JSON.stringify(world),
      env: { PATH: process.env.PATH, HERDR_FAKE_STATE: dirs.state },
      encoding: "utf8",
    });
    if (run.status !== 0) {
      throw new Error(`herdr fake world failed (${run.status}): ${run.stderr}${run.stdout}`);
    }
  }
  return dirs;
}

export function readJsonLines(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/**
 * Runs `pi <args>` to completion (for package commands such as `pi install`); `extraEnv` is
 * merged over the base environment (an `undefined` value removes a variable).
 */
export function piCommand(req, dirs, args, extraEnv = {}) {
  const run = spawnSync(process.execPath, [req.piCli, ...args], {
    cwd: dirs.project,
    env: { ...baseEnv(req, dirs), ...extraEnv },
    encoding: "utf8",
    timeout: 60000,
  });
  if (run.status !== 0) throw new Error(`pi ${args.join(" ")} failed (${run.status}): ${run.stderr}${run.stdout}`);
  return run.stdout;
}

function baseEnv(req, dirs) {
  return {
    PATH: process.env.PATH,
    HOME: dirs.home,
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    PI_CODING_AGENT_DIR: dirs.agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    HL_MODEL_LOG: dirs.modelLog,
    HERDR_LINK_LIB: req.lib,
    HERDR_FAKE_STATE: dirs.state,
  };
}

/**
 * One real Pi process in RPC mode. By default the package is loaded with `--extension` and
 * every other extension is off; with `installed: true` Pi loads whatever its settings name
 * (after `pi install`) and its own built-in extensions.
 */
export class PiRpc {
  constructor(req, dirs, herdrEnv, { extraArgs = [], installed = false } = {}) {
    this.dirs = dirs;
    this.events = [];
    this.stderr = "";
    this.waiters = [];
    this.nextId = 1;
    const env = { ...baseEnv(req, dirs), ...herdrEnv };
    const args = [
      req.piCli,
      "--mode", "rpc",
      "--no-session",
      "--offline",
      ...(installed ? [] : ["--no-extensions", "--extension", PACKAGE_DIR]),
      "--no-skills",
      "--no-prompt-templates",
      "--no-context-files",
      "--extension", SCRIPTED_MODEL,
      "--provider", "scripted",
      "--model", "herdr-script",
      ...extraArgs,
    ];
    this.child = spawn(process.execPath, args, { cwd: dirs.project, env, stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolveExit) => this.child.on("exit", (code, signal) => resolveExit({ code, signal })));
    this.child.on("exit", () => this.dispatch({ type: "__exit__" }));
    let buffer = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        if (line.trim() === "") continue;
        let record;
        try {
          record = JSON.parse(line);
        } catch {
          this.stderr += `[non-JSON stdout] ${line}\n`;
          continue;
        }
        this.events.push(record);
        this.dispatch(record);
      }
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk) => {
      this.stderr += chunk;
    });
  }

  dispatch(record) {
    for (const waiter of [...this.waiters]) waiter(record);
  }

  waitFor(what, predicate, timeoutMs = 30000) {
    return new Promise((resolveWait, reject) => {
      const timer = setTimeout(() => {
        remove();
        reject(new Error(`timed out waiting for ${what}; Pi stderr:\n${this.stderr}`));
      }, timeoutMs);
      const waiter = (record) => {
        if (record.type === "__exit__") {
          remove();
          reject(new Error(`Pi exited while waiting for ${what}; stderr:\n${this.stderr}`));
        } else if (predicate(record)) {
          remove();
          resolveWait(record);
        }
      };
      const remove = () => {
        clearTimeout(timer);
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
      };
      this.waiters.push(waiter);
    });
  }

  async command(body) {
    const id = `t${this.nextId++}`;
    const response = this.waitFor(`response to ${body.type}`, (r) => r.type === "response" && r.id === id);
    this.child.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    const record = await response;
    if (!record.success) throw new Error(`${body.type} failed: ${record.error}\n${this.stderr}`);
    return record.data;
  }

  /** Sends one scripted prompt and waits until Pi settles; returns the events of that run. */
  async prompt(script) {
    const start = this.events.length;
    const settled = this.waitFor("agent_settled", (r) => r.type === "agent_settled");
    const data = await this.command({ type: "prompt", message: JSON.stringify({ script }) });
    if (data?.disposition !== "started") throw new Error(`prompt not started: ${JSON.stringify(data)}`);
    await settled;
    return new RunEvents(this.events.slice(start));
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10000);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

export class RunEvents {
  constructor(events) {
    this.events = events;
  }

  toolEnds(name) {
    return this.events.filter((e) => e.type === "tool_execution_end" && (!name || e.toolName === name));
  }

  /** The single finished call of `name` in this run: its text blocks, the first as `text`, and
   * its details. */
  toolResult(name) {
    const ends = this.toolEnds(name);
    if (ends.length !== 1) {
      throw new Error(`expected one ${name} result, got ${ends.length}: ${JSON.stringify(this.events)}`);
    }
    const end = ends[0];
    const blocks = end.result.content.map((block) => block.text ?? "");
    return { isError: end.isError, text: blocks[0] ?? "", blocks, details: end.result.details };
  }
}
