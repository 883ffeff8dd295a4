//! Global argv handling, usage errors (exit 2), server_not_running, output shapes.

mod common;
use common::{assert_one_sorted_line, Fake};
use serde_json::Value;

const WORLD: &str = r#"{"workspaces":[{"cwd":"/repo","tabs":[{"panes":[
  {"cwd":"/repo"},
  {"agent":"pi","name":"brain"},
  {"agent":"claude","status":"working"}
]}]}]}"#;

#[test]
fn version_and_help() {
    let f = Fake::new("version");
    let o = f.run(&["--version"]);
    assert_eq!((o.code, o.stdout.as_str()), (Some(0), "herdr 0.8.0\n"));
    // `herdr agent` alone: short help on stderr, exit 2; `agent help`: exit 0.
    let o = f.run(&["agent"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("herdr agent get"), "{}", o.stderr);
    assert_eq!(f.run(&["agent", "help"]).code, Some(0));
    assert_eq!(f.run(&["pane", "bogus"]).code, Some(2));
    // --help right after a known path -> stdout, exit 0.
    let o = f.run(&["agent", "prompt", "--help"]);
    assert_eq!(o.code, Some(0));
    assert!(!o.stdout.is_empty() && o.stderr.is_empty());
}

#[test]
fn usage_errors_exit_2_plain_text() {
    let (f, _) = Fake::with_world("usage", WORLD);
    assert_eq!(
        f.usage(&["agent", "get"]),
        "usage: herdr agent get <target>"
    );
    assert_eq!(
        f.usage(&["agent", "get", "a", "b"]),
        "usage: herdr agent get <target>"
    );
    assert_eq!(f.usage(&["agent", "list", "x"]), "usage: herdr agent list");
    assert_eq!(
        f.usage(&["agent", "prompt"]),
        "usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain"]),
        "agent prompt requires text"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "a", "b"]),
        "unknown option: b"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "x", "--until", "idle"]),
        "--until requires --wait"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "x", "--timeout", "5"]),
        "--timeout requires --wait"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "x", "--wait", "--until", "busy"]),
        "invalid agent status: busy (expected idle, working, blocked, done, or unknown)"
    );
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "x", "--wait", "--timeout", "z"]),
        "invalid value for --timeout: z"
    );
    assert_eq!(
        f.usage(&["agent", "rename", "brain"]),
        "usage: herdr agent rename <target> <name>|--clear"
    );
    assert_eq!(f.usage(&["pane", "get"]), "usage: herdr pane get <pane_id>");
    assert_eq!(
        f.usage(&["pane", "close", "a", "b"]),
        "usage: herdr pane close <pane_id>"
    );
    assert_eq!(
        f.usage(&["tab", "close"]),
        "usage: herdr tab close <tab_id>"
    );
    assert_eq!(
        f.usage(&["pane", "list", "--bogus"]),
        "unknown option: --bogus"
    );
    assert_eq!(
        f.usage(&["pane", "list", "--workspace"]),
        "missing value for --workspace"
    );
    assert_eq!(
        f.usage(&["tab", "create", "--cwd"]),
        "missing value for --cwd"
    );
    assert_eq!(f.usage(&["tab", "create", "w1"]), "unknown option: w1");
    // --flag=value is not accepted...
    assert_eq!(
        f.usage(&["tab", "create", "--cwd=/x"]),
        "unknown option: --cwd=/x"
    );
    // ...except 0.8.2's --right-click=...; 0.8.0 has no --right-click at all.
    let split = ["pane", "split", "w1:p1", "--direction", "down"];
    for rc in [&["--right-click=pane"][..], &["--right-click", "herdr"]] {
        let argv: Vec<&str> = split.iter().chain(rc).copied().collect();
        assert_eq!(f.usage(&argv), format!("unknown option: {}", rc[0]));
        f.ok_env(&argv, &[("HERDR_FAKE_VERSION", "0.8.2")]);
    }
    let bad: Vec<&str> = split
        .iter()
        .chain(&["--right-click", "x"])
        .copied()
        .collect();
    assert_eq!(
        f.usage_env(&bad, &[("HERDR_FAKE_VERSION", "0.8.2")]),
        "invalid right-click target: x"
    );
    assert!(f
        .usage(&["pane", "split", "w1:p1"])
        .starts_with("usage: herdr pane split"));
    assert_eq!(
        f.usage(&["pane", "split", "w1:p1", "--direction", "left"]),
        "invalid split direction: left"
    );
    assert_eq!(
        f.usage(&[
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--ratio",
            "x"
        ]),
        "invalid ratio: x"
    );
    assert_eq!(
        f.usage(&[
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--env",
            "NOEQ"
        ]),
        "env must use KEY=VALUE"
    );
    assert_eq!(
        f.usage(&[
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--env",
            "=v"
        ]),
        "env key must not be empty"
    );
    // 0.8.2 refuses --current without HERDR_PANE_ID; 0.8.0 splits the focused pane.
    assert_eq!(
        f.usage_env(
            &["pane", "split", "--current", "--direction", "down"],
            &[("HERDR_FAKE_VERSION", "0.8.2")]
        ),
        "--current requires HERDR_PANE_ID"
    );
    let v = f.ok(&["pane", "split", "--current", "--direction", "down"]);
    let new = v["result"]["pane"]["pane_id"].clone();
    let v = f.ok(&["pane", "list", "--workspace", "w1"]);
    let panes = v["result"]["panes"].as_array().unwrap();
    assert_eq!(panes[0]["pane_id"], "w1:p1");
    assert_eq!(panes[1]["pane_id"], new, "placed after the focused pane");
    // agent start grammar
    assert!(f
        .usage(&["agent", "start"])
        .starts_with("usage: herdr agent start <name>"));
    assert_eq!(
        f.usage(&["agent", "start", "n", "--pane", "w1:p1"]),
        "missing required --kind"
    );
    assert_eq!(
        f.usage(&["agent", "start", "n", "--kind", "pi"]),
        "missing required --pane"
    );
    assert_eq!(
        f.usage(&["agent", "start", "n", "--kind", "--", "x"]),
        "missing value for --kind"
    );
    assert_eq!(
        f.usage(&["agent", "start", "n", "--kind", "pi", "--pane", "w1:p1", "--x"]),
        "unknown option: --x"
    );
    assert_eq!(
        f.usage(&["agent", "start", "n", "--kind", "nope", "--pane", "w1:p1"]),
        "unsupported interactive agent kind: nope"
    );
    assert_eq!(
        f.usage(&[
            "agent",
            "start",
            "n",
            "--kind",
            "pi",
            "--pane",
            "w1:p1",
            "--timeout",
            "-1"
        ]),
        "invalid value for --timeout: -1"
    );
    // Usage errors are logged too, with exit 2, and change nothing.
    let log = f.log();
    assert!(log
        .iter()
        .all(|l| l["exit"] == 2 || l["argv"][1] == "split" || l["argv"][1] == "list"));
    assert_eq!(log[0]["argv"], serde_json::json!(["agent", "get"]));
}

