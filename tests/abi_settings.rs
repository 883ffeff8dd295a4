//! Invalid `HERDR_LINK_*` values through the C ABI: the default is used (calls still work) and
//! the operator log says so once per process and value, naming the default.

use test_support::world as common;

use common::{abi, serial, World};
use serde_json::{json, Value};

fn log_lines(path: &std::path::Path, at_least: usize) -> Vec<Value> {
    for _ in 0..150 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= at_least {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("fewer than {at_least} lines in {}", path.display());
}

#[test]
fn invalid_timeout_uses_the_default_and_is_logged_once_per_value() {
    let _g = serial();
    let w = World::standard();
    let log = w.dir.join("oplog.jsonl");
    std::env::set_var("HERDR_LINK_LOG", &log);
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", "abc");
    let a = abi();
    for _ in 0..3 {
        let r = a.tool("settings", "herdr_link_peers", json!({}));
        assert_eq!(r["ok"], true, "{r}");
    }
    let lines = log_lines(&log, 4);
    let settings: Vec<&Value> = lines.iter().filter(|l| l["tool"] == "settings").collect();
    assert_eq!(settings.len(), 1, "{lines:#?}");
    assert_eq!(settings[0]["code"], "INVALID_SETTING");
    assert_eq!(
        settings[0]["detail"],
        "HERDR_LINK_TIMEOUT_MS=\"abc\" is not a whole number of milliseconds above 0; the default 10000 ms is used"
    );
    assert_eq!(settings[0]["calls"], json!([]));
    // Another bad value is reported once more; a good one never.
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", "-5");
    a.tool("settings", "herdr_link_peers", json!({}));
    a.tool("settings", "herdr_link_peers", json!({}));
    std::env::set_var("HERDR_LINK_TIMEOUT_MS", "2500");
    a.tool("settings", "herdr_link_peers", json!({}));
    let lines = log_lines(&log, 8);
    let details: Vec<&str> = lines
        .iter()
        .filter(|l| l["tool"] == "settings")
        .map(|l| l["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 2, "{lines:#?}");
    assert!(details[1].starts_with("HERDR_LINK_TIMEOUT_MS=\"-5\""));
    std::env::remove_var("HERDR_LINK_TIMEOUT_MS");
    std::env::remove_var("HERDR_LINK_LOG");
}
