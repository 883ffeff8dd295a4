//! `herdr_link_send`: deliver one envelope, wrapped for a possibly dormant receiver, in the
//! receiver's delivery turn ([`crate::turn`]) so it arrives as a submission of its own.

use std::time::Instant;

use serde_json::{json, Value};

use crate::error::LinkError;
use crate::herdr::{CliFailure, Herdr, Unavailable};
use crate::identity::{same_workspace, self_context, target_context, TargetContext};
use crate::limits::{encoded_len_upto, message_over_limit, MAX_ARG_STRLEN, MAX_MESSAGE_BYTES};
use crate::oplog::MessageTrace;
use crate::ops::delivery;
use crate::protocol::{check_message, is_valid_agent_name, Envelope};
use crate::turn::{self, Delivery};

/// Sends `message` to `to`: the input first (recipient name rule, then a message that is
/// missing, over the size limit, or blank), so no Herdr call (not even the
/// self-identity bootstrap's rename) happens for a send that could not travel; then fresh self
/// and target records, the same-workspace guard, and, in the receiver's turn, one
/// `agent prompt <to> <wrapper>`. "sent" means Herdr accepted delivery, nothing more. What it
/// learns on the way (sender, workspace, receiver's state, message id) goes into `trace` for
/// the operator log.
pub fn send(
    herdr: &Herdr,
    turns: &turn::Record,
    trace: &mut MessageTrace,
    pane: &str,
    to: &str,
    message: Option<&str>,
) -> Result<Value, LinkError> {
    // The recipient first, then the payload: a message to nobody is PEER_NOT_FOUND whatever
    // its size (or its absence).
    if !is_valid_agent_name(to) {
        return Err(LinkError::PeerNotFound(
            "target agent is not a live peer".into(),
        ));
    }
    let message = message.ok_or_else(|| {
        LinkError::SendMessageBlank("`message` is missing or not a string".into())
    })?;
    if message_over_limit(message) {
        return Err(LinkError::SendMessageTooLong(format!(
            "message is over the limit of {MAX_MESSAGE_BYTES} bytes as the envelope encodes it ({}+ bytes; {} characters given); nothing was sent",
            encoded_len_upto(message, MAX_MESSAGE_BYTES),
            message.chars().count()
        )));
    }
    check_message(message)?;
    let me = self_context(herdr, pane)?;
    trace.from.clone_from(&me.name);
    trace.workspace.clone_from(&me.workspace_id);
    let target = target_context(herdr, to)?;
    trace.receiver_state = target.state.as_str().to_string();
    same_workspace(&me.workspace_id, &target.workspace_id)?;
    let envelope = Envelope::build(&me.name, &target.name, message)?;
    trace.id.clone_from(&envelope.id);
    let wrapper = envelope.wrapper();
    if wrapper.len() >= MAX_ARG_STRLEN {
        // Unreachable within MAX_MESSAGE_BYTES (see its bound); kept so a change there can never
        // turn into a spawn failure reported as a missing Herdr.
        return Err(LinkError::SendMessageTooLong(format!(
            "wrapper is {} bytes; one argv element holds at most {} bytes",
            wrapper.len(),
            MAX_ARG_STRLEN - 1
        )));
    }
    deliver(herdr, turns, &target, &wrapper)?;
    Ok(json!({"status": "sent", "id": envelope.id, "to": target.name}))
}

/// Types `wrapper` into the receiver's pane in its delivery turn. The wait for the turn has its
/// own bound, and the prompt after it gets the whole call limit. No turn in time (the queue is
/// stuck) is `SEND_FAILED` with nothing typed. A prompt that ran out of time may still be
/// typed by Herdr (0.9 queues it and types it later), so it is reported as unconfirmed and
/// never resent.
fn deliver(
    herdr: &Herdr,
    turns: &turn::Record,
    target: &TargetContext,
    wrapper: &str,
) -> Result<(), LinkError> {
    // The target's `agent get`, just made: how long a plain call to this Herdr takes now.
    let reference = herdr.last_duration();
    let turn = delivery::take(turns, target).map_err(|why| {
        LinkError::SendQueueStuck(format!(
            "no delivery turn for {} {why}; nothing was sent",
            target.name
        ))
    })?;
    let started = Instant::now();
    let result = herdr.agent_prompt(&target.name, wrapper);
    // Herdr typed the text (or may have, or may yet): when its Enter is due.
    match &result {
        Ok(_) => turn.delivered(match reference {
            Some(reference) => Delivery::AnsweredBeside {
                took: started.elapsed(),
                reference,
            },
            None => Delivery::Answered(started.elapsed()),
        }),
        Err(CliFailure::Unavailable { .. }) => turn.delivered(Delivery::BrokeOff),
        Err(_) => {}
    }
    drop(turn);
    match result {
        Ok(_) => Ok(()),
        Err(CliFailure::Unavailable {
            cause: Unavailable::TimedOut,
            detail,
        }) => Err(LinkError::SendUnconfirmed(format!(
            "{detail}; Herdr may still type the message"
        ))),
        Err(CliFailure::ArgsTooLong(detail)) => Err(LinkError::SendTooLongHere(detail)),
        // Refusals the model can act on (wait, then send again): its text says so.
        Err(f) if f.is_code("agent_blocked") => Err(LinkError::SendReceiverBlocked(f.detail())),
        Err(f) if f.is_code("agent_not_ready") => Err(LinkError::SendReceiverNotReady(f.detail())),
        Err(f) => Err(f.classify(LinkError::SendFailed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst case of every character class at the byte limit, with the longest names, fits
    /// one argv element; one byte more is refused.
    #[test]
    fn the_largest_wrapper_fits_one_argv_element() {
        let name = format!("a{}", "z".repeat(31));
        // (unit, its encoded bytes)
        for (unit, bytes) in [
            ("\u{1}", 6),
            ("😀", 4),
            ("中", 3),
            ("é", 2),
            ("\"", 2),
            ("\\", 2),
            ("\n", 2),
            (" ", 1),
            ("a", 1),
        ] {
            // Not blank: one letter first.
            let n = (MAX_MESSAGE_BYTES - 1) / bytes;
            let fill = MAX_MESSAGE_BYTES - 1 - n * bytes;
            let message = format!("m{}{}", "x".repeat(fill), unit.repeat(n));
            assert_eq!(encoded_len_upto(&message, usize::MAX), MAX_MESSAGE_BYTES);
            assert!(!message_over_limit(&message), "{unit:?}");
            let wrapper = Envelope::build(&name, &name, &message).unwrap().wrapper();
            assert!(
                wrapper.len() < MAX_ARG_STRLEN,
                "{unit:?}: {} bytes",
                wrapper.len()
            );
            assert!(message_over_limit(&format!("{message}x")), "{unit:?}");
        }
    }
}
