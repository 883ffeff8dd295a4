//! The real `herdr` CLI surface: global argv pre-processing, the per-command
//! grammar (usage errors exit 2), and the server-side behaviour against [`State`].

use serde_json::{json, Value};
use std::collections::BTreeMap;

use crate::kinds;
use crate::settings::{now_ms, Settings, Version};
use crate::sorted;
use crate::state::{ApiError, Loc, Pane, State};

/// What a command produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr.
    pub stderr: Vec<u8>,
    /// Exit code.
    pub code: i32,
}

impl Outcome {
    /// Plain-text usage error, exit 2.
    pub fn usage(msg: impl AsRef<str>) -> Outcome {
        Outcome {
            stderr: format!("{}\n", msg.as_ref()).into_bytes(),
            code: 2,
            ..Outcome::default()
        }
    }

    /// Success: one JSON line on stdout.
    pub fn json(v: &Value) -> Outcome {
        Outcome {
            stdout: sorted::line(v),
            ..Outcome::default()
        }
    }

    /// A server error reply on stderr, exit 1.
    pub fn api(id: &str, e: &ApiError) -> Outcome {
        let v = json!({"error": {"code": e.code, "message": e.message}, "id": id});
        Outcome {
            stderr: sorted::line(&v),
            code: 1,
            ..Outcome::default()
        }
    }

    /// An `Error: Custom { kind: Other, error: "..." }` io-style failure, exit 1.
    pub fn io_error(msg: &str) -> Outcome {
        Outcome {
            stderr: format!("Error: Custom {{ kind: Other, error: {msg:?} }}\n").into_bytes(),
            code: 1,
            ..Outcome::default()
        }
    }
}

/// Environment the CLI reads.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `HERDR_PANE_ID` (for `pane split --current`).
    pub pane_id: Option<String>,
    /// `--session` from argv, if any.
    pub session_arg: Option<String>,
    /// `HERDR_SOCKET_PATH`.
    pub socket_path: Option<String>,
    /// `HERDR_SESSION`.
    pub session_env: Option<String>,
    /// `XDG_CONFIG_HOME`.
    pub xdg_config: Option<String>,
    /// `HOME`.
    pub home: Option<String>,
    /// Process cwd (default cwd for `workspace create`).
    pub cwd: Option<String>,
    /// The version played and the simulated delays.
    pub settings: Settings,
}

impl Env {
    /// Read the process environment.
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Env {
            pane_id: var("HERDR_PANE_ID"),
            session_arg: None,
            socket_path: var("HERDR_SOCKET_PATH"),
            session_env: var("HERDR_SESSION"),
            xdg_config: var("XDG_CONFIG_HOME"),
            home: var("HOME"),
            cwd: std::env::current_dir()
                .ok()
                .map(|p| p.to_string_lossy().into_owned()),
            settings: Settings::default(),
        }
    }

    fn config_dir(&self) -> String {
        match (&self.xdg_config, &self.home) {
            (Some(x), _) => format!("{x}/herdr"),
            (None, Some(h)) => format!("{h}/.config/herdr"),
            (None, None) => ".config/herdr".to_string(),
        }
    }

    /// The socket path and the "run ..." hint for `server_not_running`.
    pub fn socket(&self) -> (String, String) {
        let session_path = |name: &str| {
            if name == "default" {
                (
                    format!("{}/herdr.sock", self.config_dir()),
                    "herdr".to_string(),
                )
            } else {
                (
                    format!("{}/sessions/{name}/herdr.sock", self.config_dir()),
                    format!("herdr session attach {name}"),
                )
            }
        };
        if let Some(s) = &self.session_arg {
            return session_path(s);
        }
        if let Some(p) = &self.socket_path {
            return (p.clone(), "herdr".to_string());
        }
        if let Some(s) = &self.session_env {
            return session_path(s);
        }
        (
            format!("{}/herdr.sock", self.config_dir()),
            "herdr".to_string(),
        )
    }
}

/// Validate a session name: `[A-Za-z0-9._-]{1,64}`, not `.` or `..`.
pub fn check_session_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid session name {name:?}: use 1-64 characters from A-Z a-z 0-9 . _ -"
        ))
    }
}

/// Global pre-processing (§1.1 steps 2-3): strip `--session` and `--remote*` before the
/// first `--`, move `--handoff` to the end. Returns the new argv and the session name.
pub fn preprocess(args: Vec<String>) -> Result<(Vec<String>, Option<String>), Outcome> {
    let mut out = Vec::with_capacity(args.len());
    let mut session = None;
    let mut remote = false;
    let mut handoff = 0;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        if a == "--session" {
            match it.next() {
                Some(v) => session = Some(v),
                None => return Err(Outcome::usage("error: missing value for --session")),
            }
        } else if let Some(v) = a.strip_prefix("--session=") {
            session = Some(v.to_string());
        } else if a == "--remote" || a == "--remote-keybindings" {
            remote |= a == "--remote";
            let _ = it.next();
        } else if a.starts_with("--remote=") {
            remote = true;
        } else if a.starts_with("--remote-keybindings=") {
        } else if a == "--handoff" {
            handoff += 1;
        } else {
            out.push(a);
        }
    }
    if let Some(s) = &session {
        check_session_name(s).map_err(|e| Outcome::usage(format!("error: {e}")))?;
    }
    if remote && !out.is_empty() {
        return Err(Outcome::usage(
            "error: --remote can only be used with the default launch command",
        ));
    }
    if !remote {
        for _ in 0..handoff {
            out.push("--handoff".to_string());
        }
    }
    Ok((out, session))
}

