//! Self identity through the C ABI: fresh resolution, the bootstrap (naming, confirmation,
//! collisions, readiness retry, dedupe across threads), and sanitized SELF_UNNAMED
//! (behaviour doc §10.2 items 9–22, issue #2 §4).

use test_support::world as common;

use common::{abi, serial, World};
use serde_json::{json, Value};

fn world_with_unnamed_self() -> World {
    World::new(
        json!({"workspaces": [{"cwd": "/p", "tabs": [{"panes": [
            {"cwd": "/p", "agent": "codex", "status": "idle"},
            {"cwd": "/p", "agent": "pi", "name": "worker-a", "status": "idle"}
        ]}]}]}),
        "w1:p1",
    )
}

fn self_name(r: &Value) -> String {
    assert_eq!(r["ok"], true, "{r}");
    r["result"]["self"]["name"].as_str().unwrap().to_string()
}

fn is_bootstrap_name(n: &str) -> bool {
    n.len() == 11
        && n.starts_with("hl-")
        && n[3..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn renames(w: &World) -> usize {
    w.calls()
        .iter()
        .filter(|c| c.starts_with("agent rename"))
        .count()
}

#[test]
fn existing_name_is_kept_and_read_fresh() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    assert_eq!(
        self_name(&a.tool("id", "herdr_link_peers", json!({}))),
        "brain"
    );
    assert_eq!(
        self_name(&a.tool("id", "herdr_link_peers", json!({}))),
        "brain"
    );
    let gets = w.calls().iter().filter(|c| *c == "agent get w1:p1").count();
    assert_eq!(gets, 2, "one fresh self read per call, nothing cached");
    assert_eq!(renames(&w), 0, "a valid name is never changed");
    // The name changes under us: the next call sees it.
    w.admin(&["fake", "agent", "w1:p1", "--name", "brain-2"]);
    assert_eq!(
        self_name(&a.tool("id", "herdr_link_peers", json!({}))),
        "brain-2"
    );
}

#[test]
fn unnamed_self_is_named_and_confirmed() {
    let _g = serial();
    let w = world_with_unnamed_self();
    let a = abi();
    let name = self_name(&a.tool("boot", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name), "{name}");
    let calls = w.calls();
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert_eq!(&calls[..2], ["agent get w1:p1", "agent get w1:p1"]);
    assert_eq!(calls[2], format!("agent rename w1:p1 {name}"));
    assert_eq!(&calls[3..], ["agent get w1:p1", "agent list"]);
    // The bootstrapped agent is now a peer of another agent, under that name.
    std::env::set_var("HERDR_PANE_ID", "w1:p2");
    let other = a.tool("boot-2", "herdr_link_peers", json!({}));
    assert_eq!(
        other["result"]["peers"],
        json!([{"name": name, "state": "idle"}])
    );
    // And it can send.
    std::env::set_var("HERDR_PANE_ID", "w1:p1");
    let r = a.tool(
        "boot",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "hi"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(renames(&w), 1, "named once, kept afterwards");
}

#[test]
fn unconfirmed_rename_fails_closed() {
    let _g = serial();
    let w = world_with_unnamed_self();
    // The rename "succeeds" but changes nothing.
    w.fault("agent", "rename", &["--exit", "0", "--stdout", "{}"]);
    let a = abi();
    let r = a.tool("unconf", "herdr_link_peers", json!({}));
    assert_eq!(
        r["error"]["message"],
        "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name"
    );
    let calls = w.calls();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert!(calls[2].starts_with("agent rename w1:p1 hl-"));
    assert_eq!(calls[3], "agent get w1:p1");
}

#[test]
fn name_taken_regenerates_within_budget() {
    let _g = serial();
    let w = world_with_unnamed_self();
    let taken = json!({"error": {"code": "agent_name_taken", "message": "agent name hl-x is already used; candidates: pane_id=w1:p9"}, "id": "cli:agent:rename"}).to_string();
    w.fault(
        "agent",
        "rename",
        &["--times", "1", "--exit", "1", "--stderr", &taken],
    );
    let a = abi();
    let name = self_name(&a.tool("taken", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name));
    assert_eq!(renames(&w), 2);
    let names: Vec<_> = w
        .argv_log()
        .iter()
        .filter(|c| c[1] == "rename")
        .map(|c| c[3].clone())
        .collect();
    assert_ne!(names[0], names[1], "a fresh name for each attempt");

    // Always taken: exactly three attempts, then SELF_UNNAMED.
    let w = world_with_unnamed_self();
    w.fault("agent", "rename", &["--exit", "1", "--stderr", &taken]);
    let r = a.tool("taken-2", "herdr_link_peers", json!({}));
    assert_eq!(r["error"]["code"], "SELF_UNNAMED");
    assert!(!common::has_raw_id(&r.to_string()));
    assert_eq!(renames(&w), 3);
}

#[test]
fn not_in_herdr_keeps_its_class_during_bootstrap() {
    let _g = serial();
    let a = abi();
    let w = world_with_unnamed_self();
    w.fault("agent", "get", &["--exit", "0", "--stdout", "garbage"]);
    let r = a.tool("nih", "herdr_link_peers", json!({}));
    assert_eq!(r["error"]["code"], "NOT_IN_HERDR");
    assert_eq!(w.calls().len(), 1, "no retry on a transport failure");

    let w = world_with_unnamed_self();
    w.fault("agent", "rename", &["--signal", "9"]);
    let r = a.tool("nih-2", "herdr_link_peers", json!({}));
    assert_eq!(r["error"]["code"], "NOT_IN_HERDR");
}

#[test]
fn other_rename_failures_are_sanitized() {
    let _g = serial();
    let w = world_with_unnamed_self();
    let err =
        json!({"error": {"code": "pane_not_found", "message": "pane w1:p1 not found"}}).to_string();
    w.fault("agent", "rename", &["--exit", "1", "--stderr", &err]);
    let a = abi();
    let r = a.tool(
        "san",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "x"}),
    );
    assert_eq!(
        r["error"]["message"],
        "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name"
    );
    assert!(w.prompts().is_empty());
}

