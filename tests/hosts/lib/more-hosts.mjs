// The routes of GitHub Copilot CLI, Factory Droid, Cline and Kimi Code (docs/hosts-more.md),
// each configured by `herdr-link setup <host>` plus test-only settings (the scripted model,
// offline switches), and started as Herdr starts a host: typed into the pane's interactive
// bash, so the shim block setup wrote there reaches the host's shell commands.

import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { markedPids, NODE_MODULES } from "./sandbox.mjs"
import { setup } from "./hosts.mjs"

const bin = (rel) => {
  const p = join(NODE_MODULES, rel)
  if (!existsSync(p)) throw new Error(`${p} is missing: run tests/hosts/run.sh (it runs npm ci)`)
  return p
}

/** A host command typed into an interactive bash (see hosts.mjs, fromInteractiveShell). */
const viaBash = (cmd, args) => ["-i", "-c", 'exec "$0" "$@"', cmd, ...args]

/** A node new enough for Kimi Code (>= 22.19): run.sh's HERDR_E2E_NODE22, else this one. */
function node22() {
  const p = process.env.HERDR_E2E_NODE22 || process.execPath
  const r = spawnSync(p, ["-p", "process.versions.node"], { encoding: "utf8" })
  const [major, minor] = r.stdout.trim().split(".").map(Number)
  if (major < 22 || (major === 22 && minor < 19)) throw new Error(`${p} is node ${r.stdout.trim()}: Kimi Code needs node >= 22.19`)
  return p
}

/**
 * HERDR_E2E_REMOVE=mcp,hook,shim: takes that piece of what setup wrote back out (the server
 * entry, the guard hook, the shim block), to see the check relying on it fail.
 */
