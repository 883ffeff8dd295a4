// One hermetic run of a real host: its own HOME / XDG / TMPDIR / project dir under a temp root,
// a fake Herdr world, a process group killed at the end (and a check that nothing carrying the
// run's marker survives), and a watch on every socket the run opens (only 127.0.0.1 allowed).

import assert from "node:assert/strict"
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

export const HERE = resolve(dirname(fileURLToPath(import.meta.url)), "..")
export const REPO = resolve(HERE, "../..")
const TARGET = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(REPO, "target")

function required(name, fallback) {
  const path = resolve(process.env[name] || fallback)
  if (!existsSync(path)) throw new Error(`${name}: ${path} does not exist (cargo build --workspace builds it)`)
  return path
}

/** The binaries under test. */
export const LINK_BIN = required("HERDR_LINK_BIN", join(TARGET, "debug", "herdr-link"))
export const FAKE_BIN = required("HERDR_FAKE_BIN", join(TARGET, "debug", "herdr"))
export const NODE_MODULES = join(HERE, "node_modules")
/** True when run.sh put this process in a fresh network namespace (only `lo`). */
export const IN_NETNS = process.env.HERDR_E2E_NETNS === "1"

/** The Contract: PROTOCOL.md §3's fenced text block (the same rule as src/contract_block.rs). */
export function contractText() {
  const lines = readFileSync(join(REPO, "PROTOCOL.md"), "utf8").split("\n")
  let i = lines.findIndex((l) => l.startsWith("## 3."))
  assert.ok(i >= 0, "PROTOCOL.md has no §3")
  while (lines[i].trimEnd() !== "```text") i++
  const body = []
  for (i++; lines[i].trimEnd() !== "```"; i++) body.push(lines[i])
  return body.join("\n")
}

/** The ids of a fake Herdr world (its `fake world` answer): workspaces, tabs, panes, terminals. */
export function worldIds(map) {
  const ids = new Set([...map.workspaces, ...map.tabs])
  for (const p of map.panes) for (const k of ["pane_id", "tab_id", "workspace_id", "terminal_id"]) ids.add(p[k])
  return [...ids]
}

/** Which of `ids` occur in `text` as whole tokens. */
export function rawIds(text, ids) {
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return ids.filter((id) => new RegExp(`(?<![A-Za-z0-9_])${escape(id)}(?![A-Za-z0-9_])`).test(text))
}

let runCounter = 0

/** A sandbox: directories, environment and fake Herdr world for one host run. */
export class Sandbox {
  constructor(name) {
    this.name = name
    this.marker = `${process.pid}-${name}-${runCounter++}`
    this.root = mkdtempSync(join(tmpdir(), `herdr-e2e-${name}-r`))
    const d = (p) => {
      const full = join(this.root, p)
      mkdirSync(full, { recursive: true })
      return full
    }
    this.home = d("home")
    this.tmp = d("tmp")
    this.project = d("project")
    this.bin = d("bin")
    this.xdg = { config: d("xdg/config"), data: d("xdg/data"), state: d("xdg/state"), cache: d("xdg/cache") }
    this.state = join(d("herdr"), "state.json")
    this.runtime = d("run")
    chmodSync(this.runtime, 0o700)
    /** Environment entries that override env()'s own (e.g. to share a world with another run). */
    this.overrides = {}
    // `herdr` on PATH is the fake, as in a Herdr pane.
    spawnSync("ln", ["-s", FAKE_BIN, join(this.bin, "herdr")])
    // Login shells (Codex runs commands with `bash -lc`) reset PATH from /etc/profile.
    writeFileSync(join(this.home, ".bash_profile"), `export PATH="${this.bin}:$PATH"\n`)
    this.children = []
  }

  /** The environment a host gets: built from scratch, never the test runner's own. */
  env(extra = {}) {
    return {
      PATH: `${this.bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: this.home,
      USER: "e2e",
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
      TMPDIR: this.tmp,
      XDG_CONFIG_HOME: this.xdg.config,
      XDG_DATA_HOME: this.xdg.data,
      XDG_STATE_HOME: this.xdg.state,
      XDG_CACHE_HOME: this.xdg.cache,
      XDG_RUNTIME_DIR: this.runtime,
      // What Herdr sets in a pane (the socket is never used by the fake).
      HERDR_ENV: "1",
      HERDR_BIN_PATH: FAKE_BIN,
      HERDR_PANE_ID: "w1:p1",
      HERDR_SOCKET_PATH: join(this.root, "herdr", "herdr.sock"),
      // Test only: where the fake Herdr keeps its world, and the Herdr it plays (the current one,
      // which sets HERDR_BIN_PATH itself, so setup pins nothing).
      HERDR_FAKE_STATE: this.state,
      HERDR_FAKE_VERSION: "0.8.2",
      HERDR_LINK_LOG: join(this.root, "herdr-link.log"),
      HERDR_E2E_MARKER: this.marker,
      ...extra,
      ...this.overrides,
    }
  }

  /** Replaces the fake Herdr world (fake-herdr/README.md, "World JSON"). */
  world(spec) {
    const r = spawnSync(FAKE_BIN, ["fake", "world"], { input: JSON.stringify(spec), env: { HERDR_FAKE_STATE: this.state }, encoding: "utf8" })
    assert.equal(r.status, 0, `fake world failed: ${r.stderr}`)
    this.ids = worldIds(JSON.parse(r.stdout))
    return this.ids
  }

  #jsonl(suffix) {
    const p = `${this.state}.${suffix}`
    return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []
  }

  /** Every Herdr CLI call made (argv after `herdr`). */
  argvLog() {
    return this.#jsonl("argv.jsonl").map((l) => l.argv)
  }

  /** Every submission the fake Herdr delivered, once pending Enters are pressed (Herdr submits 300 ms after a prompt). */
  prompts() {
    const r = spawnSync(FAKE_BIN, ["fake", "prompts"], { env: { HERDR_FAKE_STATE: this.state }, encoding: "utf8" })
    assert.equal(r.status, 0, `fake prompts failed: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }

  file(rel, text) {
    const p = join(this.root, rel)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, text)
    return p
  }

