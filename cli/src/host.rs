//! The host registry: one descriptor per agent host Link wires, holding the wiring facts (its
//! name and title, its hook input's keys and shell tool, how its hook denies, the variable
//! doctor knows it by, whether its server needs the library's variables forwarded), beside the
//! library's model-facing descriptor ([`McpHost`], `src/presentation/hosts.rs`: tool naming,
//! send form). `setup`, `guard`, `doctor`, `mcp --host`, the plugin actions and the host lists
//! in messages read it; the usage texts and `herdr-plugin.toml` are checked against it
//! (`registry_tests.rs`).
//!
//! Adding a host: its row in the library's `MCP_HOSTS` (an MCP host) and its [`Descriptor`]
//! here, each keyed by a new variant; its setup plan (the compiler asks for it in
//! `setup::plan`, and for doctor's `setup::registrations`); its `setup-`/`uninstall-` actions
//! in `herdr-plugin.toml` and its name in the usage texts (the registry test says which are
//! missing); and its tests.

use herdr_link::guard::SendForm;
use herdr_link::presentation::{McpHost, MCP_SERVER_NAME};

/// An agent host Link wires; its facts are its [`Descriptor`] in [`HOSTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// OpenCode.
    OpenCode,
    /// Gemini CLI.
    Gemini,
    /// Qwen Code.
    Qwen,
    /// GitHub Copilot CLI.
    Copilot,
    /// Factory Droid.
    Droid,
    /// Cline.
    Cline,
    /// Kimi Code.
    Kimi,
    /// Pi.
    Pi,
}

/// How a host's pre-tool hook input carries a shell call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookInput {
    /// The hook event setup registers the guard on.
    pub event: &'static str,
    /// The key of the session id.
    pub session: &'static str,
    /// The object holding the call, when not the input itself (Cline: `preToolUse`).
    pub call: Option<&'static str>,
    /// The key of the tool name.
    pub tool: &'static str,
    /// The shell tool's name (what setup's matcher names too).
    pub shell: &'static str,
    /// The key of the arguments object.
    pub args: &'static str,
    /// Whether the arguments may come as JSON text (Copilot CLI's older versions).
    pub args_as_text: bool,
    /// The key of the command in the arguments.
    pub command: &'static str,
    /// Whether that is a list of commands, as a list or as JSON text (Cline's `commands`).
    pub command_list: bool,
}

/// How a host's hook denies a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deny {
    /// Exit status 2, the reason on stderr.
    Exit2,
    /// Copilot CLI: `{"permissionDecision":"deny","permissionDecisionReason":R}` on stdout.
    CopilotJson,
    /// Cline: `{"overrideInput":{"commands":[FAILING]},"contextModification":R}` on stdout.
    ClineOverride,
}

/// A host's guard hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hook {
    /// Its input.
    pub input: HookInput,
    /// Its deny convention.
    pub deny: Deny,
    /// Whether the hook grants Link's own MCP tools (Copilot CLI, whose default mode has no
    /// user setting for it; Droid, whose default mode "Auto (Off)" asks before every MCP tool
    /// not annotated read-only).
    pub grants_link_tools: bool,
    /// Whether the host gives its MCP server the same session id as its hook (Claude Code), so
    /// the hook asks the server about that session; elsewhere an id in the server's
    /// environment (leaked from an outer Claude Code) means nothing.
    pub server_knows_session: bool,
}

/// One host's wiring facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// The host.
    pub host: Host,
    /// Its name in `setup`, `guard --host`, `mcp --host` and the plugin actions.
    pub name: &'static str,
    /// How messages name it.
    pub title: &'static str,
    /// The library's model-facing descriptor (`None`: not an MCP host; Pi loads the library).
    pub mcp: Option<McpHost>,
    /// Its guard hook (`None`: the guard is in its extension).
    pub hook: Option<Hook>,
    /// The variable (and value) it sets for its shell commands, by which doctor recognises it.
    pub doctor_marker: Option<(&'static str, &'static str)>,
    /// Whether it starts the MCP server with a clean environment, so setup forwards every
    /// variable the library reads (`herdr_link::env::passed_variables`).
    pub forwards_variables: bool,
}

/// A hook with `input` denying `deny`'s way (granting nothing, asking no session).
const fn hook(input: HookInput, deny: Deny) -> Hook {
    Hook {
        input,
        deny,
        grants_link_tools: false,
        server_knows_session: false,
    }
}

/// A hook input whose shell call is `{tool: shell, args: {command: …}}` with the session id
/// at `session`.
const fn input(
    event: &'static str,
    session: &'static str,
    tool: &'static str,
    shell: &'static str,
    args: &'static str,
) -> HookInput {
    HookInput {
        event,
        session,
        call: None,
        tool,
        shell,
        args,
        args_as_text: false,
        command: "command",
        command_list: false,
    }
}

/// A Claude-Code-shaped hook on `event` with shell tool `shell`, denying with exit status 2.
const fn claude_like(event: &'static str, shell: &'static str) -> Hook {
    hook(
        input(event, "session_id", "tool_name", shell, "tool_input"),
        Deny::Exit2,
    )
}

