//! The fault matrix of the Herdr CLI driver, through the C ABI, for peers, send, close and start.
//!
//! The Herdr binary is missing, not executable, killed by a signal, hanging, printing 64 MB,
//! printing invalid UTF-8, exiting 0 with an error JSON, or disappearing between two calls of one
//! operation. Faults are injected at every Herdr call an operation makes. Each case checks the
//! code, that the operation ends within its time limit, that the model-facing text is exactly
//! `CODE: fixed reason` with no raw id anywhere in the response, that no later step ran, and that
//! no child process is left behind.

use test_support::world as common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{abi, children, has_raw_id, serial, World};
use herdr_link::error::LinkError;
use serde_json::{json, Value};

/// The per-call limit these tests run under (`HERDR_LINK_TIMEOUT_MS` and
/// `HERDR_LINK_START_TIMEOUT_MS`).
const LIMIT: Duration = Duration::from_millis(400);
/// Slack on top of the limits: a hang detector, not a speed check (the hung children live for
/// 60 s, so anything under that was cut by the limit).
const SLACK: Duration = Duration::from_secs(30);
const SESSION: &str = "faults";
/// 64 MiB, eight times the driver's output cap.
const BIG: &str = "67108864";
/// A Herdr error message full of raw ids: none of it may reach the model.
const RAW_MESSAGE: &str = "pane w1:p2 (term_00ab12) in w1 tab w1:t1 failed";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Peers,
    Send,
    Close,
    Start,
}

const OPS: [Op; 4] = [Op::Peers, Op::Send, Op::Close, Op::Start];

/// One Herdr call of an operation: `area verb`, and which matching call it is (0-based).
type Step = (&'static str, &'static str, usize);

impl Op {
    /// The Herdr calls the operation makes when nothing fails, in order.
    fn steps(self) -> &'static [Step] {
        match self {
            Op::Peers => &[("agent", "get", 0), ("agent", "list", 0)],
            Op::Send => &[
                ("agent", "get", 0),
                ("agent", "get", 1),
                ("agent", "prompt", 0),
            ],
            Op::Close => &[
                ("agent", "get", 0),
                ("agent", "get", 1),
                ("pane", "close", 0),
            ],
            Op::Start => &[
                ("agent", "get", 0),
                ("tab", "create", 0),
                ("pane", "list", 0),
                ("agent", "start", 0),
            ],
        }
    }

    fn call(self, w: &World) -> Value {
        let a = abi();
        match self {
            Op::Peers => a.tool(SESSION, "herdr_link_peers", json!({})),
            Op::Send => a.tool(
                SESSION,
                "herdr_link_send",
                json!({"to": "worker-a", "message": "hello"}),
            ),
            Op::Close => a.tool(SESSION, "herdr_link_close", json!({"agent": "worker-a"})),
            Op::Start => a.tool_in(
                SESSION,
                "herdr_link_start",
                json!({"name": "newbie", "kind": "pi", "args": ["--model", "m"]}),
                &w.dir,
            ),
        }
    }

    /// The code for a Herdr rejection at `step` that no rule classifies: the identity layer's
    /// code for the self lookup, PEER_NOT_FOUND for the target lookup, else the operation's
    /// fallback.
    fn unclassified_code(self, step: usize) -> &'static str {
        match (self, step) {
            (Op::Close, 0) => "NOT_IN_HERDR",
            (_, 0) => "SELF_UNNAMED",
            (Op::Peers, _) => "NOT_IN_HERDR",
            (Op::Send | Op::Close, 1) => "PEER_NOT_FOUND",
            (Op::Send, _) => "SEND_FAILED",
            (Op::Close, _) => "CLOSE_FAILED",
            (Op::Start, _) => "START_FAILED",
        }
    }
}

fn world() -> World {
    let w = World::new(
        json!({"workspaces": [
            {"cwd": "/proj", "tabs": [{"panes": [
                {"cwd": "/proj", "agent": "pi", "name": "brain", "status": "idle"},
                {"cwd": "/proj", "agent": "claude", "name": "worker-a", "status": "working"}
            ]}]},
            {"cwd": "/other", "tabs": [{"panes": [
                {"cwd": "/other", "agent": "pi", "name": "stranger", "status": "idle"}
            ]}]}
        ]}),
        "w1:p1",
    );
    let ms = LIMIT.as_millis().to_string();
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", &ms);
    std::env::set_var("HERDR_LINK_START_TIMEOUT_MS", &ms);
    w
}

