//! `herdr-link`: the Herdr Link MCP server for hosts that speak MCP instead of loading plugins
//! (Claude Code, Codex, Gemini CLI, Qwen Code, AGY), the Bash guard as their pre-tool hook (`guard`), the operator's
//! `doctor`, and, run under the name `herdr`, Herdr's CLI front that refuses waits of an active
//! session where the command really runs (`shim`). Built directly on the `herdr_link` library; see docs/mcp.md for host
//! wiring.

mod activation;
mod doctor;
mod framing;
mod hook;
mod host;
mod logview;
mod mcp;
mod plugin_action;
#[cfg(test)]
mod registry_tests;
mod setup;
mod shim;
mod transport;
mod watch;

use std::path::PathBuf;

const USAGE: &str = "usage:
  herdr-link mcp [--context-dir DIR] [--host HOST] [--server-name NAME]
                                       serve MCP over stdio (start's config is read under DIR,
                                       default: the current directory)
  herdr-link guard --host HOST [--shim DIR]
                                       pre-tool hook (HOST: claude, codex, opencode, gemini, qwen,
                                       copilot, droid, cline or kimi): reads the hook JSON on
                                       stdin and blocks a Herdr wait of an activated session in
                                       the host's own way (herdr-link guard --help)
  herdr-link doctor [--pane PANE]      read-only diagnosis of the Herdr environment (exit 0 or 1)
  herdr-link setup <claude|codex|opencode|gemini|qwen|copilot|droid|cline|kimi|pi> [--project DIR] [--dry-run] [--uninstall] ...
                                       register Herdr Link and its Bash guard with a host
                                       (herdr-link setup --help)
  herdr-link shim-env --dir DIR [--print|--json]
                                       the host's commands' environment (the herdr shim DIR
                                       first on PATH, $HERDR_BIN_PATH naming it, the host's
                                       presence key): appended to $CLAUDE_ENV_FILE (Claude Code's
                                       SessionStart hook, written by setup claude), printed as
                                       shell lines (--print: the login-profile block) or the
                                       variables to set as JSON (--json: the OpenCode guard
                                       plugin)
  herdr ...                            (run through the link named herdr in the shim directory)
                                       Herdr's CLI front: refuses a wait of an active session
                                       (exit 77), else execs the next herdr on PATH
  herdr-link log [--agent NAME] [--code CODE] [--since WHEN] [--follow] [--json] ...
                                       the operator log as a readable timeline
                                       (herdr-link log --help)
  herdr-link watch [--workspace ID]    a live full-screen view of the workspace's Link traffic
                                       (herdr-link watch --help)
  herdr-link plugin-action <action>    herdr-plugin.toml's setup-<host> / uninstall-<host>
                                       actions, as Herdr runs them
  herdr-link --version | --help
  herdr-link <command> --help          that command's usage";

const MCP_HELP: &str =
    "usage: herdr-link mcp [--context-dir DIR] [--host HOST] [--server-name NAME]

