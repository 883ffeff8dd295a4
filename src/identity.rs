//! Live identity: who the caller is, who a target is, whether both share a workspace, and the
//! self-identity bootstrap (PROTOCOL §5, §6.2, §6.3). Everything is read fresh from Herdr on every
//! call; nothing is cached or persisted.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::Duration;

use crate::error::LinkError;
use crate::herdr::records::{AgentRecord, PaneRecord};
use crate::herdr::{CliFailure, Herdr};
use crate::protocol::{is_valid_agent_name, new_bootstrap_name, AgentState};

/// How many times the self probe runs while Herdr has not detected the occupant yet.
pub(crate) const READINESS_PROBES: usize = 3;
/// The pause between readiness probes.
pub(crate) const READINESS_PAUSE: Duration = Duration::from_millis(100);
/// How many generated names the bootstrap tries when Herdr says a name is taken.
pub(crate) const RENAME_ATTEMPTS: usize = 3;

/// The caller as Herdr sees it right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelfContext {
    /// Live Agent Name.
    pub name: String,
    /// Live workspace id (empty when Herdr reported none; every workspace check then fails).
    pub workspace_id: String,
    /// Live pane id.
    pub pane_id: String,
    /// Live state.
    pub state: AgentState,
}

/// A target agent as Herdr sees it right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetContext {
    /// Live Agent Name (equal to the requested one).
    pub name: String,
    /// Live workspace id, or empty.
    pub workspace_id: String,
    /// Live pane id, or empty.
    pub pane_id: String,
    /// Live state.
    pub state: AgentState,
}

const NOT_A_PEER: &str = "target agent is not a live peer";

/// The same-workspace guard: both ids non-empty and equal, else the one PEER_NOT_FOUND.
pub(crate) fn same_workspace(a: &str, b: &str) -> Result<(), LinkError> {
    if a.is_empty() || b.is_empty() || a != b {
        return Err(LinkError::PeerNotFound(NOT_A_PEER.into()));
    }
    Ok(())
}

/// A failed self lookup or rename: an unavailable Herdr (no server, another protocol, not
/// Herdr, no answer) stays NOT_IN_HERDR; only Herdr's own answer about the caller (including
/// `agent_not_found`) means Link could not establish the caller's name.
fn self_failure(f: CliFailure, what: &str) -> LinkError {
    if f.unavailable_cause().is_some() {
        return LinkError::NotInHerdr(format!("{what} failed: {}", f.detail()));
    }
    LinkError::SelfUnnamed(format!("{what} failed: {}", f.detail()))
}

/// The caller's current public pane id when `pane` is a stale alias (Herdr gives a pane a new id
/// when it moves to another workspace and keeps the old one only as an alias, which `agent get`
/// does not accept). `None` when the id is current or the pane is unknown; an unavailable Herdr
/// is NOT_IN_HERDR.
fn moved_pane(herdr: &Herdr, pane: &str) -> Result<Option<String>, LinkError> {
    let v = match herdr.pane_get(pane) {
        Ok(v) => v,
        Err(f) if f.unavailable_cause().is_some() => {
            return Err(LinkError::NotInHerdr(format!(
                "pane lookup failed: {}",
                f.detail()
            )))
        }
        Err(_) => return Ok(None),
    };
    Ok(PaneRecord::from_response(&v)
        .and_then(|p| p.pane_id)
        .filter(|current| current != pane))
}

/// Reads the caller's record (`agent get $HERDR_PANE_ID`). On `agent_not_found` it asks once
/// whether the pane moved (then reads the record under the current id), and otherwise retries
/// while Herdr has not detected the occupant yet. Returns the record the reply held (`None` when
/// it held none) and the pane id it used. Read-only: `herdr-link doctor` looks the caller up
/// through it too, so it finds the same record Link does.
pub fn probe_self(herdr: &Herdr, pane: &str) -> Result<(Option<AgentRecord>, String), LinkError> {
    let mut pane = pane.to_string();
    let mut asked_moved = false;
    let mut attempt = 1;
    loop {
        match herdr.agent_get(&pane) {
            Ok(v) => return Ok((AgentRecord::from_response(&v), pane)),
            Err(f) if f.is_code("agent_not_found") && attempt < READINESS_PROBES => {
                if !asked_moved {
                    asked_moved = true;
                    if let Some(current) = moved_pane(herdr, &pane)? {
                        pane = current;
                        continue;
                    }
                }
                attempt += 1;
                std::thread::sleep(READINESS_PAUSE);
            }
            Err(f) => return Err(self_failure(f, "self lookup")),
        }
    }
}

/// A positive record of the live occupant of `pane` that has no valid Agent Name: the only
/// record the bootstrap may rename (§6.3). A reply without a record, a record of another pane
/// (or with no pane id) and a record reported not live never qualify.
fn unnamed_occupant_of(record: &AgentRecord, pane: &str) -> bool {
    record.name.is_none() && record.is_live() && record.pane_id.as_deref() == Some(pane)
}

