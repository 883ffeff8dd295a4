//! Delivery turns: deliveries to one receiver never overlap Herdr's submit window.
//!
//! Herdr's `agent prompt` types the text into the receiver's pane and presses Enter
//! [`SUBMIT_WINDOW`] later. Herdr 0.8 answers at once and presses the Enter afterwards, so a
//! second prompt typed before that Enter joins the same submission; Herdr 0.9 answers only after
//! its Enter and serializes the prompts to one pane itself. So every delivery to a receiver
//! takes that receiver's **turn** first: an exclusive `flock` on a small file in the user's
//! private runtime directory (`rundir`),
//!
//! ```text
//! <runtime dir>/turns/<16 hex digits>     mode 0600, the receiver's turn file (its lock)
//!   bytes  0..32  when the receiver's last Enter is due (ms since the epoch; what older builds read)
//!   bytes 32..    when this receiver's Herdr last answered a prompt before its Enter, and how
//!                 many answers in a row came after a whole window
//! <runtime dir>/turns/<16 hex digits>.q/  mode 0700, the receiver's queue:
//!   next          the receiver's next ticket number
//!   <20 digits>   a delivery's ticket, locked while it lasts
//! <runtime dir>/turns/.sweep              where the next sweep starts (see below)
//! ```
//!
//! named by a hash of the receiver's Herdr socket and resolved pane (no id appears in it, and
//! none reaches the model). With the lock held, a delivery waits until the receiver's last Enter
//! is due, plus a margin on a Herdr that answers before its Enter (0.8: [`MARGIN`], the setting
//! `HERDR_LINK_TURN_MARGIN_MS`; none on one that answers after it, 0.9), delivers, records when its own Enter is due ([`Turn::delivered`]), and
//! releases. Every process of the user (MCP servers, hooks' hosts, hosts that load the library,
//! several sessions of one process) meets on the same file, so deliveries to one receiver form
//! one queue, served in the order they arrived (numbered tickets, [`take_in_dir`]); a lone
//! delivery waits for nothing and different receivers never wait for each other. The lock dies
//! with its file descriptor, so a sender that crashes or is killed while holding it blocks
//! nobody.
//!
//! Waiting for a turn is progress, not a Herdr fault: it has its own bound (the caller's
//! `deadline`, [`WAIT`] by default), separate from the time limit of the Herdr call made in the
//! turn. A delivery that cannot get its turn by then (the queue is stuck: a holder that never
//! releases) gives up before typing anything.
//!
//! A delivery touches its own receiver's entries only (opened by name; it lists its receiver's
//! queue, never the shared directory), so its cost does not grow with how many receivers the
//! user's agents reached lately. Entries nobody used for [`STALE`] are swept off the hot path: at
//! most once per [`SWEEP_EVERY`] per process, in a thread of its own, at most [`SWEEP_MAX`]
//! entries a time, each sweep going on where the last one (of any process) stopped.
//!
//! When no runtime directory can be used ([`Place::Process`]), turns are kept within this
//! process only; the caller says so in the operator log.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::rundir;

/// Herdr's `AGENT_PROMPT_SUBMIT_DELAY` (0.8.0, 0.8.2 and 0.9.0): the time from a prompt's text to
/// its Enter.
pub const SUBMIT_WINDOW: Duration = Duration::from_millis(300);

/// Extra time after the receiver's last Enter is due before the next text is typed, on a Herdr
/// that answers a prompt before its Enter (0.8); the default of `HERDR_LINK_TURN_MARGIN_MS`
/// ([`crate::env::turn_margin`]). It covers Herdr's Enter timer firing a little late. Against
/// real Herdr 0.8.0 and 0.8.2 servers with 32 to 128 senders at once the Enter came at most a
/// few milliseconds after the time recorded for it (BENCHMARKS.md, section (t)), and the next
/// text comes later still: only once the next `agent prompt` CLI has started and reached the
/// server. On a machine loaded far beyond its cores (load average 20 on 2) single Enters were
/// seen up to 133 ms late: raise the setting there. A Herdr that answers only after its Enter
/// and types one submission at a time itself (0.9) gets no margin: nothing is pending then.
pub const MARGIN: Duration = crate::env::DEFAULT_TURN_MARGIN;

/// How long a delivery waits for its turn by default (`HERDR_LINK_TURN_WAIT_MS` overrides it).
/// A turn costs about [`SUBMIT_WINDOW`] + the prompt call (+ [`MARGIN`] on 0.8), about 340 ms,
/// so 128 deliveries to one receiver at once all get theirs within about 44 s; 48 s leaves a
/// little room and, with the prompt call after it, stays under the MCP hosts' tool-call limits
/// (Codex and OpenCode 60 s by default, Claude Code about 28 hours).
pub const WAIT: Duration = crate::env::DEFAULT_TURN_WAIT;

/// How often a waiting delivery retries the in-process table.
const POLL: Duration = Duration::from_millis(3);

/// An entry untouched this long (and not in use) is removed by a sweep.
const STALE: Duration = Duration::from_secs(3600);

/// How often one process sweeps a turn directory at most (its first delivery there starts one).
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// How long an answer given before Herdr's Enter is remembered for a receiver ([`Turn::delivered`]).
const EARLY_MEMORY: Duration = STALE;

/// How many answers in a row after a whole window (and none before its Enter within
/// [`EARLY_MEMORY`]) it takes to treat a receiver's Herdr as answering after the Enter (0.9).
/// Until then such answers count as slow 0.8 ones: a loaded 0.8 server's first prompts can take
/// that long too. One answer settles it when a plain call to the same Herdr just before was
/// quick ([`Delivery::AnsweredBeside`]).
const LATE_RUN: u32 = 3;

/// A plain Herdr call that took at most this long shows an unloaded Herdr and machine: a prompt
/// answered [`AFTER_ENTER`] later than it did came after its Enter.
const QUICK: Duration = Duration::from_millis(150);

/// How much longer than a quick plain call a prompt's answer must take to have come after its
/// Enter: half a window (0.9 takes a whole window longer; 0.8 about as long).
const AFTER_ENTER: Duration = Duration::from_millis(150);

/// The most entries one sweep looks at.
const SWEEP_MAX: usize = 256;

/// The subdirectory of the runtime directory that holds the turn files.
const DIR: &str = "turns";

/// The suffix of a receiver's queue directory (`<key>.q`, next to its turn file).
const QUEUE: &str = ".q";

/// The ticket counter in a queue directory.
const COUNTER: &str = "next";

/// The sweep cursor in the turn directory (a name no key has).
const CURSOR: &str = ".sweep";

/// Where the due time of the last Enter starts in a turn file, and how much of the file older
/// builds read (they parse those bytes, trimmed, as the due time).
const DUE_AT: u64 = 0;
/// Where the answer memory ([`Memory`]) starts in a turn file.
const EARLY_AT: u64 = 32;

