//! peers, send and close through the C ABI against the fake Herdr: exact CLI sequences, live
//! identity, the same-workspace guard and its privacy, pane moves, and error classification
//! (behaviour doc §10.2 items 1–8 and 22–27, issue #2 §5).

use test_support::world as common;

use common::{abi, has_raw_id, serial, World};
use herdr_link::protocol::{extract_envelope, is_valid_message_id};
use serde_json::{json, Value};

fn ok(r: &Value) -> &Value {
    assert_eq!(r["ok"], true, "expected success: {r}");
    &r["result"]
}

fn err_code(r: &Value) -> &str {
    assert_eq!(r["ok"], false, "expected an error: {r}");
    let code = r["error"]["code"].as_str().unwrap();
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("{code}: ")), "{message}");
    assert!(!has_raw_id(message), "raw id in {message}");
    code
}

fn rich_world() -> World {
    World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [
                {"panes": [
                    {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                    {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"},
                    {"cwd": "/proj", "agent": "codex", "status": "idle"},
                    {"cwd": "/proj"}
                ]},
                {"panes": [
                    {"cwd": "/proj", "agent": "pi", "name": "worker_b", "status": "blocked"},
                    {"cwd": "/proj", "agent": "pi", "name": "reviewer", "status": "done"}
                ]}
            ]},
            {"cwd": "/other", "tabs": [{"panes": [
                {"cwd": "/other", "agent": "pi", "name": "stranger", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    )
}

#[test]
fn peers_send_close_exact_sequences() {
    let _g = serial();
    let w = rich_world();
    std::env::set_var("HERDR_WORKSPACE_ID", "stale-ws");
    std::env::set_var("HERDR_TAB_ID", "stale-tab");
    let a = abi();
    let s = "ops-1";

    let peers = a.tool(s, "herdr_link_peers", json!({}));
    assert_eq!(
        ok(&peers),
        &json!({"self": {"name": "brain", "state": "idle"}, "peers": [
            {"name": "worker-a", "state": "working"},
            {"name": "worker_b", "state": "blocked"},
            {"name": "reviewer", "state": "done"}
        ]})
    );
    assert_eq!(w.calls(), ["agent get w1:p1", "agent list"]);

    w.clear_log();
    let sent = a.tool(
        s,
        "herdr_link_send",
        json!({"to": "worker-a", "message": "Review the diff, please ✓"}),
    );
    let r = ok(&sent);
    assert_eq!(r["status"], "sent");
    assert_eq!(r["to"], "worker-a");
    let id = r["id"].as_str().unwrap();
    assert!(is_valid_message_id(id));
    let log = w.argv_log();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[0], ["agent", "get", "w1:p1"]);
    assert_eq!(log[1], ["agent", "get", "worker-a"]);
    assert_eq!(
        log[2].len(),
        4,
        "agent prompt <to> <wrapper>: exactly 4 argv elements"
    );
    assert_eq!(&log[2][..3], ["agent", "prompt", "worker-a"]);
    assert!(!log.iter().flatten().any(|a| a == "--wait"));
    let wrapper = &log[2][3];
    assert!(wrapper.starts_with("[herdr-link/1]"));
    assert!(wrapper.contains("From: brain"));
    assert!(wrapper.contains(&format!("Message id: {id}")));
    let last: Value = serde_json::from_str(wrapper.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"protocol":"herdr-link/1","id":id,"from":"brain","to":"worker-a","message":"Review the diff, please ✓"})
    );
    let keys: Vec<_> = last.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["protocol", "id", "from", "to", "message"]);
    let env = extract_envelope(wrapper).unwrap();
    assert_eq!(env.message, "Review the diff, please ✓");
    let prompts = w.prompts();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0]["text"].as_str().unwrap(), wrapper);
    assert_eq!(prompts[0]["name"], "worker-a");

    w.clear_log();
    let closed = a.tool(s, "herdr_link_close", json!({"agent": "worker-a"}));
    assert_eq!(
        ok(&closed),
        &json!({"status": "closed", "agent": "worker-a"})
    );
    assert_eq!(
        w.calls(),
        ["agent get w1:p1", "agent get worker-a", "pane close w1:p2"]
    );
    std::env::remove_var("HERDR_WORKSPACE_ID");
    std::env::remove_var("HERDR_TAB_ID");
}

