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


/**
 * `herdr-link setup <host> [args]` in the sandbox, as a user runs it: writes the MCP registration
 * and the guard hook into the host's config (docs/setup.md). Returns its stdout.
 */
export function setup(sb, host, args = [], env = {}) {
  const r = spawnSync(LINK_BIN, ["setup", host, ...args], { cwd: sb.project, env: sb.env(env), encoding: "utf8" })
  assert.equal(r.status, 0, `herdr-link setup ${host} failed (${r.status}):\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** The docs' registration (binary substituted) must be what setup wrote. */
function assertDocMatches(doc, written, what) {
  assert.deepEqual(written, doc, `${what}: setup wrote something else than the docs show`)
}

export const claude = {
  name: "claude",
  agentKind: "claude",
  naming: { prefix: "mcp__herdr_link__" },
  shellTool: "Bash",
  setup(sb, model) {
    setup(sb, "claude")
    const written = JSON.parse(readFileSync(join(sb.home, ".claude.json"), "utf8")).mcpServers.herdr_link
    const doc = JSON.parse(withBinary(fencedBlock("docs/mcp.md", "Claude Code", "json", 0))).mcpServers.herdr_link
    assertDocMatches(doc, written, "Claude Code's mcpServers.herdr_link")
    return {
      cmd: bin("@anthropic-ai/claude-code/bin/claude.exe"),
      args: (prompt) => [
        "-p", prompt,
        "--allowedTools", "Bash",
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

/**
 * Codex with full access: nothing is sandboxed or approved. `codexWorkspaceWrite` below is the
 * same route in the sandbox Codex runs a trusted project in (each MCP tool call needs an
 * approval there unless the server's config says otherwise, which `herdr-link setup codex`
 * does). Headless `codex exec` never asks a person (`approval_policy = "never"`).
 */
export const codex = {
  name: "codex",
  agentKind: "codex",
  naming: { prefix: "", namespace: "mcp__herdr_link" },
  shellTool: "exec_command",
  sandbox: "danger-full-access",
  setup(sb, model) {
    const home = join(sb.root, "codex-home")
    sb.file("codex-home/config.toml", `# test only: the scripted model, no updates, no analytics, no network plugins (setup adds the rest)
model = "gpt-5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "${this.sandbox}"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "${model.url}/v1"
env_key = "FAKE_MODEL_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
`)
    // then what a user runs (plus the fake Herdr's state for the server)
    setup(sb, "codex", ["--pass-env", "HERDR_FAKE_STATE"], { CODEX_HOME: home })
    const written = readFileSync(join(home, "config.toml"), "utf8")
    const doc = withBinary(fencedBlock("docs/mcp.md", "Codex", "toml"))
    const field = (text, key) => new RegExp(`^${key} = (.*)$`, "m").exec(text.slice(text.indexOf("[mcp_servers.herdr_link]")))?.[1]
    for (const key of ["command", "args", "default_tools_approval_mode"]) assertDocMatches(field(doc, key), field(written, key), `Codex's ${key}`)
    const vars = (text) => JSON.parse(field(text, "env_vars") ?? "[]")
    const missing = vars(doc).filter((v) => !vars(written).includes(v))
    assert.deepEqual(missing, [], "Codex's env_vars: the docs list variables setup does not pass")
    assert.match(written, /^hooks = true$/m, "setup did not turn Codex hooks on")
    return {
      cmd: bin(".bin/codex"),
      args: (prompt) => ["exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", prompt],
      env: sb.env({ CODEX_HOME: home, FAKE_MODEL_KEY: "test-key" }),
    }
  },
}

