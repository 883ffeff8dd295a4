// The host wiring as the docs give it: tests configure each host from the fenced blocks of
// docs/mcp.md and hosts/opencode/README.md, so a doc snippet that stops working fails a test.

import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { LINK_BIN, REPO } from "./sandbox.mjs"

/** The `index`-th fenced block of language `lang` in the section whose heading starts `heading`. */
export function fencedBlock(file, heading, lang, index = 0) {
  const text = readFileSync(join(REPO, file), "utf8")
  const at = text.split("\n").findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, "").startsWith(heading))
  assert.ok(at >= 0, `${file} has no section "${heading}"`)
  const lines = text.split("\n").slice(at + 1)
  const end = lines.findIndex((l) => /^#{1,2} /.test(l))
  const section = (end >= 0 ? lines.slice(0, end) : lines).join("\n")
  const blocks = [...section.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "gm"))].map((m) => m[1])
  assert.ok(blocks[index] !== undefined, `${file} "${heading}" has no ${lang} block #${index}`)
  return blocks[index]
}

/** A snippet with the `herdr-link` command replaced by the binary under test. */
export function withBinary(snippet) {
  assert.ok(snippet.includes('"herdr-link"'), `snippet does not run "herdr-link": ${snippet}`)
  return snippet.replaceAll('"herdr-link"', JSON.stringify(LINK_BIN))
}