/// The exact model-facing text for `code`.
fn agent_text(code: &str) -> String {
    let e = match code {
        "NOT_IN_HERDR" => LinkError::NotInHerdr(String::new()),
        "SELF_UNNAMED" => LinkError::SelfUnnamed(String::new()),
        "PEER_NOT_FOUND" => LinkError::PeerNotFound(String::new()),
        "SEND_FAILED" => LinkError::SendFailed(String::new()),
        "CLOSE_FAILED" => LinkError::CloseFailed(String::new()),
        "START_FAILED" => LinkError::StartFailed(String::new()),
        other => panic!("unexpected code {other}"),
    };
    e.agent_text()
}

/// Runs `op` in a fresh world prepared by `setup`; `Err` describes every broken promise.
/// `fails_at` is the step that fails (later steps must not run; start's rollback may).
fn case(
    op: Op,
    label: &str,
    fails_at: usize,
    expect: &str,
    setup: impl FnOnce(&World),
) -> Result<Duration, String> {
    case_with_text(op, label, fails_at, expect, &agent_text(expect), setup)
}

/// [`case`] expecting the model-facing text `text` with the code `expect`.
fn case_with_text(
    op: Op,
    label: &str,
    fails_at: usize,
    expect: &str,
    text: &str,
    setup: impl FnOnce(&World),
) -> Result<Duration, String> {
    let w = world();
    setup(&w);
    let started = Instant::now();
    let r = op.call(&w);
    let took = started.elapsed();
    let left = children();
    let mut problems = Vec::new();
    let budget = LIMIT * op.steps().len() as u32 + SLACK;
    if took > budget {
        problems.push(format!("took {took:?} (budget {budget:?})"));
    }
    if r["ok"] != false {
        problems.push(format!("expected {expect}, got success: {r}"));
    } else {
        if r["error"]["code"] != expect {
            problems.push(format!("expected {expect}: {r}"));
        }
        if r["error"]["message"] != text {
            problems.push(format!("message is not the fixed text: {r}"));
        }
    }
    let text = r.to_string();
    if has_raw_id(&text) {
        problems.push(format!("raw id in model-facing output: {text}"));
    }
    if !left.is_empty() {
        problems.push(format!("children left behind: {left:?}"));
    }
    // No step after the failing one ran (start's rollback, `tab close`, is not a step).
    let calls = w.calls();
    let count = |area: &str, verb: &str| {
        calls
            .iter()
            .filter(|c| c.split(' ').take(2).eq([area, verb]))
            .count()
    };
    if let Some((area, verb, _)) = op.steps()[fails_at + 1..]
        .iter()
        .find(|(area, verb, nth)| count(area, verb) > *nth)
    {
        problems.push(format!("a later step (`{area} {verb}`) ran: {calls:?}"));
    }
    if op == Op::Send && !w.prompts().is_empty() {
        problems.push("a prompt was delivered".into());
    }
    if problems.is_empty() {
        Ok(took)
    } else {
        Err(format!("{op:?} / {label}: {}", problems.join("; ")))
    }
}

/// Injects `opts` as a fault on exactly the call `step` of the world.
fn fault_at(w: &World, (area, verb, nth): Step, opts: &[&str]) {
    let nth = nth.to_string();
    let mut all = vec!["--after", nth.as_str(), "--times", "1"];
    all.extend_from_slice(opts);
    w.fault(area, verb, &all);
}

