#!/usr/bin/env bash
# Every test of the project, from a fresh machine that has the Rust toolchain, python3, node and
# npm: formatting and lints, the Rust unit and integration tests (the C ABI against the bundled
# fake Herdr), then each host's tests in its real runtime (C + valgrind, Python, Pi, OpenCode),
# the MCP server with an official MCP client, and the real Claude Code / Codex / OpenCode.
# Anything a test needs that is missing is installed here or is an error: nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

started=$SECONDS
step() { printf '\n=== %s (at %d s)\n' "$*" "$((SECONDS - started))"; }

step "rustfmt and clippy"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

step "build: the plugin (cdylib + header), the herdr-link binary and the fake Herdr"
cargo build --workspace --all-targets
target="${CARGO_TARGET_DIR:-$repo/target}/debug"
export HERDR_LINK_LIB="$target/libherdr_link.so"
export HERDR_FAKE_BIN="$target/herdr"
export HERDR_LINK_BIN="$target/herdr-link"

step "Rust tests (unit, C ABI integration, fake Herdr, MCP edge cases, header drift)"
cargo test --workspace

step "C ABI send and start suites again, against the fake Herdr playing 0.8.2"
HERDR_FAKE_VERSION=0.8.2 cargo test --test abi_ops --test abi_start

# 0.9.0's prompt path (the answer after the Enter, one submission at a time per pane): only the
# fake plays it; no 0.9 server could be built here (docs/herdr-versions.md).
step "C ABI send and start suites again, against the fake Herdr playing 0.9.0"
HERDR_FAKE_VERSION=0.9.0 cargo test --test abi_ops --test abi_start

step "fresh clone: the committed HEAD builds and passes the ABI surface tests with nothing beside it"
bash scripts/fresh-clone-check.sh

step "demo"
cargo run --quiet --example two_agents >/dev/null

step "playground: the docs' examples answer in the simulated Herdr world"
bash scripts/playground.sh bash tests/playground/check.sh

# The C host's valgrind run: 10,000 mixed library calls, zero bytes definitely/indirectly lost.
# It keeps one core busy for minutes, so it runs beside the other hosts' tests and the MCP
# client's (its output is shown when it ends; a failure fails the run).
export LEAK_CALLS="${LEAK_CALLS:-10000}"
step "host tests: hosts/c (valgrind), beside the next steps"
c_log="$(mktemp "${TMPDIR:-/tmp}/herdr-link-c-host.XXXXXX")"
bash hosts/c/run-tests.sh >"$c_log" 2>&1 &
c_pid=$!
for host in hosts/python hosts/opencode hosts/pi; do
  step "host tests: $host"
  bash "$host/run-tests.sh"
done

step "MCP server with an official MCP client"
bash tests/mcp/run.sh

step "host tests: hosts/c (valgrind), its result"
c_status=0
wait "$c_pid" || c_status=$?
cat "$c_log"
rm -f "$c_log"
[ "$c_status" -eq 0 ] || { echo "hosts/c/run-tests.sh failed (exit $c_status)" >&2; exit "$c_status"; }

# Claude Code, Codex and OpenCode themselves (pinned, npm ci into tests/hosts/node_modules),
# each driven by a scripted model on 127.0.0.1 in a fresh network namespace.
step "real hosts: Claude Code, Codex, OpenCode (plugin and MCP)"
bash tests/hosts/run.sh

step "all tests passed"
