//! `herdr-link doctor` and Link side by side in the same fake worlds: what doctor says about the
//! caller (its record, its Agent Name, its peers) is what Link's own calls then do. Doctor runs
//! first (it is read-only), then a `herdr-link mcp` server of the same pane lists the peers,
//! then doctor again (the bootstrap may have named the caller in between).

use std::process::Command;

use serde_json::{json, Value};
use test_support::mcp::{self as harness, link_bin, Server, World};

/// What doctor said: the three identity checks' lines.
#[derive(Debug)]
struct Doctor {
    self_record: String,
    agent_name: String,
    peers: String,
}

impl Doctor {
    /// Whether doctor says Link's calls work here.
    fn works(&self) -> bool {
        [&self.self_record, &self.agent_name, &self.peers]
            .iter()
            .all(|l| l.starts_with("PASS "))
    }

    /// The peer names doctor lists, in its order.
    fn peer_names(&self) -> Vec<String> {
        let Some((_, list)) = self.peers.split_once(" in workspace ") else {
            return Vec::new();
        };
        let Some((_, names)) = list.split_once(": ") else {
            return Vec::new();
        };
        names
            .split(", ")
            .filter_map(|p| p.split_once(" (").map(|(n, _)| n.to_string()))
            .collect()
    }

    /// The caller's name doctor gives (`None`: unnamed, or no record).
    fn name(&self) -> Option<String> {
        let rest = self.agent_name.strip_prefix("PASS agent name: ")?;
        (!rest.starts_with("unnamed")).then(|| rest.to_string())
    }
}

/// The Herdr variables of a process in `pane` of `w`.
fn env_of(w: &World, pane: &str) -> Vec<(String, String)> {
    let mut env = w.inside();
    for (k, v) in env.iter_mut() {
        if k == "HERDR_PANE_ID" {
            *v = pane.to_string();
        }
    }
    env
}

fn doctor(env: &[(String, String)]) -> Doctor {
    let out = Command::new(link_bin())
        .arg("doctor")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |check: &str| {
        text.lines()
            .find(|l| l.split_once(' ').is_some_and(|(_, r)| r.starts_with(check)))
            .unwrap_or_else(|| panic!("no {check} line:\n{text}"))
            .to_string()
    };
    Doctor {
        self_record: line("self record:"),
        agent_name: line("agent name:"),
        peers: line("peers:"),
    }
}

/// Link's answer to `peers` from an MCP server in the same pane: `Ok((self, peers))` or the
/// error text.
fn link_peers(env: &[(String, String)]) -> Result<(String, Vec<String>), String> {
    let mut server = Server::start(env, &[], None);
    server.handshake();
    server.call(2, "herdr_link", json!({}));
    let answer = server.call(3, "herdr_link", json!({"action": "peers"}));
    let (text, is_error) = harness::tool_text(answer.last().unwrap());
    if is_error {
        return Err(text);
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    let names = v["peers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    Ok((v["self"]["name"].as_str().unwrap().to_string(), names))
}

/// Doctor, then Link, then doctor again, in pane `pane` of `w`; fails on any disagreement.
/// Returns what Link said.
fn side_by_side(w: &World, pane: &str) -> Result<(String, Vec<String>), String> {
    let env = env_of(w, pane);
    let before = doctor(&env);
    let link = link_peers(&env);
    let after = doctor(&env);
    match &link {
        Ok((me, peers)) => {
            for (when, d) in [("before", &before), ("after", &after)] {
                assert!(d.works(), "Link works but doctor ({when}) says not: {d:#?}");
                assert_eq!(&d.peer_names(), peers, "peers ({when}): {d:#?}");
            }
            if let Some(name) = before.name() {
                assert_eq!(&name, me, "{before:#?}");
            }
            assert_eq!(after.name().as_ref(), Some(me), "{after:#?}");
        }
        Err(e) => {
            assert!(
                !before.works() && !after.works(),
                "Link fails ({e}) but doctor says it works: {before:#?}"
            );
        }
    }
    link
}

const STANDARD: &str = r#"{"workspaces":[
 {"cwd":"/p","tabs":[{"panes":[
   {"cwd":"/p","agent":"pi","name":"brain","status":"idle"},
   {"cwd":"/p","agent":"pi","name":"worker","status":"working"},
   {"cwd":"/p","agent":"codex","status":"idle"}]}]},
 {"cwd":"/q","tabs":[{"panes":[{"cwd":"/q","agent":"pi","name":"stranger"}]}]}]}"#;

#[test]
fn named_caller() {
    let w = World::new(STANDARD);
    let (me, peers) = side_by_side(&w, "w1:p1").unwrap();
    assert_eq!((me.as_str(), peers), ("brain", vec!["worker".to_string()]));
}

#[test]
fn moved_pane() {
    let w = World::new(STANDARD);
    // The caller's pane moves to w2: its launch id w1:p1 is only an alias now.
    w.fake(&["move", "w1:p1", "w2"]);
    let (me, peers) = side_by_side(&w, "w1:p1").unwrap();
    assert_eq!(
        (me.as_str(), peers),
        ("brain", vec!["stranger".to_string()])
    );
    let d = doctor(&env_of(&w, "w1:p1"));
    assert!(d.self_record.contains("moved: w1:p1 is now w2:"), "{d:#?}");
}

#[test]
fn unnamed_caller() {
    let w = World::new(STANDARD);
    let (me, peers) = side_by_side(&w, "w1:p3").unwrap();
    assert!(me.starts_with("hl-"), "{me}");
    assert_eq!(peers, ["brain", "worker"]);
}

#[test]
fn a_name_held_twice_counts_once_at_its_first_entry() {
    // `twin` is first listed in the other workspace: Link never shows the caller's neighbour
    // of that name (the name does not address it), and doctor must not either.
    let w = World::new(
        r#"{"workspaces":[
 {"cwd":"/q","tabs":[{"panes":[{"cwd":"/q","agent":"pi","name":"twin"}]}]},
 {"cwd":"/p","tabs":[{"panes":[
   {"cwd":"/p","agent":"pi","name":"brain"},
   {"cwd":"/p","agent":"pi","name":"twin"},
   {"cwd":"/p","agent":"pi","name":"helper"}]}]}]}"#,
    );
    let (me, peers) = side_by_side(&w, "w2:p1").unwrap();
    assert_eq!((me.as_str(), peers), ("brain", vec!["helper".to_string()]));
}

#[test]
fn no_agent_in_the_pane() {
    let w = World::new(STANDARD);
    w.fake(&["agent", "w1:p1", "--none"]);
    let e = side_by_side(&w, "w1:p1").unwrap_err();
    assert!(e.starts_with("SELF_UNNAMED"), "{e}");
    let d = doctor(&env_of(&w, "w1:p1"));
    assert!(
        d.self_record.contains("Link answers SELF_UNNAMED"),
        "{d:#?}"
    );
}

#[test]
fn unknown_pane() {
    let w = World::new(STANDARD);
    let e = side_by_side(&w, "w9:p9").unwrap_err();
    assert!(e.starts_with("SELF_UNNAMED"), "{e}");
}
