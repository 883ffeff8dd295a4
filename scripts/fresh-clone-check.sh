#!/usr/bin/env bash
# The repository stands alone: clone the committed HEAD into an empty temporary directory (so
# no neighbouring folders beside it, no warm target/), build the library there in its own target
# directory and run the C ABI surface tests, which include the Contract's SHA-256 pin. One
# `cargo test` builds the library (cdylib + rlib) and the test, with one feature resolution.
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
if [ -z "${HERDR_FAKE_BIN:-}" ]; then
  cargo build -p fake-herdr
  export HERDR_FAKE_BIN="$CARGO_TARGET_DIR/debug/herdr"
fi
cargo test --test abi_surface
