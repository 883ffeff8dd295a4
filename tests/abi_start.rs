//! herdr_link_start through the C ABI against the fake Herdr: validation before any call, the
//! config file, Link-managed placement, launch, rollback and round-robin (behaviour doc §10.2
//! items 28–50, issue #3).

use test_support::world as common;

use std::path::{Path, PathBuf};

use common::{abi, serial, World};
use serde_json::{json, Value};

fn world() -> World {
    World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [{"panes": [
                {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                {"cwd": "/anchor-dir", "agent": "claude", "name": "anchor", "status": "idle"}
            ]}]},
            {"cwd": "/other", "tabs": [{"panes": [
                {"cwd": "/other", "agent": "pi", "name": "stranger", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    )
}

/// A project directory with an optional config file.
fn project(w: &World, name: &str, config: Option<&Value>) -> PathBuf {
    let dir = w.dir.join(name);
    std::fs::create_dir_all(dir.join(".agents")).unwrap();
    if let Some(c) = config {
        std::fs::write(dir.join(".agents/agent_config.json"), c.to_string()).unwrap();
    }
    dir
}

fn start(dir: &Path, input: Value) -> Value {
    abi().tool_in("start", "herdr_link_start", input, dir)
}

fn code(r: &Value) -> &str {
    assert_eq!(r["ok"], false, "expected failure: {r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(!common::has_raw_id(message), "{message}");
    r["error"]["code"].as_str().unwrap()
}

fn started(r: &Value, name: &str, kind: &str) {
    assert_eq!(r["ok"], true, "expected success: {r}");
    assert_eq!(
        r["result"],
        json!({"status": "started", "agent": name, "kind": kind})
    );
}

fn starts(w: &World) -> Vec<Vec<String>> {
    w.argv_log()
        .into_iter()
        .filter(|a| a[0] == "agent" && a[1] == "start")
        .collect()
}

fn kinds(w: &World) -> Vec<String> {
    starts(w).iter().map(|a| a[4].clone()).collect()
}

fn rr_config(kinds: &[&str]) -> Value {
    let variants: Vec<Value> = kinds
        .iter()
        .map(|k| json!({"kind": k, "args": ["--v", k]}))
        .collect();
    json!({"agents": {"team": {"placement": {"mode": "new_tab"}, "strategy": "round-robin", "variants": variants}}})
}

#[test]
fn explicit_new_tab_exact_sequence() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    let r = start(
        &dir,
        json!({"name": "worker", "kind": "pi", "args": ["--model", "x"]}),
    );
    started(&r, "worker", "pi");
    let d = dir.display().to_string();
    assert_eq!(
        w.calls(),
        [
            "agent get w1:p1".to_string(),
            format!("tab create --workspace w1 --cwd {d} --no-focus"),
            "pane list --workspace w1".to_string(),
            "agent start worker --kind pi --pane w1:p3 -- --model x".to_string(),
        ]
    );
    // Empty args still carry the `--`.
    w.clear_log();
    started(
        &start(
            &dir,
            json!({"name": "worker2", "kind": "codex", "args": []}),
        ),
        "worker2",
        "codex",
    );
    assert_eq!(starts(&w)[0].last().unwrap(), "--");
}

#[test]
fn context_dir_defaults_to_the_process_cwd() {
    let _g = serial();
    let w = world();
    let r = abi().tool(
        "start",
        "herdr_link_start",
        json!({"name": "w-cwd", "kind": "pi", "args": []}),
    );
    started(&r, "w-cwd", "pi");
    let cwd = std::env::current_dir().unwrap().display().to_string();
    assert!(
        w.calls()[1].contains(&format!("--cwd {cwd} ")),
        "{:?}",
        w.calls()
    );
}

#[test]
fn relative_cwd_resolves_against_the_context_dir() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    std::fs::create_dir_all(dir.join("slices/w1")).unwrap();
    std::env::set_var("HERDR_WORKSPACE_ID", "stale");
    started(
        &start(
            &dir,
            json!({"name": "sl", "kind": "pi", "args": [], "cwd": "slices/w1"}),
        ),
        "sl",
        "pi",
    );
    std::env::remove_var("HERDR_WORKSPACE_ID");
    assert_eq!(
        w.calls()[1],
        format!(
            "tab create --workspace w1 --cwd {}/slices/w1 --no-focus",
            dir.display()
        )
    );
}

#[test]
fn missing_launch_dir_is_input_invalid_before_any_call() {
    let _g = serial();
    let w = world();
    let dir = project(
        &w,
        "p",
        Some(
            &json!({"agents": {"a": {"placement": {"mode": "new_tab"}, "variants": [{"kind": "pi"}]}}}),
        ),
    );
    for input in [
        json!({"name": "x", "kind": "pi", "args": [], "cwd": "no/such/dir"}),
        json!({"name": "x", "kind": "pi", "args": [], "cwd": "/definitely/not/here"}),
        json!({"name": "x", "config_agent": "a", "cwd": "nope"}),
    ] {
        assert_eq!(code(&start(&dir, input)), "START_INPUT_INVALID");
    }
    assert!(w.calls().is_empty(), "{:?}", w.calls());
}

#[test]
fn configured_new_tab_label_before_no_focus() {
    let _g = serial();
    let w = world();
    let cfg = json!({"agents": {"exec": {"placement": {"mode": "new_tab", "label": "execute"}, "variants": [{"kind": "codex", "args": ["-m", "o3"]}]}}});
    let dir = project(&w, "p", Some(&cfg));
    let r = start(&dir, json!({"name": "executor", "config_agent": "exec"}));
    started(&r, "executor", "codex");
    let calls = w.calls();
    assert_eq!(calls.len(), 4);
    assert_eq!(
        calls[1],
        format!(
            "tab create --workspace w1 --cwd {} --label execute --no-focus",
            dir.display()
        )
    );
    assert_eq!(
        calls[3],
        "agent start executor --kind codex --pane w1:p3 -- -m o3"
    );
    assert!(!common::has_raw_id(&r.to_string()));
    // configured new_tab + absolute cwd: still exactly 4 calls.
    w.clear_log();
    let abs = w.dir.join("elsewhere");
    std::fs::create_dir_all(&abs).unwrap();
    started(
        &start(
            &dir,
            json!({"name": "executor2", "config_agent": "exec", "cwd": abs}),
        ),
        "executor2",
        "codex",
    );
    assert_eq!(w.calls().len(), 4);
    assert!(w.calls()[1].contains(&format!("--cwd {} --label", abs.display())));
}

#[test]
fn the_shipped_example_starts_every_entry() {
    let _g = serial();
    let w = world();
    let example: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/agent_config.example.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let dir = project(&w, "p", Some(&example));
    started(
        &start(
            &dir,
            json!({"name": "worker-template", "config_agent": "example-single"}),
        ),
        "worker-template",
        "pi",
    );
    let calls = w.calls();
    assert!(
        calls[1].ends_with("--label example --no-focus"),
        "{calls:?}"
    );
    assert_eq!(calls[3], "agent start worker-template --kind pi --pane w1:p3 -- --model your-provider/your-model --thinking high");
    started(
        &start(
            &dir,
            json!({"name": "rr-1", "config_agent": "example-round-robin"}),
        ),
        "rr-1",
        "pi",
    );
    started(
        &start(
            &dir,
            json!({"name": "rr-2", "config_agent": "example-round-robin"}),
        ),
        "rr-2",
        "pi",
    );
    let s = starts(&w);
    assert_eq!(s[1][8..], ["--model", "provider-a/model-a"]);
    assert_eq!(s[2][8..], ["--model", "provider-b/model-b"]);
    started(
        &start(
            &dir,
            json!({"name": "beside", "config_agent": "example-with", "with": "anchor"}),
        ),
        "beside",
        "pi",
    );
    assert!(w
        .calls()
        .iter()
        .any(|c| c.starts_with("pane split w1:p2 --direction right --cwd /anchor-dir --no-focus")));
}

#[test]
fn round_robin_rereads_the_file() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", Some(&rr_config(&["pi", "agy"])));
    for i in 0..3 {
        started(
            &start(
                &dir,
                json!({"name": format!("rr{i}"), "config_agent": "team"}),
            ),
            &format!("rr{i}"),
            ["pi", "agy", "pi"][i],
        );
    }
    std::fs::write(
        dir.join(".agents/agent_config.json"),
        rr_config(&["codex"]).to_string(),
    )
    .unwrap();
    started(
        &start(&dir, json!({"name": "rr3", "config_agent": "team"})),
        "rr3",
        "codex",
    );
    assert_eq!(kinds(&w), ["pi", "agy", "pi", "codex"]);
}

#[test]
fn cursors_are_isolated_by_project_and_entry() {
    let _g = serial();
    let w = world();
    let a = project(&w, "a", Some(&rr_config(&["pi", "codex", "agy"])));
    let b = project(&w, "b", Some(&rr_config(&["agy", "pi"])));
    let mut n = 0;
    let mut go = |dir: &Path| {
        n += 1;
        let r = start(
            dir,
            json!({"name": format!("iso{n}"), "config_agent": "team"}),
        );
        r["result"]["kind"].as_str().unwrap().to_string()
    };
    assert_eq!([go(&a), go(&a)], ["pi", "codex"]);
    assert_eq!([go(&b), go(&b)], ["agy", "pi"]);
    assert_eq!(go(&a), "agy");
    assert_eq!(go(&a), "pi");
}

#[test]
fn failed_start_does_not_advance_the_cursor() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", Some(&rr_config(&["pi", "codex"])));
    let busy = json!({"error": {"code": "agent_pane_busy", "message": "agent target pane w1:p3 is not an available shell"}, "id": "cli:agent:start"}).to_string();
    w.fault(
        "agent",
        "start",
        &["--times", "1", "--exit", "1", "--stderr", &busy],
    );
    assert_eq!(
        code(&start(&dir, json!({"name": "f1", "config_agent": "team"}))),
        "START_FAILED"
    );
    started(
        &start(&dir, json!({"name": "f2", "config_agent": "team"})),
        "f2",
        "pi",
    );
    started(
        &start(&dir, json!({"name": "f3", "config_agent": "team"})),
        "f3",
        "codex",
    );
}

#[test]
fn eight_threads_on_one_key_take_turns() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", Some(&rr_config(&["pi", "codex", "agy", "claude"])));
    std::env::set_var("HERDR_FAKE_DELAY_MS", "5");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let r = abi().tool_in(
                    &format!("t{i}"),
                    "herdr_link_start",
                    json!({"name": format!("par{i}"), "config_agent": "team"}),
                    &dir,
                );
                assert_eq!(r["ok"], true, "{r}");
                r["result"]["kind"].as_str().unwrap().to_string()
            })
        })
        .collect();
    let mut got: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    std::env::remove_var("HERDR_FAKE_DELAY_MS");
    // In launch order the kinds go round exactly, and each position is used exactly twice.
    assert_eq!(
        kinds(&w),
        ["pi", "codex", "agy", "claude", "pi", "codex", "agy", "claude"]
    );
    got.sort();
    assert_eq!(
        got,
        ["agy", "agy", "claude", "claude", "codex", "codex", "pi", "pi"]
    );
}