/// What a receiver's Herdr answers showed so far (kept in its turn file, see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Memory {
    /// When it last answered a prompt before its Enter (ms since the epoch; 0: never).
    early_ms: u64,
    /// How many answers in a row came after a whole window.
    late_run: u32,
}

impl Memory {
    /// Whether the receiver's Herdr answers after its Enter (0.9): [`LATE_RUN`] answers in a row
    /// after a whole window, none before the Enter within [`EARLY_MEMORY`].
    fn answers_after_enter(&self, now: u64) -> bool {
        self.late_run >= LATE_RUN && self.early_ms + EARLY_MEMORY.as_millis() as u64 <= now
    }
}

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

/// Where turns are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The user-wide turn directory (`<runtime dir>/turns`), ready for use.
    Shared {
        /// The turn directory.
        dir: PathBuf,
        /// Which runtime directory holds it.
        kind: rundir::Kind,
        /// Why an earlier runtime directory was passed over, if one was.
        passed_over: Option<String>,
    },
    /// Within this process only, and why.
    Process(String),
}

/// Finds (and creates, when needed) the user-wide turn directory; [`Place::Process`] with the
/// reason when none can be used.
pub fn place() -> Place {
    place_in(&rundir::Candidates::of_user())
}

/// [`place`] among `candidates`.
pub(crate) fn place_in(candidates: &rundir::Candidates) -> Place {
    let choice = candidates.choose();
    match prepare(&choice) {
        Ok(dir) => Place::Shared {
            dir,
            kind: choice.kind,
            passed_over: choice.passed_over,
        },
        Err(reason) => Place::Process(match choice.passed_over {
            Some(why) => format!("{why}; {reason}"),
            None => reason,
        }),
    }
}

/// Where turns would be kept, creating nothing (for `herdr-link doctor`): the turn directory and
/// why an earlier runtime directory was passed over, or why turns would be kept within each
/// process. A directory that does not exist yet counts as usable (the first delivery makes it).
pub fn survey() -> Result<(PathBuf, Option<String>), String> {
    survey_in(&rundir::Candidates::of_user())
}

/// [`survey`] among `candidates`.
pub(crate) fn survey_in(
    candidates: &rundir::Candidates,
) -> Result<(PathBuf, Option<String>), String> {
    let choice = candidates.choose();
    let dir = choice.path.join(DIR);
    for p in [&choice.path, &dir] {
        if std::fs::symlink_metadata(p).is_ok() && !rundir::private_dir(p) {
            let why = format!(
                "{} is not a private directory of uid {}",
                p.display(),
                rundir::uid()
            );
            return Err(match choice.passed_over {
                Some(first) => format!("{first}; {why}"),
                None => why,
            });
        }
    }
    Ok((dir, choice.passed_over))
}

/// Makes sure the chosen runtime directory and its `turns` are private directories of ours.
fn prepare(choice: &rundir::Choice) -> Result<PathBuf, String> {
    rundir::ensure_base(choice)?;
    let dir = choice.path.join(DIR);
    rundir::ensure_private_dir(&dir)?;
    Ok(dir)
}

/// How one operation waited for its delivery turn, as the operator log reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnTrace {
    /// When it began to wait (it joined the receiver's queue then).
    pub since: SystemTime,
    /// How long it waited (for the lock and for the receiver's pending Enter).
    pub waited: Duration,
    /// Whether the turn was shared with every process of the user (false: this process only).
    pub shared: bool,
    /// Whether it got the turn.
    pub got: bool,
}

/// The delivery turn one operation took, kept for its operator-log line.
#[derive(Debug, Default)]
pub struct Record(RefCell<Option<TurnTrace>>);

impl Record {
    /// Records how the operation waited for its turn.
    pub fn set(&self, trace: TurnTrace) {
        *self.0.borrow_mut() = Some(trace);
    }

    /// Takes what was recorded, if anything.
    pub fn take(&self) -> Option<TurnTrace> {
        self.0.borrow_mut().take()
    }
}

/// A delivery turn; released when dropped.
#[derive(Debug)]
pub struct Turn {
    holder: Holder,
    waited: Duration,
    /// What this receiver's Herdr answers showed so far.
    memory: Memory,
    /// How many tickets the receiver's queue had handed out when the turn came (`None`: not
    /// known), to tell whether other deliveries joined while this one's prompt ran.
    drawn: Option<u64>,
}

#[derive(Debug)]
enum Holder {
    /// The user-wide turn file, locked, and this delivery's ticket in the receiver's queue.
    File {
        /// The turn file (its lock).
        turn: File,
        /// Removed and unlocked when the turn ends, which lets the next ticket go.
        _ticket: Ticket,
    },
    /// The in-process table (no runtime directory could be used).
    Process(u64),
}

/// No turn before the deadline: another delivery to the receiver held it all along (a stuck
/// queue), or the turn file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    /// How long this delivery waited before giving up.
    pub waited: Duration,
    /// Whether the turn was the user-wide one (false: this process only).
    pub shared: bool,
    /// Why, for the operator log.
    pub detail: String,
}

/// What the Herdr call made in the turn showed, for when the receiver's Enter is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Herdr answered, this long after the call started.
    Answered(Duration),
    /// Herdr answered `took` after the call started, and the operation's plain Herdr call just
    /// before its turn took `reference`: a quick reference tells a prompt that waited for its
    /// Enter (0.9) from a slow server (0.8) at the first answer. Counts as [`Delivery::Answered`]
    /// when the turn was waited for (the reference is old by then).
    AnsweredBeside {
        /// How long the prompt took.
        took: Duration,
        /// How long the plain call before the turn took.
        reference: Duration,
    },
    /// The call broke off (timed out, killed, transport failure): the text may have been typed,
    /// or may still be typed later.
    BrokeOff,
}

impl Turn {
    /// How long the delivery waited for this turn (lock and the receiver's pending Enter).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Whether the turn is shared with every process of the user (false: this process only).
    pub fn shared(&self) -> bool {
        matches!(self.holder, Holder::File { .. })
    }

