//! The operator log: one JSON line per operation (time, session, tool, every Herdr argv with its
//! outcome and duration, the Link code and internal detail, what a send sent), written by
//! default to one file per user below the XDG state directory ([`path`]) so that every Link
//! process of the user writes to the same file; `HERDR_LINK_LOG=<path>` names another file and
//! `HERDR_LINK_LOG_OFF=1` turns it off ([`crate::env`]).
//!
//! This is the only place internal details and raw ids go, and it holds message text (unless
//! `HERDR_LINK_LOG_TEXT=0`): the file is created mode 0600 and never opened through a symlink.
//! Each file is bounded: a line that would take it past [`MAX_BYTES`] first renames it to
//! `<path>.1` ([`append`], under a lock every writer takes). Entries are handed to one background
//! writer through a bounded queue, which makes their JSON lines and appends them; when the queue
//! is full (a slow or stuck disk) lines are dropped and counted rather than ever blocking or
//! failing a tool call.
//!
//! Every line is an [`Entry`], built by [`Entry::new`] and its setters and nowhere else. The
//! records it holds (a Herdr call, a delivery turn, a message) are defined here or in the
//! modules that make them; the log reads only the settings and the path helpers besides.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
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
/// The longest message preview kept in the log.
pub(crate) const MAX_PREVIEW_CHARS: usize = 160;
/// A log file is rotated when a line would take it past this many bytes: it becomes
/// `<path>.1` (replacing the one before), so the log takes at most twice this on disk.
pub const MAX_BYTES: u64 = 4 << 20;
/// The default log below the user's state directory ([`crate::paths::state_dir`]).
pub(crate) const DEFAULT_SUBPATH: &str = "herdr-link/log.jsonl";

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// What the background writer is handed: a log line, the file it goes to, and whether that
/// file's missing directory may be made (only the default one: a missing directory of a chosen
/// path loses the line); or a request to answer once every line before it is written.
enum Job {
    Line(PathBuf, Box<Owned>, bool),
    Flush(SyncSender<()>),
}

/// An [`Entry`] with its parts owned and its time and text setting taken, so the writer can
/// make its line: the JSON is built off the calling thread, after the call has returned.
struct Owned {
    at: SystemTime,
    keep_text: bool,
    session: String,
    tool: String,
    action: Option<String>,
    calls: Vec<CallTrace>,
    code: String,
    detail: String,
    elapsed: Duration,
    turn: Option<TurnTrace>,
    message: Option<MessageTrace>,
}

impl Owned {
    fn of(entry: &Entry<'_>) -> Owned {
        Owned {
            at: SystemTime::now(),
            keep_text: crate::env::log_text(),
            session: entry.session.to_string(),
            tool: entry.tool.to_string(),
            action: entry.action.map(str::to_string),
            calls: entry.calls.to_vec(),
            code: entry.code.to_string(),
            detail: entry.detail.to_string(),
            elapsed: entry.elapsed,
            turn: entry.turn.cloned(),
            message: entry.message.cloned(),
        }
    }
}

static WRITER: LazyLock<Mutex<Option<SyncSender<Job>>>> = LazyLock::new(|| Mutex::new(None));

/// How many lines were dropped because the writer could not keep up.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

fn sender() -> Option<SyncSender<Job>> {
    let mut slot = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let (tx, rx) = sync_channel::<Job>(QUEUE_DEPTH);
        std::thread::Builder::new()
            .name("herdr-link-oplog".into())
            .spawn(move || {
                for job in rx {
                    match job {
                        Job::Line(path, entry, make_dir) => {
                            let _ = write_line(&path, &line(&entry), make_dir);
                        }
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })
            .ok()?;
        *slot = Some(tx);
    }
    slot.clone()
}

/// Gives a job to the writer; counts it dropped when the writer cannot take it.
fn hand_over(job: Job) {
    let Some(tx) = sender() else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    };
    match tx.try_send(job) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

thread_local! {
    /// Lines this thread recorded while a [`Hold`] is in force.
    static HELD: std::cell::RefCell<Option<Vec<Job>>> = const { std::cell::RefCell::new(None) };
}

/// While it lives, lines recorded on this thread wait; they go to the writer when it is
/// dropped. The MCP server holds them until a call's answer is written, so the writer does not
/// wake (and take a CPU) in the moment the host is being woken to read it.
#[must_use = "lines are held only while the Hold lives"]
pub struct Hold {
    outer: bool,
}

/// Holds this thread's lines until the returned [`Hold`] is dropped (nested holds release at
/// the outermost one).
pub fn hold() -> Hold {
    let outer = HELD.with_borrow_mut(|held| held.is_none() && held.replace(Vec::new()).is_none());
    Hold { outer }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.outer {
            for job in HELD.with_borrow_mut(Option::take).unwrap_or_default() {
                hand_over(job);
            }
        }
    }
}