/// What Link makes of the caller's record ([`probe_self`]'s answer for the pane `current`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelfRecord {
    /// Live with a valid Agent Name: used as is.
    Named,
    /// This pane's live occupant without a valid name: the bootstrap names it first.
    Unnamed,
    /// Link cannot be this caller (SELF_UNNAMED), for the reason given.
    Refused(&'static str),
}

/// The one judgement of the caller's record, for Link's own calls and for `herdr-link doctor`.
pub fn judge_self(record: Option<&AgentRecord>, current: &str) -> SelfRecord {
    match record {
        Some(r) if r.stable_name().is_some() => SelfRecord::Named,
        Some(r) if unnamed_occupant_of(r, current) => SelfRecord::Unnamed,
        Some(_) => SelfRecord::Refused("the self record is not this pane's live occupant"),
        None => SelfRecord::Refused("the self lookup returned no agent record"),
    }
}

/// Resolves the caller, giving it a bootstrap Agent Name first when it is live but unnamed.
/// Used by every communication path and by the startup bootstrap, so both merge into the one
/// in-flight sequence of the resolved pane.
pub(crate) fn self_context(herdr: &Herdr, pane: &str) -> Result<SelfContext, LinkError> {
    let (record, current) = probe_self(herdr, pane)?;
    let record = match judge_self(record.as_ref(), &current) {
        SelfRecord::Named => record.unwrap_or_default(),
        SelfRecord::Unnamed => ensure_self_name(herdr, &current)?,
        SelfRecord::Refused(why) => return Err(LinkError::SelfUnnamed(why.into())),
    };
    let name = record
        .stable_name()
        .ok_or_else(|| LinkError::SelfUnnamed("current Herdr agent has no valid name".into()))?
        .to_string();
    Ok(SelfContext {
        name,
        workspace_id: record.workspace_id.unwrap_or_default(),
        pane_id: record.pane_id.unwrap_or(current),
        state: record.state,
    })
}

/// The caller's workspace only, for close: no name needed, no bootstrap, no readiness retry.
pub(crate) fn self_workspace(herdr: &Herdr, pane: &str) -> Result<String, LinkError> {
    let v = match herdr.agent_get(pane) {
        Err(f) if f.is_code("agent_not_found") => match moved_pane(herdr, pane)? {
            Some(current) => herdr.agent_get(&current),
            None => Err(f),
        },
        other => other,
    }
    .map_err(|f| f.classify(LinkError::NotInHerdr))?;
    let record = AgentRecord::from_response(&v).unwrap_or_default();
    match record.workspace_id {
        Some(ws) if record.is_live() => Ok(ws),
        _ => Err(LinkError::PeerNotFound(
            "caller has no live workspace".into(),
        )),
    }
}

/// Resolves a target by Agent Name: the name rule first (no call for an invalid name), then a
/// live record whose name is exactly the one asked for.
pub(crate) fn target_context(herdr: &Herdr, name: &str) -> Result<TargetContext, LinkError> {
    if !is_valid_agent_name(name) {
        return Err(LinkError::PeerNotFound(NOT_A_PEER.into()));
    }
    let v = herdr
        .agent_get(name)
        .map_err(|f| f.classify(LinkError::PeerNotFound))?;
    let record = AgentRecord::from_response(&v).unwrap_or_default();
    if record.stable_name() != Some(name) {
        return Err(LinkError::PeerNotFound(NOT_A_PEER.into()));
    }
    Ok(TargetContext {
        name: name.to_string(),
        workspace_id: record.workspace_id.unwrap_or_default(),
        pane_id: record.pane_id.unwrap_or_default(),
        state: record.state,
    })
}

type Outcome = Result<AgentRecord, LinkError>;

/// One bootstrap sequence in flight; later callers wait for its outcome instead of renaming.
#[derive(Default)]
struct InFlight {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

static IN_FLIGHT: LazyLock<Mutex<HashMap<String, Arc<InFlight>>>> = LazyLock::new(Default::default);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes sure the occupant of `pane` has a stable Agent Name and returns its confirmed live
/// record. `pane` is the resolved (current) pane id, never a stale alias, so the startup run and
/// the communication paths of one pane share one key. At most one sequence runs per pane at a
/// time; concurrent callers share its outcome, and the guard is cleared once it settles (nothing
/// is cached, so a failure poisons nothing).
fn ensure_self_name(herdr: &Herdr, pane: &str) -> Outcome {
    let (slot, leader) = {
        let mut map = lock(&IN_FLIGHT);
        match map.get(pane) {
            Some(existing) => (existing.clone(), false),
            None => {
                let fresh = Arc::new(InFlight::default());
                map.insert(pane.to_string(), fresh.clone());
                (fresh, true)
            }
        }
    };
    if !leader {
        let mut outcome = lock(&slot.outcome);
        while outcome.is_none() {
            outcome = slot.done.wait(outcome).unwrap_or_else(|e| e.into_inner());
        }
        return outcome.clone().expect("outcome set");
    }
    // Whatever happens (even a panic), settle the slot and clear the guard.
    struct Settle<'a> {
        pane: &'a str,
        slot: &'a InFlight,
        outcome: Option<Outcome>,
    }
    impl Drop for Settle<'_> {
        fn drop(&mut self) {
            let outcome = self
                .outcome
                .take()
                .unwrap_or_else(|| Err(LinkError::SelfUnnamed("bootstrap aborted".into())));
            lock(&IN_FLIGHT).remove(self.pane);
            *lock(&self.slot.outcome) = Some(outcome);
            self.slot.done.notify_all();
        }
    }
    let mut settle = Settle {
        pane,
        slot: &slot,
        outcome: None,
    };
    let outcome = bootstrap(herdr, pane);
    settle.outcome = Some(outcome.clone());
    drop(settle);
    outcome
}