  /**
   * Runs `cmd args` in its own process group with this sandbox's environment, under a time
   * limit; kills the whole group afterwards. Resolves {code, signal, stdout, stderr, timedOut,
   * sockets} where `sockets` lists every remote address seen while it ran.
   */
  run(cmd, args, { env, cwd = this.project, timeoutMs = 90_000 } = {}) {
    return new Promise((resolvePromise) => {
      const child = spawn(cmd, args, { cwd, env: env ?? this.env(), detached: true, stdio: ["ignore", "pipe", "pipe"] })
      running.add(child.pid)
      const out = []
      const err = []
      child.stdout.on("data", (c) => out.push(c))
      child.stderr.on("data", (c) => err.push(c))
      const watch = new SocketWatch(this.marker)
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        killGroup(child.pid)
      }, timeoutMs)
      child.on("close", (code, signal) => {
        clearTimeout(timer)
        killGroup(child.pid)
        running.delete(child.pid)
        watch.poll()
        watch.stop()
        resolvePromise({
          code,
          signal,
          timedOut,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
          sockets: watch.remotes(),
        })
      })
    })
  }

  /** Kills anything still carrying this run's marker; returns the pids it found. */
  leftovers() {
    const pids = markedPids(this.marker)
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {}
    }
    return pids
  }

  cleanup() {
    this.leftovers()
    if (process.env.HERDR_E2E_KEEP === "1") return console.log(`# kept ${this.root}`)
    rmSync(this.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
  }
}

// Host process groups still running: killed if this test process ends early, so no host
// outlives its test run.
const running = new Set()
process.on("exit", () => {
  for (const pid of running) killGroup(pid)
})
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    for (const pid of running) killGroup(pid)
    process.kill(process.pid, signal)
  })
}

function killGroup(pid) {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {}
}

/** Pids whose environment holds HERDR_E2E_MARKER=marker. */
export function markedPids(marker) {
  const needle = Buffer.from(`HERDR_E2E_MARKER=${marker}\0`)
  const pids = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const env = readFileSync(`/proc/${name}/environ`)
      if (env.includes(needle)) pids.push(Number(name))
    } catch {}
  }
  return pids
}

/** Socket inodes held by `pids`. */
function socketInodes(pids) {
  const inodes = new Set()
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
          if (m) inodes.add(m[1])
        } catch {}
      }
    } catch {}
  }
  return inodes
}

function hexAddr(hex) {
  if (hex.length === 8) {
    const b = Buffer.from(hex, "hex")
    return `${b[3]}.${b[2]}.${b[1]}.${b[0]}`
  }
  // IPv6: four little-endian 32-bit words.
  const words = hex.match(/.{8}/g).map((w) => Buffer.from(w, "hex").reverse().toString("hex"))
  const full = words.join("").match(/.{4}/g).join(":")
  if (full.startsWith("0000:0000:0000:0000:0000:ffff:")) {
    const v4 = Buffer.from(words[3], "hex")
    return `::ffff:${v4[0]}.${v4[1]}.${v4[2]}.${v4[3]}`
  }
  return full
}

/**
 * Polls the kernel's socket tables while a host runs and keeps every remote address. Inside the
 * run's own network namespace every socket is the run's; outside one, only sockets held by
 * processes carrying the run's marker count.
 */
class SocketWatch {
  constructor(marker) {
    this.marker = marker
    this.seen = new Set()
    this.timer = setInterval(() => this.poll(), IN_NETNS ? 20 : 100)
  }

  poll() {
    const inodes = IN_NETNS ? null : socketInodes(markedPids(this.marker))
    for (const proto of ["tcp", "tcp6", "udp", "udp6"]) {
      let text
      try {
        text = readFileSync(`/proc/net/${proto}`, "utf8")
      } catch {
        continue
      }
      for (const line of text.split("\n").slice(1)) {
        const f = line.trim().split(/\s+/)
        if (f.length < 10) continue
        const [remHex, remPort] = f[2].split(":")
        if (/^0+$/.test(remHex) && /^0+$/.test(remPort)) continue // a listener / unconnected
        if (inodes && !inodes.has(f[9])) continue
        this.seen.add(`${proto} ${hexAddr(remHex)}:${parseInt(remPort, 16)}`)
      }
    }
  }

  stop() {
    clearInterval(this.timer)
  }

  remotes() {
    return [...this.seen].sort()
  }
}

/** Asserts every remote address is 127.0.0.1 (IPv4 or IPv4-mapped). */
export function assertLoopbackOnly(sockets) {
  const outside = sockets.filter((s) => !/ (::ffff:)?127\.0\.0\.1:\d+$/.test(s))
  assert.deepEqual(outside, [], `the host contacted something other than 127.0.0.1: ${outside.join(", ")}`)
}

/** The network interfaces of this process's network namespace (only `lo` inside run.sh's). */
export function interfaces() {
  return readFileSync("/proc/net/dev", "utf8")
    .split("\n")
    .slice(2)
    .map((l) => l.split(":")[0].trim())
    .filter(Boolean)
    .sort()
}
