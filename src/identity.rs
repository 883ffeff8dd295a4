//! Live identity: who the caller is, who a target is, whether both share a workspace, and the
//! self-identity bootstrap (PROTOCOL §5, §6.2, §6.3). Everything is read fresh from Herdr on every
//! call; nothing is cached or persisted.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::Duration;

use crate::error::LinkError;
use crate::herdr::records::{AgentRecord, PaneRecord};
use crate::herdr::{CliFailure, Herdr};
use crate::protocol::{is_valid_agent_name, new_bootstrap_name, AgentState};

/// How many times the self probe runs while Herdr has not detected the occupant yet.
pub const READINESS_PROBES: usize = 3;
/// The pause between readiness probes.
pub const READINESS_PAUSE: Duration = Duration::from_millis(100);
/// How many generated names the bootstrap tries when Herdr says a name is taken.
pub const RENAME_ATTEMPTS: usize = 3;

/// The caller as Herdr sees it right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfContext {
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
pub struct TargetContext {
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
pub fn same_workspace(a: &str, b: &str) -> Result<(), LinkError> {
    if a.is_empty() || b.is_empty() || a != b {
        return Err(LinkError::PeerNotFound(NOT_A_PEER.into()));
    }
    Ok(())
}

/// A failed self lookup or rename: Herdr being unavailable stays NOT_IN_HERDR; anything else
/// (including `agent_not_found`) means Link could not establish the caller's name.
fn self_failure(f: CliFailure, what: &str) -> LinkError {
    match f {
        CliFailure::Transport(_) => f.classify(LinkError::SelfUnnamed),
        _ if f.is_code("not_in_herdr") => f.classify(LinkError::SelfUnnamed),
        _ => LinkError::SelfUnnamed(format!("{what} failed: {}", f.detail())),
    }
}

/// The caller's current public pane id when `pane` is a stale alias (Herdr gives a pane a new id
/// when it moves to another workspace and keeps the old one only as an alias, which `agent get`
/// does not accept). `None` when the id is current or the pane is unknown.
fn moved_pane(herdr: &Herdr, pane: &str) -> Option<String> {
    let v = herdr.pane_get(pane).ok()?;
    PaneRecord::from_response(&v)?
        .pane_id
        .filter(|current| current != pane)
}

/// Reads the caller's record (`agent get $HERDR_PANE_ID`). On `agent_not_found` it asks once
/// whether the pane moved (then reads the record under the current id), and otherwise retries
/// while Herdr has not detected the occupant yet. Returns the record and the pane id it used.
fn probe_self(herdr: &Herdr, pane: &str) -> Result<(AgentRecord, String), LinkError> {
    let mut pane = pane.to_string();
    let mut asked_moved = false;
    let mut attempt = 1;
    loop {
        match herdr.agent_get(&pane) {
            Ok(v) => return Ok((AgentRecord::from_response(&v).unwrap_or_default(), pane)),
            Err(f) if f.is_code("agent_not_found") && attempt < READINESS_PROBES => {
                if !asked_moved {
                    asked_moved = true;
                    if let Some(current) = moved_pane(herdr, &pane) {
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

/// Resolves the caller, giving it a bootstrap Agent Name first when it is live but unnamed.
pub fn self_context(herdr: &Herdr, pane: &str) -> Result<SelfContext, LinkError> {
    let (mut record, current) = probe_self(herdr, pane)?;
    if record.stable_name().is_none() && record.is_live() {
        record = ensure_self_name(herdr, &current)?;
    }
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
pub fn self_workspace(herdr: &Herdr, pane: &str) -> Result<String, LinkError> {
    let v = match herdr.agent_get(pane) {
        Err(f) if f.is_code("agent_not_found") => match moved_pane(herdr, pane) {
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
pub fn target_context(herdr: &Herdr, name: &str) -> Result<TargetContext, LinkError> {
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
/// record. At most one sequence runs per pane at a time; concurrent callers share its outcome,
/// and the guard is cleared once it settles (nothing is cached, so a failure poisons nothing).
pub fn ensure_self_name(herdr: &Herdr, pane: &str) -> Outcome {
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

/// The bootstrap sequence itself: probe; keep a valid name; otherwise rename to a generated
/// `hl-xxxxxxxx` (new name on `agent_name_taken`, up to three) and confirm by re-reading.
fn bootstrap(herdr: &Herdr, pane: &str) -> Outcome {
    let (record, pane) = probe_self(herdr, pane)?;
    let pane = pane.as_str();
    if record.stable_name().is_some() {
        return Ok(record);
    }
    if !record.is_live() {
        return Err(LinkError::SelfUnnamed(
            "current occupant is not live".into(),
        ));
    }
    for _ in 0..RENAME_ATTEMPTS {
        let name = new_bootstrap_name();
        match herdr.agent_rename(pane, &name) {
            Ok(_) => {
                let (confirmed, _) = probe_self(herdr, pane)?;
                return match confirmed.stable_name() {
                    Some(_) => Ok(confirmed),
                    None => Err(LinkError::SelfUnnamed(
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

/// Starts the self-identity bootstrap on a background thread when the environment gate is open
/// (fire and forget: the host is never blocked; a failure is logged and retried on demand by the
/// next communication call). Its Herdr calls go to the operator log under `session`. Returns the
/// thread, for a process that wants to let it finish before exiting.
pub fn bootstrap_in_background(session: &str) -> Option<std::thread::JoinHandle<()>> {
    let herdr_env = crate::env::gate()?;
    if lock(&IN_FLIGHT).contains_key(&herdr_env.pane_id) {
        return None; // one is already running for this pane; its outcome serves everyone
    }
    let session = session.to_string();
    std::thread::Builder::new()
        .name("herdr-link-bootstrap".into())
        .spawn(move || {
            let _ = std::panic::catch_unwind(|| {
                let started = std::time::Instant::now();
                let herdr = Herdr::new(&herdr_env);
                let result = ensure_self_name(&herdr, &herdr_env.pane_id);
                let (code, detail) = match &result {
                    Ok(_) => ("ok", String::new()),
                    Err(e) => (e.code(), e.detail().to_string()),
                };
                crate::oplog::record(&crate::oplog::Entry {
                    session: &session,
                    tool: "bootstrap",
                    action: None,
                    calls: &herdr.take_trace(),
                    code,
                    detail: &detail,
                    elapsed: started.elapsed(),
                });
            });
        })
        .ok()
}