#[test]
fn validation_fails_closed_before_any_call() {
    let _g = serial();
    let w = world();
    let good = json!({"agents": {
        "tab": {"placement": {"mode": "new_tab"}, "variants": [{"kind": "pi"}]},
        "beside": {"placement": {"mode": "with"}, "variants": [{"kind": "pi"}]}
    }});
    let dir = project(&w, "p", Some(&good));
    let empty = project(&w, "empty", None);
    use herdr_link::error::LinkError as E;
    // Each refusal is the row of the error table that says what to fix (never the general text).
    type Row = fn(String) -> E;
    let cases: Vec<(&Path, Value, Row)> = vec![
        (
            &dir,
            json!({"name": "x", "config_agent": "tab", "kind": "pi", "args": []}),
            E::StartModesMixed,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "tab", "args": []}),
            E::StartModesMixed,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi"}),
            E::StartArgsMissing,
        ),
        (&dir, json!({"name": "x", "args": []}), E::StartKindMissing),
        (&dir, json!({"name": "x"}), E::StartSourceMissing),
        (
            &dir,
            json!({"name": "X", "kind": "pi", "args": []}),
            E::StartNameInvalid,
        ),
        (&dir, json!({"kind": "pi", "args": []}), E::StartNameInvalid),
        (
            &dir,
            json!({"name": "x", "kind": " ", "args": []}),
            E::StartKindInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": [1]}),
            E::StartArgsInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": "a"}),
            E::StartArgsInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": " "}),
            E::StartConfigAgentInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "tab", "cwd": "  "}),
            E::StartCwdInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "tab", "with": "Bad!"}),
            E::StartWithInvalid,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "pane": "w1:p2"}),
            E::StartUnknownField,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "action": "start"}),
            E::StartUnknownField,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "with": "anchor", "cwd": "."}),
            E::StartWithAndCwd,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "tab", "with": "anchor"}),
            E::StartEntryRefusesWith,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "beside", "cwd": "."}),
            E::StartEntryRefusesCwd,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "beside"}),
            E::StartEntryNeedsWith,
        ),
        (
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "cwd": "no/such/dir"}),
            E::StartNoLaunchDir,
        ),
        (
            &empty,
            json!({"name": "x", "config_agent": "tab"}),
            E::StartConfigNotFound,
        ),
        (
            &dir,
            json!({"name": "x", "config_agent": "missing"}),
            E::StartAgentNotFound,
        ),
    ];
    for (d, input, row) in cases {
        let want = row(String::new());
        let r = start(d, input.clone());
        assert_eq!(code(&r), want.code(), "{input}");
        assert_eq!(r["error"]["message"], want.agent_text(), "{input}");
    }
    let bad_docs = [
        "{not json",
        r#"{"version":1,"agents":{}}"#,
        r#"{"agents":{"a":{"variants":[{"kind":"pi"}]}}}"#,
        r#"{"agents":{"a":{"placement":{"mode":"stacked"},"variants":[{"kind":"pi"}]}}}"#,
        r#"{"agents":{"a":{"placement":{"mode":"with","label":"x"},"variants":[{"kind":"pi"}]}}}"#,
        r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi"},{"kind":"agy"}]}}}"#,
        r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi"}]},"b":{"placement":{"mode":"new_tab"},"variants":[]}}}"#,
    ];
    for doc in bad_docs {
        std::fs::write(dir.join(".agents/agent_config.json"), doc).unwrap();
        assert_eq!(
            code(&start(&dir, json!({"name": "x", "config_agent": "a"}))),
            "START_CONFIG_INVALID",
            "{doc}"
        );
    }
    assert!(
        w.calls().is_empty(),
        "validation never reaches Herdr: {:?}",
        w.calls()
    );
}

