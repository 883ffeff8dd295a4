//! `herdr_link_peers`: the caller and the named live agents of its current workspace.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::records::agent_list;
use crate::herdr::Herdr;
use crate::identity::self_context;

/// Lists same-workspace peers: `{"self":{name,state},"peers":[{name,state}...]}`, in Herdr's
/// list order, without the caller, without ids.
pub fn peers(herdr: &Herdr, pane: &str) -> Result<Value, LinkError> {
    let me = self_context(herdr, pane)?;
    let list = herdr
        .agent_list()
        .map_err(|f| f.classify(LinkError::NotInHerdr))?;
    let mut seen = HashSet::new();
    let mut peers = Vec::new();
    for record in agent_list(&list) {
        let Some(name) = record.name.as_deref() else {
            continue;
        };
        // A name counts once, even when its first entry is filtered out below.
        if !seen.insert(name.to_string()) || name == me.name {
            continue;
        }
        let same_ws = !me.workspace_id.is_empty()
            && record.workspace_id.as_deref() == Some(me.workspace_id.as_str());
        if !same_ws || !record.is_live() {
            continue;
        }
        peers.push(json!({"name": name, "state": record.state.as_str()}));
    }
    Ok(json!({
        "self": {"name": me.name, "state": me.state.as_str()},
        "peers": peers,
    }))
}
