//! The operator log (`HERDR_LINK_LOG`) through the C ABI: one JSON line per operation with its
//! time, session, tool, every Herdr argv with its outcome and duration, the Link code and the
//! internal detail; bootstrap lines; and the promise that logging never fails or blocks a call,
//! whatever the path is (missing directory, a directory, a full device, a FIFO nobody reads).

use test_support::world as common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{abi, has_raw_id, serial, World};
use herdr_link::oplog::{MAX_ARG_CHARS, QUEUE_DEPTH};
use serde_json::{json, Value};

fn world() -> World {
    World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [{"panes": [
                {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"},
                {"cwd": "/proj", "agent": "pi", "name": "worker-b", "status": "idle"}
            ]}]},
            {"cwd": "/other", "tabs": [{"panes": [
                {"cwd": "/other", "agent": "pi", "name": "stranger", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    )
}

/// Points `HERDR_LINK_LOG` at a fresh file in the world's directory.
fn log_to(w: &World, name: &str) -> PathBuf {
    let path = w.dir.join(name);
    std::env::set_var("HERDR_LINK_LOG", &path);
    path
}

/// Waits (up to 10 s) until the log holds at least `n` lines, then returns them parsed.
fn lines(path: &Path, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let count = text.lines().count();
        if count >= n || Instant::now() > deadline {
            assert!(
                count >= n,
                "expected {n} log lines in {}, found {count}:\n{text}",
                path.display()
            );
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Checks the shape every line has, and returns its calls as (argv, outcome, ms).
fn shape(line: &Value) -> Vec<(Vec<String>, String, f64)> {
    let obj = line.as_object().expect("a line is an object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["ts", "session", "tool", "action", "code", "detail", "ms", "calls", "turn", "message"],
        "{line}"
    );
    // `message`: null, or what a send (or a follow-up) was about.
    let message = &line["message"];
    if !message.is_null() {
        let keys: Vec<&str> = message
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "from",
                "to",
                "id",
                "workspace",
                "chars",
                "preview",
                "receiver_state"
            ],
            "{line}"
        );
        assert!(message["chars"].is_u64(), "{line}");
        assert!(
            message["preview"].is_null() || message["preview"].is_string(),
            "{line}"
        );
    }
    // `turn`: null, or how a send waited for its delivery turn.
    let turn = &line["turn"];
    if !turn.is_null() {
        assert!(
            turn["wait_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
            "{line}"
        );
        assert!(
            turn["got"].is_boolean() && turn["shared"].is_boolean(),
            "{line}"
        );
        let since = turn["since"].as_f64().expect("since is epoch seconds");
        assert!(since <= line["ts"].as_f64().unwrap(), "{line}");
    }
    let ts = line["ts"].as_f64().expect("ts is epoch seconds");
    assert!((now_secs() - ts).abs() < 120.0, "{line}");
    assert!(line["session"].is_string() && line["tool"].is_string());
    assert!(line["action"].is_null() || line["action"].is_string());
    assert!(line["code"].is_string() && line["detail"].is_string());
    let total = line["ms"].as_f64().expect("ms");
    let calls: Vec<_> = line["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            let argv = c["argv"]
                .as_array()
                .expect("argv")
                .iter()
                .map(|a| a.as_str().expect("argv strings").to_string())
                .collect();
            let ms = c["ms"].as_f64().expect("call ms");
            assert!(ms >= 0.0);
            (
                argv,
                c["outcome"].as_str().expect("outcome").to_string(),
                ms,
            )
        })
        .collect();
    let sum: f64 = calls.iter().map(|c| c.2).sum();
    assert!(
        total + 0.001 >= sum,
        "operation ms {total} < sum of calls {sum}: {line}"
    );
    calls
}

fn argvs(calls: &[(Vec<String>, String, f64)]) -> Vec<String> {
    calls.iter().map(|c| c.0.join(" ")).collect()
}

#[test]
fn one_line_per_operation_with_every_field() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "ops.log");
    let a = abi();
    let s = "log-fields";
    let mut results = vec![
        a.tool(s, "herdr_link", json!({})),
        a.tool(s, "herdr_link", json!({"action": "peers"})),
        a.tool(s, "herdr_link_peers", json!({})),
        a.tool(
            s,
            "herdr_link_send",
            json!({"to": "worker-a", "message": "review ✓"}),
        ),
    ];
    results.push(a.tool(s, "herdr_link_close", json!({"agent": "worker-b"})));
    for r in &results {
        assert_eq!(r["ok"], true, "{r}");
    }
    let got = lines(&log, 5);
    assert_eq!(got.len(), 5, "exactly one line per operation");
    for line in &got {
        assert_eq!(line["session"], s);
        assert_eq!(line["code"], "ok");
        assert_eq!(line["detail"], "");
    }

    // Gateway activation: no Herdr call.
    assert_eq!(got[0]["tool"], "herdr_link");
    assert!(got[0]["action"].is_null());
    assert!(shape(&got[0]).is_empty());

    // Gateway dispatch records the action; peers' calls are the same either way.
    assert_eq!(got[1]["tool"], "herdr_link");
    assert_eq!(got[1]["action"], "peers");
    assert_eq!(got[2]["tool"], "herdr_link_peers");
    assert!(got[2]["action"].is_null());
    for line in &got[1..3] {
        let calls = shape(line);
        assert_eq!(argvs(&calls), ["agent get w1:p1", "agent list"]);
        assert!(calls.iter().all(|c| c.1 == "exit=0"), "{line}");
    }

    // Send: three calls; the wrapper argv is clipped, not dropped.
    assert_eq!(got[3]["tool"], "herdr_link_send");
    let calls = shape(&got[3]);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].0, ["agent", "get", "w1:p1"]);
    assert_eq!(calls[1].0, ["agent", "get", "worker-a"]);
    assert_eq!(&calls[2].0[..3], ["agent", "prompt", "worker-a"]);
    let wrapper = &calls[2].0[3];
    assert!(wrapper.starts_with("[herdr-link/1]"), "{wrapper}");
    let (head, tail) = wrapper.split_once("…(+").expect("clipped wrapper");
    assert_eq!(head.chars().count(), MAX_ARG_CHARS);
    assert!(tail.ends_with(" chars)"), "{tail}");
    assert!(calls.iter().all(|c| c.1 == "exit=0"));
    // It waited for nothing (a lone send), in the user-wide turn.
    let turn = &got[3]["turn"];
    assert_eq!(
        (&turn["got"], &turn["shared"]),
        (&json!(true), &json!(true)),
        "{turn}"
    );
    // How long it waited is a measurement, not checked here (src/turn.rs shows causally that a
    // lone turn waits for nothing).
    assert!(
        turn["wait_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
        "{turn}"
    );
    for line in [&got[0], &got[1], &got[2]] {
        assert!(
            line["turn"].is_null(),
            "only a send or a close has a turn: {line}"
        );
    }
    // Close takes the target's turn too (it waits for a delivery still being submitted).
    assert_eq!(got[4]["turn"]["got"], json!(true), "{}", got[4]);

    // Close: raw pane ids are allowed in the log (and only there).
    assert_eq!(got[4]["tool"], "herdr_link_close");
    let calls = shape(&got[4]);
    assert_eq!(
        argvs(&calls),
        ["agent get w1:p1", "agent get worker-b", "pane close w1:p3"]
    );
    for r in &results {
        assert!(!has_raw_id(&r.to_string()), "{r}");
    }
    std::env::remove_var("HERDR_LINK_LOG");
}

#[test]
fn failures_carry_the_code_the_outcome_and_the_internal_detail() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "failures.log");
    let a = abi();
    let s = "log-failures";
    let mut n = 0;
    let mut next = |r: Value, code: &str| -> Value {
        assert_eq!(r["error"]["code"], code, "{r}");
        assert!(!has_raw_id(&r.to_string()), "{r}");
        n += 1;
        let line = lines(&log, n).pop().unwrap();
        assert_eq!(line["code"], code, "{line}");
        assert_eq!(line["session"], s);
        line
    };

    // A Herdr rejection: its code and message (with raw ids) go to the detail.
    let err =
        json!({"error": {"code": "agent_blocked", "message": "agent w1:p2 refused (term_abc)"}})
            .to_string();
    w.fault(
        "agent",
        "prompt",
        &["--times", "1", "--exit", "1", "--stderr", &err],
    );
    let send = |to: &str| a.tool(s, "herdr_link_send", json!({"to": to, "message": "m"}));
    let line = next(send("worker-a"), "SEND_FAILED");
    assert_eq!(
        line["detail"],
        "agent_blocked: agent w1:p2 refused (term_abc)"
    );
    let calls = shape(&line);
    assert_eq!(calls[2].1, "exit=1");
    assert_eq!(calls[2].0[..3], ["agent", "prompt", "worker-a"]);

    // Scope privacy: the model cannot tell, the detail is the fixed internal one.
    let line = next(send("stranger"), "PEER_NOT_FOUND");
    assert_eq!(line["detail"], "target agent is not a live peer");
    assert_eq!(
        argvs(&shape(&line)),
        ["agent get w1:p1", "agent get stranger"]
    );

    // Killed by a signal.
    w.fault("agent", "list", &["--times", "1", "--signal", "9"]);
    let line = next(a.tool(s, "herdr_link_peers", json!({})), "NOT_IN_HERDR");
    assert_eq!(shape(&line)[1].1, "signal=9");
    assert!(
        line["detail"].as_str().unwrap().contains("signal 9"),
        "{line}"
    );

    // Hung past the limit.
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", "300");
    w.fault("agent", "list", &["--times", "1", "--hang"]);
    let line = next(a.tool(s, "herdr_link_peers", json!({})), "NOT_IN_HERDR");
    let calls = shape(&line);
    assert_eq!(calls[1].1, "timeout");
    assert!(calls[1].2 >= 300.0, "{line}");
    assert!(
        line["detail"].as_str().unwrap().contains("timed out"),
        "{line}"
    );
    std::env::remove_var("HERDR_LINK_TIMEOUT_MS");

    // Too much output.
    w.fault(
        "agent",
        "list",
        &["--times", "1", "--big-stdout", "20000000"],
    );
    let line = next(a.tool(s, "herdr_link_peers", json!({})), "NOT_IN_HERDR");
    assert_eq!(shape(&line)[1].1, "too-large");

    // Invalid JSON: the parse error is in the detail.
    w.fault(
        "agent",
        "list",
        &["--times", "1", "--exit", "0", "--invalid-utf8"],
    );
    let line = next(a.tool(s, "herdr_link_peers", json!({})), "NOT_IN_HERDR");
    assert_eq!(shape(&line)[1].1, "exit=0");
    assert!(
        line["detail"].as_str().unwrap().contains("not JSON"),
        "{line}"
    );

    // The binary is gone.
    std::env::set_var("HERDR_BIN_PATH", w.dir.join("gone"));
    let line = next(
        a.tool(s, "herdr_link_close", json!({"agent": "x"})),
        "NOT_IN_HERDR",
    );
    assert_eq!(shape(&line)[0].1, "spawn-failed");
    assert!(
        line["detail"].as_str().unwrap().contains("spawn failed"),
        "{line}"
    );

    // The gate is closed: a line with no call and the reason.
    std::env::remove_var("HERDR_ENV");
    let line = next(a.tool(s, "herdr_link_peers", json!({})), "NOT_IN_HERDR");
    assert!(shape(&line).is_empty());
    assert!(
        line["detail"].as_str().unwrap().contains("HERDR_ENV"),
        "{line}"
    );
    std::env::remove_var("HERDR_LINK_LOG");
}