#[test]
fn config_errors_say_where_in_the_operator_log() {
    let _g = serial();
    let w = world();
    let log = w.dir.join("op.log");
    std::env::set_var("HERDR_LINK_LOG", &log);
    let dir = project(&w, "p", None);
    std::fs::write(
        dir.join(".agents/agent_config.json"),
        "{\n  \"agents\": {\n    \"a\": [\n}",
    )
    .unwrap();
    let r = start(&dir, json!({"name": "x", "config_agent": "a"}));
    assert_eq!(
        r["error"]["message"],
        "START_CONFIG_INVALID: configured Agent start configuration is invalid"
    );
    std::fs::write(
        dir.join(".agents/agent_config.json"),
        r#"{"agents":{"a":{"placement":{"mode":"new_tab"},"variants":[{"kind":"pi","args":[3]}]}}}"#,
    )
    .unwrap();
    start(&dir, json!({"name": "x", "config_agent": "a"}));
    std::env::remove_var("HERDR_LINK_LOG");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut text = String::new();
    while std::time::Instant::now() < deadline {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(text.contains("line 4 column 1"), "{text}");
    assert!(text.contains("agents.a.variants[0].args"), "{text}");
}

#[test]
fn with_placement_splits_the_anchor() {
    let _g = serial();
    let w = world();
    let cfg = json!({"agents": {"beside": {"placement": {"mode": "with"}, "variants": [{"kind": "pi", "args": ["-x"]}]}}});
    let dir = project(&w, "p", Some(&cfg));
    started(
        &start(
            &dir,
            json!({"name": "sib", "config_agent": "beside", "with": "anchor"}),
        ),
        "sib",
        "pi",
    );
    assert_eq!(
        w.calls(),
        [
            "agent get w1:p1",
            "agent get anchor",
            "pane get w1:p2",
            "pane split w1:p2 --direction right --cwd /anchor-dir --no-focus",
            "agent start sib --kind pi --pane w1:p3 -- -x",
        ]
    );
    w.clear_log();
    started(
        &start(
            &dir,
            json!({"name": "sib2", "kind": "codex", "args": [], "with": "anchor"}),
        ),
        "sib2",
        "codex",
    );
    assert!(!w.calls().iter().any(|c| c.starts_with("tab create")));
    assert!(
        w.calls()[3].starts_with("pane split w1:p2 --direction right --cwd /anchor-dir --no-focus")
    );
}

#[test]
fn with_anchor_must_be_a_live_same_workspace_peer() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    for anchor in ["ghost", "stranger"] {
        w.clear_log();
        let r = start(
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "with": anchor}),
        );
        assert_eq!(code(&r), "PEER_NOT_FOUND");
        assert!(
            !w.calls()
                .iter()
                .any(|c| c.starts_with("pane split") || c.starts_with("pane get")),
            "{:?}",
            w.calls()
        );
    }
    // Agent record in w1, pane record in w2: refused after `pane get`, before any split.
    w.clear_log();
    let pane = json!({"id": "cli:pane:get", "result": {"pane": {"agent_status": "idle", "cwd": "/x", "focused": false, "pane_id": "w1:p2", "revision": 0, "tab_id": "w2:t1", "terminal_id": "term_1", "workspace_id": "w2"}, "type": "pane_info"}}).to_string();
    w.fault("pane", "get", &["--exit", "0", "--stdout", &pane]);
    assert_eq!(
        code(&start(
            &dir,
            json!({"name": "x", "kind": "pi", "args": [], "with": "anchor"})
        )),
        "PEER_NOT_FOUND"
    );
    assert_eq!(w.calls().last().unwrap(), "pane get w1:p2");
}

