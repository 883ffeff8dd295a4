//! Many concurrent invocations must serialize on the lock: no lost updates, valid state.

mod common;
use common::Fake;
use serde_json::Value;
use std::sync::Arc;

const N: usize = 16;

fn world(n: usize) -> String {
    let panes: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"agent":"pi","name":"a{i}-start"}}"#))
        .collect();
    format!(
        r#"{{"workspaces":[{{"cwd":"/r","tabs":[{{"panes":[{}]}}]}}]}}"#,
        panes.join(",")
    )
}

#[test]
fn renames_and_gets_from_16_threads() {
    let (f, map) = Fake::with_world("conc-rename", &world(N));
    let f = Arc::new(f);
    let ids: Vec<String> = (0..N)
        .map(|i| map["panes"][i]["pane_id"].as_str().expect("id").to_string())
        .collect();
    let handles: Vec<_> = (0..N)
        .map(|i| {
            let f = Arc::clone(&f);
            let pane = ids[i].clone();
            std::thread::spawn(move || {
                for j in 0..10 {
                    let name = format!("a{i}-{j}");
                    let v = f.ok(&["agent", "rename", &pane, &name]);
                    assert_eq!(v["result"]["agent"]["name"], name.as_str());
                    let g = f.ok(&["agent", "get", &name]);
                    assert_eq!(g["result"]["agent"]["pane_id"], pane.as_str());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    // Every pane ends with its own last name: no update was lost.
    let list = f.ok(&["agent", "list"]);
    let agents = list["result"]["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), N);
    for (i, a) in agents.iter().enumerate() {
        assert_eq!(a["name"], format!("a{i}-9"), "{a}");
        assert_eq!(a["revision"], 10, "one revision per rename");
    }
    // The state file is valid JSON and the log has every call, each a valid line.
    let raw = std::fs::read_to_string(&f.state).expect("state");
    serde_json::from_str::<Value>(&raw).expect("valid state JSON");
    let log = f.log();
    assert_eq!(log.len(), N * 20 + 1); // + the final agent list
    assert!(log.iter().all(|l| l["exit"] == 0 && l["pid"].is_u64()));
}

#[test]
fn sixteen_parallel_splits_make_sixteen_distinct_panes() {
    let (f, _) = Fake::with_world("conc-split", r#"{"workspaces":[{"cwd":"/r"}]}"#);
    let f = Arc::new(f);
    let handles: Vec<_> = (0..N)
        .map(|_| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                let v = f.ok(&["pane", "split", "w1:p1", "--direction", "right"]);
                v["result"]["pane"]["pane_id"]
                    .as_str()
                    .expect("id")
                    .to_string()
            })
        })
        .collect();
    let mut ids: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), N);
    let list = f.ok(&["pane", "list"]);
    let panes = list["result"]["panes"].as_array().expect("panes");
    assert_eq!(panes.len(), N + 1);
    let mut terms: Vec<&str> = panes
        .iter()
        .map(|p| p["terminal_id"].as_str().unwrap_or(""))
        .collect();
    terms.sort();
    terms.dedup();
    assert_eq!(terms.len(), N + 1, "terminal ids are unique");
}

#[test]
fn contended_name_goes_to_exactly_one_agent() {
    let (f, map) = Fake::with_world("conc-name", &world(N));
    let f = Arc::new(f);
    let handles: Vec<_> = (0..N)
        .map(|i| {
            let f = Arc::clone(&f);
            let pane = map["panes"][i]["pane_id"].as_str().expect("id").to_string();
            std::thread::spawn(move || {
                let o = f.run(&["agent", "rename", &pane, "leader"]);
                if o.code == Some(0) {
                    true
                } else {
                    assert!(o.stderr.contains("\"agent_name_taken\""), "{}", o.stderr);
                    false
                }
            })
        })
        .collect();
    let wins = handles
        .into_iter()
        .filter_map(|h| h.join().ok())
        .filter(|w| *w)
        .count();
    assert_eq!(wins, 1);
}