const TOP_HELP: &str = "herdr {version} (fake) - terminal workspace manager for coding agents

Usage: herdr [--session NAME] [COMMAND]

Commands:
  agent      Start, list, inspect, prompt and rename agents
  pane       Inspect and control panes
  tab        Create and close tabs
  workspace  Create workspaces
";

const AGENT_HELP_082: &str = "herdr agent commands:\n  herdr agent list\n  herdr agent get <target>\n  herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi] [--ansi]\n  herdr agent send-keys <target> <key> [key ...]\n  herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]\n  herdr agent rename <target> <name>|--clear\n  herdr agent focus <target>\n  herdr agent wait <target> [--until STATUS]... [--timeout MS]\n  herdr agent attach <target> [--takeover]\n  herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]\n  herdr agent explain <target> [--json|--format text|json] [--verbose]\n  herdr agent explain --file PATH --agent LABEL [--json|--format text|json] [--verbose]\n  targets accept unique agent names and pane ids that currently host agents\n  kinds: pi|claude|codex|gemini|cursor|devin|agy|cline|omp|mastracode|opencode|copilot|kimi|kiro|droid|amp|grok|hermes|kilo|qodercli|qwen|maki\n";
const AGENT_HELP_080: &str = "herdr agent commands:\n  herdr agent list\n  herdr agent get <target>\n  herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi] [--ansi]\n  herdr agent send-keys <target> <key> [key ...]\n  herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]\n  herdr agent rename <target> <name>|--clear\n  herdr agent focus <target>\n  herdr agent wait <target> [--until STATUS]... [--timeout MS]\n  herdr agent attach <target> [--takeover]\n  herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]\n  herdr agent explain <target> [--json|--format text|json] [--verbose]\n  herdr agent explain --file PATH --agent LABEL [--json|--format text|json] [--verbose]\n  targets accept unique agent names and pane ids that currently host agents\n  kinds: pi|claude|codex|gemini|cursor|devin|agy|cline|omp|mastracode|opencode|copilot|kimi|kiro|droid|amp|grok|hermes|kilo|qodercli|maki\n";

const PANE_HELP: &str = "herdr pane commands:
  herdr pane list [--workspace <workspace_id>]
  herdr pane get <pane_id>
  herdr pane split [<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE]... [--right-click herdr|pane] [--focus] [--no-focus]
  herdr pane close <pane_id>
  herdr pane report-agent <pane_id> --source ID --agent LABEL --state idle|working|blocked|unknown [--message T] [--seq N] [--agent-session-id ID] [--agent-session-path P]
  herdr pane read <pane_id>
";

const TAB_HELP: &str = "herdr tab commands:
  herdr tab create [--workspace <workspace_id>] [--cwd PATH] [--label TEXT] [--env KEY=VALUE]... [--focus] [--no-focus]
  herdr tab close <tab_id>
";

const WORKSPACE_HELP: &str = "herdr workspace commands:
  herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE]... [--focus] [--no-focus]
";