fn tab_count(w: &World) -> usize {
    let out = std::process::Command::new(common::fake_bin())
        .args(["pane", "list", "--workspace", "w1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut tabs: Vec<String> = v["result"]["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["tab_id"].as_str().unwrap().to_string())
        .collect();
    tabs.sort();
    tabs.dedup();
    let _ = w;
    tabs.len()
}

#[test]
fn rollback_closes_exactly_what_was_created() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    let input = json!({"name": "rb", "kind": "pi", "args": []});
    // Root resolution finds two panes in the new tab.
    let two = json!({"id": "cli:pane:list", "result": {"panes": [
        {"pane_id": "w1:p3", "tab_id": "w1:t2", "workspace_id": "w1", "cwd": "/", "agent_status": "unknown", "focused": false, "revision": 0, "terminal_id": "t"},
        {"pane_id": "w1:p4", "tab_id": "w1:t2", "workspace_id": "w1", "cwd": "/", "agent_status": "unknown", "focused": false, "revision": 0, "terminal_id": "u"}
    ], "type": "pane_list"}}).to_string();
    w.fault(
        "pane",
        "list",
        &["--times", "1", "--exit", "0", "--stdout", &two],
    );
    assert_eq!(code(&start(&dir, input.clone())), "START_FAILED");
    assert_eq!(w.calls().last().unwrap(), "tab close w1:t2");
    assert_eq!(tab_count(&w), 1, "the created tab is gone");

    // agent start fails: the created tab is closed, no retry.
    w.clear_log();
    let busy = json!({"error": {"code": "agent_pane_busy", "message": "agent target pane w1:p5 is not an available shell"}}).to_string();
    w.fault(
        "agent",
        "start",
        &["--times", "1", "--exit", "1", "--stderr", &busy],
    );
    assert_eq!(code(&start(&dir, input.clone())), "START_FAILED");
    assert_eq!(starts(&w).len(), 1);
    assert!(w.calls().last().unwrap().starts_with("tab close w1:t"));
    assert_eq!(tab_count(&w), 1);

    // with placement: the created sibling pane is closed.
    w.clear_log();
    w.fault(
        "agent",
        "start",
        &["--times", "1", "--exit", "1", "--stderr", &busy],
    );
    assert_eq!(
        code(&start(
            &dir,
            json!({"name": "rb", "kind": "pi", "args": [], "with": "anchor"})
        )),
        "START_FAILED"
    );
    let calls = w.calls();
    let split_pane = {
        let log = w.argv_log();
        let _ = log;
        calls
            .iter()
            .find(|c| c.starts_with("agent start"))
            .unwrap()
            .split(' ')
            .nth(6)
            .unwrap()
            .to_string()
    };
    assert_eq!(calls.last().unwrap(), &format!("pane close {split_pane}"));

    // agent_not_found from agent start is a failed start, not a missing peer.
    w.clear_log();
    let nf = json!({"error": {"code": "agent_not_found", "message": "agent target x not found"}})
        .to_string();
    w.fault(
        "agent",
        "start",
        &["--times", "1", "--exit", "1", "--stderr", &nf],
    );
    assert_eq!(code(&start(&dir, input.clone())), "START_FAILED");

    // A failing rollback never replaces the primary error, and is tried once.
    w.clear_log();
    w.fault(
        "agent",
        "start",
        &["--times", "1", "--exit", "1", "--stderr", &busy],
    );
    let tc =
        json!({"error": {"code": "tab_close_failed", "message": "tab w1:t9 could not be closed"}})
            .to_string();
    w.fault(
        "tab",
        "close",
        &["--times", "1", "--exit", "1", "--stderr", &tc],
    );
    assert_eq!(code(&start(&dir, input.clone())), "START_FAILED");
    assert_eq!(
        w.calls()
            .iter()
            .filter(|c| c.starts_with("tab close"))
            .count(),
        1
    );

    // A transport failure at launch stays NOT_IN_HERDR, and still rolls back.
    w.clear_log();
    w.fault("agent", "start", &["--times", "1", "--signal", "9"]);
    assert_eq!(code(&start(&dir, input)), "NOT_IN_HERDR");
    assert!(w.calls().last().unwrap().starts_with("tab close"));
}