/** Codex in its default sandbox for a trusted project (`sandbox_mode = "workspace-write"`). */
export const codexWorkspaceWrite = { ...codex, name: "codex-workspace-write", sandbox: "workspace-write" }

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
    setup(sb, model) {
      const config = {
        $schema: "https://opencode.ai/config.json",
        // test only: the scripted model and offline switches; no `permission` key, so OpenCode
        // runs in its default permission mode (docs/setup.md, "Permissions")
        autoupdate: false,
        share: "disabled",
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
        // what a user runs: the MCP registration and the guard plugin in ~/.config/opencode
        setup(sb, "opencode")
        const written = JSON.parse(readFileSync(join(sb.xdg.config, "opencode", "opencode.json"), "utf8")).mcp
        const doc = JSON.parse(withBinary(fencedBlock("hosts/opencode/README.md", "The MCP route", "json"))).mcp
        assertDocMatches(doc, written, "OpenCode's mcp.herdr_link")
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
      sb.file("home/.npmrc", `registry=${model.url}/npm/\noffline=true\nfetch-retries=0\n`)
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

/** A node new enough for Qwen Code (>= 22): run.sh's HERDR_E2E_NODE22, else this one. */
function node22() {
  const p = process.env.HERDR_E2E_NODE22 || process.execPath
  const r = spawnSync(p, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" })
  if (Number(r.stdout) < 22) throw new Error(`${p} is node ${r.stdout.trim()}: Qwen Code needs node >= 22 (run.sh installs one)`)
  return p
}

/**
 * How Herdr starts a host in a pane: its command typed into the pane's interactive shell, so
 * the host inherits what that shell's startup file sets (the herdr shim first on PATH, from
 * `herdr-link setup gemini|qwen`), and passes it to the `bash -c` of every shell command.
 */
function fromInteractiveShell(cmd, args) {
  return { cmd: "bash", args: ["-i", "-c", 'exec "$0" "$@"', cmd, ...args] }
}

/** A docs snippet with `herdr-link` (the server's command, and the hook's) as the binary under test. */
function withBinaryInHooks(snippet, sb) {
  return withBinary(snippet)
    .replaceAll('"herdr-link guard ', `"${LINK_BIN} guard `)
    .replaceAll(" --shim SHIMDIR", ` --shim ${join(sb.xdg.data, "herdr-link", "shim")}`)
}

/**
 * HERDR_E2E_REMOVE=mcp,hook,shim takes that piece back out of what `herdr-link setup` wrote for
 * Gemini CLI or Qwen Code (the server entry, the guard hook, the shim block in the shell's
 * startup files), to see the checks that rely on it fail (tests/hosts/README.md).
 */
function removePieces(sb, settingsRel, event) {
  const remove = (process.env.HERDR_E2E_REMOVE ?? "").split(",").filter(Boolean)
  if (remove.length === 0) return
  const path = join(sb.root, settingsRel)
  const settings = JSON.parse(readFileSync(path, "utf8"))
  if (remove.includes("mcp")) delete settings.mcpServers.herdr_link
  if (remove.includes("hook")) delete settings.hooks[event]
  writeFileSync(path, JSON.stringify(settings, null, 2))
  if (remove.includes("shim")) {
    for (const rc of [".bashrc", ".bash_profile", ".profile"]) {
      const file = join(sb.home, rc)
      if (!existsSync(file)) continue
      const text = readFileSync(file, "utf8").replace(/# >>> herdr-link shim \(herdr-link setup \w+\) >>>\n.*\n# <<< herdr-link shim <<<\n/g, "")
      writeFileSync(file, text)
    }
  }
  console.log(`# ${settingsRel}: removed ${remove.join(", ")} from what setup wrote`)
}

/** Merges test-only settings into a host's settings.json (written before setup merges its own). */
function settingsFile(sb, rel, settings) {
  sb.file(rel, JSON.stringify(settings, null, 2) + "\n")
}

export const gemini = {
  name: "gemini",
  agentKind: "gemini",
  naming: { prefix: "mcp_herdr_link_", shell: "run_shell_command" },
  shellTool: "run_shell_command",
  setup(sb, model) {
    // test only: the scripted model, no updates or usage statistics (the Link tools are
    // trusted by what setup writes)
    settingsFile(sb, "home/.gemini/settings.json", {
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: "gemini-api-key" } },
    })
    // test only: the shell tool allowed as a user allows it, in a user policy (headless mode
    // denies what it would ask about; redirections ask unless the rule allows them)
    sb.file("home/.gemini/policies/e2e-shell.toml", '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 100\nallowRedirection = true\n')
    // Folder trust is on by default: the project is trusted, as the trust dialog records it.
    sb.file("home/.gemini/trustedFolders.json", JSON.stringify({ [sb.project]: "TRUST_FOLDER" }))
    // then what a user runs
    setup(sb, "gemini")
    const written = JSON.parse(readFileSync(join(sb.home, ".gemini", "settings.json"), "utf8"))
    const doc = JSON.parse(withBinaryInHooks(fencedBlock("docs/hosts-gemini-qwen.md", "Gemini CLI: what setup writes", "json"), sb))
    assertDocMatches(doc.mcpServers.herdr_link, written.mcpServers.herdr_link, "Gemini CLI's mcpServers.herdr_link")
    assertDocMatches(doc.hooks.BeforeTool, written.hooks.BeforeTool, "Gemini CLI's hooks.BeforeTool")
    removePieces(sb, "home/.gemini/settings.json", "BeforeTool")
    return {
      cmd: "bash",
      args: (prompt) => fromInteractiveShell(bin(".bin/gemini"), ["-p", prompt, "-m", "gemini-2.5-flash", "--output-format", "json"]).args,
      env: sb.env({ GEMINI_API_KEY: "test-key", GOOGLE_GEMINI_BASE_URL: model.url }),
    }
  },
}

export const qwen = {
  name: "qwen",
  agentKind: "qwen",
  naming: { prefix: "mcp__herdr_link__", shell: "run_shell_command" },
  shellTool: "run_shell_command",
  setup(sb, model) {
    // test only: the scripted model (OpenAI-compatible), no updates or usage statistics, and
    // the shell tool allowed as a user allows it (a headless run offers no tool it would have
    // to ask about); the approval mode stays the default (auto: the model's classifier judges
    // each shell command that is not plainly read-only)
    settingsFile(sb, "home/.qwen/settings.json", {
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: "openai" } },
      permissions: { allow: ["run_shell_command"] },
    })
    setup(sb, "qwen")
    const written = JSON.parse(readFileSync(join(sb.home, ".qwen", "settings.json"), "utf8"))
    const doc = JSON.parse(withBinaryInHooks(fencedBlock("docs/hosts-gemini-qwen.md", "Qwen Code: what setup writes", "json"), sb))
    assertDocMatches(doc.mcpServers.herdr_link, written.mcpServers.herdr_link, "Qwen Code's mcpServers.herdr_link")
    assertDocMatches(doc.hooks.PreToolUse, written.hooks.PreToolUse, "Qwen Code's hooks.PreToolUse")
    removePieces(sb, "home/.qwen/settings.json", "PreToolUse")
    const entry = bin("@qwen-code/qwen-code/cli-entry.js")
    return {
      cmd: "bash",
      args: (prompt) => fromInteractiveShell(node22(), [entry, prompt, "--output-format", "json"]).args,
      env: sb.env({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_MODEL: "scripted" }),
    }
  },
}

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