#[test]
fn invalid_utf8_argv_exits_2_and_is_logged() {
    use std::os::unix::ffi::OsStrExt;
    let (f, _) = Fake::with_world("utf8", WORLD);
    let bad = std::ffi::OsStr::from_bytes(b"w1:\xffp1");
    let o = common::to_out(f.cmd(&["agent", "get"]).arg(bad).output().expect("spawn"));
    assert_eq!(o.code, Some(2));
    assert!(
        o.stderr.starts_with("error: argument 3 is not valid UTF-8"),
        "{}",
        o.stderr
    );
    let log = f.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["exit"], 2);
}

#[test]
fn session_flags_are_stripped_before_double_dash() {
    let (f, _) = Fake::with_world("session", WORLD);
    let v = f.ok(&["--session", "dev", "agent", "get", "brain"]);
    assert_eq!(v["result"]["agent"]["name"], "brain");
    let v = f.ok(&["agent", "--session=x", "get", "brain"]);
    assert_eq!(v["result"]["agent"]["pane_id"], "w1:p2");
    // A prompt text equal to --session gets mangled, as in real Herdr.
    assert_eq!(
        f.usage(&["agent", "prompt", "brain", "--session", "x"]),
        "agent prompt requires text"
    );
    // After `--` it is kept (agent start args).
    let v = f.ok(&[
        "agent",
        "start",
        "rev",
        "--kind",
        "codex",
        "--pane",
        "w1:p1",
        "--",
        "--session",
        "s",
    ]);
    assert_eq!(
        v["result"]["argv"],
        serde_json::json!(["codex", "--session", "s"])
    );
    let log = f.log();
    // The log has the raw argv, before stripping.
    assert_eq!(log[0]["argv"][0], "--session");
}

