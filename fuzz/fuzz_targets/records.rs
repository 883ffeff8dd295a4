//! Herdr record parsing on arbitrary JSON: `agent get`/`rename`, `agent list`, `pane get`/`split`,
//! `pane list` and `tab create` responses. Invariants: no panic; a name that is kept is a valid
//! Agent Name; kept ids are non-empty.
#![no_main]

use herdr_link::herdr::records::{agent_list, created_tab_id, pane_list, AgentRecord, PaneRecord};
use herdr_link::protocol::is_valid_agent_name;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn agent(r: &AgentRecord) {
    if let Some(n) = &r.name {
        assert!(is_valid_agent_name(n), "{n:?}");
    }
    assert!(r.pane_id.as_deref() != Some(""));
    assert!(r.workspace_id.as_deref() != Some(""));
    if let Some(n) = r.stable_name() {
        assert!(r.is_live() && is_valid_agent_name(n));
    }
    let _ = r.state.as_str();
}

fn pane(p: &PaneRecord) {
    for id in [&p.pane_id, &p.tab_id, &p.workspace_id, &p.cwd] {
        assert!(id.as_deref() != Some(""));
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Some(r) = AgentRecord::from_response(&v) {
        agent(&r);
    }
    agent_list(&v).iter().for_each(agent);
    if let Some(p) = PaneRecord::from_response(&v) {
        pane(&p);
    }
    pane_list(&v).iter().for_each(pane);
    if let Some(t) = created_tab_id(&v) {
        assert!(!t.is_empty());
    }
});
