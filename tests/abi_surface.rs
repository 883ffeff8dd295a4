//! The C ABI surface: presentation per state and style, gateway activation and `tools_changed`,
//! malformed requests, NULL and invalid UTF-8 on every function, the version, and the Contract's
//! single source.

use test_support::world as common;

use std::ffi::{c_char, CStr};

use common::{abi, serial, World};
use serde_json::{json, Value};

/// SHA-256 of the authoritative Contract: the 731-byte text block of §3 of the Chinese
/// specification (UTF-8, lines joined by `\n`, no trailing newline). Pinning the digest keeps the
/// byte-for-byte check without reading anything outside the repository.
const AUTHORITATIVE_CONTRACT_SHA256: &str =
    "dced255ab7e20d2f17911991ff44d537a9cb9d4e8977eb8496a46cde29133bf7";
const AUTHORITATIVE_CONTRACT_LEN: usize = 731;

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn contract_is_the_authoritative_contract_byte_for_byte() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/PROTOCOL.md")).unwrap();
    let ours = herdr_link::protocol::contract_block(&doc).expect("PROTOCOL.md has a §3 text block");
    assert_eq!(ours.len(), AUTHORITATIVE_CONTRACT_LEN);
    assert_eq!(sha256_hex(ours.as_bytes()), AUTHORITATIVE_CONTRACT_SHA256);
    let compiled = herdr_link::protocol::CONTRACT;
    assert_eq!(compiled.len(), AUTHORITATIVE_CONTRACT_LEN);
    assert_eq!(
        sha256_hex(compiled.as_bytes()),
        AUTHORITATIVE_CONTRACT_SHA256
    );
}

#[test]
fn contract_digest_check_catches_a_one_byte_change() {
    let mut changed = herdr_link::protocol::CONTRACT.as_bytes().to_vec();
    let last = changed.len() - 1;
    changed[last] ^= 1;
    assert_ne!(sha256_hex(&changed), AUTHORITATIVE_CONTRACT_SHA256);
}

#[test]
fn protocol_md_close_rule_follows_the_specification() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/PROTOCOL.md")).unwrap();
    let close = &text[text.find("### 4.5").unwrap()..text.find("### 4.6").unwrap()];
    // §4.5 rule 1 of the specification, restated.
    assert!(
        close.contains("  1. if the caller needs to send a final message, it must first wait for `herdr_link_send` to return `status=sent`, and only then call `herdr_link_close` in a later tool step;"),
        "{close}"
    );
    // The model-facing close guidance says it in other words, never "final message"
    // (presentation::tests::descriptions_carry_the_rules).
}

#[test]
fn version_is_the_crate_version() {
    // SAFETY: hl_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr((abi().version)()) }
        .to_str()
        .unwrap();
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
}

#[test]
fn dormant_then_active_surface() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let s = "surface-1";
    a.start(s);
    assert!(!a.active(s));
    let p = a.present(s, "deferred");
    let names: Vec<_> = p["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["herdr_link"]);
    assert!(p["contract"].is_null());
    assert_eq!(a.present(s, "mcp")["tools"].as_array().unwrap().len(), 1);
    assert!(a.present(s, "gateway")["contract"].is_null());

    let r = a.tool(s, "herdr_link", json!({}));
    assert_eq!(r["ok"], true);
    assert_eq!(
        r["result"],
        json!({"status":"active","capabilities":["start","peers","send","close"]})
    );
    assert_eq!(r["active"], true);
    assert_eq!(r["tools_changed"], true);
    let again = a.tool(s, "herdr_link", json!({}));
    assert_eq!(again["result"], r["result"]);
    assert_eq!(
        again["tools_changed"], false,
        "tools_changed is true exactly once"
    );
    assert!(a.active(s));

    let p = a.present(s, "deferred");
    let names: Vec<_> = p["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "herdr_link",
            "herdr_link_start",
            "herdr_link_peers",
            "herdr_link_send",
            "herdr_link_close"
        ]
    );
    assert_eq!(
        p["contract"].as_str().unwrap(),
        herdr_link::protocol::CONTRACT
    );
    for t in p["tools"].as_array().unwrap() {
        assert_eq!(t["input_schema"]["type"], "object");
        assert!(!t["description"].as_str().unwrap().is_empty());
    }
    let g = a.present(s, "gateway");
    assert_eq!(g["tools"].as_array().unwrap().len(), 1);
    let gc = g["contract"].as_str().unwrap();
    assert!(gc.starts_with(herdr_link::protocol::CONTRACT));
    assert!(gc.contains("action"));

    // A new session_start with the same key makes it dormant again; end forgets it.
    a.start(s);
    assert!(!a.active(s));
    assert!(a.present(s, "deferred")["contract"].is_null());
    a.tool(s, "herdr_link", json!({"action": "activate"}));
    assert!(a.active(s));
    a.end(s);
    assert!(!a.active(s));
}