#[test]
fn bootstrap_writes_its_own_lines() {
    let _g = serial();
    let w = World::new(
        json!({"workspaces": [{"cwd": "/p", "tabs": [{"panes": [
            {"cwd": "/p", "agent": "pi", "status": "idle"},
            {"cwd": "/p", "agent": "pi", "name": "worker-a", "status": "idle"}
        ]}]}]}),
        "w1:p1",
    );
    let log = log_to(&w, "bootstrap.log");
    let a = abi();
    a.start("log-boot");
    let line = lines(&log, 1).pop().unwrap();
    assert_eq!(line["tool"], "bootstrap");
    assert_eq!(line["session"], "log-boot");
    assert_eq!(line["code"], "ok");
    let calls = shape(&line);
    // The probe (as on every communication path), the sequence's own read, rename, confirmation.
    assert_eq!(calls.len(), 4, "{line}");
    assert_eq!(calls[0].0, ["agent", "get", "w1:p1"]);
    assert_eq!(calls[1].0, ["agent", "get", "w1:p1"]);
    assert_eq!(calls[2].0[..3], ["agent", "rename", "w1:p1"]);
    assert!(calls[2].0[3].starts_with("hl-"), "{line}");
    assert_eq!(calls[3].0, ["agent", "get", "w1:p1"]);

    // A failing bootstrap logs SELF_UNNAMED with the rename's rejection as detail.
    w.admin(&["fake", "agent", "w1:p1", "--no-name"]);
    let err =
        json!({"error": {"code": "agent_launch_pending", "message": "pane w1:p1 is pending"}})
            .to_string();
    w.fault("agent", "rename", &["--exit", "1", "--stderr", &err]);
    a.start("log-boot-2");
    let line = lines(&log, 2).pop().unwrap();
    assert_eq!(line["tool"], "bootstrap");
    assert_eq!(line["session"], "log-boot-2");
    assert_eq!(line["code"], "SELF_UNNAMED");
    assert!(
        line["detail"]
            .as_str()
            .unwrap()
            .contains("agent_launch_pending: pane w1:p1 is pending"),
        "{line}"
    );
    assert_eq!(shape(&line)[2].1, "exit=1");
    a.end("log-boot");
    a.end("log-boot-2");
    std::env::remove_var("HERDR_LINK_LOG");
}