/// The help of an area, as `version` prints it (the agent commands as real Herdr lists them).
fn area_help(area: &str, version: Version) -> Option<(&'static str, &'static [&'static str])> {
    match area {
        "agent" => Some((
            if version.at_least_082() {
                AGENT_HELP_082
            } else {
                AGENT_HELP_080
            },
            &[
                "list",
                "get",
                "prompt",
                "start",
                "rename",
                "focus",
                "wait",
                "read",
                "send-keys",
            ],
        )),
        "pane" => Some((
            PANE_HELP,
            &[
                "list",
                "get",
                "split",
                "close",
                "report-agent",
                "release-agent",
                "read",
                "send-text",
                "send-keys",
                "run",
                "focus",
            ],
        )),
        "tab" => Some((
            TAB_HELP,
            &["create", "close", "list", "get", "focus", "rename"],
        )),
        "workspace" => Some((
            WORKSPACE_HELP,
            &["create", "list", "get", "close", "focus", "rename"],
        )),
        _ => None,
    }
}

const AGENT_PROMPT_USAGE: &str =
    "usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]";
const AGENT_START_USAGE: &str =
    "usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]";
const PANE_SPLIT_USAGE: &str = "usage: herdr pane split [<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE] [--right-click herdr|pane] [--focus] [--no-focus]";
const PANE_SPLIT_USAGE_080: &str = "usage: herdr pane split [<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE] [--focus] [--no-focus]";
const REPORT_USAGE: &str = "usage: herdr pane report-agent <pane_id> --source ID --agent LABEL --state idle|working|blocked|unknown [--message T] [--seq N] [--agent-session-id ID] [--agent-session-path P]";
const STATUSES: [&str; 5] = ["idle", "working", "blocked", "done", "unknown"];

/// A parsed, socket-backed command.
#[derive(Debug)]
pub enum Cmd {
    AgentGet(String),
    AgentList,
    AgentPrompt {
        target: String,
        text: String,
    },
    AgentStart {
        name: String,
        kind: String,
        pane: String,
        timeout: Option<u64>,
        args: Vec<String>,
    },
    AgentRename {
        target: String,
        name: Option<String>,
    },
    AgentFocus(String),
    AgentWait {
        target: String,
        until: Vec<String>,
    },
    PaneGet(String),
    PaneList(Option<String>),
    PaneSplit {
        target: Option<String>,
        cwd: Option<String>,
        env: BTreeMap<String, String>,
        focus: bool,
    },
    PaneClose(String),
    ReportAgent {
        pane: String,
        source: String,
        agent: String,
        state: String,
    },
    TabCreate {
        workspace: Option<String>,
        cwd: Option<String>,
        label: Option<String>,
        env: BTreeMap<String, String>,
        focus: bool,
    },
    TabClose(String),
    WorkspaceCreate {
        cwd: Option<String>,
        label: Option<String>,
        env: BTreeMap<String, String>,
        focus: bool,
    },
}

/// Result of running one invocation.
#[derive(Debug, Default)]
pub struct Exec {
    /// Output.
    pub outcome: Outcome,
    /// The state changed and must be saved.
    pub dirty: bool,
    /// 0.8.2 `agent start` was accepted: the CLI now polls until the agent is ready.
    pub start_wait: Option<StartWait>,
    /// 0.8.2 `agent start` got `agent_pane_busy`: the CLI retries for a while.
    pub busy_retry: bool,
    /// 0.9.0 `agent prompt` was queued: the CLI answers after its Enter.
    pub prompt_wait: Option<PromptWait>,
}

/// A 0.9.0 `agent prompt` the CLI is waiting for: it answers when its submission's Enter has
/// been written, or `agent_prompt_failed` if the pane went first.
#[derive(Debug)]
pub struct PromptWait {
    /// The submission (`submit::Queued::id`).
    pub id: String,
    /// When its Enter comes (µs since the epoch).
    pub enter_at_us: u64,
}

/// A 0.8.2 `agent start` the CLI is waiting for (see `poll_start`).
#[derive(Debug)]
pub struct StartWait {
    /// The requested name.
    pub name: String,
    /// The canonical kind.
    pub kind: String,
    /// The terminal the agent was started in.
    pub terminal_id: String,
    /// The launched argv (echoed in the reply).
    pub argv: Vec<String>,
    /// The CLI's startup deadline (`--timeout`, default 30000 ms).
    pub timeout_ms: u64,
}

impl From<Outcome> for Exec {
    fn from(outcome: Outcome) -> Exec {
        Exec {
            outcome,
            ..Exec::default()
        }
    }
}

/// Whether argv (after pre-processing) needs the "server" (the state file).
#[derive(Debug)]
pub enum Parsed {
    /// Finished without the server (help, version, usage error, ...).
    Done(Outcome),
    /// A socket-backed command with its request id (`cli:<area>:<verb>`).
    Server(String, Cmd),
}

fn take_value(it: &mut std::slice::Iter<'_, String>, flag: &str) -> Result<String, Outcome> {
    match it.next() {
        Some(v) => Ok(v.clone()),
        None => Err(Outcome::usage(format!("missing value for {flag}"))),
    }
}

fn parse_env(v: &str, env: &mut BTreeMap<String, String>) -> Result<(), Outcome> {
    let Some((k, val)) = v.split_once('=') else {
        return Err(Outcome::usage("env must use KEY=VALUE"));
    };
    if k.is_empty() {
        return Err(Outcome::usage("env key must not be empty"));
    }
    env.insert(k.to_string(), val.to_string());
    Ok(())
}

/// Parse argv (after pre-processing).
pub fn parse(args: &[String], env: &Env) -> Parsed {
    match parse_inner(args, env) {
        Ok((id, cmd)) => Parsed::Server(id, cmd),
        Err(o) => Parsed::Done(o),
    }
}

fn help_out(text: &str, stdout: bool, code: i32) -> Outcome {
    let mut o = Outcome {
        code,
        ..Outcome::default()
    };
    if stdout {
        o.stdout = text.as_bytes().to_vec();
    } else {
        o.stderr = text.as_bytes().to_vec();
    }
    o
}

fn parse_inner(args: &[String], env: &Env) -> Result<(String, Cmd), Outcome> {
    // --version
    let version = env.settings.version.as_str();
    if args.first().map(String::as_str) == Some("--version") {
        return Err(help_out(&format!("herdr {version}\n"), true, 0));
    }
    // Step 4: --help/-h right after a known subcommand path.
    if let Some(i) = args.iter().position(|a| a == "--help" || a == "-h") {
        match i {
            0 => return Err(help_out(&TOP_HELP.replace("{version}", version), true, 0)),
            1 => {
                if let Some((text, _)) = area_help(&args[0], env.settings.version) {
                    return Err(help_out(text, true, 0));
                }
            }
            2 => {
                if let Some((text, verbs)) = area_help(&args[0], env.settings.version) {
                    if verbs.contains(&args[1].as_str()) {
                        return Err(help_out(text, true, 0));
                    }
                }
            }
            _ => {}
        }
    }
    let Some(area) = args.first() else {
        return Err(Outcome::usage(
            "fake herdr: the TUI (default launch) is not simulated",
        ));
    };
    let Some((help, verbs)) = area_help(area, env.settings.version) else {
        return Err(Outcome::usage(format!(
            "fake herdr: `herdr {area}` launches the TUI, which is not simulated"
        )));
    };
    let Some(verb) = args.get(1) else {
        return Err(help_out(help, false, 2));
    };
    if verb == "help" {
        return Err(help_out(help, false, 0));
    }
    if !verbs.contains(&verb.as_str()) {
        return Err(help_out(help, false, 2));
    }
    let rest = &args[2..];
    let id = format!("cli:{area}:{verb}");
    let cmd = match (area.as_str(), verb.as_str()) {
        ("agent", "get") => {
            if rest.len() != 1 {
                return Err(Outcome::usage("usage: herdr agent get <target>"));
            }
            Cmd::AgentGet(rest[0].clone())
        }
        ("agent", "list") => {
            if !rest.is_empty() {
                return Err(Outcome::usage("usage: herdr agent list"));
            }
            Cmd::AgentList
        }
        ("agent", "focus") => {
            if rest.len() != 1 {
                return Err(Outcome::usage("usage: herdr agent focus <target>"));
            }
            Cmd::AgentFocus(rest[0].clone())
        }
        ("agent", "prompt") => parse_prompt(rest)?,
        ("agent", "wait") => parse_wait(rest)?,
        ("agent", "start") => parse_start(rest, env)?,
        ("agent", "rename") => {
            if rest.len() != 2 {
                return Err(Outcome::usage(
                    "usage: herdr agent rename <target> <name>|--clear",
                ));
            }
            Cmd::AgentRename {
                target: rest[0].clone(),
                name: (rest[1] != "--clear").then(|| rest[1].clone()),
            }
        }
        ("pane", "get") | ("pane", "close") => {
            if rest.len() != 1 {
                return Err(Outcome::usage(format!(
                    "usage: herdr pane {verb} <pane_id>"
                )));
            }
            if verb == "get" {
                Cmd::PaneGet(rest[0].clone())
            } else {
                Cmd::PaneClose(rest[0].clone())
            }
        }
        ("pane", "list") => {
            let mut ws = None;
            let mut it = rest.iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--workspace" => ws = Some(take_value(&mut it, "--workspace")?),
                    _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
                }
            }
            Cmd::PaneList(ws)
        }
        ("pane", "split") => parse_split(rest, env)?,
        ("pane", "report-agent") => parse_report(rest)?,
        ("tab", "create") | ("workspace", "create") => {
            let mut workspace = None;
            let mut cwd = None;
            let mut label = None;
            let mut envs = BTreeMap::new();
            let mut focus = false;
            let mut it = rest.iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--workspace" if area == "tab" => {
                        workspace = Some(take_value(&mut it, "--workspace")?)
                    }
                    "--cwd" => cwd = Some(take_value(&mut it, "--cwd")?),
                    "--label" => label = Some(take_value(&mut it, "--label")?),
                    "--env" => parse_env(&take_value(&mut it, "--env")?, &mut envs)?,
                    "--focus" => focus = true,
                    "--no-focus" => focus = false,
                    _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
                }
            }
            if area == "tab" {
                Cmd::TabCreate {
                    workspace,
                    cwd,
                    label,
                    env: envs,
                    focus,
                }
            } else {
                Cmd::WorkspaceCreate {
                    cwd,
                    label,
                    env: envs,
                    focus,
                }
            }
        }
        ("tab", "close") => {
            if rest.len() != 1 {
                return Err(Outcome::usage("usage: herdr tab close <tab_id>"));
            }
            Cmd::TabClose(rest[0].clone())
        }
        _ => {
            return Err(Outcome::usage(format!(
                "fake herdr: `herdr {area} {verb}` is not simulated"
            )))
        }
    };
    Ok((id, cmd))
}

