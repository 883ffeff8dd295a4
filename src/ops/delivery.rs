//! The receiver's delivery turn ([`crate::turn`]) as send and close take it: the key of a
//! resolved target, the turn's own wait (`HERDR_LINK_TURN_WAIT_MS`), and the operator-log trace.

use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use crate::env;
use crate::identity::TargetContext;
use crate::turn::{self, Place, Record, Turn, TurnTrace};

/// The delivery-turn key of `target`: its Herdr socket and resolved pane (the name when Herdr
/// reported no pane). Send and close use the same key, so a close waits for a delivery still
/// being submitted.
pub fn key(target: &TargetContext) -> u64 {
    let receiver = if target.pane_id.is_empty() {
        format!("name:{}", target.name)
    } else {
        target.pane_id.clone()
    };
    turn::receiver_key(&env::socket_path(), &receiver)
}

/// Takes `target`'s delivery turn, waiting at most the turn's own bound ([`env::turn_wait`],
/// separate from the Herdr call limit), and records in `record` how it waited. Returns the turn,
/// or why none came (for the error detail): the queue did not move for the whole wait.
pub fn take(record: &Record, target: &TargetContext) -> Result<Turn, String> {
    let wait = env::turn_wait();
    let place = turn::place();
    note_place(&place);
    let since = SystemTime::now();
    match turn::take(&place, key(target), Instant::now() + wait) {
        Ok(t) => {
            record.set(TurnTrace {
                since,
                waited: t.waited(),
                shared: t.shared(),
                got: true,
            });
            Ok(t)
        }
        Err(busy) => {
            record.set(TurnTrace {
                since,
                waited: busy.waited,
                shared: busy.shared,
                got: false,
            });
            Err(format!(
                "within the turn's wait of {} ms: {}",
                wait.as_millis(),
                busy.detail
            ))
        }
    }
}

/// Writes to the operator log, once per process and reason, where turns are kept when it is not
/// the usual place: `TURNS_NOT_SHARED` (within this process only) or `TURNS_DIR_FALLBACK` (the
/// home state directory, because the `/tmp` one belongs to someone else).
fn note_place(place: &Place) {
    let Some((code, detail)) = place_note(place) else {
        return;
    };
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let first = {
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        let first = seen.len() < 16 && !seen.contains(&detail);
        if first {
            seen.push(detail.clone());
        }
        first
    };
    if first {
        crate::oplog::note("turn", code, &detail);
    }
}

/// The operator-log note for `place`, if it is not the usual place (see [`note_place`]).
fn place_note(place: &Place) -> Option<(&'static str, String)> {
    Some(match place {
        Place::Process(reason) => (
            "TURNS_NOT_SHARED",
            format!("{reason}; delivery turns are kept within this process only"),
        ),
        Place::Shared {
            dir,
            passed_over: Some(why),
            ..
        } => (
            "TURNS_DIR_FALLBACK",
            format!(
                "{why}; delivery turns are kept in {} (shared by every process of this user that sees the same /tmp)",
                dir.display()
            ),
        ),
        Place::Shared { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rundir::Kind;
    use std::path::PathBuf;

    #[test]
    fn the_log_says_when_turns_are_not_shared_or_not_in_the_usual_place() {
        let usual = Place::Shared {
            dir: PathBuf::from("/tmp/herdr-link-7/turns"),
            kind: Kind::Tmp,
            passed_over: None,
        };
        assert_eq!(place_note(&usual), None);
        let fallback = Place::Shared {
            dir: PathBuf::from("/home/u/.local/state/herdr-link/turns"),
            kind: Kind::Home,
            passed_over: Some("/tmp/herdr-link-7 is not a private directory of uid 7".into()),
        };
        let (code, detail) = place_note(&fallback).unwrap();
        assert_eq!(code, "TURNS_DIR_FALLBACK");
        assert!(
            detail.starts_with("/tmp/herdr-link-7 is not a private directory"),
            "{detail}"
        );
        assert!(
            detail.contains("kept in /home/u/.local/state/herdr-link/turns"),
            "{detail}"
        );
        let (code, detail) = place_note(&Place::Process("no home".into())).unwrap();
        assert_eq!(code, "TURNS_NOT_SHARED");
        assert_eq!(
            detail,
            "no home; delivery turns are kept within this process only"
        );
    }
}
