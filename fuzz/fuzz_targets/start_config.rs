//! The start configuration parser (`.agents/agent_config.json`). Invariants: it never panics;
//! every accepted entry has a non-blank key, at least one variant with a non-blank kind, and
//! more than one variant only with the round-robin strategy (checked against the raw JSON).
#![no_main]

use herdr_link::internal::start_config::{parse, Placement};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(entries) = parse(data) else {
        return;
    };
    let raw: Value = serde_json::from_slice(data).expect("accepted input is JSON");
    for (key, entry) in &entries {
        assert!(!key.trim().is_empty());
        assert!(!entry.variants.is_empty());
        for v in &entry.variants {
            assert!(!v.kind.trim().is_empty());
        }
        if entry.variants.len() > 1 {
            assert_eq!(raw["agents"][key]["strategy"], "round-robin");
        }
        if let Placement::NewTab { label: Some(l) } = &entry.placement {
            assert!(!l.trim().is_empty());
        }
    }
});
