//! The environment gate (PROTOCOL §6.1) and the driver's settings, read fresh on every call.
//!
//! Also what an operator needs when either goes wrong: [`bin_path_hint`] when the gate is closed
//! only because Herdr before 0.8.2 does not set `HERDR_BIN_PATH` in panes, and
//! [`invalid_settings`] for `HERDR_LINK_*` values that cannot be used (each is also written once
//! to the operator log, naming the default used instead: [`take_unreported`]). Neither ever reaches the model.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Default limit for one Herdr CLI call.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit for `agent start`: longer than Herdr's own 30 s startup deadline.
pub(crate) const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(45);
/// Default wait for a delivery turn (`turn::WAIT` says why 48 s).
pub const DEFAULT_TURN_WAIT: Duration = Duration::from_secs(48);
/// Default margin after a 0.8 Enter (`turn::MARGIN` says why 25 ms).
pub const DEFAULT_TURN_MARGIN: Duration = Duration::from_millis(25);

/// The longest part of an invalid value quoted back to the operator.
const MAX_QUOTED_CHARS: usize = 40;

/// What a Herdr pane gives its processes; present only when the gate is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HerdrEnv {
    /// `HERDR_BIN_PATH`: the Herdr executable.
    pub bin: String,
    /// `HERDR_PANE_ID`: the caller's pane at launch time (only used to ask Herdr who we are).
    pub pane_id: String,
}

fn var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// The gate's three variables as read now: `HERDR_ENV=1`, `HERDR_BIN_PATH`, `HERDR_PANE_ID`.
fn gate_vars() -> (bool, Option<String>, Option<String>) {
    (
        var("HERDR_ENV").as_deref() == Some("1"),
        var("HERDR_BIN_PATH"),
        var("HERDR_PANE_ID"),
    )
}

/// The gate: `HERDR_ENV=1` and non-empty `HERDR_BIN_PATH` and `HERDR_PANE_ID`, or nothing.
/// `HERDR_WORKSPACE_ID` / `HERDR_TAB_ID` are never read: they go stale when a pane moves.
pub fn gate() -> Option<HerdrEnv> {
    match gate_vars() {
        (true, Some(bin), Some(pane_id)) => Some(HerdrEnv { bin, pane_id }),
        _ => None,
    }
}

/// What keeps the gate closed, in the gate's order (`HERDR_ENV=1`, `HERDR_BIN_PATH`,
/// `HERDR_PANE_ID`); empty exactly when [`gate`] is open. For `herdr-link doctor`.
pub fn gate_missing() -> Vec<&'static str> {
    let (on, bin, pane) = gate_vars();
    let mut missing = Vec::new();
    if !on {
        missing.push("HERDR_ENV=1");
    }
    if bin.is_none() {
        missing.push("HERDR_BIN_PATH");
    }
    if pane.is_none() {
        missing.push("HERDR_PANE_ID");
    }
    missing
}

/// `HERDR_SOCKET_PATH` (empty when unset): which Herdr server the CLI talks to, so deliveries to
/// panes of different servers never share a turn ([`crate::turn`]).
pub fn socket_path() -> String {
    var("HERDR_SOCKET_PATH").unwrap_or_default()
}

/// The first executable `herdr` on `PATH`, as an absolute path (symlinks are not followed, so
/// the path survives upgrades that move the real binary): [`crate::paths::on_path`].
pub fn herdr_on_path() -> Option<PathBuf> {
    crate::paths::on_path(crate::paths::HERDR)
}

/// The operator hint for the one closed gate that has a one-line fix: `HERDR_ENV=1` and
/// `HERDR_PANE_ID` are set but `HERDR_BIN_PATH` is not (Herdr before 0.8.2 sets no
/// `HERDR_BIN_PATH` in panes). Names the `herdr` found on `PATH` in the exact `export` to run.
/// `None` when the gate is open or closed for another reason. The gate itself is unchanged.
pub fn bin_path_hint() -> Option<String> {
    if gate_missing() != ["HERDR_BIN_PATH"] {
        return None;
    }
    let fix = match herdr_on_path() {
        Some(p) => format!(
            "export HERDR_BIN_PATH={}",
            crate::paths::shell_word(&p.to_string_lossy())
        ),
        None => "no `herdr` was found on PATH; export HERDR_BIN_PATH=/absolute/path/to/herdr"
            .to_string(),
    };
    Some(format!(
        "the Herdr Link gate is closed: HERDR_ENV=1 and HERDR_PANE_ID are set but HERDR_BIN_PATH \
         is not, so no Link tools are offered here. Herdr before 0.8.2 does not set \
         HERDR_BIN_PATH in panes (0.8.2 and later set it themselves). Fix: {fix}"
    ))
}

