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
    /// user setting for it).
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

/// A Claude-Code-shaped hook input on `event` with shell tool `shell`.
const fn claude_like(event: &'static str, shell: &'static str) -> Hook {
    Hook {
        input: HookInput {
            event,
            session: "session_id",
            call: None,
            tool: "tool_name",
            shell,
            args: "tool_input",
            args_as_text: false,
            command: "command",
            command_list: false,
        },
        deny: Deny::Exit2,
        grants_link_tools: false,
        server_knows_session: false,
    }
}

/// Every host, in the order usage texts and plugin actions list them.
pub const HOSTS: &[Descriptor] = &[
    Descriptor {
        host: Host::Claude,
        name: "claude",
        title: "Claude Code",
        mcp: Some(McpHost::Claude),
        hook: Some(Hook {
            server_knows_session: true,
            ..claude_like("PreToolUse", "Bash")
        }),
        doctor_marker: None,
        forwards_variables: false,
    },
    Descriptor {
        host: Host::Codex,
        name: "codex",
        title: "Codex",
        mcp: Some(McpHost::Codex),
        hook: Some(claude_like("PreToolUse", "Bash")),
        doctor_marker: None,
        forwards_variables: true,
    },
    // The OpenCode MCP-route plugin's input: `{"tool":"bash","sessionID":…,"args":{…}}`.
    Descriptor {
        host: Host::OpenCode,
        name: "opencode",
        title: "OpenCode",
        mcp: Some(McpHost::OpenCode),
        hook: Some(Hook {
            input: HookInput {
                event: "tool.execute.before",
                session: "sessionID",
                call: None,
                tool: "tool",
                shell: "bash",
                args: "args",
                args_as_text: false,
                command: "command",
                command_list: false,
            },
            deny: Deny::Exit2,
            grants_link_tools: false,
            server_knows_session: false,
        }),
        doctor_marker: None,
        forwards_variables: false,
    },
    Descriptor {
        host: Host::Gemini,
        name: "gemini",
        title: "Gemini CLI",
        mcp: Some(McpHost::Gemini),
        hook: Some(claude_like("BeforeTool", "run_shell_command")),
        doctor_marker: Some(("GEMINI_CLI", "1")),
        forwards_variables: false,
    },
    Descriptor {
        host: Host::Qwen,
        name: "qwen",
        title: "Qwen Code",
        mcp: Some(McpHost::Qwen),
        hook: Some(claude_like("PreToolUse", "run_shell_command")),
        doctor_marker: Some(("QWEN_CODE", "1")),
        forwards_variables: false,
    },
    // Copilot CLI's exit 2 drops the reason: it gets its JSON answer.
    Descriptor {
        host: Host::Copilot,
        name: "copilot",
        title: "Copilot CLI",
        mcp: Some(McpHost::Copilot),
        hook: Some(Hook {
            input: HookInput {
                event: "preToolUse",
                session: "sessionId",
                call: None,
                tool: "toolName",
                shell: "bash",
                args: "toolArgs",
                args_as_text: true,
                command: "command",
                command_list: false,
            },
            deny: Deny::CopilotJson,
            grants_link_tools: true,
            server_knows_session: false,
        }),
        doctor_marker: Some(("COPILOT_CLI", "1")),
        forwards_variables: false,
    },
    Descriptor {
        host: Host::Droid,
        name: "droid",
        title: "Droid",
        mcp: Some(McpHost::Droid),
        hook: Some(claude_like("PreToolUse", "Execute")),
        doctor_marker: None,
        forwards_variables: false,
    },
    // Cline's exit status never blocks and its `cancel` ends the whole run: the commands are
    // replaced by one that fails with the reason.
    Descriptor {
        host: Host::Cline,
        name: "cline",
        title: "Cline",
        mcp: Some(McpHost::Cline),
        hook: Some(Hook {
            input: HookInput {
                event: "PreToolUse",
                session: "taskId",
                call: Some("preToolUse"),
                tool: "toolName",
                shell: "run_commands",
                args: "parameters",
                args_as_text: false,
                command: "commands",
                command_list: true,
            },
            deny: Deny::ClineOverride,
            grants_link_tools: false,
            server_knows_session: false,
        }),
        doctor_marker: None,
        forwards_variables: false,
    },
    Descriptor {
        host: Host::Kimi,
        name: "kimi",
        title: "Kimi Code",
        mcp: Some(McpHost::Kimi),
        hook: Some(claude_like("PreToolUse", "Bash")),
        doctor_marker: None,
        forwards_variables: false,
    },
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
