#!/usr/bin/env bash
# The main job: build the plugin (cdylib) and the bundled simulated Herdr, then run two agents
# talking through the plugin end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --lib
cargo build --quiet -p fake-herdr
cargo run --quiet --example two_agents