/// PROTOCOL.md's §3 Contract, read from the file (not from the library).
fn protocol_md_contract() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/PROTOCOL.md")).unwrap();
    herdr_link::protocol::contract_block(&text).unwrap()
}

/// The activating call's response carries the Contract (the style's, byte-exact), so a host
/// shows it with that result: the model's very next step sees the rules, whatever the host does
/// with its system prompt. Every later activation call carries it again; no other call does.
#[test]
fn the_activation_result_carries_the_contract() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let contract = protocol_md_contract();
    let call = |session: &str, style: &Value, tool: &str, input: Value| {
        a.call_text(
            &json!({"session": session, "tool": tool, "input": input, "style": style}).to_string(),
        )
    };
    for style in [
        json!("deferred"),
        json!("gateway"),
        json!("mcp"),
        json!(null),
    ] {
        let s = format!("contract-{style}");
        a.start(&s);
        let r = call(&s, &style, "herdr_link", json!({}));
        assert_eq!(r["ok"], true, "{style}: {r}");
        assert_eq!(r["tools_changed"], true);
        let carried = r["contract"]
            .as_str()
            .unwrap_or_else(|| panic!("{style}: {r}"));
        assert!(carried.starts_with(&contract), "{style}: {carried}");
        match style.as_str() {
            // The style's own Contract: what hl_presentation gives the active session.
            Some(name) => assert_eq!(carried, a.present(&s, name)["contract"], "{style}"),
            // A host that states no style gets the bare Contract.
            None => assert_eq!(carried, contract),
        }
        if style == "deferred" {
            assert_eq!(carried, contract, "Pi gets the Contract byte for byte");
        }
        // Activating again shows it again; any other call does not carry it.
        let again = call(&s, &style, "herdr_link", json!({"action": "activate"}));
        assert_eq!(again["tools_changed"], false);
        assert_eq!(again["contract"], r["contract"], "{style}");
        let peers = call(&s, &style, "herdr_link_peers", json!({}));
        assert_eq!(peers["ok"], true, "{peers}");
        assert!(peers.get("contract").is_none(), "{style}: {peers}");
        let failed = call(
            &s,
            &style,
            "herdr_link_send",
            json!({"to": "ghost", "message": "x"}),
        );
        assert_eq!(failed["ok"], false);
        assert!(failed.get("contract").is_none(), "{style}: {failed}");
    }
    // A direct Tier 1 call that activates is the activation: it carries the Contract, success
    // or Link error.
    let r = a.tool("contract-direct-ok", "herdr_link_peers", json!({}));
    assert_eq!(
        (r["ok"].clone(), r["contract"].as_str()),
        (json!(true), Some(contract.as_str()))
    );
    let r = a.tool(
        "contract-direct-err",
        "herdr_link_send",
        json!({"to": "ghost", "message": "x"}),
    );
    assert_eq!(r["error"]["code"], "PEER_NOT_FOUND");
    assert_eq!(r["contract"].as_str(), Some(contract.as_str()));
    // Nothing while dormant or on a refused request.
    let bad = a.tool("contract-bad", "herdr_link", json!({"action": "fly"}));
    assert!(bad.get("contract").is_none(), "{bad}");
    assert!(!a.active("contract-bad"));
}

