//! The version switch: 0.8.0 and 0.8.2 behaviour side by side (`--version`, `agent_blocked`,
//! `agent_prompt_failed`, start readiness, `agent_pane_busy` retries, the pane environment).

mod common;
use common::Fake;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn world(version: &str) -> Fake {
    let w = json!({"config": {"version": version}, "workspaces": [{"cwd": "/repo", "tabs": [{"panes": [
        {"agent": "pi", "name": "brain"},
        {"agent": "claude", "name": "stuck", "status": "blocked"},
        {"agent": "codex", "name": "broken", "prompt_fails": true},
        {}
    ]}]}]});
    let f = Fake::empty(&format!("v{version}"));
    f.world(&w.to_string());
    f
}

fn prompts(f: &Fake) -> usize {
    f.ok(&["fake", "prompts"]).as_array().unwrap().len()
}

#[test]
fn version_is_reported_and_switchable() {
    let f = world("0.8.2");
    assert_eq!(f.run(&["--version"]).stdout, "herdr 0.8.2\n");
    assert!(f.run(&["--help"]).stdout.starts_with("herdr 0.8.2 (fake)"));
    f.ok(&["fake", "config", "version", "0.8.0"]);
    assert_eq!(f.run(&["--version"]).stdout, "herdr 0.8.0\n");
    // The state wins over the environment; the environment over the default.
    let o = f.run_env(&["--version"], &[("HERDR_FAKE_VERSION", "0.8.2")]);
    assert_eq!(o.stdout, "herdr 0.8.0\n");
    f.ok(&["fake", "config", "version", "--unset"]);
    assert_eq!(f.run(&["--version"]).stdout, "herdr 0.8.0\n");
    let o = f.run_env(&["--version"], &[("HERDR_FAKE_VERSION", "0.8.2")]);
    assert_eq!(o.stdout, "herdr 0.8.2\n");
    // Bad values are usage errors, never a silent default.
    let o = f.run_env(&["--version"], &[("HERDR_FAKE_VERSION", "0.9.1")]);
    assert_eq!(o.code, Some(2));
    assert!(
        o.stderr.contains("HERDR_FAKE_VERSION=0.9.1"),
        "{}",
        o.stderr
    );
    assert!(f
        .usage(&["fake", "config", "version", "1.0"])
        .contains("1.0"));
    assert!(f
        .usage(&["fake", "config", "bogus", "1"])
        .contains("unknown setting"));
    let c = f.ok(&["fake", "config", "settle_ms", "5"]);
    assert_eq!(c["settle_ms"], 5);
    assert_eq!(c["config"], json!({"settle_ms": "5"}));
    assert!(f
        .usage(&["fake", "config", "start_status", "done"])
        .contains("done"));
    // A world with a bad setting is refused.
    let bad = Fake::empty("badcfg");
    let mut c = bad.cmd(&["fake", "world"]);
    c.stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"config":{"version":"0.7.0"}}"#)
        .unwrap();
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(2));
}

#[test]
fn prompt_to_a_blocked_agent() {
    // 0.8.0 types into a blocked agent; 0.8.2 refuses before writing anything.
    let f = world("0.8.0");
    f.ok(&["agent", "prompt", "stuck", "hello"]);
    assert_eq!(prompts(&f), 1);
    let f = world("0.8.2");
    let (code, msg) = f.err(&["agent", "prompt", "stuck", "hello"]);
    assert_eq!(code, "agent_blocked");
    assert_eq!(msg, "agent stuck is blocked and requires interactive input");
    assert_eq!(prompts(&f), 0, "nothing is written to a blocked agent");
    // The state is checked before readiness: a blocked agent still launching is blocked.
    f.ok(&["fake", "agent", "stuck", "--pending", "true"]);
    let v = f.ok(&["agent", "get", "stuck"]);
    assert_eq!(v["result"]["agent"]["agent_status"], "blocked");
    assert_eq!(v["result"]["agent"]["launch_pending"], true);
    assert_eq!(
        f.err(&["agent", "prompt", "stuck", "hello"]).0,
        "agent_blocked"
    );
    f.ok(&["agent", "prompt", "brain", "hello"]);
    assert_eq!(prompts(&f), 1);
}

#[test]
fn failed_write_is_agent_prompt_failed_in_both() {
    for v in ["0.8.0", "0.8.2"] {
        let f = world(v);
        assert_eq!(
            f.err(&["agent", "prompt", "broken", "hi"]).0,
            "agent_prompt_failed"
        );
        assert_eq!(prompts(&f), 0);
        f.ok(&["fake", "agent", "broken", "--prompt-fails", "false"]);
        f.ok(&["agent", "prompt", "broken", "hi"]);
        assert_eq!(prompts(&f), 1, "{v}");
        f.ok(&["fake", "agent", "brain", "--prompt-fails", "true"]);
        assert_eq!(
            f.err(&["agent", "prompt", "brain", "hi"]).0,
            "agent_prompt_failed"
        );
    }
}