    /// Records that text was (or may have been) typed: when the receiver's Enter is due.
    ///
    /// Herdr 0.8 answers a prompt at once and presses its Enter [`SUBMIT_WINDOW`] later; Herdr
    /// 0.9 answers only after the Enter. Nothing asks Herdr which it is (no version probe); the
    /// answers' timing tells. An answer within the window came before the Enter: due one window
    /// from now, and the receiver is remembered as answering early. An answer after a whole
    /// window came after the Enter (0.9: nothing pending) once [`LATE_RUN`] answers in a row did
    /// so and none came early within [`EARLY_MEMORY`]; before that it counts as a slow 0.8
    /// answer (one window from now), unless a plain call to the same Herdr just before was quick
    /// and the prompt took half a window longer ([`Delivery::AnsweredBeside`]): then at once. A
    /// call that broke off: one window from now.
    pub fn delivered(&self, how: Delivery) {
        let now = now_ms();
        // The reference tells only when it is fresh (the turn came at once) and nothing else
        // ran meanwhile that could have slowed the prompt alone: no other delivery to this
        // receiver joined the queue (a fan-in's senders start together; on 0.8 one prompt
        // held up by them must not pass for 0.9's wait for the Enter).
        let quiet = match &self.holder {
            Holder::File {
                _ticket: ticket, ..
            } => self.drawn.is_some() && ticket.drawn_so_far() == self.drawn,
            Holder::Process(_) => false,
        };
        let how = match how {
            Delivery::AnsweredBeside { took, .. } if self.waited > QUICK || !quiet => {
                Delivery::Answered(took)
            }
            other => other,
        };
        let (due, memory) = due_after(how, now, self.memory);
        match &self.holder {
            Holder::File { turn, .. } => {
                let _ = turn.write_all_at(&encode(due, memory), DUE_AT);
            }
            Holder::Process(key) => {
                if let Some(slot) = table().get_mut(key) {
                    slot.due_ms = due;
                    slot.memory = memory;
                }
            }
        }
    }
}

/// The receiver's Enter due time and answer memory after a delivery ([`Turn::delivered`]).
fn due_after(how: Delivery, now: u64, m: Memory) -> (u64, Memory) {
    let window = SUBMIT_WINDOW.as_millis() as u64;
    match how {
        Delivery::AnsweredBeside { took, reference }
            if took >= SUBMIT_WINDOW && reference <= QUICK && took >= reference + AFTER_ENTER =>
        {
            let m = Memory {
                late_run: m.late_run.saturating_add(1).max(LATE_RUN),
                ..m
            };
            due_after_late(now, m)
        }
        Delivery::AnsweredBeside { took, .. } => due_after(Delivery::Answered(took), now, m),
        Delivery::Answered(took) if took < SUBMIT_WINDOW => (
            now + window,
            Memory {
                early_ms: now,
                late_run: 0,
            },
        ),
        Delivery::Answered(_) => {
            let m = Memory {
                late_run: m.late_run.saturating_add(1),
                ..m
            };
            due_after_late(now, m)
        }
        Delivery::BrokeOff => (now + window, m),
    }
}

/// After an answer that came a whole window after the call: nothing pending if the receiver's
/// Herdr now counts as answering after its Enter, else one window from now.
fn due_after_late(now: u64, m: Memory) -> (u64, Memory) {
    if m.answers_after_enter(now) {
        (now, m)
    } else {
        (now + SUBMIT_WINDOW.as_millis() as u64, m)
    }
}

/// A turn file's contents: the due time padded to [`EARLY_AT`] bytes, then the answer memory.
fn encode(due: u64, m: Memory) -> Vec<u8> {
    let mut b = format!("{due:020}\n").into_bytes();
    b.resize(EARLY_AT as usize, b' ');
    b.extend_from_slice(format!("{:020} {}\n", m.early_ms, m.late_run).as_bytes());
    b
}

/// The due time and answer memory in a turn file; 0 for what is missing or unreadable.
fn read_state(file: &File) -> (u64, Memory) {
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, DUE_AT).unwrap_or(0);
    let split = n.min(EARLY_AT as usize);
    let due = std::str::from_utf8(&buf[..split])
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let rest = std::str::from_utf8(&buf[split..n]).unwrap_or("");
    let mut words = rest.split_whitespace();
    let early_ms = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
    let late_run = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
    (due, Memory { early_ms, late_run })
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

/// Takes the turn of the receiver `key` at `place`, waiting (until `deadline` at most) for the
/// lock and for the receiver's last Enter (plus the margin, on 0.8: [`wait_for`]).
pub fn take(place: &Place, key: u64, deadline: Instant) -> Result<Turn, Busy> {
    match place {
        Place::Shared { dir, .. } => take_in_dir(dir, key, deadline),
        Place::Process(_) => take_in_process(key, deadline),
    }
}

/// The text of a turn held past the deadline by another delivery.
const STUCK: &str = "another delivery to this receiver held its turn for the whole wait";

/// [`take`] in the turn directory `dir` (see [`turn_path`]).
///
/// The kernel does not keep `flock` waiters in order: when the lock is released every waiter
/// is woken and the first to run wins (seen with 64 sender processes against a real Herdr:
/// some waited 30 s while later ones went first). So a delivery first draws a numbered ticket
/// ([`Ticket`]) and waits until every earlier ticket of the receiver is gone (each is locked by
/// its delivery until that delivery ends, gives up or dies), and only then takes the turn file's
/// lock, which still keeps out any build without tickets.
pub fn take_in_dir(dir: &Path, key: u64, deadline: Instant) -> Result<Turn, Busy> {
    let started = Instant::now();
    let path = dir.join(format!("{key:016x}"));
    let busy = |detail: String| Busy {
        waited: started.elapsed(),
        shared: true,
        detail,
    };
    let queue = dir.join(format!("{key:016x}{QUEUE}"));
    let ticket = Ticket::draw(&queue, deadline).map_err(|e| busy(e.unwrap_or(STUCK.into())))?;
    ticket
        .wait_for_earlier(&queue, deadline)
        .map_err(|e| busy(e.unwrap_or(STUCK.into())))?;
    loop {
        let file = open_turn_file(&path, Usually::There).map_err(busy)?;
        let file = lock_until(file, deadline).map_err(|e| match e {
            Some(e) => busy(format!("flock {}: {e}", path.display())),
            None => busy(STUCK.into()),
        })?;
        // A sweep may have removed the file between our open and our lock: start again then.
        if !same_file(&file, &path) {
            continue;
        }
        sweep_now_and_then(dir);
        let (due, memory) = read_state(&file);
        wait_for(due, memory, deadline).map_err(busy)?;
        return Ok(Turn {
            drawn: ticket.drawn_so_far(),
            holder: Holder::File {
                turn: file,
                _ticket: ticket,
            },
            waited: started.elapsed(),
            memory,
        });
    }
}

/// A delivery's place in its receiver's queue: `<number>` in the receiver's queue directory,
/// created and locked by the delivery until it ends (or its process dies), then removed. Numbers
/// come from the queue's `next`, read and advanced under its lock.
#[derive(Debug)]
struct Ticket {
    number: u64,
    path: PathBuf,
    /// The queue's counter.
    counter: PathBuf,
    _file: File,
}

