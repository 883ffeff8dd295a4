//! `herdr-link mcp` over raw JSON-RPC lines: the framing and protocol edges that an SDK client
//! hides (garbage lines, notification order, error codes, EOF). Needs the fake Herdr built
//! next to the binary (`cargo build -p fake-herdr`).

use test_support::mcp as harness;

use std::time::Duration;

use harness::{tool_json, tool_text, Server, World, WORLD};
use serde_json::{json, Value};

const NOT_IN_HERDR: &str = "NOT_IN_HERDR: Herdr environment is unavailable";
const NOT_A_PEER: &str = "PEER_NOT_FOUND: target agent is not a live peer";

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[test]
fn initialize_declares_list_changed_and_reports_the_crate_version() {
    let mut s = Server::start(&[], &[], None);
    let init = s.handshake();
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(init["serverInfo"]["name"], "herdr-link");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert!(
        init.get("instructions").is_none(),
        "no hint outside Herdr: {init}"
    );
    let (status, _) = s.eof();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn outside_herdr_lists_nothing_and_every_call_is_not_in_herdr() {
    let w = World::new(WORLD);
    // The fake state exists, but the gate is closed: nothing may run.
    let mut s = Server::start(
        &[("HERDR_FAKE_STATE".into(), w.state.display().to_string())],
        &[],
        None,
    );
    s.handshake();
    assert!(s.tool_names(1).is_empty());
    let mut id = 10;
    for (name, args) in [
        ("herdr_link", json!({})),
        ("herdr_link_peers", json!({})),
        ("herdr_link_send", json!({"to": "worker", "message": "x"})),
        (
            "herdr_link_start",
            json!({"name": "a", "kind": "pi", "args": []}),
        ),
        ("herdr_link_close", json!({"agent": "worker"})),
        ("herdr_link", json!({"action": "peers"})),
    ] {
        id += 1;
        let answer = s.call(id, name, args).pop().unwrap();
        assert_eq!(tool_text(&answer), (NOT_IN_HERDR.to_string(), true));
    }
    assert!(s.tool_names(20).is_empty());
    assert_eq!(s.list_changed(), 0);
    let (status, rest) = s.eof();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty());
    assert!(w.argv().is_empty(), "Herdr was called: {:?}", w.argv());
}

