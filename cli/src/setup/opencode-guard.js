// herdr-link Bash guard for OpenCode: written by `herdr-link setup opencode`, removed by
// `herdr-link setup opencode --uninstall`. It gives OpenCode's shell commands the herdr shim's
// environment (`shell.env`: the shim first on PATH, $HERDR_BIN_PATH naming it, this host's
// presence key), and before each `bash` tool call inside Herdr it asks
// `herdr-link guard --host opencode` (the same hook Claude Code and Codex run); exit status 2
// blocks the call and its stderr is the reason the model sees.
import { spawnSync } from "node:child_process"

const HERDR_LINK = __HERDR_LINK_BIN__
// The herdr shim (Herdr's CLI front, which refuses waits of an active session where the command
// really runs): first on PATH for every shell command OpenCode runs inside Herdr.
const SHIM_DIR = __HERDR_LINK_SHIM_DIR__

// What this OpenCode process's shell commands need set, as `herdr-link shim-env --json` works it
// out from their PATH and HERDR_BIN_PATH (the library's rule: the shim first on PATH,
// $HERDR_BIN_PATH naming it, the real Herdr kept, the presence key a command that left
// OpenCode's process tree still finds): asked once for each PATH and HERDR_BIN_PATH seen.
const envFor = new Map()
function shimEnv(path, real) {
  const id = `${path}\0${real ?? ""}`
  if (!envFor.has(id)) {
    const env = { ...process.env, PATH: path }
    if (real === undefined) delete env.HERDR_BIN_PATH
    else env.HERDR_BIN_PATH = real
    const r = spawnSync(HERDR_LINK, ["shim-env", "--dir", SHIM_DIR, "--json"], { env, encoding: "utf8", timeout: 10000 })
    let set = {}
    try {
      if (r.status === 0) set = JSON.parse(r.stdout)
    } catch {}
    envFor.set(id, set)
  }
  return envFor.get(id)
}

export const HerdrLinkGuard = async () => ({
  "shell.env": async (_input, output) => {
    if (process.env.HERDR_ENV !== "1") return
    const path = output.env.PATH ?? process.env.PATH ?? ""
    Object.assign(output.env, shimEnv(path, output.env.HERDR_BIN_PATH ?? process.env.HERDR_BIN_PATH))
  },
  "tool.execute.before": async (input, output) => {
    if (input.tool !== __HERDR_LINK_SHELL_TOOL__ || process.env.HERDR_ENV !== "1") return
    const r = spawnSync(HERDR_LINK, ["guard", "--host", "opencode", "--shim", SHIM_DIR], {
      input: JSON.stringify({ tool: input.tool, sessionID: input.sessionID, args: output.args }),
      encoding: "utf8",
      timeout: 10000,
    })
    if (r.status === 2) throw new Error((r.stderr || "").trim() || "blocked by the herdr-link guard")
  },
})
