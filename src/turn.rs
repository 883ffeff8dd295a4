//! Delivery turns: deliveries to one receiver never overlap Herdr's submit window.
//!
//! Herdr's `agent prompt` types the text into the receiver's pane at once and presses Enter
//! [`SUBMIT_WINDOW`] later; a second prompt typed before that Enter joins the same submission.
//! So every delivery to a receiver takes that receiver's **turn** first: an exclusive `flock` on
//! a small file in the user's private runtime directory ([`crate::rundir`]),
//!
//! ```text
//! <runtime dir>/turns/<16 hex digits>     mode 0600; holds the time the last Enter is due
//! ```
//!
//! named by a hash of the receiver's Herdr socket and resolved pane (no id appears in it, and
//! none reaches the model). With the lock held, a delivery waits until the receiver's last Enter
//! is due plus [`MARGIN`], delivers, records when its own Enter is due, and releases. Every
//! process of the user (MCP servers, hooks' hosts, hosts that load the library, several sessions
//! of one process) meets on the same file, so deliveries to one receiver form one queue; a lone
//! delivery waits for nothing and different receivers never wait for each other. The lock dies
//! with its file descriptor, so a sender that crashes or is killed while holding it blocks
//! nobody. Waiting is bounded by the caller's deadline; a delivery that cannot get its turn in
//! time gives up before typing anything.
//!
//! When the runtime directory cannot be used (not ours, not a real directory, not private),
//! turns are kept within this process only and the operator log says so once.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::rundir;

/// Herdr's `AGENT_PROMPT_SUBMIT_DELAY` (0.8.0 and 0.8.2): the time from a prompt to its Enter.
pub const SUBMIT_WINDOW: Duration = Duration::from_millis(300);

/// Extra time after the receiver's last Enter is due before the next text is typed: covers
/// Herdr's timer firing late on a loaded server and the receiving program reading the Enter
/// before the next paste. Against real Herdr 0.8.0 and 0.8.2 servers on a loaded machine the
/// Enter came at most 16 ms (0.8.0) and 65 ms (0.8.2) after the time recorded for it
/// (BENCHMARKS.md, section (t)); 150 ms leaves more than twice the worst seen.
pub const MARGIN: Duration = Duration::from_millis(150);

/// How often a waiting delivery retries the lock.
const POLL: Duration = Duration::from_millis(3);

/// A turn file untouched this long is removed by the next delivery that creates a new one.
const STALE: Duration = Duration::from_secs(3600);

/// The most entries one sweep looks at.
const SWEEP_MAX: usize = 4096;

/// The subdirectory of the runtime directory that holds the turn files.
const DIR: &str = "turns";