/// Herdr's CLI refuses a kind it does not know itself (`unsupported interactive agent kind: X`,
/// plain text, exit 2): Herdr is there and refused the start, so it is START_FAILED, never
/// NOT_IN_HERDR, and the tab made for it is closed again (the fake answers as real Herdr does).
#[test]
fn a_kind_herdr_refuses_is_start_failed_and_rolls_back() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    let r = start(
        &dir,
        json!({"name": "nokind", "kind": "no-such-agent", "args": []}),
    );
    assert_eq!(code(&r), "START_FAILED", "{r}");
    // The model can fix this itself, so the text says what to change.
    assert_eq!(
        r["error"]["message"],
        "START_FAILED: Herdr does not know this agent kind, so the agent was not started; use a kind Herdr supports (for example pi, claude or codex) in kind, or in the configuration entry for a configured start"
    );
    let calls = w.calls();
    let launch = calls
        .iter()
        .position(|c| c.starts_with("agent start nokind --kind no-such-agent"))
        .unwrap_or_else(|| panic!("no agent start: {calls:?}"));
    assert!(calls[..launch].iter().any(|c| c.starts_with("tab create")));
    assert!(
        calls.last().unwrap().starts_with("tab close w1:t"),
        "{calls:?}"
    );
    assert_eq!(tab_count(&w), 1, "the created tab is gone");

    // The fake says it as real Herdr's CLI does: plain text on stderr, exit status 2.
    let out = std::process::Command::new(common::fake_bin())
        .args([
            "agent",
            "start",
            "x",
            "--kind",
            "no-such-agent",
            "--pane",
            "w1:p1",
            "--",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "unsupported interactive agent kind: no-such-agent\n"
    );

    // Beside the new agent: the split pane is closed again.
    w.clear_log();
    let r = start(
        &dir,
        json!({"name": "nokind", "kind": "no-such-agent", "args": [], "with": "anchor"}),
    );
    assert_eq!(code(&r), "START_FAILED", "{r}");
    assert!(
        w.calls().last().unwrap().starts_with("pane close"),
        "{:?}",
        w.calls()
    );
}

