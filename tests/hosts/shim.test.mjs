// The exec-boundary guard in each real host (issue 22): `herdr-link setup` installs the herdr
// shim and the host's way of putting it first on PATH; a `herdr agent wait` started by another
// program (python's subprocess, a Makefile recipe) then reaches Herdr while the session is
// dormant and is refused by the shim once it is active (exit 77, the guard's reason), and the
// fake Herdr's argv log holds no such wait; `herdr agent list` still runs through the shim.

import assert from "node:assert/strict"
import { symlinkSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { test } from "node:test"
import { assertRunHealthy, runRoute } from "./lib/e2e.mjs"
import { claude, codex, gemini, opencodeMcp, opencodePlugin, qwen } from "./lib/hosts.mjs"
import { LINK_BIN } from "./lib/sandbox.mjs"

// Programs the text guard cannot follow, each ending in an exec of `herdr` through PATH. The
// wait's own output (Herdr's agent record, with pane ids) stays out of the model's view.
const PY_WAIT = `python3 -c "import subprocess,sys; sys.exit(subprocess.run(['herdr','agent','wait','beta'],stdout=subprocess.DEVNULL).returncode)"; echo "py-exit=$?"`
const MAKE_WAIT = `make -s -f herdr-wait.mk; echo "make-exit=$?"`
const MAKEFILE = "all:\n\therdr agent wait beta >/dev/null\n"
const LIST = `herdr agent list >/dev/null && echo list-ran; echo "herdr-is=$(command -v herdr)"`
// Gemini CLI's shell tool refuses any command substitution: the same check without one.
const LIST_PLAIN = `herdr agent list >/dev/null && echo list-ran; command -v herdr | sed 's/^/herdr-is=/'`

function world(kind) {
  return (sb) => ({
    workspaces: [
      {
        cwd: sb.project,
        tabs: [
          {
            panes: [
              { cwd: sb.project, agent: kind, name: "brain", status: "working" },
              { cwd: sb.project, agent: "pi", name: "beta", status: "working" },
            ],
          },
        ],
      },
    ],
  })
}

const waits = (sb) => sb.argvLog().filter((a) => a.includes("agent") && a.includes("wait"))
const lists = (sb) => sb.argvLog().filter((a) => a[0] === "agent" && a[1] === "list")

const ONLY = process.env.HERDR_E2E_ONLY?.split(",")
const ROUTES = [claude, codex, opencodeMcp, opencodePlugin, gemini, qwen].filter((r) => !ONLY || ONLY.includes(r.name))

for (const route of ROUTES) {
  test(`${route.name}: the herdr shim lets waits through while dormant and refuses them once active`, async () => {
    const list = route === gemini ? LIST_PLAIN : LIST
    const goals = [
      { bash: list },
      { bash: PY_WAIT },
      { bash: MAKE_WAIT },
      { link: "activate" },
      { bash: PY_WAIT },
      { bash: MAKE_WAIT },
      { bash: list },
    ]
    const shimDir = (sb) => join(sb.xdg.data, "herdr-link", "shim")
    const routeWithShim = {
      ...route,
      setup(sb, model) {
        sb.file("project/herdr-wait.mk", MAKEFILE)
        const host = route.setup(sb, model)
        if (route === opencodePlugin) {
          // The plugin route has no setup command (its files are copied, hosts/opencode/README.md);
          // the shim link is what any `herdr-link setup` creates.
          mkdirSync(shimDir(sb), { recursive: true })
          symlinkSync(LINK_BIN, join(shimDir(sb), "herdr"))
        }
        return host
      },
    }
    const run = await runRoute(routeWithShim, goals, { world: world(route.agentKind) })
    try {
      assertRunHealthy(run)
      const [list, dPy, dMake, , aPy, aMake, aList] = run.steps.map((s) => String(s.output))
      const d = run.describe()
      // The host's commands find the shim first on PATH.
      assert.match(list, /list-ran/, d)
      assert.match(list, new RegExp(`herdr-is=${shimDir(run.sb).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/herdr`), d)
      // Dormant: both waits reached Herdr.
      assert.match(dPy, /py-exit=0/, d)
      assert.match(dMake, /make-exit=0/, d)
      assert.equal(waits(run.sb).length, 2, `waits before activation: ${JSON.stringify(waits(run.sb))}`)
      // Active: the shim refused both (the command ran: the text guard let it through), with
      // the guard's reason and its own exit status; nothing more reached Herdr.
      assert.match(aPy, /py-exit=77/, d)
      assert.match(aPy, /Blocked by Herdr Link/, d)
      assert.match(aMake, /make-exit=2/, d)
      assert.match(aMake, /Blocked by Herdr Link/, d)
      assert.match(aMake, /Error 77/, d)
      assert.match(aList, /list-ran/, d)
      assert.equal(waits(run.sb).length, 2, `waits after activation: ${JSON.stringify(waits(run.sb))}`)
      assert.ok(lists(run.sb).length >= 2, `agent list calls: ${JSON.stringify(lists(run.sb))}`)
    } finally {
      await run.done()
    }
  })
}
