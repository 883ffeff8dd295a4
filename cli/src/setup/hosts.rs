//! What setup changes for each host: which files, and the entries herdr-link owns in them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::files::{read_optional, Change};
use super::places::Places;
use super::plan::{
    absolute, guard_command, json_change, login_profile_change, startup_files, Ctx, External,
    Options, Plan, Registration,
};
use super::{codex_toml, json as js, jsonc, shim};
use crate::host::{HookInput, Host};
use herdr_link::env::HerdrEnv;
use herdr_link::herdr::{version, Herdr};
use herdr_link::paths::{self, shell_word};
use herdr_link::presentation::MCP_SERVER_NAME;

/// The Claude Code permission rule that lets every tool of the server run without a prompt
/// (`mcp__<server>` covers all of them): in Claude Code's default permission mode each MCP
/// call otherwise waits for a person, and `claude -p` refuses it.
fn claude_allow_rule() -> String {
    format!("mcp__{MCP_SERVER_NAME}")
}

/// The one step left to the user when setup cannot record Codex's hook trust (a project's
/// hook: Codex keeps trust records only in the user's config).
pub const CODEX_TRUST_STEP: &str = "start Codex once in this project and answer its \"Hooks need review\" dialog with \"Trust all and continue\" (or trust the herdr-link guard hook in /hooks): until then the guard hook does not run, and Link messages typed into that dialog are lost";

/// The OpenCode guard plugin's file name.
const OPENCODE_GUARD: &str = "herdr-link-guard.js";

/// The one-line shell snippet for hosts that load the library in-process.
pub const EXPORT_SNIPPET: &str = r#"if [ "${HERDR_ENV:-}" = 1 ] && [ -z "${HERDR_BIN_PATH:-}" ]; then export HERDR_BIN_PATH="$(command -v herdr)"; fi"#;

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
        Some(p) => Some(absolute(p)?),
        None => std::env::var_os("HERDR_BIN_PATH")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| paths::on_path(paths::HERDR)),
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
    let Some(found) = version::parse(&line) else {
        return Err(format!(
            "{shown} --version printed {line:?}, not a Herdr version"
        ));
    };
    if found < version::SETS_BIN_PATH {
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

/// Claude Code's `SessionStart` hook putting the shim first on PATH (`herdr-link shim-env`).
fn shim_env_command(bin: &Path, dir: &Path) -> String {
    format!(
        "{} shim-env --dir {}",
        shell_word(&bin.display().to_string()),
        shell_word(&dir.display().to_string())
    )
}

pub(super) fn claude(o: &Options, cx: &Ctx) -> Result<Plan, String> {
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
            js::remove_nested(root, "mcpServers", MCP_SERVER_NAME);
            return Ok(());
        }
        let servers = js::object_at(root, "mcpServers", what)?;
        let entry = js::object_at(servers, MCP_SERVER_NAME, what)?;
        js::set(entry, "type", json!("stdio"));
        js::set(entry, "command", json!(bin));
        js::set(entry, "args", json!(["mcp"]));
        if let Some(pin) = cx.pin {
            let env = js::object_at(entry, "env", what)?;
            js::set(env, "HERDR_BIN_PATH", json!(pin));
        }
        Ok(())
    })?;
    let hook = guard_command(cx.bin, "claude", &shim::dir(cx.places));
    let env_hook = shim_env_command(cx.bin, &shim::dir(cx.places));
    let hooks = json_change(settings, |root, what| {
        if o.uninstall {
            js::remove_guard_hook(root, Host::Claude);
            js::remove_event_hook(root, "SessionStart", js::is_shim_env_command);
            js::remove_allow_rule(root, &claude_allow_rule());
            Ok(())
        } else {
            js::add_guard_hook(root, &hook, Host::Claude, what)?;
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
        changes: vec![mcp, hooks, login_profile_change(o, cx, "claude")?],
        ..Plan::default()
    })
}