function removePieces(sb, { mcp, hook }) {
  const remove = (process.env.HERDR_E2E_REMOVE ?? "").split(",").filter(Boolean)
  if (remove.length === 0) return
  if (remove.includes("mcp")) {
    const v = JSON.parse(readFileSync(mcp, "utf8"))
    delete v.mcpServers.herdr_link
    writeFileSync(mcp, JSON.stringify(v, null, 2))
  }
  if (remove.includes("hook")) hook()
  if (remove.includes("shim")) {
    for (const rc of [".bashrc", ".bash_profile", ".profile"]) {
      const file = join(sb.home, rc)
      if (!existsSync(file)) continue
      writeFileSync(file, readFileSync(file, "utf8").replace(/# >>> herdr-link shim \(herdr-link setup\) >>>\n[\s\S]*?# <<< herdr-link shim <<<\n/g, ""))
    }
  }
  console.log(`# removed ${remove.join(", ")} from what setup wrote`)
}

/** Rewrites a JSON file with `edit` applied. */
function editJson(path, edit) {
  const v = JSON.parse(readFileSync(path, "utf8"))
  edit(v)
  writeFileSync(path, JSON.stringify(v, null, 2))
}

export const copilot = {
  name: "copilot",
  agentKind: "copilot",
  naming: { prefix: "herdr_link-", shell: "bash" },
  shellTool: "bash",
  setup(sb, model) {
    const home = join(sb.home, ".copilot")
    setup(sb, "copilot", [], { COPILOT_HOME: home })
    removePieces(sb, {
      mcp: join(home, "mcp-config.json"),
      hook: () => editJson(join(home, "settings.json"), (v) => delete v.hooks.preToolUse),
    })
    // The native binary unpacks itself into $XDG_CACHE_HOME on its first run: a copy (hard
    // links) of the one run.sh unpacked spares each run that.
    const cache = join(NODE_MODULES, ".e2e-cache", "copilot")
    if (existsSync(cache)) spawnSync("cp", ["-al", cache, join(sb.xdg.cache, "copilot")])
    return {
      cmd: "bash",
      // The shell is allowed as a user allows it; Link's tools are granted by setup's hook
      // (docs/hosts-more.md), nothing else.
      args: (prompt) => viaBash(bin("@github/copilot-linux-x64/copilot"), ["-p", prompt, "--allow-tool=shell", "--output-format", "json", "--no-auto-update", "--disable-builtin-mcps"]),
      env: sb.env({
        COPILOT_HOME: home,
        COPILOT_OFFLINE: "true",
        COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
        COPILOT_PROVIDER_TYPE: "openai",
        COPILOT_PROVIDER_API_KEY: "test-key",
        COPILOT_MODEL: "gpt-4.1",
        COPILOT_AUTO_UPDATE: "false",
      }),
    }
  },
}

/** A loopback port nothing listens on (discard). */
const CLOSED = "http://127.0.0.1:9"

export const droid = {
  name: "droid",
  agentKind: "droid",
  naming: {
    prefix: "herdr_link___",
    shell: "Execute",
    shellInput: (command) => ({ command, riskLevel: "low", riskLevelReason: "a test command" }),
  },
  shellTool: "Execute",
  setup(sb, model) {
    // test only: the scripted model as a custom model
    sb.file("home/.factory/settings.json", JSON.stringify({
      customModels: [{ model: "scripted", displayName: "Fake", baseUrl: `${model.url}/v1`, apiKey: "test-key", provider: "generic-chat-completion-api", maxOutputTokens: 4096 }],
    }, null, 2) + "\n")
    setup(sb, "droid")
    const dir = join(sb.home, ".factory")
    removePieces(sb, {
      mcp: join(dir, "mcp.json"),
      hook: () => editJson(join(dir, "settings.json"), (v) => delete v.hooks.PreToolUse),
    })
    return {
      cmd: "bash",
      // `droid exec` is read-only unless told otherwise: `--auto low` lets it run the low-risk
      // commands the scripted model sends. Link's tools are high impact (MCP tools not annotated
      // read-only): only setup's grant (the guard hook's allow) lets them run.
      args: (prompt) => viaBash(bin("@factory/cli-linux-x64/bin/droid"), ["exec", "--auto", "low", "-o", "stream-json", "-m", "custom:Fake-0", prompt]),
      // test only: Factory's service, its telemetry and its OpenTelemetry collector pointed at a
      // closed loopback port (they are resolved by name otherwise), no dynamic config or update
      env: sb.env({
        FACTORY_API_BASE_URL: CLOSED,
        FACTORY_APP_BASE_URL: CLOSED,
        FACTORY_TELEMETRY_INGEST_BASE_URL: CLOSED,
        OTEL_CUSTOMER_ENDPOINT: CLOSED,
        FACTORY_DISABLE_DYNAMIC_CONFIG: "1",
        FACTORY_DROID_AUTO_UPDATE_ENABLED: "false",
      }),
    }
  },
}

/** Kills, by pid, the hub daemons (`cline --cline-hub-daemon`) a Cline of this run left. */
function killHubDaemons(sb) {
  for (const pid of markedPids(sb.marker)) {
    let cmdline = ""
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8")
    } catch {}
    if (!cmdline.includes("--cline-hub-daemon")) continue
    try {
      process.kill(pid, "SIGKILL")
    } catch {}
  }
}

/**
 * test only: Cline's updates off, and its PostHog feature-flag client (data.cline.bot), which
 * Cline 3.0.65 leaves out only when E2E_TEST=true (its one use of that variable).
 */
const CLINE_OFFLINE = { CLINE_NO_AUTO_UPDATE: "1", E2E_TEST: "true" }

export const cline = {
  name: "cline",
  agentKind: "cline",
  naming: { prefix: "herdr_link__", shell: "run_commands", shellInput: (command) => ({ commands: [command] }) },
  shellTool: "run_commands",
  setup(sb, model) {
    // test only: telemetry (OpenTelemetry to otel.cline.bot) and updates off
    sb.file("home/.cline/data/settings/global-settings.json", JSON.stringify({ telemetryOptOut: true, autoUpdateEnabled: false }, null, 2) + "\n")
    setup(sb, "cline")
    removePieces(sb, {
      mcp: join(sb.home, ".cline", "data", "settings", "cline_mcp_settings.json"),
      hook: () => rmSync(join(sb.home, ".cline", "hooks", "PreToolUse")),
    })
    const cline = bin("@cline/cli-linux-x64/bin/cline")
    // test only: the scripted model as an OpenAI-compatible provider (Cline's own login command)
    const auth = spawnSync(cline, ["auth", "-p", "openai", "-k", "test-key", "-m", "scripted", "-b", `${model.url}/v1`], { cwd: sb.project, env: sb.env(CLINE_OFFLINE), encoding: "utf8", timeout: 60_000 })
    if (auth.status !== 0) throw new Error(`cline auth failed: ${auth.stdout}\n${auth.stderr}`)
    killHubDaemons(sb)
    return {
      cmd: "bash",
      args: (prompt) => viaBash(cline, ["--json", "-P", "openai-compatible", "-m", "scripted", prompt]),
      env: sb.env(CLINE_OFFLINE),
      // Cline leaves its hub daemon (`cline --cline-hub-daemon`) running after the run.
      afterRun: () => killHubDaemons(sb),
    }
  },
}

export const kimi = {
  name: "kimi",
  agentKind: "kimi",
  naming: { prefix: "mcp__herdr_link__", shell: "Bash" },
  shellTool: "Bash",
  setup(sb, model) {
    const home = join(sb.home, ".kimi-code")
    // test only: the scripted model, no telemetry, and the shell allowed as a user allows it
    // (the permission mode stays the default; setup's rule allows the Link tools)
    sb.file("home/.kimi-code/config.toml", `default_model = "fake"
telemetry = false
auto_session_title = false

[providers.fake]
type = "openai"
base_url = "${model.url}/v1"
api_key = "test-key"

[models.fake]
provider = "fake"
model = "scripted"
max_context_size = 128000
capabilities = ["tool_use"]

[[permission.rules]]
decision = "allow"
pattern = "Bash"
`)
    setup(sb, "kimi", [], { KIMI_CODE_HOME: home })
    removePieces(sb, {
      mcp: join(home, "mcp.json"),
      hook: () => {
        const f = join(home, "config.toml")
        writeFileSync(f, readFileSync(f, "utf8").replace(/\[\[hooks\]\]\nevent = "PreToolUse"[\s\S]*?timeout = 30\n/, ""))
      },
    })
    return {
      cmd: "bash",
      args: (prompt) => viaBash(node22(), [bin("@moonshot-ai/kimi-code/dist/main.mjs"), "-p", prompt, "--output-format", "stream-json"]),
      env: sb.env({
        KIMI_CODE_HOME: home,
        KIMI_CODE_NO_AUTO_UPDATE: "1",
        KIMI_DISABLE_TELEMETRY: "1",
        KIMI_CODE_MODEL_CATALOG_REFRESH_ON_START: "false",
      }),
    }
  },
}