/// Waits, at most `within`, until every line handed to the background writer so far is in its
/// file; says whether they all are. A process about to exit calls it (the MCP server at EOF):
/// lines still queued would be lost with the process, and a line cut by the exit mid-write would
/// leave a broken one that the next writer's line runs into.
pub fn flush(within: Duration) -> bool {
    let started = WRITER.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(tx) = started else {
        return true;
    };
    let deadline = Instant::now() + within;
    let (done_tx, done_rx) = sync_channel(1);
    let mut job = Job::Flush(done_tx);
    loop {
        match tx.try_send(job) {
            Ok(()) => break,
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                job = back;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TrySendError::Full(_)) => return false,
        }
    }
    done_rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .is_ok()
}

/// Opens the log for one append: created mode 0600 (it holds message text), never through a
/// symlink (`O_NOFOLLOW`: a symlink at the path loses the line). An existing log of ours that
/// others may read (one an older version created 0644 under the default umask) is closed to
/// them first.
pub(crate) fn open_log(path: &std::path::Path) -> std::io::Result<File> {
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

/// Where lines go now: nowhere with `HERDR_LINK_LOG_OFF=1`; else the file `HERDR_LINK_LOG`
/// names; else [`default_path`]. The flag says whether it is the default (whose missing
/// directory is made, mode 0700).
pub fn path() -> Option<(PathBuf, bool)> {
    if crate::env::log_off() {
        return None;
    }
    match std::env::var_os("HERDR_LINK_LOG").filter(|p| !p.is_empty()) {
        Some(p) => Some((PathBuf::from(p), false)),
        None => default_path().map(|p| (p, true)),
    }
}

/// `$XDG_STATE_HOME/herdr-link/log.jsonl`, else `~/.local/state/herdr-link/log.jsonl` (the
/// home directory from `HOME`): one file for every Link process of the user.
pub fn default_path() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_STATE_HOME");
    let home = std::env::var_os("HOME");
    crate::paths::state_dir(xdg.as_deref(), home.as_deref()).map(|d| d.join(DEFAULT_SUBPATH))
}

/// The previous generation of the log at `path`: `<path>.1`.
pub fn rotated(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}

fn write_line(path: &Path, line: &str, make_dir: bool) -> std::io::Result<()> {
    if make_dir {
        if let Some(dir) = path.parent().filter(|d| !d.exists()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    append(path, line, MAX_BYTES)
}

/// Appends `line` to the log at `path` as one `O_APPEND` write, rotating first when the line
/// would take a regular file past `max_bytes` (and it is not empty): the file is renamed to
/// [`rotated`]`(path)` and the line starts a new one. Every writer takes an exclusive `flock`
/// on the file before it looks at the size, and writes only to the file still at `path`, so
/// writers of several processes rotate once and lose no line. A FIFO or device is written
/// without rotation.
pub fn append(path: &Path, line: &str, max_bytes: u64) -> std::io::Result<()> {
    for _ in 0..8 {
        let mut file = open_log(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return file.write_all(line.as_bytes());
        }
        // SAFETY: a valid open descriptor; the lock goes with it when `file` is closed.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // Renamed away while we waited for the lock: open what is at the path now.
        match std::fs::symlink_metadata(path) {
            Ok(now) if now.ino() == meta.ino() && now.dev() == meta.dev() => {}
            _ => continue,
        }
        let size = file.metadata()?.len();
        if size > 0 && size + line.len() as u64 > max_bytes {
            std::fs::rename(path, rotated(path))?;
            continue;
        }
        return file.write_all(line.as_bytes());
    }
    Err(std::io::Error::other(
        "the log kept being rotated by others",
    ))
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
    message: Option<&'a MessageTrace>,
}

/// What a send (or the follow-up of a delivered message) was about, for its line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageTrace {
    /// The sender's Agent Name (empty when the send failed before it was known).
    pub from: String,
    /// The receiver as the model named it.
    pub to: String,
    /// The message id (empty when nothing was sent).
    pub id: String,
    /// The sender's workspace id (empty when not known).
    pub workspace: String,
    /// The message text as the model gave it (the log keeps a preview, or only its length).
    pub text: String,
    /// The receiver's Herdr state just before delivery (`idle`, `working`, …; empty when the
    /// send did not get that far).
    pub receiver_state: String,
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
            message: None,
        }
    }

    /// What a send was about (sends and follow-ups only).
    pub fn message(mut self, message: Option<&'a MessageTrace>) -> Self {
        self.message = message;
        self
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

    /// Appends this line to the log ([`path`]), unless it is off, through the background
    /// writer. Never blocks, never fails.
    pub fn record(&self) {
        let Some((path, make_dir)) = logging() else {
            return;
        };
        let job = Job::Line(path, Box::new(Owned::of(self)), make_dir);
        let job = HELD.with_borrow_mut(|held| match held {
            Some(jobs) => {
                jobs.push(job);
                None
            }
            None => Some(job),
        });
        if let Some(job) = job {
            hand_over(job);
        }
    }

    /// Like [`Entry::record`], but appends in the calling thread before returning (one
    /// `O_APPEND` write), for short-lived processes such as the `herdr-link guard` hook that
    /// exit right after. Never fails: a line that cannot be written is dropped.
    pub fn record_now(&self) {
        let Some((path, make_dir)) = logging() else {
            return;
        };
        if write_line(&path, &line(&Owned::of(self)), make_dir).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// [`path`], after writing the invalid settings met so far (`INVALID_SETTING` notes); with the
/// log off they are dropped.
fn logging() -> Option<(PathBuf, bool)> {
    let target = path();
    for message in crate::env::take_unreported() {
        if target.is_some() {
            note("settings", "INVALID_SETTING", &message);
        }
    }
    target
}

/// An argv as the log keeps it: each element clipped, and without message text the delivered
/// wrapper of `agent prompt` reduced to its length.
fn logged_argv(argv: &[String], keep_text: bool) -> Vec<String> {
    let prompt = argv.len() > 3 && argv[0] == "agent" && argv[1] == "prompt";
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            if prompt && i >= 3 && !keep_text {
                format!("…({} chars; text not kept)", a.chars().count())
            } else {
                clip(a)
            }
        })
        .collect()
}

