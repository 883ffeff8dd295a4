//! What setup changes for each host: which files, and the entries herdr-link owns in them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::files::{read_optional, Change};
use super::{codex_toml, json as js, shim, Host, Options, Places};
use herdr_link::env::HerdrEnv;
use herdr_link::herdr::Herdr;

/// The MCP server's name on every host (an underscore: a hyphen breaks Codex's tool surface).
const SERVER: &str = "herdr_link";

/// The Claude Code permission rule that lets every tool of the server run without a prompt
/// (`mcp__<server>` covers all of them): in Claude Code's default permission mode each MCP
/// call otherwise waits for a person, and `claude -p` refuses it.
fn claude_allow_rule() -> String {
    format!("mcp__{SERVER}")
}

/// Variables Codex passes to the server (it does not pass its own environment).
const CODEX_ENV_VARS: &[&str] = &[
    "HERDR_ENV",
    "HERDR_BIN_PATH",
    "HERDR_PANE_ID",
    "HERDR_SOCKET_PATH",
    "HERDR_LINK_LOG",
    "HERDR_LINK_TIMEOUT_MS",
    "HERDR_LINK_START_TIMEOUT_MS",
];

/// The OpenCode guard plugin's file name.
const OPENCODE_GUARD: &str = "herdr-link-guard.js";

/// The one-line shell snippet for hosts that load the library in-process.
pub const EXPORT_SNIPPET: &str = r#"if [ "${HERDR_ENV:-}" = 1 ] && [ -z "${HERDR_BIN_PATH:-}" ]; then export HERDR_BIN_PATH="$(command -v herdr)"; fi"#;

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

/// The result of looking at the user's Herdr.
pub struct HerdrCheck {
    /// The path to pin as `HERDR_BIN_PATH`, when the Herdr found is older than 0.8.2.
    pub pin: Option<String>,
    /// What was found, for the user.
    pub note: String,
}

/// Finds the Herdr binary (`--herdr`, `$HERDR_BIN_PATH`, `herdr` on `PATH`) and reads its
/// version: Herdr before 0.8.2 does not set `HERDR_BIN_PATH` in its panes.
pub fn herdr_check(explicit: Option<&Path>) -> Result<HerdrCheck, String> {
    let found = match explicit {
        Some(p) => Some(super::absolute(p)?),
        None => std::env::var_os("HERDR_BIN_PATH")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| on_path("herdr")),
    };
    let Some(path) = found else {
        return Ok(HerdrCheck {
            pin: None,
            note: "no herdr found (not on PATH; pass --herdr PATH): if your Herdr is older than \
                   0.8.2, run setup again with --herdr so HERDR_BIN_PATH is set for the server"
                .into(),
        });
    };
    let path = path.canonicalize().unwrap_or(path);
    let shown = path.display().to_string();
    let driver = Herdr::new(&HerdrEnv {
        bin: shown.clone(),
        pane_id: String::new(),
    });
    let line = driver
        .version()
        .map_err(|e| format!("cannot read the version of {shown}: {}", e.detail()))?;
    let Some(version) = parse_version(&line) else {
        return Err(format!(
            "{shown} --version printed {line:?}, not a Herdr version"
        ));
    };
    if version < (0, 8, 2, true) {
        Ok(HerdrCheck {
            pin: Some(shown.clone()),
            note: format!(
                "{line} at {shown} does not set HERDR_BIN_PATH in its panes (0.8.2 and later \
                 do): the server's environment pins HERDR_BIN_PATH={shown}"
            ),
        })
    } else {
        Ok(HerdrCheck {
            pin: None,
            note: format!("{line} at {shown} sets HERDR_BIN_PATH itself"),
        })
    }
}

/// `herdr 0.8.0` → (0, 8, 0, release). A pre-release sorts before its release.
pub fn parse_version(line: &str) -> Option<(u64, u64, u64, bool)> {
    let v = line
        .trim()
        .strip_prefix("herdr ")?
        .split_whitespace()
        .next()?;
    let (core, pre) = match v.split_once('-') {
        Some((c, _)) => (c, true),
        None => (v, false),
    };
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let (a, b, c) = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some((a, b, c, !pre))
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Quotes a path for a hook command line (run by `sh -c`).
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%=".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Claude Code's `SessionStart` hook putting the shim first on PATH (`herdr-link shim-env`).
fn shim_env_command(bin: &Path, dir: &Path) -> String {
    format!(
        "{} shim-env --dir {}",
        sh_quote(&bin.display().to_string()),
        sh_quote(&dir.display().to_string())
    )
}

fn guard_command(bin: &Path, host: &str) -> String {
    format!(
        "{} guard --host {host}",
        sh_quote(&bin.display().to_string())
    )
}

/// Edits a JSON config file (created when missing); `edit` gets the parsed root object.
fn json_change(
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
    })
}

