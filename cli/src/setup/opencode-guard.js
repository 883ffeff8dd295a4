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
const SHIM = `${SHIM_DIR}/herdr`

// This OpenCode process's presence key, as its MCP server finds its host (asked once): a
// command that left OpenCode's process tree (setsid, nohup, a double fork) still finds it.
let presenceKey
function presence() {
  if (presenceKey === undefined) {
    const r = spawnSync(HERDR_LINK, ["shim-env", "--dir", SHIM_DIR, "--key"], { encoding: "utf8", timeout: 10000 })
    presenceKey = r.status === 0 ? (r.stdout || "").trim() : ""
  }
  return presenceKey
}

export const HerdrLinkGuard = async () => ({
  "shell.env": async (_input, output) => {
    if (process.env.HERDR_ENV !== "1") return
    const path = output.env.PATH ?? process.env.PATH ?? ""
    if (path !== SHIM_DIR && !path.startsWith(`${SHIM_DIR}:`)) output.env.PATH = path ? `${SHIM_DIR}:${path}` : SHIM_DIR
    const real = output.env.HERDR_BIN_PATH ?? process.env.HERDR_BIN_PATH
    if (real && real !== SHIM) {
      output.env.HERDR_LINK_HERDR = real
      output.env.HERDR_BIN_PATH = SHIM
    }
    const key = presence()
    if (key) output.env.HERDR_LINK_PRESENCE = key
  },
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "bash" || process.env.HERDR_ENV !== "1") return
    const r = spawnSync(HERDR_LINK, ["guard", "--host", "opencode", "--shim", SHIM_DIR], {
      input: JSON.stringify({ tool: input.tool, sessionID: input.sessionID, args: output.args }),
      encoding: "utf8",
      timeout: 10000,
    })
    if (r.status === 2) throw new Error((r.stderr || "").trim() || "blocked by the herdr-link guard")
  },
})
