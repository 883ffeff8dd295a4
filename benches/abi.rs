//! `cargo bench --bench abi [-- a b c d]`: the C ABI's cost, measured through the built cdylib
//! (loaded with libloading, exactly as a host loads it) against the bundled fake Herdr (release
//! build; built on first use).
//!
//! * (a) `send`, `peers`, `close` through `hl_tool_call` versus spawning the same Herdr argvs
//!   directly with `std::process::Command`, interleaved, as a ratio of medians (bar ≤ 1.10);
//! * (b) `hl_bash_guard` per call;
//! * (c) `hl_tool_call` paths that spawn nothing (validation errors, gateway; bar ≤ 20 µs);
//! * (d) throughput of 16 threads on distinct sessions against 1 thread (`peers`);
//! * (t) delivery turns (src/turn.rs): a lone send's added cost (lock + bookkeeping) against a
//!   send, and against the send of another build (`HL_BENCH_OLD_LIB=<its cdylib>`, e.g. the
//!   library before turns); N sends to one receiver; N senders to N receivers.
//! * (o) peers, send and close per call through the C ABI and through `herdr-link mcp`, against
//!   the same argvs spawned directly, with 0, 1,000 and 10,000 other receivers' entries in the
//!   turn directory; side by side with another build (`HL_BENCH_OLD_LIB=<cdylib>`,
//!   `HL_BENCH_OLD_MCP=<its herdr-link>`).
//! * (f) the same three per call, against the bare argv floor: the operation's argvs spawned by
//!   a C `posix_spawn` harness (benches/static-herdr/floor_spawn.c) of a static fake Herdr CLI
//!   that keeps no state (benches/static-herdr/static_herdr.c), both built with `cc -O2 -static`;
//!   0, 1,000 and 10,000 other receivers' entries; side by side with another build as in (o).
//!
//! Numbers are printed (median, min, max); nothing is asserted, the machine is noisy. Set
//! `BENCH_ITERS` to change the sample count of (a) (default 200) and (f) (default 80). Results:
//! BENCHMARKS.md. Run (o) and (f) inside `unshare -m` with a tmpfs over the turn directory's
//! parent (`/tmp/herdr-link-<uid>`): they add 33,000 entries to it.

use test_support::world as common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::{abi, World};
use serde_json::{json, Value};

