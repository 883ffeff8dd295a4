// Test harness: drives the built plugin the way OpenCode does and sets up a
// fake Herdr world for it to talk to.
//
// Needs HERDR_LINK_LIB (the built cdylib) and HERDR_FAKE_BIN (the fake
// `herdr` binary). Missing either is a test failure, never a skip.

import assert from "node:assert/strict"
import { execFileSync, spawnSync } from "node:child_process"
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { tool } from "@opencode-ai/plugin"

export const HERE = dirname(fileURLToPath(import.meta.url))
export const ROOT = resolve(HERE, "..")
export const BUNDLE = join(ROOT, "dist", "herdr-link.opencode.js")
export const z = tool.schema

function requiredFile(name, { executable = false } = {}) {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set: the OpenCode host tests need it (see run-tests.sh)`)
  const path = isAbsolute(value) ? value : resolve(value)
  if (!existsSync(path)) throw new Error(`${name}=${value}: no such file`)
  if (executable) accessSync(path, constants.X_OK)
  return path
}

export const LIB = requiredFile("HERDR_LINK_LIB")
export const FAKE_BIN = requiredFile("HERDR_FAKE_BIN", { executable: true })
process.env.HERDR_LINK_LIB = LIB
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "npm run build" first`)

const tempDirs = []
/** A temp dir removed when the test process exits. */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}
process.on("exit", () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
})

/** The pane our OpenCode runs in, in every world below. */
export const SELF_PANE = "w1:p1"

/** A world with the caller ("brain", w1:p1) and one peer ("worker", w1:p2). */
export function twoAgentWorld(cwd) {
  return {
    workspaces: [
      {
        cwd,
        tabs: [
          {
            panes: [
              { cwd, agent: "opencode", name: "brain", status: "idle" },
              { cwd, agent: "pi", name: "worker", status: "idle" },
            ],
          },
        ],
      },
    ],
  }
}

/**
 * Creates a fake Herdr world in a fresh temp dir and points process.env at it
 * (the library reads the environment at call time).
 */
export function setupWorld(world = undefined) {
  const dir = tempDir("herdr-link-opencode-")
  const state = join(dir, "state.json")
  const w = world ?? twoAgentWorld(dir)
  const env = { ...process.env, HERDR_FAKE_STATE: state }
  execFileSync(FAKE_BIN, ["fake", "world"], { input: JSON.stringify(w), env, stdio: ["pipe", "pipe", "inherit"] })
  enterHerdr(state)
  return {
    dir,
    state,
    /** Every argv the fake was run with, oldest first. */
    argv: () => readJsonl(`${state}.argv.jsonl`),
    /**
     * The argv log without the caller's own `agent get <self pane>` lookups,
     * which the library's background self-naming makes at any time.
     */
    calls: () =>
      readJsonl(`${state}.argv.jsonl`)
        .map((r) => r.argv)
        .filter((a) => !(a.length === 3 && a[0] === "agent" && a[1] === "get" && a[2] === SELF_PANE)),
    /** Every submission the fake delivered, once pending Enters are pressed (Herdr submits 300 ms after a prompt). */
    prompts: () =>
      JSON.parse(execFileSync(FAKE_BIN, ["fake", "prompts"], { env: { ...process.env, HERDR_FAKE_STATE: state }, encoding: "utf8" })),
    /** The fake's world as JSON. */
    world: () => JSON.parse(readFileSync(state, "utf8")),
  }
}

export function enterHerdr(state) {
  process.env.HERDR_ENV = "1"
  process.env.HERDR_BIN_PATH = FAKE_BIN
  process.env.HERDR_PANE_ID = SELF_PANE
  if (state) process.env.HERDR_FAKE_STATE = state
}

export function leaveHerdr() {
  delete process.env.HERDR_ENV
  delete process.env.HERDR_BIN_PATH
  delete process.env.HERDR_PANE_ID
}

function readJsonl(path) {
  if (!existsSync(path)) return []
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))
}

let importCount = 0
/** Imports the bundle as OpenCode does and returns its module namespace. */
export async function importPlugin({ fresh = false } = {}) {
  const url = pathToFileURL(BUNDLE).href + (fresh ? `?fresh=${++importCount}` : "")
  return import(url)
}

/**
 * Initialises the plugin the way OpenCode's loader does: every distinct
 * function export is called once with a PluginInput.
 */
export async function initPlugin(dir = process.cwd()) {
  const mod = await importPlugin()
  const seen = new Set()
  const hooks = []
  for (const value of Object.values(mod)) {
    if (seen.has(value)) continue
    seen.add(value)
    assert.equal(typeof value, "function", "every export of an OpenCode plugin file must be a plugin function")
    hooks.push(await value(pluginInput(dir), {}))
  }
  assert.equal(hooks.length, 1, "the plugin module should yield exactly one plugin")
  return hooks[0]
}

export function pluginInput(dir) {
  return {
    client: {},
    project: { id: "test-project", worktree: dir, time: { created: 0 } },
    directory: dir,
    worktree: dir,
    experimental_workspace: { register() {} },
    serverUrl: new URL("http://127.0.0.1:4096"),
    $: () => {
      throw new Error("the plugin must not use the Bun shell")
    },
  }
}

export function toolContext(sessionID, directory) {
  return {
    sessionID,
    messageID: "msg_test",
    agent: "build",
    directory,
    worktree: directory,
    abort: new AbortController().signal,
    metadata() {},
    async ask() {},
  }
}

/**
 * Calls a plugin tool as OpenCode's tool registry does: the args are
 * validated against z.object(def.args) first, then execute() runs with a
 * context carrying the session id and the directory.
 */
export async function callTool(hooks, name, args, { sessionID, directory = process.cwd() } = {}) {
  const def = hooks.tool?.[name]
  assert.ok(def, `tool ${name} is registered`)
  const parsed = z.object(def.args).safeParse(args)
  if (!parsed.success) {
    throw new Error(`The ${name} tool was called with invalid arguments: ${parsed.error.message}`)
  }
  return def.execute(parsed.data, toolContext(sessionID, directory))
}

/** Like callTool but returns the parsed JSON result. */
export async function callJson(hooks, args, opts) {
  const out = await callTool(hooks, "herdr_link", args, opts)
  assert.equal(typeof out, "string", "tool results are strings")
  return JSON.parse(out)
}

export const BASE_SYSTEM = ["You are OpenCode, an interactive CLI agent.", "Working directory: /tmp/project"]

/** Runs the system transform as OpenCode does before an LLM call. */
export async function systemFor(hooks, sessionID, system = [...BASE_SYSTEM]) {
  const input = { model: { id: "test-model", providerID: "test" } }
  if (sessionID !== undefined) input.sessionID = sessionID
  const output = { system }
  await hooks["experimental.chat.system.transform"](input, output)
  return output.system
}

/** Runs the bun driver script against the bundle; returns its JSON report. */
export function runUnderBun(script, env) {
  const bun = join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "bun.cmd" : "bun")
  if (!existsSync(bun)) throw new Error(`bun is missing at ${bun}: run npm ci`)
  const res = spawnSync(bun, [script], { env, encoding: "utf8", timeout: 60_000 })
  if (res.status !== 0) {
    throw new Error(`bun ${script} exited ${res.status}: ${res.stderr}\n${res.stdout}`)
  }
  return JSON.parse(res.stdout.trim().split("\n").pop())
}