#[test]
fn self_pane_without_agent_is_self_unnamed() {
    let _g = serial();
    let w = World::new(
        json!({"workspaces": [{"cwd": "/p", "tabs": [{"panes": [
            {"cwd": "/p"},
            {"cwd": "/p", "agent": "pi", "name": "worker-a", "status": "idle"}
        ]}]}]}),
        "w1:p1",
    );
    let a = abi();
    let t = std::time::Instant::now();
    let r = a.tool("shell", "herdr_link_peers", json!({}));
    assert_eq!(r["error"]["code"], "SELF_UNNAMED");
    let calls = w.calls();
    assert_eq!(calls[0], "agent get w1:p1");
    let probes = calls.iter().filter(|c| *c == "agent get w1:p1").count();
    assert_eq!(probes, 3, "readiness retry: 3 probes: {calls:?}");
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(190),
        "100 ms apart"
    );
    assert_eq!(renames(&w), 0);
}

#[test]
fn readiness_retry_names_the_occupant_once_detected() {
    let _g = serial();
    let w = world_with_unnamed_self();
    let nf = json!({"error": {"code": "agent_not_found", "message": "agent target w1:p1 not found"}, "id": "cli:agent:get"}).to_string();
    w.fault(
        "agent",
        "get",
        &["--times", "2", "--exit", "1", "--stderr", &nf],
    );
    let a = abi();
    let name = self_name(&a.tool("ready", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name));
    let probes = w.calls().iter().filter(|c| *c == "agent get w1:p1").count();
    assert_eq!(
        probes,
        5,
        "2 undetected + unnamed probe, bootstrap probe, confirm: {:?}",
        w.calls()
    );
    assert_eq!(renames(&w), 1);
}

#[test]
fn exhausted_readiness_leaves_nothing_poisoned() {
    let _g = serial();
    let w = World::new(
        json!({"workspaces": [{"cwd": "/p", "tabs": [{"panes": [
            {"cwd": "/p", "agent": "codex", "status": "idle", "detected": false}
        ]}]}]}),
        "w1:p1",
    );
    let a = abi();
    assert_eq!(
        a.tool("poison", "herdr_link_peers", json!({}))["error"]["code"],
        "SELF_UNNAMED"
    );
    w.admin(&["fake", "agent", "w1:p1", "--detected", "true"]);
    let name = self_name(&a.tool("poison", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name));
    assert_eq!(renames(&w), 1);
}

#[test]
fn concurrent_callers_share_one_rename() {
    let _g = serial();
    let w = world_with_unnamed_self();
    // Slow Herdr down so that the eight callers really overlap.
    std::env::set_var("HERDR_FAKE_DELAY_MS", "30");
    let a = abi();
    a.start("race-boot"); // the background bootstrap races the callers too
    let handles: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                self_name(&abi().tool(&format!("race-{i}"), "herdr_link_peers", json!({})))
            })
        })
        .collect();
    let names: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    std::env::remove_var("HERDR_FAKE_DELAY_MS");
    assert!(
        names.iter().all(|n| n == &names[0] && is_bootstrap_name(n)),
        "{names:?}"
    );
    // Let the session-start bootstrap settle, then count.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(renames(&w), 1, "{:?}", w.calls());
}

