//! `herdr_link_peers`: the caller and the named live agents of its current workspace.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::records::{agent_list, AgentRecord};
use crate::herdr::Herdr;
use crate::identity::self_context;

/// Lists same-workspace peers: `{"self":{name,state},"peers":[{name,state}...]}`, in Herdr's
/// list order, without the caller, without ids.
pub fn peers(herdr: &Herdr, pane: &str) -> Result<Value, LinkError> {
    let me = self_context(herdr, pane)?;
    let list = herdr
        .agent_list()
        .map_err(|f| f.classify(LinkError::NotInHerdr))?;
    let records = agent_list(&list);
    let peers: Vec<Value> = visible_peers(&me.name, &me.workspace_id, &records)
        .into_iter()
        .map(|r| json!({"name": r.name, "state": r.state.as_str()}))
        .collect();
    Ok(json!({
        "self": {"name": me.name, "state": me.state.as_str()},
        "peers": peers,
    }))
}

/// The peers of the caller named `me` in workspace `workspace`, from the `agent list` entries
/// `records`, in list order: named, live, in that workspace (never when it is empty), not the
/// caller. A name counts once, at its first entry, even when that entry is filtered out (so a
/// name shared across workspaces never shows its second holder). `herdr-link doctor` lists
/// exactly these.
pub fn visible_peers<'a>(
    me: &str,
    workspace: &str,
    records: &'a [AgentRecord],
) -> Vec<&'a AgentRecord> {
    let mut seen = HashSet::new();
    records
        .iter()
        .filter(|r| {
            let Some(name) = r.name.as_deref() else {
                return false;
            };
            if !seen.insert(name) || name == me {
                return false;
            }
            !workspace.is_empty() && r.workspace_id.as_deref() == Some(workspace) && r.is_live()
        })
        .collect()
}