impl Ticket {
    /// Draws the receiver's next number in `queue` (made when missing) and makes its ticket
    /// file (locked). `Err(None)` when the deadline passed first.
    fn draw(queue: &Path, deadline: Instant) -> Result<Ticket, Option<String>> {
        let counter = queue.join(COUNTER);
        let file = loop {
            make_queue(queue).map_err(Some)?;
            let file = match open_ours(&counter, Usually::There) {
                Ok(f) => f,
                // A sweep removed the queue between our mkdir and our open: make it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Some(format!("cannot open {}: {e}", counter.display()))),
            };
            let file = lock_until(file, deadline).map_err(|e| e.map(|e| e.to_string()))?;
            // A sweep removes a counter (and its queue) only while holding its lock: one we
            // locked that is still there stays until we release it.
            if same_file(&file, &counter) {
                break file;
            }
        };
        let number: u64 = read_number(&file).unwrap_or(0);
        let _ = file.write_all_at(format!("{:020}\n", number + 1).as_bytes(), 0);
        let path = queue.join(format!("{number:020}"));
        let _ = std::fs::remove_file(&path); // a number reused after the counter was swept
        let ticket = open_turn_file(&path, Usually::New).map_err(Some)?;
        if !try_lock(&ticket).map_err(|e| Some(e.to_string()))? {
            return Err(Some(format!(
                "{} is locked by someone else",
                path.display()
            )));
        }
        drop(file); // the next number may be drawn now
        Ok(Ticket {
            number,
            path,
            counter,
            _file: ticket,
        })
    }

    /// How many tickets the receiver's queue has handed out so far (its counter, read unlocked).
    fn drawn_so_far(&self) -> Option<u64> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&self.counter)
            .ok()?;
        read_number(&file)
    }

    /// Waits until every earlier ticket in the receiver's `queue` is gone: locks each in turn
    /// (it is unlocked once its delivery ended, gave up or died) and removes what a dead one
    /// left. Lists the receiver's own queue only.
    fn wait_for_earlier(&self, queue: &Path, deadline: Instant) -> Result<(), Option<String>> {
        let mut earlier: Vec<(u64, PathBuf)> = std::fs::read_dir(queue)
            .map_err(|e| Some(format!("cannot read {}: {e}", queue.display())))?
            .flatten()
            .filter_map(|e| {
                let n: u64 = ticket_number(e.file_name().to_str()?)?;
                (n < self.number).then(|| (n, e.path()))
            })
            .collect();
        earlier.sort();
        for (_, path) in earlier {
            let file = match OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
            {
                Ok(f) => f,
                Err(_) => continue, // already gone
            };
            lock_until(file, deadline).map_err(|e| e.map(|e| e.to_string()))?;
            // Its delivery is over: remove what it may have left (it removes its own).
            let _ = std::fs::remove_file(&path);
        }
        Ok(())
    }
}

/// The number a small file of the turn directory holds (a counter, a cursor), if it holds one.
fn read_number<T: std::str::FromStr>(file: &File) -> Option<T> {
    let mut buf = [0u8; 32];
    let n = file.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
}

/// The number of a ticket's file name (20 digits), if it is one.
fn ticket_number(name: &str) -> Option<u64> {
    (name.len() == 20 && name.bytes().all(|b| b.is_ascii_digit()))
        .then(|| name.parse().ok())
        .flatten()
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Removed while still locked, so a waiter that opened it gets the lock when it closes.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Makes the receiver's queue directory (0700) unless it is there; refuses anything that is not
/// a private directory of ours (only we can create entries in the turn directory, but a symlink
/// is never followed).
fn make_queue(queue: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    // After a receiver's first delivery its queue is there: one look instead of a failing mkdir.
    if rundir::private_dir(queue) {
        return Ok(());
    }
    match std::fs::DirBuilder::new().mode(0o700).create(queue) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", queue.display())),
    }
    if rundir::private_dir(queue) {
        Ok(())
    } else {
        Err(format!(
            "{} is not a private directory of uid {}",
            queue.display(),
            rundir::uid()
        ))
    }
}

/// Opens (or creates, 0600) a file of the turn directory, never through a symlink; `usually`
/// says which is likelier, to try that first.
fn open_turn_file(path: &Path, usually: Usually) -> Result<File, String> {
    open_ours(path, usually).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => format!("{} is not a file of ours", path.display()),
        _ => format!("cannot open {}: {e}", path.display()),
    })
}

/// Whether a file of the turn directory is usually there when it is opened (a receiver's turn
/// file and counter, after its first delivery) or usually new (a ticket): the likelier case is
/// tried first, so it costs one `open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Usually {
    There,
    New,
}

/// [`open_turn_file`] with the error as it came (`NotFound`: its directory is gone).
fn open_ours(path: &Path, usually: Usually) -> std::io::Result<File> {
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
    // Each way round, a file made or swept by someone else in between is opened the other way.
    let file = match usually {
        Usually::New => match open(true) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open(false) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => open(true),
                other => other,
            },
            other => other,
        },
        Usually::There => match open(false) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match open(true) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => open(false),
                other => other,
            },
            other => other,
        },
    }?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != rundir::uid() {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    Ok(file)
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

/// Starts a [`sweep`] of `dir` in a thread of its own unless this process started one there
/// within [`SWEEP_EVERY`]: the delivery that calls it does not wait for it.
fn sweep_now_and_then(dir: &Path) {
    if !sweep_due(dir) {
        return;
    }
    let dir = dir.to_path_buf();
    let _ = std::thread::Builder::new()
        .name("herdr-link-sweep".into())
        .spawn(move || sweep(&dir));
}

/// Whether this process is to sweep `dir` now (it did not within [`SWEEP_EVERY`]); counts it
/// as swept from now on.
fn sweep_due(dir: &Path) -> bool {
    static LAST: Mutex<Vec<(PathBuf, Instant)>> = Mutex::new(Vec::new());
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    last.retain(|(_, at)| now.duration_since(*at) < SWEEP_EVERY);
    if last.iter().any(|(d, _)| d == dir) {
        return false;
    }
    last.push((dir.to_path_buf(), now));
    true
}

/// Looks at the next [`SWEEP_MAX`] entries of the turn directory `dir` (going on where the last
/// sweep stopped, as the cursor file records; from the start after the end) and removes those
/// nobody used for [`STALE`]: taking each one's lock first, so one in use is never removed (a
/// delivery that opened it just before then finds it gone and starts again). One sweep of a
/// directory at a time; a busy cursor means another is under way.
fn sweep(dir: &Path) {
    let Ok(cursor) = open_ours(&dir.join(CURSOR), Usually::There) else {
        return;
    };
    if !matches!(try_lock(&cursor), Ok(true)) {
        return;
    }
    let from: i64 = read_number(&cursor).unwrap_or(0);
    let (names, next) = read_names(dir, from, SWEEP_MAX);
    let _ = cursor.set_len(0);
    let _ = cursor.write_all_at(format!("{next}\n").as_bytes(), 0);
    let now = SystemTime::now();
    for name in names {
        if name == CURSOR {
            continue;
        }
        let path = dir.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE);
        if !old {
            continue;
        }
        if meta.is_dir() && name.ends_with(QUEUE) {
            sweep_queue(&path);
        } else if meta.is_file() {
            remove_if_free(&path);
        }
    }
}

