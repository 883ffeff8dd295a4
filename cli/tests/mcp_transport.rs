//! `herdr-link mcp`'s stdio transport: tool calls are answered by the threads that read them
//! (not by rmcp's service loop), so what rmcp would have done is checked here: the same answers,
//! requests still read while a call runs, calls in arrival order one at a time, cancellations
//! honoured. Needs the fake Herdr built next to the binary (`cargo build -p fake-herdr`).

use test_support::mcp as harness;

use std::time::Duration;

use harness::{tool_json, Server, World, WORLD};
use serde_json::{json, Value};

/// Where a request names its protocol version in `_meta` (MCP 2026-07-28's inline negotiation).
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// A `tools/call` request; with `version`, the call names its protocol version in `_meta`,
/// which leaves it to rmcp.
fn call(id: i64, name: &str, args: Value, version: Option<&str>) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    if let Some(v) = version {
        params["_meta"] = json!({ META_VERSION: v });
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// Every kind of answer a call can get (a first call that activates, with its notification;
/// a result; a Link error; the Contract; invalid params), answered by the reader threads, is
/// the answer rmcp gives the same call in the same kind of session.
#[test]
fn direct_answers_are_the_ones_rmcp_gives() {
    let w = World::new(WORLD);
    let calls = [
        call(1, "herdr_link_peers", json!({}), None),
        call(
            2,
            "herdr_link_send",
            json!({"to": "ghost", "message": "x"}),
            None,
        ),
        call(3, "herdr_link", json!({"action": "activate"}), None),
        call(4, "herdr_link_close", json!({}), None),
        call(5, "no_such_tool", json!({}), None),
        call(6, "herdr_link", json!({"action": "nope"}), None),
        call(7, "herdr_link_peers", json!({"extra": 1}), None),
    ];
    let mut answers: Vec<Vec<Value>> = Vec::new();
    for version in [None, Some("2025-06-18")] {
        let mut s = Server::start(&w.inside(), &[], None);
        s.handshake();
        let mut frames = Vec::new();
        for c in &calls {
            let mut c = c.clone();
            if let Some(v) = version {
                c["params"]["_meta"] = json!({ META_VERSION: v });
            }
            s.send(&c);
            frames.extend(s.until_id(&c["id"]));
        }
        assert_eq!(s.eof().0.code(), Some(0));
        answers.push(frames);
    }
    assert_eq!(answers[0].len(), calls.len() + 1, "{:?}", answers[0]);
    assert_eq!(
        answers[0][0],
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert!(
        answers[0]
            .iter()
            .all(|f| f["result"].get("resultType").is_none()),
        "{:?}",
        answers[0]
    );
    assert_eq!(answers[0], answers[1]);
}

/// A ping sent while a call waits for Herdr is answered at once, before the call's answer.
#[test]
fn requests_are_still_read_while_a_call_runs() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    s.call(1, "herdr_link", json!({}));
    w.fake(&["fault", "agent", "list", "--delay-ms", "1500"]);
    s.send(&call(2, "herdr_link_peers", json!({}), None));
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    let first = s.next(Duration::from_secs(20)).expect("an answer");
    assert_eq!(first["id"], 3, "{first}");
    let second = s.next(Duration::from_secs(20)).expect("an answer");
    assert_eq!(second["id"], 4, "{second}");
    let third = s.next(Duration::from_secs(20)).expect("an answer");
    assert_eq!(third["id"], 2, "{third}");
    assert_eq!(tool_json(&third)["self"]["name"], "brain");
    w.fake(&["faults", "--clear"]);
    assert_eq!(s.eof().0.code(), Some(0));
}

/// Calls sent together run one at a time in the order they came, and are answered in it.
#[test]
fn calls_sent_together_run_and_answer_in_arrival_order() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    s.call(1, "herdr_link", json!({}));
    // The first call is slow: a second thread running the next ones would overtake it.
    w.fake(&["fault", "agent", "list", "--delay-ms", "800"]);
    let before = w.argv().len();
    s.send(&call(2, "herdr_link_peers", json!({}), None));
    s.send(&call(
        3,
        "herdr_link_close",
        json!({"agent": "ghost"}),
        None,
    ));
    s.send(&call(
        4,
        "herdr_link_send",
        json!({"to": "ghost", "message": "x"}),
        None,
    ));
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(s.next(Duration::from_secs(20)).expect("an answer")["id"].clone());
    }
    assert_eq!(ids, [json!(2), json!(3), json!(4)]);
    w.fake(&["faults", "--clear"]);
    // In Herdr's log: the peers call's `agent list` before anything of the other two.
    let argv = w.argv();
    let after: Vec<String> = argv[before..].iter().map(|a| a.join(" ")).collect();
    let list = after
        .iter()
        .position(|a| a.starts_with("agent list"))
        .expect("peers ran");
    assert!(
        after[list + 1..].iter().any(|a| a.contains("ghost")),
        "{after:?}"
    );
    assert!(
        !after[..list].iter().any(|a| a.contains("ghost")),
        "a later call ran before the first ended: {after:?}"
    );
    assert_eq!(s.eof().0.code(), Some(0));
}

