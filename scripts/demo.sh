#!/usr/bin/env bash
# The main job: build the plugin (cdylib) and the bundled simulated Herdr, then run two agents
# talking through the plugin end to end. The first build takes a few minutes; cargo shows its
# progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== building the plugin (cargo build --lib)" >&2
cargo build --lib
echo "== building the simulated Herdr (cargo build -p fake-herdr)" >&2
cargo build -p fake-herdr
echo "== running two agents end to end (examples/two_agents.rs)" >&2
cargo run --quiet --example two_agents
