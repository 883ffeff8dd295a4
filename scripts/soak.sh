#!/usr/bin/env bash
# Soak and fault storm (not part of scripts/test.sh or CI): tests/soak.rs in a release build.
# 16 threads make HERDR_LINK_SOAK_CALLS mixed calls (default 1,000,000) through the C ABI while
# the fake Herdr injects a seeded storm of faults (hangs, garbage, signals, 16 MB outputs, invalid
# UTF-8, structured errors, delays). Prints RSS, open fds, threads and child processes at the
# start and the end and fails unless they are flat, no zombie is left and no call outlived its
# time limit + 100 ms. The figures of a run are in BENCHMARKS.md.
#
#   scripts/soak.sh                                  # 1,000,000 calls, 1 in 200 spawning
#   HERDR_LINK_SOAK_CALLS=100000 scripts/soak.sh     # a shorter run
#   HERDR_LINK_SOAK_SPAWN_EVERY=50 HERDR_LINK_SOAK_SEED=7 scripts/soak.sh
#
# The report is also written to $HERDR_LINK_SOAK_REPORT (default target/soak-report.txt).
#
# MALLOC_MMAP_THRESHOLD_=131072 (unless already set) pins glibc's mmap threshold: otherwise the
# first freed large buffer raises it, and the Herdr driver's output buffers (up to 8 MiB each,
# the output cap, on 16 threads at once when faults print 16 MB) are then kept by the per-thread
# malloc arenas, so RSS plateaus near threads x 8 MiB instead of returning to its start level,
# which would hide a leak behind the plateau. BENCHMARKS.md reports a run without it too.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$(pwd)/target}/release"
export HERDR_LINK_SOAK_REPORT="${HERDR_LINK_SOAK_REPORT:-$target/../soak-report.txt}"
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_-131072}"
cargo build --release -p fake-herdr
export HERDR_FAKE_BIN="$target/herdr"
unset HERDR_LINK_LIB
echo "soak: ${HERDR_LINK_SOAK_CALLS:-1000000} calls, 1 in ${HERDR_LINK_SOAK_SPAWN_EVERY:-200} spawning, seed ${HERDR_LINK_SOAK_SEED:-14}"
cargo test --release --test soak -- --ignored --nocapture
