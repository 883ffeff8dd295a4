//! Agent target resolution, prompt, start, rename and list semantics.

mod common;
use common::Fake;
use serde_json::json;

const WORLD: &str = r#"{"workspaces":[
  {"cwd":"/repo","tabs":[
    {"panes":[
      {"cwd":"/repo"},
      {"agent":"pi","name":"brain"},
      {"agent":"claude","status":"working"},
      {"agent":"codex","name":"hidden","detected":false},
      {"agent":"pi","detected":false}
    ]},
    {"label":"second","panes":[{"agent":"claude-code","name":"worker","status":"blocked"}]}
  ]},
  {"cwd":"/other","tabs":[{"panes":[{"agent":"docs-bot"},{"agent":"gemini","status":"done"}]}]}
]}"#;

#[test]
fn agent_get_resolution_rules() {
    let (f, map) = Fake::with_world("resolve", WORLD);
    assert_eq!(map["workspaces"], json!(["w1", "w2"]));
    assert_eq!(map["tabs"], json!(["w1:t1", "w1:t2", "w2:t1"]));
    assert_eq!(map["panes"][5]["pane_id"], "w1:p6");
    assert_eq!(map["panes"][6]["pane_id"], "w2:p1");
    // Plain shell pane -> agent_not_found (not pane_not_found).
    assert_eq!(
        f.err(&["agent", "get", "w1:p1"]),
        (
            "agent_not_found".into(),
            "agent target w1:p1 not found".into()
        )
    );
    // Undetected unnamed occupant -> not an agent.
    assert_eq!(f.err(&["agent", "get", "w1:p5"]).0, "agent_not_found");
    // Kind labels and terminal ids are not targets.
    assert_eq!(
        f.err(&["agent", "get", "claude"]).1,
        "agent target claude not found"
    );
    let term = map["panes"][1]["terminal_id"]
        .as_str()
        .expect("term")
        .to_string();
    assert_eq!(f.err(&["agent", "get", &term]).0, "agent_not_found");
    // Pane id of an agent and exact name both work.
    let a = f.ok(&["agent", "get", "w1:p2"]);
    assert_eq!(a["result"]["agent"]["name"], "brain");
    let b = f.ok(&["agent", "get", "brain"]);
    assert_eq!(a, b);
    // Alias canonicalized.
    let w = f.ok(&["agent", "get", "worker"]);
    assert_eq!(w["result"]["agent"]["agent"], "claude");
    assert_eq!(w["result"]["agent"]["tab_id"], "w1:t2");
    assert_eq!(w["result"]["agent"]["agent_status"], "blocked");
    // Named but undetected: found by name, no `agent` key, status unknown.
    let h = f.ok(&["agent", "get", "hidden"]);
    assert!(h["result"]["agent"].get("agent").is_none());
    assert_eq!(h["result"]["agent"]["agent_status"], "unknown");
    // Names are case-sensitive and exact.
    assert_eq!(f.err(&["agent", "get", "Brain"]).0, "agent_not_found");
}

