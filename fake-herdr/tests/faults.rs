//! Fault injection: replacement output, times/after, delay, hang, signal, big stdout,
//! invalid UTF-8, HERDR_FAKE_DELAY_MS, and the argv log.

mod common;
use common::Fake;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

const WORLD: &str =
    r#"{"workspaces":[{"cwd":"/r","tabs":[{"panes":[{},{"agent":"pi","name":"brain"}]}]}]}"#;
const ERR: &str = r#"{"error":{"code":"agent_not_ready","message":"x"},"id":"cli:agent:prompt"}"#;

#[test]
fn replacement_output_and_times_after() {
    let (f, _) = Fake::with_world("fault-times", WORLD);
    f.ok_admin(&[
        "fake", "fault", "agent", "prompt", "--after", "1", "--times", "2", "--stderr", ERR,
        "--exit", "1",
    ]);
    let codes: Vec<Option<i32>> = (0..5)
        .map(|_| f.run(&["agent", "prompt", "brain", "hi"]).code)
        .collect();
    assert_eq!(codes, [Some(0), Some(1), Some(1), Some(0), Some(0)]);
    let o = {
        f.ok_admin(&["fake", "faults", "--clear"]);
        f.ok_admin(&[
            "fake", "fault", "agent", "prompt", "--stderr", ERR, "--exit", "1",
        ]);
        f.run(&["agent", "prompt", "brain", "hi"])
    };
    assert_eq!((o.code, o.stdout.as_str()), (Some(1), ""));
    assert_eq!(o.stderr, format!("{ERR}\n"));
    // Faulted prompts type nothing: only the 3 successful ones were typed (back to back,
    // so they may share submissions).
    let prompts = f.ok_admin(&["fake", "prompts"]);
    let prompts = prompts.as_array().expect("array");
    let parts: u64 = prompts.iter().filter_map(|p| p["parts"].as_u64()).sum();
    let text: String = prompts.iter().filter_map(|p| p["text"].as_str()).collect();
    assert_eq!((parts, text.as_str()), (3, "hihihi"), "{prompts:?}");
    // The log marks faulted calls.
    let log = f.log();
    assert_eq!(log.len(), 6);
    assert_eq!(log[1]["fault"], 0);
    assert!(log[0].get("fault").is_none());
    // Other commands are unaffected; `*` matches anything.
    f.ok(&["agent", "get", "brain"]);
    f.ok_admin(&["fake", "faults", "--clear"]);
    f.ok(&["agent", "prompt", "brain", "hi"]);
    f.ok_admin(&[
        "fake", "fault", "*", "*", "--times", "1", "--stdout", "garbage",
    ]);
    let o = f.run(&["pane", "list"]);
    assert_eq!((o.code, o.stdout.as_str()), (Some(0), "garbage\n"));
    f.ok(&["pane", "list"]);
}

