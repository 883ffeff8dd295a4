// The README's deployment: the bundle copied into an OpenCode plugins
// directory with the library next to it, and no HERDR_LINK_LIB.
import assert from "node:assert/strict"
import { copyFileSync, mkdirSync, readdirSync, symlinkSync } from "node:fs"
import { basename, join } from "node:path"
import { test } from "node:test"
import { pathToFileURL } from "node:url"
import { BUNDLE, LIB, ROOT, callJson, pluginInput, setupWorld, tempDir } from "./harness.mjs"

test("a deployed bundle finds the library next to itself", async () => {
  const world = setupWorld()
  // Like ~/.config/opencode: plugins/ plus the node_modules OpenCode installs there.
  const config = tempDir("opencode-config-")
  const plugins = join(config, "plugins")
  mkdirSync(plugins)
  symlinkSync(join(ROOT, "node_modules"), join(config, "node_modules"), "dir")
  copyFileSync(BUNDLE, join(plugins, "herdr-link.js"))
  copyFileSync(LIB, join(plugins, basename(LIB)))
  assert.deepEqual(readdirSync(plugins).filter((f) => /\.(js|ts)$/.test(f)), ["herdr-link.js"], "one plugin file")

  const saved = { lib: process.env.HERDR_LINK_LIB, target: process.env.CARGO_TARGET_DIR }
  delete process.env.HERDR_LINK_LIB
  delete process.env.CARGO_TARGET_DIR
  try {
    const mod = await import(pathToFileURL(join(plugins, "herdr-link.js")).href)
    const hooks = await mod.default(pluginInput(world.dir), {})
    assert.deepEqual(Object.keys(hooks.tool), ["herdr_link"])
    const res = await callJson(hooks, { action: "peers" }, { sessionID: "ses_deploy", directory: world.dir })
    assert.equal(res.self.name, "brain")
  } finally {
    process.env.HERDR_LINK_LIB = saved.lib
    if (saved.target !== undefined) process.env.CARGO_TARGET_DIR = saved.target
  }
})
