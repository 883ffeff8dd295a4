//! `herdr_link_start`: validate, pick a variant, allocate a tab or pane (Link-managed placement),
//! launch with `agent start`, and roll back exactly what this call created if anything fails.

pub mod config;
mod placement;
mod rotation;

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::identity::self_context;
use crate::protocol::is_valid_agent_name;
use config::{Placement, Variant};
use placement::Allocation;

/// The fields a start input may hold (its row of [`super::OPERATIONS`]); any other is refused.
pub const FIELDS: [&str; 6] = ["name", "with", "cwd", "config_agent", "kind", "args"];

/// The start input after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartInput {
    /// The new agent's name.
    pub name: String,
    /// Anchor agent for `with` placement.
    pub with: Option<String>,
    /// New-tab launch directory as given (relative to the context dir when not absolute).
    pub cwd: Option<String>,
    /// Configured or explicit.
    pub mode: Mode,
}

/// Where the launch parameters come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `config_agent`: an entry of the config file.
    Configured(String),
    /// `kind` + `args`, passed verbatim.
    Explicit(Variant),
}

/// Checks the model's input (behaviour doc §5.2) before anything else happens. Each refusal
/// names the field to fix (its own row of the error table); the detail says what was given.
pub fn validate(input: &Map<String, Value>) -> Result<StartInput, LinkError> {
    use LinkError as E;
    if let Some(k) = input.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(E::StartUnknownField(format!(
            "unknown field {}",
            crate::limits::echo(k)
        )));
    }
    let name = input
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| is_valid_agent_name(n))
        .ok_or_else(|| E::StartNameInvalid("name must be a valid Agent Name".into()))?
        .to_string();
    let with = match input.get("with") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .filter(|n| is_valid_agent_name(n))
                .ok_or_else(|| E::StartWithInvalid("with must be a valid Agent Name".into()))?
                .to_string(),
        ),
    };
    let cwd = match input.get("cwd") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .filter(|c| !c.trim().is_empty())
                .ok_or_else(|| E::StartCwdInvalid("cwd must be a non-blank string".into()))?
                .to_string(),
        ),
    };
    let has = |k: &str| input.contains_key(k);
    if has("config_agent") && (has("kind") || has("args")) {
        return Err(E::StartModesMixed(
            "config_agent cannot be combined with kind/args".into(),
        ));
    }
    let mode = if let Some(v) = input.get("config_agent") {
        let key = v.as_str().filter(|k| !k.trim().is_empty()).ok_or_else(|| {
            E::StartConfigAgentInvalid("config_agent must be a non-blank string".into())
        })?;
        Mode::Configured(key.to_string())
    } else {
        let (kind, args) = match (input.get("kind"), input.get("args")) {
            (Some(kind), Some(args)) => (kind, args),
            (None, None) => {
                return Err(E::StartSourceMissing(
                    "neither config_agent nor kind and args".into(),
                ))
            }
            (None, Some(_)) => return Err(E::StartKindMissing("args without kind".into())),
            (Some(_), None) => return Err(E::StartArgsMissing("kind without args".into())),
        };
        let kind = kind
            .as_str()
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| E::StartKindInvalid("kind must be a non-blank string".into()))?
            .to_string();
        let args = args
            .as_array()
            .and_then(|a| {
                a.iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| E::StartArgsInvalid("args must be an array of strings".into()))?;
        if let Some(why) = config::args_too_large(&args) {
            return Err(E::StartArgsTooLarge(format!("args: {why}")));
        }
        if with.is_some() && cwd.is_some() {
            return Err(E::StartWithAndCwd(
                "with cannot be combined with cwd".into(),
            ));
        }
        Mode::Explicit(Variant { kind, args })
    };
    Ok(StartInput {
        name,
        with,
        cwd,
        mode,
    })
}

/// Where the new agent goes, after the placement matrix (behaviour doc §5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    NewTab { cwd: PathBuf, label: Option<String> },
    With { anchor: String },
}