#[test]
fn garbage_line_gets_parse_error_and_the_server_keeps_serving() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    for garbage in ["{not json", "\u{1}\u{2}", "{\"jsonrpc\":\"2.0\",", "]"] {
        s.raw(garbage);
        let e = s
            .next(Duration::from_secs(5))
            .expect("an answer to garbage");
        assert_eq!(
            e,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
        );
    }
    // Non-object JSON, a batch, a missing method, a wrong version: -32600.
    s.raw("null");
    let e = s.next(Duration::from_secs(5)).unwrap();
    assert_eq!((error_code(&e), e["id"].clone()), (-32600, Value::Null));
    s.raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(error_code(&s.next(Duration::from_secs(5)).unwrap()), -32600);
    s.raw(r#"{"jsonrpc":"2.0","id":41}"#);
    let e = s.until_id(&json!(41)).pop().unwrap();
    assert_eq!(error_code(&e), -32600);
    s.raw(r#"{"jsonrpc":"1.0","id":"v1","method":"ping"}"#);
    assert_eq!(error_code(&s.until_id(&json!("v1")).pop().unwrap()), -32600);
    // Mistyped params keep their id.
    s.raw(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":"nope"}"#);
    assert_eq!(error_code(&s.until_id(&json!(42)).pop().unwrap()), -32602);
    s.raw(r#"{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"arguments":{}}}"#);
    assert_eq!(error_code(&s.until_id(&json!(43)).pop().unwrap()), -32602);
    // A malformed notification is never answered; blank lines are skipped.
    s.raw(r#"{"jsonrpc":"9.9","method":"tools/list"}"#);
    s.raw("   ");
    s.raw("");
    // Still alive, ids preserved verbatim.
    assert_eq!(s.ask(44, "ping", json!({}))["result"], json!({}));
    assert_eq!(
        s.ask(45, "tools/list", json!({}))["result"]["tools"][0]["name"],
        "herdr_link"
    );
    s.send(&json!({"jsonrpc": "2.0", "id": "str-id", "method": "ping"}));
    assert_eq!(s.until_id(&json!("str-id")).len(), 1);
    let (status, rest) = s.eof();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty(), "unexpected frames: {rest:?}");
}

#[test]
fn stray_messages_before_initialize_do_not_end_the_session() {
    let mut s = Server::start(&[], &[], None);
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    s.raw("garbage");
    assert_eq!(error_code(&s.next(Duration::from_secs(5)).unwrap()), -32700);
    assert_eq!(s.ask(1, "ping", json!({}))["result"], json!({}));
    let init = s.handshake();
    assert_eq!(init["serverInfo"]["name"], "herdr-link");
    assert!(s.tool_names(2).is_empty());
    assert_eq!(s.eof().0.code(), Some(0));
}

#[test]
fn gateway_activation_notifies_once_before_its_response() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    let init = s.handshake();
    assert!(init["instructions"]
        .as_str()
        .unwrap()
        .contains("explicitly asks to use Herdr"));
    assert_eq!(s.tool_names(1), ["herdr_link"]);
    assert_eq!(s.tool_names(2), ["herdr_link"]);
    assert_eq!(s.list_changed(), 0, "listing never activates");

    let frames = s.call(3, "herdr_link", json!({}));
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(
        frames[0],
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(
        tool_json(&frames[1]),
        json!({"status": "active", "capabilities": ["start", "peers", "send", "close"]})
    );
    assert_eq!(
        s.tool_names(4),
        [
            "herdr_link",
            "herdr_link_start",
            "herdr_link_peers",
            "herdr_link_send",
            "herdr_link_close"
        ]
    );
    // Idempotent, no second notification, also via action "activate".
    assert_eq!(s.call(5, "herdr_link", json!({})).len(), 1);
    assert_eq!(
        s.call(6, "herdr_link", json!({"action": "activate"})).len(),
        1
    );
    assert_eq!(s.list_changed(), 1);
    assert_eq!(s.eof().0.code(), Some(0));
}

#[test]
fn direct_tier1_call_while_dormant_activates_then_executes() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    let frames = s.call(1, "herdr_link_peers", json!({}));
    assert_eq!(frames[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        tool_json(&frames[1]),
        json!({"self": {"name": "brain", "state": "idle"},
               "peers": [{"name": "worker", "state": "working"}]})
    );
    assert_eq!(s.tool_names(2).len(), 5);
    // A failing first call activates too.
    let mut t = Server::start(&w.inside(), &[], None);
    t.handshake();
    let frames = t.call(1, "herdr_link_send", json!({"to": "ghost", "message": "x"}));
    assert_eq!(frames[0]["method"], "notifications/tools/list_changed");
    assert_eq!(tool_text(&frames[1]), (NOT_A_PEER.to_string(), true));
    assert_eq!(t.tool_names(2).len(), 5);
    assert_eq!(s.eof().0.code(), Some(0));
    assert_eq!(t.eof().0.code(), Some(0));
}

#[test]
fn unknown_tools_and_actions_are_invalid_params_and_do_not_activate() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    let e = s.call(1, "nope", json!({})).pop().unwrap();
    assert_eq!(error_code(&e), -32602);
    assert!(e["error"]["message"].as_str().unwrap().contains("nope"));
    let e = s
        .call(2, "herdr_link", json!({"action": "fly"}))
        .pop()
        .unwrap();
    assert_eq!(error_code(&e), -32602);
    assert!(e["error"]["message"].as_str().unwrap().contains("fly"));
    let e = s
        .call(3, "herdr_link", json!({"action": null}))
        .pop()
        .unwrap();
    assert_eq!(error_code(&e), -32602);
    assert_eq!(s.list_changed(), 0);
    assert_eq!(s.tool_names(4), ["herdr_link"]);
    // Other methods: method not found.
    assert_eq!(error_code(&s.ask(5, "resources/list", json!({}))), -32601);
    assert_eq!(error_code(&s.ask(6, "no/such", json!({}))), -32601);
    // Only the startup bootstrap's self probe ran.
    assert!(
        w.argv().iter().all(|a| a == &["agent", "get", "w1:p1"]),
        "{:?}",
        w.argv()
    );
    assert_eq!(s.eof().0.code(), Some(0));
}

#[test]
fn tools_link_errors_and_gateway_dispatch() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    s.call(1, "herdr_link", json!({}));
    let sent = tool_json(
        &s.call(
            2,
            "herdr_link_send",
            json!({"to": "worker", "message": "hi"}),
        )
        .pop()
        .unwrap(),
    );
    assert_eq!(sent["status"], "sent");
    assert_eq!(sent["to"], "worker");
    // Link errors: isError results, never JSON-RPC errors.
    // A refusal the model can fix says what to fix (its own row of the error table).
    use herdr_link::error::LinkError as E;
    let fix = |row: fn(String) -> E| row(String::new()).agent_text();
    for (id, name, args, want) in [
        (
            3,
            "herdr_link_send",
            json!({"to": "stranger", "message": "x"}),
            NOT_A_PEER.to_string(),
        ),
        (
            4,
            "herdr_link_send",
            json!({"message": "x"}),
            fix(E::SendToMissing),
        ),
        (
            5,
            "herdr_link_close",
            json!({"agent": "ghost"}),
            NOT_A_PEER.to_string(),
        ),
        (
            6,
            "herdr_link_send",
            json!({"to": "worker", "message": " \n"}),
            fix(E::SendMessageBlank),
        ),
        (
            60,
            "herdr_link_send",
            json!({"to": "worker", "message": "\u{7f}".repeat(herdr_link::limits::MAX_MESSAGE_BYTES / 6 + 1)}),
            fix(E::SendMessageTooLong),
        ),
        (61, "herdr_link_close", json!({}), fix(E::CloseAgentMissing)),
        (
            62,
            "herdr_link_start",
            json!({"name": "Bad Name", "kind": "pi", "args": []}),
            fix(E::StartNameInvalid),
        ),
        (
            63,
            "herdr_link_start",
            json!({"name": "helper", "config_agent": "a", "kind": "pi"}),
            fix(E::StartModesMixed),
        ),
        (
            64,
            "herdr_link_start",
            json!({"name": "helper", "kind": "pi"}),
            fix(E::StartArgsMissing),
        ),
        // Refusals Herdr made that the model can fix: a kind it does not know, a name taken.
        (
            65,
            "herdr_link_start",
            json!({"name": "helper", "kind": "no-such-agent", "args": []}),
            fix(E::StartKindUnsupported),
        ),
        (
            66,
            "herdr_link_start",
            json!({"name": "worker", "kind": "pi", "args": []}),
            fix(E::StartNameTaken),
        ),
    ] {
        let answer = s.call(id, name, args).pop().unwrap();
        assert_eq!(tool_text(&answer), (want, true), "{name}");
    }
    // A receiver that cannot take the message now: the model is told to send it again later.
    let blocked = json!({"error": {"code": "agent_blocked", "message": "agent worker is blocked"}});
    w.fake(&[
        "fault",
        "agent",
        "prompt",
        "--exit",
        "1",
        "--stderr",
        &blocked.to_string(),
    ]);
    let answer = s
        .call(
            67,
            "herdr_link_send",
            json!({"to": "worker", "message": "x"}),
        )
        .pop()
        .unwrap();
    assert_eq!(tool_text(&answer), (fix(E::SendReceiverBlocked), true));
    w.fake(&["faults", "--clear"]);
    // Gateway dispatch: nested arguments and the shorthand.
    let peers = tool_json(
        &s.call(7, "herdr_link", json!({"action": "peers"}))
            .pop()
            .unwrap(),
    );
    assert_eq!(peers["self"]["name"], "brain");
    let started = tool_json(
        &s.call(
            8,
            "herdr_link",
            json!({"action": "start", "arguments": {"name": "helper", "kind": "pi", "args": []}}),
        )
        .pop()
        .unwrap(),
    );
    assert_eq!(
        started,
        json!({"status": "started", "agent": "helper", "kind": "pi"})
    );
    let sent = tool_json(
        &s.call(
            9,
            "herdr_link",
            json!({"action": "send", "to": "helper", "message": "short"}),
        )
        .pop()
        .unwrap(),
    );
    assert_eq!(sent["to"], "helper");
    let closed = tool_json(
        &s.call(
            10,
            "herdr_link",
            json!({"action": "close", "arguments": {"agent": "helper"}}),
        )
        .pop()
        .unwrap(),
    );
    assert_eq!(closed, json!({"status": "closed", "agent": "helper"}));
    assert_eq!(s.list_changed(), 1);
    assert_eq!(s.eof().0.code(), Some(0));
    assert!(w
        .argv()
        .iter()
        .all(|a| !a.iter().any(|x| x == "--wait") && a[..2] != ["agent", "wait"]));
}

#[test]
fn eof_answers_requests_already_read_then_exits_zero() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    // Two calls and EOF in one go: both answered (the notification first), then exit 0.
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "herdr_link", "arguments": {}}}));
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "herdr_link_peers", "arguments": {}}}));
    // A final partial line without a newline is not processed.
    s.write(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let (status, rest) = s.eof();
    assert_eq!(status.code(), Some(0));
    let ids: Vec<Value> = rest.iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, [Value::Null, json!(1), json!(2)], "{rest:?}");
    assert_eq!(rest[0]["method"], "notifications/tools/list_changed");
    assert_eq!(tool_json(&rest[2])["self"]["name"], "brain");
}

