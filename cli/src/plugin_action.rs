//! `herdr-link plugin-action <id>`: the setup actions of `herdr-plugin.toml`, so a Herdr user
//! wires a host from Herdr (`herdr plugin action invoke herdr-link.setup-claude`) without
//! reading our README.
//!
//! Each action is `herdr-link setup <host>` (or `--uninstall`) as a Herdr plugin action runs
//! it: the binary written into the host's config is this one (the plugin checkout's
//! `target/release/herdr-link`), and the Herdr whose version decides whether `HERDR_BIN_PATH`
//! is pinned is the one that invoked the action (`HERDR_BIN_PATH`, which Herdr sets for plugin
//! commands of every version). Pi needs its extension package: the action packs it
//! (`hosts/pi/pack.sh` of the plugin checkout, with the library built beside this binary) into
//! the plugin's state directory, which outlives reinstalls, and installs it from there. What
//! is printed lands in Herdr's plugin log: what changed, then what to restart.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::setup;

/// `herdr-link plugin-action --help`.
pub const USAGE: &str = "usage: herdr-link plugin-action <action>

The actions herdr-plugin.toml declares, as Herdr runs them (HERDR_PLUGIN_ROOT,
HERDR_PLUGIN_STATE_DIR and HERDR_BIN_PATH set by Herdr):

  setup-claude, setup-codex, setup-opencode, setup-gemini, setup-qwen, setup-copilot,
  setup-droid, setup-cline, setup-kimi, setup-pi
        herdr-link setup <host> with this binary and the invoking Herdr
  uninstall-claude, uninstall-codex, uninstall-opencode, uninstall-gemini, uninstall-qwen,
  uninstall-copilot, uninstall-droid, uninstall-cline, uninstall-kimi, uninstall-pi
        herdr-link setup <host> --uninstall

  watch
        opens `herdr-link watch` for the invoking workspace in a new pane (split from the
        focused pane)

setup-pi first packs the Pi extension (hosts/pi/pack.sh: needs node and npm) into
$HERDR_PLUGIN_STATE_DIR/pi-package and installs that directory with `pi install`.
Outside Herdr, use herdr-link setup (herdr-link setup --help).";

/// One plugin action: a host and whether it installs or removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    /// `setup`'s host name (`claude`, `codex`, `opencode`, `gemini`, `qwen`, `copilot`, `droid`,
    /// `cline`, `kimi`, `pi`).
    pub host: &'static str,
    /// How the summary names the host.
    pub title: &'static str,
    /// `uninstall-<host>`.
    pub uninstall: bool,
}

impl Action {
    /// `setup-<host>` / `uninstall-<host>`; `None` for anything else.
    pub fn parse(id: &str) -> Option<Action> {
        let (uninstall, host) = match id.split_once('-')? {
            ("setup", h) => (false, h),
            ("uninstall", h) => (true, h),
            _ => return None,
        };
        let d = crate::host::Host::parse(host)?.descriptor();
        Some(Action {
            host: d.name,
            title: d.title,
            uninstall,
        })
    }

    /// Every action id, in the order herdr-plugin.toml lists them.
    pub fn all_ids() -> Vec<String> {
        ["setup", "uninstall"]
            .iter()
            .flat_map(|verb| {
                crate::host::HOSTS
                    .iter()
                    .map(move |d| format!("{verb}-{}", d.name))
            })
            .collect()
    }

    /// What the user does next for the change to take effect.
    fn restart_note(&self) -> String {
        let what = if self.uninstall { "unload" } else { "load" };
        match self.host {
            "pi" => format!("Restart Pi (or run /reload in it) to {what} Herdr Link."),
            _ => format!(
                "Restart {} to {what} Herdr Link: sessions already running keep their old \
                 configuration.",
                self.title
            ),
        }
    }
}

/// The action that opens the live view.
pub const WATCH: &str = "watch";

/// Runs plugin action `id`; returns the exit status.
pub fn run(id: &str) -> i32 {
    if id == WATCH {
        return match open_watch() {
            Ok(pane) => {
                println!("Herdr Link: watch opened in pane {pane}");
                0
            }
            Err(e) => {
                eprintln!("herdr-link plugin-action watch: {e}");
                1
            }
        };
    }
    let Some(action) = Action::parse(id) else {
        eprintln!(
            "herdr-link plugin-action: unknown action {id:?}: use one of {}, {WATCH}",
            Action::all_ids().join(", ")
        );
        return 2;
    };
    let verb = if action.uninstall {
        "remove from"
    } else {
        "set up"
    };
    println!("Herdr Link: {verb} {} (user configuration)", action.title);
    let mut args = vec![action.host.to_string()];
    if action.uninstall {
        args.push("--uninstall".into());
    }
    if action.host == "pi" {
        match pi_package(action.uninstall) {
            Ok(Some(dir)) => {
                args.push("--package".into());
                args.push(dir.display().to_string());
            }
            Ok(None) => {
                println!("nothing to remove: this plugin has not installed a Pi package");
                return 0;
            }
            Err(e) => {
                eprintln!("herdr-link plugin-action {id}: {e}");
                return 1;
            }
        }
    }
    let options = match setup::parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => return 2, // no --help among the arguments built above
        Err(e) => {
            eprintln!("herdr-link plugin-action {id}: {e}");
            return 2;
        }
    };
    let code = setup::run(options);
    if code != 0 {
        return code;
    }
    println!("{}", action.restart_note());
    if !action.uninstall && action.host != "pi" {
        if let Ok(exe) = std::env::current_exe() {
            println!(
                "{} runs {}; run uninstall-{} before `herdr plugin uninstall herdr-link`.",
                action.title,
                exe.display(),
                action.host
            );
        }
    }
    0
}

