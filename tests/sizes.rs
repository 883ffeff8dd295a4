//! The documented size limits through the C ABI (PROTOCOL.md, Sizes): a message or start `args`
//! over the limit is refused before any Herdr call; a message at the limit (128,000 bytes as the
//! envelope encodes it), in every class of character, is delivered whole as one submission; oversized requests and session keys are INVALID_REQUEST and
//! never stored; no error message repeats more than a short prefix of what it was given.

use test_support::world as common;

use common::{abi, serial, World};
use herdr_link::limits::{
    encoded_len_upto, MAX_MESSAGE_BYTES, MAX_MESSAGE_CHARS, MAX_REQUEST_BYTES,
    MAX_SESSION_KEY_BYTES, MAX_START_ARGS, MAX_START_ARGS_CHARS, MAX_VALUES,
};
use herdr_link::protocol::extract_envelope;
use serde_json::{json, Value};

fn code(r: &Value) -> &str {
    assert_eq!(r["ok"], false, "expected an error: {r}");
    r["error"]["code"].as_str().unwrap()
}

/// The operator log's entry for one call, with HERDR_LINK_LOG pointed at a fresh file of `w`
/// for the duration (the log is written in the background: wait for the line).
fn with_oplog<T>(w: &World, f: impl FnOnce() -> T) -> (T, Value) {
    let path = w.dir.join("op.log");
    let _ = std::fs::remove_file(&path);
    std::env::set_var("HERDR_LINK_LOG", &path);
    let out = f();
    std::env::remove_var("HERDR_LINK_LOG");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(line) = text.lines().next() {
            return (out, serde_json::from_str(line).unwrap());
        }
        assert!(std::time::Instant::now() < deadline, "no operator log line");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn an_oversized_message_is_refused_before_any_herdr_call() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let cases = [
        "x".repeat(200 * 1024),
        "😀".repeat(MAX_MESSAGE_CHARS + 1),
        "a".repeat(MAX_MESSAGE_CHARS + 1),
        // Within maxLength, over the byte rule.
        "中".repeat(MAX_MESSAGE_BYTES / 3 + 1),
        "\u{1}".repeat(MAX_MESSAGE_BYTES / 6 + 1),
        // DEL, the C1 controls and U+2028 travel escaped: 6 bytes each.
        "\u{7f}".repeat(MAX_MESSAGE_BYTES / 6 + 1),
        "\u{9b}".repeat(MAX_MESSAGE_BYTES / 6 + 1),
        "\u{2028}".repeat(MAX_MESSAGE_BYTES / 6 + 1),
        format!("{}\"", "a".repeat(MAX_MESSAGE_BYTES - 1)),
    ];
    for message in cases {
        w.clear_log();
        let (r, log) = with_oplog(&w, || {
            a.tool(
                "big",
                "herdr_link_send",
                json!({"to": "worker-a", "message": message}),
            )
        });
        assert_eq!(code(&r), "SEND_FAILED", "{r}");
        // It says so, with the limit, and that the message may be split.
        assert_eq!(
            r["error"]["message"],
            herdr_link::error::LinkError::SendMessageTooLong(String::new()).agent_text()
        );
        // The answer stays short (the first call activates the session, so it may carry the
        // Contract, which is not an echo of the input).
        let mut answer = r.clone();
        answer.as_object_mut().unwrap().remove("contract");
        assert!(
            answer.to_string().len() < 500,
            "the answer stays short: {answer}"
        );
        assert!(w.argv_log().is_empty(), "no Herdr call: {:?}", w.calls());
        let detail = log["detail"].as_str().unwrap().to_string();
        assert!(
            detail.contains(&MAX_MESSAGE_BYTES.to_string()),
            "the operator log names the limit: {detail}"
        );
    }
    // The same through the gateway.
    w.clear_log();
    let r = a.tool(
        "big",
        "herdr_link",
        json!({"action": "send", "arguments": {"to": "worker-a", "message": "x".repeat(200 * 1024)}}),
    );
    assert_eq!(code(&r), "SEND_FAILED");
    assert!(w.argv_log().is_empty());
    assert!(w.prompts().is_empty());
}

/// `len` encoded bytes of message: one letter, then `unit` as often as fits, topped up with `x`.
fn message_of(unit: &str, len: usize) -> String {
    let per = encoded_len_upto(unit, usize::MAX);
    let n = (len - 1) / per;
    let m = format!("m{}{}", "x".repeat(len - 1 - n * per), unit.repeat(n));
    assert_eq!(encoded_len_upto(&m, usize::MAX), len);
    m
}

#[test]
fn a_message_at_the_limit_is_delivered_whole_in_every_class_of_character() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let mut sent = Vec::new();
    // 6-byte escapes (control characters), 4-byte characters, CJK (3), 2-byte escapes, ASCII;
    // then the sizes people write: 60 KB of plain text, ~30 KB of Chinese.
    for unit in [
        "\u{1}", "\u{7f}", "\u{85}", "\u{2029}", "😀", "中", "\"", "\n", "a",
    ] {
        sent.push(message_of(unit, MAX_MESSAGE_BYTES));
    }
    sent.push(message_of("a", 60 * 1024));
    sent.push("中文消息".repeat(30 * 1024 / 12));
    for message in &sent {
        let r = a.tool(
            "edge",
            "herdr_link_send",
            json!({"to": "worker-a", "message": message}),
        );
        assert_eq!(r["ok"], true, "{}: {r}", message.len());
    }
    let prompts = w.prompts();
    assert_eq!(prompts.len(), sent.len(), "one submission per message");
    for (p, message) in prompts.iter().zip(&sent) {
        assert_eq!(p["parts"], 1);
        let text = p["text"].as_str().unwrap();
        assert!(text.len() < 128 * 1024);
        assert_eq!(
            &extract_envelope(text).unwrap().message,
            message,
            "byte-exact"
        );
    }
}