/// A call that names its own protocol version in `_meta` is answered by rmcp, as that version
/// says: MCP 2026-07-28 requires the client's capabilities there too, and rmcp refuses a call
/// without them, where the direct path would have run it.
#[test]
fn a_call_naming_its_version_is_left_to_rmcp() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    s.call(1, "herdr_link", json!({}));
    s.send(&call(
        2,
        "herdr_link_close",
        json!({"agent": "ghost"}),
        Some("2026-07-28"),
    ));
    let answer = s.next(Duration::from_secs(20)).expect("an answer");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        !w.argv().iter().any(|a| a.iter().any(|x| x == "ghost")),
        "the call ran: {:?}",
        w.argv()
    );
    assert_eq!(s.eof().0.code(), Some(0));
}

/// Calls answered the two ways (directly, or by rmcp as a call naming its own protocol version
/// is) still run one at a time in arrival order: neither way overtakes a slow call of the other.
#[test]
fn calls_answered_either_way_keep_their_order() {
    for (slow, fast) in [(None, Some("2025-06-18")), (Some("2025-06-18"), None)] {
        let w = World::new(WORLD);
        let mut s = Server::start(&w.inside(), &[], None);
        s.handshake();
        s.call(1, "herdr_link", json!({}));
        // rmcp runs each request as soon as it has it; the transport must not let it.
        w.fake(&["fault", "agent", "list", "--delay-ms", "800"]);
        s.send(&call(2, "herdr_link_peers", json!({}), slow));
        s.send(&call(
            3,
            "herdr_link_close",
            json!({"agent": "ghost"}),
            fast,
        ));
        let mut ids = Vec::new();
        for _ in 0..2 {
            ids.push(s.next(Duration::from_secs(20)).expect("an answer")["id"].clone());
        }
        assert_eq!(
            ids,
            [json!(2), json!(3)],
            "slow {slow:?}, fast {fast:?}: the later call overtook the first"
        );
        w.fake(&["faults", "--clear"]);
        assert_eq!(s.eof().0.code(), Some(0));
    }
}

/// A call the client cancels while it waits behind another never runs; one cancelled while it
/// runs is not answered.
#[test]
fn cancelled_calls_are_not_run_or_not_answered() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    s.handshake();
    s.call(1, "herdr_link", json!({}));
    // Long enough that the cancellation below is read while the call still runs.
    w.fake(&["fault", "agent", "list", "--delay-ms", "3000"]);
    s.send(&call(2, "herdr_link_peers", json!({}), None));
    // Running, not still queued behind the first call's last steps.
    wait_for_child(s.pid(), &["agent", "list"]);
    s.send(&call(
        3,
        "herdr_link_close",
        json!({"agent": "worker"}),
        None,
    ));
    let cancel = |id: i64| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "test"}})
    };
    s.send(&cancel(3));
    s.send(&cancel(2));
    // Everything before this ping was read; its answer comes at once.
    assert_eq!(s.ask(4, "ping", json!({}))["result"], json!({}));
    // A call that waits behind the slow one: nothing answers ids 2 or 3 before its answer.
    let frames = s.request(
        5,
        "tools/call",
        json!({"name": "herdr_link_send", "arguments": {"to": "ghost", "message": "x"}}),
    );
    assert!(
        frames.iter().all(|f| f["id"] != 2 && f["id"] != 3),
        "{frames:?}"
    );
    assert!(
        w.argv().iter().any(|a| a.join(" ") == "agent list"),
        "the slow call ran"
    );
    let closes = w
        .argv()
        .iter()
        .filter(|a| {
            a.first().map(String::as_str) == Some("pane")
                && a.get(1).map(String::as_str) == Some("close")
        })
        .count();
    assert_eq!(closes, 0, "the cancelled close ran");
    let (status, rest) = s.eof();
    assert_eq!(status.code(), Some(0));
    assert!(
        rest.iter().all(|f| f["id"] != 2 && f["id"] != 3),
        "{rest:?}"
    );
}

/// A session that names a version without `initialize` in its `initialize` request is left
/// to rmcp whole, and still answered.
#[test]
fn a_session_asking_for_a_version_without_initialize_is_still_served() {
    let w = World::new(WORLD);
    let mut s = Server::start(&w.inside(), &[], None);
    let init = s.ask(
        0,
        "initialize",
        json!({"protocolVersion": "2026-07-28", "capabilities": {},
               "clientInfo": {"name": "future", "version": "0"}}),
    );
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let frames = s.call(1, "herdr_link_peers", json!({}));
    assert_eq!(tool_json(frames.last().unwrap())["self"]["name"], "brain");
    assert_eq!(s.eof().0.code(), Some(0));
}

/// Waits until process `parent` has a child running Herdr's CLI with `args`.
fn wait_for_child(parent: u32, args: &[&str]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let wanted = args.join("\0");
    loop {
        let found = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            let dir = e.path();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // The parent's pid is the second field after the command name's closing `)`.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            ppid == Some(parent)
                && String::from_utf8_lossy(&std::fs::read(dir.join("cmdline")).unwrap_or_default())
                    .contains(&wanted)
        });
        if found {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no child running {args:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