/// An MCP host with a guard hook, no doctor marker, and its own environment passed on.
const fn wired(
    host: Host,
    name: &'static str,
    title: &'static str,
    mcp: McpHost,
    hook: Hook,
) -> Descriptor {
    Descriptor {
        host,
        name,
        title,
        mcp: Some(mcp),
        hook: Some(hook),
        doctor_marker: None,
        forwards_variables: false,
    }
}

/// Every host, in the order usage texts and plugin actions list them.
pub const HOSTS: &[Descriptor] = &[
    wired(
        Host::Claude,
        "claude",
        "Claude Code",
        McpHost::Claude,
        Hook {
            server_knows_session: true,
            ..claude_like("PreToolUse", "Bash")
        },
    ),
    Descriptor {
        forwards_variables: true,
        ..wired(
            Host::Codex,
            "codex",
            "Codex",
            McpHost::Codex,
            claude_like("PreToolUse", "Bash"),
        )
    },
    // The OpenCode MCP-route plugin's input: `{"tool":"bash","sessionID":…,"args":{…}}`.
    wired(
        Host::OpenCode,
        "opencode",
        "OpenCode",
        McpHost::OpenCode,
        hook(
            input("tool.execute.before", "sessionID", "tool", "bash", "args"),
            Deny::Exit2,
        ),
    ),
    Descriptor {
        doctor_marker: Some(("GEMINI_CLI", "1")),
        ..wired(
            Host::Gemini,
            "gemini",
            "Gemini CLI",
            McpHost::Gemini,
            claude_like("BeforeTool", "run_shell_command"),
        )
    },
    Descriptor {
        doctor_marker: Some(("QWEN_CODE", "1")),
        ..wired(
            Host::Qwen,
            "qwen",
            "Qwen Code",
            McpHost::Qwen,
            claude_like("PreToolUse", "run_shell_command"),
        )
    },
    // Copilot CLI's exit 2 drops the reason: it gets its JSON answer; older versions send
    // `toolArgs` as JSON text.
    Descriptor {
        doctor_marker: Some(("COPILOT_CLI", "1")),
        ..wired(
            Host::Copilot,
            "copilot",
            "Copilot CLI",
            McpHost::Copilot,
            Hook {
                grants_link_tools: true,
                ..hook(
                    HookInput {
                        args_as_text: true,
                        ..input("preToolUse", "sessionId", "toolName", "bash", "toolArgs")
                    },
                    Deny::CopilotJson,
                )
            },
        )
    },
    // Droid asks before every MCP tool not annotated read-only in its default mode: the hook
    // grants Link's own.
    wired(
        Host::Droid,
        "droid",
        "Droid",
        McpHost::Droid,
        Hook {
            grants_link_tools: true,
            ..claude_like("PreToolUse", "Execute")
        },
    ),
    // Cline nests the call under `preToolUse` and sends a list of commands; its exit status
    // never blocks and its `cancel` ends the whole run: the commands are replaced by one that
    // fails with the reason.
    wired(
        Host::Cline,
        "cline",
        "Cline",
        McpHost::Cline,
        hook(
            HookInput {
                call: Some("preToolUse"),
                command: "commands",
                command_list: true,
                ..input(
                    "PreToolUse",
                    "taskId",
                    "toolName",
                    "run_commands",
                    "parameters",
                )
            },
            Deny::ClineOverride,
        ),
    ),
    wired(
        Host::Kimi,
        "kimi",
        "Kimi Code",
        McpHost::Kimi,
        claude_like("PreToolUse", "Bash"),
    ),
    // Pi loads the library in-process: its extension carries the guard.
    Descriptor {
        host: Host::Pi,
        name: "pi",
        title: "Pi",
        mcp: None,
        hook: None,
        doctor_marker: None,
        forwards_variables: false,
    },
];

impl Host {
    /// This host's descriptor.
    pub fn descriptor(self) -> &'static Descriptor {
        HOSTS
            .iter()
            .find(|d| d.host == self)
            .expect("every host has a descriptor in HOSTS")
    }

    /// The host named `name`.
    pub fn parse(name: &str) -> Option<Host> {
        HOSTS.iter().find(|d| d.name == name).map(|d| d.host)
    }

    /// Its name (`setup`'s, `guard --host`'s).
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// Its guard hook; `None` for a host whose guard is not a hook (Pi).
    pub fn hook(self) -> Option<&'static Hook> {
        self.descriptor().hook.as_ref()
    }

    /// How the model sends a message in this host, for the guard's block reason: the library's
    /// word for its MCP form.
    pub fn send_form(self) -> SendForm {
        self.descriptor()
            .mcp
            .map_or(SendForm::Tool, McpHost::send_form)
    }

    /// The prefix of the names this host gives the `herdr_link` server's tools, when it names
    /// them by joining (Copilot CLI: `herdr_link-`).
    pub fn link_tool_prefix(self) -> Option<String> {
        self.descriptor()
            .mcp
            .and_then(|m| m.tool_name(MCP_SERVER_NAME, ""))
    }
}

/// The names of the hosts `keep` selects, for messages: `a, b or c`.
pub fn names(keep: impl Fn(&Descriptor) -> bool) -> String {
    or_list(HOSTS.iter().filter(|d| keep(d)).map(|d| d.name))
}

/// `a, b or c`.
pub fn or_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Whether the host has a guard hook (`guard --host` takes it).
pub fn has_hook(d: &Descriptor) -> bool {
    d.hook.is_some()
}