/// A `HERDR_LINK_*` variable whose value cannot be used; the default is used instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSetting {
    /// The variable.
    pub key: &'static str,
    /// Its value (whole; [`InvalidSetting::message`] quotes a short prefix).
    pub value: String,
    /// What is used instead, e.g. `10000 ms`.
    pub default: String,
    /// What the value must be, e.g. `a whole number of milliseconds above 0`.
    pub expected: &'static str,
}

impl InvalidSetting {
    /// One line for the operator: the variable, (a prefix of) its value, what it must be, and the
    /// default used.
    pub fn message(&self) -> String {
        let shown: String = self.value.chars().take(MAX_QUOTED_CHARS).collect();
        let more = if self.value.chars().count() > MAX_QUOTED_CHARS {
            "…"
        } else {
            ""
        };
        format!(
            "{}={shown:?}{more} is not {}; the default {} is used",
            self.key, self.expected, self.default
        )
    }
}

/// What a millisecond setting must be.
const MILLIS_EXPECTED: &str = "a whole number of milliseconds above 0";
/// What a switch must be.
const SWITCH_EXPECTED: &str = "1 or 0 (also true/false, yes/no, on/off)";

/// Default bound for a delivered message to be taken up (the receiver seen `working`).
pub const DEFAULT_TAKEN_UP: Duration = Duration::from_secs(15);

/// Where each millisecond setting sits in [`MILLIS`] (named, so a new row cannot shift a getter
/// onto another setting; a unit test checks each name).
const TIMEOUT_AT: usize = 0;
const START_TIMEOUT_AT: usize = 1;
const TURN_WAIT_AT: usize = 2;
const TURN_MARGIN_AT: usize = 3;
const TAKEN_UP_AT: usize = 4;

/// The millisecond settings: variable and default.
const MILLIS: [(&str, Duration); 5] = [
    ("HERDR_LINK_TIMEOUT_MS", DEFAULT_TIMEOUT),
    ("HERDR_LINK_START_TIMEOUT_MS", DEFAULT_START_TIMEOUT),
    ("HERDR_LINK_TURN_WAIT_MS", DEFAULT_TURN_WAIT),
    ("HERDR_LINK_TURN_MARGIN_MS", DEFAULT_TURN_MARGIN),
    ("HERDR_LINK_TAKEN_UP_MS", DEFAULT_TAKEN_UP),
];

/// The on/off settings: variable and default.
const SWITCHES: [(&str, bool); 3] = [
    // The operator log's off switch (docs/operator-log.md).
    ("HERDR_LINK_LOG_OFF", false),
    // Whether the operator log keeps message text (a preview and the delivered wrapper's start).
    ("HERDR_LINK_LOG_TEXT", true),
    // Whether a delivered message is followed until the receiver takes it up (or the bound).
    ("HERDR_LINK_FOLLOW", true),
];

/// Every variable the library reads that a host starting the MCP server with a clean environment
/// must pass on (Codex passes only what its config names): Herdr's pane variables, the operator
/// log's place, and every `HERDR_LINK_*` setting, the last built from the settings tables so a
/// new setting reaches such hosts without a second list.
pub fn passed_variables() -> Vec<&'static str> {
    let mut vars = vec![
        "HERDR_ENV",
        "HERDR_BIN_PATH",
        "HERDR_PANE_ID",
        "HERDR_SOCKET_PATH",
        "HERDR_LINK_LOG",
        "XDG_STATE_HOME",
    ];
    vars.extend(MILLIS.iter().map(|(k, _)| *k));
    vars.extend(SWITCHES.iter().map(|(k, _)| *k));
    vars
}