fn parse_status(v: &str) -> Result<String, Outcome> {
    if STATUSES.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(Outcome::usage(format!(
            "invalid agent status: {v} (expected idle, working, blocked, done, or unknown)"
        )))
    }
}

fn parse_u64_flag(v: &str, flag: &str) -> Result<u64, Outcome> {
    v.parse::<u64>()
        .map_err(|_| Outcome::usage(format!("invalid value for {flag}: {v}")))
}

fn parse_prompt(rest: &[String]) -> Result<Cmd, Outcome> {
    let Some(target) = rest.first() else {
        return Err(Outcome::usage(AGENT_PROMPT_USAGE));
    };
    let Some(text) = rest.get(1) else {
        return Err(Outcome::usage("agent prompt requires text"));
    };
    let mut wait = false;
    let mut until = false;
    let mut timeout = false;
    let mut it = rest[2..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--wait" => wait = true,
            "--until" => {
                parse_status(&take_value(&mut it, "--until")?)?;
                until = true;
            }
            "--timeout" => {
                parse_u64_flag(&take_value(&mut it, "--timeout")?, "--timeout")?;
                timeout = true;
            }
            _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
        }
    }
    if until && !wait {
        return Err(Outcome::usage("--until requires --wait"));
    }
    if timeout && !wait {
        return Err(Outcome::usage("--timeout requires --wait"));
    }
    Ok(Cmd::AgentPrompt {
        target: target.clone(),
        text: text.clone(),
    })
}

fn parse_wait(rest: &[String]) -> Result<Cmd, Outcome> {
    let Some(target) = rest.first() else {
        return Err(Outcome::usage(
            "usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]",
        ));
    };
    let mut until = Vec::new();
    let mut it = rest[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--until" => until.push(parse_status(&take_value(&mut it, "--until")?)?),
            "--timeout" => {
                parse_u64_flag(&take_value(&mut it, "--timeout")?, "--timeout")?;
            }
            _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
        }
    }
    Ok(Cmd::AgentWait {
        target: target.clone(),
        until,
    })
}