pub(super) fn codex(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let dir = match cx.project {
        Some(p) => p.join(".codex"),
        None => cx.places.codex_home.clone(),
    };
    let hook = guard_command(cx.bin, "codex", &shim::dir(cx.places));
    let hooks = json_change(dir.join("hooks.json"), |root, what| {
        if o.uninstall {
            js::remove_guard_hook(root, Host::Codex);
            Ok(())
        } else {
            js::add_guard_hook(root, &hook, Host::Codex, what)
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
    // The user's trust in the guard hook, recorded as Codex does, so that Codex's first start
    // runs it without its blocking "Hooks need review" dialog. Codex reads these records only
    // from the user's config, so a project's hook is left for the user to trust.
    let hooks_json = dir.join("hooks.json").display().to_string();
    let trust = |text: Option<&str>| {
        let root = js::parse("", text?).ok()?;
        let (group, handler, command) = js::guard_hook_position(&root, Host::Codex)?;
        Some(codex_toml::HookTrust {
            hooks_json: hooks_json.clone(),
            group,
            handler,
            command,
        })
    };
    if cx.project.is_none() {
        if let Some(old) = trust(hooks.before.as_deref()) {
            codex_toml::forget_hook(&mut doc, &old);
        }
        if let (false, Some(new)) = (o.uninstall, trust(hooks.after.as_deref())) {
            codex_toml::trust_hook(&mut doc, &new, &shown)?;
        }
    }
    if o.uninstall {
        codex_toml::uninstall(&mut doc, !hooks_left);
    } else {
        // Codex does not pass its own environment to the server: every variable the library reads.
        let mut vars: Vec<String> = herdr_link::env::passed_variables()
            .into_iter()
            .map(str::to_string)
            .collect();
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
        executable: false,
    };
    let mut notes = Vec::new();
    if cx.project.is_some() && !o.uninstall {
        notes.push("Codex reads a project's .codex/ only once the project is trusted".into());
        notes.push(CODEX_TRUST_STEP.into());
    }
    // Codex runs shell commands through a login shell (`bash -lc`, once per session for its
    // shell snapshot), whose system profile resets PATH: the shim's environment, presence key
    // included, comes from the user's login profile.
    let profile = login_profile_change(o, cx, "codex")?;
    Ok(Plan {
        changes: vec![config, hooks, profile],
        commands: Vec::new(),
        notes,
    })
}

/// Edits an OpenCode config file as JSONC, in place (created when missing).
fn jsonc_change(
    path: PathBuf,
    edit: impl FnOnce(&jsonc::Doc) -> Result<(), String>,
) -> Result<Change, String> {
    let before = read_optional(&path)?;
    let doc = jsonc::Doc::parse(&path.display().to_string(), before.as_deref().unwrap_or(""))?;
    let untouched = doc.text();
    edit(&doc)?;
    let text = doc.text();
    let after = if text == untouched {
        before.clone()
    } else {
        Some(text)
    };
    Ok(Change {
        path,
        before,
        after,
        executable: false,
    })
}

pub(super) fn opencode(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let (dir, plugins) = match cx.project {
        Some(dir) => (dir.to_path_buf(), dir.join(".opencode/plugins")),
        None => (
            cx.places.opencode.clone(),
            cx.places.opencode.join("plugins"),
        ),
    };
    // The file OpenCode lets win gets the entry; the other one (both exist) loses any old one.
    let (config, other) = jsonc::config_files(&dir);
    let bin = cx.bin.display().to_string();
    let mut changes = vec![jsonc_change(config, |doc| {
        if o.uninstall {
            doc.remove_nested("mcp", MCP_SERVER_NAME);
            return Ok(());
        }
        let entry = doc.object_at(&["mcp", MCP_SERVER_NAME])?;
        jsonc::Doc::set(&entry, "type", &json!("local"));
        jsonc::Doc::set(&entry, "command", &json!([bin, "mcp"]));
        if let Some(pin) = cx.pin {
            let env = doc.object_at(&["mcp", MCP_SERVER_NAME, "environment"])?;
            jsonc::Doc::set(&env, "HERDR_BIN_PATH", &json!(pin));
        }
        Ok(())
    })?];
    if let Some(other) = other {
        changes.push(jsonc_change(other, |doc| {
            doc.remove_nested("mcp", MCP_SERVER_NAME);
            Ok(())
        })?);
    }
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
                    "__HERDR_LINK_SHELL_TOOL__",
                    &serde_json::to_string(
                        Host::OpenCode
                            .hook()
                            .expect("OpenCode has a guard hook")
                            .input
                            .shell,
                    )
                    .expect("a string serializes"),
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
        executable: false,
    };
    changes.push(guard);
    Ok(Plan {
        changes: {
            changes.push(login_profile_change(o, cx, "opencode")?);
            changes
        },
        ..Plan::default()
    })
}

/// A host configured by one `settings.json` holding both `mcpServers` and `hooks` (Gemini CLI,
/// Qwen Code; docs/hosts-gemini-qwen.md).
pub(super) struct SettingsHost {
    /// The host (its name and its hook's event and shell tool are in its descriptor).
    host: Host,
    /// The user dir from [`Places`].
    user_dir: fn(&Places) -> &Path,
    /// The project dir under `--project DIR`.
    project_dir: &'static str,
    /// Entry fields beyond `command` and `args`, in the host's words: trust the server (its
    /// tools run without a confirmation, as the user approves Link by installing it) and, for
    /// Qwen Code, list its tools up front instead of behind the tool search.
    extra: &'static [(&'static str, bool)],
    /// Said once after install.
    note: &'static str,
}