/// Runs `fault` at every step of every operation; panics listing every failed case.
fn at_every_step(label: &str, opts: &[&str], expect: impl Fn(Op, usize) -> &'static str) {
    let mut failures = Vec::new();
    let mut times = Vec::new();
    for op in OPS {
        for (i, step) in op.steps().iter().enumerate() {
            let what = format!("{label} at `{} {}` #{}", step.0, step.1, step.2);
            match case(op, &what, i, expect(op, i), |w| fault_at(w, *step, opts)) {
                Ok(t) => times.push(t),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let slowest = times.iter().max().copied().unwrap_or_default();
    eprintln!("{label}: {} cases, slowest {slowest:?}", times.len());
}

fn transport(_: Op, _: usize) -> &'static str {
    "NOT_IN_HERDR"
}

#[test]
fn killed_by_a_signal() {
    let _g = serial();
    at_every_step("SIGKILL", &["--signal", "9"], transport);
    at_every_step(
        "SIGTERM after partial output",
        &["--stdout", "{\"result\":", "--signal", "15"],
        transport,
    );
}

#[test]
fn hanging_is_cut_at_the_time_limit() {
    let _g = serial();
    let mut failures = Vec::new();
    for op in OPS {
        for (i, step) in op.steps().iter().enumerate() {
            let what = format!("hang at `{} {}` #{}", step.0, step.1, step.2);
            // A prompt cut at the limit may still be typed (Herdr 0.9 queues it and types it
            // later): the send says so instead of calling Herdr unavailable.
            let (code, text) = if *step == ("agent", "prompt", 0) {
                let e = LinkError::SendUnconfirmed(String::new());
                (e.code(), e.agent_text())
            } else {
                ("NOT_IN_HERDR", agent_text("NOT_IN_HERDR"))
            };
            match case_with_text(op, &what, i, code, &text, |w| {
                fault_at(w, *step, &["--hang"])
            }) {
                // It did wait for the limit, and not much longer than one limit.
                Ok(t) if t < LIMIT => failures.push(format!(
                    "{op:?} / {what}: returned before the limit ({t:?})"
                )),
                Ok(t) if t > LIMIT + SLACK => failures.push(format!("{op:?} / {what}: {t:?}")),
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_hung_child_with_grandchildren_is_killed_as_a_group() {
    let _g = serial();
    let w = world();
    // A wrapper that leaves a background grandchild holding the pipes, then hangs.
    let script = w.dir.join("herdr-forks");
    std::fs::write(&script, "#!/bin/sh\nsleep 60 &\nsleep 60\n").unwrap();
    common::make_executable(&script);
    std::env::set_var("HERDR_BIN_PATH", &script);
    for op in OPS {
        let t = Instant::now();
        let r = op.call(&w);
        let took = t.elapsed();
        assert_eq!(r["error"]["code"], "NOT_IN_HERDR", "{op:?}: {r}");
        assert!(took < LIMIT + SLACK, "{op:?}: {took:?}");
        assert!(children().is_empty(), "{op:?}: {:?}", children());
    }
}

#[test]
fn a_child_that_closes_its_output_and_lingers_is_cut_at_the_limit() {
    // Regression for the driver's exit wait (a pidfd since this test was added): the pipes reach
    // EOF at once, so only the wait for the exit can enforce the limit.
    let _g = serial();
    let w = world();
    let script = w.dir.join("herdr-lingers");
    std::fs::write(
        &script,
        "#!/bin/sh\nexec >/dev/null 2>&1 </dev/null\nsleep 60\n",
    )
    .unwrap();
    common::make_executable(&script);
    std::env::set_var("HERDR_BIN_PATH", &script);
    for op in OPS {
        let t = Instant::now();
        let r = op.call(&w);
        let took = t.elapsed();
        assert_eq!(r["error"]["code"], "NOT_IN_HERDR", "{op:?}: {r}");
        assert!(took >= LIMIT && took < LIMIT + SLACK, "{op:?}: {took:?}");
        assert!(children().is_empty(), "{op:?}: {:?}", children());
    }
}

#[test]
fn printing_64_mb() {
    let _g = serial();
    at_every_step("64 MiB on stdout", &["--big-stdout", BIG], transport);
    at_every_step(
        "64 MiB on stdout, exit 1",
        &["--big-stdout", BIG, "--exit", "1"],
        transport,
    );
}

#[test]
fn printing_invalid_utf8() {
    let _g = serial();
    at_every_step(
        "invalid UTF-8, exit 0",
        &["--invalid-utf8", "--exit", "0"],
        transport,
    );
    at_every_step(
        "invalid UTF-8, exit 1",
        &["--invalid-utf8", "--exit", "1"],
        transport,
    );
}

#[test]
fn exit_0_with_an_error_json() {
    let _g = serial();
    let unclassified =
        json!({"error": {"code": "internal_failure", "message": RAW_MESSAGE}, "id": "cli:x:y"})
            .to_string();
    at_every_step(
        "exit 0, unclassified error JSON on stdout",
        &["--exit", "0", "--stdout", &unclassified],
        Op::unclassified_code,
    );
    at_every_step(
        "exit 0, `{}` on stdout and an error JSON on stderr",
        &["--exit", "0", "--stdout", "{}", "--stderr", &unclassified],
        Op::unclassified_code,
    );
    // Herdr's "no usable server" codes mean Herdr is unavailable, on any channel and exit status.
    for code in ["server_unavailable", "internal_error"] {
        let unavailable =
            json!({"error": {"code": code, "message": RAW_MESSAGE}, "id": "cli:x:y"}).to_string();
        at_every_step(
            &format!("exit 0, {code} on stdout"),
            &["--exit", "0", "--stdout", &unavailable],
            transport,
        );
    }
}

/// Makes the `HERDR_BIN_PATH` of a case in its world.
type BinPath = fn(&World) -> PathBuf;

#[test]
fn binary_missing_or_not_executable() {
    let _g = serial();
    let mut failures = Vec::new();
    for op in OPS {
        let cases: [(&str, BinPath); 4] = [
            ("missing", |w| w.dir.join("no-such-herdr")),
            ("missing directory", |_| {
                PathBuf::from("/nonexistent/dir/herdr")
            }),
            ("not executable", |w| {
                let p = w.dir.join("herdr-noexec");
                std::fs::copy(common::fake_bin(), &p).unwrap();
                std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o644))
                    .unwrap();
                p
            }),
            ("a directory", |w| w.dir.clone()),
        ];
        for (label, path) in cases {
            let r = case(op, label, 0, "NOT_IN_HERDR", |w| {
                std::env::set_var("HERDR_BIN_PATH", path(w));
            });
            if let Err(e) = r {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A `HERDR_BIN_PATH` wrapper around `real` that runs `vanish` (a shell command) during its
/// `k`-th run, after which the next run cannot work.
fn vanishing_wrapper(w: &World, real: &Path, k: usize, vanish: &str) -> PathBuf {
    let script = w.dir.join("herdr-vanishing");
    let text = format!(
        "#!/bin/sh\n\
         n=$(cat \"$0.count\" 2>/dev/null || echo 0)\n\
         n=$((n + 1))\n\
         echo \"$n\" > \"$0.count\"\n\
         if [ \"$n\" -ge {k} ]; then {vanish}; fi\n\
         exec \"{real}\" \"$@\"\n",
        real = real.display()
    );
    std::fs::write(&script, text).unwrap();
    common::make_executable(&script);
    script
}

#[test]
fn binary_disappears_between_two_calls_of_one_operation() {
    let _g = serial();
    let mut failures = Vec::new();
    for op in OPS {
        // The binary goes away during call k (which still completes); call k+1 cannot start.
        for k in 1..op.steps().len() {
            let r = case(
                op,
                &format!("deleted after call {k}"),
                k,
                "NOT_IN_HERDR",
                |w| {
                    let script = vanishing_wrapper(w, &common::fake_bin(), k, "rm -f \"$0\"");
                    std::env::set_var("HERDR_BIN_PATH", script);
                },
            );
            if let Err(e) = r {
                failures.push(e);
            }
            // The wrapper stays, but the real binary is renamed away: exec fails with 127.
            let r = case(
                op,
                &format!("renamed away after call {k}"),
                k,
                "NOT_IN_HERDR",
                |w| {
                    let real = w.dir.join("herdr-real");
                    std::fs::copy(common::fake_bin(), &real).unwrap();
                    common::make_executable(&real);
                    let vanish = format!("mv \"{0}\" \"{0}.gone\"", real.display());
                    let script = vanishing_wrapper(w, &real, k, &vanish);
                    std::env::set_var("HERDR_BIN_PATH", script);
                },
            );
            if let Err(e) = r {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_world_is_sound_without_faults() {
    // The matrix's baseline: every operation succeeds in the fault tests' world, so each fault
    // case above fails because of its fault.
    let _g = serial();
    for op in OPS {
        let w = world();
        let r = op.call(&w);
        assert_eq!(r["ok"], true, "{op:?}: {r}");
        let calls = w.calls();
        let expected: Vec<String> = op
            .steps()
            .iter()
            .map(|(area, verb, _)| format!("{area} {verb}"))
            .collect();
        let got: Vec<String> = calls
            .iter()
            .map(|c| c.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(got, expected, "{op:?}");
        assert!(children().is_empty());
    }
}
