// The four routes under test, each as: write the host's configuration into a sandbox (the
// wiring docs/mcp.md and hosts/opencode/README.md give users, plus test-only settings: the fake
// model provider and offline switches), and the command line of one non-interactive run.

import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import assert from "node:assert/strict"
import { fencedBlock, withBinary } from "./docs.mjs"
import { FAKE_BIN, LINK_BIN, NODE_MODULES, REPO } from "./sandbox.mjs"

const bin = (rel) => {
  const p = join(NODE_MODULES, rel)
  if (!existsSync(p)) throw new Error(`${p} is missing: run tests/hosts/run.sh (it runs npm ci)`)
  return p
}

/** The pinned versions (package.json), for messages and per-version expectations. */
export const PINNED = JSON.parse(readFileSync(join(NODE_MODULES, "..", "package.json"), "utf8")).dependencies

/** The herdr-link library the OpenCode plugin loads. */
export function linkLibrary() {
  const p = process.env.HERDR_LINK_LIB || join(LINK_BIN, "..", "libherdr_link.so")
  if (!existsSync(p)) throw new Error(`${p} is missing (cargo build --workspace builds it)`)
  return p
}

/** The OpenCode plugin bundle (hosts/opencode: npm ci && npm run build). */
export function pluginBundle() {
  const p = join(REPO, "hosts", "opencode", "dist", "herdr-link.opencode.js")
  if (!existsSync(p)) throw new Error(`${p} is missing (run.sh builds it)`)
  return p
}

// Test only: the fake Herdr's state file and the operator log.
const TEST_VARS = ["HERDR_FAKE_STATE", "HERDR_LINK_LOG"]

/** The guard hook (`herdr-link guard`) for a host's PreToolUse hooks, on Bash calls. */
function bashHook(host) {
  return { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `${LINK_BIN} guard --host ${host}` }] }] }
}

export const claude = {
  name: "claude",
  agentKind: "claude",
  naming: { prefix: "mcp__herdr_link__" },
  shellTool: "Bash",
  setup(sb, model, { guard = false } = {}) {
    // the wiring from docs/mcp.md, passed with --mcp-config / --settings
    const mcp = sb.file("claude/mcp.json", withBinary(fencedBlock("docs/mcp.md", "Claude Code", "json", 0)))
    const settingsJson = JSON.parse(fencedBlock("docs/mcp.md", "Claude Code", "json", 1))
    if (guard) settingsJson.hooks = bashHook("claude")
    const settings = sb.file("claude/settings.json", JSON.stringify(settingsJson, null, 2))
    return {
      cmd: bin("@anthropic-ai/claude-code/bin/claude.exe"),
      args: (prompt) => [
        "-p", prompt,
        "--mcp-config", mcp, "--strict-mcp-config",
        "--settings", settings,
        "--allowedTools", "Bash,mcp__herdr_link",
        "--output-format", "stream-json", "--verbose",
        "--model", "claude-sonnet-4-5",
      ],
      env: sb.env({
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: "test-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
      }),
    }
  },
}

export const codex = {
  name: "codex",
  agentKind: "codex",
  naming: { prefix: "", namespace: "mcp__herdr_link" },
  shellTool: "exec_command",
  setup(sb, model, { guard = false } = {}) {
    const home = join(sb.root, "codex-home")
    if (guard) sb.file("codex-home/hooks.json", JSON.stringify({ hooks: bashHook("codex") }, null, 2))
    const list = (xs) => xs.map((x) => JSON.stringify(x)).join(", ")
    sb.file("codex-home/config.toml", `# test only: the scripted model, no updates, no analytics, no network plugins
model = "gpt-5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "${model.url}/v1"
env_key = "FAKE_MODEL_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
hooks = true
plugins = false
remote_plugin = false
apps = false
in_app_updates = false

# the wiring from docs/mcp.md (plus the fake Herdr's test-only variables)
${withBinary(fencedBlock("docs/mcp.md", "Codex", "toml")).replace(/^(env_vars = \[.*)\]$/m, `$1, ${list(TEST_VARS)}]`)}`)
    return {
      cmd: bin(".bin/codex"),
      args: (prompt) => ["exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", prompt],
      env: sb.env({ CODEX_HOME: home, FAKE_MODEL_KEY: "test-key" }),
    }
  },
}

