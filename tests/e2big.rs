//! A spawn the kernel refuses as too long (`E2BIG`) is the operation's own failure, never
//! NOT_IN_HERDR. The process environment is filled until only ~48 KiB of the kernel's argv+env
//! budget is left, so Herdr's small calls still run but a large (in-limit) message or start
//! `args` cannot. A test binary of its own: the environment is process-wide.

use test_support::world as common;

use std::process::Command;

use common::{abi, World};
use herdr_link::limits::{MAX_MESSAGE_BYTES, MAX_START_ARGS_CHARS};
use serde_json::{json, Value};

/// Fills the environment so that about `left` bytes of the argv+env budget remain.
fn fill_environment(left: usize) {
    // SAFETY: sysconf has no preconditions.
    let arg_max = unsafe { libc::sysconf(libc::_SC_ARG_MAX) } as usize;
    let used: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + 8)
        .sum();
    let mut to_fill = arg_max.saturating_sub(used + left);
    let mut i = 0;
    while to_fill > 0 {
        // Each variable stays well below the 128 KiB limit of one string.
        let n = to_fill.min(100 * 1024).saturating_sub(32).max(1);
        std::env::set_var(format!("HERDR_LINK_E2BIG_FILL_{i}"), "f".repeat(n));
        to_fill = to_fill.saturating_sub(n + 32);
        i += 1;
    }
}

fn spawns(arg_len: usize) -> std::io::Result<()> {
    Command::new("/bin/true")
        .arg("a".repeat(arg_len))
        .status()
        .map(|_| ())
}

fn op_log(path: &std::path::Path) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= 2 || std::time::Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn argv_too_long_is_the_operations_own_failure() {
    let w = World::standard();
    let log = w.dir.join("op.log");
    std::env::set_var("HERDR_LINK_LOG", &log);
    fill_environment(48 * 1024);
    // The premise: small calls still run, 64 KiB of arguments do not.
    spawns(2048).expect("a small spawn still works");
    let e = spawns(64 * 1024).expect_err("a 64 KiB argument no longer fits");
    assert_eq!(e.raw_os_error(), Some(libc::E2BIG), "{e}");

    let a = abi();
    // A message within the limit, whose wrapper (~128 KB) no longer fits.
    let message = format!("m{}", "\u{1}".repeat((MAX_MESSAGE_BYTES - 1) / 6));
    let r = a.tool(
        "e2big",
        "herdr_link_send",
        json!({"to": "worker-a", "message": message}),
    );
    assert_eq!(r["error"]["code"], "SEND_FAILED", "{r}");
    // Herdr was never reached: the text says so, never that Herdr refused.
    assert_eq!(
        r["error"]["message"],
        herdr_link::error::LinkError::SendTooLongHere(String::new()).agent_text()
    );
    assert_eq!(w.calls(), ["agent get w1:p1", "agent get worker-a"]);
    assert!(w.prompts().is_empty());

    // Start arguments within the limit (64 KiB of 4-byte characters): the launch cannot be
    // spawned; the tab created for it is rolled back.
    w.clear_log();
    let r = a.tool_in(
        "e2big",
        "herdr_link_start",
        json!({"name": "big-args", "kind": "pi", "args": ["😀".repeat(MAX_START_ARGS_CHARS)]}),
        &w.dir,
    );
    assert_eq!(r["error"]["code"], "START_FAILED", "{r}");
    assert_eq!(
        r["error"]["message"],
        herdr_link::error::LinkError::StartTooLongHere(String::new()).agent_text()
    );
    let calls = w.calls();
    assert_eq!(calls.first().map(String::as_str), Some("agent get w1:p1"));
    assert!(
        calls.iter().any(|c| c.starts_with("tab create")),
        "{calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.starts_with("tab close")),
        "rolled back: {calls:?}"
    );
    assert!(
        !calls.iter().any(|c| c.starts_with("agent start")),
        "{calls:?}"
    );

    std::env::remove_var("HERDR_LINK_LOG");
    let entries = op_log(&log);
    let outcomes: Vec<&str> = entries
        .iter()
        .flat_map(|e| e["calls"].as_array().unwrap())
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "args-too-long").count(),
        2,
        "{outcomes:?}"
    );
}