#[test]
fn every_not_a_peer_looks_the_same() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    let mut texts = Vec::new();
    for to in ["stranger", "ghost", "BAD_NAME!", "", "Brain"] {
        w.clear_log();
        let r = a.tool(
            "priv",
            "herdr_link_send",
            json!({"to": to, "message": "hi"}),
        );
        assert_eq!(err_code(&r), "PEER_NOT_FOUND", "{to}");
        texts.push(r["error"]["message"].as_str().unwrap().to_string());
        let calls = w.calls();
        assert!(
            calls.iter().all(|c| !c.starts_with("agent prompt")),
            "{calls:?}"
        );
        if herdr_link::protocol::is_valid_agent_name(to) {
            assert_eq!(calls[0], "agent get w1:p1", "self is resolved first");
        } else {
            // Input is checked before any Herdr call (the bootstrap could rename the caller).
            assert!(calls.is_empty(), "no call for an invalid name: {calls:?}");
        }
        let c = a.tool("priv", "herdr_link_close", json!({"agent": to}));
        assert_eq!(err_code(&c), "PEER_NOT_FOUND");
        texts.push(c["error"]["message"].as_str().unwrap().to_string());
    }
    texts.dedup();
    assert_eq!(texts, ["PEER_NOT_FOUND: target agent is not a live peer"]);
    assert!(w.prompts().is_empty());
    assert!(!w.calls().iter().any(|c| c.starts_with("pane close")));
}

#[test]
fn non_string_inputs() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    assert_eq!(
        err_code(&a.tool("ns", "herdr_link_send", json!({"message": 3}))),
        "PEER_NOT_FOUND"
    );
    assert_eq!(
        err_code(&a.tool("ns", "herdr_link_send", json!({"to": "worker-a"}))),
        "SEND_FAILED"
    );
    assert_eq!(
        err_code(&a.tool("ns", "herdr_link_close", json!({"agent": 1}))),
        "PEER_NOT_FOUND"
    );
    assert!(
        w.calls().is_empty(),
        "type errors make no Herdr call: {:?}",
        w.calls()
    );
}

#[test]
fn a_blank_message_sends_nothing_and_a_nul_travels_escaped() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    let blank = herdr_link::error::LinkError::SendMessageBlank(String::new()).agent_text();
    for m in [json!(" \n\t "), json!(""), json!(7)] {
        w.clear_log();
        let r = a.tool(
            "blank",
            "herdr_link_send",
            json!({"to": "worker-a", "message": m}),
        );
        assert_eq!(err_code(&r), "SEND_FAILED");
        assert_eq!(r["error"]["message"], blank, "says what to fix");
        assert!(w.calls().is_empty(), "no Herdr call: {:?}", w.calls());
    }
    assert!(w.prompts().is_empty());
    // A NUL is a control like any other: escaped in the envelope, so no argv element holds it.
    let r = a.tool(
        "blank",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "before\u{0}after"}),
    );
    assert_eq!(ok(&r)["status"], "sent");
    let prompts = w.prompts();
    let text = prompts[0]["text"].as_str().unwrap();
    assert!(
        text.ends_with(r#""message":"before\u0000after"}"#),
        "{text}"
    );
    assert_eq!(
        herdr_link::protocol::extract_envelope(text)
            .unwrap()
            .message,
        "before\u{0}after"
    );
}

#[test]
fn pane_moves_are_followed_live() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    let s = "move";
    assert_eq!(
        ok(&a.tool(
            s,
            "herdr_link_send",
            json!({"to": "worker-a", "message": "x"})
        ))["status"],
        "sent"
    );
    // Move ourselves to workspace w2: HERDR_PANE_ID (w1:p1) is now only an alias.
    w.admin(&["fake", "move", "w1:p1", "w2"]);
    let peers = ok(&a.tool(s, "herdr_link_peers", json!({}))).clone();
    assert_eq!(peers["self"]["name"], "brain");
    assert_eq!(
        peers["peers"],
        json!([{"name": "stranger", "state": "idle"}])
    );
    assert_eq!(
        err_code(&a.tool(
            s,
            "herdr_link_send",
            json!({"to": "worker-a", "message": "x"})
        )),
        "PEER_NOT_FOUND"
    );
    assert_eq!(
        ok(&a.tool(
            s,
            "herdr_link_send",
            json!({"to": "stranger", "message": "x"})
        ))["to"],
        "stranger"
    );
    // Move back: flips again (nothing cached).
    let dump = w.dump();
    let current = find_pane(&dump, "brain");
    w.admin(&["fake", "move", &current, "w1"]);
    assert_eq!(
        ok(&a.tool(
            s,
            "herdr_link_send",
            json!({"to": "worker-a", "message": "y"})
        ))["status"],
        "sent"
    );
    assert_eq!(
        err_code(&a.tool(
            s,
            "herdr_link_send",
            json!({"to": "stranger", "message": "y"})
        )),
        "PEER_NOT_FOUND"
    );
}