#[test]
fn eof_before_initialize_exits_zero() {
    let s = Server::start(&[], &[], None);
    assert_eq!(s.eof().0.code(), Some(0));
}

#[test]
fn start_reads_config_under_context_dir() {
    let w = World::new(WORLD);
    let project = w.dir.join("project");
    std::fs::create_dir_all(project.join(".agents")).unwrap();
    std::fs::write(
        project.join(".agents/agent_config.json"),
        r#"{"agents":{"reviewer":{"placement":{"mode":"new_tab","label":"review"},"variants":[{"kind":"pi","args":["--model","m1"]}]}}}"#,
    )
    .unwrap();
    let elsewhere = w.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let args = json!({"name": "rev", "config_agent": "reviewer"});

    // Default: the server's working directory.
    let mut s = Server::start(&w.inside(), &[], Some(&project));
    s.handshake();
    let answer = s.call(1, "herdr_link_start", args.clone()).pop().unwrap();
    assert_eq!(
        tool_json(&answer),
        json!({"status": "started", "agent": "rev", "kind": "pi"})
    );
    assert_eq!(s.eof().0.code(), Some(0));

    // A relative --context-dir is resolved against the working directory.
    let mut s = Server::start(
        &w.inside(),
        &["--context-dir", "../project"],
        Some(&elsewhere),
    );
    s.handshake();
    let args2 = json!({"name": "rev2", "config_agent": "reviewer"});
    let answer = s.call(1, "herdr_link_start", args2).pop().unwrap();
    assert_eq!(tool_json(&answer)["agent"], "rev2");
    assert_eq!(s.eof().0.code(), Some(0));

    let mut s = Server::start(&w.inside(), &[], Some(&elsewhere));
    s.handshake();
    let answer = s.call(1, "herdr_link_start", args).pop().unwrap();
    let (text, err) = tool_text(&answer);
    assert!(
        err && text.starts_with("START_CONFIG_NOT_FOUND: "),
        "{text}"
    );
    assert_eq!(s.eof().0.code(), Some(0));

    let starts: Vec<_> = w
        .argv()
        .into_iter()
        .filter(|a| a[..2] == ["agent", "start"])
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts.iter().all(|a| a[a.len() - 2..] == ["--model", "m1"]));
}