#[test]
fn session_start_bootstraps_in_the_background() {
    let _g = serial();
    let w = world_with_unnamed_self();
    // The bootstrap's rename is held for 3 s: a start that waited for it would return with the
    // rename done. No clock bound on the start itself (the machine may be loaded).
    w.fault("agent", "rename", &["--delay-ms", "3000"]);
    let a = abi();
    a.start("bg");
    assert_eq!(renames(&w), 0, "hl_session_start waited for the bootstrap");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while renames(&w) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(renames(&w), 1);
    std::thread::sleep(std::time::Duration::from_millis(100));
    // Already named now: a call adds no rename.
    let name = self_name(&a.tool("bg", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name));
    assert_eq!(renames(&w), 1);
}

/// Threads of this process that are running a startup bootstrap (the kernel keeps the first 15
/// bytes of the thread name `herdr-link-bootstrap`).
fn bootstrap_threads() -> Vec<u64> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == "herdr-link-boot" {
            if let Ok(tid) = e.file_name().to_string_lossy().parse() {
                out.push(tid);
            }
        }
    }
    out
}

/// Waits (up to 10 s) until no startup bootstrap thread is left.
fn settle_bootstraps() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !bootstrap_threads().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "a bootstrap thread never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn only_a_positive_unnamed_record_of_this_pane_is_renamed() {
    let _g = serial();
    settle_bootstraps();
    let a = abi();
    // The caller is user-named "brain"; each reply below is valid JSON that is not a record of
    // this pane's live unnamed occupant. None may lead to a rename, on either path.
    let replies = [
        json!({"result": {}}),
        json!({}),
        json!([]),
        json!({"result": {"agent": {"agent": "pi", "agent_status": "idle"}}}),
        json!({"result": {"agent": {"pane_id": "w1:p2", "agent": "pi", "workspace_id": "w1"}}}),
        json!({"result": {"agent": {"pane_id": "w1:p1", "agent": "pi", "live": false}}}),
    ];
    for (i, reply) in replies.iter().enumerate() {
        let w = World::standard();
        w.fault("agent", "get", &["--stdout", &reply.to_string()]);
        let s = format!("positive-{i}");
        a.start(&s);
        settle_bootstraps();
        let r = a.tool(&s, "herdr_link_peers", json!({}));
        assert_eq!(
            r["error"]["message"],
            "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name",
            "{reply}: {r}"
        );
        assert_eq!(renames(&w), 0, "{reply}: {:?}", w.calls());
        assert!(
            w.dump().to_string().contains("\"brain\""),
            "the user's name is kept"
        );
        a.end(&s);
    }
}

#[test]
fn the_confirmation_read_is_not_retried() {
    let _g = serial();
    settle_bootstraps();
    let w = world_with_unnamed_self();
    // The read right after the rename says the occupant is not there (once).
    let nf = json!({"error": {"code": "agent_not_found", "message": "agent target w1:p1 not found"}, "id": "cli:agent:get"}).to_string();
    w.fault(
        "agent",
        "get",
        &[
            "--after", "2", "--times", "1", "--exit", "1", "--stderr", &nf,
        ],
    );
    let a = abi();
    let r = a.tool("confirm-once", "herdr_link_peers", json!({}));
    assert_eq!(
        r["error"]["message"], "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name",
        "{r}"
    );
    let calls = w.calls();
    assert_eq!(
        calls.len(),
        4,
        "probe, bootstrap read, rename, one confirmation: {calls:?}"
    );
    assert!(calls[2].starts_with("agent rename w1:p1 hl-"), "{calls:?}");
    assert_eq!(calls[3], "agent get w1:p1");
    // The rename itself took effect: the next call reads the name and renames nothing.
    let name = self_name(&a.tool("confirm-once", "herdr_link_peers", json!({})));
    assert!(is_bootstrap_name(&name));
    assert_eq!(renames(&w), 1);
}