pub(super) const GEMINI: SettingsHost = SettingsHost {
    host: Host::Gemini,
    user_dir: |p| &p.gemini,
    project_dir: ".gemini",
    extra: &[("trust", true)],
    note: "Gemini CLI connects MCP servers and runs hooks only in trusted folders when folder \
           trust is on; run it inside Herdr in a trusted folder",
};

pub(super) const QWEN: SettingsHost = SettingsHost {
    host: Host::Qwen,
    user_dir: |p| &p.qwen,
    project_dir: ".qwen",
    extra: &[("trust", true), ("alwaysLoadTools", true)],
    note: "Qwen Code honours trust for a server only in trusted folders when folder trust is on",
};

impl SettingsHost {
    /// The host's hook input (its event and shell tool).
    fn hook(&self) -> &'static HookInput {
        &self
            .host
            .hook()
            .expect("a settings host has a guard hook")
            .input
    }
}

/// The files that register Herdr Link for a session in `cwd` of a settings host (the
/// project's, then the user's), with what each holds.
pub(super) fn settings_registrations(
    h: &SettingsHost,
    places: &Places,
    cwd: &Path,
) -> Vec<Registration> {
    let files = [
        cwd.join(h.project_dir).join("settings.json"),
        (h.user_dir)(places).join("settings.json"),
    ];
    files
        .into_iter()
        .map(|file| {
            let value = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| js::parse("", &t).ok())
                .unwrap_or(Value::Null);
            let server = value["mcpServers"][MCP_SERVER_NAME].is_object();
            let guard = js::hook_commands(&value, h.hook().event)
                .iter()
                .any(|c| js::is_guard_command(c, h.host.name()));
            Registration {
                file,
                server,
                guard,
            }
        })
        .collect()
}

pub(super) fn settings_host(o: &Options, cx: &Ctx, h: &SettingsHost) -> Result<Plan, String> {
    let path = match cx.project {
        Some(dir) => dir.join(h.project_dir).join("settings.json"),
        None => (h.user_dir)(cx.places).join("settings.json"),
    };
    let bin = cx.bin.display().to_string();
    let name = h.host.name();
    let input = h.hook();
    let hook = guard_command(cx.bin, name, &shim::dir(cx.places));
    let ours = |c: &str| js::is_guard_command(c, name);
    let settings = json_change(path, |root, what| {
        if o.uninstall {
            js::remove_nested(
                root.as_object_mut().expect("object"),
                "mcpServers",
                MCP_SERVER_NAME,
            );
            js::remove_event_hook(root, input.event, ours);
            return Ok(());
        }
        {
            let map = root.as_object_mut().expect("object");
            let servers = js::object_at(map, "mcpServers", what)?;
            let entry = js::object_at(servers, MCP_SERVER_NAME, what)?;
            js::set(entry, "command", json!(bin));
            js::set(entry, "args", json!(["mcp"]));
            for (key, value) in h.extra {
                js::set(entry, key, json!(value));
            }
            if let Some(pin) = cx.pin {
                let env = js::object_at(entry, "env", what)?;
                js::set(env, "HERDR_BIN_PATH", json!(pin));
            }
        }
        js::add_event_hook(root, input.event, Some(input.shell), &hook, ours, what)
    })?;
    let mut plan = Plan {
        changes: vec![settings],
        ..Plan::default()
    };
    if !o.uninstall {
        plan.notes.push(h.note.to_string());
    }
    // The host runs each command with `bash -c` in its own environment: the shim is first on
    // the commands' PATH when it is first on the PATH the host was started with, from the
    // shell Herdr types the host's command into.
    startup_files(o, cx, name, &mut plan)?;
    Ok(plan)
}

pub(super) fn pi(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    let package = o
        .package
        .as_deref()
        .ok_or("pi needs --package PATH: the Pi package (a directory or an npm pack tarball)")?;
    let package = absolute(package)?;
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
            .or_else(|| paths::on_path("pi"))
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
        changes: vec![login_profile_change(o, cx, "pi")?],
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
        .map(|a| shell_word(a))
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
