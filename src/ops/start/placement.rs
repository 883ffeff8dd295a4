//! Link-managed placement: a new focus-free tab, or a sibling pane split from an anchor agent.
//! Each allocation knows how to undo exactly what it created.

use crate::error::LinkError;
use crate::herdr::records::{created_tab_id, pane_list, PaneRecord};
use crate::herdr::{CliFailure, Herdr};
use crate::identity::{same_workspace, target_context};

/// What this start created, and the pane to launch in.
pub struct Allocation {
    /// The pane `agent start` runs in.
    pub pane_id: String,
    undo: Undo,
}

enum Undo {
    CloseTab(String),
    ClosePane(String),
}

impl Allocation {
    /// Closes exactly the tab or pane this call created, after `primary` made the start fail,
    /// and returns the error to report: `primary`, unless the rollback found Herdr unavailable
    /// (then NOT_IN_HERDR: the truth is that Herdr is gone, and what was made may still be there).
    pub fn roll_back(&self, herdr: &Herdr, primary: LinkError) -> LinkError {
        let undone = match &self.undo {
            Undo::CloseTab(tab) => herdr.tab_close(tab),
            Undo::ClosePane(pane) => herdr.pane_close(pane),
        };
        after_rollback(primary, undone)
    }
}

/// The error of a start whose rollback gave `undone`: a rollback that found Herdr unavailable
/// makes it NOT_IN_HERDR; any other rollback failure leaves `primary` as it is.
fn after_rollback(primary: LinkError, undone: Result<serde_json::Value, CliFailure>) -> LinkError {
    match undone {
        Err(f) if f.unavailable_cause().is_some() && primary.code() != "NOT_IN_HERDR" => {
            LinkError::NotInHerdr(format!(
                "{}; the rollback failed: {}",
                primary.detail(),
                f.detail()
            ))
        }
        _ => primary,
    }
}

/// A failed Herdr call of a start: an argv the kernel refused as too long never reached Herdr
/// and says so; anything else is classified as every step's failure is, with START_FAILED as
/// the operation's own code.
pub(super) fn start_failure(f: CliFailure) -> LinkError {
    match f {
        CliFailure::ArgsTooLong(detail) => LinkError::StartTooLongHere(detail),
        f => f.classify(LinkError::StartFailed),
    }
}

/// `tab create` in the caller's live workspace, then the new tab's single root pane from a fresh
/// `pane list` (the create response's `root_pane` is not trusted).
pub fn new_tab(
    herdr: &Herdr,
    workspace: &str,
    cwd: &str,
    label: Option<&str>,
) -> Result<Allocation, LinkError> {
    if workspace.is_empty() {
        return Err(LinkError::StartNoPlace(
            "caller reported no workspace".into(),
        ));
    }
    let created = herdr
        .tab_create(workspace, cwd, label)
        .map_err(start_failure)?;
    let tab = created_tab_id(&created)
        .ok_or_else(|| LinkError::StartNoPlace("created tab reported no tab id".into()))?;
    let root = herdr
        .pane_list(workspace)
        .map_err(start_failure)
        .and_then(|list| {
            let mut roots: Vec<String> = pane_list(&list)
                .into_iter()
                .filter(|p| p.tab_id.as_deref() == Some(tab.as_str()))
                .filter_map(|p| p.pane_id)
                .collect();
            if roots.len() == 1 {
                Ok(roots.remove(0))
            } else {
                Err(LinkError::StartNoPlace(format!(
                    "created tab {tab} must contain exactly one root pane, found {}",
                    roots.len()
                )))
            }
        });
    match root {
        Ok(pane_id) => Ok(Allocation {
            pane_id,
            undo: Undo::CloseTab(tab),
        }),
        Err(e) => Err(after_rollback(e, herdr.tab_close(&tab))),
    }
}

/// Splits the anchor agent's pane to the right, inheriting the anchor's live cwd. The anchor must
/// be in the caller's workspace by both its agent record and its pane record.
pub fn with_anchor(herdr: &Herdr, workspace: &str, anchor: &str) -> Result<Allocation, LinkError> {
    let anchor = target_context(herdr, anchor)?;
    same_workspace(workspace, &anchor.workspace_id)?;
    if anchor.pane_id.is_empty() {
        return Err(LinkError::PeerNotFound("anchor reported no pane".into()));
    }
    let pane = herdr.pane_get(&anchor.pane_id).map_err(start_failure)?;
    let pane = PaneRecord::from_response(&pane).unwrap_or_default();
    same_workspace(workspace, pane.workspace_id.as_deref().unwrap_or(""))?;
    let cwd = pane.cwd.ok_or_else(|| {
        LinkError::StartNoPlace(format!("anchor pane {} reported no cwd", anchor.pane_id))
    })?;
    let split = herdr
        .pane_split(&anchor.pane_id, &cwd)
        .map_err(start_failure)?;
    let pane_id = PaneRecord::from_response(&split)
        .and_then(|p| p.pane_id)
        .ok_or_else(|| LinkError::StartNoPlace("pane split returned no created pane id".into()))?;
    Ok(Allocation {
        undo: Undo::ClosePane(pane_id.clone()),
        pane_id,
    })
}
