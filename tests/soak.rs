//! Soak and fault storm (ignored by default; `scripts/soak.sh` runs it in release and
//! BENCHMARKS.md reports it).
//!
//! 16 threads make `HERDR_LINK_SOAK_CALLS` (default 1,000,000) mixed calls through the C ABI
//! against the fake Herdr, into which a seeded random storm of faults is injected up front
//! (hangs, garbage output, signals, 16 MB outputs, invalid UTF-8, structured errors, delays), each
//! fault a window of 1–3 matching calls somewhere in the run. Most calls take paths that start no
//! process (bad requests, size refusals, activation, presentation, the Bash guard, `is_active`,
//! session end); one in `HERDR_LINK_SOAK_SPAWN_EVERY` (default 200) is peers, send, close, start
//! or a session start (whose bootstrap runs in the background), and these reach the fake Herdr.
//!
//! It reports RSS, open fds, threads and child processes at the start (after a warm-up) and at
//! the end, and asserts: no child process or zombie left; fds and threads back to the start;
//! RSS growth under 8 MiB; every Herdr call within its time limit + 100 ms (from the operator
//! log); every call that starts no process within the per-call limit + 100 ms (it never waits on
//! Herdr; the slowest is reported); every spawning call within the time limits of the Herdr
//! calls it can make + 100 ms; every answer a known code.

use rng::Rng;
use test_support::rng;
use test_support::world as common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{abi, children, serial, World};
use serde_json::{json, Value};

const THREADS: usize = 16;
/// `HERDR_LINK_TIMEOUT_MS` for the run.
const LIMIT_MS: u64 = 1000;
/// `HERDR_LINK_TURN_WAIT_MS` for the run: a send or close may wait this long for its delivery
/// turn on top of its Herdr calls' limits.
const TURN_WAIT_MS: u64 = 3000;
/// `HERDR_LINK_START_TIMEOUT_MS` for the run.
const START_LIMIT_MS: u64 = 2000;
const SLACK_MS: u64 = 100;

/// Codes an answer may carry besides the Link codes (`herdr_link::error::LINK_CODES`): the two
/// request-level errors and success.
const OTHER_CODES: [&str; 3] = ["INVALID_REQUEST", "INTERNAL_ERROR", "ok"];

fn env_usize(k: &str, default: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// RSS (KiB), open fds, threads, children, zombie children.
#[derive(Debug, Clone, Copy)]
struct Gauges {
    rss_kib: u64,
    fds: usize,
    threads: u64,
    children: usize,
    zombies: usize,
}

fn gauges() -> Gauges {
    let kids = children();
    let zombies = kids
        .iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, a)| a.trim_start().starts_with('Z'))
                })
                .unwrap_or(false)
        })
        .count();
    Gauges {
        rss_kib: status_kib("VmRSS:"),
        fds: std::fs::read_dir("/proc/self/fd").unwrap().count(),
        threads: status_kib("Threads:"),
        children: kids.len(),
        zombies,
    }
}