fn resolve_target(
    input: &StartInput,
    placement: &Placement,
    context_dir: &Path,
) -> Result<Target, LinkError> {
    match placement {
        Placement::NewTab { label } => {
            if input.with.is_some() {
                return Err(LinkError::StartEntryRefusesWith(
                    "this entry's placement is new_tab; with is not allowed".into(),
                ));
            }
            let cwd = launch_dir(input.cwd.as_deref(), context_dir)?;
            Ok(Target::NewTab {
                cwd,
                label: label.clone(),
            })
        }
        Placement::With => {
            if input.cwd.is_some() {
                return Err(LinkError::StartEntryRefusesCwd(
                    "with placement inherits the anchor's cwd; cwd is not allowed".into(),
                ));
            }
            let anchor = input.with.clone().ok_or_else(|| {
                LinkError::StartEntryNeedsWith(
                    "this entry's placement is with; an anchor is required".into(),
                )
            })?;
            Ok(Target::With { anchor })
        }
    }
}

/// The absolute new-tab launch directory, which must exist: Herdr would silently start the shell
/// in `$HOME` otherwise.
fn launch_dir(cwd: Option<&str>, context_dir: &Path) -> Result<PathBuf, LinkError> {
    let dir = match cwd {
        None => context_dir.to_path_buf(),
        Some(c) => context_dir.join(c).components().collect(),
    };
    if !dir.is_dir() {
        return Err(LinkError::StartNoLaunchDir(format!(
            "launch directory {} does not exist",
            dir.display()
        )));
    }
    Ok(dir)
}

/// Runs a start. `context_dir` is absolute: the host's project directory (config lookup and the
/// base of a relative `cwd`).
pub fn start(
    herdr: &Herdr,
    pane: &str,
    input: &Map<String, Value>,
    context_dir: &Path,
) -> Result<Value, LinkError> {
    let input = validate(input)?;
    match &input.mode {
        Mode::Explicit(variant) => {
            let placement = if input.with.is_some() {
                Placement::With
            } else {
                Placement::NewTab { label: None }
            };
            let target = resolve_target(&input, &placement, context_dir)?;
            launch(herdr, pane, &input.name, variant, &target)
        }
        Mode::Configured(key) => {
            let path = config::config_path(context_dir);
            rotation::with_cursor(&path, key, |cursor| {
                let entry = config::load_entry(&path, key)?;
                let target = resolve_target(&input, &entry.placement, context_dir)?;
                let index = cursor % entry.variants.len();
                let receipt = launch(herdr, pane, &input.name, &entry.variants[index], &target)?;
                Ok((receipt, (index + 1) % entry.variants.len()))
            })
        }
    }
}

/// Allocates the placement, launches, and rolls back the allocation when the launch fails.
fn launch(
    herdr: &Herdr,
    pane: &str,
    name: &str,
    variant: &Variant,
    target: &Target,
) -> Result<Value, LinkError> {
    let me = self_context(herdr, pane)?;
    let allocation: Allocation = match target {
        Target::NewTab { cwd, label } => placement::new_tab(
            herdr,
            &me.workspace_id,
            &cwd.to_string_lossy(),
            label.as_deref(),
        )?,
        Target::With { anchor } => placement::with_anchor(herdr, &me.workspace_id, anchor)?,
    };
    match herdr.agent_start(name, &variant.kind, &allocation.pane_id, &variant.args) {
        Ok(_) => Ok(json!({"status": "started", "agent": name, "kind": variant.kind})),
        Err(f) => {
            let primary = match f {
                // agent_not_found here means the launch failed, not that a peer is missing.
                f if f.is_code("agent_not_found") => LinkError::StartFailed(f.detail()),
                // Refusals the model can fix itself: its text says what to change.
                f if f.is_code("agent_name_taken") => LinkError::StartNameTaken(f.detail()),
                f if f.refuses_kind() => LinkError::StartKindUnsupported(f.detail()),
                f => placement::start_failure(f),
            };
            Err(allocation.roll_back(herdr, primary))
        }
    }
}