/// Herdr refuses a start whose name a live agent already has (`agent_name_taken`): the model
/// can fix that by choosing another name, so the text says so; the tab made for it is closed.
#[test]
fn a_name_a_live_agent_has_is_start_failed_saying_choose_another() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    let r = start(&dir, json!({"name": "anchor", "kind": "pi", "args": []}));
    assert_eq!(code(&r), "START_FAILED", "{r}");
    assert_eq!(
        r["error"]["message"],
        "START_FAILED: a live agent already has this Agent Name, so the agent was not started; choose another name"
    );
    let calls = w.calls();
    assert!(
        calls
            .iter()
            .any(|c| c.starts_with("agent start anchor --kind pi")),
        "Herdr was asked: {calls:?}"
    );
    assert!(
        calls.last().unwrap().starts_with("tab close w1:t"),
        "{calls:?}"
    );
    assert_eq!(tab_count(&w), 1, "the created tab is gone");
}

#[test]
fn hung_start_times_out_and_rolls_back() {
    let _g = serial();
    let w = world();
    let dir = project(&w, "p", None);
    std::env::set_var("HERDR_LINK_START_TIMEOUT_MS", "700");
    w.fault("agent", "start", &["--hang"]);
    let t = std::time::Instant::now();
    let r = start(&dir, json!({"name": "hung", "kind": "pi", "args": []}));
    std::env::remove_var("HERDR_LINK_START_TIMEOUT_MS");
    assert_eq!(code(&r), "NOT_IN_HERDR");
    // Hang detector (the fault hangs for good): cut by the 700 ms start limit.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(w.calls().last().unwrap(), "tab close w1:t2");
    assert_eq!(tab_count(&w), 1);
    assert!(common::children().is_empty());
}

