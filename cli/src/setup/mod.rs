//! `herdr-link setup <host>`: registers Herdr Link with an agent host (the MCP server or the
//! extension) and installs the Bash guard hook, merging into the host's existing config files.
//!
//! Every change is computed first (a malformed config is an error and nothing is written),
//! then each changed file is backed up and replaced atomically. A second run changes nothing.
//! `--dry-run` prints the change as a unified diff; `--uninstall` removes what setup adds.

mod codex_toml;
mod files;
mod hosts;
mod json;
mod jsonc;
mod more_hosts;
mod places;
mod plan;
pub mod shim;

use std::path::{Path, PathBuf};

use crate::host::{self, Host};
pub use places::Places;
use plan::absolute;
pub use plan::{Ctx, Options, Plan, Registration};

/// `herdr-link setup --help`.
pub const USAGE: &str = "usage: herdr-link setup <claude|codex|opencode|gemini|qwen|copilot|droid|cline|kimi|pi> [options]

Registers Herdr Link with an agent host and installs the Bash guard hook, merging into the
host's existing config files (every changed file is backed up first; a second run changes
nothing). Every host also gets the herdr shim: $XDG_DATA_HOME/herdr-link/shim/herdr (default
~/.local/share/...), a link to this binary put first on PATH for the host's shell commands
(Claude Code: a SessionStart hook writing to $CLAUDE_ENV_FILE; Codex: a block in the login
profile its `bash -lc` commands read; OpenCode: the guard plugin's shell.env hook; Gemini CLI,
Qwen Code, Copilot CLI, Droid, Cline and Kimi Code: a block in the startup file of the shell
Herdr starts them from, whose PATH their shell commands inherit; Pi: the extension).
--uninstall keeps the shared shim link.

  claude     MCP server in ~/.claude.json (mcpServers.herdr_link), guard hook in
             ~/.claude/settings.json; with --project DIR: DIR/.mcp.json, DIR/.claude/settings.json
  codex      $CODEX_HOME/config.toml ([mcp_servers.herdr_link], [features] hooks = true) and the
             guard hook in $CODEX_HOME/hooks.json (CODEX_HOME defaults to ~/.codex); with
             --project DIR: DIR/.codex/ (Codex reads it in trusted projects)
  opencode   mcp.herdr_link in $XDG_CONFIG_HOME/opencode/opencode.jsonc when it exists, else
             opencode.json (JSONC: comments and trailing commas are kept), and the guard plugin
             plugins/herdr-link-guard.js beside it; with --project DIR: DIR/opencode.jsonc or
             DIR/opencode.json, and DIR/.opencode/plugins/
  gemini     mcpServers.herdr_link (trusted) and the guard as a BeforeTool hook on
             run_shell_command in $GEMINI_CLI_HOME/.gemini/settings.json (default ~/.gemini);
             with --project DIR: DIR/.gemini/settings.json (Gemini CLI reads it in trusted folders)
  qwen       mcpServers.herdr_link (trusted, tools always loaded) and the guard as a PreToolUse
             hook on run_shell_command in $QWEN_HOME/settings.json (default ~/.qwen); with
             --project DIR: DIR/.qwen/settings.json
  copilot    mcpServers.herdr_link in $COPILOT_HOME/mcp-config.json (default ~/.copilot) and the
             guard as a preToolUse hook in $COPILOT_HOME/settings.json; with --project DIR:
             DIR/.github/mcp.json and DIR/.github/hooks/herdr-link.json
  droid      mcpServers.herdr_link in ~/.factory/mcp.json and the guard as a PreToolUse hook on
             Execute in ~/.factory/settings.json; with --project DIR: DIR/.factory/
  cline      mcpServers.herdr_link in $CLINE_DATA_DIR/settings/cline_mcp_settings.json (default
             ~/.cline/data) and the guard as the hook file $CLINE_DIR/hooks/PreToolUse (default
             ~/.cline); with --project DIR: the hook file DIR/.clinerules/hooks/PreToolUse
  kimi       mcpServers.herdr_link in $KIMI_CODE_HOME/mcp.json (default ~/.kimi-code), the guard
             as a [[hooks]] PreToolUse entry on Bash and an allow rule for the server's tools in
             $KIMI_CODE_HOME/config.toml; with --project DIR: the server in
             DIR/.kimi-code/mcp.json
  pi         runs `pi install <package>` (the Pi extension, which carries the guard itself;
             the package directory from hosts/pi/pack.sh);
             with --project DIR: `pi install -l` in DIR

options:
  --project DIR      project-level config instead of the user's
  --dry-run          print the change as a unified diff; write nothing
  --uninstall        remove what setup adds (other entries stay)
  --bin PATH         the herdr-link binary the host runs (default: this executable)
  --herdr PATH       the Herdr binary whose version decides whether HERDR_BIN_PATH is pinned in
                     the server's environment (default: $HERDR_BIN_PATH, else herdr on PATH)
  --pass-env NAME    (codex) one more variable Codex passes to the server (repeatable)
  --package PATH     (pi) the Pi package: a directory or an npm pack tarball
  --pi PATH          (pi) the pi executable (default: pi on PATH)
  -h, --help         this text";