fn parse_start(rest: &[String], env: &Env) -> Result<Cmd, Outcome> {
    let Some(name) = rest.first() else {
        return Err(Outcome::usage(AGENT_START_USAGE));
    };
    let tail = &rest[1..];
    let (opts, args) = match tail.iter().position(|a| a == "--") {
        Some(i) => (&tail[..i], tail[i + 1..].to_vec()),
        None => (tail, Vec::new()),
    };
    let mut kind = None;
    let mut pane = None;
    let mut timeout = None;
    let mut it = opts.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--kind" => kind = Some(take_value(&mut it, "--kind")?),
            "--pane" => pane = Some(take_value(&mut it, "--pane")?),
            "--timeout" => {
                timeout = Some(parse_u64_flag(
                    &take_value(&mut it, "--timeout")?,
                    "--timeout",
                )?)
            }
            _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
        }
    }
    let Some(kind) = kind else {
        return Err(Outcome::usage("missing required --kind"));
    };
    let Some(pane) = pane else {
        return Err(Outcome::usage("missing required --pane"));
    };
    if kinds::parse(&kind, env.settings.version).is_none() {
        return Err(Outcome::usage(format!(
            "unsupported interactive agent kind: {kind}"
        )));
    }
    Ok(Cmd::AgentStart {
        name: name.clone(),
        kind,
        pane,
        timeout,
        args,
    })
}

fn parse_split(rest: &[String], env: &Env) -> Result<Cmd, Outcome> {
    let v082 = env.settings.version.at_least_082();
    // 0.8.2 splits `--right-click=VALUE` into two words first; 0.8.0 has no such option.
    let expanded: Vec<String>;
    let mut rest = if v082 {
        expanded = rest
            .iter()
            .flat_map(|a| match a.split_once('=') {
                Some(("--right-click", v)) => vec!["--right-click".to_string(), v.to_string()],
                _ => vec![a.clone()],
            })
            .collect();
        &expanded[..]
    } else {
        rest
    };
    let mut target = None;
    let mut direction = None;
    let mut cwd = None;
    let mut envs = BTreeMap::new();
    let mut focus = false;
    if let Some(first) = rest.first() {
        if !first.starts_with("--") {
            target = Some(first.clone());
            rest = &rest[1..];
        }
    }
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pane" => target = Some(take_value(&mut it, "--pane")?),
            // 0.8.0: without HERDR_PANE_ID, `--current` leaves the target unset (the focused
            // pane); 0.8.2 refuses it.
            "--current" => match &env.pane_id {
                Some(v) => target = Some(v.clone()),
                None if v082 => return Err(Outcome::usage("--current requires HERDR_PANE_ID")),
                None => target = None,
            },
            "--direction" => {
                let v = take_value(&mut it, "--direction")?;
                if v != "right" && v != "down" {
                    return Err(Outcome::usage(format!("invalid split direction: {v}")));
                }
                direction = Some(v);
            }
            "--ratio" => {
                let v = take_value(&mut it, "--ratio")?;
                match v.parse::<f32>() {
                    Ok(r) if r.is_finite() => {}
                    _ => return Err(Outcome::usage(format!("invalid ratio: {v}"))),
                }
            }
            "--cwd" => cwd = Some(take_value(&mut it, "--cwd")?),
            "--env" => parse_env(&take_value(&mut it, "--env")?, &mut envs)?,
            "--right-click" if v082 => {
                let v = take_value(&mut it, "--right-click")?;
                if v != "herdr" && v != "pane" {
                    return Err(Outcome::usage(format!("invalid right-click target: {v}")));
                }
            }
            "--focus" => focus = true,
            "--no-focus" => focus = false,
            other => return Err(Outcome::usage(format!("unknown option: {other}"))),
        }
    }
    if direction.is_none() {
        return Err(Outcome::usage(if v082 {
            PANE_SPLIT_USAGE
        } else {
            PANE_SPLIT_USAGE_080
        }));
    }
    Ok(Cmd::PaneSplit {
        target,
        cwd,
        env: envs,
        focus,
    })
}

fn parse_report(rest: &[String]) -> Result<Cmd, Outcome> {
    let Some(pane) = rest.first().filter(|p| !p.starts_with("--")) else {
        return Err(Outcome::usage(REPORT_USAGE));
    };
    let mut source = None;
    let mut agent = None;
    let mut state = None;
    let mut it = rest[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--source" => source = Some(take_value(&mut it, "--source")?),
            "--agent" => agent = Some(take_value(&mut it, "--agent")?),
            "--state" => state = Some(take_value(&mut it, "--state")?),
            "--message" | "--agent-session-id" | "--agent-session-path" => {
                take_value(&mut it, a)?;
            }
            "--seq" => {
                parse_u64_flag(&take_value(&mut it, "--seq")?, "--seq")?;
            }
            _ => return Err(Outcome::usage(format!("unknown option: {a}"))),
        }
    }
    let Some(source) = source else {
        return Err(Outcome::usage("missing required --source"));
    };
    let Some(agent) = agent else {
        return Err(Outcome::usage("missing required --agent"));
    };
    let Some(state) = state else {
        return Err(Outcome::usage("missing required --state"));
    };
    if !["idle", "working", "blocked", "unknown"].contains(&state.as_str()) {
        return Err(Outcome::io_error(&format!(
            "invalid agent state: {state} (expected idle, working, blocked, or unknown)"
        )));
    }
    Ok(Cmd::ReportAgent {
        pane: pane.clone(),
        source,
        agent,
        state,
    })
}

/// Herdr's `server_not_running` message for the socket the CLI resolved.
pub fn no_server_message(env: &Env) -> String {
    let (sock, hint) = env.socket();
    format!("no herdr server is running at {sock}; run `{hint}` to start or attach it")
}

