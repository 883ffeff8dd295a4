//! The operator log: with `HERDR_LINK_LOG=<path>`, one JSON line per operation (time, session,
//! tool, every Herdr argv with its outcome and duration, the Link code and internal detail).
//!
//! This is the only place internal details and raw ids go, and it holds message text (argv
//! excerpts): the file is created mode 0600 and never opened through a symlink. Lines are handed
//! to one background writer through a bounded queue; when the queue is full (a slow or stuck
//! disk) lines are dropped and counted rather than ever blocking or failing a tool call.
//!
//! Every line is an [`Entry`], built by [`Entry::new`] and its setters and nowhere else. The log
//! is a leaf: it imports no other module of the library, and the records it holds (a Herdr call,
//! a delivery turn) are defined here for the modules that make them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::turn::TurnTrace;

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

/// One Herdr CLI invocation, as the log records it (the driver makes one per call).
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

/// The `code` of a line whose operation succeeded.
pub const OK: &str = "ok";

/// One line of the log: a finished operation, or a note that is not one ([`note`]). Made only
/// by [`Entry::new`] and the setters, written by [`Entry::record`] or [`Entry::record_now`].
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    session: &'a str,
    tool: &'a str,
    action: Option<&'a str>,
    calls: &'a [CallTrace],
    code: &'a str,
    detail: &'a str,
    elapsed: Duration,
    turn: Option<&'a TurnTrace>,
}

impl<'a> Entry<'a> {
    /// A line of `session` (the host session key; empty for a note) about `tool` (the canonical
    /// tool name, or the source of a note), with its `code` ([`OK`], a Link code,
    /// `INVALID_REQUEST`, or the note's own code) and internal `detail` (may hold ids and raw
    /// CLI text); no action, no Herdr calls, no wall time and no delivery turn until set.
    pub fn new(session: &'a str, tool: &'a str, code: &'a str, detail: &'a str) -> Self {
        Entry {
            session,
            tool,
            action: None,
            calls: &[],
            code,
            detail,
            elapsed: Duration::ZERO,
            turn: None,
        }
    }

    /// The gateway action (or what a `guard` line was about).
    pub fn action(mut self, action: Option<&'a str>) -> Self {
        self.action = action;
        self
    }

    /// The Herdr calls made, in order.
    pub fn calls(mut self, calls: &'a [CallTrace]) -> Self {
        self.calls = calls;
        self
    }

    /// How the operation waited for a delivery turn (send and close only).
    pub fn turn(mut self, turn: Option<&'a TurnTrace>) -> Self {
        self.turn = turn;
        self
    }

    /// The wall time of the whole operation: from `started` until now.
    pub fn since(mut self, started: Instant) -> Self {
        self.elapsed = started.elapsed();
        self
    }

    /// Appends this line to the log named by `HERDR_LINK_LOG`, if set, through the background
    /// writer. Never blocks, never fails.
    pub fn record(&self) {
        let Some(path) = log_path() else {
            return;
        };
        let line = line(self);
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

    /// Like [`Entry::record`], but appends in the calling thread before returning (one
    /// `O_APPEND` write), for short-lived processes such as the `herdr-link guard` hook that
    /// exit right after. Never fails: a line that cannot be written is dropped.
    pub fn record_now(&self) {
        let Some(path) = log_path() else {
            return;
        };
        let line = line(self);
        if let Ok(mut f) = open_log(std::path::Path::new(&path)) {
            let _ = f.write_all(line.as_bytes());
        } else {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
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

/// Appends a line that is not an operation — an invalid `HERDR_LINK_*` setting, the MCP server's
/// start-up hint — in the same shape: `tool` names its source (`settings`, `mcp`), `code` what
/// it is, `detail` the text; `session` is empty and `calls` is empty.
pub fn note(source: &str, code: &str, detail: &str) {
    Entry::new("", source, code, detail).record();
}
