//! `herdr_link_send`: deliver one envelope, wrapped for a possibly dormant receiver.

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::{same_workspace, self_context, target_context};
use crate::limits::{chars_over, MAX_ARG_STRLEN, MAX_MESSAGE_CHARS};
use crate::protocol::{check_message, is_valid_agent_name, Envelope};

/// Sends `message` to `to`: the input first (size limit, recipient name rule, blank or NUL
/// message), so no Herdr call (not even the self-identity bootstrap's rename) happens for a send
/// that could not travel; then fresh self and target records, the same-workspace guard, and one
/// `agent prompt <to> <wrapper>`. "sent" means Herdr accepted delivery, nothing more.
pub fn send(herdr: &Herdr, pane: &str, to: &str, message: &str) -> Result<Value, LinkError> {
    if chars_over(message, MAX_MESSAGE_CHARS) {
        return Err(LinkError::SendFailed(format!(
            "message is longer than the limit of {MAX_MESSAGE_CHARS} characters ({} bytes given); nothing was sent",
            message.len()
        )));
    }
    // In the order the checks had when they ran after the self lookup: the recipient, then
    // the payload.
    if !is_valid_agent_name(to) {
        return Err(LinkError::PeerNotFound(
            "target agent is not a live peer".into(),
        ));
    }
    check_message(message)?;
    let me = self_context(herdr, pane)?;
    let target = target_context(herdr, to)?;
    same_workspace(&me.workspace_id, &target.workspace_id)?;
    let envelope = Envelope::build(&me.name, &target.name, message)?;
    let wrapper = envelope.wrapper();
    if wrapper.len() >= MAX_ARG_STRLEN {
        // Unreachable within MAX_MESSAGE_CHARS (see its bound); kept so a change there can never
        // turn into a spawn failure reported as a missing Herdr.
        return Err(LinkError::SendFailed(format!(
            "wrapper is {} bytes; one argv element holds at most {} bytes",
            wrapper.len(),
            MAX_ARG_STRLEN - 1
        )));
    }
    herdr
        .agent_prompt(&target.name, &wrapper)
        .map_err(|f| f.classify(LinkError::SendFailed))?;
    Ok(json!({"status": "sent", "id": envelope.id, "to": target.name}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst case of every character class at the limit, with the longest names, fits one
    /// argv element: 6-byte escapes (control characters), 4-byte characters, 2-byte escapes.
    #[test]
    fn the_largest_wrapper_fits_one_argv_element() {
        let name = format!("a{}", "z".repeat(31));
        for unit in ["\u{1}", "😀", "\"", "\\", "\n", " ", "é", "a"] {
            let message = format!("x{}", unit.repeat(MAX_MESSAGE_CHARS - 1));
            assert!(!chars_over(&message, MAX_MESSAGE_CHARS));
            let wrapper = Envelope::build(&name, &name, &message).unwrap().wrapper();
            assert!(
                wrapper.len() < MAX_ARG_STRLEN,
                "{unit:?}: {} bytes",
                wrapper.len()
            );
        }
        let over = "😀".repeat(MAX_MESSAGE_CHARS + 1);
        assert!(chars_over(&over, MAX_MESSAGE_CHARS));
    }
}