/// `Ok(None)` when unset or empty, `Err` when set to something unusable.
fn parse_millis(key: &'static str, default: Duration) -> Result<Option<Duration>, InvalidSetting> {
    let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let text = v.to_string_lossy().into_owned();
    match text.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
        _ => Err(InvalidSetting {
            key,
            value: text,
            default: format!("{} ms", default.as_millis()),
            expected: MILLIS_EXPECTED,
        }),
    }
}

/// `Ok(None)` when unset or empty, `Err` when set to something that is not a switch.
fn parse_switch(key: &'static str, default: bool) -> Result<Option<bool>, InvalidSetting> {
    let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let text = v.to_string_lossy().into_owned();
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(InvalidSetting {
            key,
            value: text,
            default: if default { "1" } else { "0" }.to_string(),
            expected: SWITCH_EXPECTED,
        }),
    }
}

/// Every `HERDR_LINK_*` setting whose current value cannot be used (for `herdr-link doctor`).
/// Pure: writes nothing.
pub fn invalid_settings() -> Vec<InvalidSetting> {
    MILLIS
        .iter()
        .filter_map(|(k, d)| parse_millis(k, *d).err())
        .chain(
            SWITCHES
                .iter()
                .filter_map(|(k, d)| parse_switch(k, *d).err()),
        )
        .collect()
}

