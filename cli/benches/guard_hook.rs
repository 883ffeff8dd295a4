//! Benchmark of the `herdr-link guard` pre-tool hook: wall time from spawning the process
//! (exec) to reaping its exit, with a real Claude Code `PreToolUse` input written to its stdin.
//!
//! `cargo bench --bench guard_hook` (release build). Cases:
//!   * an ordinary command (the common case: judged, allowed, no state read);
//!   * `herdr agent wait` with no server (judged, host found, no state: allowed);
//!   * `herdr agent wait` with an activated `herdr-link mcp` of the same host (this bench
//!     process): the full path to a block. Needs the fake Herdr next to `herdr-link`
//!     (`cargo build --release -p fake-herdr`); skipped with a note otherwise;
//!   * the same block through `sh -c`, as Claude Code runs hooks (includes the shell).
//!
//! `HOOK_BENCH_RUNS` sets the samples per case (default 300). The bar is a median of 5 ms for
//! the hook itself (the `sh -c` row is for reference); `HOOK_BENCH_ENFORCE=1` makes missing it
//! exit 1.

use test_support::mcp as harness;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const BAR_MS: f64 = 5.0;

fn input(command: &str) -> Vec<u8> {
    json!({"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": "/tmp",
           "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": command, "description": "bench"}, "tool_use_id": "toolu_bench"})
    .to_string()
    .into_bytes()
}

/// One hook run; returns its exec→exit time and exit code.
fn one(argv: &[&str], stdin: &[u8]) -> (Duration, i32) {
    let started = Instant::now();
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .env_remove("HERDR_LINK_LOG")
        .env("HERDR_LINK_LOG_OFF", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the hook");
    let mut pipe = child.stdin.take().unwrap();
    let _ = pipe.write_all(stdin);
    drop(pipe);
    let status = child.wait().unwrap();
    (started.elapsed(), status.code().unwrap_or(-1))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One case: a label, the argv, the stdin and the exit code it must give.
struct Case<'a> {
    label: &'static str,
    argv: Vec<&'a str>,
    stdin: Vec<u8>,
    code: i32,
    /// Counted against the bar (the `/bin/true` floor and the `sh -c` row are references).
    bar: bool,
}

/// Runs every case `runs` times, interleaved (one sample of each case per round, so a busy
/// machine slows every case alike); prints the figures; returns the worst median of the
/// cases under the bar.
fn run_cases(cases: &[Case<'_>], runs: usize) -> f64 {
    for c in cases {
        for _ in 0..5 {
            one(&c.argv, &c.stdin); // warm the page cache
        }
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); cases.len()];
    for _ in 0..runs {
        for (c, s) in cases.iter().zip(samples.iter_mut()) {
            let (d, code) = one(&c.argv, &c.stdin);
            assert_eq!(code, c.code, "{}: unexpected exit code", c.label);
            s.push(d.as_secs_f64() * 1000.0);
        }
    }
    let mut worst: f64 = 0.0;
    for (c, ms) in cases.iter().zip(samples.iter_mut()) {
        ms.sort_by(f64::total_cmp);
        let median = percentile(ms, 0.5);
        println!(
            "{:<46} exit {}  median {median:.2} ms  min {:.2}  p90 {:.2}  max {:.2}  ({runs} runs)",
            c.label,
            c.code,
            ms[0],
            percentile(ms, 0.9),
            ms[ms.len() - 1]
        );
        if c.bar {
            worst = worst.max(median);
        }
    }
    worst
}

/// An activated `herdr-link mcp` child of this process (so this process is its host).
fn activated_server(world: &harness::World) -> harness::Server {
    let mut s = harness::Server::start(&world.inside(), &[], None);
    s.handshake();
    let answer = s.call(1, "herdr_link", json!({})).pop().unwrap();
    assert!(answer.to_string().contains("active"), "{answer}");
    s
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_herdr-link"));
    let runs = std::env::var("HOOK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(300);
    let b = bin.to_str().unwrap();
    let hook = vec![b, "guard", "--host", "claude"];
    println!("binary: {b}");
    let floor = || Case {
        label: "floor: /bin/true (spawn+wait, reference)",
        argv: vec!["/bin/true"],
        stdin: Vec::new(),
        code: 0,
        bar: false,
    };
    let ordinary = || Case {
        label: "ordinary command (allow)",
        argv: hook.clone(),
        stdin: input("ls -la src"),
        code: 0,
        bar: true,
    };
    println!("-- no MCP server in this host");
    let mut worst = run_cases(
        &[
            floor(),
            ordinary(),
            Case {
                label: "herdr agent wait, no server (allow)",
                argv: hook.clone(),
                stdin: input("herdr agent wait beta"),
                code: 0,
                bar: true,
            },
        ],
        runs,
    );
    let script = format!("{b} guard --host claude; exit $?");
    if bin.with_file_name("herdr").is_file() {
        let world = harness::World::new(harness::WORLD);
        let server = activated_server(&world);
        println!("-- an activated herdr-link mcp child of this process (the host)");
        worst = worst.max(run_cases(
            &[
                floor(),
                ordinary(),
                Case {
                    label: "herdr agent wait, activated server (block)",
                    argv: hook.clone(),
                    stdin: input("herdr agent wait beta"),
                    code: 2,
                    bar: true,
                },
                Case {
                    label: "same through sh -c (reference)",
                    argv: vec!["sh", "-c", &script],
                    stdin: input("herdr agent wait beta"),
                    code: 2,
                    bar: false,
                },
            ],
            runs,
        ));
        drop(server);
    } else {
        println!(
            "activated server: skipped, no fake herdr next to {b} (cargo build --release -p fake-herdr)"
        );
    }
    let ok = worst <= BAR_MS;
    println!(
        "bar (median exec→exit ≤ {BAR_MS} ms for every hook case): {}",
        if ok { "met" } else { "MISSED" }
    );
    if !ok && std::env::var("HOOK_BENCH_ENFORCE").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}