#[test]
fn lines_from_many_threads_stay_whole() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "threads.log");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let a = abi();
                let s = format!("log-thread-{i}");
                for _ in 0..20 {
                    assert_eq!(a.tool(&s, "herdr_link", json!({}))["ok"], true);
                }
                for _ in 0..2 {
                    let r = a.tool(
                        &s,
                        "herdr_link_send",
                        json!({"to": "worker-a", "message": "x".repeat(5000)}),
                    );
                    assert_eq!(r["ok"], true, "{r}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let got = lines(&log, 8 * 22);
    assert_eq!(got.len(), 8 * 22);
    for i in 0..8 {
        let mine: Vec<_> = got
            .iter()
            .filter(|l| l["session"] == format!("log-thread-{i}"))
            .collect();
        assert_eq!(mine.len(), 22);
        assert_eq!(
            mine.iter()
                .filter(|l| l["tool"] == "herdr_link_send")
                .count(),
            2
        );
    }
    drop(w);
    std::env::remove_var("HERDR_LINK_LOG");
}

/// Runs a few operations and checks they behave exactly as without a log.
fn calls_unaffected(label: &str) {
    let a = abi();
    let s = "log-unusable";
    let t = Instant::now();
    let r = a.tool(s, "herdr_link", json!({}));
    assert_eq!(r["ok"], true, "{label}: {r}");
    let r = a.tool(s, "herdr_link_peers", json!({}));
    assert_eq!(r["ok"], true, "{label}: {r}");
    assert_eq!(r["result"]["self"]["name"], "brain");
    let r = a.tool(s, "herdr_link_send", json!({"to": "ghost", "message": "m"}));
    assert_eq!(r["error"]["code"], "PEER_NOT_FOUND", "{label}: {r}");
    let r = a.tool(
        s,
        "herdr_link_send",
        json!({"to": "worker-a", "message": "m"}),
    );
    assert_eq!(r["ok"], true, "{label}: {r}");
    // Hang detector: an unusable log must never block a call.
    let took = t.elapsed();
    assert!(took < Duration::from_secs(60), "{label}: {took:?}");
}

#[test]
fn an_unusable_log_path_never_fails_a_call() {
    let _g = serial();
    let w = world();
    let file = w.dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let paths = [
        (
            "a nonexistent directory",
            PathBuf::from("/nonexistent-herdr-link/dir/op.log"),
        ),
        ("a directory", w.dir.clone()),
        ("under a regular file", file.join("op.log")),
        ("a full device", PathBuf::from("/dev/full")),
        ("empty (no log)", PathBuf::new()),
    ];
    for (label, path) in &paths {
        std::env::set_var("HERDR_LINK_LOG", path);
        calls_unaffected(label);
    }
    // The writer survives all of that: a usable path gets its lines again.
    let log = log_to(&w, "after.log");
    abi().tool("log-after", "herdr_link", json!({}));
    let line = lines(&log, 1).pop().unwrap();
    assert_eq!(line["session"], "log-after");
    std::env::remove_var("HERDR_LINK_LOG");
}

/// Opens the FIFO so the blocked writer can go on, reads until the writer has been quiet for a
/// while, then removes the FIFO. Returns the lines that came through.
fn unblock_and_drain(fifo: &Path) -> Vec<String> {
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path; O_RDWR on a FIFO never blocks on Linux.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK) };
    assert!(fd >= 0, "open fifo: {}", std::io::Error::last_os_error());
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut quiet_since = Instant::now();
    while quiet_since.elapsed() < Duration::from_millis(500) {
        // SAFETY: reading into a buffer we own, of the size we pass.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            bytes.extend_from_slice(&buf[..n as usize]);
            quiet_since = Instant::now();
        } else {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let _ = std::fs::remove_file(fifo);
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Unblocks the writer even when the test fails half way, so later tests keep their log.
struct Fifo(PathBuf, bool);

impl Drop for Fifo {
    fn drop(&mut self) {
        if !self.1 {
            std::env::remove_var("HERDR_LINK_LOG");
            unblock_and_drain(&self.0);
        }
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn a_fifo_nobody_reads_never_blocks_a_call() {
    let _g = serial();
    let w = world();
    let path = w.dir.join("stuck.fifo");
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path and mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut fifo = Fifo(path.clone(), false);
    std::env::set_var("HERDR_LINK_LOG", &path);
    let a = abi();

    // The writer blocks opening the FIFO; the queue fills, then lines are dropped.
    let total = QUEUE_DEPTH * 3;
    let mut times = Vec::with_capacity(total);
    for _ in 0..total {
        let t = Instant::now();
        let r = a.tool("log-fifo", "herdr_link", json!({}));
        times.push(t.elapsed());
        assert_eq!(r["ok"], true, "{r}");
    }
    // Operations that spawn Herdr are not slowed either.
    let mut spawning = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = a.tool("log-fifo", "herdr_link_peers", json!({}));
        spawning.push(t.elapsed());
        assert_eq!(r["ok"], true, "{r}");
    }
    let max = *times.iter().max().unwrap();
    let med = median(&mut times);
    eprintln!(
        "{total} no-spawn calls with a stuck log: median {med:?}, max {max:?}; peers max {:?}",
        spawning.iter().max().unwrap()
    );
    // Figures only (a loaded machine makes any clock bound a race): a call that waited for the
    // stuck writer would never return, and the dropped lines checked below show the calls
    // queued and went on.

    // Let the writer go: it delivers what it had queued (at most the queue plus the line it
    // held), each line whole; the rest was dropped.
    std::env::remove_var("HERDR_LINK_LOG");
    let got = unblock_and_drain(&path);
    fifo.1 = true;
    eprintln!(
        "the writer delivered {} of {} lines once unblocked; the rest were dropped",
        got.len(),
        total + spawning.len()
    );
    assert!(!got.is_empty());
    assert!(got.len() <= QUEUE_DEPTH + 1, "{} lines", got.len());
    for l in &got {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["session"], "log-fifo");
    }

    // The writer keeps working for the next path.
    let log = log_to(&w, "after-fifo.log");
    a.tool("log-after-fifo", "herdr_link", json!({}));
    assert_eq!(lines(&log, 1)[0]["session"], "log-after-fifo");
    std::env::remove_var("HERDR_LINK_LOG");
}

/// The log holds message text: it is created 0600 (whatever the umask allows beyond that) and
/// never written through a symlink.
#[test]
fn the_log_is_private_and_never_follows_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let _g = serial();
    let w = world();
    let a = abi();
    let s = "log-private";
    // SAFETY: umask only changes this process's file-creation mask.
    let old = unsafe { libc::umask(0o022) };
    let log = log_to(&w, "private.log");
    let r = a.tool(
        s,
        "herdr_link_send",
        json!({"to": "worker-b", "message": "secret text"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let got = lines(&log, 1);
    assert_eq!(got.len(), 1);
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "created private under umask 022");

    // A log an older version left readable by others (0644) is closed to them on the next line.
    let old_log = w.dir.join("old.log");
    std::fs::write(&old_log, "").unwrap();
    std::fs::set_permissions(&old_log, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::env::set_var("HERDR_LINK_LOG", &old_log);
    let r = a.tool(s, "herdr_link_peers", json!({}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(lines(&old_log, 1).len(), 1);
    let mode = std::fs::metadata(&old_log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "an existing 0644 log is tightened to 0600");
    log_to(&w, "private.log");

    // A symlink at the path: the line is dropped, the target untouched, the call unaffected.
    let target = w.dir.join("elsewhere.txt");
    std::fs::write(&target, "untouched\n").unwrap();
    let link = w.dir.join("link.log");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::env::set_var("HERDR_LINK_LOG", &link);
    let r = a.tool(s, "herdr_link_peers", json!({}));
    assert_eq!(r["ok"], true, "{r}");
    // A later line to the real log proves the writer went past the symlinked one.
    log_to(&w, "private.log");
    a.tool(s, "herdr_link_peers", json!({}));
    assert_eq!(lines(&log, 2).len(), 2);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched\n");
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    std::env::remove_var("HERDR_LINK_LOG");
}

/// A send's line says who sent what to whom: sender, receiver, message id, workspace, the
/// message's length and a preview of its text, and the receiver's state at delivery. With
/// `HERDR_LINK_LOG_TEXT=0` the preview is gone and the delivered wrapper is only a length.
#[test]
fn a_send_line_names_sender_receiver_and_a_preview_unless_text_is_off() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "msg.log");
    let a = abi();
    let long = format!("Please review PR 7. {}", "x".repeat(300));
    let r = a.tool(
        "log-msg",
        "herdr_link_send",
        json!({"to": "worker-b", "message": long}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let r = a.tool(
        "log-msg",
        "herdr_link_send",
        json!({"to": "nobody", "message": "hi"}),
    );
    assert_eq!(r["ok"], false, "{r}");
    std::env::set_var("HERDR_LINK_LOG_TEXT", "0");
    let r = a.tool(
        "log-msg",
        "herdr_link_send",
        json!({"to": "worker-b", "message": "secret"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    std::env::remove_var("HERDR_LINK_LOG_TEXT");
    let l = lines(&log, 3);
    let sends: Vec<&Value> = l
        .iter()
        .filter(|l| l["tool"] == "herdr_link_send")
        .collect();
    assert_eq!(sends.len(), 3, "{l:#?}");
    for line in &sends {
        shape(line);
    }
    let m = &sends[0]["message"];
    assert_eq!(m["from"], "brain");
    assert_eq!(m["to"], "worker-b");
    assert_eq!(m["workspace"], "w1");
    assert_eq!(m["receiver_state"], "idle");
    assert!(m["id"].as_str().unwrap().starts_with("hl_"), "{m}");
    assert_eq!(m["chars"], long.chars().count());
    let preview = m["preview"].as_str().unwrap();
    assert!(preview.starts_with("Please review PR 7. xxx"), "{preview}");
    assert!(
        preview.ends_with('…') && preview.chars().count() < 200,
        "{preview}"
    );
    // A refused send still names its receiver and text; nothing was sent, so no id.
    let m = &sends[1]["message"];
    assert_eq!(
        (m["to"].as_str(), m["id"].as_str()),
        (Some("nobody"), Some(""))
    );
    assert_eq!(m["preview"], "hi");
    // Without text: a length, never the words.
    let m = &sends[2]["message"];
    assert_eq!(
        (m["chars"].as_u64(), m["preview"].is_null()),
        (Some(6), true)
    );
    let text = sends[2].to_string();
    assert!(!text.contains("secret"), "{text}");
    assert!(text.contains("text not kept"), "{text}");
    std::env::remove_var("HERDR_LINK_LOG");
}

/// Without `HERDR_LINK_LOG` the log is written to the per-user file below the XDG state
/// directory (made 0700, the file 0600); `HERDR_LINK_LOG_OFF=1` writes nothing at all.
#[test]
fn the_log_is_on_by_default_in_the_state_directory_and_has_an_off_switch() {
    use std::os::unix::fs::PermissionsExt;
    let _g = serial();
    let w = world();
    std::env::remove_var("HERDR_LINK_LOG");
    let state = w.dir.join("xdg-state");
    std::env::set_var("XDG_STATE_HOME", &state);
    let path = state.join("herdr-link/log.jsonl");
    assert_eq!(herdr_link::oplog::default_path(), Some(path.clone()));
    let a = abi();
    std::env::set_var("HERDR_LINK_LOG_OFF", "1");
    a.tool("log-default", "herdr_link_peers", json!({}));
    std::env::set_var("HERDR_LINK_LOG_OFF", "0");
    a.tool("log-default", "herdr_link_peers", json!({}));
    let l = lines(&path, 1);
    // The first call, made with the log off, left no line; a bootstrap line may come first.
    let peers: Vec<&Value> = l
        .iter()
        .filter(|l| l["tool"] == "herdr_link_peers")
        .collect();
    assert_eq!(peers.len(), 1, "{l:#?}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    std::env::remove_var("HERDR_LINK_LOG_OFF");
}

/// Rotation under concurrent writers: four writers append 2000 lines through a bound that
/// forces one rotation; every line is in `<path>.1` or `<path>` exactly once, whole, and no
/// file passed the bound.
#[test]
fn rotation_keeps_every_line_whole_with_concurrent_writers() {
    let dir = std::env::temp_dir().join(format!("herdr-link-rotate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("log.jsonl");
    let max = 60_000u64;
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    let line = format!("{{\"t\":{t},\"i\":{i},\"pad\":\"{}\"}}\n", "p".repeat(20));
                    herdr_link::oplog::append(&path, &line, max).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let old = std::fs::read_to_string(herdr_link::oplog::rotated(&path)).unwrap();
    let new = std::fs::read_to_string(&path).unwrap();
    assert!(old.len() as u64 <= max && new.len() as u64 <= max);
    let mut seen = std::collections::HashSet::new();
    for l in old.lines().chain(new.lines()) {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(
            seen.insert((v["t"].as_u64(), v["i"].as_u64())),
            "twice: {l}"
        );
    }
    assert_eq!(seen.len(), 2000);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits (up to 15 s) for the follow-up line of message `id`.
fn follow_line(path: &Path, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["tool"] == "follow" && l["message"]["id"] == id);
        if let Some(l) = found {
            return l;
        }
        assert!(Instant::now() < deadline, "no follow-up of {id}:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// After `sent` is answered, the receiver is followed with `agent get` only: one that never
/// turns working is "not taken up" once the bound passed; one that turns working after the
/// answer is "taken up"; the send's result carries none of it.
#[test]
fn a_delivered_message_is_followed_until_taken_up_or_the_bound() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "follow.log");
    std::env::set_var("HERDR_LINK_FOLLOW", "1");
    std::env::set_var("HERDR_LINK_TAKEN_UP_MS", "1200");
    let a = abi();
    let s = "log-follow";
    let id = |r: &Value| r["result"]["id"].as_str().unwrap().to_string();
    let r = a.tool(
        s,
        "herdr_link_send",
        json!({"to": "worker-b", "message": "never read"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"].as_object().unwrap().len(), 3, "{r}");
    let ignored = id(&r);
    let l = follow_line(&log, &ignored);
    shape(&l);
    assert_eq!(l["code"], "not_taken_up", "{l}");
    assert_eq!(l["message"]["to"], "worker-b");
    assert!(
        l["detail"]
            .as_str()
            .unwrap()
            .contains("not seen working within 1200 ms"),
        "{l}"
    );
    for (argv, _, _) in shape(&l) {
        assert_eq!(&argv[..2], ["agent", "get"], "{l}");
    }
    // Taken up: the receiver starts working after the answer.
    let r = a.tool(
        s,
        "herdr_link_send",
        json!({"to": "worker-b", "message": "read me"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    w.admin(&["fake", "agent", "w1:p3", "--status", "working"]);
    let l = follow_line(&log, &id(&r));
    assert_eq!(l["code"], "taken_up", "{l}");
    assert!(
        l["detail"]
            .as_str()
            .unwrap()
            .contains("worker-b was working"),
        "{l}"
    );
    // Nothing was prompted twice: one prompt per send.
    let prompts = w
        .calls()
        .iter()
        .filter(|c| c.contains("agent prompt"))
        .count();
    assert_eq!(prompts, 2);
    std::env::set_var("HERDR_LINK_FOLLOW", "0");
    std::env::remove_var("HERDR_LINK_TAKEN_UP_MS");
    std::env::remove_var("HERDR_LINK_LOG");
}

/// What following costs: sends with following on and off (the median send, which following
/// must not change: it starts after the answer), and the `agent get` calls the follower made.
/// Prints the figures for BENCHMARKS.md ("Following deliveries"); asserts only that every
/// followed message got its line and that no call waited for one.
#[test]
fn following_costs_the_send_nothing_and_the_follower_one_look_per_half_second() {
    let _g = serial();
    let w = world();
    let log = log_to(&w, "follow-cost.log");
    std::env::set_var("HERDR_LINK_TAKEN_UP_MS", "1000");
    let a = abi();
    let s = "log-follow-cost";
    let times = |follow: &str, n: usize| -> (Duration, Vec<String>) {
        std::env::set_var("HERDR_LINK_FOLLOW", follow);
        let mut v = Vec::new();
        let mut ids = Vec::new();
        for i in 0..n {
            // A server of its own for each send, so no send waits for another's delivery turn
            // (src/turn.rs) and the figure is the send's own cost.
            std::env::set_var(
                "HERDR_SOCKET_PATH",
                w.dir.join(format!("{follow}-{i}.sock")),
            );
            let t = Instant::now();
            let r = a.tool(
                s,
                "herdr_link_send",
                json!({"to": "worker-a", "message": format!("m{i}")}),
            );
            v.push(t.elapsed());
            assert_eq!(r["ok"], true, "{r}");
            ids.push(r["result"]["id"].as_str().unwrap().to_string());
        }
        (median(&mut v), ids)
    };
    let (off, _) = times("0", 15);
    let (on, ids) = times("1", 15);
    // worker-a is working: each message is taken up at the first look.
    w.clear_log();
    let taken: Vec<Value> = ids.iter().map(|id| follow_line(&log, id)).collect();
    assert!(taken.iter().all(|l| l["code"] == "taken_up"), "{taken:#?}");
    // An idle receiver that never works: looked at until the bound.
    let (_, idle) = {
        let r = a.tool(
            s,
            "herdr_link_send",
            json!({"to": "worker-b", "message": "idle"}),
        );
        (0, r["result"]["id"].as_str().unwrap().to_string())
    };
    let l = follow_line(&log, &idle);
    assert_eq!(l["code"], "not_taken_up");
    let looks = w
        .calls()
        .iter()
        .filter(|c| c.as_str() == "agent get worker-b")
        .count();
    println!(
        "following: median send {:.2?} with following off, {:.2?} on (15 each); \
         a taken-up message: 1 `agent get`; a message not taken up within 1000 ms: {} calls \
         (`agent get` of the send included)",
        off, on, looks
    );
    std::env::set_var("HERDR_LINK_FOLLOW", "0");
    std::env::remove_var("HERDR_LINK_TAKEN_UP_MS");
    std::env::remove_var("HERDR_LINK_LOG");
}