/// Waits (up to `limit`) for background work (bootstraps, the oplog writer) to settle.
fn settle(start: &Gauges, limit: Duration) -> Gauges {
    let deadline = Instant::now() + limit;
    loop {
        let g = gauges();
        if (g.children == 0 && g.threads <= start.threads && g.fds <= start.fds)
            || Instant::now() >= deadline
        {
            return g;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The faults: `n` windows of 1–3 matching calls at random positions among the calls each verb
/// is expected to see, with a random kind.
fn storm(w: &World, rng: &mut Rng, n: usize, spawning_ops: usize) -> Vec<String> {
    let verbs: [(&str, &str, usize); 8] = [
        ("agent", "get", spawning_ops * 2),
        ("agent", "list", spawning_ops / 5 + 1),
        ("agent", "prompt", spawning_ops / 5 + 1),
        ("pane", "close", spawning_ops / 10 + 1),
        ("pane", "get", spawning_ops / 10 + 1),
        ("tab", "create", spawning_ops / 10 + 1),
        ("agent", "start", spawning_ops / 10 + 1),
        ("tab", "close", spawning_ops / 20 + 1),
    ];
    let mut kinds = Vec::new();
    for _ in 0..n {
        let (area, verb, span) = verbs[rng.below(verbs.len())];
        let after = rng.below(span).to_string();
        let times = (1 + rng.below(3)).to_string();
        let (kind, opts): (&str, Vec<&str>) = match rng.below(10) {
            0 | 1 => ("hang", vec!["--hang"]),
            2 => ("signal 9", vec!["--signal", "9"]),
            3 => ("signal 11", vec!["--signal", "11"]),
            4 => ("garbage", vec!["--stdout", "this is not json {"]),
            5 => ("16 MB stdout", vec!["--big-stdout", "16777216"]),
            6 => ("invalid utf-8", vec!["--invalid-utf8"]),
            7 => (
                "structured error",
                vec![
                    "--stderr",
                    r#"{"error":{"code":"boom","message":"injected"}}"#,
                ],
            ),
            8 => (
                "partial then hang",
                vec!["--stdout", "{\"result\":", "--no-newline", "--hang"],
            ),
            _ => ("delay 50 ms", vec!["--delay-ms", "50"]),
        };
        let mut args = vec!["--after", after.as_str(), "--times", times.as_str()];
        args.extend(opts);
        w.fault(area, verb, &args);
        kinds.push(kind.to_string());
    }
    kinds
}

#[derive(Default)]
struct Stats {
    calls: AtomicUsize,
    spawning: AtomicUsize,
    quick_max_us: AtomicU64,
    spawn_max_over_us: AtomicU64,
    slow: Mutex<Vec<String>>,
    codes: Mutex<std::collections::BTreeMap<String, usize>>,
}

fn code_of(v: &Value) -> String {
    if v["ok"] == true {
        "ok".into()
    } else {
        v["error"]["code"].as_str().unwrap_or("?").to_string()
    }
}

fn worker(t: usize, calls: usize, spawn_every: usize, w: &World, stats: &Stats) {
    let a = abi();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1));
    let session = format!("soak-{t}");
    let dir = w.dir.to_string_lossy().to_string();
    let quick_requests = [
        "{\"session\":".to_string(),
        "[1,2,3]".to_string(),
        json!({"session": session, "tool": "nope"}).to_string(),
        json!({"session": session, "tool": "herdr_link", "input": {"action": "fly"}}).to_string(),
        json!({"session": session, "tool": "herdr_link", "input": {}}).to_string(),
        json!({"session": session, "tool": "herdr_link_send",
               "input": {"to": "worker-a", "message": "x".repeat(20_001)}})
        .to_string(),
        json!({"session": session, "tool": "herdr_link_start",
               "input": {"name": "x", "kind": "pi", "args": [], "bad": 1}})
        .to_string(),
        json!({"session": "k".repeat(2000), "tool": "herdr_link"}).to_string(),
        json!({"session": session, "tool": "herdr_link_start",
               "input": {"name": "x", "kind": "pi", "args": [], "junk": vec![0; 2000]}})
        .to_string(),
    ];
    let guard_commands = [
        "ls -la",
        "herdr agent wait worker-a",
        "herdr agent prompt worker-a hi --wait",
        "echo 'herdr agent wait x' && git status",
        "sh -c 'herdr agent wait x'",
    ];
    let temp = format!("tmp-{t}");
    for i in 0..calls {
        let spawn = spawn_every > 0 && rng.below(spawn_every) == 0;
        let started = Instant::now();
        let (answer, max_herdr_calls): (Option<Value>, u64) = if spawn {
            stats.spawning.fetch_add(1, Ordering::Relaxed);
            match rng.below(10) {
                0..=3 => (Some(a.tool(&session, "herdr_link_peers", json!({}))), 2 + 4),
                4..=6 => (
                    Some(a.tool(
                        &session,
                        "herdr_link_send",
                        json!({"to": "worker-a", "message": format!("soak {t} {i} ✓")}),
                    )),
                    3 + 4,
                ),
                7 => (
                    Some(a.tool_in(
                        &session,
                        "herdr_link_start",
                        json!({"name": temp, "kind": "pi", "args": ["--soak"]}),
                        std::path::Path::new(&dir),
                    )),
                    // self (with bootstrap), tab create, agent start (its own limit), rollback
                    8,
                ),
                8 => (
                    Some(a.tool(&session, "herdr_link_close", json!({"agent": temp}))),
                    3 + 4,
                ),
                _ => {
                    // Re-registering starts the bootstrap in the background.
                    a.start(&session);
                    (None, 0)
                }
            }
        } else {
            match rng.below(8) {
                0..=3 => {
                    let r = &quick_requests[rng.below(quick_requests.len())];
                    (Some(a.call_text(r)), 0)
                }
                4 => {
                    let style = ["deferred", "gateway", "mcp"][rng.below(3)];
                    let p = a.present(&session, style);
                    assert!(p["tools"].is_array(), "{p}");
                    (None, 0)
                }
                5 => {
                    let c = guard_commands[rng.below(guard_commands.len())];
                    let (v, reason) = a.guard(&session, c);
                    assert!((0..=2).contains(&v) && (v == 0) == reason.is_none());
                    (None, 0)
                }
                6 => {
                    a.active(&session);
                    (None, 0)
                }
                _ => {
                    a.end("soak-never-started");
                    (None, 0)
                }
            }
        };
        let took = started.elapsed();
        if let Some(v) = &answer {
            let code = code_of(v);
            assert!(
                herdr_link::error::LINK_CODES.contains(&code.as_str())
                    || OTHER_CODES.contains(&code.as_str()),
                "unknown code in {v}"
            );
            *stats.codes.lock().unwrap().entry(code).or_default() += 1;
        }
        if max_herdr_calls == 0 {
            stats
                .quick_max_us
                .fetch_max(took.as_micros() as u64, Ordering::Relaxed);
            // Its time limit is the per-call limit, though it never waits on Herdr.
            if took > Duration::from_millis(LIMIT_MS + SLACK_MS) {
                stats
                    .slow
                    .lock()
                    .unwrap()
                    .push(format!("quick call took {took:?}"));
            }
        } else {
            let bound = Duration::from_millis(
                (max_herdr_calls - 1) * LIMIT_MS
                    + START_LIMIT_MS.max(LIMIT_MS)
                    + TURN_WAIT_MS
                    + SLACK_MS,
            );
            let over = took.saturating_sub(bound - Duration::from_millis(SLACK_MS));
            stats
                .spawn_max_over_us
                .fetch_max(over.as_micros() as u64, Ordering::Relaxed);
            if took > bound {
                stats
                    .slow
                    .lock()
                    .unwrap()
                    .push(format!("spawning call took {took:?} (bound {bound:?})"));
            }
        }
        stats.calls.fetch_add(1, Ordering::Relaxed);
    }
    a.end(&session);
}

#[test]
#[ignore = "soak: run scripts/soak.sh (release build); see BENCHMARKS.md"]
fn soak_with_fault_storm() {
    let _g = serial();
    let total = env_usize("HERDR_LINK_SOAK_CALLS", 1_000_000);
    let spawn_every = env_usize("HERDR_LINK_SOAK_SPAWN_EVERY", 200);
    let seed = env_usize("HERDR_LINK_SOAK_SEED", 14) as u64;
    let w = World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [{"panes": [
                {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"},
                {"cwd": "/proj", "agent": "codex", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    );
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", LIMIT_MS.to_string());
    std::env::set_var("HERDR_LINK_TURN_WAIT_MS", TURN_WAIT_MS.to_string());
    std::env::set_var("HERDR_LINK_START_TIMEOUT_MS", START_LIMIT_MS.to_string());
    let log = w.dir.join("op.log");
    std::env::set_var("HERDR_LINK_LOG", &log);

    let a = abi();
    // Warm-up on as many threads (the allocator's per-thread arenas exist from here on): load
    // everything, start the oplog writer, touch every path.
    let warm = Stats::default();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (w, warm) = (&w, &warm);
            s.spawn(move || worker(100 + t, 500, 50, w, warm));
        }
    });
    let _ = settle(&gauges(), Duration::from_secs(5));
    let start = gauges();

    let spawning_expected = total / spawn_every.max(1);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let faults = storm(
        &w,
        &mut rng,
        (spawning_expected / 10).clamp(20, 2_000),
        spawning_expected,
    );
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for k in &faults {
        *kinds.entry(k.clone()).or_default() += 1;
    }

    let stats = Stats::default();
    let t0 = Instant::now();
    let mut mid = Vec::new();
    // RSS when half of the calls were made: growth after it tells a leak from a plateau.
    let mut half_rss = None;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (w, stats) = (&w, &stats);
            let n = total / THREADS + usize::from(t < total % THREADS);
            s.spawn(move || worker(t, n, spawn_every, w, stats));
        }
        // Sample the gauges while the storm runs.
        while stats.calls.load(Ordering::Relaxed) < total
            && t0.elapsed() < Duration::from_secs(6 * 3600)
        {
            std::thread::sleep(Duration::from_secs(5));
            let g = gauges();
            if half_rss.is_none() && stats.calls.load(Ordering::Relaxed) >= total / 2 {
                half_rss = Some(g.rss_kib);
            }
            mid.push(format!(
                "t={:>4}s calls={} rss={}KiB fds={} threads={} children={}",
                t0.elapsed().as_secs(),
                stats.calls.load(Ordering::Relaxed),
                g.rss_kib,
                g.fds,
                g.threads,
                g.children
            ));
        }
    });
    let elapsed = t0.elapsed();
    let end = settle(&start, Duration::from_secs(10));
    std::env::remove_var("HERDR_LINK_LOG");
    std::env::remove_var("HERDR_LINK_TIMEOUT_MS");
    std::env::remove_var("HERDR_LINK_TURN_WAIT_MS");
    std::env::remove_var("HERDR_LINK_START_TIMEOUT_MS");

    // Every Herdr call's duration, from the operator log.
    std::thread::sleep(Duration::from_secs(1));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let (mut herdr_calls, mut herdr_max_ms, mut over_limit) = (0usize, 0f64, Vec::new());
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        for c in entry["calls"].as_array().into_iter().flatten() {
            herdr_calls += 1;
            let ms = c["ms"].as_f64().unwrap();
            let argv = c["argv"].as_array().unwrap();
            let limit =
                if argv.first() == Some(&json!("agent")) && argv.get(1) == Some(&json!("start")) {
                    START_LIMIT_MS
                } else {
                    LIMIT_MS
                };
            herdr_max_ms = herdr_max_ms.max(ms);
            if ms > (limit + SLACK_MS) as f64 {
                over_limit.push(format!("{argv:?} {ms} ms"));
            }
            let outcome = c["outcome"].as_str().unwrap_or("?");
            let outcome = if outcome.starts_with("exit=") && outcome != "exit=0" {
                "exit!=0"
            } else {
                outcome
            };
            *outcomes.entry(outcome.to_string()).or_default() += 1;
        }
    }

    let report = format!(
        "soak: {total} calls on {THREADS} threads in {elapsed:.1?} ({:.0} calls/s); {} spawning \
         (1 in {spawn_every}: peers 40%, send 30%, start 10%, close 10%, session start 10%); \
         {} faults injected {kinds:?}\n\
         start: {start:?}\n\
         end:   {end:?}\n\
         RSS {:+} KiB (over the second half of the calls: {:+} KiB), fds {:+}, threads {:+}\n\
         codes: {:?}\n\
         Herdr calls in the operator log: {herdr_calls} (max {herdr_max_ms:.1} ms; outcomes {outcomes:?})\n\
         slowest quick call: {} µs; spawning calls' worst time past their limits: {} µs\n\
         samples:\n  {}",
        total as f64 / elapsed.as_secs_f64(),
        stats.spawning.load(Ordering::Relaxed),
        faults.len(),
        end.rss_kib as i64 - start.rss_kib as i64,
        end.rss_kib as i64 - half_rss.unwrap_or(start.rss_kib) as i64,
        end.fds as i64 - start.fds as i64,
        end.threads as i64 - start.threads as i64,
        stats.codes.lock().unwrap(),
        stats.quick_max_us.load(Ordering::Relaxed),
        stats.spawn_max_over_us.load(Ordering::Relaxed),
        mid.join("\n  "),
    );
    eprintln!("{report}");
    if let Some(out) = std::env::var_os("HERDR_LINK_SOAK_REPORT") {
        std::fs::write(out, &report).unwrap();
    }
    let _ = a;
    assert_eq!(end.children, 0, "child processes left");
    assert_eq!(end.zombies, 0, "zombies left");
    assert!(end.fds <= start.fds, "fds grew");
    assert!(end.threads <= start.threads, "threads grew");
    assert!(end.rss_kib < start.rss_kib + 8 * 1024, "RSS grew");
    assert!(
        over_limit.is_empty(),
        "Herdr calls over their limit: {over_limit:?}"
    );
    let slow = stats.slow.lock().unwrap();
    assert!(
        slow.is_empty(),
        "{} slow calls: {:?}",
        slow.len(),
        &slow[..slow.len().min(20)]
    );
}