#[test]
fn a_moved_pane_is_bootstrapped_once() {
    let _g = serial();
    settle_bootstraps();
    let w = World::new(
        json!({"workspaces": [
            {"cwd": "/p", "tabs": [{"panes": [
                {"cwd": "/p", "agent": "codex", "status": "idle"},
                {"cwd": "/p", "agent": "pi", "name": "worker-a", "status": "idle"}
            ]}]},
            {"cwd": "/q", "tabs": [{"panes": [
                {"cwd": "/q", "agent": "pi", "name": "stranger", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    );
    // The caller's pane moves to w2: HERDR_PANE_ID (w1:p1) is now a stale alias.
    let moved: Value = serde_json::from_str(&w.admin(&["fake", "move", "w1:p1", "w2"])).unwrap();
    let current = moved["pane_id"].as_str().unwrap().to_string();
    assert_ne!(current, "w1:p1");
    // A slow rename keeps the first sequence in flight while the others arrive.
    w.fault("agent", "rename", &["--delay-ms", "300"]);
    let a = abi();
    a.start("moved"); // the startup path, from the stale alias
    let callers: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                self_name(&abi().tool(&format!("moved-{i}"), "herdr_link_peers", json!({})))
            })
        })
        .collect();
    let names: Vec<String> = callers.into_iter().map(|h| h.join().unwrap()).collect();
    settle_bootstraps();
    assert!(
        names.iter().all(|n| n == &names[0] && is_bootstrap_name(n)),
        "{names:?}"
    );
    let renamed: Vec<_> = w
        .calls()
        .into_iter()
        .filter(|c| c.starts_with("agent rename"))
        .collect();
    assert_eq!(renamed.len(), 1, "exactly one rename: {:?}", w.calls());
    assert!(renamed[0].starts_with(&format!("agent rename {current} ")));
}

#[test]
fn a_burst_of_session_starts_spawns_one_bootstrap_thread() {
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let _g = serial();
    settle_bootstraps();
    let _w = World::standard();
    // A slow Herdr keeps the first thread alive through the whole burst (about 0.1 s idle): once
    // it settles, a later start may rightly run a fresh one, so the delay must outlast the burst
    // on a loaded machine.
    std::env::set_var("HERDR_FAKE_DELAY_MS", "2000");
    let stop = Arc::new(AtomicBool::new(false));
    let monitor = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // A thread a bootstrap thread starts (the operator log's writer, when the log's
            // file changed) carries the bootstrap's name until it names itself: such a thread,
            // seen renamed later, is not a bootstrap.
            let mut seen = HashSet::new();
            let mut renamed = HashSet::new();
            while !stop.load(Ordering::Relaxed) {
                seen.extend(bootstrap_threads());
                for t in &seen {
                    let comm = std::fs::read_to_string(format!("/proc/self/task/{t}/comm"));
                    if comm.is_ok_and(|c| !c.is_empty() && c.trim_end() != "herdr-link-boot") {
                        renamed.insert(*t);
                    }
                }
            }
            &seen - &renamed
        })
    };
    let go = Arc::new(std::sync::Barrier::new(16));
    let starters: Vec<_> = (0..16)
        .map(|t| {
            let go = go.clone();
            std::thread::spawn(move || {
                let a = abi();
                go.wait();
                for i in 0..(1000 / 16 + usize::from(t < 1000 % 16)) {
                    a.start(&format!("burst-{t}-{i}"));
                }
            })
        })
        .collect();
    for h in starters {
        h.join().unwrap();
    }
    settle_bootstraps();
    stop.store(true, Ordering::Relaxed);
    let seen = monitor.join().unwrap();
    std::env::remove_var("HERDR_FAKE_DELAY_MS");
    for t in 0..16 {
        for i in 0..=(1000 / 16) {
            abi().end(&format!("burst-{t}-{i}"));
        }
    }
    assert_eq!(
        seen.len(),
        1,
        "bootstrap threads seen during the burst: {seen:?}"
    );
}

/// docs/c-abi.md: input is checked before any Herdr call that could change something. A send that
/// could never travel (a blank message, a recipient that is not an Agent Name, a message
/// over the limit) from an unnamed caller fails with no Herdr call at all: the self-identity
/// bootstrap never renames the caller for it.
#[test]
fn a_send_that_cannot_travel_never_renames_the_caller() {
    let _g = serial();
    let w = world_with_unnamed_self();
    let a = abi();
    let long = "x".repeat(herdr_link::limits::MAX_MESSAGE_CHARS + 1);
    let cases = [
        (json!({"to": "worker-a", "message": ""}), "SEND_FAILED"),
        (
            json!({"to": "worker-a", "message": " \n\t "}),
            "SEND_FAILED",
        ),
        (json!({"to": "worker-a", "message": long}), "SEND_FAILED"),
        (
            json!({"to": "Not A Name", "message": "hi"}),
            "PEER_NOT_FOUND",
        ),
        (json!({"to": "worker-a"}), "SEND_FAILED"),
    ];
    for (i, (input, code)) in cases.into_iter().enumerate() {
        let r = a.tool(&format!("send-input-{i}"), "herdr_link_send", input.clone());
        assert_eq!(r["error"]["code"], code, "{input}: {r}");
    }
    assert!(w.calls().is_empty(), "no Herdr call: {:?}", w.calls());
    assert_eq!(renames(&w), 0);
    // A send that can travel still bootstraps the unnamed caller first.
    let r = a.tool(
        "send-input-ok",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "hi"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(renames(&w), 1);
}