/// `server_not_running` line (id first, as the CLI's `main` prints it).
pub fn server_not_running(id: &str, env: &Env) -> Outcome {
    typed_error(id, "server_not_running", &no_server_message(env))
}

/// A typed error the CLI prints from its `ErrorResponse` struct (`server_not_running`,
/// `protocol_mismatch`): `{"id":..,"error":{"code":..,"message":..}}`, `id` first, on stderr,
/// exit 1.
pub fn typed_error(id: &str, code: &str, message: &str) -> Outcome {
    let line = format!(
        "{{\"id\":{},\"error\":{{\"code\":{},\"message\":{}}}}}\n",
        sorted::to_sorted(&json!(id)),
        sorted::to_sorted(&json!(code)),
        sorted::to_sorted(&json!(message))
    );
    Outcome {
        stderr: line.into_bytes(),
        code: 1,
        ..Outcome::default()
    }
}

fn ok(id: &str, result: Value) -> Outcome {
    Outcome::json(&json!({"id": id, "result": result}))
}

fn valid_agent_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_')
}

const INVALID_NAME: &str = "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)";

fn name_taken(st: &State, name: &str, except: Option<Loc>) -> Result<(), ApiError> {
    let holders: Vec<Loc> = st
        .named(name)
        .into_iter()
        .filter(|l| Some(*l) != except)
        .collect();
    if holders.is_empty() {
        Ok(())
    } else {
        Err(ApiError::new(
            "agent_name_taken",
            format!(
                "agent name {name} is already used; candidates: {}",
                st.candidates(&holders)
            ),
        ))
    }
}

/// Run a parsed command against the state (the "server" side).
pub fn run(id: &str, cmd: Cmd, st: &mut State, env: &Env) -> Exec {
    let mut exec = Exec::default();
    let result = run_inner(cmd, st, env, &mut exec);
    exec.outcome = match result {
        Ok(Some(v)) => ok(id, v),
        Ok(None) => Outcome::default(),
        Err(e) => Outcome::api(id, &e),
    };
    exec
}

fn pane_not_found(id: &str) -> ApiError {
    ApiError::new("pane_not_found", format!("pane {id} not found"))
}

