//! Startup benchmark for `herdr-link mcp`: the time from spawning the process to reading its
//! `initialize` response, and the peak RSS (VmHWM) of the server over a short session.
//!
//! `cargo bench --bench mcp_startup` (release build). Runs outside Herdr, and also inside a
//! fake Herdr world when the fake `herdr` binary sits next to `herdr-link` (build it with
//! `cargo build --release -p fake-herdr`). `MCP_BENCH_RUNS` sets the number of runs (default
//! 50). The bars are 10 ms and 10 MB; `MCP_BENCH_ENFORCE=1` makes missing them exit 1.

use test_support::mcp as harness;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BAR_MS: f64 = 10.0;
const BAR_MB: f64 = 10.0;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

/// The rest of a session, after `initialize`: what a host does first.
const SESSION: &[&str] = &[
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"herdr_link_peers","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"worker","message":"bench"}}}"#,
];

struct Run {
    startup: Duration,
    hwm_kb: u64,
}

fn vm_hwm_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn one_run(bin: &Path, env: &[(String, String)]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.arg("mcp");
    for k in [
        "HERDR_ENV",
        "HERDR_BIN_PATH",
        "HERDR_PANE_ID",
        "HERDR_LINK_LOG",
    ] {
        cmd.env_remove(k);
    }
    // Measured without the operator log, as before it was on by default (and never the user's).
    cmd.env("HERDR_LINK_LOG_OFF", "1");
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn herdr-link mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin.write_all(INIT.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let startup = started.elapsed();
    assert!(
        line.contains("\"serverInfo\""),
        "unexpected initialize answer: {line}"
    );
    // Each request gets its answer (activation also a list_changed notification first).
    for msg in SESSION {
        stdin.write_all(msg.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let sent: serde_json::Value = serde_json::from_str(msg).unwrap();
        let Some(id) = sent.get("id") else { continue };
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "EOF before answer {id}"
            );
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            if frame.get("id") == Some(id) {
                break;
            }
        }
    }
    let hwm_kb = vm_hwm_kb(child.id());
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "herdr-link mcp exited with {status}");
    Run { startup, hwm_kb }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// Runs `runs` sessions and prints the figures; returns whether both bars were met.
fn report(label: &str, bin: &Path, env: &[(String, String)], runs: usize) -> bool {
    let _ = one_run(bin, env); // warm the page cache
    let results: Vec<Run> = (0..runs).map(|_| one_run(bin, env)).collect();
    let mut ms: Vec<f64> = results
        .iter()
        .map(|r| r.startup.as_secs_f64() * 1000.0)
        .collect();
    ms.sort_by(f64::total_cmp);
    let peak_mb = results.iter().map(|r| r.hwm_kb).max().unwrap_or(0) as f64 / 1024.0;
    let median = percentile(&ms, 0.5);
    println!(
        "{label}: start→initialize response over {runs} runs: min {:.2} ms, median {median:.2} ms, p95 {:.2} ms, max {:.2} ms; peak RSS {peak_mb:.2} MB",
        ms[0],
        percentile(&ms, 0.95),
        ms[ms.len() - 1],
    );
    let ok = median <= BAR_MS && peak_mb <= BAR_MB;
    println!(
        "{label}: bars (median ≤ {BAR_MS} ms, peak RSS ≤ {BAR_MB} MB): {}",
        if ok { "met" } else { "MISSED" }
    );
    ok
}

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_herdr-link"));
    let runs = std::env::var("MCP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(50);
    println!("binary: {}", bin.display());
    let mut ok = report("outside Herdr", &bin, &[], runs);
    let fake = bin.with_file_name("herdr");
    if fake.is_file() {
        let world = harness::World::new(harness::WORLD);
        ok &= report("inside Herdr (fake)", &bin, &world.inside(), runs);
    } else {
        println!(
            "inside Herdr (fake): skipped, no fake herdr at {} (cargo build --release -p fake-herdr)",
            fake.display()
        );
    }
    if !ok && std::env::var("MCP_BENCH_ENFORCE").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}