#[test]
fn oversized_start_args_are_refused_before_any_herdr_call() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let too_long = vec!["😀".repeat(MAX_START_ARGS_CHARS + 1)];
    let split = vec!["x".repeat(MAX_START_ARGS_CHARS / 2 + 1); 2];
    let too_many = vec![String::new(); MAX_START_ARGS + 1];
    for args in [too_long, split, too_many] {
        w.clear_log();
        let (r, log) = with_oplog(&w, || {
            a.tool_in(
                "big-start",
                "herdr_link_start",
                json!({"name": "helper", "kind": "pi", "args": args}),
                &w.dir,
            )
        });
        assert_eq!(code(&r), "START_INPUT_INVALID", "{r}");
        assert!(w.argv_log().is_empty(), "no Herdr call: {:?}", w.calls());
        let detail = log["detail"].as_str().unwrap().to_string();
        assert!(detail.contains("limit of"), "{detail}");
    }
    // At the limit it starts.
    let r = a.tool_in(
        "big-start",
        "herdr_link_start",
        json!({"name": "helper", "kind": "pi", "args": ["😀".repeat(MAX_START_ARGS_CHARS)]}),
        &w.dir,
    );
    assert_eq!(r["ok"], true, "{r}");
}

#[test]
fn oversized_requests_are_invalid_before_parsing() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    // Over the byte limit: refused whatever it holds (even broken JSON).
    let big = format!(
        r#"{{"session":"s","tool":"herdr_link","input":{{"action":"{}"}}}}"#,
        "x".repeat(MAX_REQUEST_BYTES)
    );
    let r = a.call_text(&big);
    assert_eq!(code(&r), "INVALID_REQUEST");
    assert!(r.to_string().len() < 300, "{}", r.to_string().len());
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&MAX_REQUEST_BYTES.to_string()));
    let r = a.call_text(&format!("[{}", "[".repeat(MAX_REQUEST_BYTES)));
    assert_eq!(code(&r), "INVALID_REQUEST");
    // Too many values in a field the request uses.
    let many = format!(
        r#"{{"session":"s","tool":"herdr_link_start","input":{{"args":[{}0]}}}}"#,
        "0,".repeat(MAX_VALUES)
    );
    assert!(many.len() < MAX_REQUEST_BYTES);
    let r = a.call_text(&many);
    assert_eq!(code(&r), "INVALID_REQUEST", "{r}");
    // The same values in an unknown input field are skipped: start still names the field.
    let skipped = format!(
        r#"{{"session":"s","tool":"herdr_link_start","input":{{"name":"x","kind":"pi","args":[],"junk":[{}0]}}}}"#,
        "0,".repeat(MAX_VALUES)
    );
    w.clear_log();
    let r = a.call_text(&skipped);
    assert_eq!(code(&r), "START_INPUT_INVALID", "{r}");
    assert!(w.argv_log().is_empty());
    // ...and a send ignores it, exactly as before.
    let ignored = format!(
        r#"{{"session":"s","tool":"herdr_link_send","input":{{"to":"worker-a","message":"hi","junk":{{"deep":[{}0]}}}}}}"#,
        "0,".repeat(MAX_VALUES)
    );
    let r = a.call_text(&ignored);
    assert_eq!(r["ok"], true, "{r}");
}

#[test]
fn error_messages_repeat_only_a_short_prefix() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let long = "y".repeat(MAX_REQUEST_BYTES - 200);
    for (tool, input) in [
        ("herdr_link", json!({"action": long})),
        (long.as_str(), json!({})),
        ("herdr_link", json!({"action": [long.clone()]})),
    ] {
        let r = a.tool("echo", tool, input);
        assert_eq!(code(&r), "INVALID_REQUEST", "{}", &r.to_string()[..200]);
        let m = r["error"]["message"].as_str().unwrap();
        assert!(m.len() < 400, "{} bytes echoed", m.len());
    }
    let p = a.take(unsafe {
        let c = std::ffi::CString::new(json!({"session": "s", "style": long.clone()}).to_string())
            .unwrap();
        (a.presentation)(c.as_ptr())
    });
    assert!(p.to_string().len() < 400);
}

#[test]
fn long_session_keys_are_refused_and_never_stored() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let at_limit = "k".repeat(MAX_SESSION_KEY_BYTES);
    let over = "k".repeat(MAX_SESSION_KEY_BYTES + 1);
    // hl_session_start ignores it: no registration, no bootstrap (which would call Herdr).
    w.clear_log();
    a.start(&over);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(w.argv_log().is_empty(), "{:?}", w.calls());
    // hl_tool_call refuses it before activation.
    let r = a.tool(&over, "herdr_link", json!({}));
    assert_eq!(code(&r), "INVALID_REQUEST");
    assert!(r.to_string().len() < 300);
    assert!(!a.active(&over));
    let r = a.tool(&"k".repeat(50 * 1024), "herdr_link", json!({}));
    assert_eq!(code(&r), "INVALID_REQUEST");
    // hl_presentation refuses it too.
    let c = std::ffi::CString::new(json!({"session": over, "style": "mcp"}).to_string()).unwrap();
    let p = a.take(unsafe { (a.presentation)(c.as_ptr()) });
    assert_eq!(p["error"]["code"], "INVALID_REQUEST");
    // At the limit it works.
    let r = a.tool(&at_limit, "herdr_link", json!({}));
    assert_eq!(r["ok"], true, "{r}");
    assert!(a.active(&at_limit));
    a.end(&at_limit);
}