/// `hl_bash_guard_in_style`: the same verdicts, and a block reason in the host's own terms.
#[test]
fn the_guard_reason_names_what_the_style_has() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let s = "guard-style";
    let wait = "herdr agent wait peer";
    let prompt = "herdr agent prompt peer hi --wait";
    a.start(s);
    for style in [
        Some("deferred"),
        Some("gateway"),
        Some("mcp"),
        None,
        Some("vim"),
    ] {
        assert_eq!(a.guard_in_style(s, prompt, style), (0, None), "dormant");
    }
    a.tool(s, "herdr_link", json!({}));
    let reason = |style| {
        let (v, r) = a.guard_in_style(s, prompt, style);
        assert_eq!(v, 1, "{style:?}");
        r.unwrap()
    };
    assert!(reason(Some("deferred")).contains("with the herdr_link_send tool"));
    let gateway = reason(Some("gateway"));
    assert!(!gateway.contains("herdr_link_send"), "{gateway}");
    assert!(
        gateway.contains("herdr_link tool with action \"send\""),
        "{gateway}"
    );
    let either = a.guard(s, prompt).1.unwrap();
    assert!(either.contains("herdr_link_send") && either.contains("action \"send\""));
    for style in [Some("mcp"), None, Some("vim"), Some("")] {
        assert_eq!(
            reason(style),
            either,
            "{style:?}: the words of hl_bash_guard"
        );
    }
    for style in [Some("deferred"), Some("gateway"), None] {
        assert_eq!(
            a.guard_in_style(s, wait, style),
            a.guard(s, wait),
            "{style:?}"
        );
        assert_eq!(a.guard_in_style(s, "ls", style), (0, None));
    }
    // NULL arguments are ordinary input.
    let mut out: *mut std::ffi::c_char = std::ptr::null_mut();
    // SAFETY: NULL strings are allowed; `out` is writable.
    let v = unsafe {
        (a.bash_guard_in_style.unwrap())(
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
            &mut out,
        )
    };
    assert_eq!((v, out.is_null()), (0, true));
}

#[test]
fn catalog_view_lists_everything_while_dormant() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let c =
        std::ffi::CString::new(r#"{"session":"cat","style":"deferred","view":"catalog"}"#).unwrap();
    // SAFETY: valid C string.
    let p = a.take(unsafe { (a.presentation)(c.as_ptr()) });
    assert_eq!(p["tools"].as_array().unwrap().len(), 5);
    assert!(
        p["contract"].is_null(),
        "catalog does not reveal the Contract while dormant"
    );
}

#[test]
fn direct_tier1_call_activates_first() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let r = a.tool("direct-1", "herdr_link_peers", json!({}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["tools_changed"], true);
    assert_eq!(r["active"], true);
    // Even a failing Tier 1 call activates deterministically.
    let r = a.tool(
        "direct-2",
        "herdr_link_send",
        json!({"to": "ghost", "message": "x"}),
    );
    assert_eq!(r["ok"], false);
    assert_eq!(r["error"]["code"], "PEER_NOT_FOUND");
    assert_eq!(r["tools_changed"], true);
    assert!(a.active("direct-2"));
}

