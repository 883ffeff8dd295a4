#!/usr/bin/env bash
# Runs the OpenCode host tests: npm ci from the committed lock file, then
# typecheck against @opencode-ai/plugin's published types, build the bundle,
# and drive it under Node (koffi) and Bun (bun:ffi) against the fake Herdr.
#
# Env:
#   HERDR_LINK_LIB  the built library (default: $CARGO_TARGET_DIR or ../../target, release/)
#   HERDR_FAKE_BIN  the fake `herdr` binary (same default directory)
#   HERDR_LINK_BIN  the `herdr-link` binary (same default directory; the MCP-route guard test)
# Anything missing is an error, never a skip.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fail() { echo "hosts/opencode/run-tests.sh: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || fail "node is not installed (Node.js >= 20 is required)"
command -v npm >/dev/null 2>&1 || fail "npm is not installed"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' \
  || fail "Node.js >= 20 is required, found $(node --version)"

target="${CARGO_TARGET_DIR:-$repo/target}"
case "$(uname -s)" in
  Darwin) libname=libherdr_link.dylib ;;
  MINGW*|MSYS*|CYGWIN*) libname=herdr_link.dll ;;
  *) libname=libherdr_link.so ;;
esac
HERDR_LINK_LIB="${HERDR_LINK_LIB:-$target/release/$libname}"
HERDR_FAKE_BIN="${HERDR_FAKE_BIN:-$target/release/herdr}"
HERDR_LINK_BIN="${HERDR_LINK_BIN:-$target/release/herdr-link}"
[ -f "$HERDR_LINK_LIB" ] || fail "library not found: $HERDR_LINK_LIB (build it: cargo build --release; or set HERDR_LINK_LIB)"
[ -x "$HERDR_LINK_BIN" ] || fail "herdr-link not found: $HERDR_LINK_BIN (build it: cargo build --release; or set HERDR_LINK_BIN)"
[ -x "$HERDR_FAKE_BIN" ] || fail "fake herdr not found: $HERDR_FAKE_BIN (build it: cargo build --release -p fake-herdr; or set HERDR_FAKE_BIN)"
HERDR_LINK_LIB="$(cd "$(dirname "$HERDR_LINK_LIB")" && pwd)/$(basename "$HERDR_LINK_LIB")"
HERDR_FAKE_BIN="$(cd "$(dirname "$HERDR_FAKE_BIN")" && pwd)/$(basename "$HERDR_FAKE_BIN")"
HERDR_LINK_BIN="$(cd "$(dirname "$HERDR_LINK_BIN")" && pwd)/$(basename "$HERDR_LINK_BIN")"
export HERDR_LINK_LIB HERDR_FAKE_BIN HERDR_LINK_BIN

cd "$here"
npm ci --no-audit --no-fund
npm test
