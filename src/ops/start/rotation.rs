//! Round-robin cursors for configured starts: one per (absolute config path, config_agent), in
//! process memory only. Starts on the same key are serialized; different keys run concurrently.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};

use crate::error::LinkError;

/// Per-key lock holding that key's cursor.
static CURSORS: LazyLock<Mutex<HashMap<String, Arc<Mutex<usize>>>>> =
    LazyLock::new(Default::default);

fn key(path: &Path, config_agent: &str) -> String {
    format!("{}\u{0}{config_agent}", path.display())
}

/// Runs `f` with the key's current cursor while holding the key's lock. On success `f` returns
/// the receipt and the next cursor, which is stored; on failure the cursor stays where it was.
pub fn with_cursor<T>(
    path: &Path,
    config_agent: &str,
    f: impl FnOnce(usize) -> Result<(T, usize), LinkError>,
) -> Result<T, LinkError> {
    let slot = CURSORS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key(path, config_agent))
        .or_default()
        .clone();
    let mut cursor = slot.lock().unwrap_or_else(|e| e.into_inner());
    let (value, next) = f(*cursor)?;
    *cursor = next;
    Ok(value)
}