#[test]
fn malformed_requests_are_invalid_request() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let cases = [
        ("not json", "not JSON"),
        ("[1,2]", "object"),
        (r#"{"tool":"herdr_link"}"#, "session"),
        (r#"{"session":"","tool":"herdr_link"}"#, "session"),
        (r#"{"session":"m","tool":7}"#, "tool"),
        (
            r#"{"session":"m","tool":"herdr_link_wait","input":{}}"#,
            "unknown tool",
        ),
        (r#"{"session":"m","tool":"herdr_link","input":[]}"#, "input"),
        (
            r#"{"session":"m","tool":"herdr_link","input":{"action":"fly"}}"#,
            "unknown gateway action",
        ),
        (
            r#"{"session":"m","tool":"herdr_link","input":{"action":null}}"#,
            "string",
        ),
        (
            r#"{"session":"m","tool":"herdr_link","input":{"action":"send","arguments":"x"}}"#,
            "arguments",
        ),
        (
            r#"{"session":"m","tool":"herdr_link","context_dir":5}"#,
            "context_dir",
        ),
    ];
    for (req, needle) in cases {
        let r = a.call_text(req);
        assert_eq!(r["ok"], false, "{req}");
        assert_eq!(r["error"]["code"], "INVALID_REQUEST", "{req}");
        let m = r["error"]["message"].as_str().unwrap();
        assert!(m.starts_with("INVALID_REQUEST: "), "{m}");
        assert!(m.contains(needle), "{req}: {m}");
        assert_eq!(r["tools_changed"], false);
    }
    assert!(!a.active("m"), "a malformed request never activates");
    assert!(
        w.calls().is_empty(),
        "nothing reached Herdr: {:?}",
        w.calls()
    );
}

#[test]
fn null_and_invalid_utf8_everywhere() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let bad: &[u8] = b"\xff\xfe{\0";
    let bad = bad.as_ptr().cast::<c_char>();
    let null = std::ptr::null::<c_char>();
    // SAFETY: NULL and a NUL-terminated invalid-UTF-8 buffer are exactly the cases under test.
    unsafe {
        (a.session_start)(null);
        (a.session_start)(bad);
        (a.session_end)(null);
        (a.session_end)(bad);
        assert_eq!((a.is_active)(null), 0);
        assert_eq!((a.is_active)(bad), 0);
        for p in [null, bad] {
            let r = a.take((a.tool_call)(p));
            assert_eq!(r["ok"], false);
            assert_eq!(r["error"]["code"], "INVALID_REQUEST");
            let r = a.take((a.presentation)(p));
            assert_eq!(r["error"]["code"], "INVALID_REQUEST");
            assert_eq!(r["tools"], json!([]));
        }
        let mut reason: *mut c_char = 0x1 as *mut c_char;
        assert_eq!((a.bash_guard)(null, null, &mut reason), 0);
        assert!(reason.is_null(), "reason_out is cleared on allow");
        assert_eq!((a.bash_guard)(bad, bad, std::ptr::null_mut()), 0);
        (a.free)(std::ptr::null_mut());
    }
    // An active session with a NULL command or reason_out is still safe.
    a.tool("nulls", "herdr_link", json!({}));
    let s = std::ffi::CString::new("nulls").unwrap();
    let cmd = std::ffi::CString::new("herdr agent wait x").unwrap();
    // SAFETY: valid strings; NULL out pointer allowed.
    unsafe {
        assert_eq!((a.bash_guard)(s.as_ptr(), null, std::ptr::null_mut()), 0);
        assert_eq!(
            (a.bash_guard)(s.as_ptr(), cmd.as_ptr(), std::ptr::null_mut()),
            2
        );
        let mut bad_cmd = b"herdr agent wait \xff\0".to_vec();
        assert_eq!(
            (a.bash_guard)(
                s.as_ptr(),
                bad_cmd.as_mut_ptr().cast(),
                std::ptr::null_mut()
            ),
            2
        );
    }
}

#[test]
fn guard_only_in_active_sessions() {
    let _g = serial();
    let _w = World::standard();
    let a = abi();
    let s = "guard-1";
    a.start(s);
    let cmds = [
        "herdr agent wait peer --timeout 600000",
        "herdr agent prompt peer hello --wait",
        "ls -la",
    ];
    for c in cmds {
        assert_eq!(a.guard(s, c), (0, None), "dormant: {c}");
    }
    a.tool(s, "herdr_link", json!({}));
    let (v, reason) = a.guard(s, cmds[0]);
    assert_eq!(v, 2);
    let reason = reason.unwrap();
    assert!(!common::has_raw_id(&reason));
    let (v, reason) = a.guard(s, cmds[1]);
    assert_eq!(v, 1);
    assert!(reason.unwrap().contains("herdr_link_send"));
    assert_eq!(a.guard(s, cmds[2]), (0, None));
    assert_eq!(a.guard(s, "herdr agent prompt peer hello"), (0, None));
    a.start(s);
    assert_eq!(
        a.guard(s, cmds[0]),
        (0, None),
        "a new session_start disengages the guard"
    );
}

/// docs/c-abi.md "Which code a missing or malformed field gives": each row, through the C ABI, with no
/// message delivered and nothing started or closed.
#[test]
fn input_field_errors_match_the_readme_table() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let s = "surface-input-codes";
    a.start(s);
    let cases = [
        (
            "herdr_link_send",
            json!({"message": "hi"}),
            "PEER_NOT_FOUND",
        ),
        (
            "herdr_link_send",
            json!({"to": 5, "message": "hi"}),
            "PEER_NOT_FOUND",
        ),
        (
            "herdr_link_send",
            json!({"to": "Bad Name!", "message": "hi"}),
            "PEER_NOT_FOUND",
        ),
        ("herdr_link_send", json!({"to": "worker-a"}), "SEND_FAILED"),
        (
            "herdr_link_send",
            json!({"to": "worker-a", "message": 3}),
            "SEND_FAILED",
        ),
        (
            "herdr_link_send",
            json!({"to": "worker-a", "message": ""}),
            "SEND_FAILED",
        ),
        ("herdr_link_close", json!({}), "PEER_NOT_FOUND"),
        ("herdr_link_close", json!({"agent": 1}), "PEER_NOT_FOUND"),
        ("herdr_link_start", json!({}), "START_INPUT_INVALID"),
        (
            "herdr_link_start",
            json!({"name": "w2", "kind": 3}),
            "START_INPUT_INVALID",
        ),
        ("herdr_link", json!({"action": "fly"}), "INVALID_REQUEST"),
        ("herdr_link", json!({"action": 1}), "INVALID_REQUEST"),
        (
            "herdr_link",
            json!({"action": "send", "arguments": []}),
            "INVALID_REQUEST",
        ),
    ];
    for (tool, input, code) in cases {
        let r = a.tool(s, tool, input.clone());
        assert_eq!(r["error"]["code"], code, "{tool} {input}: {r}");
    }
    assert_eq!(
        a.tool(s, "herdr_link_peers", json!({"bogus": 1}))["ok"],
        true
    );
    let prompts = w.admin(&["fake", "prompts"]);
    assert_eq!(prompts.trim(), "[]", "nothing was delivered");
}

#[test]
fn the_gateway_dispatches_only_where_the_style_offers_it() {
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let call = |session: &str, style: serde_json::Value, input: serde_json::Value| {
        a.call_text(
            &json!({"session": session, "tool": "herdr_link", "input": input, "style": style})
                .to_string(),
        )
    };
    let activated =
        json!({"status": "active", "capabilities": ["start", "peers", "send", "close"]});

    // Deferred (Pi): the gateway only activates. An action, inline or in arguments, known or
    // not, is ignored: no Herdr call, nothing closed.
    for (i, input) in [
        json!({"action": "close", "agent": "worker-a"}),
        json!({"action": "close", "arguments": {"agent": "worker-a"}}),
        json!({"action": "send", "arguments": {"to": "worker-a", "message": "x"}}),
        json!({"action": "fly"}),
        json!({}),
    ]
    .into_iter()
    .enumerate()
    {
        let s = format!("style-deferred-{i}");
        a.start(&s);
        let r = call(&s, json!("deferred"), input.clone());
        assert_eq!(r["ok"], true, "{input}: {r}");
        assert_eq!(r["result"], activated, "{input}");
        assert!(a.active(&s));
    }
    // Each session start's background bootstrap reads the caller's own record (`agent get
    // w1:p1`) at its own pace, racing this check; any other call would be the gateway's.
    let by_gateway: Vec<String> = w
        .calls()
        .into_iter()
        .filter(|c| c != "agent get w1:p1")
        .collect();
    assert!(by_gateway.is_empty(), "{by_gateway:?}");
    assert!(w.prompts().is_empty());
    // Its Tier 1 tools work as ever (close's own, sequential path).
    let r = a.call_text(
        &json!({"session": "style-deferred-0", "tool": "herdr_link_peers", "input": {}, "style": "deferred"})
            .to_string(),
    );
    assert_eq!(r["ok"], true, "{r}");

    // Gateway (OpenCode), MCP, and a host that states no style: dispatch.
    for style in [json!("gateway"), json!("mcp"), json!(null)] {
        let s = format!("style-{style}");
        let r = call(&s, style.clone(), json!({"action": "peers"}));
        assert_eq!(r["ok"], true, "{style}: {r}");
        assert_eq!(r["result"]["self"]["name"], "brain", "{style}");
    }
    let r = a.tool("style-none", "herdr_link", json!({"action": "peers"}));
    assert_eq!(r["result"]["self"]["name"], "brain");

    // An unknown style is the host's mistake: INVALID_REQUEST, nothing activated or called.
    w.clear_log();
    for style in [json!("pi"), json!(3), json!("")] {
        let r = call("style-bad", style.clone(), json!({"action": "peers"}));
        assert_eq!(r["error"]["code"], "INVALID_REQUEST", "{style}: {r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("style"));
    }
    assert!(!a.active("style-bad"));
    assert!(w.calls().is_empty());
}

/// The keys of a JSON value, recursively (an array by its first element): its shape.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().take(1).map(shape).collect()),
        _ => Value::Null,
    }
}

