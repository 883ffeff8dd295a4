//! The operator log: with `HERDR_LINK_LOG=<path>`, one JSON line per operation (time, session,
//! tool, every Herdr argv with its outcome and duration, the Link code and internal detail).
//!
//! This is the only place internal details and raw ids go, and it holds message text (argv
//! excerpts): the file is created mode 0600 and never opened through a symlink. Lines are handed
//! to one background writer through a bounded queue; when the queue is full (a slow or stuck
//! disk) lines are dropped and counted rather than ever blocking or failing a tool call.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::turn::TurnTrace;

/// One Herdr CLI invocation as the log reports it (the driver, [`crate::herdr`], records one per
/// call; defined here so the log needs nothing above it).
#[derive(Debug, Clone)]
pub struct CallTrace {
    /// The argv after the executable.
    pub argv: Vec<String>,
    /// `exit=N`, `signal=N`, `timeout`, `spawn-failed`, `args-too-long`, `too-large` or
    /// `io-error`.
    pub outcome: String,
    /// Wall time of the call.
    pub duration: Duration,
}

/// Lines waiting for the writer at most; beyond that new lines are dropped.
pub const QUEUE_DEPTH: usize = 1024;
/// The longest argv element kept in the log (wrapper texts are long).
pub const MAX_ARG_CHARS: usize = 200;

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// A log line and the file it goes to.
type Line = (String, String);

static WRITER: LazyLock<Mutex<Option<SyncSender<Line>>>> = LazyLock::new(|| Mutex::new(None));

/// How many lines were dropped because the writer could not keep up.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

fn sender() -> Option<SyncSender<Line>> {
    let mut slot = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let (tx, rx) = sync_channel::<Line>(QUEUE_DEPTH);
        std::thread::Builder::new()
            .name("herdr-link-oplog".into())
            .spawn(move || {
                for (path, line) in rx {
                    if let Ok(mut f) = open_log(std::path::Path::new(&path)) {
                        let _ = f.write_all(line.as_bytes());
                    }
                }
            })
            .ok()?;
        *slot = Some(tx);
    }
    slot.clone()
}

/// Opens the log for one append: created mode 0600 (it holds message text), never through a
/// symlink (`O_NOFOLLOW`: a symlink at the path loses the line). An existing log of ours that
/// others may read (one an older version created 0644 under the default umask) is closed to
/// them first.
pub fn open_log(path: &std::path::Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    // SAFETY: getuid cannot fail.
    let ours = meta.uid() == unsafe { libc::getuid() };
    if ours && meta.is_file() && meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o700))?;
    }
    Ok(file)
}

/// Milliseconds with microsecond precision (no float noise in the log).
fn millis(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

fn clip(arg: &str) -> String {
    if arg.chars().count() <= MAX_ARG_CHARS {
        arg.to_string()
    } else {
        let head: String = arg.chars().take(MAX_ARG_CHARS).collect();
        format!("{head}…(+{} chars)", arg.chars().count() - MAX_ARG_CHARS)
    }
}

/// One finished operation, as the log records it.
pub struct Entry<'a> {
    /// Host session key.
    pub session: &'a str,
    /// Canonical tool name.
    pub tool: &'a str,
    /// Gateway action, if any.
    pub action: Option<&'a str>,
    /// Herdr calls made, in order.
    pub calls: &'a [CallTrace],
    /// `ok`, a Link code, or `INVALID_REQUEST`.
    pub code: &'a str,
    /// Internal detail (may contain ids and raw CLI text).
    pub detail: &'a str,
    /// Wall time of the whole operation.
    pub elapsed: Duration,
    /// How a send or close waited for its delivery turn (`None` for everything else).
    pub turn: Option<&'a TurnTrace>,
}

fn log_path() -> Option<std::ffi::OsString> {
    std::env::var_os("HERDR_LINK_LOG").filter(|p| !p.is_empty())
}

/// The JSON line (with its newline) for `entry`.
fn line(entry: &Entry<'_>) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let calls: Vec<Value> = entry
        .calls
        .iter()
        .map(|c| {
            json!({
                "argv": c.argv.iter().map(|a| clip(a)).collect::<Vec<_>>(),
                "outcome": c.outcome,
                "ms": millis(c.duration),
            })
        })
        .collect();
    json!({
        "ts": now.as_secs_f64(),
        "session": entry.session,
        "tool": entry.tool,
        "action": entry.action,
        "code": entry.code,
        "detail": entry.detail,
        "ms": millis(entry.elapsed),
        "calls": calls,
        "turn": entry.turn.map(|t| json!({
            "since": t.since.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64(),
            "wait_ms": millis(t.waited),
            "got": t.got,
            "shared": t.shared,
        })),
    })
    .to_string()
        + "\n"
}

/// Appends `entry` to the log named by `HERDR_LINK_LOG`, if set. Never blocks, never fails.
pub fn record(entry: &Entry<'_>) {
    let Some(path) = log_path() else {
        return;
    };
    let line = line(entry);
    let Some(tx) = sender() else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    };
    match tx.try_send((path.to_string_lossy().into_owned(), line)) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Appends a line that is not an operation — an invalid `HERDR_LINK_*` setting, the MCP server's
/// start-up hint — in the same shape: `tool` names its source (`settings`, `mcp`), `code` what
/// it is, `detail` the text; `session` is empty and `calls` is empty.
pub fn note(source: &str, code: &str, detail: &str) {
    record(&Entry {
        session: "",
        tool: source,
        action: None,
        calls: &[],
        code,
        detail,
        elapsed: Duration::ZERO,
        turn: None,
    });
}

/// Like [`record`], but appends in the calling thread before returning (one `O_APPEND` write),
/// for short-lived processes such as the `herdr-link guard` hook that exit right after.
/// Never fails: a line that cannot be written is dropped.
pub fn record_now(entry: &Entry<'_>) {
    let Some(path) = log_path() else {
        return;
    };
    let line = line(entry);
    if let Ok(mut f) = open_log(std::path::Path::new(&path)) {
        let _ = f.write_all(line.as_bytes());
    } else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}
