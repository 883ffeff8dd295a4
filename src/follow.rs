//! Deliveries that went nowhere: after a send was answered `sent`, its receiver's Herdr state is
//! followed from the side until the receiver is seen `working` (the message was taken up) or a
//! bound passes ("delivered, not taken up"); either way one operator-log line says so
//! (`"tool":"follow"`, code [`TAKEN_UP`] or [`NOT_TAKEN_UP`]).
//!
//! Never part of a call: the send's result is already built when [`delivered`] hands the message
//! over, and nothing here reaches the model, retries or resends. The only Herdr command is
//! `agent get <receiver>` (PROTOCOL §8). One background thread per process follows every
//! message (started at the first one, blocked on its queue when there is nothing to follow), in
//! a host that loads the library as in the MCP server; at most [`MAX_PENDING`] messages are
//! followed at once and further ones are not followed (counted: [`not_followed`]). A process
//! that exits first simply leaves its pending messages without a line.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use crate::env::{self, HerdrEnv};
use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::target_context;
use crate::oplog::{Entry, MessageTrace};
use crate::protocol::AgentState;

/// The code of a follow-up line whose receiver was seen working within the bound.
pub const TAKEN_UP: &str = "taken_up";
/// The code of a follow-up line whose receiver was not seen working within the bound.
pub const NOT_TAKEN_UP: &str = "not_taken_up";
/// The tool name of follow-up lines.
pub const TOOL: &str = "follow";
/// The first look at the receiver, after the send was answered.
pub(crate) const FIRST_LOOK: Duration = Duration::from_millis(300);
/// Between two looks at one receiver.
pub(crate) const EVERY: Duration = Duration::from_millis(500);
/// Messages followed at once, at most.
pub const MAX_PENDING: usize = 64;

static NOT_FOLLOWED: AtomicU64 = AtomicU64::new(0);

/// How many delivered messages were not followed (too many at once, or no thread).
pub fn not_followed() -> u64 {
    NOT_FOLLOWED.load(Ordering::Relaxed)
}

/// One delivered message being followed.
struct Job {
    herdr: HerdrEnv,
    session: String,
    message: MessageTrace,
    delivered: Instant,
    bound: Duration,
    looks: u32,
    next: Instant,
}

static QUEUE: LazyLock<Mutex<Option<SyncSender<Job>>>> = LazyLock::new(|| Mutex::new(None));

fn queue() -> Option<SyncSender<Job>> {
    let mut slot = QUEUE.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let (tx, rx) = sync_channel::<Job>(MAX_PENDING);
        std::thread::Builder::new()
            .name("herdr-link-follow".into())
            .spawn(move || follower(rx))
            .ok()?;
        *slot = Some(tx);
    }
    slot.clone()
}

/// Hands a message that was just answered `sent` to the follower (unless following is off,
/// `HERDR_LINK_FOLLOW=0` or the log is off). Never blocks: a full queue leaves it unfollowed.
pub fn delivered(herdr: &HerdrEnv, session: &str, message: MessageTrace) {
    if !env::follow() {
        return;
    }
    let now = Instant::now();
    let job = Job {
        herdr: herdr.clone(),
        session: session.to_string(),
        message,
        delivered: now,
        bound: env::taken_up_bound(),
        looks: 0,
        next: now + FIRST_LOOK,
    };
    if !queue().is_some_and(|tx| tx.try_send(job).is_ok()) {
        NOT_FOLLOWED.fetch_add(1, Ordering::Relaxed);
    }
}

fn follower(rx: std::sync::mpsc::Receiver<Job>) {
    let mut pending: Vec<Job> = Vec::new();
    loop {
        let next = pending.iter().map(|j| j.next).min();
        let got = match next {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match got {
            Ok(job) if pending.len() < MAX_PENDING => pending.push(job),
            Ok(_) => {
                NOT_FOLLOWED.fetch_add(1, Ordering::Relaxed);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        pending.retain_mut(|job| job.next > now || !look(job));
    }
}

/// One look at the receiver: `true` when the job is finished (its line written).
fn look(job: &mut Job) -> bool {
    job.looks += 1;
    let herdr = Herdr::new(&job.herdr);
    let seen = target_context(&herdr, &job.message.to);
    let after = job.delivered.elapsed();
    let (code, detail) = match &seen {
        Ok(t) if t.state == AgentState::Working => {
            let busy = if job.message.receiver_state == AgentState::Working.as_str() {
                " (it was already working when the message was delivered)"
            } else {
                ""
            };
            (
                TAKEN_UP,
                format!(
                    "{} was working {} ms after delivery, at look {}{busy}",
                    job.message.to,
                    after.as_millis(),
                    job.looks
                ),
            )
        }
        Err(e @ LinkError::PeerNotFound(_)) => (
            NOT_TAKEN_UP,
            format!(
                "{} is no longer a live agent ({}), {} ms after delivery",
                job.message.to,
                e.detail(),
                after.as_millis()
            ),
        ),
        _ if after < job.bound => {
            job.next = Instant::now() + EVERY;
            return false;
        }
        seen => (
            NOT_TAKEN_UP,
            format!(
                "{} was not seen working within {} ms of delivery ({} looks; last seen {})",
                job.message.to,
                job.bound.as_millis(),
                job.looks,
                match seen {
                    Ok(t) => t.state.as_str().to_string(),
                    Err(e) => format!("as {}: {}", e.code(), e.detail()),
                }
            ),
        ),
    };
    let calls = herdr.take_trace();
    Entry::new(&job.session, TOOL, code, &detail)
        .calls(&calls)
        .message(Some(&job.message))
        .since(job.delivered)
        .record();
    true
}
