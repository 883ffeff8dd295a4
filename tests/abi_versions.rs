//! The C ABI against both Herdr versions the fake plays (0.8.0 and 0.8.2), each world pinning
//! its version: what 0.8.2 changed for send and start gives the right code, with nothing retried
//! and exactly the created tab or pane rolled back. (The whole abi_ops/abi_start suites also run
//! a second time with `HERDR_FAKE_VERSION=0.8.2` from scripts/test.sh.)

use test_support::world as common;

use common::{abi, serial, World};
use serde_json::{json, Value};

const VERSIONS: [&str; 2] = ["0.8.0", "0.8.2"];

/// brain (self), a blocked agent, an agent whose PTY writes fail, an anchor for `with`.
fn world(version: &str, config: Value) -> World {
    let mut config = config;
    config["version"] = json!(version);
    World::new(
        json!({"config": config, "workspaces": [{"cwd": "/proj", "tabs": [{"panes": [
            {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
            {"cwd": "/proj", "agent": "claude", "name": "stuck", "status": "blocked"},
            {"cwd": "/proj", "agent": "codex", "name": "broken", "prompt_fails": true},
            {"cwd": "/proj", "agent": "pi", "name": "anchor", "status": "idle"}
        ]}]}]}),
        "w1:p1",
    )
}

fn send(to: &str) -> Value {
    abi().tool(
        "v",
        "herdr_link_send",
        json!({"to": to, "message": "hello"}),
    )
}

fn code(r: &Value) -> &str {
    assert_eq!(r["ok"], false, "expected failure: {r}");
    r["error"]["code"].as_str().unwrap()
}

fn count(w: &World, prefix: &str) -> usize {
    w.calls().iter().filter(|c| c.starts_with(prefix)).count()
}

fn tabs(w: &World) -> usize {
    w.dump()["workspaces"][0]["tabs"].as_array().unwrap().len()
}

fn panes(w: &World) -> usize {
    w.dump()["workspaces"][0]["tabs"][0]["panes"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn herdr_version_is_what_the_world_says() {
    let _g = serial();
    for v in VERSIONS {
        let _w = world(v, json!({}));
        let out = std::process::Command::new(common::fake_bin())
            .arg("--version")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("herdr {v}\n"));
    }
}

#[test]
fn send_to_a_blocked_agent() {
    let _g = serial();
    // 0.8.0 types into a blocked agent: Herdr accepted delivery.
    let w = world("0.8.0", json!({}));
    assert_eq!(send("stuck")["ok"], true);
    assert_eq!(w.prompts().len(), 1);
    // 0.8.2 refuses with agent_blocked: SEND_FAILED, nothing written, no retry.
    let w = world("0.8.2", json!({}));
    let log = w.dir.join("oplog.jsonl");
    std::env::set_var("HERDR_LINK_LOG", &log);
    let r = send("stuck");
    std::env::remove_var("HERDR_LINK_LOG");
    assert_eq!(code(&r), "SEND_FAILED");
    assert_eq!(
        r["error"]["message"],
        "SEND_FAILED: the receiving agent is waiting for its user to answer a prompt or dialog, so Herdr typed nothing; nothing was sent. Send the message again once that agent can take messages"
    );
    assert!(w.prompts().is_empty());
    assert_eq!(count(&w, "agent prompt"), 1, "{:?}", w.calls());
    // The operator log says why.
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("agent_blocked") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(text.contains("agent_blocked"), "{text}");
}

#[test]
fn failed_write_is_send_failed_in_both() {
    let _g = serial();
    for v in VERSIONS {
        let w = world(v, json!({}));
        assert_eq!(code(&send("broken")), "SEND_FAILED", "{v}");
        assert!(w.prompts().is_empty());
        assert_eq!(count(&w, "agent prompt"), 1, "{v}: no retry");
        // And an ordinary agent still gets its message.
        assert_eq!(send("anchor")["ok"], true, "{v}");
        assert_eq!(w.prompts().len(), 1);
    }
}

fn start(w: &World, input: Value) -> Value {
    let dir = w.dir.join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    abi().tool_in("v", "herdr_link_start", input, &dir)
}

#[test]
fn start_waits_for_readiness_and_succeeds_in_both() {
    let _g = serial();
    for v in VERSIONS {
        let w = world(v, json!({}));
        let r = start(&w, json!({"name": "fresh", "kind": "pi", "args": []}));
        assert_eq!(
            r["result"],
            json!({"status": "started", "agent": "fresh", "kind": "pi"}),
            "{v}: {r}"
        );
        assert_eq!(count(&w, "agent start"), 1);
        let g = std::process::Command::new(common::fake_bin())
            .args(["agent", "get", "fresh"])
            .output()
            .unwrap();
        let g: Value = serde_json::from_slice(&g.stdout).unwrap();
        assert_eq!(g["result"]["agent"]["agent_status"], "idle", "{v}");
        assert_eq!(g["result"]["agent"]["interactive_ready"], true, "{v}");
        // with placement: the new pane's shell is still starting on 0.8.2 (retried by Herdr).
        let r = start(
            &w,
            json!({"name": "sib", "kind": "codex", "args": [], "with": "anchor"}),
        );
        assert_eq!(r["ok"], true, "{v}: {r}");
        assert_eq!(count(&w, "agent start"), 2);
    }
}

#[test]
fn blocked_new_agent_rolls_back_exactly_on_082() {
    let _g = serial();
    // 0.8.0 counts a blocked new agent as ready.
    let w = world("0.8.0", json!({"start_status": "blocked"}));
    assert_eq!(
        start(&w, json!({"name": "fresh", "kind": "pi", "args": []}))["ok"],
        true
    );
    // 0.8.2: agent_not_ready -> START_FAILED, the created tab closed, nothing retried.
    let w = world("0.8.2", json!({"start_status": "blocked"}));
    let before = tabs(&w);
    let r = start(&w, json!({"name": "fresh", "kind": "pi", "args": []}));
    assert_eq!(code(&r), "START_FAILED");
    assert_eq!(
        r["error"]["message"],
        "START_FAILED: Herdr did not accept Agent start"
    );
    let calls = w.calls();
    assert_eq!(count(&w, "agent start"), 1, "{calls:?}");
    assert_eq!(count(&w, "tab create"), 1, "{calls:?}");
    assert_eq!(calls.last().unwrap(), "tab close w1:t2", "{calls:?}");
    assert_eq!(tabs(&w), before, "the created tab is gone");

    // with placement: exactly the split pane is closed.
    w.clear_log();
    let before = panes(&w);
    let r = start(
        &w,
        json!({"name": "sib", "kind": "pi", "args": [], "with": "anchor"}),
    );
    assert_eq!(code(&r), "START_FAILED");
    let calls = w.calls();
    let split = calls
        .iter()
        .position(|c| c.starts_with("pane split w1:p4"))
        .unwrap();
    let start_call = &calls[split + 1];
    assert!(start_call.starts_with("agent start sib"), "{calls:?}");
    let new_pane = start_call
        .split(" --pane ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert_eq!(calls.last().unwrap(), &format!("pane close {new_pane}"));
    assert_eq!(count(&w, "agent start"), 1);
    assert_eq!(panes(&w), before, "the split pane is gone");
}

#[test]
fn blocked_shell_that_never_frees_fails_the_start() {
    let _g = serial();
    // A new pane whose shell takes longer than Herdr's retry window: agent_pane_busy after the
    // retries inside Herdr, START_FAILED, rolled back, and Link itself does not retry.
    let w = world(
        "0.8.2",
        json!({"shell_start_ms": "5000", "busy_retry_ms": "150"}),
    );
    let before = tabs(&w);
    let r = start(&w, json!({"name": "fresh", "kind": "pi", "args": []}));
    assert_eq!(code(&r), "START_FAILED");
    assert_eq!(count(&w, "agent start"), 1);
    assert!(w.calls().last().unwrap().starts_with("tab close "));
    assert_eq!(tabs(&w), before);
}