/// The current pane id of the agent named `name`, read through the fake's own CLI.
fn find_pane(_dump: &Value, name: &str) -> String {
    let out = std::process::Command::new(common::fake_bin())
        .args(["agent", "get", name])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["result"]["agent"]["pane_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn close_uses_the_live_pane_id() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    // worker-a and brain both move to w2: worker-a's pane id changes.
    w.admin(&["fake", "move", "w1:p2", "w2"]);
    w.admin(&["fake", "move", "w1:p1", "w2"]);
    let live = find_pane(&Value::Null, "worker-a");
    assert!(live.starts_with("w2:"), "{live}");
    w.clear_log();
    assert_eq!(
        ok(&a.tool(
            "close-live",
            "herdr_link_close",
            json!({"agent": "worker-a"})
        ))["status"],
        "closed"
    );
    assert_eq!(w.calls().last().unwrap(), &format!("pane close {live}"));
}

#[test]
fn close_needs_no_caller_name() {
    let _g = serial();
    let w = World::new(
        json!({"workspaces": [{"cwd": "/p", "tabs": [{"panes": [
            {"cwd": "/p", "agent": "codex", "status": "idle"},
            {"cwd": "/p", "agent": "pi", "name": "worker-a", "status": "idle"}
        ]}]}]}),
        "w1:p1",
    );
    let a = abi();
    let r = a.tool(
        "unnamed-close",
        "herdr_link_close",
        json!({"agent": "worker-a"}),
    );
    assert_eq!(ok(&r)["status"], "closed");
    assert_eq!(
        w.calls(),
        ["agent get w1:p1", "agent get worker-a", "pane close w1:p2"]
    );
}

#[test]
fn cli_rejections_map_to_operation_codes() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    // A receiver that cannot take the message now says so, and that the model may send it
    // again later; any other refusal is the general text.
    for (code, text) in [
        ("agent_blocked", "SEND_FAILED: the receiving agent is waiting for its user to answer a prompt or dialog, so Herdr typed nothing; nothing was sent. Send the message again once that agent can take messages"),
        ("agent_not_ready", "SEND_FAILED: the receiving agent cannot take messages right now: it is still starting, or its program no longer runs in its pane; nothing was sent. Send the message again once that agent is idle"),
        ("agent_prompt_failed", "SEND_FAILED: Herdr did not accept message delivery"),
    ] {
        w.admin(&["fake", "faults", "--clear"]);
        let err = json!({"error": {"code": code, "message": "agent w1:p2 refused"}, "id": "cli:agent:prompt"}).to_string();
        w.fault("agent", "prompt", &["--exit", "1", "--stderr", &err]);
        let r = a.tool(
            "rej",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"}),
        );
        assert_eq!(err_code(&r), "SEND_FAILED", "{code}");
        assert_eq!(r["error"]["message"], text, "{code}");
    }
    w.admin(&["fake", "faults", "--clear"]);
    let err = json!({"error": {"code": "pane_close_failed", "message": "pane w1:p2"}}).to_string();
    w.fault("pane", "close", &["--exit", "1", "--stderr", &err]);
    assert_eq!(
        err_code(&a.tool("rej", "herdr_link_close", json!({"agent": "worker-a"}))),
        "CLOSE_FAILED"
    );
    // An error JSON on stdout with exit 0 still fails.
    w.admin(&["fake", "faults", "--clear"]);
    let err = json!({"error": {"code": "agent_prompt_failed", "message": "x"}}).to_string();
    w.fault("agent", "prompt", &["--exit", "0", "--stdout", &err]);
    assert_eq!(
        err_code(&a.tool(
            "rej",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"})
        )),
        "SEND_FAILED"
    );
    // agent_not_found for the target, on stdout this time: PEER_NOT_FOUND.
    w.admin(&["fake", "faults", "--clear"]);
    let err = json!({"error": {"code": "agent_not_found", "message": "agent target ghost not found"}, "id": "cli:agent:get"}).to_string();
    w.fault(
        "agent",
        "get",
        &[
            "--after", "1", "--times", "1", "--exit", "1", "--stdout", &err,
        ],
    );
    w.clear_log();
    assert_eq!(
        err_code(&a.tool(
            "rej",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"})
        )),
        "PEER_NOT_FOUND"
    );
    assert_eq!(w.calls(), ["agent get w1:p1", "agent get worker-a"]);
    // agent_not_found from the prompt itself (the target left after it was resolved): also
    // PEER_NOT_FOUND, kept from the reference adapter (PROTOCOL.md appendix).
    w.admin(&["fake", "faults", "--clear"]);
    let err = json!({"error": {"code": "agent_not_found", "message": "agent target worker-a not found"}, "id": "cli:agent:prompt"}).to_string();
    w.fault("agent", "prompt", &["--exit", "1", "--stderr", &err]);
    w.clear_log();
    assert_eq!(
        err_code(&a.tool(
            "rej",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"})
        )),
        "PEER_NOT_FOUND"
    );
    assert_eq!(w.calls().len(), 3, "{:?}", w.calls());
}