/// Up to `max` names of `dir` from the directory position `from` (0: its start), and the
/// position after them (0 when the end was reached).
fn read_names(dir: &Path, from: i64, max: usize) -> (Vec<String>, i64) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return (Vec::new(), 0);
    };
    // SAFETY: a valid C string; the stream is closed below.
    let stream = unsafe { libc::opendir(c.as_ptr()) };
    if stream.is_null() {
        return (Vec::new(), 0);
    }
    if from != 0 {
        // SAFETY: an open stream; a position from telldir (a stale one reads on from near it).
        unsafe { libc::seekdir(stream, from as libc::c_long) };
    }
    let mut names = Vec::new();
    let mut next = 0;
    while names.len() < max {
        // SAFETY: an open stream.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            next = 0;
            break;
        }
        // SAFETY: readdir returned an entry whose name is NUL-terminated; it lives until the
        // next readdir on this stream.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        if let Ok(name) = name.to_str() {
            if name != "." && name != ".." {
                names.push(name.to_string());
            }
        }
        // SAFETY: an open stream.
        next = unsafe { libc::telldir(stream) } as i64;
    }
    // SAFETY: opened above, closed once.
    unsafe { libc::closedir(stream) };
    (names, next)
}

/// Removes the file `path` if nobody holds its lock (and it is still the file we locked).
fn remove_if_free(path: &Path) {
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
    else {
        return;
    };
    if matches!(try_lock(&file), Ok(true)) && same_file(&file, path) {
        let _ = std::fs::remove_file(path);
    }
}

/// Removes a receiver's stale queue directory unless a delivery is in it: with its counter
/// locked (so nobody draws a ticket meanwhile), every ticket must be free; then the tickets,
/// the counter and the directory go. A queue without a counter is removed only when empty.
fn sweep_queue(queue: &Path) {
    let counter = queue.join(COUNTER);
    let Ok(lock) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(&counter)
    else {
        let _ = std::fs::remove_dir(queue);
        return;
    };
    if !matches!(try_lock(&lock), Ok(true)) || !same_file(&lock, &counter) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(queue) else {
        return;
    };
    let mut tickets = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path == counter {
            continue;
        }
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(&path)
        else {
            return;
        };
        if !matches!(try_lock(&file), Ok(true)) {
            return; // a delivery in progress
        }
        tickets.push((path, file));
    }
    for (path, _) in &tickets {
        let _ = std::fs::remove_file(path);
    }
    // Removed while locked: a delivery waiting for this counter finds it gone and starts again.
    let _ = std::fs::remove_file(&counter);
    let _ = std::fs::remove_dir(queue);
}

/// Sleeps until `due_ms`, plus the margin ([`crate::env::turn_margin`], [`MARGIN`] by default)
/// unless the receiver's Herdr answers after its Enter (`memory`), or fails at once when that is
/// after `deadline`. A due time further ahead than one window (a clock set back) counts as one
/// window from now.
fn wait_for(due_ms: u64, memory: Memory, deadline: Instant) -> Result<(), String> {
    let now = now_ms();
    let due = due_ms.min(now + SUBMIT_WINDOW.as_millis() as u64);
    let margin = if memory.answers_after_enter(now) {
        0
    } else {
        crate::env::turn_margin().as_millis() as u64
    };
    let ready = due + margin;
    if ready <= now {
        return Ok(());
    }
    let wait = Duration::from_millis(ready - now);
    if Instant::now() + wait > deadline {
        return Err(format!(
            "the receiver's last Enter is due in {} ms, after the end of the wait",
            due.saturating_sub(now)
        ));
    }
    std::thread::sleep(wait);
    Ok(())
}

/// One receiver in the in-process table.
#[derive(Debug, Default)]
struct Slot {
    held: bool,
    due_ms: u64,
    memory: Memory,
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
    let (due, memory) = loop {
        {
            let mut t = table();
            let slot = t.entry(key).or_default();
            if !slot.held {
                slot.held = true;
                break (slot.due_ms, slot.memory);
            }
        }
        if Instant::now() + POLL > deadline {
            return Err(busy(STUCK.into()));
        }
        std::thread::sleep(POLL);
    };
    let mut turn = Turn {
        holder: Holder::Process(key),
        waited: Duration::ZERO,
        memory,
        drawn: None,
    };
    wait_for(due, memory, deadline).map_err(busy)?; // dropping `turn` releases the slot
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

    const W: u64 = SUBMIT_WINDOW.as_millis() as u64;

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
    fn the_enter_is_due_by_when_herdr_answered() {
        let now = 10_000_000;
        let mem = |early_ms, late_run| Memory { early_ms, late_run };
        let long_ago = now - EARLY_MEMORY.as_millis() as u64 - 1;
        let fast = Delivery::Answered(Duration::from_millis(12));
        let slow = Delivery::Answered(SUBMIT_WINDOW + Duration::from_millis(5));
        // An answer within the window came before the Enter (0.8): one window from now, and
        // the receiver's Herdr is remembered as answering early.
        assert_eq!(due_after(fast, now, mem(0, 2)), (now + W, mem(now, 0)));
        // Answers after a whole window: the first ones count as slow 0.8 answers ...
        assert_eq!(due_after(slow, now, mem(0, 0)), (now + W, mem(0, 1)));
        assert_eq!(due_after(slow, now, mem(0, 1)), (now + W, mem(0, 2)));
        // ... until LATE_RUN in a row came after the Enter (0.9): nothing pending.
        assert_eq!(due_after(slow, now, mem(0, 2)), (now, mem(0, 3)));
        assert_eq!(
            due_after(slow, now, mem(long_ago, 7)),
            (now, mem(long_ago, 8))
        );
        // A Herdr that answered early lately is 0.8, however many slow answers follow.
        assert_eq!(
            due_after(slow, now, mem(now - 1000, 9)),
            (now + W, mem(now - 1000, 10))
        );
        // A plain call just before the prompt was quick and the prompt took half a window
        // longer: the answer came after the Enter (0.9) at the first one.
        let beside = |took: u64, reference: u64| Delivery::AnsweredBeside {
            took: Duration::from_millis(took),
            reference: Duration::from_millis(reference),
        };
        assert_eq!(
            due_after(beside(W + 12, 8), now, mem(0, 0)),
            (now, mem(0, LATE_RUN))
        );
        // ... not when the plain call was slow too (a loaded machine or server: 0.8 can be that
        // slow), nor when the prompt took about as long as it (a slow 0.8 server), nor when
        // the receiver answered early lately (0.8).
        assert_eq!(
            due_after(beside(W + 400, 300), now, mem(0, 0)),
            (now + W, mem(0, 1))
        );
        assert_eq!(
            due_after(beside(W + 12, W), now, mem(0, 0)),
            (now + W, mem(0, 1))
        );
        assert_eq!(
            due_after(beside(W + 12, 8), now, mem(now - 1000, 0)),
            (now + W, mem(now - 1000, LATE_RUN))
        );
        // An answer within the window is 0.8's whatever the plain call took.
        assert_eq!(
            due_after(beside(12, 8), now, mem(0, 5)),
            (now + W, mem(now, 0))
        );
        // A call that broke off may have typed now (0.8) or will type later (0.9).
        assert_eq!(
            due_after(Delivery::BrokeOff, now, mem(7, 3)),
            (now + W, mem(7, 3))
        );
    }

