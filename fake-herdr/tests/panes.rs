//! Ids (bijective base-32), pane split/close/list, tabs, workspaces and move aliases.

mod common;
use common::Fake;
use serde_json::json;

#[test]
fn pane_numbers_use_bijective_base32() {
    let (f, _) = Fake::with_world("base32", r#"{"workspaces":[{"cwd":"/r"}]}"#);
    let mut ids = vec!["w1:p1".to_string()];
    for _ in 2..=66 {
        let v = f.ok(&["pane", "split", "w1:p1", "--direction", "down"]);
        ids.push(
            v["result"]["pane"]["pane_id"]
                .as_str()
                .expect("id")
                .to_string(),
        );
    }
    let expect = |n: usize, id: &str| assert_eq!(ids[n - 1], id, "pane number {n}");
    expect(2, "w1:p2");
    expect(9, "w1:p9");
    expect(10, "w1:pA");
    expect(18, "w1:pJ"); // I is skipped
    expect(22, "w1:pP");
    expect(25, "w1:pS");
    expect(31, "w1:pZ");
    expect(32, "w1:p0");
    expect(33, "w1:p11");
    expect(64, "w1:p10");
    expect(65, "w1:p21");
    expect(66, "w1:p22");
    // Numbers only grow: closing the newest pane does not free its number.
    f.ok(&["pane", "close", "w1:p22"]);
    let v = f.ok(&["pane", "split", "w1:p1", "--direction", "down"]);
    assert_eq!(v["result"]["pane"]["pane_id"], "w1:p23");
    // world next_pane
    let (g, map) = Fake::with_world(
        "base32b",
        r#"{"workspaces":[{"next_pane":32,"tabs":[{"panes":[{},{}]}]}]}"#,
    );
    assert_eq!(map["panes"][0]["pane_id"], "w1:p0");
    assert_eq!(map["panes"][1]["pane_id"], "w1:p11");
    drop(g);
}

#[test]
fn workspace_and_tab_ids_only_grow() {
    let f = Fake::new("wsids");
    // empty world: zero workspaces
    assert_eq!(f.ok(&["pane", "list"])["result"]["panes"], json!([]));
    let (c, m) = f.err(&["tab", "create"]);
    assert_eq!(
        (c.as_str(), m.as_str()),
        ("workspace_not_found", "no active workspace")
    );
    let a = f.ok(&["workspace", "create", "--cwd", "/a"]);
    assert_eq!(a["result"]["workspace"]["workspace_id"], "w1");
    assert_eq!(
        a["result"]["workspace"]["focused"], true,
        "the first workspace becomes active"
    );
    let b = f.ok(&["workspace", "create", "--cwd", "/b"]);
    assert_eq!(b["result"]["workspace"]["workspace_id"], "w2");
    assert_eq!(b["result"]["workspace"]["number"], 2);
    f.ok(&["pane", "close", "w1:p1"]); // closes w1 entirely
    let c2 = f.ok(&["workspace", "create"]);
    assert_eq!(c2["result"]["workspace"]["workspace_id"], "w3");
    assert_eq!(
        c2["result"]["workspace"]["number"], 2,
        "number is the position"
    );
    let t = f.ok(&["tab", "create", "--workspace", "w2"]);
    assert_eq!(t["result"]["tab"]["tab_id"], "w2:t2");
    assert_eq!(
        t["result"]["tab"]["label"], "2",
        "default label is the position"
    );
    f.ok(&["tab", "close", "w2:t2"]);
    let t = f.ok(&["tab", "create", "--workspace", "w2", "--focus"]);
    assert_eq!(t["result"]["tab"]["tab_id"], "w2:t3");
    assert_eq!(t["result"]["tab"]["focused"], true);
    assert_eq!(t["result"]["root_pane"]["focused"], true);
    assert_eq!(
        f.err(&["tab", "create", "--workspace", "w9"]),
        (
            "workspace_not_found".into(),
            "workspace w9 not found".into()
        )
    );
    assert_eq!(
        f.err(&["tab", "close", "w2:t9"]),
        ("tab_not_found".into(), "tab w2:t9 not found".into())
    );
}

#[test]
fn split_semantics() {
    let (f, _) = Fake::with_world(
        "split",
        r#"{"workspaces":[{"cwd":"/r","tabs":[{"panes":[{"cwd":"/r/sub"},{"agent":"pi"}]}]}]}"#,
    );
    // cwd follows the target pane when --cwd is not given
    let v = f.ok(&[
        "pane",
        "split",
        "w1:p1",
        "--direction",
        "right",
        "--no-focus",
    ]);
    let p = &v["result"]["pane"];
    assert_eq!(
        (p["pane_id"].as_str(), p["cwd"].as_str()),
        (Some("w1:p3"), Some("/r/sub"))
    );
    assert_eq!(p["focused"], false);
    assert_eq!(p["agent_status"], "unknown");
    assert!(p.get("agent").is_none());
    // --cwd is raw; --pane form; --focus
    let v = f.ok(&[
        "pane",
        "split",
        "--pane",
        "w1:p2",
        "--direction",
        "down",
        "--cwd",
        "rel/x",
        "--focus",
        "--ratio",
        "0.3",
        "--env",
        "A=b=c",
    ]);
    assert_eq!(v["result"]["pane"]["cwd"], "rel/x");
    assert_eq!(v["result"]["pane"]["focused"], true);
    // new pane is placed after its target, in layout order
    let list = f.ok(&["pane", "list"]);
    let ids: Vec<&str> = list["result"]["panes"]
        .as_array()
        .expect("panes")
        .iter()
        .map(|p| p["pane_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["w1:p1", "w1:p3", "w1:p2", "w1:p4"]);
    // --current uses HERDR_PANE_ID
    let o = f.run_env(
        &["pane", "split", "--current", "--direction", "down"],
        &[("HERDR_PANE_ID", "w1:p2")],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // no target: the focused pane (w1:p4 after --focus)
    let v = f.ok(&["pane", "split", "--direction", "down"]);
    assert_eq!(v["result"]["pane"]["cwd"], "rel/x");
    assert_eq!(
        f.err(&["pane", "split", "w1:p99", "--direction", "down"]),
        ("pane_not_found".into(), "pane not found".into())
    );
}

#[test]
fn pane_get_close_list_errors_and_cascade() {
    let (f, _) = Fake::with_world(
        "close",
        r#"{"workspaces":[{"cwd":"/a","tabs":[{"panes":[{},{}]},{"panes":[{}]}]},{"cwd":"/b"}]}"#,
    );
    assert_eq!(
        f.err(&["pane", "get", "w1:p9"]),
        ("pane_not_found".into(), "pane w1:p9 not found".into())
    );
    assert_eq!(
        f.err(&["pane", "close", "nope"]),
        ("pane_not_found".into(), "pane nope not found".into())
    );
    assert_eq!(
        f.err(&["pane", "list", "--workspace", "w7"]),
        (
            "workspace_not_found".into(),
            "workspace w7 not found".into()
        )
    );
    assert_eq!(
        f.ok(&["pane", "list", "--workspace", "w1"])["result"]["panes"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
    // closing the last pane of a tab closes the tab
    f.ok(&["pane", "close", "w1:p3"]);
    assert_eq!(f.err(&["tab", "close", "w1:t2"]).0, "tab_not_found");
    f.ok(&["pane", "close", "w1:p1"]);
    f.ok(&["pane", "close", "w1:p2"]);
    // last pane of the last tab closes the workspace
    assert_eq!(
        f.err(&["pane", "list", "--workspace", "w1"]).0,
        "workspace_not_found"
    );
    let all = f.ok(&["pane", "list"]);
    assert_eq!(all["result"]["panes"][0]["pane_id"], "w2:p1");
    // closing the last tab closes the workspace
    f.ok(&["tab", "close", "w2:t1"]);
    assert_eq!(f.ok(&["pane", "list"])["result"]["panes"], json!([]));
}

#[test]
fn move_keeps_alias_for_panes_not_for_agents() {
    let (f, map) = Fake::with_world(
        "move",
        r#"{"workspaces":[{"cwd":"/a","tabs":[{"panes":[{},{"agent":"pi","name":"mover"},{"agent":"codex"}]}]},{"cwd":"/b"}]}"#,
    );
    let term = map["panes"][1]["terminal_id"].clone();
    let m = f.ok_admin(&["fake", "move", "w1:p2", "w2"]);
    assert_eq!(
        m,
        json!({"old_pane_id":"w1:p2","pane_id":"w2:p2","terminal_id":term,"workspace_id":"w2"})
    );
    // pane get via alias returns the new record
    let v = f.ok(&["pane", "get", "w1:p2"]);
    assert_eq!(v["result"]["pane"]["pane_id"], "w2:p2");
    assert_eq!(v["result"]["pane"]["terminal_id"], term);
    // agent target: alias rejected, new id and name work
    assert_eq!(
        f.err(&["agent", "get", "w1:p2"]).1,
        "agent target w1:p2 not found"
    );
    assert_eq!(
        f.ok(&["agent", "get", "w2:p2"])["result"]["agent"]["name"],
        "mover"
    );
    assert_eq!(
        f.ok(&["agent", "get", "mover"])["result"]["agent"]["workspace_id"],
        "w2"
    );
    // split via alias lands in the new workspace
    let s = f.ok(&["pane", "split", "w1:p2", "--direction", "down"]);
    assert_eq!(s["result"]["pane"]["pane_id"], "w2:p3");
    // move twice: both old ids stay aliases
    f.ok_admin(&["fake", "move", "w1:p3", "w2"]);
    f.ok_admin(&["fake", "move", "w2:p4", "w1"]);
    assert_eq!(
        f.ok(&["pane", "get", "w1:p3"])["result"]["pane"]["pane_id"],
        "w1:p4"
    );
    assert_eq!(
        f.ok(&["pane", "get", "w2:p4"])["result"]["pane"]["pane_id"],
        "w1:p4"
    );
    // close via alias
    f.ok(&["pane", "close", "w1:p2"]);
    assert_eq!(f.err(&["agent", "get", "mover"]).0, "agent_not_found");
}

#[test]
fn focus_flags() {
    let (f, _) = Fake::with_world(
        "focus",
        r#"{"workspaces":[{"tabs":[{"panes":[{},{"focused":true}]}]},{}]}"#,
    );
    assert_eq!(
        f.ok(&["pane", "get", "w1:p1"])["result"]["pane"]["focused"],
        false
    );
    assert_eq!(
        f.ok(&["pane", "get", "w1:p2"])["result"]["pane"]["focused"],
        true
    );
    assert_eq!(
        f.ok(&["pane", "get", "w2:p1"])["result"]["pane"]["focused"],
        false
    );
    f.ok_admin(&["fake", "focus", "w2:p1"]);
    assert_eq!(
        f.ok(&["pane", "get", "w1:p2"])["result"]["pane"]["focused"],
        false
    );
    assert_eq!(
        f.ok(&["pane", "get", "w2:p1"])["result"]["pane"]["focused"],
        true
    );
}