/// Parses the arguments after `setup`; `Ok(None)` means `--help`.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut host = None;
    let mut o = Options {
        host: Host::Claude,
        project: None,
        dry_run: false,
        uninstall: false,
        bin: None,
        herdr: None,
        pass_env: Vec::new(),
        package: None,
        pi: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "-h" | "--help" => return Ok(None),
            "--dry-run" if inline.is_none() => o.dry_run = true,
            "--uninstall" if inline.is_none() => o.uninstall = true,
            "--project" => o.project = Some(PathBuf::from(value(flag)?)),
            "--bin" => o.bin = Some(PathBuf::from(value(flag)?)),
            "--herdr" => o.herdr = Some(PathBuf::from(value(flag)?)),
            "--package" => o.package = Some(PathBuf::from(value(flag)?)),
            "--pi" => o.pi = Some(PathBuf::from(value(flag)?)),
            "--pass-env" => {
                let name = value(flag)?;
                if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("--pass-env {name:?} is not a variable name"));
                }
                o.pass_env.push(name);
            }
            h if !h.starts_with('-') && host.is_none() => {
                host =
                    Some(Host::parse(h).ok_or_else(|| {
                        format!("unknown host {h:?}: use {}", host::names(|_| true))
                    })?)
            }
            other => return Err(format!("setup: unexpected argument {other:?}")),
        }
    }
    o.host = host.ok_or_else(|| format!("setup needs a host: {}", host::names(|_| true)))?;
    if !o.host.descriptor().forwards_variables && !o.pass_env.is_empty() {
        return Err("--pass-env is for codex only (the other hosts pass their environment)".into());
    }
    if o.host != Host::Pi && (o.package.is_some() || o.pi.is_some()) {
        return Err("--package and --pi are for pi only".into());
    }
    Ok(Some(o))
}

/// Runs `setup`; returns the exit status.
pub fn run(o: Options) -> i32 {
    match run_inner(&o) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("herdr-link setup: {e}");
            1
        }
    }
}

fn run_inner(o: &Options) -> Result<(), String> {
    let places = Places::from_env()?;
    let project = match &o.project {
        Some(p) => {
            let p = absolute(p)?;
            if !p.is_dir() {
                return Err(format!("--project {} is not a directory", p.display()));
            }
            Some(p)
        }
        None => None,
    };
    let bin = match &o.bin {
        Some(b) => absolute(b)?,
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this executable ({e}); pass --bin PATH"))?,
    };
    // Only an MCP server's environment can pin HERDR_BIN_PATH.
    let check = if o.uninstall || o.host.descriptor().mcp.is_none() {
        None
    } else {
        Some(hosts::herdr_check(o.herdr.as_deref())?)
    };
    let pin = check.as_ref().and_then(|c| c.pin.clone());
    let plan = plan(
        o,
        &Ctx {
            places: &places,
            project: project.as_deref(),
            bin: &bin,
            pin: pin.as_deref(),
        },
    )?;
    let shim_dir = shim::dir(&places);
    let link = shim::link_step(&shim_dir, &bin, o.uninstall)?;
    files::apply(&plan.changes, o.dry_run)?;
    shim::apply_link(&shim_dir, &bin, &link, o.dry_run)?;
    for cmd in &plan.commands {
        hosts::run_command(cmd, o.dry_run)?;
    }
    if let Some(c) = &check {
        println!("note: {}", c.note);
    }
    for note in &plan.notes {
        println!("note: {note}");
    }
    if !o.uninstall {
        println!(
            "note: the herdr shim ({}) judges every `herdr` the host's commands start; for \
             your own shells in Herdr panes, put this line in your shell's startup file:\n  {}",
            shim_dir.join("herdr").display(),
            shim::path_line(&shim_dir)
        );
    }
    Ok(())
}

/// Builds the plan for `o.host`: each host's own files and entries.
pub fn plan(o: &Options, cx: &Ctx) -> Result<Plan, String> {
    match o.host {
        Host::Claude => hosts::claude(o, cx),
        Host::Codex => hosts::codex(o, cx),
        Host::OpenCode => hosts::opencode(o, cx),
        Host::Gemini => hosts::settings_host(o, cx, &hosts::GEMINI),
        Host::Qwen => hosts::settings_host(o, cx, &hosts::QWEN),
        Host::Copilot => more_hosts::copilot(o, cx),
        Host::Droid => more_hosts::droid(o, cx),
        Host::Cline => more_hosts::cline(o, cx),
        Host::Kimi => more_hosts::kimi(o, cx),
        Host::Pi => hosts::pi(o, cx),
    }
}

/// The files that register Herdr Link for a session in `cwd` of a host doctor recognises (the
/// project's, then the user's), with what each holds; `None` for the hosts doctor does not
/// look at.
pub fn registrations(host: Host, places: &Places, cwd: &Path) -> Option<Vec<Registration>> {
    match host {
        Host::Gemini => Some(hosts::settings_registrations(&hosts::GEMINI, places, cwd)),
        Host::Qwen => Some(hosts::settings_registrations(&hosts::QWEN, places, cwd)),
        Host::Copilot => Some(more_hosts::copilot_registrations(places, cwd)),
        Host::Droid => Some(more_hosts::droid_registrations(places, cwd)),
        Host::Cline => Some(more_hosts::cline_registrations(places, cwd)),
        Host::Kimi => Some(more_hosts::kimi_registrations(places, cwd)),
        Host::Claude | Host::Codex | Host::OpenCode | Host::Pi => None,
    }
}