/// The benches' figures are measured without the operator log (on by default since issue 39),
/// except where a row says it is on: every world the benches make turns it off again.
fn quiet(w: World) -> World {
    std::env::set_var("HERDR_LINK_LOG_OFF", "1");
    w
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --benches` runs bench binaries without `--bench`: nothing to measure then.
        println!("abi bench: run it with `cargo bench --bench abi`");
        return;
    }
    let sections: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| sections.is_empty() || sections.contains(&s);
    ensure_fake();
    machine();
    if want("a") {
        spawning_ratio();
    }
    if want("p") {
        driver_per_spawn();
    }
    if want("b") {
        bash_guard();
    }
    if want("c") {
        no_spawn_paths();
    }
    if want("d") {
        throughput();
    }
    if want("t") {
        turns();
    }
    if want("o") {
        history();
    }
    if want("f") {
        bare_floor();
    }
}

// ---------------------------------------------------------------------------------------------
// Reporting

struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
    n: usize,
}

fn stats(samples: &[Duration]) -> Stats {
    let mut v = samples.to_vec();
    v.sort();
    Stats {
        median: v[v.len() / 2],
        min: v[0],
        max: v[v.len() - 1],
        n: v.len(),
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn row(name: &str, s: &Stats) {
    println!(
        "  {name:<58} median {:>10.2} µs   min {:>10.2} µs   max {:>10.2} µs   (n={})",
        us(s.median),
        us(s.min),
        us(s.max),
        s.n
    );
}

fn machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!(
        "machine: {cores} cores, {cpu}, Linux {}; fake Herdr: {}",
        kernel.trim(),
        common::fake_bin().display()
    );
}

/// Builds the release fake Herdr next to this bench binary when it is not there yet.
fn ensure_fake() {
    let bin = common::target_dir().join("herdr");
    if bin.is_file() || std::env::var_os("HERDR_FAKE_BIN").is_some() {
        return;
    }
    let target = common::target_dir();
    let target_root = target.parent().expect("target dir");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("building the release fake Herdr into {}", target.display());
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "fake-herdr", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_root)
        .status()
        .expect("run cargo");
    assert!(status.success(), "building fake-herdr failed");
}

// ---------------------------------------------------------------------------------------------
// (a) hl_tool_call versus the same argvs spawned directly

/// Spawns one argv against the fake as a plain caller would: output collected, JSON parsed.
fn direct(argv: &[String]) {
    let out = Command::new(common::fake_bin())
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("spawn fake");
    assert!(out.status.success(), "{argv:?}: {out:?}");
    let _: Value = serde_json::from_slice(&out.stdout).expect("JSON");
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Creates an agent `victim` in a new tab of w1 (untimed setup for close); returns its pane.
fn new_victim(w: &World) -> String {
    let created: Value =
        serde_json::from_str(&w.admin(&["tab", "create", "--workspace", "w1", "--no-focus"]))
            .unwrap();
    let pane = created["result"]["root_pane"]["pane_id"]
        .as_str()
        .unwrap()
        .to_string();
    w.admin(&["agent", "start", "victim", "--kind", "pi", "--pane", &pane]);
    pane
}

/// One round of an interleaved comparison: which side runs first alternates, and samples are
/// kept once the 10 warm-up rounds are over.
fn round(
    i: usize,
    run_lib: impl FnOnce() -> Duration,
    run_raw: impl FnOnce() -> Duration,
    lib: &mut Vec<Duration>,
    raw: &mut Vec<Duration>,
) {
    let (l, r) = if i % 2 == 0 {
        let l = run_lib();
        (l, run_raw())
    } else {
        let r = run_raw();
        (run_lib(), r)
    };
    if i >= 10 {
        lib.push(l);
        raw.push(r);
    }
}

fn iterations() -> usize {
    std::env::var("BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn spawning_ratio() {
    println!("\n(a) hl_tool_call vs the same Herdr argvs spawned directly (fake Herdr, release)");
    let a = abi();
    let n = iterations();
    let wrapper = herdr_link::protocol::Envelope::build("brain", "worker-a", "bench message")
        .unwrap()
        .wrapper();
    let mut summary = Vec::new();
    for op in ["peers", "send", "close"] {
        let w = quiet(World::standard());
        let session = format!("bench-{op}");
        // Each send sample sleeps one turn gap first: fewer of them.
        let n = if op == "send" { n.min(60) } else { n };
        let mut lib = Vec::with_capacity(n);
        let mut raw = Vec::with_capacity(n);
        for i in 0..n + 10 {
            let (request, argvs) = match op {
                "peers" => (
                    json!({"session": session, "tool": "herdr_link_peers", "input": {}}),
                    vec![
                        strings(&["agent", "get", "w1:p1"]),
                        strings(&["agent", "list"]),
                    ],
                ),
                "send" => (
                    json!({"session": session, "tool": "herdr_link_send",
                           "input": {"to": "worker-a", "message": "bench message"}}),
                    vec![
                        strings(&["agent", "get", "w1:p1"]),
                        strings(&["agent", "get", "worker-a"]),
                        strings(&["agent", "prompt", "worker-a", &wrapper]),
                    ],
                ),
                _ => (
                    json!({"session": session, "tool": "herdr_link_close",
                           "input": {"agent": "victim"}}),
                    Vec::new(),
                ),
            };
            let request = request.to_string();
            let run_lib = || {
                if op == "close" {
                    new_victim(&w);
                }
                if op == "send" {
                    // Untimed: let the previous send's Enter pass, so this is a lone send that
                    // waits for no turn (what (a) compares); (t) measures the waits.
                    std::thread::sleep(TURN_GAP);
                }
                let t = Instant::now();
                let r = a.call_text(&request);
                let took = t.elapsed();
                assert_eq!(r["ok"], true, "{op}: {r}");
                took
            };
            let run_raw = || {
                let argvs = if op == "close" {
                    let pane = new_victim(&w);
                    vec![
                        strings(&["agent", "get", "w1:p1"]),
                        strings(&["agent", "get", "victim"]),
                        strings(&["pane", "close", &pane]),
                    ]
                } else {
                    argvs.clone()
                };
                let t = Instant::now();
                for argv in &argvs {
                    direct(argv);
                }
                t.elapsed()
            };
            round(i, run_lib, run_raw, &mut lib, &mut raw);
        }
        let (sl, sr) = (stats(&lib), stats(&raw));
        let calls = if op == "peers" { 2 } else { 3 };
        row(&format!("{op}: hl_tool_call ({calls} Herdr calls)"), &sl);
        row(
            &format!("{op}: direct spawns of the same {calls} argvs"),
            &sr,
        );
        let ratio = sl.median.as_secs_f64() / sr.median.as_secs_f64();
        let ratio_min = sl.min.as_secs_f64() / sr.min.as_secs_f64();
        println!("  {op}: ratio of medians {ratio:.3} (of minimums {ratio_min:.3}); bar ≤ 1.10");
        summary.push((op, ratio));
    }
    for (op, ratio) in summary {
        println!("  RATIO {op} {ratio:.3}");
    }
}

/// One spawn through the library's driver (`herdr::process::run`) against `Command::output`,
/// interleaved: where the difference of (a) comes from.
fn driver_per_spawn() {
    println!("\n(p) one `agent list` spawn: the driver (herdr::process::run) vs Command::output");
    let _w = quiet(World::standard());
    let bin = common::fake_bin();
    let bin_str = bin.to_str().unwrap();
    let argv = strings(&["agent", "list"]);
    let n = iterations();
    let (mut lib, mut raw) = (Vec::new(), Vec::new());
    for i in 0..n + 10 {
        let run_lib = || {
            let t = Instant::now();
            let f = herdr_link::internal::run(bin_str, &["agent", "list"], Duration::from_secs(10))
                .unwrap();
            let took = t.elapsed();
            assert_eq!(f.exit, herdr_link::internal::Exit::Code(0));
            took
        };
        let run_raw = || {
            let t = Instant::now();
            direct(&argv);
            t.elapsed()
        };
        round(i, run_lib, run_raw, &mut lib, &mut raw);
    }
    let (sl, sr) = (stats(&lib), stats(&raw));
    row("herdr::process::run", &sl);
    row("Command::output + JSON parse", &sr);
    println!(
        "  ratio of medians {:.3}",
        sl.median.as_secs_f64() / sr.median.as_secs_f64()
    );
}

// ---------------------------------------------------------------------------------------------
// (b) hl_bash_guard per call, (c) no-spawn hl_tool_call paths

/// Times `batch` calls of `f` per sample, `samples` times; returns per-call durations.
fn per_call(samples: usize, batch: usize, mut f: impl FnMut()) -> Vec<Duration> {
    for _ in 0..batch {
        f();
    }
    (0..samples)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed() / batch as u32
        })
        .collect()
}

fn bash_guard() {
    println!("\n(b) hl_bash_guard per call (batches of 2000, 40 samples)");
    let _w = quiet(World::standard());
    let a = abi();
    assert_eq!(a.tool("bench-guard", "herdr_link", json!({}))["ok"], true);
    let long = format!(
        "{} && herdr agent prompt x hi --wait",
        "echo step; ".repeat(400)
    );
    let cases: [(&str, &str, String); 6] = [
        ("active, allowed (`ls -la`)", "bench-guard", "ls -la".into()),
        (
            "active, allowed (`herdr agent list`)",
            "bench-guard",
            "herdr agent list".into(),
        ),
        (
            "active, blocked (`herdr agent prompt x hi --wait`)",
            "bench-guard",
            "herdr agent prompt x hi --wait".into(),
        ),
        (
            "active, block + end turn (`herdr agent wait x`)",
            "bench-guard",
            "herdr agent wait x".into(),
        ),
        (
            "active, 4.4 KB command (blocked at the end)",
            "bench-guard",
            long,
        ),
        (
            "dormant session (always 0)",
            "bench-guard-dormant",
            "herdr agent wait x".into(),
        ),
    ];
    for (label, session, command) in cases {
        let s = std::ffi::CString::new(session).unwrap();
        let c = std::ffi::CString::new(command).unwrap();
        let samples = per_call(40, 2000, || {
            let mut reason: *mut std::ffi::c_char = std::ptr::null_mut();
            // SAFETY: valid C strings and out pointer; the reason is released at once.
            unsafe {
                (a.bash_guard)(s.as_ptr(), c.as_ptr(), &mut reason);
                (a.free)(reason);
            }
        });
        row(label, &stats(&samples));
    }
}

fn no_spawn_paths() {
    println!(
        "\n(c) hl_tool_call paths that spawn nothing (batches of 500, 40 samples; bar ≤ 20 µs)"
    );
    let w = quiet(World::standard());
    let a = abi();
    assert_eq!(a.tool("bench-c", "herdr_link", json!({}))["ok"], true);
    let call = |request: &str, expect: &str| {
        let c = std::ffi::CString::new(request).unwrap();
        // Check once that the path is the one we mean (and that it spawns nothing).
        w.clear_log();
        let r = a.call_text(request);
        let code = if r["ok"] == true {
            "ok"
        } else {
            r["error"]["code"].as_str().unwrap()
        };
        assert_eq!(code, expect, "{request}: {r}");
        assert!(w.calls().is_empty(), "{request} spawned Herdr");
        move || {
            // SAFETY: a valid C string; the answer is released at once.
            unsafe { (a.free)((a.tool_call)(c.as_ptr())) }
        }
    };
    let cases: [(&str, String, &str); 7] = [
        (
            "request is not JSON",
            "{\"session\":".into(),
            "INVALID_REQUEST",
        ),
        (
            "unknown tool",
            json!({"session": "bench-c", "tool": "nope", "input": {}}).to_string(),
            "INVALID_REQUEST",
        ),
        (
            "gateway, unknown action",
            json!({"session": "bench-c", "tool": "herdr_link", "input": {"action": "x"}})
                .to_string(),
            "INVALID_REQUEST",
        ),
        (
            "gateway activation (active session)",
            json!({"session": "bench-c", "tool": "herdr_link", "input": {}}).to_string(),
            "ok",
        ),
        (
            "send without `to` (PEER_NOT_FOUND)",
            json!({"session": "bench-c", "tool": "herdr_link_send", "input": {"message": "m"}})
                .to_string(),
            "PEER_NOT_FOUND",
        ),
        (
            "start with an unknown field (START_INPUT_INVALID)",
            json!({"session": "bench-c", "tool": "herdr_link_start",
                   "input": {"name": "x", "kind": "pi", "args": [], "model": "m"}})
            .to_string(),
            "START_INPUT_INVALID",
        ),
        (
            "start, configured, no config file (START_CONFIG_NOT_FOUND)",
            json!({"session": "bench-c", "tool": "herdr_link_start",
                   "input": {"name": "x", "config_agent": "team"}, "context_dir": w.dir})
            .to_string(),
            "START_CONFIG_NOT_FOUND",
        ),
    ];
    for (label, request, expect) in &cases {
        row(label, &stats(&per_call(40, 500, call(request, expect))));
    }
    // The gate closed: NOT_IN_HERDR without a spawn.
    std::env::remove_var("HERDR_ENV");
    let peers = json!({"session": "bench-c", "tool": "herdr_link_peers", "input": {}}).to_string();
    row(
        "gate closed, peers (NOT_IN_HERDR)",
        &stats(&per_call(40, 500, call(&peers, "NOT_IN_HERDR"))),
    );
    std::env::set_var("HERDR_ENV", "1");
    // The same activation with the operator log on (a file in the world's directory).
    std::env::set_var("HERDR_LINK_LOG", w.dir.join("bench.log"));
    std::env::set_var("HERDR_LINK_LOG_OFF", "0");
    let gateway = json!({"session": "bench-c", "tool": "herdr_link", "input": {}}).to_string();
    row(
        "gateway activation, HERDR_LINK_LOG set",
        &stats(&per_call(40, 500, call(&gateway, "ok"))),
    );
    std::env::remove_var("HERDR_LINK_LOG");
    std::env::set_var("HERDR_LINK_LOG_OFF", "1");
    // For reference: hl_presentation of an active session.
    let p =
        std::ffi::CString::new(json!({"session": "bench-c", "style": "mcp"}).to_string()).unwrap();
    row(
        "hl_presentation (mcp, active; reference)",
        &stats(&per_call(40, 500, || {
            // SAFETY: a valid C string; the answer is released at once.
            unsafe { (a.free)((a.presentation)(p.as_ptr())) }
        })),
    );
}

// ---------------------------------------------------------------------------------------------
// (d) 16 threads on distinct sessions against 1 thread

fn peers_round(threads: usize, per_thread: usize) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let barrier = &barrier;
            scope.spawn(move || {
                let a = abi();
                let request =
                    json!({"session": format!("bench-tp-{threads}-{t}"), "tool": "herdr_link_peers", "input": {}})
                        .to_string();
                barrier.wait();
                for _ in 0..per_thread {
                    let r = a.call_text(&request);
                    assert_eq!(r["ok"], true, "{r}");
                }
            });
        }
        barrier.wait();
        let t = Instant::now();
        // The scope joins every thread before returning.
        t
    })
    .elapsed()
}

fn throughput() {
    let total = 160;
    let rounds = 5;
    println!(
        "\n(d) throughput, peers (2 Herdr calls each): {total} calls per round, {rounds} rounds"
    );
    let _w = quiet(World::standard());
    let mut one = Vec::new();
    let mut sixteen = Vec::new();
    peers_round(1, 10);
    for _ in 0..rounds {
        one.push(total as f64 / peers_round(1, total).as_secs_f64());
        sixteen.push(total as f64 / peers_round(16, total / 16).as_secs_f64());
    }
    let show = |label: &str, v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        println!(
            "  {label:<58} median {:>8.1} calls/s   min {:>8.1}   max {:>8.1}   (rounds={})",
            v[v.len() / 2],
            v[0],
            v[v.len() - 1],
            v.len()
        );
        v[v.len() / 2]
    };
    let m1 = show("1 thread", &mut one);
    let m16 = show("16 threads, distinct sessions", &mut sixteen);
    println!("  16 threads / 1 thread: {:.2}x", m16 / m1);
}

// ---------------------------------------------------------------------------------------------
// (t) delivery turns

/// Longer than Herdr's submit window plus the turn margin: after it, a receiver's turn is free.
const TURN_GAP: Duration = Duration::from_millis(450);

/// `hl_tool_call` + `hl_free` of another build of the cdylib (`HL_BENCH_OLD_LIB`).
struct OtherLib {
    _lib: libloading::Library,
    call: unsafe extern "C" fn(*const std::ffi::c_char) -> *mut std::ffi::c_char,
    free: unsafe extern "C" fn(*mut std::ffi::c_char),
}

impl OtherLib {
    fn load(path: &str) -> OtherLib {
        // SAFETY: loading a build of this very library; the symbols have these signatures.
        unsafe {
            let lib = libloading::Library::new(path).expect("load HL_BENCH_OLD_LIB");
            OtherLib {
                call: *lib.get(b"hl_tool_call").unwrap(),
                free: *lib.get(b"hl_free").unwrap(),
                _lib: lib,
            }
        }
    }

    fn tool(&self, request: &str) -> Value {
        let c = std::ffi::CString::new(request).unwrap();
        // SAFETY: a valid C string in, a library-owned string out, freed right after.
        unsafe {
            let p = (self.call)(c.as_ptr());
            let v = serde_json::from_str(std::ffi::CStr::from_ptr(p).to_str().unwrap()).unwrap();
            (self.free)(p);
            v
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `n` agents `r0`..: the receivers, after the caller `brain` (w1:p1).
fn receivers_world(n: usize) -> World {
    receivers_world_version(n, "0.8.0")
}

/// [`receivers_world`] with the fake playing `version`.
fn receivers_world_version(n: usize, version: &str) -> World {
    let mut panes = vec![json!({"agent": "pi", "name": "brain"})];
    panes.extend((0..n).map(|i| json!({"agent": "pi", "name": format!("r{i}")})));
    quiet(World::new(
        json!({"config": {"version": version},
               "workspaces": [{"cwd": "/p", "tabs": [{"panes": panes}]}]}),
        "w1:p1",
    ))
}

fn send_request(session: &str, to: &str, message: &str) -> String {
    json!({"session": session, "tool": "herdr_link_send",
           "input": {"to": to, "message": message}})
    .to_string()
}

/// One build's `hl_tool_call`: request in, answer out.
type ToolCall<'a> = dyn Fn(&str) -> Value + Sync + 'a;

fn turns() {
    println!(
        "\n(t) delivery turns (submit window {} ms + margin {} ms)",
        herdr_link::turn::SUBMIT_WINDOW.as_millis(),
        herdr_link::turn::MARGIN.as_millis()
    );
    let a = abi();

    // (t1) The bookkeeping alone: take an idle receiver's turn, record the Enter, release.
    let dir = std::env::temp_dir().join(format!("hl-bench-turns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    herdr_link::internal::ensure_private_dir(&dir).unwrap();
    let key = 42u64;
    let path = dir.join(format!("{key:016x}"));
    let mut book = Vec::new();
    for i in 0..1010 {
        let _ = std::fs::write(&path, "0\n"); // untimed: the last Enter long past
        let t = Instant::now();
        let turn =
            herdr_link::turn::take_in_dir(&dir, key, Instant::now() + Duration::from_secs(5))
                .unwrap();
        turn.delivered(herdr_link::turn::Delivery::Answered(Duration::ZERO));
        drop(turn);
        if i >= 10 {
            book.push(t.elapsed());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let sb = stats(&book);
    row(
        "turn bookkeeping: take idle turn + record Enter + release",
        &sb,
    );

    // (t2) A lone send (its receiver's last Enter long past), this build and maybe another.
    let w = receivers_world(8);
    let old = std::env::var("HL_BENCH_OLD_LIB")
        .ok()
        .map(|p| OtherLib::load(&p));
    let n = 40;
    let (mut new_s, mut old_s) = (Vec::new(), Vec::new());
    for i in 0..n + 4 {
        std::thread::sleep(TURN_GAP);
        let req = send_request("bench-t2", "r0", "bench message");
        let run_new = || {
            let t = Instant::now();
            let r = a.call_text(&req);
            assert_eq!(r["ok"], true, "{r}");
            t.elapsed()
        };
        let run_old = |lib: &OtherLib| {
            // Another receiver: the old build takes no turn, and must not wait for ours.
            let req = send_request("bench-t2-old", "r1", "bench message");
            let t = Instant::now();
            let r = lib.tool(&req);
            assert_eq!(r["ok"], true, "{r}");
            t.elapsed()
        };
        let (x, y) = if i % 2 == 0 {
            let x = run_new();
            (x, old.as_ref().map(run_old))
        } else {
            let y = old.as_ref().map(run_old);
            (run_new(), y)
        };
        if i >= 4 {
            new_s.push(x);
            old_s.extend(y);
        }
    }
    let sn = stats(&new_s);
    row("lone send, this build", &sn);
    println!(
        "  bookkeeping / lone send: {:.4} ({:.1} µs of {:.2} ms)",
        sb.median.as_secs_f64() / sn.median.as_secs_f64(),
        us(sb.median),
        ms(sn.median)
    );
    if !old_s.is_empty() {
        let so = stats(&old_s);
        row("lone send, HL_BENCH_OLD_LIB", &so);
        println!(
            "  RATIO lone-send this/old {:.3} (of minimums {:.3})",
            sn.median.as_secs_f64() / so.median.as_secs_f64(),
            sn.min.as_secs_f64() / so.min.as_secs_f64()
        );
    }
    drop(w);

    // (t3) N deliveries to one receiver at the same moment, from N sessions (threads) of this
    // process: they queue on the receiver's turn. Against the fake playing 0.8.2 (the Enter
    // 300 ms after the answer) and 0.9.0 (the answer after the Enter); the floor is N × 300 ms,
    // one submit window each. (t4) N senders to N receivers at once: nobody waits.
    let window = herdr_link::turn::SUBMIT_WINDOW;
    let builds: Vec<(&str, Box<ToolCall>)> = std::iter::once((
        "this build",
        Box::new(|r: &str| a.call_text(r)) as Box<ToolCall>,
    ))
    .chain(old.as_ref().map(|lib| {
        (
            "HL_BENCH_OLD_LIB",
            Box::new(|r: &str| lib.tool(r)) as Box<ToolCall>,
        )
    }))
    .collect();
    for version in ["0.8.2", "0.9.0"] {
        for n in [8, 32, 64, 128] {
            for (build, call) in &builds {
                let w = receivers_world_version(n, version);
                std::thread::sleep(TURN_GAP);
                let barrier = std::sync::Barrier::new(n);
                let t = Instant::now();
                let last_sent = std::sync::Mutex::new(Duration::ZERO);
                let failed = std::sync::atomic::AtomicUsize::new(0);
                std::thread::scope(|scope| {
                    for k in 0..n {
                        let (barrier, last_sent, failed) = (&barrier, &last_sent, &failed);
                        scope.spawn(move || {
                            barrier.wait();
                            let r = call(&send_request(
                                &format!("bench-t3-{k}"),
                                "r0",
                                &format!("m{k}"),
                            ));
                            if r["ok"] != true {
                                failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            let mut l = last_sent.lock().unwrap();
                            *l = (*l).max(t.elapsed());
                        });
                    }
                });
                let sent = *last_sent.lock().unwrap();
                let subs: Value = serde_json::from_str(&w.admin(&["fake", "prompts"])).unwrap();
                let all = t.elapsed();
                let subs = subs.as_array().unwrap();
                let glued = subs.iter().filter(|s| s["parts"] != 1).count();
                println!(
                    "  Herdr {version}, {build:<16}: {n:>3} deliveries to one receiver at once: all answered after {:>6.0} ms, all submitted after {:>6.0} ms = {:.2} × (N × window), {:.0} ms per delivery ({} submissions, {glued} glued, {} not sent)",
                    ms(sent),
                    ms(all),
                    ms(all) / (n as f64 * ms(window)),
                    ms(all) / n as f64,
                    subs.len(),
                    failed.into_inner()
                );
                drop(w);
            }
        }
    }
    for n in [8, 32] {
        let w = receivers_world(n);
        std::thread::sleep(TURN_GAP);
        let barrier = std::sync::Barrier::new(n);
        let t = Instant::now();
        std::thread::scope(|scope| {
            for k in 0..n {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let r = a.call_text(&send_request(
                        &format!("bench-t4-{k}"),
                        &format!("r{k}"),
                        "m",
                    ));
                    assert_eq!(r["ok"], true, "{r}");
                });
            }
        });
        let sent = t.elapsed();
        let subs: Value = serde_json::from_str(&w.admin(&["fake", "prompts"])).unwrap();
        let all = t.elapsed();
        assert_eq!(subs.as_array().unwrap().len(), n);
        println!(
            "  {n} senders to {n} receivers at once: sends done in {:.0} ms, all submitted after {:.0} ms = {:.2} × window",
            ms(sent),
            ms(all),
            ms(all) / ms(window)
        );
        drop(w);
    }
}

// ---------------------------------------------------------------------------------------------
// (o) a call costs the same whatever the history

/// Makes `n` other receivers' entries in the user's turn directory (a turn file, an older
/// build's counter and this build's queue each, all fresh so no sweep takes them); returns
/// what to remove afterwards.
fn other_receivers(n: usize) -> Vec<PathBuf> {
    let herdr_link::turn::Place::Shared { dir, .. } = herdr_link::turn::place() else {
        panic!("no shared turn directory");
    };
    let mut made = Vec::new();
    for k in 0..n as u64 {
        let key = 0x0b5e_0000_0000_0000 | k;
        let file = dir.join(format!("{key:016x}"));
        std::fs::write(&file, "0\n").unwrap();
        let counter = dir.join(format!("{key:016x}.next"));
        std::fs::write(&counter, "00000000000000000001\n").unwrap();
        let queue = dir.join(format!("{key:016x}.q"));
        herdr_link::internal::ensure_private_dir(&queue).unwrap();
        std::fs::write(queue.join("next"), "00000000000000000001\n").unwrap();
        made.extend([file, counter, queue]);
    }
    made
}

/// One `herdr-link mcp` server of `bin` inside the current world, activated, and the next id.
/// Removes the other receivers' entries [`other_receivers`] made (files and queue directories).
fn remove_entries(made: Vec<PathBuf>) {
    for p in made {
        let _ = std::fs::remove_dir_all(&p);
        let _ = std::fs::remove_file(&p);
    }
}

/// A `herdr-link mcp` server spoken to as a host's event loop speaks to it: the request written
/// to its stdin and the answer read from its stdout by the same thread, with no reader thread or
/// channel of the bench's own in between (the floor harness reads its children's pipes the same
/// way). It inherits this process's environment: the world the C ABI side runs in.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    id: i64,
    line: String,
}

impl Mcp {
    /// Started, initialised and activated.
    fn start(bin: &std::path::Path) -> Mcp {
        let mut child = Command::new(bin)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn herdr-link mcp");
        let mut m = Mcp {
            stdin: child.stdin.take().unwrap(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            id: 0,
            line: String::new(),
        };
        m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        );
        m.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        m.call("herdr_link", json!({}));
        m
    }

    fn write(&mut self, line: &str) {
        use std::io::Write;
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads frames until its answer (left in `self.line`).
    fn request(&mut self, method: &str, params: Value) {
        use std::io::BufRead;
        self.id += 1;
        let id = self.id;
        self.write(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = format!("\"id\":{id},");
        loop {
            self.line.clear();
            let n = self.stdout.read_line(&mut self.line).unwrap();
            assert!(n > 0, "herdr-link mcp ended");
            if self.line.contains(&answer) {
                return;
            }
        }
    }

    /// One `tools/call`, timed from writing it to reading its answer; checked after the clock.
    fn call(&mut self, tool: &str, input: Value) -> Duration {
        let params = json!({"name": tool, "arguments": input});
        let t = Instant::now();
        self.request("tools/call", params);
        let took = t.elapsed();
        let answer: Value = serde_json::from_str(&self.line).unwrap();
        assert_ne!(answer["result"]["isError"], true, "{tool}: {answer}");
        assert_eq!(answer["id"], self.id, "{answer}");
        took
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What (o) and (f) set beside this build's cdylib: another build's cdylib (`HL_BENCH_OLD_LIB`),
/// this build's `herdr-link` and another build's (`HL_BENCH_OLD_MCP`).
fn compared_builds() -> (Option<OtherLib>, PathBuf, Option<PathBuf>) {
    (
        std::env::var("HL_BENCH_OLD_LIB")
            .ok()
            .map(|p| OtherLib::load(&p)),
        test_support::mcp::link_bin(),
        std::env::var_os("HL_BENCH_OLD_MCP").map(PathBuf::from),
    )
}

fn history() {
    println!("\n(o) per call with other receivers' entries present: C ABI and MCP vs the same argvs spawned directly");
    // Loaded before any sample is taken.
    abi();
    let (old, new_mcp, old_mcp) = compared_builds();
    let n = iterations().min(60);
    let wrapper = herdr_link::protocol::Envelope::build("brain", "worker-a", "bench message")
        .unwrap()
        .wrapper();
    let mut summary = Vec::new();
    for entries in [0usize, 1000, 10_000] {
        let made = other_receivers(entries);
        for op in ["peers", "send", "close"] {
            let w = World::standard();
            let mut mcp_new = Mcp::start(&new_mcp);
            let mut mcp_old = old_mcp.as_deref().map(Mcp::start);
            let samples = if op == "send" { n.min(30) } else { n };
            // abi, abi-old, mcp, mcp-old, direct
            let mut got: Vec<Vec<Duration>> = vec![Vec::new(); 5];
            for i in 0..samples + 4 {
                for j in 0..5 {
                    let which = (i + j) % 5;
                    let present = match which {
                        1 => old.is_some(),
                        3 => mcp_old.is_some(),
                        _ => true,
                    };
                    if !present {
                        continue;
                    }
                    let (tool, input) =
                        op_call(op, if op == "send" { "worker-a" } else { "victim" });
                    let victim = (op == "close").then(|| new_victim(&w));
                    if op == "send" {
                        // Untimed: the previous Enter passes, so no send waits for a turn.
                        std::thread::sleep(TURN_GAP);
                    }
                    let took = match which {
                        0..=3 => time_side(
                            which,
                            "bench-o",
                            (old.as_ref(), &mut mcp_new, mcp_old.as_mut()),
                            tool,
                            input,
                        ),
                        _ => {
                            let argvs = match op {
                                "peers" => vec![
                                    strings(&["agent", "get", "w1:p1"]),
                                    strings(&["agent", "list"]),
                                ],
                                "send" => vec![
                                    strings(&["agent", "get", "w1:p1"]),
                                    strings(&["agent", "get", "worker-a"]),
                                    strings(&["agent", "prompt", "worker-a", &wrapper]),
                                ],
                                _ => vec![
                                    strings(&["agent", "get", "w1:p1"]),
                                    strings(&["agent", "get", "victim"]),
                                    strings(&["pane", "close", victim.as_ref().unwrap()]),
                                ],
                            };
                            let t = Instant::now();
                            for argv in &argvs {
                                direct(argv);
                            }
                            Some(t.elapsed())
                        }
                    };
                    if let (true, Some(took)) = (i >= 4, took) {
                        got[which].push(took);
                    }
                }
            }
            let names = [
                "C ABI, this build",
                "C ABI, HL_BENCH_OLD_LIB",
                "MCP, this build",
                "MCP, HL_BENCH_OLD_MCP",
                "direct argvs (floor)",
            ];
            report_vs_floor(
                &format!("{entries} entries, {op}"),
                &names,
                &got,
                &mut summary,
            );
        }
        remove_entries(made);
    }
    for line in summary {
        println!("  {line}");
    }
}

// ---------------------------------------------------------------------------------------------
// (f) per call against the bare argv floor: a C posix_spawn of a static fake Herdr CLI

/// The static fake Herdr and the C spawn harness (benches/static-herdr), built next to this
/// bench binary on first use: `cc -O2 -static` (`$CC` if set), or `cc -O2` where no static libc
/// exists. Returns (fake, harness, how they were linked).
fn static_tools() -> (PathBuf, PathBuf, &'static str) {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/static-herdr");
    let out = common::target_dir().join("static-herdr");
    std::fs::create_dir_all(&out).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut linked = "static";
    let mut built = Vec::new();
    for name in ["static_herdr", "floor_spawn"] {
        let bin = out.join(name);
        let c = src.join(format!("{name}.c"));
        let cc_run = |extra: &[&str]| {
            Command::new(&cc)
                .args(["-O2", "-Wall", "-o"])
                .arg(&bin)
                .arg(&c)
                .args(extra)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !cc_run(&["-static"]) {
            assert!(cc_run(&[]), "cannot compile {}", c.display());
            linked = "dynamic (no static libc)";
        }
        built.push(bin);
    }
    let harness = built.pop().unwrap();
    (built.pop().unwrap(), harness, linked)
}

/// The C harness (`floor_spawn`): runs argv sequences against the static fake and answers how
/// long each took, timed in C from the first spawn to the last child's exit.
struct Floor {
    child: std::process::Child,
    answers: std::io::BufReader<std::process::ChildStdout>,
}

impl Floor {
    fn start(harness: &std::path::Path, fake: &std::path::Path) -> Floor {
        let mut child = Command::new(harness)
            .arg(fake)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start floor_spawn");
        let answers = std::io::BufReader::new(child.stdout.take().unwrap());
        Floor { child, answers }
    }

    fn run(&mut self, argvs: &[Vec<String>]) -> Duration {
        use std::io::{BufRead, Write};
        let mut request = Vec::new();
        for argv in argvs {
            for arg in argv {
                request.extend_from_slice(arg.as_bytes());
                request.push(0);
            }
            request.push(0);
        }
        request.push(0);
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(&request).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        let ns: u64 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("floor_spawn: {line}"));
        Duration::from_nanos(ns)
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Points this process at a world of the static fake (see static_herdr.c): caller brain in
/// w1:p1, its own Herdr socket path and state directory in `dir`; the operator log on (its
/// default), following off (as in every bench world).
fn static_world(dir: &std::path::Path, fake: &std::path::Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::env::set_var("HERDR_ENV", "1");
    std::env::set_var("HERDR_BIN_PATH", fake);
    std::env::set_var("HERDR_PANE_ID", "w1:p1");
    std::env::set_var("HERDR_SOCKET_PATH", dir.join("herdr.sock"));
    std::env::set_var("XDG_STATE_HOME", dir.join("state"));
    std::env::set_var("HERDR_LINK_FOLLOW", "0");
    for unset in [
        "HERDR_FAKE_STATE",
        "HERDR_LINK_LOG",
        "HERDR_LINK_LOG_OFF",
        "HERDR_LINK_LOG_TEXT",
        "HERDR_LINK_TAKEN_UP_MS",
        "HERDR_LINK_TIMEOUT_MS",
        "HERDR_LINK_START_TIMEOUT_MS",
        "HERDR_LINK_TURN_WAIT_MS",
    ] {
        std::env::remove_var(unset);
    }
}

/// The tool and input of `op` (peers, send to `to`, close `to`).
fn op_call(op: &str, to: &str) -> (&'static str, Value) {
    match op {
        "peers" => ("herdr_link_peers", json!({})),
        "send" => (
            "herdr_link_send",
            json!({"to": to, "message": "bench message"}),
        ),
        _ => ("herdr_link_close", json!({"agent": to})),
    }
}

/// One timed call of `tool` on side `which` of (o) and (f) — 0: this build's C ABI (session
/// `<prefix>-0`), 1: another build's cdylib, 2: this build's `herdr-link mcp`, 3: another
/// build's — or `None` when that other build was not given.
fn time_side(
    which: usize,
    prefix: &str,
    (old, mcp_new, mcp_old): (Option<&OtherLib>, &mut Mcp, Option<&mut Mcp>),
    tool: &str,
    input: Value,
) -> Option<Duration> {
    let request =
        json!({"session": format!("{prefix}-{which}"), "tool": tool, "input": input}).to_string();
    match which {
        0 => Some(timed_abi(|r| abi().call_text(r), &request)),
        1 => old.map(|lib| timed_abi(|r| lib.tool(r), &request)),
        2 => Some(mcp_new.call(tool, input)),
        _ => mcp_old.map(|s| s.call(tool, input)),
    }
}

/// Times one `hl_tool_call` of `request` through `call`; the call must succeed.
fn timed_abi(call: impl FnOnce(&str) -> Value, request: &str) -> Duration {
    let t = Instant::now();
    let r = call(request);
    let took = t.elapsed();
    assert_eq!(r["ok"], true, "{request}: {r}");
    took
}

/// Times one `tools/call` through an activated `herdr-link mcp` server: from writing the
/// request to reading its answer, which must not be an error.
/// Prints the rows of one case (`got[k]` are the samples of `names[k]`, the floor last; empty:
/// not measured) and adds each one's ratios to the floor, of medians and of minimums, to
/// `summary`.
fn report_vs_floor(case: &str, names: &[&str], got: &[Vec<Duration>], summary: &mut Vec<String>) {
    let last = names.len() - 1;
    let floor = stats(&got[last]);
    row(&format!("{case}: {}", names[last]), &floor);
    for (name, samples) in names.iter().zip(got).take(last) {
        if samples.is_empty() {
            continue;
        }
        let s = stats(samples);
        row(&format!("{case}: {name}"), &s);
        summary.push(format!(
            "RATIO {case:<22} {name:<24} {:.2} of medians ({:.3} / {:.3} ms), {:.2} of minimums ({:.3} / {:.3} ms)",
            s.median.as_secs_f64() / floor.median.as_secs_f64(),
            ms(s.median),
            ms(floor.median),
            s.min.as_secs_f64() / floor.min.as_secs_f64(),
            ms(s.min),
            ms(floor.min),
        ));
    }
}

/// Who is measured in (f), in the order of the `got` vectors; the floor last.
const FLOOR_NAMES: [&str; 5] = [
    "C ABI, this build",
    "C ABI, HL_BENCH_OLD_LIB",
    "MCP, this build",
    "MCP, HL_BENCH_OLD_MCP",
    "bare floor (C posix_spawn, static fake)",
];

/// How many receivers each side of (f) sends to in turn: with a round of five calls taking
/// several milliseconds, a receiver is sent to again only after its turn is free, so a send
/// never waits for a turn nor for a gap in which the machine idles (peers and close rounds run
/// back to back, and send is measured the same way).
const SEND_POOL: usize = 64;

/// The receiver side `which` sends to in round `round` of (f): `r<N>` of the static fake, a pool
/// of [`SEND_POOL`] per side (the floor's too, so it spawns the same argvs).
fn send_to(which: usize, round: usize) -> String {
    format!("r{}", 1 + which * SEND_POOL + round % SEND_POOL)
}

fn bare_floor() {
    let (fake, harness, linked) = static_tools();
    println!(
        "\n(f) per call vs the bare argv floor (C posix_spawn + waitpid of the same argvs, static fake Herdr CLI, {linked})"
    );
    let dir = std::env::temp_dir().join(format!("hl-bench-floor-{}", std::process::id()));
    static_world(&dir, &fake);
    if let herdr_link::turn::Place::Shared { dir, .. } = herdr_link::turn::place() {
        println!("  turn directory: {}", dir.display());
    }
    // Loaded before any sample is taken.
    abi();
    let (old, new_mcp, old_mcp) = compared_builds();
    let mut floor = Floor::start(&harness, &fake);
    let n = std::env::var("BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80usize);
    let mut victims = 0u32;
    let mut summary = Vec::new();
    for entries in [0usize, 1000, 10_000] {
        let made = other_receivers(entries);
        for op in ["peers", "send", "close"] {
            let log_mark = oplog_entries(&dir, op).len();
            let mut mcp_new = Mcp::start(&new_mcp);
            let mut mcp_old = old_mcp.as_deref().map(Mcp::start);
            let mut got: Vec<Vec<Duration>> = vec![Vec::new(); 5];
            // When each receiver of the send pools was last sent to.
            let mut sent_at: HashMap<String, Instant> = HashMap::new();
            if op == "send" {
                // Untimed: every pool receiver delivered to once, so what is timed is a
                // receiver's usual send, not its first.
                for which in 0..4 {
                    for round in 0..SEND_POOL {
                        let to = send_to(which, round);
                        let (tool, input) = op_call(op, &to);
                        let sides = (old.as_ref(), &mut mcp_new, mcp_old.as_mut());
                        time_side(which, "bench-f", sides, tool, input);
                        sent_at.insert(to, Instant::now());
                    }
                }
            }
            for i in 0..n + 4 {
                for j in 0..5 {
                    let which = (i + j) % 5;
                    // A fresh victim (a pane never closed nor delivered to) for every close.
                    victims += 1;
                    let to = match op {
                        "send" => {
                            let to = send_to(which, i);
                            if let Some(at) = sent_at.insert(to.clone(), Instant::now()) {
                                // Untimed, and only on a machine so fast that a pool's round
                                // comes back before the receiver's last Enter has passed.
                                std::thread::sleep(TURN_GAP.saturating_sub(at.elapsed()));
                                sent_at.insert(to.clone(), Instant::now());
                            }
                            to
                        }
                        "close" => format!("v{victims}"),
                        _ => String::new(),
                    };
                    let (tool, input) = op_call(op, &to);
                    let took = match which {
                        0..=3 => time_side(
                            which,
                            "bench-f",
                            (old.as_ref(), &mut mcp_new, mcp_old.as_mut()),
                            tool,
                            input,
                        ),
                        _ => Some(floor.run(&floor_argvs(op, &to))),
                    };
                    if let (true, Some(took)) = (i >= 4, took) {
                        got[which].push(took);
                    }
                }
            }
            if entries == 0 {
                same_argvs_as_the_library(&dir, op);
            }
            // The pool's untimed first sends are not counted.
            let warm = if op == "send" { SEND_POOL } else { 0 };
            let logged = oplog_entries(&dir, op);
            outside_the_spawns(&logged[(log_mark + warm).min(logged.len())..]);
            report_vs_floor(
                &format!("{entries} entries, {op}"),
                &FLOOR_NAMES,
                &got,
                &mut summary,
            );
        }
        remove_entries(made);
    }
    for line in summary {
        println!("  {line}");
    }
    drop(floor);
    let _ = std::fs::remove_dir_all(&dir);
}

/// This build's operator-log entries for `op` through the C ABI (session `bench-f-0`), in the
/// world under `dir`, oldest first.
fn oplog_entries(dir: &std::path::Path, op: &str) -> Vec<Value> {
    let tool = op_call(op, "").0;
    std::fs::read_to_string(dir.join("state/herdr-link/log.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["session"] == "bench-f-0" && e["tool"] == tool)
        .collect()
}

/// Where a C ABI call's time goes, from the log entries of its samples: the Herdr calls as the
/// driver timed them (spawn to exit, output read) and the rest of the call.
fn outside_the_spawns(entries: &[Value]) {
    let (mut spawns, mut rest) = (Vec::new(), Vec::new());
    for e in entries {
        let total = e["ms"].as_f64().unwrap();
        let inside: f64 = e["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["ms"].as_f64().unwrap())
            .sum();
        spawns.push(Duration::from_secs_f64(inside / 1e3));
        rest.push(Duration::from_secs_f64((total - inside).max(0.0) / 1e3));
    }
    if entries.is_empty() {
        return;
    }
    let (s, r) = (stats(&spawns), stats(&rest));
    println!(
        "    C ABI, this build, by its operator log: its Herdr calls median {:.3} ms (min {:.3}), the rest of the call median {:.1} µs (min {:.1}, max {:.1})",
        ms(s.median),
        ms(s.min),
        us(r.median),
        us(r.min),
        us(r.max)
    );
}

/// Checks that the floor spawns exactly the argvs this build made for its last `op` through the C
/// ABI, as its operator log (in the world's state directory under `dir`) lists them.
fn same_argvs_as_the_library(dir: &std::path::Path, op: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let calls = loop {
        if let Some(e) = oplog_entries(dir, op).pop() {
            break e["calls"].as_array().unwrap().clone();
        }
        assert!(Instant::now() < deadline, "no {op} in the operator log");
        std::thread::sleep(Duration::from_millis(20));
    };
    let made: Vec<Vec<String>> = calls
        .iter()
        .map(|c| {
            c["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    let to = made
        .get(1)
        .and_then(|a| a.get(2))
        .cloned()
        .unwrap_or_default();
    // A prompt's text differs by its message id and the log shortens it: compare lengths.
    let shape = |argvs: Vec<Vec<String>>, logged: bool| -> Vec<Vec<String>> {
        argvs
            .into_iter()
            .map(|mut argv| {
                if argv.len() == 4 && argv[1] == "prompt" {
                    let text = &argv[3];
                    let chars = match text.split_once("…(+") {
                        Some((head, rest)) if logged => {
                            head.chars().count()
                                + rest.trim_end_matches(" chars)").parse::<usize>().unwrap()
                        }
                        _ => text.chars().count(),
                    };
                    argv[3] = format!("<{chars} characters>");
                }
                argv
            })
            .collect()
    };
    assert_eq!(
        shape(made.clone(), true),
        shape(floor_argvs(op, &to), false),
        "{op}: the floor spawns other argvs"
    );
    println!(
        "  {op}: the floor spawns the {} argvs the library made",
        made.len()
    );
}

/// The Herdr argvs Herdr Link makes for `op` (peers; send to `to`; close `to`) in the static
/// fake's world, as its operator log lists them.
fn floor_argvs(op: &str, to: &str) -> Vec<Vec<String>> {
    let mut argvs = vec![strings(&["agent", "get", "w1:p1"])];
    match op {
        "peers" => argvs.push(strings(&["agent", "list"])),
        "send" => {
            let wrapper = herdr_link::protocol::Envelope::build("brain", to, "bench message")
                .unwrap()
                .wrapper();
            argvs.push(strings(&["agent", "get", to]));
            argvs.push(strings(&["agent", "prompt", to, &wrapper]));
        }
        _ => {
            let out = Command::new(std::env::var_os("HERDR_BIN_PATH").unwrap())
                .args(["agent", "get", to])
                .output()
                .unwrap();
            let info: Value = serde_json::from_slice(&out.stdout).unwrap();
            let pane = info["result"]["agent"]["pane_id"].as_str().unwrap();
            argvs.push(strings(&["agent", "get", to]));
            argvs.push(strings(&["pane", "close", pane]));
        }
    }
    argvs
}