/// Builds the plan for `o.host`.
pub fn plan(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    match o.host {
        Host::Claude => claude(o, cx),
        Host::Codex => codex(o, cx),
        Host::OpenCode => opencode(o, cx),
        Host::Pi => pi(o, cx),
    }
}

fn claude(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let (mcp_file, settings) = match cx.project {
        Some(dir) => (dir.join(".mcp.json"), dir.join(".claude/settings.json")),
        None => (
            cx.places.home.join(".claude.json"),
            cx.places.home.join(".claude/settings.json"),
        ),
    };
    let bin = cx.bin.display().to_string();
    let mcp = json_change(mcp_file, |root, what| {
        let root = root.as_object_mut().expect("object");
        if o.uninstall {
            js::remove_nested(root, "mcpServers", SERVER);
            return Ok(());
        }
        let servers = js::object_at(root, "mcpServers", what)?;
        let entry = js::object_at(servers, SERVER, what)?;
        js::set(entry, "type", json!("stdio"));
        js::set(entry, "command", json!(bin));
        js::set(entry, "args", json!(["mcp"]));
        if let Some(pin) = cx.pin {
            let env = js::object_at(entry, "env", what)?;
            js::set(env, "HERDR_BIN_PATH", json!(pin));
        }
        Ok(())
    })?;
    let hook = guard_command(cx.bin, "claude");
    let env_hook = shim_env_command(cx.bin, &shim::dir(cx.places));
    let hooks = json_change(settings, |root, what| {
        if o.uninstall {
            js::remove_guard_hook(root, "claude");
            js::remove_event_hook(root, "SessionStart", js::is_shim_env_command);
            js::remove_allow_rule(root, &claude_allow_rule());
            Ok(())
        } else {
            js::add_guard_hook(root, &hook, "claude", what)?;
            js::add_allow_rule(root, &claude_allow_rule(), what)?;
            js::add_event_hook(
                root,
                "SessionStart",
                None,
                &env_hook,
                js::is_shim_env_command,
                what,
            )
        }
    })?;
    Ok(Plan {
        changes: vec![mcp, hooks],
        ..Plan::default()
    })
}

fn codex(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let dir = match cx.project {
        Some(p) => p.join(".codex"),
        None => cx.places.codex_home.clone(),
    };
    let hook = guard_command(cx.bin, "codex");
    let hooks = json_change(dir.join("hooks.json"), |root, what| {
        if o.uninstall {
            js::remove_guard_hook(root, "codex");
            Ok(())
        } else {
            js::add_guard_hook(root, &hook, "codex", what)
        }
    })?;
    let hooks_left = hooks
        .after
        .as_deref()
        .map(|t| {
            js::parse("", t)
                .map(|v| js::has_any_hook(&v))
                .unwrap_or(true)
        })
        .unwrap_or(false);

    let path = dir.join("config.toml");
    let before = read_optional(&path)?;
    let shown = path.display().to_string();
    let mut doc = codex_toml::parse(&shown, before.as_deref().unwrap_or(""))?;
    if o.uninstall {
        codex_toml::uninstall(&mut doc, !hooks_left);
    } else {
        let mut vars: Vec<String> = CODEX_ENV_VARS.iter().map(|s| s.to_string()).collect();
        vars.extend(o.pass_env.iter().cloned());
        let bin = cx.bin.display().to_string();
        codex_toml::install(
            &mut doc,
            &codex_toml::Server {
                command: &bin,
                env_vars: &vars,
                herdr_bin_path: cx.pin,
            },
            &shown,
        )?;
    }
    let text = doc.to_string();
    let after = if before.as_deref().unwrap_or("") == text {
        before.clone()
    } else {
        Some(text)
    };
    let config = Change {
        path,
        before,
        after,
    };
    let mut notes = Vec::new();
    if cx.project.is_some() && !o.uninstall {
        notes.push("Codex reads a project's .codex/ only once the project is trusted".into());
    }
    // Codex runs shell commands through a login shell (`bash -lc`), whose system profile resets
    // PATH: the shim goes first from the user's login profile.
    let profile = shim::startup_file_change(
        shim::login_profile(&cx.places.home, cx.places.shell.as_deref()),
        &shim::dir(cx.places),
        o.uninstall,
    )?;
    Ok(Plan {
        changes: vec![config, hooks, profile],
        commands: Vec::new(),
        notes,
    })
}