#[test]
fn exit_0_with_error_json_and_no_state_change() {
    let (f, _) = Fake::with_world("fault-exit0", WORLD);
    f.ok_admin(&[
        "fake",
        "fault",
        "pane",
        "split",
        "--exit",
        "0",
        "--stderr",
        r#"{"error":{"code":"pane_split_failed","message":"m"},"id":"cli:pane:split"}"#,
        "--stdout",
        "{}",
    ]);
    let o = f.run(&["pane", "split", "w1:p1", "--direction", "right"]);
    assert_eq!(o.code, Some(0));
    assert_eq!(o.stdout, "{}\n");
    assert!(o.stderr.contains("pane_split_failed"));
    f.ok_admin(&["fake", "faults", "--clear"]);
    assert_eq!(
        f.ok(&["pane", "list"])["result"]["panes"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    // --no-newline
    f.ok_admin(&[
        "fake",
        "fault",
        "pane",
        "get",
        "--stdout",
        "{\"id\":1}",
        "--no-newline",
    ]);
    assert_eq!(f.run(&["pane", "get", "w1:p1"]).stdout, "{\"id\":1}");
}

#[test]
fn delay_then_normal_behaviour() {
    let (f, _) = Fake::with_world("fault-delay", WORLD);
    f.ok_admin(&["fake", "fault", "pane", "split", "--delay-ms", "300"]);
    let t = Instant::now();
    let v = f.ok(&["pane", "split", "w1:p1", "--direction", "right"]);
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        v["result"]["pane"]["pane_id"], "w1:p3",
        "state changed normally"
    );
    f.ok_admin(&["fake", "faults", "--clear"]);
    let t = Instant::now();
    let o = f.run_env(&["agent", "list"], &[("HERDR_FAKE_DELAY_MS", "250")]);
    assert_eq!(o.code, Some(0));
    assert!(t.elapsed() >= Duration::from_millis(250));
}

#[test]
fn hang_can_be_killed_and_is_logged() {
    let (f, _) = Fake::with_world("fault-hang", WORLD);
    f.ok_admin(&["fake", "fault", "agent", "get", "--hang"]);
    let mut child = f
        .cmd(&["agent", "get", "brain"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "still running"
    );
    child.kill().expect("kill");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.signal(), Some(9));
    assert!(out.stdout.is_empty());
    let log = f.log();
    assert_eq!(log.len(), 1);
    assert!(log[0]["exit"].is_null());
    assert_eq!(log[0]["argv"], serde_json::json!(["agent", "get", "brain"]));
    // The lock was not held while hanging: other calls still work.
    f.ok_admin(&["fake", "faults", "--clear"]);
    f.ok(&["agent", "get", "brain"]);
}

#[test]
fn signal_big_stdout_invalid_utf8() {
    let (f, _) = Fake::with_world("fault-misc", WORLD);
    f.ok_admin(&[
        "fake", "fault", "agent", "list", "--signal", "15", "--times", "1",
    ]);
    let out = f.cmd(&["agent", "list"]).output().expect("spawn");
    assert_eq!((out.status.code(), out.status.signal()), (None, Some(15)));
    f.ok_admin(&[
        "fake", "fault", "agent", "list", "--signal", "13", "--times", "1",
    ]);
    let out = f.cmd(&["agent", "list"]).output().expect("spawn");
    assert_eq!(
        out.status.signal(),
        Some(13),
        "SIGPIPE disposition is reset"
    );
    f.ok_admin(&["fake", "fault", "pane", "list", "--big-stdout", "5000000"]);
    let out = f.cmd(&["pane", "list"]).output().expect("spawn");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout.len(), 5_000_000);
    f.ok_admin(&["fake", "fault", "pane", "get", "--invalid-utf8"]);
    let out = f.cmd(&["pane", "get", "w1:p1"]).output().expect("spawn");
    assert_eq!(out.status.code(), Some(0));
    assert!(std::str::from_utf8(&out.stdout).is_err());
    // The big/invalid faults did not break the normal path of others.
    f.ok(&["agent", "list"]);
}

#[test]
fn fault_usage_errors() {
    let f = Fake::new("fault-usage");
    assert_eq!(f.run(&["fake", "fault", "agent"]).code, Some(2));
    assert_eq!(
        f.run(&["fake", "fault", "agent", "get", "--times", "x"])
            .code,
        Some(2)
    );
    assert_eq!(
        f.run(&["fake", "fault", "agent", "get", "--bogus"]).code,
        Some(2)
    );
    assert_eq!(f.run(&["fake", "nope"]).code, Some(2));
    assert_eq!(f.run(&["fake"]).code, Some(2));
    let faults = f.ok_admin(&["fake", "faults"]);
    assert_eq!(faults, serde_json::json!([]));
}

#[test]
fn corrupt_state_is_a_clear_error() {
    let f = Fake::new("corrupt");
    std::fs::write(&f.state, "{not json").expect("write");
    let o = f.run(&["agent", "list"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.starts_with("fake herdr: invalid state file"),
        "{}",
        o.stderr
    );
    let o = f.run(&["fake", "agent", "w1:p1", "--none"]);
    assert_eq!(o.code, Some(1));
    std::fs::write(&f.state, "[1,2]").expect("write");
    assert_eq!(f.run(&["pane", "list"]).code, Some(1));
    // a bad world is a usage error and leaves the state alone
    let mut c = f.cmd(&["fake", "world"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(br#"{"workspaces":[{"tabz":[]}]}"#)
            .expect("write");
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&f.state).expect("state"), "[1,2]");
}