#[test]
fn transport_failures_stay_not_in_herdr() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    // Invalid JSON at the prompt step, a killed CLI at prompt and at pane close.
    w.fault(
        "agent",
        "prompt",
        &["--exit", "0", "--stdout", "this is not json"],
    );
    assert_eq!(
        err_code(&a.tool(
            "tr",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"})
        )),
        "NOT_IN_HERDR"
    );
    w.admin(&["fake", "faults", "--clear"]);
    w.fault("agent", "prompt", &["--signal", "9"]);
    assert_eq!(
        err_code(&a.tool(
            "tr",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"})
        )),
        "NOT_IN_HERDR"
    );
    w.admin(&["fake", "faults", "--clear"]);
    w.fault("pane", "close", &["--signal", "15"]);
    assert_eq!(
        err_code(&a.tool("tr", "herdr_link_close", json!({"agent": "worker-a"}))),
        "NOT_IN_HERDR"
    );
    w.admin(&["fake", "faults", "--clear"]);
    w.fault("agent", "list", &["--exit", "0", "--invalid-utf8"]);
    assert_eq!(
        err_code(&a.tool("tr", "herdr_link_peers", json!({}))),
        "NOT_IN_HERDR"
    );
    // A stale (deleted) binary.
    std::env::set_var("HERDR_BIN_PATH", w.dir.join("deleted-herdr"));
    for (tool, input) in [
        ("herdr_link_peers", json!({})),
        ("herdr_link_send", json!({"to": "worker-a", "message": "m"})),
        ("herdr_link_close", json!({"agent": "worker-a"})),
    ] {
        assert_eq!(
            err_code(&a.tool("tr", tool, input)),
            "NOT_IN_HERDR",
            "{tool}"
        );
    }
    // Not executable.
    let script = w.dir.join("not-exec");
    std::fs::write(&script, "#!/bin/sh\necho {}\n").unwrap();
    std::env::set_var("HERDR_BIN_PATH", &script);
    assert_eq!(
        err_code(&a.tool("tr", "herdr_link_peers", json!({}))),
        "NOT_IN_HERDR"
    );
}

#[test]
fn hung_prompt_times_out_and_leaves_no_child() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", "500");
    w.fault("agent", "prompt", &["--hang"]);
    let t = std::time::Instant::now();
    let r = a.tool(
        "hang",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "m"}),
    );
    let took = t.elapsed();
    // Herdr may still type a prompt cut at the limit (0.9 queues it): not a missing Herdr.
    assert_eq!(err_code(&r), "SEND_FAILED");
    assert_eq!(
        r["error"]["message"],
        "SEND_FAILED: Herdr did not confirm delivery in time; the message may still arrive, so do not send it again"
    );
    // Hang detector (the fault hangs for good): cut by the 500 ms limit.
    assert!(took < std::time::Duration::from_secs(60), "took {took:?}");
    assert!(
        common::children().is_empty(),
        "children left: {:?}",
        common::children()
    );
    std::env::remove_var("HERDR_LINK_TIMEOUT_MS");
}

#[test]
fn no_raw_ids_in_any_model_facing_output() {
    let _g = serial();
    let w = rich_world();
    let a = abi();
    let mut outputs = vec![
        a.tool("scan", "herdr_link", json!({})),
        a.tool("scan", "herdr_link_peers", json!({})),
        a.tool(
            "scan",
            "herdr_link_send",
            json!({"to": "worker-a", "message": "m"}),
        ),
        a.tool(
            "scan",
            "herdr_link_send",
            json!({"to": "stranger", "message": "m"}),
        ),
        a.tool("scan", "herdr_link_close", json!({"agent": "stranger"})),
        a.tool("scan", "herdr_link_close", json!({"agent": "reviewer"})),
        a.present("scan", "deferred"),
        a.present("scan", "gateway"),
        a.present("scan", "mcp"),
    ];
    let err =
        json!({"error": {"code": "pane_not_found", "message": "pane w1:p1 not found term_abc"}})
            .to_string();
    w.fault("agent", "rename", &["--exit", "1", "--stderr", &err]);
    w.admin(&["fake", "agent", "w1:p1", "--no-name"]);
    outputs.push(a.tool("scan", "herdr_link_peers", json!({})));
    for o in &outputs {
        let text = o.to_string();
        assert!(!has_raw_id(&text), "raw id in model-facing output: {text}");
    }
    assert_eq!(
        outputs.last().unwrap()["error"]["message"],
        "SELF_UNNAMED: Herdr Link could not establish a stable Agent Name"
    );
}

