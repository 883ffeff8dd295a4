//! Memory stays flat over many mixed calls through the C ABI: `hl_tool_call` (validation errors,
//! gateway, and some that spawn the fake Herdr), `hl_bash_guard`, `hl_presentation`,
//! `hl_is_active` and session start/end (whose bootstrap spawns too). RSS is read from
//! `/proc/self/status` after a warm-up and again at the end.
//!
//! The quick test runs in every `cargo test`. The 100,000-call run is ignored by default:
//! `cargo build --release -p fake-herdr && cargo test --release --test memory -- --ignored --nocapture`
//! (figures in BENCHMARKS.md). Leak checking of a C host under valgrind lives with the C host.

use test_support::world as common;

use std::time::Instant;

use common::{abi, serial, World};
use serde_json::json;

/// Resident set size in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn world() -> World {
    World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [{"panes": [
                {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"}
            ]}]}
        ]}),
        "w1:p1",
    )
}

/// Runs `n` mixed calls; every 100 calls, `spawning` of them reach the fake Herdr.
fn mixed(w: &World, n: usize, spawning: usize) -> usize {
    let a = abi();
    let sessions = ["mem-a", "mem-b", "mem-c", "mem-d"];
    let requests = [
        "{\"session\":".to_string(),
        json!({"session": "mem-a", "tool": "nope", "input": {}}).to_string(),
        json!({"session": "mem-b", "tool": "herdr_link", "input": {}}).to_string(),
        json!({"session": "mem-c", "tool": "herdr_link", "input": {"action": "fly"}}).to_string(),
        json!({"session": "mem-d", "tool": "herdr_link_send", "input": {"message": "m"}})
            .to_string(),
        json!({"session": "mem-a", "tool": "herdr_link_start",
               "input": {"name": "x", "kind": "pi", "args": [], "bad": 1}})
        .to_string(),
        json!({"session": "mem-b", "tool": "herdr_link_start",
               "input": {"name": "x", "config_agent": "team"}, "context_dir": w.dir})
        .to_string(),
        json!({"session": "mem-c", "tool": "herdr_link_close", "input": {"agent": 7}}).to_string(),
    ];
    let peers = json!({"session": "mem-a", "tool": "herdr_link_peers", "input": {}}).to_string();
    let send = json!({"session": "mem-b", "tool": "herdr_link_send",
                      "input": {"to": "worker-a", "message": "memory ✓"}})
    .to_string();
    let mut spawned = 0;
    for i in 0..n {
        let slot = i % 100;
        if slot < spawning {
            spawned += 1;
            match slot % 3 {
                0 => assert_eq!(a.call_text(&peers)["ok"], true),
                1 => assert_eq!(a.call_text(&send)["ok"], true),
                // Re-registering starts the self-identity bootstrap in the background.
                _ => a.start("mem-churn"),
            }
            continue;
        }
        match i % 7 {
            0..=2 => {
                a.call_text(&requests[i % requests.len()]);
            }
            3 => {
                let (v, reason) = a.guard(sessions[1], "herdr agent prompt x hi --wait");
                assert_eq!((v, reason.is_some()), (1, true));
                a.guard(sessions[1], "ls -la");
            }
            4 => {
                let style = ["deferred", "gateway", "mcp"][i % 3];
                a.present(sessions[i % 4], style);
            }
            5 => {
                a.end("mem-never-started");
                a.active(sessions[i % 4]);
            }
            _ => {
                a.call_text(&requests[2]);
            }
        }
    }
    a.end("mem-churn");
    spawned
}

fn run(warm_up: usize, measured: usize, spawning: usize) -> (u64, u64) {
    let w = world();
    let a = abi();
    for s in ["mem-a", "mem-b", "mem-c", "mem-d"] {
        a.start(s);
    }
    mixed(&w, warm_up, spawning);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = rss_kib();
    let t = Instant::now();
    let mut spawned = 0;
    let mut trace = Vec::new();
    for _ in 0..4 {
        spawned += mixed(&w, measured / 4, spawning);
        trace.push(rss_kib());
    }
    // Let the last background bootstrap finish before reading.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let after = rss_kib();
    eprintln!(
        "{measured} mixed calls ({spawned} reached Herdr) in {:?}: RSS {before} KiB -> {after} KiB \
         ({:+} KiB; at each quarter {trace:?} KiB)",
        t.elapsed(),
        after as i64 - before as i64
    );
    assert!(common::children().is_empty());
    (before, after)
}

#[test]
fn rss_is_flat_over_20k_calls() {
    let _g = serial();
    let (before, after) = run(5_000, 20_000, 1);
    assert!(
        after < before + 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
}

#[test]
#[ignore = "100,000 calls: run by name, preferably with --release (see the module doc)"]
fn rss_is_flat_over_100k_calls() {
    let _g = serial();
    let (before, after) = run(10_000, 100_000, 3);
    assert!(
        after < before + 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
}

/// `hl_session_start` with the gate open starts a background bootstrap thread (one `agent get`
/// here); many of them leave nothing behind.
#[test]
#[ignore = "10,000 session starts: run by name, preferably with --release"]
fn rss_is_flat_over_10k_session_starts() {
    let _g = serial();
    let _w = world();
    let a = abi();
    let cycle = |n: usize| {
        for i in 0..n {
            let s = format!("mem-start-{}", i % 50);
            a.start(&s);
            a.end(&s);
            if i % 50 == 49 {
                // Let this batch's bootstraps finish (each spawns the fake once).
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    cycle(2_000);
    let before = rss_kib();
    let mut trace = Vec::new();
    for _ in 0..4 {
        cycle(2_500);
        trace.push(rss_kib());
    }
    let after = rss_kib();
    eprintln!(
        "10000 session starts: RSS {before} KiB -> {after} KiB ({:+} KiB; at each quarter {trace:?} KiB)",
        after as i64 - before as i64
    );
    assert!(common::children().is_empty());
    assert!(
        after < before + 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
}
