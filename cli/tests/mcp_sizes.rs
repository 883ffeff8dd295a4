//! The size limits on the MCP server path (PROTOCOL.md §8.1): a line over 1 MiB is discarded
//! and answered `-32600`; a line under it that holds more than 65,536 JSON values is refused
//! `-32600` with its id, without building it; an over-long message is SEND_FAILED with no
//! Herdr call; the server's peak RSS stays within 64 MiB of its baseline; it keeps serving.

use test_support::mcp as harness;

use std::time::Duration;

use harness::{tool_text, Server, World, WORLD};
use herdr_link::limits::{MAX_MESSAGE_CHARS, MAX_REQUEST_BYTES, MAX_VALUES};
use serde_json::json;

/// The `herdr-link` server among this process's children, and a field of its status (KiB).
fn server_kib(field: &str) -> u64 {
    let me = std::process::id();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let get = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        if get("PPid:").as_deref() == Some(&me.to_string())
            && get("Name:").as_deref() == Some("herdr-link")
        {
            return get(field)
                .and_then(|v| v.trim_end_matches("kB").trim().parse().ok())
                .unwrap_or_else(|| panic!("{field}"));
        }
    }
    panic!("no herdr-link child");
}

#[test]
fn oversized_mcp_requests_are_refused_with_bounded_memory() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    assert_eq!(s.ask(1, "ping", json!({}))["result"], json!({}));
    let baseline = server_kib("VmHWM:");

    // 50 MB of integers on one line: over 1 MiB, discarded unread.
    let mut line = String::with_capacity(50_000_100);
    line.push_str(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link_start","arguments":{"name":"x","kind":"pi","args":["#);
    line.push_str(&"0,".repeat(25_000_000));
    line.push_str("0]}}}");
    s.raw(&line);
    drop(line);
    let e = s.next(Duration::from_secs(60)).expect("an answer");
    assert_eq!(e["error"]["code"], -32600, "{e}");

    // Under 1 MiB but more values than a request may build: refused with its id.
    let n = (MAX_REQUEST_BYTES - 300) / 2;
    assert!(n > MAX_VALUES);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"herdr_link_start","arguments":{{"name":"x","kind":"pi","args":[{}0]}}}}}}"#,
        "0,".repeat(n)
    );
    assert!(line.len() < MAX_REQUEST_BYTES);
    s.raw(&line);
    let e = s.until_id(&json!(3)).pop().unwrap();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(e.to_string().len() < 400);

    // An over-long message: SEND_FAILED, no Herdr call.
    let before = w.argv().len();
    let answer = s
        .call(
            4,
            "herdr_link_send",
            json!({"to": "worker", "message": "x".repeat(MAX_MESSAGE_CHARS + 1)}),
        )
        .pop()
        .unwrap();
    let (text, is_error) = tool_text(&answer);
    assert!(is_error && text.starts_with("SEND_FAILED"), "{text}");
    assert_eq!(w.argv().len(), before, "no Herdr call");

    let peak = server_kib("VmHWM:");
    assert!(
        peak < baseline + 64 * 1024,
        "server peak RSS {baseline} KiB -> {peak} KiB"
    );
    eprintln!("herdr-link mcp peak RSS: {baseline} KiB -> {peak} KiB");
    assert_eq!(s.ask(5, "ping", json!({}))["result"], json!({}));
    let (status, _) = s.eof();
    assert_eq!(status.code(), Some(0));
}