Serves Herdr Link over MCP on stdin/stdout (one JSON-RPC message per line) for Claude Code,
Codex, Gemini CLI, Qwen Code, AGY and OpenCode's MCP route. Register it under the name herdr_link (`herdr-link setup
<host>` writes that registration). See docs/mcp.md.

  --context-dir DIR    where herdr_link_start reads .agents/agent_config.json
                       (default: the current directory)
  --host HOST          claude, codex, opencode, agy, gemini, qwen, copilot, droid, cline or
                       kimi: the host whose tool names the Contract's appendix gives
                       (default: from the client name in `initialize`)
  --server-name NAME   the name the server is registered under in the host (default herdr_link)

Reads HERDR_ENV, HERDR_BIN_PATH and HERDR_PANE_ID, which Herdr sets in its panes; without them
the server lists no tools. The operator log goes to $XDG_STATE_HOME/herdr-link/log.jsonl (or
~/.local/state/herdr-link/log.jsonl; HERDR_LINK_LOG names another file, HERDR_LINK_LOG_OFF=1
turns it off): herdr-link log and herdr-link watch read it.";

const DOCTOR_HELP: &str = "usage: herdr-link doctor [--pane PANE]

Read-only diagnosis of the Herdr environment for operators: one PASS/FAIL/SKIP line per check
(environment, settings, the herdr binary and its version, this pane's agent record and name,
peers, whether the herdr shim is the first herdr on PATH, delivery turns, operator log; run from a
Gemini CLI or Qwen Code shell command, whether that host's settings register Herdr Link). Exit
status 1 when a check failed, else 0. Runs only `herdr --version`, `agent get` (and `pane get` for a
moved pane, as Link does) and `agent list`; renames and prompts nothing.

  --pane PANE   diagnose this pane instead of $HERDR_PANE_ID (as a Herdr plugin action, the
                pane in HERDR_PLUGIN_CONTEXT_JSON is used)";

const GUARD_HELP: &str =
    "usage: herdr-link guard --host claude|codex|opencode|gemini|qwen|copilot|droid|cline|kimi [--shim DIR]

The Bash guard as a pre-tool command hook (Claude Code and Codex: PreToolUse, matcher Bash;
Gemini CLI: BeforeTool, Qwen Code: PreToolUse, both matcher run_shell_command; OpenCode on the
MCP route: the plugin herdr-link setup opencode writes; GitHub Copilot CLI: preToolUse on bash;
Factory Droid: PreToolUse, on Execute and Link's own tools; Kimi Code: PreToolUse, matcher
Bash; Cline: the PreToolUse hook file, on run_commands). Reads the host's hook JSON on stdin. Once this host
session activated Herdr Link through its herdr_link MCP server, `herdr agent wait` and `herdr
agent prompt --wait` are blocked: exit status 2 with the reason on stderr (Copilot CLI: a
permissionDecision \"deny\" object on stdout; Copilot CLI and Droid: an \"allow\" for Link's own
tools; Cline: an overrideInput object on stdout that replaces the commands with one failing with the
reason). Everything else, and any unexpected
input, is allowed: exit status 0, no output (Cline: {}).

  --shim DIR   the host runs its commands with the herdr shim DIR first on PATH (setup writes
               this where it puts the shim there): while DIR/herdr exists, a herdr whose
               arguments the text cannot know is left to the shim, which judges the real argv
See docs/guard.md.";

/// `herdr-link <command> --help`: the command's own usage.
fn command_help(command: &str) -> Option<&'static str> {
    Some(match command {
        "mcp" => MCP_HELP,
        "doctor" => DOCTOR_HELP,
        "setup" => setup::USAGE,
        "guard" => GUARD_HELP,
        "plugin-action" => plugin_action::USAGE,
        "log" => logview::USAGE,
        "watch" => watch::USAGE,
        _ => return None,
    })
}

/// A parsed command line.
#[derive(Debug, PartialEq)]
enum Command {
    Mcp {
        context_dir: Option<PathBuf>,
        host: Option<herdr_link::presentation::McpHost>,
        server_name: Option<String>,
    },
    Doctor {
        pane: Option<String>,
    },
    Setup(Option<setup::Options>),
    /// `plugin-action <id>` (a Herdr plugin action of herdr-plugin.toml).
    PluginAction(String),
    /// `log [options]`: the operator log as a timeline.
    Log(logview::Options),
    /// `watch [options]`: the live view.
    Watch(watch::Options),
    /// `<command> --help`.
    UsageOf(&'static str),
    Guard {
        host: host::Host,
        /// `--shim DIR`: the shim directory the host's commands have first on PATH.
        shim: Option<PathBuf>,
    },
    /// `shim-env --dir DIR [--print | --json]` (the host wiring's environment lines).
    ShimEnv {
        dir: PathBuf,
        mode: setup::shim::EnvMode,
    },
    Version,
    Help,
}

fn parse(args: &[String]) -> Result<Command, String> {
    let Some(first) = args.first() else {
        return Err("missing command".into());
    };
    let rest = &args[1..];
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        if let Some(help) = command_help(first) {
            return Ok(Command::UsageOf(help));
        }
    }
    let option = |flag: &str| -> Result<Option<String>, String> {
        let inline = format!("{flag}=");
        match rest {
            [] => Ok(None),
            [f] if f.starts_with(&inline) => Ok(Some(f[inline.len()..].to_string())),
            [f] if f == flag => Err(format!("{flag} needs a value")),
            [f, v] if f == flag => Ok(Some(v.clone())),
            _ => Err(format!("unexpected arguments: {}", rest.join(" "))),
        }
    };
    match first.as_str() {
        "mcp" => parse_mcp(rest),
        "doctor" => Ok(Command::Doctor {
            pane: option("--pane")?,
        }),
        "setup" => Ok(Command::Setup(setup::parse(rest)?)),
        "plugin-action" => match rest {
            [id] => Ok(Command::PluginAction(id.clone())),
            _ => Err("plugin-action needs one action id (herdr-link plugin-action --help)".into()),
        },
        "guard" => parse_guard(rest),
        "log" => Ok(Command::Log(logview::parse(rest)?)),
        "watch" => Ok(Command::Watch(watch::parse(rest)?)),
        "shim-env" => parse_shim_env(rest),
        "--version" | "-V" | "version" if rest.is_empty() => Ok(Command::Version),
        "--help" | "-h" | "help" if rest.is_empty() => Ok(Command::Help),
        other => Err(format!("unknown command: {other}")),
    }
}

/// `guard --host HOST [--shim DIR]`, each at most once, as `--flag value` or `--flag=value`.
fn parse_guard(rest: &[String]) -> Result<Command, String> {
    let (mut host, mut shim) = (None, None);
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let slot = match flag {
            "--host" => &mut host,
            "--shim" => &mut shim,
            _ => return Err(format!("unexpected arguments: {}", rest.join(" "))),
        };
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or(format!("{flag} needs a value"))?,
        };
        if slot.replace(value).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    let hosts = || host::names(host::has_hook);
    let host = host.ok_or_else(|| format!("guard needs --host HOST: {}", hosts()))?;
    let host = host::Host::parse(&host)
        .filter(|h| h.hook().is_some())
        .ok_or_else(|| format!("unknown --host {host:?}: use {}", hosts()))?;
    Ok(Command::Guard {
        host,
        shim: shim.map(PathBuf::from),
    })
}

/// `shim-env --dir DIR [--print | --json]`, in any order.
fn parse_shim_env(rest: &[String]) -> Result<Command, String> {
    use setup::shim::EnvMode;
    let mut dir = None;
    let mut mode = EnvMode::ClaudeHook;
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--dir" => dir = Some(it.next().ok_or("--dir needs a value")?.clone()),
            d if d.starts_with("--dir=") => dir = Some(d["--dir=".len()..].to_string()),
            "--print" if mode == EnvMode::ClaudeHook => mode = EnvMode::Print,
            "--json" if mode == EnvMode::ClaudeHook => mode = EnvMode::Json,
            other => return Err(format!("shim-env: unexpected argument {other:?}")),
        }
    }
    let dir = dir
        .filter(|d| !d.is_empty())
        .ok_or("shim-env needs --dir DIR")?;
    Ok(Command::ShimEnv {
        dir: PathBuf::from(dir),
        mode,
    })
}

/// `mcp [--context-dir DIR] [--host HOST] [--server-name NAME]`, each at most once, as
/// `--flag value` or `--flag=value`.
fn parse_mcp(rest: &[String]) -> Result<Command, String> {
    use herdr_link::presentation::{McpHost, McpNaming, MCP_HOSTS};
    const FLAGS: [&str; 3] = ["--context-dir", "--host", "--server-name"];
    let mut values: [Option<String>; 3] = Default::default();
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let Some(i) = FLAGS.iter().position(|f| *f == flag) else {
            return Err(format!("unexpected argument: {arg}"));
        };
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or(format!("{flag} needs a value"))?,
        };
        if values[i].replace(value).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    let [context_dir, host, server_name] = values;
    let host = match host {
        None => None,
        Some(h) => Some(McpHost::parse(&h).ok_or_else(|| {
            let names = host::or_list(MCP_HOSTS.iter().filter_map(|f| f.name));
            format!("unknown --host {h:?}: use {names}")
        })?),
    };
    if let Some(name) = &server_name {
        if !McpNaming::server_name_ok(name) {
            return Err(format!(
                "--server-name {name:?}: use 1 to 64 letters, digits, _ or -"
            ));
        }
    }
    Ok(Command::Mcp {
        context_dir: context_dir.map(PathBuf::from),
        host,
        server_name,
    })
}

/// The context directory: `--context-dir` (relative to the working directory), else the
/// working directory.
fn context_dir(arg: Option<PathBuf>) -> Result<PathBuf, String> {
    let cwd = std::env::current_dir();
    let dir = match arg {
        Some(d) if d.is_absolute() => d,
        Some(d) => cwd
            .map_err(|e| format!("cannot read the current directory: {e}"))?
            .join(d),
        None => return cwd.map_err(|e| format!("cannot read the current directory: {e}")),
    };
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "--context-dir {} is not a directory",
            dir.display()
        ))
    }
}

fn main() {
    // Run as `herdr` (a link in the shim directory): Herdr's CLI front, before anything else.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.first().is_some_and(|a0| shim::is_shim(a0)) {
        std::process::exit(shim::run(argv));
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match parse(&args) {
        Ok(Command::Mcp {
            context_dir: arg,
            host,
            server_name,
        }) => match context_dir(arg) {
            Ok(dir) => mcp::run(dir, host, server_name),
            Err(e) => {
                eprintln!("herdr-link: {e}");
                2
            }
        },
        Ok(Command::Doctor { pane }) => doctor::run(pane),
        Ok(Command::Setup(Some(options))) => setup::run(options),
        Ok(Command::PluginAction(id)) => plugin_action::run(&id),
        Ok(Command::Log(options)) => logview::run(options),
        Ok(Command::Watch(options)) => watch::run(options),
        Ok(Command::Setup(None)) => {
            println!("{}", setup::USAGE);
            0
        }
        Ok(Command::UsageOf(help)) => {
            println!("{help}");
            0
        }
        Ok(Command::Guard { host, shim }) => hook::run(host, shim.as_deref()),
        Ok(Command::ShimEnv { dir, mode }) => setup::shim::env_hook(&dir, mode),
        Ok(Command::Version) => {
            println!("herdr-link {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Command::Help) => {
            println!("{USAGE}");
            0
        }
        // A misconfigured hook must not block every Bash call: exit 1 (a hook error the
        // host reports), never 2 (a block).
        Err(e) if matches!(args.first().map(String::as_str), Some("guard" | "shim-env")) => {
            eprintln!("herdr-link: {e}");
            1
        }
        Err(e) => {
            eprintln!("herdr-link: {e}\n{USAGE}");
            2
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn parses_commands() {
        use herdr_link::presentation::McpHost;
        let mcp = |dir: Option<&str>, host, name: Option<&str>| {
            Ok(Command::Mcp {
                context_dir: dir.map(PathBuf::from),
                host,
                server_name: name.map(str::to_string),
            })
        };
        assert_eq!(p(&["mcp"]), mcp(None, None, None));
        assert_eq!(
            p(&["mcp", "--context-dir", "/x"]),
            mcp(Some("/x"), None, None)
        );
        assert_eq!(p(&["mcp", "--context-dir=/y"]), mcp(Some("/y"), None, None));
        assert_eq!(
            p(&["mcp", "--host", "codex", "--context-dir", "/x"]),
            mcp(Some("/x"), Some(McpHost::Codex), None)
        );
        assert_eq!(
            p(&["mcp", "--server-name=link2", "--host=agy"]),
            mcp(None, Some(McpHost::Agy), Some("link2"))
        );
        assert!(p(&["mcp", "--context-dir"]).is_err());
        assert!(p(&["mcp", "--bogus"]).is_err());
        assert!(p(&["mcp", "--host", "vim"]).is_err());
        assert!(p(&["mcp", "--host", "claude", "--host", "codex"]).is_err());
        assert!(p(&["mcp", "--server-name", "a b"]).is_err());
        assert_eq!(p(&["doctor"]), Ok(Command::Doctor { pane: None }));
        assert_eq!(
            p(&["doctor", "--pane", "w1:p2"]),
            Ok(Command::Doctor {
                pane: Some("w1:p2".into())
            })
        );
        assert_eq!(
            p(&["guard", "--host", "claude"]),
            Ok(Command::Guard {
                host: host::Host::Claude,
                shim: None
            })
        );
        assert_eq!(
            p(&["guard", "--host=codex"]),
            Ok(Command::Guard {
                host: host::Host::Codex,
                shim: None
            })
        );
        assert_eq!(
            p(&["guard", "--host", "claude", "--shim", "/d s"]),
            Ok(Command::Guard {
                host: host::Host::Claude,
                shim: Some(PathBuf::from("/d s"))
            })
        );
        assert_eq!(
            p(&["guard", "--shim=/d", "--host=opencode"]),
            Ok(Command::Guard {
                host: host::Host::OpenCode,
                shim: Some(PathBuf::from("/d"))
            })
        );
        assert_eq!(
            p(&["guard", "--host", "gemini"]),
            Ok(Command::Guard {
                host: host::Host::Gemini,
                shim: None
            })
        );
        assert_eq!(
            p(&["guard", "--host=qwen"]),
            Ok(Command::Guard {
                host: host::Host::Qwen,
                shim: None
            })
        );
        assert_eq!(
            p(&["mcp", "--host", "qwen"]),
            mcp(None, Some(McpHost::Qwen), None)
        );
        assert!(p(&["guard"]).is_err());
        assert!(p(&["guard", "--host", "vim"]).is_err());
        assert!(p(&["guard", "--host", "claude", "--shim"]).is_err());
        assert!(p(&["guard", "--host", "claude", "--host", "codex"]).is_err());
        assert!(p(&["guard", "--host", "claude", "--bogus"]).is_err());
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert_eq!(p(&["-h"]), Ok(Command::Help));
        assert!(p(&[]).is_err());
        assert!(p(&["serve"]).is_err());
        assert_eq!(p(&["mcp", "--help"]), Ok(Command::UsageOf(MCP_HELP)));
        assert_eq!(
            p(&["doctor", "--pane", "w1:p2", "-h"]),
            Ok(Command::UsageOf(DOCTOR_HELP))
        );
        assert_eq!(p(&["setup", "--help"]), Ok(Command::UsageOf(setup::USAGE)));
        assert_eq!(
            p(&["plugin-action", "setup-pi"]),
            Ok(Command::PluginAction("setup-pi".into()))
        );
        assert!(p(&["plugin-action"]).is_err());
        assert!(p(&["plugin-action", "a", "b"]).is_err());
    }
}
