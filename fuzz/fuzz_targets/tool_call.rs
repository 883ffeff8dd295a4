//! The `hl_tool_call` and `hl_presentation` request parsers, routing and input validation.
//!
//! Nothing may spawn a real Herdr: an input starting with `!` runs with the environment gate open
//! and `HERDR_BIN_PATH` pointing at a path that does not exist (so validation, routing, activation
//! and the operator log run, and the first Herdr call fails fast); anything else runs with the
//! gate closed. Invariants: the answer is a well-formed response document whose error text is
//! `CODE: ...`, and a failed request never activates a session.
#![no_main]

use std::sync::Once;

use herdr_link::{session, tools};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn gate(open: bool) {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        std::env::set_var("HERDR_PANE_ID", "w1:p1");
        std::env::set_var("HERDR_BIN_PATH", "/nonexistent/herdr-link-fuzz/herdr");
        std::env::set_var("HERDR_LINK_LOG", "/dev/null");
        std::env::set_var("HERDR_LINK_TIMEOUT_MS", "1000");
    });
    if open {
        std::env::set_var("HERDR_ENV", "1");
    } else {
        std::env::remove_var("HERDR_ENV");
    }
}

fn check_response(v: &Value, open: bool) {
    let obj = v.as_object().expect("the response is an object");
    let ok = obj["ok"].as_bool().expect("ok is a bool");
    assert!(obj["active"].is_boolean() && obj["tools_changed"].is_boolean());
    if ok {
        assert!(open, "success with the gate closed: {v}");
        assert!(obj.contains_key("result"));
    } else {
        let code = obj["error"]["code"].as_str().expect("code");
        let message = obj["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("{code}: ")), "{v}");
        if !open {
            assert_eq!(obj["tools_changed"], false, "{v}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (open, rest) = match data.split_first() {
        Some((b'!', rest)) => (true, rest),
        _ => (false, data),
    };
    gate(open);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let response = tools::call_json(text);
    check_response(&response, open);
    let presentation = tools::presentation_json(text);
    assert!(presentation["tools"].is_array(), "{presentation}");
    // Sessions are host-owned: end the one this input named, so the registry stays small.
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        if let Some(s) = v.get("session").and_then(Value::as_str) {
            if response["ok"] == false && response["error"]["code"] == "INVALID_REQUEST" {
                assert!(!session::is_active(s), "an invalid request activated {s:?}");
            }
            session::end(s);
        }
    }
});
