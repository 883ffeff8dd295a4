//! The environment gate (PROTOCOL §6.1) and the driver's settings, read fresh on every call.

use std::time::Duration;

/// Default limit for one Herdr CLI call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit for `agent start`: longer than Herdr's own 30 s startup deadline.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(45);

/// What a Herdr pane gives its processes; present only when the gate is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HerdrEnv {
    /// `HERDR_BIN_PATH`: the Herdr executable.
    pub bin: String,
    /// `HERDR_PANE_ID`: the caller's pane at launch time (only used to ask Herdr who we are).
    pub pane_id: String,
}

/// The gate: `HERDR_ENV=1` and non-empty `HERDR_BIN_PATH` and `HERDR_PANE_ID`, or nothing.
/// `HERDR_WORKSPACE_ID` / `HERDR_TAB_ID` are never read: they go stale when a pane moves.
pub fn gate() -> Option<HerdrEnv> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if var("HERDR_ENV").as_deref() != Some("1") {
        return None;
    }
    Some(HerdrEnv {
        bin: var("HERDR_BIN_PATH")?,
        pane_id: var("HERDR_PANE_ID")?,
    })
}

fn millis(key: &str) -> Option<Duration> {
    let v = std::env::var(key).ok()?;
    let ms: u64 = v.trim().parse().ok()?;
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// The limit for ordinary calls: `HERDR_LINK_TIMEOUT_MS`, else 10 s.
pub fn call_timeout() -> Duration {
    millis("HERDR_LINK_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT)
}

/// The limit for `agent start`: `HERDR_LINK_START_TIMEOUT_MS`, else 45 s.
pub fn start_timeout() -> Duration {
    millis("HERDR_LINK_START_TIMEOUT_MS").unwrap_or(DEFAULT_START_TIMEOUT)
}