fn run_inner(
    cmd: Cmd,
    st: &mut State,
    env: &Env,
    exec: &mut Exec,
) -> Result<Option<Value>, ApiError> {
    match cmd {
        Cmd::AgentGet(target) => {
            let l = st.resolve_agent(&target)?;
            Ok(Some(
                json!({"agent": st.agent_info(l), "type": "agent_info"}),
            ))
        }
        Cmd::AgentList => {
            let agents: Vec<Value> = st
                .locs()
                .into_iter()
                .filter(|l| st.pane(*l).is_agent_terminal())
                .map(|l| st.agent_info(l))
                .collect();
            Ok(Some(json!({"agents": agents, "type": "agent_list"})))
        }
        Cmd::AgentFocus(target) => {
            let l = st.resolve_agent(&target)?;
            st.focus(l);
            exec.dirty = true;
            Ok(Some(
                json!({"agent": st.agent_info(l), "type": "agent_info"}),
            ))
        }
        Cmd::AgentWait { target, until } => {
            let l = st.resolve_agent(&target)?;
            let status = st.pane(l).agent_status().to_string();
            if !until.is_empty() && !until.contains(&status) {
                return Err(ApiError::new(
                    "timeout",
                    format!("timed out waiting for agent {target}"),
                ));
            }
            Ok(Some(
                json!({"agent": st.agent_info(l), "type": "agent_info"}),
            ))
        }
        Cmd::AgentPrompt { target, text } => {
            if text.is_empty() {
                return Err(ApiError::new(
                    "empty_agent_prompt",
                    "agent prompt must not be empty",
                ));
            }
            let l = st.resolve_agent(&target)?;
            let p = st.pane(l);
            // 0.8.2 checks the terminal's state first (`handle_agent_prompt`).
            if env.settings.version.at_least_082() && p.agent_status() == "blocked" {
                return Err(ApiError::new(
                    "agent_blocked",
                    format!("agent {target} is blocked and requires interactive input"),
                ));
            }
            let known = p
                .effective_label()
                .filter(|k| kinds::is_known(k, env.settings.version));
            if p.launch_pending || known.is_none() {
                return Err(ApiError::new(
                    "agent_not_ready",
                    format!("agent {target} is not an active named agent"),
                ));
            }
            if p.detected_process() != known {
                return Err(ApiError::new(
                    "agent_not_ready",
                    format!("agent {target} is no longer the pane foreground process"),
                ));
            }
            if p.prompt_fails {
                return Err(ApiError::new(
                    "agent_prompt_failed",
                    format!(
                        "failed to write prompt to agent {target}: Input/output error (os error 5)"
                    ),
                ));
            }
            let now = crate::submit::now_us();
            if env.settings.version.at_least_090() {
                // One submission on the pane's input queue; the answer (with the agent as it
                // was now) comes after its Enter (submit.rs).
                let id = format!("{}-{now}", std::process::id());
                let Some(enter_at_us) =
                    st.pane_mut(l)
                        .input
                        .queue_submission(id.clone(), &target, &text, now)
                else {
                    return Err(ApiError::new(
                        "agent_prompt_failed",
                        "pty input queue is full",
                    ));
                };
                exec.prompt_wait = Some(PromptWait { id, enter_at_us });
            } else {
                // Typed now; its Enter comes one submit delay later (submit.rs).
                st.pane_mut(l).input.type_prompt(&target, &text, now);
            }
            st.pane_mut(l).touch(false);
            exec.dirty = true;
            Ok(Some(
                json!({"agent": st.agent_info(l), "type": "agent_prompted"}),
            ))
        }
        Cmd::AgentStart {
            name,
            kind,
            pane,
            timeout,
            args,
        } => {
            if !valid_agent_name(&name) {
                return Err(ApiError::new("invalid_agent_name", INVALID_NAME));
            }
            let Some(kind) = kinds::parse(&kind, env.settings.version) else {
                return Err(ApiError::new(
                    "unsupported_agent_kind",
                    format!("unsupported interactive agent kind {kind}"),
                ));
            };
            if args.iter().any(|a| a.chars().any(char::is_control)) {
                return Err(ApiError::new(
                    "invalid_agent_argument",
                    "agent arguments cannot be encoded safely for the target shell",
                ));
            }
            name_taken(st, &name, None)?;
            let Some(l) = st.find_current(&pane) else {
                return Err(ApiError::new(
                    "agent_pane_not_found",
                    format!("agent target pane {pane} not found"),
                ));
            };
            let p = st.pane(l);
            if p.is_agent_terminal()
                || p.process.is_some()
                || p.launch_pending
                || p.shell_starting(now_ms())
            {
                // 0.8.2's CLI retries only while the pane's shell is still its foreground
                // process (`pane_shell_is_initializing`) and the timeout is one the server
                // takes; a pane running a process (an agent) is answered at once.
                let t = timeout.unwrap_or(30_000);
                exec.busy_retry = env.settings.version.at_least_082()
                    && p.process.is_none()
                    && t > 3000
                    && t <= 300_000;
                return Err(ApiError::new(
                    "agent_pane_busy",
                    format!("agent target pane {pane} is not an available shell"),
                ));
            }
            if let Some(t) = timeout {
                if t <= 3000 || t > 300_000 {
                    return Err(ApiError::new(
                        "invalid_agent_timeout",
                        "agent start timeout must be greater than 3000ms and at most 300000ms",
                    ));
                }
            }
            let mut argv = vec![kinds::executable(kind).to_string()];
            argv.extend(args);
            let settings = &env.settings;
            let p = st.pane_mut(l);
            p.process = Some(kind.to_string());
            p.name = Some(name.clone());
            p.report = None;
            p.launch_argv = Some(argv.clone());
            // Pending and undetected (`unknown`) until it settles; the CLI polls until it is
            // ready, in both versions (`wait_for_named_agent`). 0.8.0 also counts a blocked
            // new agent as ready.
            p.detected = false;
            p.status = "unknown".to_string();
            p.launch_pending = true;
            p.interactive_ready = false;
            p.settle_at_ms = Some(now_ms() + settings.settle_ms);
            p.settle_status = Some(settings.start_status.clone());
            p.settle_blocked_ready = !settings.version.at_least_082();
            exec.start_wait = Some(StartWait {
                name,
                kind: kind.to_string(),
                terminal_id: p.terminal_id.clone(),
                argv: argv.clone(),
                timeout_ms: timeout.unwrap_or(30_000),
            });
            p.touch(true);
            exec.dirty = true;
            Ok(Some(json!({
                "agent": st.agent_info(l),
                "argv": argv,
                "type": "agent_started",
            })))
        }
        Cmd::AgentRename { target, name } => {
            let l = st.resolve_agent(&target)?;
            if let Some(n) = &name {
                if !valid_agent_name(n) {
                    return Err(ApiError::new("invalid_agent_name", INVALID_NAME));
                }
                name_taken(st, n, Some(l))?;
            }
            if st.pane(l).launch_pending {
                return Err(ApiError::new(
                    "agent_launch_pending",
                    "agent name cannot change while startup is pending",
                ));
            }
            let p = st.pane_mut(l);
            if p.name != name {
                // Clearing the name ends what `agent start` made of the pane: no longer a
                // managed agent, so no longer `interactive_ready`.
                if name.is_none() {
                    p.interactive_ready = false;
                }
                p.name = name;
                p.touch(false);
                exec.dirty = true;
            }
            Ok(Some(
                json!({"agent": st.agent_info(l), "type": "agent_info"}),
            ))
        }
        Cmd::PaneGet(id) => {
            let l = st.find_any(&id).ok_or_else(|| pane_not_found(&id))?;
            Ok(Some(json!({"pane": st.pane_info(l), "type": "pane_info"})))
        }
        Cmd::PaneList(ws) => {
            let wi = match &ws {
                Some(w) => Some(st.find_workspace(w).ok_or_else(|| {
                    ApiError::new("workspace_not_found", format!("workspace {w} not found"))
                })?),
                None => None,
            };
            let panes: Vec<Value> = st
                .locs()
                .into_iter()
                .filter(|l| wi.is_none_or(|w| w == l.0))
                .map(|l| st.pane_info(l))
                .collect();
            Ok(Some(json!({"panes": panes, "type": "pane_list"})))
        }
        Cmd::PaneSplit {
            target,
            cwd,
            env: envs,
            focus,
        } => {
            let settings = env.settings.clone();
            let env = envs;
            let not_found = || ApiError::new("pane_not_found", "pane not found");
            let l = match &target {
                Some(t) => st.find_any(t).ok_or_else(not_found)?,
                None => focused_pane(st).ok_or_else(not_found)?,
            };
            let id = st.alloc_pane_id(l.0);
            let term = st.new_terminal_id();
            let cwd = cwd.or_else(|| st.pane(l).cwd.clone());
            let mut pane = Pane::shell(id, term, cwd);
            pane.env = env;
            pane.shell_ready_at_ms = shell_ready_at(&settings);
            st.workspaces[l.0].tabs[l.1].panes.insert(l.2 + 1, pane);
            let nl = (l.0, l.1, l.2 + 1);
            if focus {
                st.focus(nl);
            }
            exec.dirty = true;
            Ok(Some(json!({"pane": st.pane_info(nl), "type": "pane_info"})))
        }
        Cmd::PaneClose(id) => {
            let l = st.find_any(&id).ok_or_else(|| pane_not_found(&id))?;
            st.remove_pane(l);
            exec.dirty = true;
            Ok(Some(json!({"type": "ok"})))
        }
        Cmd::ReportAgent {
            pane,
            source,
            agent,
            state,
        } => {
            let l = st.find_any(&pane).ok_or_else(|| pane_not_found(&pane))?;
            if agent.trim().is_empty() {
                return Err(ApiError::new("invalid_agent", "agent must not be empty"));
            }
            let label = kinds::normalize(&agent, env.settings.version);
            let p = st.pane(l);
            // Reserved native pairs only record a session ref.
            const RESERVED: [&str; 8] = [
                "claude", "codex", "copilot", "devin", "droid", "qodercli", "cursor", "grok",
            ];
            const LIFECYCLE: [&str; 6] = ["pi", "omp", "mastracode", "opencode", "kilo", "kimi"];
            if let Some(src) = source.strip_prefix("herdr:") {
                if RESERVED.contains(&src) && src == label {
                    return Ok(None);
                }
                if LIFECYCLE.contains(&src) && p.detected_process() != Some(src) {
                    return Ok(None);
                }
            }
            // A known label that conflicts with the detected process is ignored.
            if let Some(detected) = p.detected_process() {
                if kinds::is_known(&label, env.settings.version) && detected != label {
                    return Ok(None);
                }
            }
            let p = st.pane_mut(l);
            let changed = p.status != state;
            p.report = Some(crate::state::Report {
                source,
                agent: label,
            });
            p.status = state;
            p.touch(changed);
            exec.dirty = true;
            Ok(None)
        }
        Cmd::TabCreate {
            workspace,
            cwd,
            label,
            env: envs,
            focus,
        } => {
            let wi = match &workspace {
                Some(w) => st.find_workspace(w).ok_or_else(|| {
                    ApiError::new("workspace_not_found", format!("workspace {w} not found"))
                })?,
                None => st
                    .active_workspace
                    .as_deref()
                    .and_then(|a| st.find_workspace(a))
                    .ok_or_else(|| ApiError::new("workspace_not_found", "no active workspace"))?,
            };
            let cwd = cwd.or_else(|| st.workspaces[wi].cwd.clone());
            let ti = st.create_tab(wi, label, cwd);
            st.workspaces[wi].tabs[ti].panes[0].env = envs;
            st.workspaces[wi].tabs[ti].panes[0].shell_ready_at_ms = shell_ready_at(&env.settings);
            if focus {
                st.focus((wi, ti, 0));
            }
            exec.dirty = true;
            Ok(Some(json!({
                "tab": st.tab_info(wi, ti),
                "root_pane": st.pane_info((wi, ti, 0)),
                "type": "tab_created",
            })))
        }
        Cmd::TabClose(id) => {
            let (wi, ti) = st
                .find_tab(&id)
                .ok_or_else(|| ApiError::new("tab_not_found", format!("tab {id} not found")))?;
            st.remove_tab(wi, ti);
            exec.dirty = true;
            Ok(Some(json!({"type": "ok"})))
        }
        Cmd::WorkspaceCreate {
            cwd,
            label,
            env: envs,
            focus,
        } => {
            let cwd = cwd.or_else(|| env.cwd.clone());
            let wi = st.create_workspace(label, cwd);
            st.workspaces[wi].tabs[0].panes[0].env = envs;
            st.workspaces[wi].tabs[0].panes[0].shell_ready_at_ms = shell_ready_at(&env.settings);
            if focus {
                st.focus((wi, 0, 0));
            }
            exec.dirty = true;
            Ok(Some(json!({
                "workspace": st.workspace_info(wi),
                "tab": st.tab_info(wi, 0),
                "root_pane": st.pane_info((wi, 0, 0)),
                "type": "workspace_created",
            })))
        }
    }
}

/// When a pane created now has a ready shell (None: at once).
fn shell_ready_at(settings: &Settings) -> Option<u64> {
    (settings.shell_start_ms > 0).then(|| now_ms() + settings.shell_start_ms)
}

/// The UI-focused pane of the active workspace.
fn focused_pane(st: &State) -> Option<Loc> {
    let wi = st.find_workspace(st.active_workspace.as_deref()?)?;
    let w = &st.workspaces[wi];
    let ti = w
        .active_tab
        .as_deref()
        .and_then(|t| w.tabs.iter().position(|x| x.id == t))
        .unwrap_or(0);
    let t = w.tabs.get(ti)?;
    let pi = t
        .focused_pane
        .as_deref()
        .and_then(|p| t.panes.iter().position(|x| x.id == p))
        .unwrap_or(0);
    t.panes.get(pi).map(|_| (wi, ti, pi))
}
