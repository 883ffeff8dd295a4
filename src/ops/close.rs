//! `herdr_link_close`: close the pane of an explicitly named same-workspace agent.

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::{same_workspace, self_workspace, target_context};
use crate::protocol::is_valid_agent_name;

/// Closes `agent`'s live pane. The caller needs a workspace but no Agent Name; the pane id is
/// read fresh from the target's record every time.
pub fn close(herdr: &Herdr, pane: &str, agent: &str) -> Result<Value, LinkError> {
    if !is_valid_agent_name(agent) {
        return Err(LinkError::PeerNotFound(
            "target agent is not a live peer".into(),
        ));
    }
    let workspace = self_workspace(herdr, pane)?;
    let target = target_context(herdr, agent)?;
    same_workspace(&workspace, &target.workspace_id)?;
    if target.pane_id.is_empty() {
        return Err(LinkError::PeerNotFound("target reported no pane".into()));
    }
    herdr
        .pane_close(&target.pane_id)
        .map_err(|f| f.classify(LinkError::CloseFailed))?;
    Ok(json!({"status": "closed", "agent": target.name}))
}
