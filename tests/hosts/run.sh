#!/usr/bin/env bash
# End-to-end tests in the real agent hosts (Claude Code, Codex, OpenCode), pinned in
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

# The pinned hosts: one download, reused until package-lock.json changes.
stamp="$here/node_modules/.installed-lock"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of the pinned hosts failed"
  cp "$here/package-lock.json" "$stamp"
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
