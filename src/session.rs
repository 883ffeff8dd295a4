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

/// Whether any session of this process is active (what the process's presence answers,
/// [`crate::presence`]).
pub fn any_active() -> bool {
    sessions().values().any(|&a| a)
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
}