/// A variable Herdr sets for plugin commands; an error names it when it is missing.
fn herdr_var(name: &str) -> Result<PathBuf, String> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            format!(
                "{name} is not set: run this as a Herdr plugin action, or outside Herdr use \
                 `herdr-link setup pi --package DIR`"
            )
        })
}

/// The Pi package directory under the plugin's state directory. For setup it is packed
/// first; for uninstall it is only looked up (`None`: never installed).
fn pi_package(uninstall: bool) -> Result<Option<PathBuf>, String> {
    let out = herdr_var("HERDR_PLUGIN_STATE_DIR")?.join("pi-package");
    let dir = out.join("herdr-link-pi");
    if uninstall {
        return Ok(dir.is_dir().then_some(dir));
    }
    let root = herdr_var("HERDR_PLUGIN_ROOT")?;
    let lib = library()?;
    pack(&root, &lib, &out)?;
    if !dir.is_dir() {
        return Err(format!(
            "hosts/pi/pack.sh did not produce {}",
            dir.display()
        ));
    }
    println!("packed the Pi extension into {}", dir.display());
    Ok(Some(dir))
}

/// The library the Pi package ships: `HERDR_LINK_LIB`, else the one built beside this binary.
fn library() -> Result<PathBuf, String> {
    if let Some(lib) = std::env::var_os("HERDR_LINK_LIB").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(lib));
    }
    let name = if cfg!(target_os = "macos") {
        "libherdr_link.dylib"
    } else {
        "libherdr_link.so"
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let lib = exe.with_file_name(name);
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(format!(
            "{} is missing: build the library beside herdr-link (cargo build --release in the \
             plugin directory)",
            lib.display()
        ))
    }
}

/// Runs `hosts/pi/pack.sh OUT` of the plugin checkout; its output is shown only on failure.
fn pack(root: &Path, lib: &Path, out: &Path) -> Result<(), String> {
    let script = root.join("hosts/pi/pack.sh");
    if !script.is_file() {
        return Err(format!("{} is missing", script.display()));
    }
    let output = Command::new("bash")
        .arg(&script)
        .arg(out)
        .env("HERDR_LINK_LIB", lib)
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run bash {}: {e}", script.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = text.lines().rev().take(15).collect();
    Err(format!(
        "packing the Pi extension failed ({}; it needs node and npm):\n{}",
        output.status,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}

/// Opens `herdr-link watch` in a new pane: splits the focused pane of the invoking workspace
/// (`HERDR_PLUGIN_CONTEXT_JSON`, else `HERDR_PANE_ID`) with `pane split … --direction down
/// --focus` and runs this binary's `watch --workspace <id>` there with `pane run`. Returns the
/// new pane's id.
fn open_watch() -> Result<String, String> {
    use herdr_link::herdr::records::PaneRecord;
    use herdr_link::paths::shell_word;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let herdr = env("HERDR_BIN_PATH").ok_or(
        "HERDR_BIN_PATH is not set: run this as a Herdr plugin action, or run `herdr-link watch` in a pane",
    )?;
    let context = match crate::doctor::plugin_context() {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return Err(e),
        None => None,
    };
    let pane = context
        .as_ref()
        .and_then(|c| c.focused_pane_id.clone())
        .or_else(|| env("HERDR_PANE_ID"))
        .ok_or("no pane to split: Herdr named no focused pane (HERDR_PLUGIN_CONTEXT_JSON, HERDR_PANE_ID)")?;
    let run = |args: &[&str]| -> Result<String, String> {
        let out = Command::new(&herdr)
            .args(args)
            .output()
            .map_err(|e| format!("{herdr}: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "herdr {} failed: {}",
                args[..2].join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    let split = run(&["pane", "split", &pane, "--direction", "down", "--focus"])?;
    let record = serde_json::from_str(&split)
        .ok()
        .and_then(|v| PaneRecord::from_response(&v));
    let new = record
        .as_ref()
        .and_then(|r| r.pane_id.clone())
        .ok_or_else(|| format!("herdr pane split answered no pane: {}", split.trim()))?;
    let workspace = context
        .and_then(|c| c.workspace_id)
        .or_else(|| record.and_then(|r| r.workspace_id))
        .or_else(|| env("HERDR_WORKSPACE_ID"));
    let me = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut line = format!("{} watch", shell_word(&me.display().to_string()));
    if let Some(w) = workspace {
        line.push_str(&format!(" --workspace {}", shell_word(&w)));
    }
    run(&["pane", "run", &new, &line])?;
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_action_ids() {
        let a = Action::parse("setup-claude").unwrap();
        assert_eq!(
            (a.host, a.title, a.uninstall),
            ("claude", "Claude Code", false)
        );
        let a = Action::parse("uninstall-pi").unwrap();
        assert_eq!((a.host, a.uninstall), ("pi", true));
        for bad in [
            "setup",
            "setup-",
            "setup-vim",
            "install-claude",
            "doctor",
            "",
        ] {
            assert_eq!(Action::parse(bad), None, "{bad}");
        }
        let ids = Action::all_ids();
        assert_eq!(ids.len(), 20, "setup and uninstall for each of ten hosts");
        assert!(ids.iter().all(|id| Action::parse(id).is_some()));
        assert_eq!(ids[0], "setup-claude");
    }

    #[test]
    fn restart_notes_name_the_host() {
        let note = Action::parse("setup-codex").unwrap().restart_note();
        assert!(note.starts_with("Restart Codex to load"), "{note}");
        let note = Action::parse("uninstall-pi").unwrap().restart_note();
        assert!(
            note.contains("/reload") && note.contains("unload"),
            "{note}"
        );
    }
}