#[test]
fn bad_context_dir_is_a_usage_error() {
    let out = std::process::Command::new(harness::link_bin())
        .args(["mcp", "--context-dir", "/nonexistent/herdr-link-test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn startup_bootstrap_names_an_unnamed_self() {
    let w = World::new(WORLD);
    w.fake(&["agent", "w1:p1", "--no-name"]);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    // The bootstrap runs at startup, before any tool call.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !w.argv().iter().any(|a| a[..2] == ["agent", "rename"]) {
        assert!(
            std::time::Instant::now() < deadline,
            "no bootstrap rename: {:?}",
            w.argv()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let peers = tool_json(&s.call(1, "herdr_link_peers", json!({})).pop().unwrap());
    let name = peers["self"]["name"].as_str().unwrap();
    assert!(name.len() == 11 && name.starts_with("hl-"), "{name}");
    assert_eq!(s.eof().0.code(), Some(0));
    let renames = w
        .argv()
        .into_iter()
        .filter(|a| a[..2] == ["agent", "rename"])
        .count();
    assert_eq!(renames, 1);
}

/// The Contract exactly as PROTOCOL.md §3 holds it (read from the file, not from the library).
fn protocol_contract() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../PROTOCOL.md")).unwrap();
    herdr_link::protocol::contract_block(&text).expect("PROTOCOL.md has a §3 text block")
}

/// The text blocks of a tools/call result.
fn blocks(answer: &Value) -> Vec<String> {
    answer["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("not a result: {answer}"))
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "text", "{answer}");
            b["text"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Every model-visible text of the frames so far (results, descriptions, instructions).
fn all_text(frames: &[Value]) -> String {
    frames
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn activation_result_and_active_gateway_carry_the_contract() {
    let contract = protocol_contract();
    let expected = herdr_link::presentation::contract(
        herdr_link::presentation::Style::Mcp,
        herdr_link::presentation::View::Active,
    )
    .unwrap();
    assert!(expected.starts_with(&format!("{contract}\n\n")));
    assert!(expected.contains("mcp__herdr_link__herdr_link_send"));

    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    let dormant = s.ask(1, "tools/list", json!({}));
    // Never while dormant: nothing read so far holds any Contract rule.
    for marker in ["Reply path", "Complete requested work", contract.as_str()] {
        assert!(
            !all_text(&s.frames).contains(marker),
            "{marker} while dormant"
        );
    }
    assert!(!dormant.to_string().contains("Reply path"));

    let answer = s.call(2, "herdr_link", json!({})).pop().unwrap();
    let b = blocks(&answer);
    assert_eq!(b.len(), 2, "{answer}");
    assert_eq!(
        serde_json::from_str::<Value>(&b[0]).unwrap(),
        json!({"status": "active", "capabilities": ["start", "peers", "send", "close"]}),
        "the first block is unchanged"
    );
    assert_eq!(
        b[1], expected,
        "the second block is the Contract + MCP appendix"
    );
    assert!(answer["result"].get("isError").is_none());

    // The active gateway's description carries it too; Tier 1 tools do not repeat it.
    let list = s.ask(3, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let gw = tools[0]["description"].as_str().unwrap();
    assert!(gw.ends_with(&expected), "{gw}");
    assert!(tools[1..]
        .iter()
        .all(|t| !t["description"].as_str().unwrap().contains("Reply path")));

    // A repeated activation carries it again; other calls do not.
    let again = s
        .call(4, "herdr_link", json!({"action": "activate"}))
        .pop()
        .unwrap();
    assert_eq!(blocks(&again)[1], expected);
    let peers = s.call(5, "herdr_link_peers", json!({})).pop().unwrap();
    assert_eq!(blocks(&peers).len(), 1);
    let via_gw = s
        .call(6, "herdr_link", json!({"action": "peers"}))
        .pop()
        .unwrap();
    assert_eq!(blocks(&via_gw).len(), 1);
    assert_eq!(s.eof().0.code(), Some(0));
}

#[test]
fn a_direct_tier1_call_that_activates_carries_the_contract() {
    let expected = herdr_link::presentation::contract(
        herdr_link::presentation::Style::Mcp,
        herdr_link::presentation::View::Active,
    )
    .unwrap();
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    let answer = s.call(1, "herdr_link_peers", json!({})).pop().unwrap();
    let b = blocks(&answer);
    assert_eq!(b.len(), 2, "{answer}");
    assert_eq!(
        serde_json::from_str::<Value>(&b[0]).unwrap()["self"]["name"],
        "brain"
    );
    assert_eq!(b[1], expected);
    assert_eq!(
        blocks(&s.call(2, "herdr_link_peers", json!({})).pop().unwrap()).len(),
        1
    );

    // A first call that fails with a Link error activated too: error text, then the Contract.
    let mut t = Server::start(&w.inside(), &[], None);
    t.handshake();
    let answer = t
        .call(1, "herdr_link_send", json!({"to": "ghost", "message": "x"}))
        .pop()
        .unwrap();
    assert_eq!(blocks(&answer), [NOT_A_PEER.to_string(), expected]);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(s.eof().0.code(), Some(0));
    assert_eq!(t.eof().0.code(), Some(0));

    // Outside Herdr nothing activates, so nothing carries the Contract.
    let mut o = Server::start(&[], &[], None);
    o.handshake();
    let answer = o.call(1, "herdr_link", json!({})).pop().unwrap();
    assert_eq!(blocks(&answer), [NOT_IN_HERDR.to_string()]);
    assert_eq!(o.eof().0.code(), Some(0));
}

/// The appendix names the tools in the host's actual form (§4.6): from the client name the host
/// gives in `initialize`, or from `--host` / `--server-name` (what `herdr-link setup` writes),
/// the flags winning; an unknown host gets words true in every host.
#[test]
fn the_appendix_names_the_tools_as_the_host_shows_them() {
    use herdr_link::presentation::{mcp_contract, McpHost, McpNaming};
    let naming = |host, server: &str| McpNaming {
        host,
        server: server.to_string(),
    };
    let w = World::new(WORLD);
    let cases: [(&[&str], &str, McpNaming); 14] = [
        (&[], "Claude Code", naming(McpHost::Claude, "herdr_link")),
        (
            &[],
            "codex-mcp-client",
            naming(McpHost::Codex, "herdr_link"),
        ),
        (&[], "opencode", naming(McpHost::OpenCode, "herdr_link")),
        (&[], "raw-test", naming(McpHost::Other, "herdr_link")),
        (
            &["--host", "opencode", "--server-name", "hl2"],
            "raw-test",
            naming(McpHost::OpenCode, "hl2"),
        ),
        (
            &["--host", "codex"],
            "claude-code",
            naming(McpHost::Codex, "herdr_link"),
        ),
        (
            &["--host=agy"],
            "raw-test",
            naming(McpHost::Agy, "herdr_link"),
        ),
        // The names Gemini CLI 0.61.0 and Qwen Code 0.24.4 send (docs/hosts-gemini-qwen.md).
        (
            &[],
            "gemini-cli-mcp-client",
            naming(McpHost::Gemini, "herdr_link"),
        ),
        (
            &[],
            "qwen-cli-mcp-client-herdr_link",
            naming(McpHost::Qwen, "herdr_link"),
        ),
        (
            &["--host", "gemini"],
            "raw-test",
            naming(McpHost::Gemini, "herdr_link"),
        ),
        // What setup writes for these four: `mcp --host <host>`.
        (
            &["--host", "copilot"],
            "raw-test",
            naming(McpHost::Copilot, "herdr_link"),
        ),
        (
            &["--host", "droid"],
            "raw-test",
            naming(McpHost::Droid, "herdr_link"),
        ),
        (
            &["--host", "cline"],
            "raw-test",
            naming(McpHost::Cline, "herdr_link"),
        ),
        (
            &["--host", "kimi"],
            "raw-test",
            naming(McpHost::Kimi, "herdr_link"),
        ),
    ];
    for (args, client, expected) in cases {
        let mut s = Server::start(&w.inside(), args, None);
        s.handshake_as(client);
        let contract = mcp_contract(&expected);
        let answer = s.call(1, "herdr_link", json!({})).pop().unwrap();
        assert_eq!(blocks(&answer)[1], contract, "{args:?} {client}");
        let list = s.ask(2, "tools/list", json!({}));
        let gw = list["result"]["tools"][0]["description"].as_str().unwrap();
        assert!(gw.ends_with(&contract), "{args:?} {client}: {gw}");
        assert_eq!(s.eof().0.code(), Some(0));
        let text = blocks(&answer)[1].clone();
        match expected.host {
            McpHost::Claude => {
                assert!(text.contains("herdr_link_send -> mcp__herdr_link__herdr_link_send"))
            }
            McpHost::OpenCode => {
                assert!(text.contains(&format!(
                    "herdr_link_send -> {}_herdr_link_send",
                    expected.server
                )));
                assert!(!text.contains("mcp__"), "{text}");
            }
            McpHost::Codex => {
                assert!(text.contains("namespace mcp__herdr_link"));
                assert!(
                    !text.contains("mcp__herdr_link__"),
                    "Codex never shows prefixed names: {text}"
                );
            }
            McpHost::Agy => assert!(text.contains("call_mcp_tool with ServerName \"herdr_link\"")),
            McpHost::Gemini => {
                assert!(text.contains("herdr_link_send -> mcp_herdr_link_herdr_link_send"));
                assert!(!text.contains("mcp__"), "{text}");
            }
            McpHost::Qwen | McpHost::Kimi => {
                assert!(text.contains(
                    "call mcp__herdr_link__herdr_link with action start, send, peers or close"
                ));
                assert!(!text.contains(" -> "), "{text}");
            }
            McpHost::Copilot => {
                assert!(text.contains("herdr_link_send -> herdr_link-herdr_link_send"))
            }
            McpHost::Droid => {
                assert!(text.contains("herdr_link_send -> herdr_link___herdr_link_send"))
            }
            McpHost::Cline => {
                assert!(text.contains(
                    "call herdr_link__herdr_link with action start, send, peers or close"
                ));
                assert!(!text.contains("mcp__"), "{text}");
            }
            McpHost::Other => assert!(!text.contains(" -> "), "{text}"),
        }
    }
    // A bad flag is a usage error before anything is served.
    for args in [&["--host", "vim"][..], &["--server-name", "a b"][..]] {
        let s = Server::start(&w.inside(), args, None);
        assert_eq!(s.eof().0.code(), Some(2), "{args:?}");
    }
}

/// MCP 2026-07-28 has no `initialize`: the client names itself in each request's `_meta` (as
/// Claude Code 2.1.332 does), and the appendix follows that name.
#[test]
fn a_client_named_in_meta_gets_its_form() {
    use herdr_link::presentation::{mcp_contract, McpHost, McpNaming};
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let answer = s
        .request(
            1,
            "tools/call",
            json!({"name": "herdr_link", "arguments": {}, "_meta": meta}),
        )
        .pop()
        .unwrap();
    let expected = mcp_contract(&McpNaming {
        host: McpHost::Claude,
        server: "herdr_link".into(),
    });
    assert_eq!(blocks(&answer)[1], expected, "{answer}");
    assert_eq!(s.eof().0.code(), Some(0));
}

/// A client that never refreshes its tools (Codex) or that the server cannot name: the dormant
/// gateway plus the activation result name every input of every action, each under its own
/// action, with its type and whether it is required (the Tier 1 schemas read from the server's
/// own active `tools/list`); the dormant gateway alone names none of them.
#[test]
fn the_gateway_alone_gives_every_action_its_inputs() {
    let w = World::new(WORLD);
    for client in ["codex-mcp-client", "raw-test"] {
        let mut s = Server::start(&w.inside(), &[], None);
        s.handshake_as(client);
        let dormant = s.ask(1, "tools/list", json!({}));
        let gateway = dormant["result"]["tools"][0].to_string();
        let dormant_schema = dormant["result"]["tools"][0]["inputSchema"].to_string();
        let dormant_description = dormant["result"]["tools"][0]["description"]
            .as_str()
            .unwrap()
            .to_string();
        let answer = s.call(2, "herdr_link", json!({})).pop().unwrap();
        let text = format!("{gateway}\n{}", blocks(&answer).join("\n"));
        let active = s.ask(3, "tools/list", json!({}));
        let tier1 = &active["result"]["tools"].as_array().unwrap()[1..];
        assert_eq!(tier1.len(), 4, "{active}");
        for tool in tier1 {
            let name = tool["name"].as_str().unwrap();
            let action = name.strip_prefix("herdr_link_").unwrap();
            let head = format!("\n- action \"{action}\" ({name}): ");
            let at = text
                .find(&head)
                .unwrap_or_else(|| panic!("{client}: no entry for {action}"));
            let entry = &text[at..];
            let entry = &entry[..entry[1..]
                .find("\n- action ")
                .map_or(entry.len(), |e| e + 1)];
            let schema = &tool["inputSchema"];
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            for (key, p) in schema["properties"].as_object().unwrap() {
                let ty = match p["type"].as_str().unwrap() {
                    "array" => format!("array of {}s", p["items"]["type"].as_str().unwrap()),
                    t => t.to_string(),
                };
                let need = if required.contains(&json!(key)) {
                    "required"
                } else {
                    "optional"
                };
                let line = format!("\n    {key} ({ty}, {need}");
                assert!(entry.contains(&line), "{client} {action}: no {line:?}");
                assert!(
                    !dormant_schema.contains(&format!("\"{key}\""))
                        && !dormant_description.contains(&format!("    {key} (")),
                    "{client}: the dormant gateway names {key}"
                );
            }
        }
        assert!(!gateway.contains("herdr_link_"), "{client}: {gateway}");
        assert_eq!(s.eof().0.code(), Some(0));
    }
}