#[test]
fn agent_list_order_and_membership() {
    let (f, _) = Fake::with_world("list", WORLD);
    let v = f.ok(&["agent", "list"]);
    assert_eq!(v["result"]["type"], "agent_list");
    let agents = v["result"]["agents"].as_array().expect("agents");
    let ids: Vec<&str> = agents
        .iter()
        .map(|a| a["pane_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["w1:p2", "w1:p3", "w1:p4", "w1:p6", "w2:p1", "w2:p2"]);
    assert!(agents[1].get("name").is_none());
    assert_eq!(agents[5]["agent_status"], "done");
    assert_eq!(agents[4]["agent"], "docs-bot");
    let empty = Fake::new("list-empty");
    assert_eq!(
        empty.run(&["agent", "list"]).stdout,
        "{\"id\":\"cli:agent:list\",\"result\":{\"agents\":[],\"type\":\"agent_list\"}}\n"
    );
}

#[test]
fn agent_prompt_records_and_errors() {
    let (f, _) = Fake::with_world("prompt", WORLD);
    let text = "Review the diff\nline 2 \u{1F600} --wait";
    let v = f.ok(&["agent", "prompt", "brain", text]);
    assert_eq!(v["id"], "cli:agent:prompt");
    assert_eq!(v["result"]["type"], "agent_prompted");
    assert_eq!(v["result"]["agent"]["pane_id"], "w1:p2");
    // The text is args[1] literally, even when it looks like a flag.
    f.ok(&["agent", "prompt", "w1:p3", "--wait"]);
    // Wait for its Enter, so the next prompt is a submission of its own (see submit.rs).
    f.ok_admin(&["fake", "prompts"]);
    // --wait returns immediately.
    f.ok(&[
        "agent",
        "prompt",
        "w1:p3",
        "x",
        "--wait",
        "--until",
        "idle",
        "--timeout",
        "10",
    ]);
    assert_eq!(
        f.err(&["agent", "prompt", "brain", ""]),
        (
            "empty_agent_prompt".into(),
            "agent prompt must not be empty".into()
        )
    );
    // Empty check comes before resolution.
    assert_eq!(
        f.err(&["agent", "prompt", "nobody", ""]).0,
        "empty_agent_prompt"
    );
    assert_eq!(
        f.err(&["agent", "prompt", "nobody", "x"]),
        (
            "agent_not_found".into(),
            "agent target nobody not found".into()
        )
    );
    assert_eq!(
        f.err(&["agent", "prompt", "w1:p1", "x"]).0,
        "agent_not_found"
    );
    // Custom label / undetected named occupant -> agent_not_ready.
    assert_eq!(
        f.err(&["agent", "prompt", "w2:p1", "x"]),
        (
            "agent_not_ready".into(),
            "agent w2:p1 is not an active named agent".into()
        )
    );
    assert_eq!(
        f.err(&["agent", "prompt", "hidden", "x"]).0,
        "agent_not_ready"
    );
    // A report-agent-only agent on a shell pane cannot be prompted.
    f.run(&[
        "pane",
        "report-agent",
        "w1:p1",
        "--source",
        "custom:t",
        "--agent",
        "pi",
        "--state",
        "idle",
    ]);
    assert_eq!(
        f.err(&["agent", "prompt", "w1:p1", "x"]),
        (
            "agent_not_ready".into(),
            "agent w1:p1 is no longer the pane foreground process".into()
        )
    );
    let prompts = f.ok_admin(&["fake", "prompts"]);
    assert_eq!(
        prompts,
        json!([
            {"target":"brain","pane_id":"w1:p2","name":"brain","text":text,"parts":1},
            {"target":"w1:p3","pane_id":"w1:p3","name":null,"text":"--wait","parts":1},
            {"target":"w1:p3","pane_id":"w1:p3","name":null,"text":"x","parts":1}
        ])
    );
}

#[test]
fn agent_start_success_and_errors_in_order() {
    let (f, _) = Fake::with_world("start", WORLD);
    // server checks: name first...
    assert_eq!(
        f.err(&["agent", "start", "Bad", "--kind", "pi", "--pane", "nope", "--timeout", "1"]),
        (
            "invalid_agent_name".into(),
            "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)".into()
        )
    );
    // ...then control characters in args...
    assert_eq!(
        f.err(&["agent", "start", "brain", "--kind", "pi", "--pane", "nope", "--", "a\tb"])
            .0,
        "invalid_agent_argument"
    );
    // ...then the name is taken...
    let (code, msg) = f.err(&["agent", "start", "brain", "--kind", "pi", "--pane", "nope"]);
    assert_eq!(code, "agent_name_taken");
    assert!(
        msg.starts_with("agent name brain is already used; candidates: terminal_id=term_"),
        "{msg}"
    );
    assert!(
        msg.contains(" pane_id=w1:p2 workspace_id=w1 tab_id=w1:t1 cwd=/repo status=Idle"),
        "{msg}"
    );
    // ...then the pane must be an exact current id...
    assert_eq!(
        f.err(&[
            "agent",
            "start",
            "rev",
            "--kind",
            "pi",
            "--pane",
            "w9:p1",
            "--timeout",
            "1"
        ]),
        (
            "agent_pane_not_found".into(),
            "agent target pane w9:p1 not found".into()
        )
    );
    // ...and free (agent, or undetected process)...
    for busy in ["w1:p3", "w1:p5"] {
        assert_eq!(
            f.err(&[
                "agent",
                "start",
                "rev",
                "--kind",
                "pi",
                "--pane",
                busy,
                "--timeout",
                "1"
            ]),
            (
                "agent_pane_busy".into(),
                format!("agent target pane {busy} is not an available shell")
            )
        );
    }
    // ...then the timeout range.
    for t in ["3000", "300001"] {
        assert_eq!(
            f.err(&[
                "agent",
                "start",
                "rev",
                "--kind",
                "pi",
                "--pane",
                "w1:p1",
                "--timeout",
                t
            ]),
            (
                "invalid_agent_timeout".into(),
                "agent start timeout must be greater than 3000ms and at most 300000ms".into()
            )
        );
    }
    assert!(
        f.log().iter().all(|l| l["exit"] != 0),
        "nothing started yet"
    );
    let v = f.ok(&[
        "agent",
        "start",
        "rev",
        "--kind",
        "Cursor-Agent.exe",
        "--pane",
        "w1:p1",
        "--timeout",
        "300000",
        "--",
        "--model",
        "x y",
    ]);
    let r = &v["result"];
    assert_eq!(v["id"], "cli:agent:start");
    assert_eq!(r["type"], "agent_started");
    assert_eq!(r["argv"], json!(["cursor-agent", "--model", "x y"]));
    assert_eq!(r["agent"]["agent"], "cursor");
    assert_eq!(r["agent"]["name"], "rev");
    assert_eq!(r["agent"]["interactive_ready"], true);
    assert_eq!(r["agent"]["agent_status"], "idle");
    assert!(r["agent"].get("launch_pending").is_none());
    // Now it is a live, promptable, named agent; the pane is busy.
    assert_eq!(
        f.ok(&["agent", "get", "rev"])["result"]["agent"]["pane_id"],
        "w1:p1"
    );
    f.ok(&["agent", "prompt", "rev", "hi"]);
    assert_eq!(
        f.err(&["agent", "start", "rev2", "--kind", "pi", "--pane", "w1:p1"])
            .0,
        "agent_pane_busy"
    );
    assert_eq!(
        f.err(&["agent", "start", "k", "--kind", "kiro", "--pane", "w2:p1"])
            .0,
        "agent_pane_busy",
        "a custom-label agent makes the pane busy too"
    );
    let split = f.ok(&["pane", "split", "w2:p2", "--direction", "right"]);
    assert_eq!(split["result"]["pane"]["pane_id"], "w2:p3");
    let v = f.ok(&[
        "agent", "start", "k", "--kind", "KIRO-CLI", "--pane", "w2:p3",
    ]);
    assert_eq!(v["result"]["argv"], json!(["kiro-cli"]));
    assert_eq!(v["result"]["agent"]["cwd"], "/other");
}

#[test]
fn agent_start_rejects_aliases_after_move() {
    let (f, _) = Fake::with_world(
        "start-alias",
        r#"{"workspaces":[{"cwd":"/a","tabs":[{"panes":[{},{}]}]},{"cwd":"/b"}]}"#,
    );
    let m = f.ok_admin(&["fake", "move", "w1:p2", "w2"]);
    assert_eq!(m["pane_id"], "w2:p2");
    assert_eq!(
        f.err(&["agent", "start", "a", "--kind", "pi", "--pane", "w1:p2"])
            .0,
        "agent_pane_not_found"
    );
    f.ok(&["agent", "start", "a", "--kind", "pi", "--pane", "w2:p2"]);
}

#[test]
fn agent_rename_rules() {
    let (f, _) = Fake::with_world("rename", WORLD);
    // resolution first, even with an invalid name
    assert_eq!(
        f.err(&["agent", "rename", "w1:p1", "BAD"]).0,
        "agent_not_found"
    );
    assert_eq!(
        f.err(&["agent", "rename", "w1:p3", "BAD"]).0,
        "invalid_agent_name"
    );
    assert_eq!(
        f.err(&["agent", "rename", "w1:p3", "a".repeat(33).as_str()])
            .0,
        "invalid_agent_name"
    );
    let (code, msg) = f.err(&["agent", "rename", "w1:p3", "worker"]);
    assert_eq!(code, "agent_name_taken");
    assert!(
        msg.contains("pane_id=w1:p6 workspace_id=w1 tab_id=w1:t2 cwd=/repo status=Blocked"),
        "{msg}"
    );
    // Own name is fine.
    f.ok(&["agent", "rename", "brain", "brain"]);
    let v = f.ok(&["agent", "rename", "w1:p3", "helper_2-x"]);
    assert_eq!(v["result"]["agent"]["name"], "helper_2-x");
    assert_eq!(v["result"]["type"], "agent_info");
    assert_eq!(
        f.ok(&["agent", "get", "helper_2-x"])["result"]["agent"]["pane_id"],
        "w1:p3"
    );
    let v = f.ok(&["agent", "rename", "helper_2-x", "--clear"]);
    assert!(v["result"]["agent"].get("name").is_none());
    assert_eq!(f.err(&["agent", "get", "helper_2-x"]).0, "agent_not_found");
    // launch pending
    f.ok_admin(&["fake", "agent", "w1:p2", "--pending", "true"]);
    assert_eq!(
        f.err(&["agent", "rename", "brain", "other"]),
        (
            "agent_launch_pending".into(),
            "agent name cannot change while startup is pending".into()
        )
    );
    assert_eq!(
        f.ok(&["agent", "get", "brain"])["result"]["agent"]["launch_pending"],
        true
    );
}

#[test]
fn fake_agent_changes_the_occupant() {
    let (f, _) = Fake::with_world("occupant", WORLD);
    // detection arrives later (readiness retry)
    assert_eq!(f.err(&["agent", "get", "w1:p5"]).0, "agent_not_found");
    f.ok_admin(&["fake", "agent", "w1:p5", "--detected", "true"]);
    assert_eq!(
        f.ok(&["agent", "get", "w1:p5"])["result"]["agent"]["agent"],
        "pi"
    );
    // status change bumps state_change_seq
    let before = f.ok(&["agent", "get", "brain"])["result"]["agent"]["state_change_seq"].clone();
    f.ok_admin(&["fake", "agent", "brain", "--status", "working"]);
    let after = f.ok(&["agent", "get", "brain"]);
    assert_eq!(after["result"]["agent"]["agent_status"], "working");
    assert_ne!(after["result"]["agent"]["state_change_seq"], before);
    // --none: plain shell again, name gone
    f.ok_admin(&["fake", "agent", "w1:p2", "--none"]);
    assert_eq!(f.err(&["agent", "get", "brain"]).0, "agent_not_found");
    assert_eq!(f.err(&["agent", "get", "w1:p2"]).0, "agent_not_found");
    // new kind + name
    f.ok_admin(&[
        "fake", "agent", "w1:p2", "--kind", "opencode", "--name", "oc",
    ]);
    assert_eq!(
        f.ok(&["agent", "get", "oc"])["result"]["agent"]["agent"],
        "opencode"
    );
    // changing the kind drops the name unless given
    f.ok_admin(&["fake", "agent", "w1:p2", "--kind", "amp"]);
    assert_eq!(f.err(&["agent", "get", "oc"]).0, "agent_not_found");
    assert_eq!(
        f.run(&["fake", "agent", "w1:p2", "--status", "busy"]).code,
        Some(2)
    );
    assert_eq!(f.run(&["fake", "agent", "w9:p9"]).code, Some(1));
}

#[test]
fn start_kinds_as_each_version_looks_them_up() {
    // Herdr lowercases and trims the kind, strips one executable suffix, and knows multi-word
    // aliases; 0.8.2 adds qwen. The pane is made fresh for each start.
    let cases: &[(&str, Option<&str>, Option<&str>)] = &[
        // (kind, on 0.8.0, on 0.8.2)
        ("kimi code", Some("kimi"), Some("kimi")),
        ("Devin CLI", Some("devin"), Some("devin")),
        ("mastra code", Some("mastracode"), Some("mastracode")),
        (" kilo code ", Some("kilo"), Some("kilo")),
        ("KIMI-CODE.exe", Some("kimi"), Some("kimi")),
        ("qwen", None, Some("qwen")),
        ("qwen-code", None, Some("qwen")),
        ("Qwen Code", None, Some("qwen")),
        ("kimi  code", None, None),
    ];
    for (version, col) in [("0.8.0", 1), ("0.8.2", 2)] {
        let f = Fake::empty(&format!("kinds{version}"));
        f.world(&json!({"config": {"version": version, "settle_ms": "0"}, "workspaces": [{"cwd": "/r"}]}).to_string());
        for (i, case) in cases.iter().enumerate() {
            let want = if col == 1 { case.1 } else { case.2 };
            let split = f.ok(&["pane", "split", "w1:p1", "--direction", "right"]);
            let pane = split["result"]["pane"]["pane_id"]
                .as_str()
                .unwrap()
                .to_string();
            f.ok(&["fake", "agent", &pane, "--none"]);
            let name = format!("a{i}");
            let argv = ["agent", "start", &name, "--kind", case.0, "--pane", &pane];
            match want {
                Some(kind) => {
                    let v = f.ok(&argv);
                    assert_eq!(
                        v["result"]["agent"]["agent"], *kind,
                        "{version} {:?}",
                        case.0
                    );
                    assert_eq!(v["result"]["argv"], json!([kind]));
                }
                None => assert_eq!(
                    f.usage(&argv),
                    format!("unsupported interactive agent kind: {}", case.0),
                    "{version}"
                ),
            }
        }
    }
}
