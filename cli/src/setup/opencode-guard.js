// herdr-link Bash guard for OpenCode: written by `herdr-link setup opencode`, removed by
// `herdr-link setup opencode --uninstall`. Before each `bash` tool call inside Herdr it asks
// `herdr-link guard --host opencode` (the same hook Claude Code and Codex run); exit status 2
// blocks the call and its stderr is the reason the model sees.
import { spawnSync } from "node:child_process"

const HERDR_LINK = __HERDR_LINK_BIN__

export const HerdrLinkGuard = async () => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "bash" || process.env.HERDR_ENV !== "1") return
    const r = spawnSync(HERDR_LINK, ["guard", "--host", "opencode"], {
      input: JSON.stringify({ tool: input.tool, sessionID: input.sessionID, args: output.args }),
      encoding: "utf8",
      timeout: 10000,
    })
    if (r.status === 2) throw new Error((r.stderr || "").trim() || "blocked by the herdr-link guard")
  },
})
