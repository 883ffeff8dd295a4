//! What the model is told when no Herdr call was made: a send or close that could not get the
//! receiver's delivery turn says so in a text of its own (never "Herdr did not accept"), and a
//! send's input is checked in the order the model expects (the recipient before the message).

use test_support::world as common;

use std::os::unix::io::AsRawFd;

use common::{abi, serial, World};
use herdr_link::{internal as rundir, turn};
use serde_json::json;

/// Holds the delivery turn of pane `pane` of the world's Herdr from outside the library, as a
/// sender stuck in its delivery would; released when dropped.
fn hold_turn(pane: &str) -> std::fs::File {
    let base = rundir::base_dir();
    rundir::ensure_private_dir(&base).unwrap();
    rundir::ensure_private_dir(&base.join("turns")).unwrap();
    let key = turn::receiver_key(&std::env::var("HERDR_SOCKET_PATH").unwrap(), pane);
    let holder = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(turn::turn_path(&base, key))
        .unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
    holder
}

#[test]
fn a_missed_delivery_turn_has_its_own_text() {
    let _g = serial();
    let w = World::standard();
    std::env::set_var("HERDR_LINK_TURN_WAIT_MS", "600");
    let holder = hold_turn("w1:p2");
    let a = abi();
    let r = a.tool(
        "turns",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "hello"}),
    );
    assert_eq!(
        r["error"]["message"],
        "SEND_FAILED: deliveries to this agent are stuck behind an earlier one; nothing was sent",
        "{r}"
    );
    let r = a.tool("turns", "herdr_link_close", json!({"agent": "worker-a"}));
    assert_eq!(
        r["error"]["message"],
        "CLOSE_FAILED: a delivery to this agent is stuck; the agent was not closed",
        "{r}"
    );
    let calls = w.calls();
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("agent prompt") || c.starts_with("pane close")),
        "Herdr was not asked: {calls:?}"
    );
    // With the turn free, the same calls go through.
    drop(holder);
    let r = a.tool(
        "turns",
        "herdr_link_send",
        json!({"to": "worker-a", "message": "hello"}),
    );
    assert_eq!(r["result"]["status"], "sent", "{r}");
    std::env::remove_var("HERDR_LINK_TURN_WAIT_MS");
}

/// An invalid `to` is PEER_NOT_FOUND whatever the message is: too long, blank, or missing; a
/// `to` that is not a string is PEER_NOT_FOUND saying that the recipient is missing. No Herdr
/// call is made.
#[test]
fn the_recipient_is_checked_before_the_message() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let long = "x".repeat(herdr_link::limits::MAX_MESSAGE_CHARS + 1);
    for input in [
        json!({"to": "Not A Name", "message": long}),
        json!({"to": "Not A Name", "message": " "}),
        json!({"to": "Not A Name", "message": "a\u{0}b"}),
        json!({"to": "Not A Name"}),
        json!({"to": "Not A Name", "message": 7}),
    ] {
        let r = a.tool("order", "herdr_link_send", input.clone());
        assert_eq!(
            r["error"]["message"], "PEER_NOT_FOUND: target agent is not a live peer",
            "{input}"
        );
    }
    let r = a.tool(
        "order",
        "herdr_link_send",
        json!({"to": 7, "message": long}),
    );
    assert_eq!(
        r["error"]["message"],
        herdr_link::error::LinkError::SendToMissing(String::new()).agent_text()
    );
    // A valid recipient with a message that cannot travel is still SEND_FAILED.
    let r = a.tool(
        "order",
        "herdr_link_send",
        json!({"to": "worker-a", "message": long}),
    );
    assert_eq!(r["error"]["code"], "SEND_FAILED", "{r}");
    assert!(w.calls().is_empty(), "{:?}", w.calls());
}

/// `HERDR_LINK_TURN_MARGIN_MS` sets the margin after a 0.8 receiver's Enter: the next delivery
/// to it waits the window and that margin.
#[test]
fn the_margin_after_an_enter_is_a_setting() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("herdr-link-margin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    rundir::ensure_private_dir(&dir).unwrap();
    std::env::set_var("HERDR_LINK_TURN_MARGIN_MS", "700");
    let soon = || std::time::Instant::now() + std::time::Duration::from_secs(10);
    let t = turn::take_in_dir(&dir, 1, soon()).unwrap();
    t.delivered(turn::Delivery::Answered(std::time::Duration::from_millis(
        5,
    )));
    drop(t);
    let t = turn::take_in_dir(&dir, 1, soon()).unwrap();
    std::env::remove_var("HERDR_LINK_TURN_MARGIN_MS");
    let least = turn::SUBMIT_WINDOW + std::time::Duration::from_millis(700 - 5);
    assert!(t.waited() >= least, "{:?}", t.waited());
    drop(t);
    let _ = std::fs::remove_dir_all(&dir);
}