fn agent(v: &Value) -> &Value {
    &v["result"]["agent"]
}

#[test]
fn start_waits_until_the_new_agent_is_ready_in_both_versions() {
    for v in ["0.8.0", "0.8.2"] {
        // A settle that never ends by itself: the test ends it, so nothing here is a race.
        let f = world(v);
        f.ok(&["fake", "config", "settle_ms", "600000"]);
        let argv = [
            "agent",
            "start",
            "fresh",
            "--kind",
            "pi",
            "--pane",
            "w1:p4",
            "--timeout",
            "300000",
        ];
        let mut child = f
            .cmd(&argv)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // While it settles the new agent is named, pending and `unknown`, and the start has not
        // returned.
        let mid = loop {
            let o = f.run(&["agent", "get", "fresh"]);
            if o.code == Some(0) {
                break serde_json::from_str::<Value>(&o.stdout).unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(agent(&mid)["agent_status"], "unknown", "{v} {mid}");
        assert_eq!(agent(&mid)["launch_pending"], true);
        assert!(agent(&mid).get("agent").is_none());
        assert_eq!(
            f.err(&["agent", "prompt", "fresh", "x"]).0,
            "agent_not_ready"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "{v}: returned before ready"
        );
        // Herdr sees the agent idle and ready: the start returns with it.
        f.ok(&[
            "fake",
            "agent",
            "fresh",
            "--pending",
            "false",
            "--ready",
            "true",
            "--status",
            "idle",
            "--detected",
            "true",
        ]);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let s: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["result"]["type"], "agent_started");
        assert_eq!(s["result"]["argv"], json!(["pi"]));
        assert_eq!(agent(&s)["interactive_ready"], true, "{v} {s}");
        assert_eq!(agent(&s)["agent_status"], "idle");
        assert_eq!(agent(&s)["agent"], "pi");
        assert!(agent(&s).get("launch_pending").is_none());

        // The settle itself: the start returns no sooner.
        let f = world(v);
        f.ok(&["fake", "config", "settle_ms", "300"]);
        let t = Instant::now();
        let s = f.ok(&["agent", "start", "fresh", "--kind", "pi", "--pane", "w1:p4"]);
        assert!(t.elapsed() >= Duration::from_millis(300), "{v}");
        assert_eq!(agent(&s)["interactive_ready"], true);
    }
}

#[test]
fn blocked_new_agent_is_ready_on_080_and_not_ready_on_082() {
    let f = world("0.8.0");
    f.ok(&["fake", "config", "start_status", "blocked"]);
    let s = f.ok(&["agent", "start", "fresh", "--kind", "pi", "--pane", "w1:p4"]);
    assert_eq!(agent(&s)["agent_status"], "blocked");
    assert_eq!(agent(&s)["interactive_ready"], true);

    let f = world("0.8.2");
    f.ok(&["fake", "config", "start_status", "blocked"]);
    f.ok(&["fake", "config", "settle_ms", "30"]);
    let (code, msg) = f.err(&["agent", "start", "fresh", "--kind", "pi", "--pane", "w1:p4"]);
    assert_eq!(code, "agent_not_ready");
    assert!(msg.contains("fresh"), "{msg}");
    // The blocked agent is still there, no longer pending.
    let g = f.ok(&["agent", "get", "fresh"]);
    assert_eq!(agent(&g)["agent_status"], "blocked");
    assert!(agent(&g).get("launch_pending").is_none());
    assert!(agent(&g).get("interactive_ready").is_none());
}

#[test]
fn start_deadline_releases_the_name() {
    let f = world("0.8.2");
    f.ok(&["fake", "config", "start_status", "working"]);
    f.ok(&["fake", "config", "settle_ms", "10"]);
    // The CLI's own floor (> 3000 ms) applies to --timeout, so use the real minimum.
    let t = Instant::now();
    let (code, _) = f.err(&[
        "agent",
        "start",
        "slow",
        "--kind",
        "pi",
        "--pane",
        "w1:p4",
        "--timeout",
        "3001",
    ]);
    assert_eq!(code, "timeout");
    assert!(t.elapsed() >= Duration::from_millis(3000));
    assert_eq!(f.err(&["agent", "get", "slow"]).0, "agent_not_found");
}

#[test]
fn process_exit_during_startup_is_reported() {
    let f = world("0.8.2");
    f.ok(&["fake", "config", "settle_ms", "400"]);
    let child = f
        .cmd(&["agent", "start", "gone", "--kind", "pi", "--pane", "w1:p4"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    f.ok(&["fake", "agent", "w1:p4", "--none"]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(e["error"]["code"], "agent_name_not_found");
}

#[test]
fn new_pane_shell_start_busy_is_retried_only_on_082() {
    for v in ["0.8.0", "0.8.2"] {
        let f = world(v);
        f.ok(&["fake", "config", "shell_start_ms", "150"]);
        f.ok(&["fake", "config", "settle_ms", "0"]);
        f.ok(&["pane", "split", "w1:p1", "--direction", "right"]);
        let start = ["agent", "start", "fresh", "--kind", "pi", "--pane", "w1:p5"];
        if v == "0.8.0" {
            assert_eq!(f.err(&start).0, "agent_pane_busy");
        } else {
            let t = Instant::now();
            let s = f.ok(&start);
            assert!(
                t.elapsed() >= Duration::from_millis(100),
                "it waited for the shell"
            );
            assert_eq!(agent(&s)["interactive_ready"], true);
        }
    }
    // A pane that stays busy while its shell is its foreground process (a named shell) fails
    // after the retry window.
    let f = world("0.8.2");
    f.ok(&["fake", "agent", "w1:p4", "--name", "held"]);
    f.ok(&["fake", "config", "busy_retry_ms", "200"]);
    let t = Instant::now();
    assert_eq!(
        f.err(&["agent", "start", "x", "--kind", "pi", "--pane", "w1:p4"])
            .0,
        "agent_pane_busy"
    );
    assert!(t.elapsed() >= Duration::from_millis(200));
    // One logged invocation, however many retries.
    let log = f.ok(&["fake", "log"]);
    assert_eq!(
        log.as_array()
            .unwrap()
            .iter()
            .filter(|l| l["argv"][1] == "start")
            .count(),
        1
    );
}

/// Runs `herdr args`; None when it has not finished within `limit` (then it is killed).
fn run_within(f: &Fake, args: &[&str], limit: Duration) -> Option<std::process::Output> {
    let mut child = f
        .cmd(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

#[test]
fn busy_is_retried_only_while_the_shell_is_foreground_on_082() {
    // The retry window is a minute: a start that retried would not end within 20 s.
    let f = world("0.8.2");
    f.ok(&["fake", "config", "busy_retry_ms", "60000"]);
    for pane in ["w1:p1", "w1:p2"] {
        let o = run_within(
            &f,
            &["agent", "start", "x", "--kind", "pi", "--pane", pane],
            Duration::from_secs(20),
        )
        .unwrap_or_else(|| panic!("agent start on the agent pane {pane} was retried"));
        assert_eq!(o.status.code(), Some(1));
        let e: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(e["error"]["code"], "agent_pane_busy", "{e}");
    }
    // An undetected process is a process too.
    f.ok(&[
        "fake",
        "agent",
        "w1:p4",
        "--kind",
        "pi",
        "--detected",
        "false",
    ]);
    let o = run_within(
        &f,
        &["agent", "start", "x", "--kind", "pi", "--pane", "w1:p4"],
        Duration::from_secs(20),
    );
    assert!(
        o.is_some(),
        "agent start on a pane running a process was retried"
    );
    // A timeout the server refuses is not retried either (`retryable_timeout`).
    f.ok(&["fake", "agent", "w1:p4", "--none", "--name", "held"]);
    let o = run_within(
        &f,
        &[
            "agent",
            "start",
            "x",
            "--kind",
            "pi",
            "--pane",
            "w1:p4",
            "--timeout",
            "2000",
        ],
        Duration::from_secs(20),
    );
    assert!(
        o.is_some(),
        "agent start with a 2000 ms timeout was retried"
    );
}

#[test]
fn pane_environment_by_version() {
    for v in ["0.8.0", "0.8.2"] {
        let f = world(v);
        f.ok(&[
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "right",
            "--env",
            "FOO=bar",
        ]);
        let env = f.ok(&["fake", "env", "w1:p5"]);
        assert_eq!(env["HERDR_ENV"], "1");
        assert_eq!(env["HERDR_PANE_ID"], "w1:p5");
        assert_eq!(env["HERDR_TAB_ID"], "w1:t1");
        assert_eq!(env["HERDR_WORKSPACE_ID"], "w1");
        assert_eq!(env["FOO"], "bar");
        assert!(env["HERDR_SOCKET_PATH"]
            .as_str()
            .unwrap()
            .ends_with("herdr.sock"));
        if v == "0.8.0" {
            assert!(env.get("HERDR_BIN_PATH").is_none(), "{env}");
        } else {
            let bin = env["HERDR_BIN_PATH"].as_str().unwrap();
            assert_eq!(
                std::fs::canonicalize(bin).unwrap(),
                std::fs::canonicalize(common::BIN).unwrap()
            );
        }
    }
}
