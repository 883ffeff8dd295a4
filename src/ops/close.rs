//! `herdr_link_close`: close the pane of an explicitly named same-workspace agent.

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::{same_workspace, self_workspace, target_context};
use crate::ops::send::take_turn;
use crate::protocol::is_valid_agent_name;

/// Closes `agent`'s live pane, after any delivery to it has been submitted (its delivery turn).
/// The caller needs a workspace but no Agent Name; the pane id is read fresh from the target's
/// record every time.
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
    // A message sent to the agent may still be waiting for Herdr's Enter (it comes 300 ms after
    // the text): closing the pane before it would lose a message that was reported `sent`. So
    // close takes the agent's delivery turn, which waits for that Enter, and holds it while the
    // pane closes so no delivery starts meanwhile. No turn in time: nothing is closed.
    let (turn, left) = take_turn(herdr, &target).map_err(|why| {
        LinkError::CloseNoTurn(format!(
            "a delivery to {} was still pending {why}; nothing was closed",
            target.name
        ))
    })?;
    let closed = herdr
        .pane_close(&target.pane_id, left)
        .map_err(|f| f.classify(LinkError::CloseFailed));
    drop(turn);
    closed?;
    Ok(json!({"status": "closed", "agent": target.name}))
}
