//! Herdr 0.9.0's prompt path (`HERDR_FAKE_VERSION=0.9.0`): `agent prompt` is one submission on
//! the pane's input queue and answers only after its Enter; prompts to one pane are typed one
//! after another's Enter (never glued); a caller that gives up does not withdraw its prompt; a
//! pane that goes first fails the prompts still queued for it.

mod common;
use common::Fake;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn world(version: &str) -> Fake {
    let w = json!({"config": {"version": version}, "workspaces": [{"cwd": "/r", "tabs": [{"panes": [
        {"agent": "pi", "name": "brain"},
        {"agent": "claude", "name": "stuck", "status": "blocked"},
        {"agent": "codex", "name": "broken", "prompt_fails": true},
        {"agent": "pi", "name": "other"}
    ]}]}]});
    let f = Fake::empty(&format!("p090-{version}"));
    f.world(&w.to_string());
    f
}

fn submissions(f: &Fake, now: bool) -> Vec<Value> {
    let args: &[&str] = if now {
        &["fake", "prompts", "--now"]
    } else {
        &["fake", "prompts"]
    };
    f.ok_admin(args).as_array().expect("array").clone()
}

fn texts(v: &[Value]) -> Vec<String> {
    v.iter()
        .map(|p| p["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn version_and_protocol() {
    let f = world("0.9.0");
    assert_eq!(f.run(&["--version"]).stdout, "herdr 0.9.0\n");
    let c = f.ok_admin(&["fake", "config"]);
    assert_eq!(
        (c["version"].clone(), c["protocol"].clone()),
        (json!("0.9.0"), json!(22))
    );
    f.ok(&["fake", "config", "version", "0.8.2"]);
    assert_eq!(f.ok_admin(&["fake", "config"])["protocol"], 20);
    // 0.9.0 knows `muse`; 0.8.2 does not.
    assert!(f
        .usage(&["agent", "start", "m", "--kind", "muse", "--pane", "w1:p4"])
        .contains("unsupported interactive agent kind: muse"));
}

#[test]
fn a_prompt_answers_after_its_enter() {
    let f = world("0.9.0");
    let t0 = Instant::now();
    let r = f.ok(&["agent", "prompt", "brain", "hello"]);
    let took = t0.elapsed();
    assert_eq!(r["result"]["type"], "agent_prompted");
    assert_eq!(r["result"]["agent"]["name"], "brain");
    assert!(
        took >= Duration::from_millis(300),
        "answered after {took:?}"
    );
    // Submitted by the time it answered: no Enter is still to come.
    let now = submissions(&f, true);
    assert_eq!(texts(&now), ["hello"]);
    assert_eq!(now[0]["parts"], 1);
    // 0.8.2 answers before its Enter.
    let g = world("0.8.2");
    g.ok(&["agent", "prompt", "brain", "hello"]);
    assert!(submissions(&g, true).is_empty());
    assert_eq!(texts(&submissions(&g, false)), ["hello"]);
}

#[test]
fn prompts_at_the_same_moment_are_separate_submissions_in_queue_order() {
    let f = world("0.9.0");
    let t0 = Instant::now();
    let kids: Vec<_> = (0..4)
        .map(|k| {
            let c = f
                .cmd(&["agent", "prompt", "brain", &format!("m{k}")])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // Queued in this order (each call takes the state lock in turn).
            std::thread::sleep(Duration::from_millis(60));
            c
        })
        .collect();
    let mut done = Vec::new();
    for c in kids {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        done.push(t0.elapsed());
    }
    let subs = submissions(&f, false);
    assert_eq!(texts(&subs), ["m0", "m1", "m2", "m3"]);
    assert!(subs.iter().all(|s| s["parts"] == 1), "{subs:?}");
    // Each waited behind the ones before: the last answered after four windows.
    assert!(done[3] >= Duration::from_millis(1200), "{done:?}");
    // Another pane's queue is its own.
    let t1 = Instant::now();
    f.ok(&["agent", "prompt", "other", "alone"]);
    assert!(t1.elapsed() >= Duration::from_millis(300));
}

#[test]
fn a_prompt_whose_caller_gave_up_is_still_typed() {
    let f = world("0.9.0");
    let mut first = f
        .cmd(&["agent", "prompt", "brain", "first"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut killed = f
        .cmd(&["agent", "prompt", "brain", "killed"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(first.wait().unwrap().success());
    f.ok(&["agent", "prompt", "brain", "after"]);
    assert_eq!(
        texts(&submissions(&f, false)),
        ["first", "killed", "after"],
        "the killed call's prompt kept its place in the queue"
    );
}

#[test]
fn a_pane_closed_first_fails_its_queued_prompts() {
    let f = world("0.9.0");
    let a = f
        .cmd(&["agent", "prompt", "brain", "typed"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let b = f
        .cmd(&["agent", "prompt", "brain", "queued"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    f.ok(&["pane", "close", "w1:p1"]);
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        let e: Value = serde_json::from_slice(&o.stderr).unwrap();
        assert_eq!(e["error"]["code"], "agent_prompt_failed", "{e}");
        assert_eq!(e["id"], "cli:agent:prompt");
    }
    assert!(submissions(&f, false).is_empty());
}

#[test]
fn checks_before_queueing_answer_at_once_with_nothing_queued() {
    let f = world("0.9.0");
    let t0 = Instant::now();
    assert_eq!(f.err(&["agent", "prompt", "stuck", "x"]).0, "agent_blocked");
    assert_eq!(
        f.err(&["agent", "prompt", "broken", "x"]).0,
        "agent_prompt_failed"
    );
    assert_eq!(
        f.err(&["agent", "prompt", "nobody", "x"]).0,
        "agent_not_found"
    );
    assert_eq!(
        f.err(&["agent", "prompt", "brain", ""]).0,
        "empty_agent_prompt"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "hang detector: refusals do not wait for an Enter"
    );
    assert!(submissions(&f, false).is_empty());
    let dump = f.ok_admin(&["fake", "dump"]);
    assert!(!dump.to_string().contains("queued"), "{dump}");
}