#[test]
fn sixteen_threads_on_distinct_sessions() {
    let _g = serial();
    let w = rich_world();
    let handles: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                let a = abi();
                let s = format!("thread-{i}");
                a.start(&s);
                assert_eq!(a.tool(&s, "herdr_link", json!({}))["tools_changed"], true);
                for _ in 0..3 {
                    assert_eq!(a.tool(&s, "herdr_link_peers", json!({}))["ok"], true);
                    let r = a.tool(
                        &s,
                        "herdr_link_send",
                        json!({"to": "worker-a", "message": format!("from {i}")}),
                    );
                    assert_eq!(r["ok"], true, "{r}");
                }
                assert!(a.active(&s));
                a.end(&s);
                assert!(!a.active(&s));
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let prompts = w.prompts();
    assert_eq!(prompts.len(), 48);
    let mut ids: Vec<_> = prompts
        .iter()
        .map(|p| extract_envelope(p["text"].as_str().unwrap()).unwrap().id)
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 48, "message ids are unique");
}

#[test]
fn peers_filters_a_messy_list() {
    let _g = serial();
    let w = rich_world();
    let entry = |extra: Value| {
        let mut base = json!({"agent_status": "idle", "focused": false, "pane_id": "w1:p9", "revision": 0,
            "state_change_seq": 0, "tab_id": "w1:t1", "terminal_id": "term_9", "workspace_id": "w1"});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                base.as_object_mut().unwrap().remove(k);
            } else {
                base[k] = v.clone();
            }
        }
        base
    };
    let list = json!({"id": "cli:agent:list", "result": {"type": "agent_list", "agents": [
        entry(json!({"name": "brain"})),
        entry(json!({})),
        entry(json!({"name": ""})),
        entry(json!({"name": "Brain"})),
        entry(json!({"name": "worker-a", "agent_status": "working", "future_field": {"x": 1}})),
        entry(json!({"name": "elsewhere", "workspace_id": "w2"})),
        entry(json!({"name": "nowhere", "workspace_id": null})),
        entry(json!({"name": "gone", "live": false})),
        entry(json!({"name": "mystery", "agent_status": "on_fire"})),
        entry(json!({"name": "shouty", "agent_status": " DONE "})),
        entry(json!({"name": "legacy", "agent_status": null, "status": "blocked"})),
        entry(json!({"name": "worker-a", "agent_status": "idle"})),
        7
    ]}});
    w.fault(
        "agent",
        "list",
        &["--exit", "0", "--stdout", &list.to_string()],
    );
    let r = abi().tool("messy", "herdr_link_peers", json!({}));
    assert_eq!(
        ok(&r)["peers"],
        json!([
            {"name": "worker-a", "state": "working"},
            {"name": "mystery", "state": "unknown"},
            {"name": "shouty", "state": "done"},
            {"name": "legacy", "state": "blocked"}
        ])
    );
    assert!(!has_raw_id(&r.to_string()));
}

/// This suite runs once per Herdr version (scripts/test.sh sets `HERDR_FAKE_VERSION=0.8.2` for
/// the second run): the fake really plays it, and a send to a blocked peer follows it.
#[test]
fn send_to_a_blocked_peer_follows_the_herdr_version() {
    let _g = serial();
    let w = rich_world();
    let version = common::herdr_version();
    let out = std::process::Command::new(common::fake_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("herdr {version}\n")
    );
    let r = abi().tool(
        "ver",
        "herdr_link_send",
        json!({"to": "worker_b", "message": "are you there?"}),
    );
    if version == "0.8.0" {
        assert_eq!(ok(&r)["status"], "sent");
        assert_eq!(w.prompts().len(), 1);
    } else {
        assert_eq!(err_code(&r), "SEND_FAILED");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("waiting for its user"),
            "{r}"
        );
        assert!(w.prompts().is_empty(), "nothing typed into a blocked agent");
    }
    assert_eq!(
        w.calls()
            .iter()
            .filter(|c| c.starts_with("agent prompt"))
            .count(),
        1,
        "never retried"
    );
}
