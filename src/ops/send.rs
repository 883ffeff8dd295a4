//! `herdr_link_send`: deliver one envelope, wrapped for a possibly dormant receiver, in the
//! receiver's delivery turn ([`crate::turn`]) so it arrives as a submission of its own.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::env;
use crate::error::LinkError;
use crate::herdr::{CliFailure, Herdr, TurnTrace};
use crate::identity::{same_workspace, self_context, target_context, TargetContext};
use crate::limits::{encoded_len_upto, message_over_limit, MAX_ARG_STRLEN, MAX_MESSAGE_BYTES};
use crate::protocol::{check_message, is_valid_agent_name, Envelope};
use crate::turn;

/// The part of the call's time limit kept for the Herdr call made in the turn (`agent prompt`,
/// close's `pane close`): a turn that would leave less is given up (nothing typed or closed)
/// rather than risking that call cut off mid-way. Capped at half the limit, for short limits.
const RESERVE: Duration = Duration::from_secs(1);

/// Sends `message` to `to`: the input first (recipient name rule, then a message that is
/// missing, over the size limit, blank or holds a NUL), so no Herdr call (not even the
/// self-identity bootstrap's rename) happens for a send that could not travel; then fresh self
/// and target records, the same-workspace guard, and, in the receiver's turn, one
/// `agent prompt <to> <wrapper>`. "sent" means Herdr accepted delivery, nothing more.
pub fn send(
    herdr: &Herdr,
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
    let message = message
        .ok_or_else(|| LinkError::SendFailed("`message` is missing or not a string".into()))?;
    if message_over_limit(message) {
        return Err(LinkError::SendFailed(format!(
            "message is over the limit of {MAX_MESSAGE_BYTES} bytes as the envelope encodes it ({}+ bytes; {} characters given); nothing was sent",
            encoded_len_upto(message, MAX_MESSAGE_BYTES),
            message.chars().count()
        )));
    }
    check_message(message)?;
    let me = self_context(herdr, pane)?;
    let target = target_context(herdr, to)?;
    same_workspace(&me.workspace_id, &target.workspace_id)?;
    let envelope = Envelope::build(&me.name, &target.name, message)?;
    let wrapper = envelope.wrapper();
    if wrapper.len() >= MAX_ARG_STRLEN {
        // Unreachable within MAX_MESSAGE_BYTES (see its bound); kept so a change there can never
        // turn into a spawn failure reported as a missing Herdr.
        return Err(LinkError::SendFailed(format!(
            "wrapper is {} bytes; one argv element holds at most {} bytes",
            wrapper.len(),
            MAX_ARG_STRLEN - 1
        )));
    }
    deliver(herdr, &target, &wrapper)?;
    Ok(json!({"status": "sent", "id": envelope.id, "to": target.name}))
}

/// The delivery-turn key of `target`: its Herdr socket and resolved pane (the name when Herdr
/// reported no pane). Close uses the same key, so it waits for a delivery still being submitted.
pub(crate) fn turn_key(target: &TargetContext) -> u64 {
    let receiver = if target.pane_id.is_empty() {
        format!("name:{}", target.name)
    } else {
        target.pane_id.clone()
    };
    turn::receiver_key(&env::socket_path(), &receiver)
}

/// Takes `target`'s delivery turn within the call's time limit, less a reserve for the Herdr
/// call that follows (capped at half the limit), and records in the operator log how it waited.
/// Returns the turn and the time left for that call, or why no turn came (for the error detail).
pub(crate) fn take_turn(
    herdr: &Herdr,
    target: &TargetContext,
) -> Result<(turn::Turn, Duration), String> {
    let limit = herdr.timeout();
    let started = Instant::now();
    let reserve = RESERVE.min(limit / 2);
    match turn::take(turn_key(target), started + (limit - reserve)) {
        Ok(t) => {
            herdr.record_turn(TurnTrace {
                waited: t.waited(),
                shared: t.shared(),
                got: true,
            });
            Ok((t, limit.saturating_sub(started.elapsed()).max(reserve)))
        }
        Err(busy) => {
            herdr.record_turn(TurnTrace {
                waited: busy.waited,
                shared: busy.shared,
                got: false,
            });
            Err(format!(
                "within the time limit of {} ms: {}",
                limit.as_millis(),
                busy.detail
            ))
        }
    }
}

/// Types `wrapper` into the receiver's pane in its delivery turn. The wait for the turn and the
/// prompt share the call's time limit; no turn in time is `SEND_FAILED` with nothing typed, in
/// its own text ([`LinkError::SendNoTurn`]: Herdr was not asked).
fn deliver(herdr: &Herdr, target: &TargetContext, wrapper: &str) -> Result<(), LinkError> {
    let (turn, left) = take_turn(herdr, target).map_err(|why| {
        LinkError::SendNoTurn(format!(
            "no delivery turn for {} {why}; nothing was sent",
            target.name
        ))
    })?;
    let result = herdr.agent_prompt(&target.name, wrapper, left);
    // Herdr typed the text (or may have, when the call broke off): its Enter is now pending.
    if matches!(&result, Ok(_) | Err(CliFailure::Unavailable { .. })) {
        turn.delivered();
    }
    drop(turn);
    result
        .map(|_| ())
        .map_err(|f| f.classify(LinkError::SendFailed))
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
