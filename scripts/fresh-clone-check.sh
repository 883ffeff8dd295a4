#!/usr/bin/env bash
# The repository stands alone: clone the committed HEAD into an empty temporary directory (so
# no neighbouring folders beside it, no warm target/), build the library there in its own target
# directory, checking from the build log that it compiles none of the binary's crates, and run
# the C ABI surface tests, which include the Contract's SHA-256 pin.
# Uncommitted changes are not part of the clone; the cargo registry cache is reused.
#
# Environment: HERDR_FAKE_BIN (optional) the simulated Herdr the tests use; default: build it
# in the clone too.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

git clone --quiet --no-local --no-hardlinks "$repo" "$tmp/herdr-link"
cd "$tmp/herdr-link"
printf 'fresh clone of %s at %s in %s\n' "$repo" "$(git rev-parse --short HEAD)" "$tmp"
export CARGO_TARGET_DIR="$tmp/target"
# The library alone compiles none of the crates only the herdr-link binary needs (cli/: its MCP
# SDK, async runtime and config editors): in this empty target directory the build log names
# every crate compiled. (tests/lean_deps.rs checks the same on the dependency tree.)
CARGO_TERM_COLOR=never cargo build --lib 2>&1 | tee "$tmp/lib-build.log"
if grep -E '^ *Compiling (tokio|rmcp|schemars|futures[a-z_-]*|chrono|uuid|toml_edit|toml|similar|mio) v' "$tmp/lib-build.log"; then
  echo "fresh-clone-check: cargo build --lib compiled a crate only the herdr-link binary needs" >&2
  exit 1
fi
grep -q '^ *Compiling herdr-link v' "$tmp/lib-build.log" \
  || { echo "fresh-clone-check: the library build log names no herdr-link" >&2; exit 1; }
if [ -z "${HERDR_FAKE_BIN:-}" ]; then
  cargo build -p fake-herdr
  export HERDR_FAKE_BIN="$CARGO_TARGET_DIR/debug/herdr"
fi
cargo test --test abi_surface
