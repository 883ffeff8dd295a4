//! What every host's setup plan is made of: the parsed options, the inputs, the plan, and the
//! pieces all hosts share (the guard hook's command, a JSON file's edit, the shim's startup-file
//! blocks).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::files::{read_optional, Change};
use super::json as js;
use super::places::Places;
use super::shim;
use crate::host::Host;
use herdr_link::paths::shell_word;

/// Parsed `setup` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The host.
    pub host: Host,
    /// `--project DIR`.
    pub project: Option<PathBuf>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--uninstall`.
    pub uninstall: bool,
    /// `--bin PATH`.
    pub bin: Option<PathBuf>,
    /// `--herdr PATH`.
    pub herdr: Option<PathBuf>,
    /// `--pass-env NAME` (repeatable).
    pub pass_env: Vec<String>,
    /// `--package PATH`.
    pub package: Option<PathBuf>,
    /// `--pi PATH`.
    pub pi: Option<PathBuf>,
}

/// Inputs every host plan needs.
pub struct Ctx<'a> {
    /// Config locations.
    pub places: &'a Places,
    /// `--project DIR` (absolute).
    pub project: Option<&'a Path>,
    /// The herdr-link binary (absolute).
    pub bin: &'a Path,
    /// `HERDR_BIN_PATH` to pin in the server's environment (Herdr older than 0.8.2).
    pub pin: Option<&'a str>,
}

/// An external command setup runs (Pi's own installer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// argv.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
}

/// Everything one setup run does.
#[derive(Debug, Default)]
pub struct Plan {
    /// File changes (computed before anything is written).
    pub changes: Vec<Change>,
    /// Commands to run after the files.
    pub commands: Vec<External>,
    /// Messages for the user.
    pub notes: Vec<String>,
}

/// The guard hook command; `--shim DIR`: setup also puts the shim DIR first on PATH for this
/// host's commands, so the hook leaves a `herdr` whose arguments the text cannot know to it.
pub(super) fn guard_command(bin: &Path, host: &str, shim_dir: &Path) -> String {
    format!(
        "{} guard --host {host} --shim {}",
        shell_word(&bin.display().to_string()),
        shell_word(&shim_dir.display().to_string())
    )
}

/// Edits a JSON config file (created when missing); `edit` gets the parsed root object.
pub(super) fn json_change(
    path: PathBuf,
    edit: impl FnOnce(&mut Value, &str) -> Result<(), String>,
) -> Result<Change, String> {
    let before = read_optional(&path)?;
    let shown = path.display().to_string();
    let mut value = js::parse(&shown, before.as_deref().unwrap_or(""))?;
    let original = value.clone();
    edit(&mut value, &shown)?;
    let after = if value == original {
        before.clone()
    } else {
        Some(js::render(before.as_deref(), &value))
    };
    Ok(Change {
        path,
        before,
        after,
        executable: false,
    })
}

/// The login-profile change for `host`: every host's login shells (`bash -lc`, whose system
/// profile resets PATH) get the shim's environment from the user's login profile.
pub(super) fn login_profile_change(o: &Options, cx: &Ctx, host: &str) -> Result<Change, String> {
    shim::startup_file_change(
        shim::login_profile(&cx.places.home, cx.places.shell.as_deref()),
        cx.bin,
        &shim::dir(cx.places),
        host,
        o.uninstall,
    )
}

/// The shim block in the startup files of the shell Herdr starts the host from (its commands
/// inherit the PATH the host was started with), and the notes that go with it.
pub(super) fn startup_files(
    o: &Options,
    cx: &Ctx,
    host: &str,
    plan: &mut Plan,
) -> Result<(), String> {
    let files = shim::interactive_startup_files(&cx.places.home, cx.places.shell.as_deref());
    for file in &files {
        plan.changes.push(shim::startup_file_change(
            file.clone(),
            cx.bin,
            &shim::dir(cx.places),
            host,
            o.uninstall,
        )?);
    }
    if files.is_empty() && !o.uninstall {
        plan.notes.push(format!(
            "{} is not a POSIX shell: put the herdr shim directory first on PATH inside Herdr \
             in its startup file yourself (the line below, in its syntax)",
            cx.places.shell.as_deref().unwrap_or("your shell")
        ));
    }
    Ok(())
}

/// What a host's config file holds of setup's entries (for doctor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The settings file looked at.
    pub file: PathBuf,
    /// `mcpServers.herdr_link` is there.
    pub server: bool,
    /// The guard hook is there, on the host's before-tool event.
    pub guard: bool,
}

/// An absolute path, resolved against the working directory.
pub(super) fn absolute(p: &Path) -> Result<PathBuf, String> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    std::env::current_dir()
        .map(|d| d.join(p))
        .map_err(|e| format!("cannot read the current directory: {e}"))
}
