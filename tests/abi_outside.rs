//! Outside Herdr (the environment gate closed) the library is a complete no-op: no tools, no
//! Contract, every call NOT_IN_HERDR, nothing activated, nothing run. The gate is per process, so
//! this scenario has its own test binary.

use test_support::world as common;

use common::{abi, serial};
use serde_json::json;

fn assert_outside(label: &str) {
    let a = abi();
    a.start("out");
    for style in ["deferred", "gateway", "mcp"] {
        let p = a.present("out", style);
        assert_eq!(p, json!({"tools": [], "contract": null}), "{label} {style}");
    }
    for (tool, input) in [
        ("herdr_link", json!({})),
        ("herdr_link", json!({"action": "peers"})),
        ("herdr_link_peers", json!({})),
        ("herdr_link_send", json!({"to": "a", "message": "m"})),
        ("herdr_link_close", json!({"agent": "a"})),
        (
            "herdr_link_start",
            json!({"name": "a", "kind": "pi", "args": []}),
        ),
    ] {
        let r = a.tool("out", tool, input);
        assert_eq!(r["ok"], false, "{label} {tool}");
        assert_eq!(
            r["error"]["message"],
            "NOT_IN_HERDR: Herdr environment is unavailable"
        );
        assert_eq!(r["active"], false);
        assert_eq!(r["tools_changed"], false);
    }
    assert!(!a.active("out"), "{label}: nothing activates outside Herdr");
    assert_eq!(a.guard("out", "herdr agent wait x"), (0, None));
}

#[test]
fn the_gate_needs_all_three_variables() {
    let _g = serial();
    let marker = std::env::temp_dir().join(format!("hl-outside-{}", std::process::id()));
    // A "Herdr" that would leave a trace if it were ever run.
    let script = std::env::temp_dir().join(format!("hl-outside-bin-{}", std::process::id()));
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\necho '{{}}'\n", marker.display()),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    let vars = [
        ("HERDR_ENV", "1".to_string()),
        ("HERDR_BIN_PATH", script.display().to_string()),
        ("HERDR_PANE_ID", "w1:p1".to_string()),
    ];
    for missing in 0..3 {
        for (i, (k, v)) in vars.iter().enumerate() {
            if i == missing {
                std::env::remove_var(k);
            } else {
                std::env::set_var(k, v);
            }
        }
        assert_outside(&format!("without {}", vars[missing].0));
    }
    std::env::set_var("HERDR_ENV", "0");
    assert_outside("HERDR_ENV=0");
    std::env::set_var("HERDR_ENV", "1");
    std::env::set_var("HERDR_PANE_ID", "");
    assert_outside("empty HERDR_PANE_ID");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!marker.exists(), "Herdr was run outside the gate");
    let _ = std::fs::remove_file(&script);
}