#[test]
fn gateway_start_shares_the_same_path() {
    let _g = serial();
    let w = world();
    let cfg = json!({"agents": {"exec": {"placement": {"mode": "new_tab"}, "variants": [{"kind": "agy"}]}}});
    let dir = project(&w, "p", Some(&cfg));
    let a = abi();
    let r = a.tool_in(
        "gw",
        "herdr_link",
        json!({"action": "start", "arguments": {"name": "g1", "config_agent": "exec"}}),
        &dir,
    );
    started(&r, "g1", "agy");
    let r = a.tool_in(
        "gw",
        "herdr_link",
        json!({"action": "start", "name": "g2", "kind": "pi", "args": []}),
        &dir,
    );
    started(&r, "g2", "pi");
    let r = a.tool_in("gw", "herdr_link", json!({"action": "start", "arguments": {"name": "g3", "pane": "w1:p1", "kind": "pi", "args": []}}), &dir);
    assert_eq!(code(&r), "START_INPUT_INVALID");
    let _ = w;
}

#[test]
fn different_keys_start_concurrently() {
    let _g = serial();
    let w = world();
    let cfg = json!({"agents": {
        "slow": {"placement": {"mode": "new_tab"}, "variants": [{"kind": "pi"}]},
        "fast": {"placement": {"mode": "new_tab"}, "variants": [{"kind": "codex"}]}
    }});
    let dir = project(&w, "p", Some(&cfg));
    // The first `agent start` (the slow key's) takes 1.5 s inside Herdr.
    w.fault("agent", "start", &["--times", "1", "--delay-ms", "1500"]);
    let d = dir.clone();
    let slow =
        std::thread::spawn(move || start(&d, json!({"name": "slow-one", "config_agent": "slow"})));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let fast = start(&dir, json!({"name": "fast-one", "config_agent": "fast"}));
    started(&fast, "fast-one", "codex");
    started(&slow.join().unwrap(), "slow-one", "pi");
    // The fake logs a call when it ends: the fast key's start ended while the slow one was
    // still inside Herdr, so the slow key's lock did not hold it back.
    let order: Vec<String> = starts(&w).iter().map(|a| a[2].clone()).collect();
    assert_eq!(order, ["fast-one", "slow-one"]);
}
