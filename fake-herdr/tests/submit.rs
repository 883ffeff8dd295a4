//! Herdr's submit delay: `agent prompt` types at once and its Enter comes 300 ms later; a
//! prompt inside the window joins the same submission; the prompt log shows submissions.

mod common;
use common::Fake;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORLD: &str = r#"{"workspaces":[{"cwd":"/r","tabs":[{"panes":[
    {"agent":"pi","name":"brain"},{"agent":"claude","name":"other"}]}]}]}"#;

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
        .map(|p| p["text"].as_str().expect("text").to_string())
        .collect()
}

/// Two prompts typed well inside the window (retried when the machine was too slow to get
/// them there) arrive as one submission; the call itself answers before the Enter.
#[test]
fn two_prompts_inside_the_window_are_one_submission() {
    for attempt in 0..5 {
        let (f, _) = Fake::with_world("submit-glue", WORLD);
        let t0 = Instant::now();
        f.ok(&["agent", "prompt", "brain", "first "]);
        f.ok(&["agent", "prompt", "brain", "second"]);
        let typed_in = t0.elapsed();
        let early = submissions(&f, true);
        let checked_early = t0.elapsed() < Duration::from_millis(250);
        let all = submissions(&f, false);
        if typed_in >= Duration::from_millis(200) || !checked_early {
            eprintln!("attempt {attempt}: too slow ({typed_in:?}), again");
            continue;
        }
        assert!(
            early.is_empty(),
            "nothing is submitted before the Enter: {early:?}"
        );
        assert!(
            t0.elapsed() >= Duration::from_millis(300),
            "waited for the Enter"
        );
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(all[0]["text"], "first second");
        assert_eq!(all[0]["parts"], 2);
        assert_eq!(all[0]["target"], "brain");
        assert_eq!(all[0]["name"], "brain");
        assert_eq!(all[0]["pane_id"], "w1:p1");
        return;
    }
    panic!("the machine never typed two prompts within 200 ms");
}

/// A prompt after the previous Enter is its own submission.
#[test]
fn a_prompt_after_the_enter_is_its_own_submission() {
    let (f, _) = Fake::with_world("submit-apart", WORLD);
    f.ok(&["agent", "prompt", "brain", "one"]);
    assert_eq!(texts(&submissions(&f, false)), ["one"]);
    f.ok(&["agent", "prompt", "brain", "two"]);
    let all = submissions(&f, false);
    assert_eq!(texts(&all), ["one", "two"]);
    assert!(all.iter().all(|p| p["parts"] == 1), "{all:?}");
}

/// Prompts to different panes never join.
#[test]
fn different_panes_do_not_interact() {
    let (f, _) = Fake::with_world("submit-panes", WORLD);
    f.ok(&["agent", "prompt", "brain", "to brain"]);
    f.ok(&["agent", "prompt", "other", "to other"]);
    let all = submissions(&f, false);
    assert_eq!(texts(&all), ["to brain", "to other"]);
    assert!(all.iter().all(|p| p["parts"] == 1), "{all:?}");
}

/// Any command that loads the state after the Enter presses it; commands that do not save
/// (reads) neither lose nor repeat it.
#[test]
fn reads_after_the_enter_log_it_exactly_once() {
    let (f, _) = Fake::with_world("submit-reads", WORLD);
    f.ok(&["agent", "prompt", "brain", "once"]);
    std::thread::sleep(Duration::from_millis(350));
    f.ok(&["agent", "get", "brain"]);
    f.ok(&["agent", "list"]);
    f.ok_admin(&["fake", "dump"]);
    assert_eq!(texts(&submissions(&f, true)), ["once"]);
    assert_eq!(texts(&submissions(&f, false)), ["once"]);
    // Nothing pending is left in the state.
    let dump = f.ok_admin(&["fake", "dump"]);
    assert!(!dump.to_string().contains("enters_due_us"), "{dump}");
}

/// The pending input is visible in the state until its Enter; a closed pane loses it.
#[test]
fn a_closed_pane_loses_its_unsubmitted_input() {
    let (f, _) = Fake::with_world("submit-close", WORLD);
    f.ok(&["agent", "prompt", "brain", "lost"]);
    let dump = f.ok_admin(&["fake", "dump"]);
    assert!(dump.to_string().contains("\"lost\""), "{dump}");
    f.ok(&["pane", "close", "w1:p1"]);
    assert!(submissions(&f, false).is_empty());
}

/// A failed or faulted prompt types nothing and schedules no Enter.
#[test]
fn failed_prompts_type_nothing() {
    let (f, _) = Fake::with_world("submit-fail", WORLD);
    f.ok(&["fake", "agent", "brain", "--prompt-fails", "true"]);
    assert_eq!(
        f.err(&["agent", "prompt", "brain", "x"]).0,
        "agent_prompt_failed"
    );
    let dump = f.ok_admin(&["fake", "dump"]);
    assert!(!dump.to_string().contains("enters_due_us"), "{dump}");
    assert!(submissions(&f, true).is_empty());
}

/// Sixteen processes prompting one pane at once: every text arrives exactly once, inside
/// submissions that glue several prompts together.
#[test]
fn sixteen_concurrent_prompts_glue_but_lose_nothing() {
    let (f, _) = Fake::with_world("submit-conc", WORLD);
    let f = Arc::new(f);
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                f.ok(&["agent", "prompt", "brain", &format!("<m{i:02}>")]);
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    let all = submissions(&f, false);
    let parts: u64 = all.iter().map(|p| p["parts"].as_u64().unwrap()).sum();
    assert_eq!(parts, 16, "{all:?}");
    let joined = texts(&all).concat();
    for i in 0..16 {
        assert_eq!(joined.matches(&format!("<m{i:02}>")).count(), 1, "{joined}");
    }
    assert!(all.len() < 16, "16 prompts at once glue: {all:?}");
}

#[test]
fn prompts_usage() {
    let f = Fake::new("submit-usage");
    assert!(f.usage(&["fake", "prompts", "--later"]).contains("--now"));
    assert_eq!(submissions(&f, true), Vec::<Value>::new());
}