/// The `message` object of a line.
fn message_json(m: &MessageTrace, keep_text: bool) -> Value {
    let chars = m.text.chars().count();
    let preview = keep_text.then(|| {
        let head: String = m.text.chars().take(MAX_PREVIEW_CHARS).collect();
        if chars > MAX_PREVIEW_CHARS {
            head + "…"
        } else {
            head
        }
    });
    json!({
        "from": m.from,
        "to": m.to,
        "id": m.id,
        "workspace": m.workspace,
        "chars": chars,
        "preview": preview,
        "receiver_state": m.receiver_state,
    })
}

/// The JSON line (with its newline) for `entry`.
fn line(entry: &Owned) -> String {
    let now = entry.at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let keep_text = entry.keep_text;
    let calls: Vec<Value> = entry
        .calls
        .iter()
        .map(|c| {
            json!({
                "argv": logged_argv(&c.argv, keep_text),
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
        "turn": entry.turn.as_ref().map(|t| json!({
            "since": t.since.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64(),
            "wait_ms": millis(t.waited),
            "got": t.got,
            "shared": t.shared,
        })),
        "message": entry.message.as_ref().map(|m| message_json(m, keep_text)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// `flush` answers only once the lines queued before it are written: here the log is a FIFO
    /// that nobody reads for a while, so the writer is stuck opening it until the reader comes.
    #[test]
    fn flush_returns_after_the_lines_queued_before_it_are_written() {
        let dir = std::env::temp_dir().join(format!("oplog-flush-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("log.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let tx = sender().expect("the writer starts");
        let entry = Owned::of(&Entry::new("", "flush-test", OK, ""));
        let line = line(&entry);
        tx.try_send(Job::Line(fifo.clone(), Box::new(entry), false))
            .unwrap();
        let reader = std::thread::spawn({
            let fifo = fifo.clone();
            move || {
                std::thread::sleep(Duration::from_millis(300));
                let mut got = String::new();
                File::open(&fifo).unwrap().read_to_string(&mut got).unwrap();
                got
            }
        });
        let started = Instant::now();
        assert!(flush(Duration::from_secs(20)), "flushed");
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "flush waited for the line still queued"
        );
        assert_eq!(reader.join().unwrap(), line);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Lines held on a thread stay there until the outermost hold ends, then go to the writer.
    #[test]
    fn held_lines_wait_for_the_outermost_hold() {
        let queued = || HELD.with_borrow(|h| h.as_ref().map(Vec::len));
        assert_eq!(queued(), None);
        let outer = hold();
        let inner = hold();
        let (done, answered) = sync_channel(1);
        HELD.with_borrow_mut(|h| h.as_mut().unwrap().push(Job::Flush(done)));
        drop(inner);
        assert_eq!(queued(), Some(1), "an inner hold releases nothing");
        assert!(answered.try_recv().is_err());
        drop(outer);
        assert_eq!(queued(), None);
        answered
            .recv_timeout(Duration::from_secs(20))
            .expect("the held job reached the writer");
    }
}