/// Invalid settings met and not yet handed to the operator log.
static UNREPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps an invalid setting for the operator log, once per process for each variable and value.
/// (The log takes it with [`take_unreported`]; this module never writes the log itself, so the
/// log may read its own settings here.)
fn report_once(bad: &InvalidSetting) {
    static SEEN: Mutex<Option<HashSet<(&'static str, String)>>> = Mutex::new(None);
    let first = {
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        seen.get_or_insert_with(HashSet::new)
            .insert((bad.key, bad.value.clone()))
    };
    if first {
        UNREPORTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(bad.message());
    }
}

/// The messages of invalid settings met since the last call (each once per process and
/// value), for the operator log's `INVALID_SETTING` lines.
pub fn take_unreported() -> Vec<String> {
    std::mem::take(&mut *UNREPORTED.lock().unwrap_or_else(|e| e.into_inner()))
}

fn millis(key: &'static str, default: Duration) -> Duration {
    match parse_millis(key, default) {
        Ok(v) => v.unwrap_or(default),
        Err(bad) => {
            report_once(&bad);
            default
        }
    }
}

fn switch(key: &'static str, default: bool) -> bool {
    match parse_switch(key, default) {
        Ok(v) => v.unwrap_or(default),
        Err(bad) => {
            report_once(&bad);
            default
        }
    }
}

/// The operator log's off switch: `HERDR_LINK_LOG_OFF=1` writes no log at all, whatever
/// `HERDR_LINK_LOG` says. Off by default: the log is written without any setting.
pub fn log_off() -> bool {
    switch(SWITCHES[0].0, SWITCHES[0].1)
}

/// Whether the operator log keeps message text (`HERDR_LINK_LOG_TEXT`, default 1): a preview
/// of each sent message and the start of each delivered wrapper. With 0 the log keeps only
/// sizes, names and outcomes (docs/operator-log.md, "Privacy").
pub fn log_text() -> bool {
    switch(SWITCHES[1].0, SWITCHES[1].1)
}

/// Whether a delivered message is followed until its receiver takes it up
/// (`HERDR_LINK_FOLLOW`, default 1; never when the log is off: it only writes log lines).
pub fn follow() -> bool {
    switch(SWITCHES[2].0, SWITCHES[2].1) && !log_off()
}

/// How long a delivered message has to be taken up (its receiver seen `working`) before the log
/// calls it "delivered, not taken up": `HERDR_LINK_TAKEN_UP_MS`, else [`DEFAULT_TAKEN_UP`].
pub fn taken_up_bound() -> Duration {
    millis(MILLIS[TAKEN_UP_AT].0, MILLIS[TAKEN_UP_AT].1)
}

/// The limit for ordinary calls: `HERDR_LINK_TIMEOUT_MS`, else 10 s.
pub fn call_timeout() -> Duration {
    millis(MILLIS[TIMEOUT_AT].0, MILLIS[TIMEOUT_AT].1)
}

/// The limit for `agent start`: `HERDR_LINK_START_TIMEOUT_MS`, else 45 s.
pub fn start_timeout() -> Duration {
    millis(MILLIS[START_TIMEOUT_AT].0, MILLIS[START_TIMEOUT_AT].1)
}

/// How long a send or close waits for the receiver's delivery turn: `HERDR_LINK_TURN_WAIT_MS`,
/// else [`DEFAULT_TURN_WAIT`]. Separate from the call limit: the Herdr call made in the turn
/// still gets the whole of [`call_timeout`].
pub fn turn_wait() -> Duration {
    millis(MILLIS[TURN_WAIT_AT].0, MILLIS[TURN_WAIT_AT].1)
}

/// How long after a receiver's last Enter is due the next delivery to it types, on a Herdr that
/// answers a prompt before its Enter (0.8): `HERDR_LINK_TURN_MARGIN_MS`, else
/// [`DEFAULT_TURN_MARGIN`]. Raise it on a machine so loaded that Herdr's Enter comes late.
pub fn turn_margin() -> Duration {
    millis(MILLIS[TURN_MARGIN_AT].0, MILLIS[TURN_MARGIN_AT].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_getter_reads_its_own_setting() {
        assert_eq!(MILLIS[TIMEOUT_AT].0, "HERDR_LINK_TIMEOUT_MS");
        assert_eq!(MILLIS[START_TIMEOUT_AT].0, "HERDR_LINK_START_TIMEOUT_MS");
        assert_eq!(MILLIS[TURN_WAIT_AT].0, "HERDR_LINK_TURN_WAIT_MS");
        assert_eq!(MILLIS[TURN_MARGIN_AT].0, "HERDR_LINK_TURN_MARGIN_MS");
        assert_eq!(MILLIS[TAKEN_UP_AT].0, "HERDR_LINK_TAKEN_UP_MS");
        assert_eq!(SWITCHES[0].0, "HERDR_LINK_LOG_OFF");
        assert_eq!(SWITCHES[1].0, "HERDR_LINK_LOG_TEXT");
        assert_eq!(SWITCHES[2].0, "HERDR_LINK_FOLLOW");
        let passed = passed_variables();
        let settings = MILLIS.iter().map(|(k, _)| k);
        for k in settings.chain(SWITCHES.iter().map(|(k, _)| k)) {
            assert!(passed.contains(k), "{k} is not passed on");
        }
    }

    #[test]
    fn invalid_values_name_the_default_and_quote_a_short_prefix() {
        let bad = InvalidSetting {
            key: "HERDR_LINK_TIMEOUT_MS",
            value: "abc".into(),
            default: "10000 ms".into(),
            expected: MILLIS_EXPECTED,
        };
        assert_eq!(
            bad.message(),
            "HERDR_LINK_TIMEOUT_MS=\"abc\" is not a whole number of milliseconds above 0; the default 10000 ms is used"
        );
        let long = InvalidSetting {
            value: "9".repeat(10_000),
            ..bad
        };
        assert!(long.message().len() < 200, "{}", long.message());
    }

    #[test]
    fn switches_take_words_and_name_the_default_when_unusable() {
        // A variable no other test touches.
        const KEY: &str = "HERDR_LINK_TEST_SWITCH";
        for (v, want) in [
            ("1", true),
            ("on", true),
            ("YES", true),
            ("0", false),
            ("off", false),
        ] {
            std::env::set_var(KEY, v);
            assert_eq!(parse_switch(KEY, !want), Ok(Some(want)), "{v}");
        }
        std::env::set_var(KEY, "");
        assert_eq!(parse_switch(KEY, true), Ok(None));
        std::env::set_var(KEY, "maybe");
        let bad = parse_switch(KEY, true).unwrap_err();
        assert_eq!(
            bad.message(),
            "HERDR_LINK_TEST_SWITCH=\"maybe\" is not 1 or 0 (also true/false, yes/no, on/off); the default 1 is used"
        );
        std::env::remove_var(KEY);
    }
}
