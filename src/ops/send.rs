//! `herdr_link_send`: deliver one envelope, wrapped for a possibly dormant receiver.

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::{same_workspace, self_context, target_context};
use crate::protocol::Envelope;

/// Sends `message` to `to`: fresh self and target records, the same-workspace guard, then one
/// `agent prompt <to> <wrapper>`. "sent" means Herdr accepted delivery, nothing more.
pub fn send(herdr: &Herdr, pane: &str, to: &str, message: &str) -> Result<Value, LinkError> {
    let me = self_context(herdr, pane)?;
    let target = target_context(herdr, to)?;
    same_workspace(&me.workspace_id, &target.workspace_id)?;
    let envelope = Envelope::build(&me.name, &target.name, message)?;
    herdr
        .agent_prompt(&target.name, &envelope.wrapper())
        .map_err(|f| f.classify(LinkError::SendFailed))?;
    Ok(json!({"status": "sent", "id": envelope.id, "to": target.name}))
}