fn opencode(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let (config, plugins) = match cx.project {
        Some(dir) => (dir.join("opencode.json"), dir.join(".opencode/plugins")),
        None => {
            let dir = &cx.places.opencode;
            let json = dir.join("opencode.json");
            let jsonc = dir.join("opencode.jsonc");
            let file = if !json.exists() && jsonc.exists() {
                jsonc
            } else {
                json
            };
            (file, dir.join("plugins"))
        }
    };
    let bin = cx.bin.display().to_string();
    let mcp = json_change(config, |root, what| {
        let root = root.as_object_mut().expect("object");
        if o.uninstall {
            js::remove_nested(root, "mcp", SERVER);
            return Ok(());
        }
        let servers = js::object_at(root, "mcp", what)?;
        let entry = js::object_at(servers, SERVER, what)?;
        js::set(entry, "type", json!("local"));
        js::set(entry, "command", json!([bin, "mcp"]));
        if let Some(pin) = cx.pin {
            let env = js::object_at(entry, "environment", what)?;
            js::set(env, "HERDR_BIN_PATH", json!(pin));
        }
        Ok(())
    })?;
    let guard_path = plugins.join(OPENCODE_GUARD);
    let before = read_optional(&guard_path)?;
    let after = if o.uninstall {
        None
    } else {
        Some(
            include_str!("opencode-guard.js")
                .replace(
                    "__HERDR_LINK_BIN__",
                    &serde_json::to_string(&bin).expect("a string serializes"),
                )
                .replace(
                    "__HERDR_LINK_SHIM_DIR__",
                    &serde_json::to_string(&shim::dir(cx.places).display().to_string())
                        .expect("a string serializes"),
                ),
        )
    };
    let guard = Change {
        path: guard_path,
        before,
        after,
    };
    Ok(Plan {
        changes: vec![mcp, guard],
        ..Plan::default()
    })
}

fn pi(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let package = o
        .package
        .as_deref()
        .ok_or("pi needs --package PATH: the Pi package (a directory or an npm pack tarball)")?;
    let package = super::absolute(package)?;
    if !package.is_dir() {
        let hint = if package.to_string_lossy().ends_with(".tgz") {
            " (unpack the tarball where it can stay, then pass the directory: Pi loads a \
             local package in place)"
        } else {
            ""
        };
        return Err(format!(
            "--package {} is not a package directory{hint}",
            package.display()
        ));
    }
    let pi =
        o.pi.clone()
            .or_else(|| on_path("pi"))
            .ok_or("pi is not on PATH; pass --pi PATH")?;
    let mut argv = vec![
        pi.display().to_string(),
        if o.uninstall { "remove" } else { "install" }.to_string(),
    ];
    if cx.project.is_some() {
        argv.push("-l".into());
    }
    argv.push(package.display().to_string());
    let mut notes = Vec::new();
    if !o.uninstall {
        notes.push(format!(
            "Pi loads the library in-process: with Herdr older than 0.8.2 put this line in \
             your shell's startup file so HERDR_BIN_PATH is set inside Herdr:\n  {EXPORT_SNIPPET}"
        ));
    }
    Ok(Plan {
        changes: Vec::new(),
        commands: vec![External {
            argv,
            cwd: cx.project.map(Path::to_path_buf),
        }],
        notes,
    })
}

/// Runs (or, with `dry_run`, prints) an external command; a failure is an error.
pub fn run_command(cmd: &External, dry_run: bool) -> Result<(), String> {
    let shown = cmd
        .argv
        .iter()
        .map(|a| sh_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    if dry_run {
        println!("would run: {shown}");
        return Ok(());
    }
    println!("running: {shown}");
    let mut c = Command::new(&cmd.argv[0]);
    c.args(&cmd.argv[1..]);
    if let Some(dir) = &cmd.cwd {
        c.current_dir(dir);
    }
    let status = c
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cmd.argv[0]))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("herdr 0.8.0"), Some((0, 8, 0, true)));
        assert_eq!(parse_version("herdr 0.8.2\n"), Some((0, 8, 2, true)));
        assert_eq!(
            parse_version("herdr 0.8.2-preview.7"),
            Some((0, 8, 2, false))
        );
        // Older than 0.8.2 (pin HERDR_BIN_PATH): 0.8.1 and 0.8.2's previews; not 0.8.2, 0.9.0.
        let release = (0, 8, 2, true);
        assert!(parse_version("herdr 0.8.1").unwrap() < release);
        assert!(parse_version("herdr 0.8.2-preview.1").unwrap() < release);
        assert!(parse_version("herdr 0.8.2").unwrap() >= release);
        assert!(parse_version("herdr 0.9.0").unwrap() >= release);
        assert_eq!(parse_version("tmux 3.4"), None);
        assert_eq!(parse_version("herdr x"), None);
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("/usr/bin/herdr-link"), "/usr/bin/herdr-link");
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
    }
}
