//! Benchmark of the Bash-boundary guard (`cargo bench --bench guard`).
//!
//! A small hand timer: a warm-up, then K rounds of N calls each; prints the
//! median, minimum and maximum cost per call over the rounds, and the median
//! cost per input byte (to show that the cost is linear in the length).
//!
//! Costs are measured in thread CPU time (`CLOCK_THREAD_CPUTIME_ID`), which a
//! busy machine does not inflate; the median wall-clock time is printed too.

use herdr_link::guard::judge;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// CPU time consumed by this thread.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A realistic 100-byte Bash command of an agent.
const COMMAND_100B: &str =
    "cd /work/repo && git diff --stat HEAD~1 | head -n 20; herdr agent prompt reviewer \"Review it, thank\"";

/// Lines of a realistic shell script, repeated to build the larger inputs.
const SCRIPT_LINES: &[&str] = &[
    "#!/usr/bin/env bash",
    "set -euo pipefail",
    "# Build, test and notify the reviewer (never wait: herdr agent wait is blocked).",
    "ROOT=\"$(git rev-parse --show-toplevel)\"",
    "cd \"$ROOT\" && export RUST_LOG=info",
    "for crate in core cli plugin; do",
    "  if ! cargo test -p \"$crate\" --quiet 2>&1 | tee -a \"/tmp/test-$crate.log\"; then",
    "    echo \"tests failed in $crate\" >&2; exit 1",
    "  fi",
    "done",
    "files=$(git diff --name-only HEAD~1 | grep -E '\\.(rs|toml)$' || true)",
    "count=$(printf '%s\\n' \"$files\" | wc -l)",
    "cat > /tmp/summary.md <<'EOF'",
    "## Summary",
    "Use herdr_link_send, not herdr agent prompt --wait.",
    "EOF",
    "case \"${MODE:-fast}\" in fast) echo quick ;; full) make all ;; esac",
    "herdr agent prompt reviewer \"Changed $count files; see /tmp/summary.md\"",
    "[[ -n \"${CI:-}\" ]] && echo \"ci run\" || echo 'local run'",
];

fn script(target: usize) -> String {
    let mut s = String::with_capacity(target + 200);
    'outer: loop {
        for line in SCRIPT_LINES {
            if s.len() + line.len() + 1 > target {
                break 'outer;
            }
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

fn bench(name: &str, input: &str, iters: usize, rounds: usize) {
    for _ in 0..iters.div_ceil(4).max(1) {
        black_box(judge(black_box(input)));
    }
    let mut cpu = Vec::with_capacity(rounds);
    let mut wall = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (c, t) = (cpu_now(), Instant::now());
        for _ in 0..iters {
            black_box(judge(black_box(input)));
        }
        wall.push(t.elapsed().as_nanos() as f64 / iters as f64);
        cpu.push((cpu_now() - c).as_nanos() as f64 / iters as f64);
    }
    cpu.sort_by(|a, b| a.total_cmp(b));
    wall.sort_by(|a, b| a.total_cmp(b));
    let median = cpu[rounds / 2];
    println!(
        "{name:<26} {:>8} B  median {:>12.1} ns/call  min {:>12.1}  max {:>12.1}  {:>6.2} ns/byte  (wall median {:>12.1})  verdict {}",
        input.len(),
        median,
        cpu[0],
        cpu[rounds - 1],
        median / input.len() as f64,
        wall[rounds / 2],
        judge(input).code(),
    );
}

fn main() {
    assert_eq!(COMMAND_100B.len(), 100);
    bench("command 100 B", COMMAND_100B, 200_000, 15);
    bench("script 10 KB", &script(10 * 1024), 2_000, 15);
    bench("script 100 KB", &script(100 * 1024), 200, 11);
    bench("script 1 MB", &script(1024 * 1024), 20, 11);
    let wait_1mb = format!("{}herdr agent wait x\n", script(1024 * 1024 - 20));
    bench("script 1 MB, wait at end", &wait_1mb, 20, 11);
}