/// The result each Tier 1 tool describes to the model (`presentation::result_example`, in every
/// description and every gateway action entry) is the one it returns: the same keys, and the
/// same fixed `status`.
#[test]
fn each_tool_returns_the_result_its_description_gives() {
    use herdr_link::presentation::result_example;
    let _g = serial();
    let w = World::standard();
    let a = abi();
    let s = "results-1";
    let results = [
        (
            "herdr_link_start",
            a.tool_in(
                s,
                "herdr_link_start",
                json!({"name": "fresh", "kind": "pi", "args": []}),
                &w.dir,
            ),
        ),
        ("herdr_link_peers", a.tool(s, "herdr_link_peers", json!({}))),
        (
            "herdr_link_send",
            a.tool(
                s,
                "herdr_link_send",
                json!({"to": "worker-a", "message": "hello"}),
            ),
        ),
        (
            "herdr_link_close",
            a.tool(s, "herdr_link_close", json!({"agent": "worker-a"})),
        ),
    ];
    for (tool, r) in results {
        assert_eq!(r["ok"], true, "{tool}: {r}");
        let described = result_example(tool).unwrap();
        assert_eq!(shape(&r["result"]), shape(&described), "{tool}: {r}");
        assert_eq!(r["result"].get("status"), described.get("status"), "{tool}");
    }
    // The shape check sees a missing or extra key.
    assert_ne!(shape(&json!({"a": 1})), shape(&json!({"a": 1, "b": 2})));
    assert_ne!(
        shape(&json!({"p": [{"a": 1}]})),
        shape(&json!({"p": [{"b": 1}]}))
    );
    a.end(s);
}
