//! The session registry: dormant/active per host session key, in memory only (PROTOCOL §6.2).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard};

static SESSIONS: LazyLock<Mutex<HashMap<String, bool>>> = LazyLock::new(Default::default);

fn sessions() -> MutexGuard<'static, HashMap<String, bool>> {
    SESSIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `key` as dormant, resetting an earlier activation under the same key.
pub fn start(key: &str) {
    sessions().insert(key.to_string(), false);
}

/// Forgets `key`.
pub fn end(key: &str) {
    sessions().remove(key);
}

/// Whether `key` is active (unknown keys are dormant).
pub fn is_active(key: &str) -> bool {
    sessions().get(key).copied().unwrap_or(false)
}

/// What this process's presence ([`crate::presence`]) answers the exec guard for a command
/// carrying the session marker `marker`: that session's state when this process knows it;
/// for an unknown or missing marker, whether any session is active (a command this process
/// started without a marker of its own), or "no" when the asker wants that `exact` session
/// only (it may belong to another process).
pub fn exec_answer(marker: Option<&str>, exact: bool) -> bool {
    let map = sessions();
    match marker.and_then(|m| map.get(m)) {
        Some(&active) => active,
        None if exact => false,
        None => map.values().any(|&a| a),
    }
}

/// Activates `key` (registering it if needed); true only when this call moved it from dormant.
pub fn activate(key: &str) -> bool {
    let mut map = sessions();
    let active = map.entry(key.to_string()).or_insert(false);
    let changed = !*active;
    *active = true;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle() {
        let k = "session-test-lifecycle";
        assert!(!is_active(k));
        start(k);
        assert!(!is_active(k));
        assert!(activate(k));
        assert!(!activate(k));
        assert!(is_active(k));
        start(k);
        assert!(!is_active(k));
        assert!(activate(k));
        end(k);
        assert!(!is_active(k));
    }

    #[test]
    fn exec_answers_are_per_session() {
        let (a, b) = ("session-test-exec-a", "session-test-exec-b");
        start(a);
        start(b);
        assert!(!exec_answer(Some(b), false));
        activate(a);
        assert!(exec_answer(Some(a), false));
        assert!(exec_answer(Some(a), true));
        assert!(
            !exec_answer(Some(b), false),
            "b never activated: a's activation stays a's"
        );
        assert!(!exec_answer(Some(b), true));
        // Unknown or missing markers: any active session of the process counts, unless exact.
        assert!(exec_answer(Some("session-test-exec-unknown"), false));
        assert!(exec_answer(None, false));
        assert!(!exec_answer(Some("session-test-exec-unknown"), true));
        end(a);
        end(b);
    }
}