/// One read of the record of `pane` (already resolved to its current id): no readiness retry and
/// no move lookup, for the bootstrap's own re-read and the confirmation after a rename.
fn read_own_record(
    herdr: &Herdr,
    pane: &str,
    what: &str,
) -> Result<Option<AgentRecord>, LinkError> {
    herdr
        .agent_get(pane)
        .map(|v| AgentRecord::from_response(&v))
        .map_err(|f| self_failure(f, what))
}

/// The bootstrap sequence itself, on the resolved pane: re-read the record (a sequence that
/// settled just before may have named it); keep a valid name; rename only a positive record of
/// this pane's live unnamed occupant, to a generated `hl-xxxxxxxx` (a new name on
/// `agent_name_taken`, up to three); then confirm with one fresh read, never retried.
fn bootstrap(herdr: &Herdr, pane: &str) -> Outcome {
    match read_own_record(herdr, pane, "bootstrap lookup")? {
        Some(r) if r.stable_name().is_some() => return Ok(r),
        Some(r) if unnamed_occupant_of(&r, pane) => {}
        _ => {
            return Err(LinkError::SelfUnnamed(
                "no live unnamed occupant of this pane to name".into(),
            ))
        }
    }
    for _ in 0..RENAME_ATTEMPTS {
        let name = new_bootstrap_name();
        match herdr.agent_rename(pane, &name) {
            Ok(_) => {
                return match read_own_record(herdr, pane, "rename confirmation")? {
                    Some(r) if r.stable_name().is_some() && r.pane_id.as_deref() == Some(pane) => {
                        Ok(r)
                    }
                    _ => Err(LinkError::SelfUnnamed(
                        "rename was not confirmed by the live record".into(),
                    )),
                };
            }
            Err(f) if f.is_code("agent_name_taken") => continue,
            Err(f) => return Err(self_failure(f, "bootstrap rename")),
        }
    }
    Err(LinkError::SelfUnnamed(
        "every generated name was already taken".into(),
    ))
}

/// Panes with a startup bootstrap thread running, keyed by `HERDR_PANE_ID` as given. Checking and
/// inserting happen under one lock, so a burst of session starts spawns one thread per pane.
static STARTUP: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);

/// Removes a pane's startup entry when its thread ends, however it ends.
struct StartupEntry(String);

impl Drop for StartupEntry {
    fn drop(&mut self) {
        lock(&STARTUP).remove(&self.0);
    }
}

/// Starts the self-identity bootstrap on a background thread when the environment gate is open
/// (fire and forget: the host is never blocked; a failure is logged and retried on demand by the
/// next communication call). At most one such thread runs per pane: while one runs, further calls
/// start nothing and return `None`. Its Herdr calls go to the operator log under `session`.
/// Returns the thread, for a process that wants to let it finish before exiting.
pub fn bootstrap_in_background(session: &str) -> Option<std::thread::JoinHandle<()>> {
    let herdr_env = crate::env::gate()?;
    if !lock(&STARTUP).insert(herdr_env.pane_id.clone()) {
        return None; // one is already running for this pane; its outcome serves everyone
    }
    let entry = StartupEntry(herdr_env.pane_id.clone());
    let session = session.to_string();
    std::thread::Builder::new()
        .name("herdr-link-bootstrap".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let herdr = Herdr::new(&herdr_env);
                // The same path as a communication call: probe, resolve a moved pane, then join
                // (or lead) the one in-flight sequence of the resolved pane.
                let result = self_context(&herdr, &herdr_env.pane_id);
                (result, herdr.take_trace())
            }));
            drop(entry); // settled: a later session start may run a fresh one
            let Ok((result, calls)) = run else { return };
            let (code, detail) = match &result {
                Ok(_) => (crate::oplog::OK, ""),
                Err(e) => (e.code(), e.detail()),
            };
            crate::oplog::Entry::new(&session, "bootstrap", code, detail)
                .calls(&calls)
                .since(started)
                .record();
        })
        .ok()
}