    #[test]
    fn the_turn_file_keeps_what_older_builds_read_in_its_first_32_bytes() {
        let dir = temp_dir("format");
        let path = dir.join("f");
        let m = Memory {
            early_ms: 99,
            late_run: 4,
        };
        std::fs::write(&path, encode(1234, m)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Older builds read up to 32 bytes and parse them, trimmed, as the due time.
        let old: u64 = std::str::from_utf8(&bytes[..32])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(old, 1234);
        let f = File::open(&path).unwrap();
        assert_eq!(read_state(&f), (1234, m));
        // A file an older build wrote: its due time, nothing remembered.
        std::fs::write(&path, format!("{:020}\n", 555)).unwrap();
        assert_eq!(
            read_state(&File::open(&path).unwrap()),
            (555, Memory::default())
        );
        // Garbage and emptiness read as nothing pending.
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(
            read_state(&File::open(&path).unwrap()),
            (0, Memory::default())
        );
        std::fs::write(&path, "").unwrap();
        assert_eq!(
            read_state(&File::open(&path).unwrap()),
            (0, Memory::default())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The due time a turn file holds.
    fn due_in(dir: &Path, key: u64) -> u64 {
        read_state(&File::open(dir.join(format!("{key:016x}"))).unwrap()).0
    }

    #[test]
    fn a_turn_records_the_enter_and_the_next_one_waits_for_it() {
        let dir = temp_dir("lone");
        let t = take_in_dir(&dir, 1, soon(5000)).unwrap();
        assert!(t.shared());
        let before = now_ms();
        t.delivered(Delivery::Answered(Duration::from_millis(5)));
        drop(t);
        assert!(due_in(&dir, 1) >= before + W);
        let t = take_in_dir(&dir, 1, soon(5000)).unwrap();
        assert!(
            t.waited() >= SUBMIT_WINDOW + MARGIN - Duration::from_millis(5),
            "{:?}",
            t.waited()
        );
        // Herdr answered after its Enter: nothing is pending for the next delivery.
        let before = now_ms();
        t.delivered(Delivery::Answered(SUBMIT_WINDOW * 2));
        drop(t);
        // It answered early a moment ago, so this slow answer is taken for a slow 0.8 one.
        assert!(due_in(&dir, 1) >= before + W);
        let mode = std::fs::metadata(dir.join(format!("{:016x}", 1u64)))
            .unwrap()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A receiver whose Herdr never answered early: after LATE_RUN answers in a row after
        // the window, the Enter counts as done when Herdr answers (0.9).
        for k in 1..=LATE_RUN {
            let t = take_in_dir(&dir, 2, soon(5000)).unwrap();
            let before = now_ms();
            t.delivered(Delivery::Answered(SUBMIT_WINDOW * 2));
            drop(t);
            let due = due_in(&dir, 2);
            if k < LATE_RUN {
                assert!(
                    due >= before + W,
                    "answer {k}: still taken for a slow 0.8 one"
                );
            } else {
                assert!(due >= before && due < before + W, "{due} vs {before}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A receiver whose Herdr answers after its Enter (0.9) gets its next delivery at once: no
    /// margin. One answering before it (0.8) waits for the Enter plus the margin; and a
    /// delivery that waited for its turn does not trust the plain call made before the wait.
    #[test]
    fn no_margin_where_herdr_serializes_submissions_itself() {
        let dir = temp_dir("nine");
        let t = take_in_dir(&dir, 6, soon(5000)).unwrap();
        t.delivered(Delivery::AnsweredBeside {
            took: SUBMIT_WINDOW + Duration::from_millis(10),
            reference: Duration::from_millis(5),
        });
        drop(t);
        let (due, m) = read_state(&File::open(dir.join(format!("{:016x}", 6u64))).unwrap());
        assert!(m.answers_after_enter(now_ms()), "{m:?}");
        assert!(due <= now_ms());
        // The margin would be due now too; none is added: a deadline of 0 ms more is met.
        let mut t = take_in_dir(&dir, 6, Instant::now()).unwrap();
        assert!(t.shared());
        // This delivery "waited" longer than a quick call takes: the reference is old by then.
        t.waited = QUICK * 2;
        t.delivered(Delivery::AnsweredBeside {
            took: SUBMIT_WINDOW + Duration::from_millis(10),
            reference: Duration::from_millis(5),
        });
        drop(t);
        // Still 0.9 (the run of late answers goes on), so nothing pending.
        let (due, m) = read_state(&File::open(dir.join(format!("{:016x}", 6u64))).unwrap());
        assert_eq!(m.late_run, LATE_RUN + 1);
        assert!(due <= now_ms());
        // Another delivery to the receiver joined while the prompt ran (a fan-in starting):
        // the quick reference proves nothing, the answer counts as a slow 0.8 one.
        let t = take_in_dir(&dir, 9, soon(5000)).unwrap();
        let Holder::File {
            _ticket: ticket, ..
        } = &t.holder
        else {
            panic!("a shared turn")
        };
        let before = ticket.drawn_so_far();
        let d = dir.clone();
        let other = std::thread::spawn(move || drop(take_in_dir(&d, 9, soon(5000)).unwrap()));
        while ticket.drawn_so_far() == before {
            std::thread::sleep(Duration::from_millis(1));
        }
        t.delivered(Delivery::AnsweredBeside {
            took: SUBMIT_WINDOW + Duration::from_millis(10),
            reference: Duration::from_millis(5),
        });
        drop(t);
        other.join().unwrap();
        let (_, m) = read_state(&File::open(dir.join(format!("{:016x}", 9u64))).unwrap());
        assert_eq!(
            m.late_run, 1,
            "one slow answer that does not settle it: {m:?}"
        );
        // A fresh receiver whose first answer came after a whole window with no reference:
        // taken for a slow 0.8 answer, so the next delivery waits the window and the margin.
        let t = take_in_dir(&dir, 8, soon(5000)).unwrap();
        t.delivered(Delivery::AnsweredBeside {
            took: SUBMIT_WINDOW + Duration::from_millis(10),
            reference: QUICK * 2,
        });
        drop(t);
        let t = take_in_dir(&dir, 8, soon(5000)).unwrap();
        assert!(
            t.waited() >= SUBMIT_WINDOW + MARGIN - Duration::from_millis(5),
            "{:?}",
            t.waited()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_held_turn_fails_at_the_deadline_and_a_closed_one_frees_at_once() {
        let dir = temp_dir("held");
        let held = take_in_dir(&dir, 7, soon(5000)).unwrap();
        let e = take_in_dir(&dir, 7, soon(200)).unwrap_err();
        assert!(e.waited >= Duration::from_millis(190), "{e:?}");
        assert_eq!(e.detail, STUCK);
        drop(held); // like a killed holder: the descriptor closes
        assert!(take_in_dir(&dir, 7, soon(5000)).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_enter_due_after_the_deadline_fails_at_once() {
        let dir = temp_dir("late");
        take_in_dir(&dir, 3, soon(5000))
            .unwrap()
            .delivered(Delivery::BrokeOff);
        // The Enter is due one window from now, the margin after it: past this deadline.
        let deadline = soon((SUBMIT_WINDOW + MARGIN).as_millis() as u64 - 50);
        let e = take_in_dir(&dir, 3, deadline).unwrap_err();
        // At once: it gave up before its deadline came, i.e. without waiting for it.
        assert!(Instant::now() < deadline, "it did not sleep first: {e:?}");
        assert!(e.detail.contains("due"), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_due_time_far_ahead_counts_as_one_window() {
        let dir = temp_dir("clock");
        let path = dir.join(format!("{:016x}", 4u64));
        std::fs::write(&path, format!("{:020}\n", now_ms() + 3_600_000)).unwrap();
        // The wait ends well before the hour: a deadline of 5 s is met.
        let t = take_in_dir(&dir, 4, soon(5000)).unwrap();
        assert!(t.waited() >= SUBMIT_WINDOW);
        drop(t);
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

    /// Sets `path`'s modification time to twice [`STALE`] ago.
    fn age(path: &Path) {
        let t = SystemTime::now() - 2 * STALE;
        match File::options().write(true).open(path) {
            Ok(f) => f.set_modified(t).unwrap(),
            Err(_) => File::open(path).unwrap().set_modified(t).unwrap(),
        }
    }

    #[test]
    fn stale_entries_are_swept_but_ones_in_use_are_not() {
        let dir = temp_dir("sweep");
        let old = |k: u64| {
            let p = dir.join(format!("{k:016x}"));
            std::fs::write(&p, "0\n").unwrap();
            age(&p);
            p
        };
        let (a, b) = (old(10), old(11));
        // What an older build left: a counter and a ticket in the turn directory itself.
        let legacy = dir.join(format!("{:016x}.{:020}", 10u64, 3));
        std::fs::write(&legacy, "").unwrap();
        age(&legacy);
        let held = take_in_dir(&dir, 11, soon(1000)).unwrap();
        age(&b);
        // A receiver whose last delivery is long over: its queue goes, counter and all.
        drop(take_in_dir(&dir, 12, soon(1000)).unwrap());
        let free_queue = dir.join(format!("{:016x}{QUEUE}", 12u64));
        std::fs::write(free_queue.join(format!("{:020}", 0)), "").unwrap(); // a dead ticket
        age(&free_queue);
        // A queue with a delivery in it (11's, held) stays even when it looks old.
        let busy_queue = dir.join(format!("{:016x}{QUEUE}", 11u64));
        age(&busy_queue);
        sweep(&dir);
        assert!(!a.exists(), "a stale file is removed");
        assert!(!legacy.exists(), "an older build's stale ticket is removed");
        assert!(b.exists(), "a held file stays");
        assert!(!free_queue.exists(), "a stale free queue is removed");
        assert!(busy_queue.join(COUNTER).exists(), "a queue in use stays");
        drop(held);
        // The receiver whose queue was swept gets its turns as before.
        drop(take_in_dir(&dir, 12, soon(1000)).unwrap());
        assert!(free_queue.join(COUNTER).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One sweep looks at [`SWEEP_MAX`] entries at most, and the next one goes on from there:
    /// every stale entry goes within a few sweeps, however many there are.
    #[test]
    fn sweeps_are_bounded_and_go_on_where_the_last_stopped() {
        let dir = temp_dir("sweep-bounded");
        let n = SWEEP_MAX * 2 + 10;
        for k in 0..n as u64 {
            let p = dir.join(format!("{:016x}", 1000 + k));
            std::fs::write(&p, "0\n").unwrap();
            age(&p);
        }
        let left = || std::fs::read_dir(&dir).unwrap().count() - 1; // less the cursor
        sweep(&dir);
        let after_one = left();
        assert!(after_one >= n - SWEEP_MAX, "{after_one} of {n} left");
        assert!(after_one < n, "the first sweep removed some");
        for _ in 0..4 {
            sweep(&dir);
        }
        assert_eq!(left(), 0, "all swept within a few sweeps");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Opening and reading events (inotify) on `dir` and on each of `also`, until dropped.
    struct Watch {
        fd: std::os::fd::OwnedFd,
        dirs: Vec<(i32, PathBuf)>,
    }

    impl Watch {
        fn new(dir: &Path, also: &[PathBuf]) -> Watch {
            use std::os::fd::FromRawFd;
            use std::os::unix::ffi::OsStrExt;
            // SAFETY: plain syscall; the descriptor is owned below.
            let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            assert!(raw >= 0);
            // SAFETY: a fresh descriptor we own.
            let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
            let mut dirs = Vec::new();
            for d in std::iter::once(&dir.to_path_buf()).chain(also) {
                let c = std::ffi::CString::new(d.as_os_str().as_bytes()).unwrap();
                // SAFETY: a valid descriptor and C string.
                let wd = unsafe {
                    libc::inotify_add_watch(raw, c.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS)
                };
                assert!(wd >= 0, "watch {}", d.display());
                dirs.push((wd, d.clone()));
            }
            Watch { fd, dirs }
        }

        /// What was opened or read since: (watched directory, name in it; empty: itself).
        fn events(&self) -> Vec<(PathBuf, String)> {
            use std::os::fd::AsRawFd;
            let mut out = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                // SAFETY: a valid descriptor and buffer.
                let n =
                    unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    return out;
                }
                let mut i = 0;
                while i < n as usize {
                    let wd = i32::from_ne_bytes(buf[i..i + 4].try_into().unwrap());
                    let len = u32::from_ne_bytes(buf[i + 12..i + 16].try_into().unwrap()) as usize;
                    let name = &buf[i + 16..i + 16 + len];
                    let name = String::from_utf8_lossy(name)
                        .trim_end_matches('\0')
                        .to_string();
                    let dir = self.dirs.iter().find(|(w, _)| *w == wd).map(|(_, d)| d);
                    out.push((dir.cloned().unwrap_or_default(), name));
                    i += 16 + len;
                }
            }
        }
    }

    /// A delivery opens its own receiver's entries by name and lists its own queue only: the
    /// shared directory is never listed, and no entry of another receiver (turn file, queue,
    /// ticket, counter) is opened or read, however many there are.
    #[test]
    fn a_delivery_reads_nothing_of_another_receiver() {
        let dir = temp_dir("blind");
        // Counted as swept just now: no sweep of this directory starts in this process.
        assert!(sweep_due(&dir));
        let others: Vec<u64> = (500..520).collect();
        for k in &others {
            std::fs::write(dir.join(format!("{k:016x}")), "0\n").unwrap();
            drop(take_in_dir(&dir, *k, soon(1000)).unwrap());
        }
        let queues: Vec<PathBuf> = others
            .iter()
            .map(|k| dir.join(format!("{k:016x}{QUEUE}")))
            .collect();
        let watch = Watch::new(&dir, &queues);
        // A lone delivery, then one that queues behind another.
        let t = take_in_dir(&dir, 1, soon(5000)).unwrap();
        t.delivered(Delivery::Answered(Duration::from_millis(400)));
        drop(t);
        let held = take_in_dir(&dir, 1, soon(5000)).unwrap();
        let Holder::File {
            _ticket: ticket, ..
        } = &held.holder
        else {
            panic!("a shared turn")
        };
        let ino = std::fs::metadata(&ticket.path).unwrap().ino();
        let d = dir.clone();
        let waiter = std::thread::spawn(move || drop(take_in_dir(&d, 1, soon(5000)).unwrap()));
        // Until the waiter queues on the held delivery's ticket (`/proc/locks` names no path).
        while waiters_on(ino) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(held);
        waiter.join().unwrap();
        let own = format!("{:016x}", 1u64);
        let foreign: Vec<_> = watch
            .events()
            .into_iter()
            .filter(|(d, name)| d != &dir || !name.starts_with(&own))
            .collect();
        assert!(
            foreign.is_empty(),
            "a delivery looked at the shared directory itself (empty name) or at another receiver's entries: {foreign:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_in_process_table_serializes_too() {
        let key = 0xfeed_0001;
        let t = take_in_process(key, soon(1000)).unwrap();
        assert!(!t.shared());
        assert_eq!(take_in_process(key, soon(100)).unwrap_err().detail, STUCK);
        t.delivered(Delivery::Answered(Duration::ZERO));
        drop(t);
        let t = take_in_process(key, soon(2000)).unwrap();
        assert!(t.waited() >= SUBMIT_WINDOW + MARGIN - Duration::from_millis(5));
    }

    #[test]
    fn an_unusable_runtime_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("open");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let choice = rundir::Choice {
            path: dir.clone(),
            kind: rundir::Kind::Tmp,
            passed_over: None,
        };
        assert!(prepare(&choice).unwrap_err().contains("0700"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(prepare(&choice).unwrap(), dir.join(DIR));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn turns_fall_back_to_the_home_state_dir_when_tmp_is_taken_and_say_when_not_shared() {
        use std::os::unix::fs::PermissionsExt;
        let root = temp_dir("place");
        let c = rundir::Candidates {
            run_user: root.join("no-run-user"),
            tmp: root.join("tmp-herdr-link"),
            home: Some(root.join("home/.local/state/herdr-link")),
        };
        // Free: /tmp, nothing passed over, usable as it will be made.
        assert_eq!(survey_in(&c), Ok((c.tmp.join(DIR), None)));
        assert_eq!(
            place_in(&c),
            Place::Shared {
                dir: c.tmp.join(DIR),
                kind: rundir::Kind::Tmp,
                passed_over: None
            }
        );
        // Taken (open to others here; another owner is the same to us): the home state dir.
        std::fs::set_permissions(&c.tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (dir, why) = survey_in(&c).unwrap();
        assert_eq!(dir, c.home.as_ref().unwrap().join(DIR));
        assert!(why
            .unwrap()
            .contains("tmp-herdr-link is not a private directory"));
        match place_in(&c) {
            Place::Shared {
                dir: d,
                kind,
                passed_over,
            } => {
                assert_eq!((d, kind), (dir.clone(), rundir::Kind::Home));
                assert!(passed_over.is_some());
            }
            other => panic!("{other:?}"),
        }
        assert!(rundir::private_dir(&dir));
        // Taken and no home to fall back to: not shared, and why.
        let no_home = rundir::Candidates {
            home: None,
            ..c.clone()
        };
        let why = survey_in(&no_home).unwrap_err();
        assert!(
            why.contains("tmp-herdr-link is not a private directory"),
            "{why}"
        );
        match place_in(&no_home) {
            Place::Process(reason) => assert!(reason.contains("tmp-herdr-link"), "{reason}"),
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    /// How many `flock` waiters the kernel has queued on the inode `ino`.
    fn waiters_on(ino: u64) -> usize {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        let tail = format!(":{ino}");
        locks
            .lines()
            .filter(|l| l.contains("->") && l.contains("FLOCK"))
            .filter(|l| l.split_whitespace().any(|w| w.ends_with(&tail)))
            .count()
    }

    /// How many `flock` waiters the kernel has queued on files in `dir` and its queues
    /// (`/proc/locks`, `->` lines): the turn files and the tickets.
    fn blocked_in(dir: &Path) -> usize {
        let mut inodes: Vec<String> = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                for q in std::fs::read_dir(e.path()).unwrap().flatten() {
                    inodes.extend(q.metadata().ok().map(|m| m.ino().to_string()));
                }
            } else {
                inodes.push(m.ino().to_string());
            }
        }
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        locks
            .lines()
            .filter(|l| l.contains("->") && l.contains("FLOCK"))
            .filter(|l| {
                l.split_whitespace().any(|w| {
                    w.contains(':')
                        && w.rsplit(':')
                            .next()
                            .is_some_and(|i| inodes.iter().any(|x| x == i))
                })
            })
            .count()
    }

    /// 64 deliveries that start waiting one after another while the turn is held get it in
    /// that order (their tickets' order: the kernel alone would not keep it).
    #[test]
    fn waiters_are_served_in_their_order_of_arrival() {
        let dir = temp_dir("fifo");
        let n = 64;
        let held = take_in_dir(&dir, 9, soon(60_000)).unwrap();
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for k in 0..n {
            let (d, order) = (dir.clone(), order.clone());
            waiters.push(std::thread::spawn(move || {
                let t = take_in_dir(&d, 9, soon(60_000)).unwrap();
                order.lock().unwrap().push(k);
                drop(t);
            }));
            // Until this waiter is queued on the lock (its helper thread blocks in flock).
            let deadline = Instant::now() + Duration::from_secs(60);
            while blocked_in(&dir) < k + 1 {
                assert!(Instant::now() < deadline, "waiter {k} never queued");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        drop(held);
        for w in waiters {
            w.join().unwrap();
        }
        let got = order.lock().unwrap().clone();
        let late: Vec<_> = got.windows(2).filter(|p| p[0] > p[1]).collect();
        assert!(late.is_empty(), "served out of arrival order: {got:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