// The packages @opencode-ai/plugin needs at run time (from package-lock.json).
function pluginClosure() {
  const lock = JSON.parse(readFileSync(join(NODE_MODULES, "..", "package-lock.json"), "utf8")).packages
  const seen = new Set()
  const todo = ["@opencode-ai/plugin"]
  while (todo.length) {
    const name = todo.pop()
    if (seen.has(name)) continue
    seen.add(name)
    todo.push(...Object.keys(lock[`node_modules/${name}`]?.dependencies ?? {}))
  }
  return [...seen]
}

/**
 * OpenCode installs @opencode-ai/plugin into each config dir in the background, from the npm
 * registry. Pre-install it (hard links into our npm ci tree) so no run waits for that.
 */
function preinstallPluginPackage(dir) {
  mkdirSync(join(dir, "node_modules"), { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: { "@opencode-ai/plugin": PINNED["@opencode-ai/plugin"] } }))
  for (const name of pluginClosure()) {
    const to = join(dir, "node_modules", name)
    mkdirSync(join(to, ".."), { recursive: true })
    const r = spawnSync("cp", ["-al", join(NODE_MODULES, name), to])
    if (r.status !== 0) throw new Error(`cp ${name}: ${r.stderr}`)
  }
}

function opencodeRoute(name, { plugin }) {
  return {
    name,
    agentKind: "opencode",
    naming: { prefix: plugin ? "" : "herdr_link_" },
    shellTool: "bash",
    setup(sb, model, { guard = false } = {}) {
      const config = {
        $schema: "https://opencode.ai/config.json",
        // test only: the scripted model and offline switches
        autoupdate: false,
        share: "disabled",
        permission: { bash: "allow" },
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            name: "scripted model",
            options: { baseURL: `${model.url}/v1`, apiKey: "test-key" },
            models: { scripted: { name: "scripted", tool_call: true } },
          },
        },
        model: "fake/scripted",
        small_model: "fake/scripted",
      }
      if (!plugin) {
        // the MCP wiring from hosts/opencode/README.md
        config.mcp = JSON.parse(withBinary(fencedBlock("hosts/opencode/README.md", "The MCP route", "json"))).mcp
        assert.ok(config.mcp?.herdr_link, "the README's MCP snippet registers no herdr_link")
      } else {
        // the plugin install from hosts/opencode/README.md, for one project
        const plugins = join(sb.project, ".opencode", "plugins")
        mkdirSync(plugins, { recursive: true })
        copyFileSync(pluginBundle(), join(plugins, "herdr-link.js"))
        copyFileSync(linkLibrary(), join(plugins, "libherdr_link.so"))
      }
      sb.file("project/opencode.json", JSON.stringify(config, null, 2))
      preinstallPluginPackage(join(sb.xdg.config, "opencode"))
      preinstallPluginPackage(join(sb.project, ".opencode"))
      // Anything still fetched from npm goes to the model server (404), never outside.
      sb.file("home/.npmrc", `registry=${model.url}/npm/\n`)
      return {
        cmd: bin("opencode-linux-x64/bin/opencode"),
        args: (prompt) => ["run", "--format", "json", prompt],
        env: sb.env({
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
          OPENCODE_DISABLE_SHARE: "1",
          OPENCODE_DISABLE_CLAUDE_CODE: "1",
        }),
      }
    },
  }
}

export const opencodePlugin = opencodeRoute("opencode-plugin", { plugin: true })
export const opencodeMcp = opencodeRoute("opencode-mcp", { plugin: false })

/** Claude Code with its tool search switched off (ENABLE_TOOL_SEARCH=false, docs/mcp.md). */
export const claudeInline = {
  ...claude,
  name: "claude-inline",
  setup(sb, model, opts) {
    const host = claude.setup(sb, model, opts)
    return { ...host, env: { ...host.env, ENABLE_TOOL_SEARCH: "false" } }
  },
}

export { FAKE_BIN }