#[test]
fn server_not_running_without_state_file() {
    let f = Fake::empty("nostate");
    let o = f.run(&["agent", "get", "w1:p1"]);
    assert_eq!(o.code, Some(1));
    assert_eq!(o.stdout, "");
    let sock = f.dir.join(".config/herdr/herdr.sock");
    assert_eq!(
        o.stderr,
        format!(
            "{{\"id\":\"cli:agent:get\",\"error\":{{\"code\":\"server_not_running\",\"message\":\"no herdr server is running at {}; run `herdr` to start or attach it\"}}}}\n",
            sock.display()
        )
    );
    let o = f.run_env(&["pane", "list"], &[("HERDR_SOCKET_PATH", "/tmp/x.sock")]);
    assert!(o.stderr.contains("\"id\":\"cli:pane:list\""));
    assert!(
        o.stderr.contains("running at /tmp/x.sock; run `herdr` to"),
        "{}",
        o.stderr
    );
    let o = f.run(&["--session", "dev", "tab", "close", "w1:t1"]);
    assert!(o
        .stderr
        .contains("sessions/dev/herdr.sock; run `herdr session attach dev` to"));
    // Usage errors still come first.
    assert_eq!(f.run(&["agent", "get"]).code, Some(2));
}

#[test]
fn records_have_exact_keys_and_sorted_output() {
    let (f, _) = Fake::with_world("shapes", WORLD);
    let o = f.run(&["agent", "get", "brain"]);
    assert_one_sorted_line(&o.stdout);
    let v: Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(o
        .stdout
        .starts_with("{\"id\":\"cli:agent:get\",\"result\":{\"agent\":{"));
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .expect("object")
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut k = keys(&v["result"]["agent"]);
    k.sort();
    assert_eq!(
        k,
        [
            "agent",
            "agent_status",
            "cwd",
            "focused",
            "foreground_cwd",
            "name",
            "pane_id",
            "revision",
            "state_change_seq",
            "tab_id",
            "terminal_id",
            "workspace_id"
        ]
    );
    assert_eq!(v["result"]["type"], "agent_info");
    assert!(v["result"]["agent"]["terminal_id"]
        .as_str()
        .is_some_and(|t| t.starts_with("term_") && t[5..].chars().all(|c| c.is_ascii_hexdigit())));
    // Unnamed agent: no name key, no launch_pending / interactive_ready keys.
    let v = f.ok(&["agent", "get", "w1:p3"]);
    let a = &v["result"]["agent"];
    assert!(a.get("name").is_none() && a.get("launch_pending").is_none());
    assert!(a.get("interactive_ready").is_none());
    assert_eq!(a["agent_status"], "working");
    // PaneInfo of a plain shell: no agent key, status unknown.
    let v = f.ok(&["pane", "get", "w1:p1"]);
    let mut k = keys(&v["result"]["pane"]);
    k.sort();
    assert_eq!(
        k,
        [
            "agent_status",
            "cwd",
            "focused",
            "foreground_cwd",
            "pane_id",
            "revision",
            "scroll",
            "tab_id",
            "terminal_id",
            "workspace_id"
        ]
    );
    assert_eq!(v["result"]["pane"]["agent_status"], "unknown");
    assert_eq!(v["result"]["type"], "pane_info");
    // pane close / tab close -> {"type":"ok"}
    let o = f.run(&["pane", "close", "w1:p3"]);
    assert_eq!(
        o.stdout,
        "{\"id\":\"cli:pane:close\",\"result\":{\"type\":\"ok\"}}\n"
    );
    // workspace create / tab create
    let v = f.ok(&[
        "workspace",
        "create",
        "--cwd",
        "/w",
        "--label",
        "W",
        "--no-focus",
    ]);
    let r = &v["result"];
    assert_eq!(r["type"], "workspace_created");
    let mut k = keys(&r["workspace"]);
    k.sort();
    assert_eq!(
        k,
        [
            "active_tab_id",
            "agent_status",
            "focused",
            "label",
            "number",
            "pane_count",
            "tab_count",
            "workspace_id"
        ]
    );
    assert_eq!(r["workspace"]["workspace_id"], "w2");
    assert_eq!(r["workspace"]["label"], "W");
    assert_eq!(r["tab"]["tab_id"], "w2:t1");
    assert_eq!(r["root_pane"]["pane_id"], "w2:p1");
    assert_eq!(r["root_pane"]["cwd"], "/w");
    let v = f.ok(&[
        "tab",
        "create",
        "--workspace",
        "w2",
        "--label",
        "L",
        "--no-focus",
    ]);
    let r = &v["result"];
    assert_eq!(r["type"], "tab_created");
    let mut k = keys(&r["tab"]);
    k.sort();
    assert_eq!(
        k,
        [
            "agent_status",
            "focused",
            "label",
            "number",
            "pane_count",
            "tab_id",
            "workspace_id"
        ]
    );
    assert_eq!(
        (r["tab"]["tab_id"].as_str(), r["tab"]["number"].as_u64()),
        (Some("w2:t2"), Some(2))
    );
    assert_eq!(r["root_pane"]["pane_id"], "w2:p2");
    assert_eq!(
        r["root_pane"]["cwd"], "/w",
        "tab inherits the workspace cwd"
    );
    // Every PaneInfo has the same keys, whichever command answers it: a plain shell's
    // foreground_cwd is the shell's cwd, and scroll is always there.
    let shell_keys = [
        "agent_status",
        "cwd",
        "focused",
        "foreground_cwd",
        "pane_id",
        "revision",
        "scroll",
        "tab_id",
        "terminal_id",
        "workspace_id",
    ];
    let split = f.ok(&[
        "pane",
        "split",
        "w2:p2",
        "--direction",
        "down",
        "--no-focus",
    ]);
    let list = f.ok(&["pane", "list", "--workspace", "w2"]);
    let ws = f.ok(&["workspace", "create", "--cwd", "/v", "--no-focus"]);
    for pane in [
        &r["root_pane"],
        &split["result"]["pane"],
        &list["result"]["panes"][0],
        &ws["result"]["root_pane"],
    ] {
        let mut k = keys(pane);
        k.sort();
        assert_eq!(k, shell_keys, "{pane}");
        assert_eq!(pane["foreground_cwd"], pane["cwd"]);
        assert_eq!(
            pane["scroll"],
            serde_json::json!({"offset_from_bottom": 0, "max_offset_from_bottom": 0, "viewport_rows": 40})
        );
    }
    // report-agent prints nothing on success.
    let o = f.run(&[
        "pane",
        "report-agent",
        "w1:p1",
        "--source",
        "custom:t",
        "--agent",
        "docs-bot",
        "--state",
        "blocked",
    ]);
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(0), "", "")
    );
    let v = f.ok(&["agent", "get", "w1:p1"]);
    assert_eq!(v["result"]["agent"]["agent"], "docs-bot");
    assert_eq!(v["result"]["agent"]["agent_status"], "blocked");
    // bad --state: exit 1 with an io-style line.
    let o = f.run(&[
        "pane",
        "report-agent",
        "w1:p1",
        "--source",
        "s",
        "--agent",
        "a",
        "--state",
        "done",
    ]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.starts_with("Error: Custom { kind: Other, error: "),
        "{}",
        o.stderr
    );
}