/// The receiver's key: FNV-1a (64 bit, stable across builds and processes) of the Herdr socket
/// path and the receiver's resolved pane id.
pub fn receiver_key(socket: &str, pane: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in socket.bytes().chain([0u8]).chain(pane.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The turn file of `key` under the runtime directory `base`.
pub fn turn_path(base: &Path, key: u64) -> PathBuf {
    base.join(DIR).join(format!("{key:016x}"))
}

/// A delivery turn; released when dropped.
#[derive(Debug)]
pub struct Turn {
    holder: Holder,
    waited: Duration,
}

#[derive(Debug)]
enum Holder {
    /// The user-wide turn file, locked.
    File(File),
    /// The in-process table (the runtime directory could not be used).
    Process(u64),
}

/// No turn before the deadline: another delivery to the receiver holds it, or its last Enter
/// is due too late.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    /// How long this delivery waited before giving up.
    pub waited: Duration,
    /// Whether the turn was the user-wide one (false: this process only).
    pub shared: bool,
    /// Why, for the operator log.
    pub detail: String,
}

impl Turn {
    /// How long the delivery waited for this turn (lock and the receiver's pending Enter).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Whether the turn is shared with every process of the user (false: this process only).
    pub fn shared(&self) -> bool {
        matches!(self.holder, Holder::File(_))
    }

    /// Records that text was (or may have been) typed just now: the receiver's Enter is due
    /// one [`SUBMIT_WINDOW`] from now.
    pub fn delivered(&self) {
        let due = now_ms() + SUBMIT_WINDOW.as_millis() as u64;
        match &self.holder {
            Holder::File(f) => {
                let _ = f.write_all_at(format!("{due:020}\n").as_bytes(), 0);
            }
            Holder::Process(key) => {
                if let Some(slot) = table().get_mut(key) {
                    slot.due_ms = due;
                }
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Holder::Process(key) = self.holder {
            if let Some(slot) = table().get_mut(&key) {
                slot.held = false;
            }
        }
        // A file's lock goes with its descriptor.
    }
}

/// Takes the turn of the receiver `key`, waiting (until `deadline` at most) for the lock and
/// for the receiver's last Enter plus [`MARGIN`]: in the user's runtime directory when it can
/// be used, else within this process (the operator log says why, once per process and reason).
pub fn take(key: u64, deadline: Instant) -> Result<Turn, Busy> {
    match prepare(&rundir::base_dir()) {
        Ok(dir) => take_in_dir(&dir, key, deadline),
        Err(reason) => {
            note_unshared(&reason);
            take_in_process(key, deadline)
        }
    }
}

/// Writes to the operator log, once per process and reason, that turns are not shared.
fn note_unshared(reason: &str) {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let first = {
        let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
        let first = seen.len() < 16 && !seen.iter().any(|r| r == reason);
        if first {
            seen.push(reason.to_string());
        }
        first
    };
    if first {
        crate::oplog::note(
            "turn",
            "TURNS_NOT_SHARED",
            &format!("{reason}; delivery turns are kept within this process only"),
        );
    }
}

/// Makes sure `<base>/turns` is a private directory of ours; returns it.
fn prepare(base: &Path) -> Result<PathBuf, String> {
    rundir::ensure_private_dir(base)?;
    let dir = base.join(DIR);
    rundir::ensure_private_dir(&dir)?;
    Ok(dir)
}

/// [`take`] in the turn directory `dir` (see [`turn_path`]).
pub fn take_in_dir(dir: &Path, key: u64, deadline: Instant) -> Result<Turn, Busy> {
    let started = Instant::now();
    let path = dir.join(format!("{key:016x}"));
    let busy = |detail: String| Busy {
        waited: started.elapsed(),
        shared: true,
        detail,
    };
    loop {
        let (file, created) = open_turn_file(&path).map_err(busy)?;
        let file = lock_until(file, deadline).map_err(|e| match e {
            Some(e) => busy(format!("flock {}: {e}", path.display())),
            None => {
                busy("another delivery to this receiver held its turn past the time limit".into())
            }
        })?;
        // A sweep may have removed the file between our open and our lock: start again then.
        if !same_file(&file, &path) {
            continue;
        }
        if created {
            sweep(dir, &path);
        }
        let due = read_due(&file);
        wait_for(due, deadline).map_err(busy)?;
        return Ok(Turn {
            holder: Holder::File(file),
            waited: started.elapsed(),
        });
    }
}

/// Opens (or creates, 0600) the turn file, never through a symlink; `true` when created.
fn open_turn_file(path: &Path) -> Result<(File, bool), String> {
    let open = |create: bool| {
        let mut o = OpenOptions::new();
        o.read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        if create {
            o.create_new(true);
        }
        o.open(path)
    };
    let (file, created) = match open(true) {
        Ok(f) => (f, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open(false) {
            Ok(f) => (f, false),
            // Swept in between: create it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
                open(true).map_err(|e| format!("cannot create {}: {e}", path.display()))?,
                true,
            ),
            Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
        },
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if !meta.is_file() || meta.uid() != rundir::uid() {
        return Err(format!("{} is not a file of ours", path.display()));
    }
    Ok((file, created))
}

/// Locks `file` exclusively before `deadline`; `Err(None)` when the deadline passed first.
///
/// A lock held by someone else is waited for with a blocking `flock` in a helper thread, so
/// waiters queue in the kernel and are served about in their order of arrival (polling would
/// let a newcomer overtake a delivery that has waited for several windows). A waiter that gives
/// up leaves the thread behind: when it gets the lock it finds nobody to hand it to and closes
/// the file, which releases the lock at once.
fn lock_until(file: File, deadline: Instant) -> Result<File, Option<std::io::Error>> {
    if try_lock(&file).map_err(Some)? {
        return Ok(file);
    }
    let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<File>>();
    let waiter = std::thread::Builder::new()
        .name("herdr-link-turn".into())
        .spawn(move || {
            let got = loop {
                // SAFETY: a valid open descriptor, owned by this closure.
                let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
                if rc == 0 {
                    break Ok(file);
                }
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    break Err(e);
                }
            };
            // Nobody waiting any more: the file (and its lock) is dropped here.
            let _ = tx.send(got);
        });
    if waiter.is_err() {
        return Err(Some(std::io::Error::other(
            "cannot start a lock waiter thread",
        )));
    }
    let left = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(file)) => Ok(file),
        Ok(Err(e)) => Err(Some(e)),
        Err(_) => Err(None), // dropping `rx` frees a lock the thread takes later
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: `Ok(true)` locked, `Ok(false)` held by someone else.
fn try_lock(file: &File) -> std::io::Result<bool> {
    // SAFETY: a valid open descriptor.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => Ok(false),
        _ => Err(e),
    }
}

/// Whether `path` still names the open `file` (same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The due time recorded in a turn file (ms since the epoch); 0 when empty or unreadable.
fn read_due(file: &File) -> u64 {
    let mut buf = [0u8; 32];
    let n = file.read_at(&mut buf, 0).unwrap_or(0);
    std::str::from_utf8(&buf[..n])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Sleeps until `due_ms` + [`MARGIN`], or fails at once when that is after `deadline`. A due
/// time further ahead than one window (a clock set back) counts as one window from now.
fn wait_for(due_ms: u64, deadline: Instant) -> Result<(), String> {
    let now = now_ms();
    let due = due_ms.min(now + SUBMIT_WINDOW.as_millis() as u64);
    let ready = due + MARGIN.as_millis() as u64;
    if ready <= now {
        return Ok(());
    }
    let wait = Duration::from_millis(ready - now);
    if Instant::now() + wait > deadline {
        return Err(format!(
            "the receiver's last Enter is due in {} ms, after the time limit",
            due.saturating_sub(now)
        ));
    }
    std::thread::sleep(wait);
    Ok(())
}

/// Removes turn files nobody used for [`STALE`] (taking each one's lock first, so a file in
/// use is never removed; a delivery that opened it just before then finds it gone and
/// starts again).
fn sweep(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten().take(SWEEP_MAX) {
        let path = entry.path();
        if path == keep {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE);
        if !old {
            continue;
        }
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(&path)
        else {
            continue;
        };
        if matches!(try_lock(&file), Ok(true)) && same_file(&file, &path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// One receiver in the in-process table.
#[derive(Debug, Default)]
struct Slot {
    held: bool,
    due_ms: u64,
}

fn table() -> std::sync::MutexGuard<'static, HashMap<u64, Slot>> {
    static TABLE: LazyLock<Mutex<HashMap<u64, Slot>>> = LazyLock::new(Default::default);
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`take`] within this process only.
fn take_in_process(key: u64, deadline: Instant) -> Result<Turn, Busy> {
    let started = Instant::now();
    let busy = |detail: String| Busy {
        waited: started.elapsed(),
        shared: false,
        detail,
    };
    let due = loop {
        {
            let mut t = table();
            let slot = t.entry(key).or_default();
            if !slot.held {
                slot.held = true;
                break slot.due_ms;
            }
        }
        if Instant::now() + POLL > deadline {
            return Err(busy(
                "another delivery to this receiver held its turn past the time limit".into(),
            ));
        }
        std::thread::sleep(POLL);
    };
    let turn = Turn {
        holder: Holder::Process(key),
        waited: Duration::ZERO,
    };
    wait_for(due, deadline).map_err(busy)?; // dropping `turn` releases the slot
    let mut turn = turn;
    turn.waited = started.elapsed();
    Ok(turn)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("herdr-link-turn-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        rundir::ensure_private_dir(&p).unwrap();
        p
    }

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(receiver_key("/s", "w1:p2"), receiver_key("/s", "w1:p2"));
        assert_ne!(receiver_key("/s", "w1:p2"), receiver_key("/s", "w1:p3"));
        assert_ne!(receiver_key("/s", "w1:p2"), receiver_key("/t", "w1:p2"));
        assert_ne!(receiver_key("/s", "w1:p2"), receiver_key("/sw", "1:p2"));
        // FNV-1a of the empty input is its offset basis; the value must never change across
        // builds, or processes of two builds would not meet.
        assert_eq!(receiver_key("", ""), 0xaf63_bd4c_8601_b7df);
    }

    #[test]
    fn a_lone_turn_waits_for_nothing_and_the_next_one_waits_for_the_window() {
        let dir = temp_dir("lone");
        let t = take_in_dir(&dir, 1, soon(5000)).unwrap();
        assert!(t.waited() < Duration::from_millis(50), "{:?}", t.waited());
        assert!(t.shared());
        t.delivered();
        drop(t);
        let t = take_in_dir(&dir, 1, soon(5000)).unwrap();
        assert!(
            t.waited() >= SUBMIT_WINDOW + MARGIN - Duration::from_millis(5),
            "{:?}",
            t.waited()
        );
        drop(t);
        // Another receiver is not affected, and a turn never delivered leaves no wait.
        assert!(take_in_dir(&dir, 2, soon(5000)).unwrap().waited() < Duration::from_millis(50));
        let mode = std::fs::metadata(dir.join(format!("{:016x}", 1u64)))
            .unwrap()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_held_turn_fails_at_the_deadline_and_a_closed_one_frees_at_once() {
        let dir = temp_dir("held");
        let held = take_in_dir(&dir, 7, soon(5000)).unwrap();
        let started = Instant::now();
        let e = take_in_dir(&dir, 7, soon(200)).unwrap_err();
        assert!(e.waited >= Duration::from_millis(190), "{e:?}");
        assert!(started.elapsed() < Duration::from_millis(400));
        assert!(e.detail.contains("time limit"), "{e:?}");
        drop(held); // like a killed holder: the descriptor closes
        assert!(take_in_dir(&dir, 7, soon(200)).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_enter_due_after_the_deadline_fails_at_once() {
        let dir = temp_dir("late");
        take_in_dir(&dir, 3, soon(5000)).unwrap().delivered();
        let started = Instant::now();
        let e = take_in_dir(&dir, 3, soon(100)).unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(50), "{e:?}");
        assert!(e.detail.contains("due"), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_due_time_far_ahead_counts_as_one_window() {
        let dir = temp_dir("clock");
        let path = dir.join(format!("{:016x}", 4u64));
        std::fs::write(&path, format!("{:020}\n", now_ms() + 3_600_000)).unwrap();
        let t = take_in_dir(&dir, 4, soon(5000)).unwrap();
        assert!(t.waited() < SUBMIT_WINDOW + MARGIN + Duration::from_millis(100));
        // Garbage reads as "no Enter pending".
        drop(t);
        std::fs::write(&path, "garbage").unwrap();
        assert!(take_in_dir(&dir, 4, soon(5000)).unwrap().waited() < Duration::from_millis(50));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_symlink_is_never_followed() {
        let dir = temp_dir("link");
        let target = dir.join("elsewhere");
        std::fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, dir.join(format!("{:016x}", 5u64))).unwrap();
        let e = take_in_dir(&dir, 5, soon(100)).unwrap_err();
        assert!(e.detail.contains("cannot open"), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stale_files_are_swept_but_held_ones_are_not() {
        let dir = temp_dir("sweep");
        let old = |k: u64| {
            let p = dir.join(format!("{k:016x}"));
            std::fs::write(&p, "0\n").unwrap();
            let f = File::options().write(true).open(&p).unwrap();
            f.set_modified(SystemTime::now() - 2 * STALE).unwrap();
            p
        };
        let (a, b) = (old(10), old(11));
        let held = take_in_dir(&dir, 11, soon(1000)).unwrap();
        File::options()
            .write(true)
            .open(&b)
            .unwrap()
            .set_modified(SystemTime::now() - 2 * STALE)
            .unwrap();
        drop(take_in_dir(&dir, 12, soon(1000)).unwrap()); // creates a file: sweeps
        assert!(!a.exists(), "a stale file is removed");
        assert!(b.exists(), "a held file stays");
        drop(held);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_in_process_table_serializes_too() {
        let key = 0xfeed_0001;
        let t = take_in_process(key, soon(1000)).unwrap();
        assert!(!t.shared());
        assert!(take_in_process(key, soon(100)).is_err(), "held");
        t.delivered();
        drop(t);
        let t = take_in_process(key, soon(2000)).unwrap();
        assert!(t.waited() >= SUBMIT_WINDOW + MARGIN - Duration::from_millis(5));
    }

    #[test]
    fn an_unusable_runtime_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("open");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(prepare(&dir).unwrap_err().contains("0700"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(prepare(&dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
