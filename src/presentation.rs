//! The model-visible surface for every host: each tool's name, description and JSON Schema, and
//! the Contract text, per presentation style (PROTOCOL §4.6, §6). Hosts take tool definitions
//! from here and nowhere else. Pure: the caller says whether the gate is open and the session
//! active.

mod hosts;
mod tier1;

use serde_json::{json, Value};

use crate::ops::OPERATIONS;
use crate::protocol::{ACTIVATE, CONTRACT, GATEWAY, TOOL_CLOSE, TOOL_PEERS, TOOL_SEND, TOOL_START};
pub use hosts::{ClientName, McpHost, McpHostForm, ToolNames, MCP_HOSTS};
use tier1::{action_reference, tools as tier1};
pub use tier1::{result_example, Tool};

/// How a host shows Link to its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// True deferred tools (Pi): five registered tools, Tier 1 enabled on activation.
    Deferred,
    /// Single-gateway dispatch (OpenCode): one `herdr_link` tool with `action`.
    Gateway,
    /// Shared MCP (Claude Code, Codex, AGY): listChanged first, gateway dispatch as fallback.
    Mcp,
}

impl Style {
    /// Parses `deferred` | `gateway` | `mcp`.
    pub fn parse(s: &str) -> Option<Style> {
        match s {
            "deferred" => Some(Style::Deferred),
            "gateway" => Some(Style::Gateway),
            "mcp" => Some(Style::Mcp),
            _ => None,
        }
    }

    /// How a model sends a message in this style, for the Bash guard's block reason: the
    /// `herdr_link_send` tool (deferred), the gateway's `send` action (single gateway), or
    /// either (MCP hosts show Tier 1 late or never).
    pub fn send_form(self) -> crate::guard::SendForm {
        match self {
            Style::Deferred => crate::guard::SendForm::Tool,
            Style::Gateway => crate::guard::SendForm::GatewayAction,
            Style::Mcp => crate::guard::SendForm::Either,
        }
    }

    /// Whether the gateway of this style dispatches actions (§4.1: only the single-gateway style
    /// and the MCP fallback offer dispatch; in the deferred style the gateway only activates).
    pub fn dispatches(self) -> bool {
        !matches!(self, Style::Deferred)
    }
}

/// Which state to present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The environment gate is closed: nothing at all.
    Outside,
    /// A dormant session.
    Dormant,
    /// An active session.
    Active,
}

/// Host hints of the deferred style: a UI label, a one-line prompt snippet for the gateway, and
/// whether calls must run one at a time (an operation that runs alone: a batch holding a close
/// runs sequentially).
fn deferred_hints(name: &str) -> (String, Option<String>, bool) {
    match crate::ops::by_tool(name) {
        Some(op) => (
            format!("Herdr Link {}", sentence(op.action)),
            None,
            op.runs_alone,
        ),
        None => {
            let actions: Vec<&str> = OPERATIONS.into_iter().map(|op| op.action).collect();
            let snippet = format!(
                "Herdr Link: activate the channel to the other agents of this Herdr workspace ({}).",
                actions.join(", ")
            );
            ("Herdr Link".to_string(), Some(snippet), false)
        }
    }
}

impl Tool {
    /// As `{"name","description","input_schema"}`.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "description": self.description, "input_schema": self.input_schema})
    }

    /// The deferred style's entry: the definition plus `label`, `sequential` and (gateway only)
    /// `prompt_snippet`, so host glue needs no tool-specific knowledge.
    fn to_deferred_json(&self) -> Value {
        let (label, snippet, sequential) = deferred_hints(self.name);
        let mut v = self.to_json();
        v["label"] = json!(label);
        v["sequential"] = json!(sequential);
        if let Some(s) = snippet {
            v["prompt_snippet"] = json!(s);
        }
        v
    }
}

/// Appended to every MCP Tier 1 description and to the active MCP gateway.
pub const NORMAL_MESSAGING_RULE: &str =
    "For normal inter-agent messaging use Herdr Link, not the raw Herdr CLI, pane ids or terminal input.";

const WHEN: &str = "Use it only when the user explicitly asks to use Herdr or when handling an inbound Herdr Link message (a text whose first line begins with [herdr-link/1]).";

fn deferred_gateway() -> Tool {
    Tool {
        name: GATEWAY,
        description: format!(
            "Herdr Link gateway: the channel to the other agents of this Herdr workspace. {WHEN} Call it once with empty arguments {{}} to activate Herdr Link for this session; that enables {}.",
            tier1_list()
        ),
        input_schema: json!({"type": "object", "properties": {}}),
    }
}

/// The Tier 1 tool names, in the order of the operation table.
fn tier1_names() -> impl Iterator<Item = &'static str> {
    OPERATIONS.into_iter().map(|op| op.tool)
}

fn tier1_list() -> String {
    series(tier1_names(), "and")
}

/// `items` as a sentence lists them: `a, b, c or d`, with `conjunction` before the last.
pub fn series<'a>(items: impl IntoIterator<Item = &'a str>, conjunction: &str) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} {conjunction} {last}", rest.join(", ")),
    }
}

/// How a dispatching gateway runs an action, for both dispatching styles.
const DISPATCH_FORM: &str = "call it with {\"action\": <action>, \"arguments\": {...}}; each action takes exactly the input of the tool it names and returns that tool's result; a failed call returns the text CODE: reason. The actions:";

/// The input schema of both dispatching gateways: an action and its arguments (§6), the same
/// while dormant and once active, so it never carries a Tier 1 schema. The actions are every
/// operation's, after [`ACTIVATE`] where the gateway takes it.
fn dispatch_schema(activate: bool) -> Value {
    let ops = OPERATIONS.into_iter().map(|op| op.action);
    let actions: Vec<&str> = activate
        .then_some(ACTIVATE)
        .into_iter()
        .chain(ops)
        .collect();
    json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": actions,
                "description": "Capability to run once active; omit it (call with {}) to activate."
            },
            "arguments": {
                "type": "object",
                "description": "The action's arguments."
            }
        }
    })
}

/// The MCP gateway. Dormant (`None`) it only says how to activate (§3: no Tier 1 schema or
/// rule while dormant); active (`Some`) its description ends with the Contract and the MCP
/// appendix, which carries every action with its arguments, naming the tools as the host shows
/// them.
fn mcp_gateway(active: Option<&McpNaming>) -> Tool {
    let head = format!(
        "Herdr Link gateway: the channel to the other agents of this Herdr workspace. {WHEN}"
    );
    let description = match active {
        None => format!(
            "{head} Call it once with {{}} to activate Herdr Link for this session; its result gives the rules and every action with its arguments."
        ),
        // Once active the gateway also carries the Contract (+ MCP appendix): durable where
        // the host refreshes its tools, while the activation result is the one channel every
        // host shows at the activating step.
        Some(naming) => format!(
            "{head} Herdr Link is active for this session: call it with an action as described below, or with {{}} to see these rules again. {NORMAL_MESSAGING_RULE}\n\n{}",
            mcp_contract(naming)
        ),
    };
    Tool {
        name: GATEWAY,
        description,
        input_schema: dispatch_schema(true),
    }
}

/// The single-gateway dispatcher: tiny in every state (§6: an action and an arguments object).
/// The per-action semantics reach the model with the Contract once the session is active.
fn dispatcher() -> Tool {
    Tool {
        name: GATEWAY,
        description: format!(
            "Herdr Link (herdr-link/1): the channel to the other agents of this Herdr workspace. {WHEN} Call it once with {{}} to activate it for this session; the actions and how to use them come with the activation."
        ),
        input_schema: dispatch_schema(false),
    }
}

/// Where the rules name a Tier 1 tool, the gateway action to call instead (every operation: a
/// test checks).
fn rules_onto_actions(gateway: &str) -> String {
    format!(
        "where the rules above name {TOOL_START}, {TOOL_SEND}, {TOOL_PEERS} or {TOOL_CLOSE}, call {gateway} with action start, send, peers or close."
    )
}

/// The appendix the single-gateway style adds to the Contract: the full semantics and argument
/// schema of every action, generated from the Tier 1 definitions (§4.6: the rules mapped
/// completely onto the gateway actions).
fn gateway_appendix() -> String {
    format!(
        "In this runtime every active capability goes through the single {GATEWAY} gateway tool: {DISPATCH_FORM}{}\n{}",
        action_reference(),
        sentence(&rules_onto_actions(GATEWAY))
    )
}

/// `text` with its first letter capitalized, to begin a sentence.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_ascii_uppercase().to_string() + chars.as_str()
    })
}

/// The name MCP hosts are told to register the server under (docs/mcp.md).
pub const MCP_SERVER_NAME: &str = "herdr_link";

/// How an MCP host names the server's tools: the host's form and the name the server is
/// registered under there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpNaming {
    /// The host's form.
    pub host: McpHost,
    /// The registration name (the host-side key), `herdr_link` unless configured otherwise.
    pub server: String,
}

impl Default for McpNaming {
    /// An unknown host and the documented registration name.
    fn default() -> Self {
        McpNaming {
            host: McpHost::Other,
            server: MCP_SERVER_NAME.to_string(),
        }
    }
}

impl McpNaming {
    /// Whether `server` can be a registration name: 1 to 64 ASCII letters, digits, `_` or `-`.
    pub fn server_name_ok(server: &str) -> bool {
        (1..=64).contains(&server.len())
            && server
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    /// The name under which the model sees the canonical tool `tool`, where the host gives it
    /// one name of its own.
    fn shown(&self, tool: &str) -> Option<String> {
        self.host.tool_name(&self.server, tool)
    }

    /// How the model finds the gateway in this host.
    fn gateway(&self) -> String {
        self.host.gateway(&self.server)
    }
}

/// The appendix the MCP style adds to the Contract: the dormant/active behaviour, the names
/// under which this host shows the tools (§4.6), from the host's form and the registration
/// name, and every action of the gateway with its arguments and result, generated from the
/// Tier 1 definitions: for hosts that never show the tools `list_changed` announces, the
/// gateway is the whole surface (§6).
pub fn mcp_appendix(naming: &McpNaming) -> String {
    let gw = naming.gateway();
    let s = &naming.server;
    let mut text = format!(
        "Herdr Link starts dormant: only {gw} is listed. Call it once with {{}}; the host then receives notifications/tools/list_changed. "
    );
    match (naming.host.form().tool_names, naming.host.form().shows_announced_tools) {
        (ToolNames::Joined { .. }, true) => {
            text.push_str(
                "The tools are presented under this host's names for the server (the canonical name is always the suffix):",
            );
            for t in tier1_names() {
                let shown = naming.shown(t).unwrap_or_default();
                text.push_str(&format!("\n- {t} -> {shown}"));
            }
            text.push_str(&format!(
                "\nIf the host did not refresh its tools, keep dispatching through {gw}: {}",
                rules_onto_actions(&gw)
            ));
        }
        (ToolNames::Namespace, _) => text.push_str(&format!(
            "In this host the tools sit in the namespace mcp__{s} under their canonical names. It does not show the tools that notifications/tools/list_changed announces, so use {GATEWAY}'s actions for every capability: {} Should the namespace list them, they may be called directly.",
            rules_onto_actions(GATEWAY)
        )),
        (ToolNames::Joined { .. }, false) => text.push_str(&format!(
            "In this host the gateway is {gw}. It does not show the tools that notifications/tools/list_changed announces, so use {GATEWAY}'s actions for every capability: where the rules above name {TOOL_START}, {TOOL_SEND}, {TOOL_PEERS} or {TOOL_CLOSE}, call {gw} with action start, send, peers or close. Should the host list them (as {} and so on), they may be called directly.",
            naming.shown(TOOL_SEND).unwrap_or_default()
        )),
        (ToolNames::CallWrapper, _) => text.push_str(&format!(
            "In this host every tool is called through call_mcp_tool with ServerName \"{s}\", ToolName the canonical name ({GATEWAY}, {}) and Arguments the tool's input object. If the host did not refresh its tools, keep dispatching through {GATEWAY}: {}",
            tier1_list(),
            rules_onto_actions(GATEWAY)
        )),
        (ToolNames::Unknown, _) => text.push_str(&format!(
            "The host shows the tools under its own names for the MCP server \"{s}\" (for example mcp__{s}__{TOOL_SEND} or {s}_{TOOL_SEND}); the canonical name the rules above use ({GATEWAY}, {}) is always the last part of the name shown. If the host did not refresh its tools, keep dispatching through {gw}: {}",
            tier1_list(),
            rules_onto_actions(&gw)
        )),
    }
    text.push_str(&format!(
        "\nEvery capability is an action of {gw}: {DISPATCH_FORM}{}",
        action_reference()
    ));
    text
}

/// The MCP style's tools for `view`, with the Contract in the active gateway's description
/// naming the tools as `naming` says.
pub fn mcp_tools(view: View, naming: &McpNaming) -> Vec<Tool> {
    let active = match view {
        View::Outside => return Vec::new(),
        View::Dormant => false,
        View::Active => true,
    };
    let mut all = vec![mcp_gateway(active.then_some(naming))];
    if active {
        all.extend(tier1().into_iter().map(|mut t| {
            t.description = format!("{} {NORMAL_MESSAGING_RULE}", t.description);
            t
        }));
    }
    all
}

/// The MCP style's Contract: the verbatim Contract, a blank line, the MCP appendix for `naming`.
pub fn mcp_contract(naming: &McpNaming) -> String {
    format!("{CONTRACT}\n\n{}", mcp_appendix(naming))
}

/// The tools a host shows for `style` in `view`; with `catalog`, every tool the style can ever
/// show (for hosts that must register everything up front), unless the gate is closed.
pub fn tools(style: Style, view: View, catalog: bool) -> Vec<Tool> {
    let active = match view {
        View::Outside => return Vec::new(),
        View::Dormant => catalog,
        View::Active => true,
    };
    match style {
        Style::Deferred => {
            let mut all = vec![deferred_gateway()];
            if active {
                all.extend(tier1());
            }
            all
        }
        Style::Gateway => vec![dispatcher()],
        Style::Mcp => {
            let view = if active { View::Active } else { View::Dormant };
            mcp_tools(view, &McpNaming::default())
        }
    }
}

/// The Contract text a host injects, or `None` while dormant (or outside Herdr).
pub fn contract(style: Style, view: View) -> Option<String> {
    if view != View::Active {
        return None;
    }
    Some(match style {
        Style::Deferred => CONTRACT.to_string(),
        Style::Gateway => format!("{CONTRACT}\n\n{}", gateway_appendix()),
        Style::Mcp => mcp_contract(&McpNaming::default()),
    })
}

/// The whole presentation document `{"tools":[...],"contract":...}`.
pub fn document(style: Style, view: View, catalog: bool) -> Value {
    let render = match style {
        Style::Deferred => Tool::to_deferred_json,
        _ => Tool::to_json,
    };
    let tools: Vec<Value> = tools(style, view, catalog).iter().map(render).collect();
    json!({"tools": tools, "contract": contract(style, view)})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{MAX_MESSAGE_CHARS, MAX_START_ARGS};
    use crate::protocol::START_DESCRIPTION;

    #[test]
    fn the_rules_map_every_operation_onto_its_action() {
        let text = rules_onto_actions("gw");
        for op in OPERATIONS {
            assert!(text.contains(op.tool), "{}: {text}", op.tool);
            assert!(text.contains(&format!(" {}", op.action)), "{}", op.action);
        }
        assert!(
            gateway_appendix().ends_with(&format!("\n{}", sentence(&rules_onto_actions(GATEWAY))))
        );
        assert_eq!(sentence("where"), "Where");
        assert_eq!(series(["a"], "or"), "a");
        assert_eq!(series(["a", "b", "c"], "or"), "a, b or c");
    }

    /// The Tier 1 definition of `name`.
    fn tier1_tool(name: &str) -> Tool {
        tier1().into_iter().find(|t| t.name == name).unwrap()
    }

    /// The input fields a tool's schema declares.
    fn property_keys(tool: &Tool) -> Vec<String> {
        tool.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    fn names(style: Style, view: View, catalog: bool) -> Vec<&'static str> {
        tools(style, view, catalog).iter().map(|t| t.name).collect()
    }

    #[test]
    fn surfaces_per_state() {
        for s in [Style::Deferred, Style::Gateway, Style::Mcp] {
            assert!(tools(s, View::Outside, true).is_empty());
            assert_eq!(contract(s, View::Dormant), None);
            assert!(contract(s, View::Active).unwrap().starts_with(CONTRACT));
        }
        assert_eq!(names(Style::Deferred, View::Dormant, false), [GATEWAY]);
        assert_eq!(
            names(Style::Deferred, View::Active, false),
            [GATEWAY, TOOL_START, TOOL_PEERS, TOOL_SEND, TOOL_CLOSE]
        );
        assert_eq!(names(Style::Deferred, View::Dormant, true).len(), 5);
        assert_eq!(names(Style::Gateway, View::Active, false), [GATEWAY]);
        assert_eq!(names(Style::Mcp, View::Dormant, false), [GATEWAY]);
        assert_eq!(names(Style::Mcp, View::Active, false).len(), 5);
        assert_eq!(contract(Style::Deferred, View::Active).unwrap(), CONTRACT);
    }

    #[test]
    fn descriptions_carry_the_rules() {
        let dormant = &tools(Style::Mcp, View::Dormant, false)[0];
        assert!(!dormant.description.contains(NORMAL_MESSAGING_RULE));
        assert!(!dormant.description.contains(CONTRACT));
        let active = tools(Style::Mcp, View::Active, false);
        for t in &active[1..] {
            assert!(t.description.ends_with(NORMAL_MESSAGING_RULE), "{}", t.name);
            assert!(!t.description.contains(CONTRACT), "{}", t.name);
        }
        // The active gateway: the rule, then the Contract with the MCP appendix.
        let gw = &active[0].description;
        let rule_then_contract = format!(
            "{NORMAL_MESSAGING_RULE}\n\n{}",
            contract(Style::Mcp, View::Active).unwrap()
        );
        assert!(gw.ends_with(&rule_then_contract), "{gw}");
        let close = tier1_tool(TOOL_CLOSE).description;
        for f in [
            "later tool step",
            "caller owns the lifecycle decision",
            "Closing sends no message",
        ] {
            assert!(close.contains(f));
        }
        for t in tools(Style::Deferred, View::Active, false)
            .into_iter()
            .chain(tools(Style::Gateway, View::Active, false))
            .chain(tools(Style::Mcp, View::Active, false))
        {
            let lower = t.description.to_lowercase();
            assert!(!lower.contains("final message") && !lower.contains("send first"));
        }
        assert!(tier1_tool(TOOL_START)
            .description
            .starts_with(START_DESCRIPTION));
        let send = tier1_tool(TOOL_SEND).input_schema;
        let keys: Vec<_> = send["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["to", "message"]);
        assert!(tier1_tool(TOOL_START).input_schema["properties"]
            .get("pane")
            .is_none());
        let gw = contract(Style::Gateway, View::Active).unwrap();
        assert!(gw.contains("single herdr_link gateway"));
        let mcp = contract(Style::Mcp, View::Active).unwrap();
        assert_eq!(mcp, mcp_contract(&McpNaming::default()));
    }

    fn naming(host: McpHost, server: &str) -> McpNaming {
        McpNaming {
            host,
            server: server.into(),
        }
    }

    #[test]
    fn the_mcp_appendix_names_the_tools_as_each_host_shows_them() {
        for server in ["herdr_link", "link2"] {
            let claude = mcp_appendix(&naming(McpHost::Claude, server));
            let opencode = mcp_appendix(&naming(McpHost::OpenCode, server));
            for t in tier1_names() {
                assert!(
                    claude.contains(&format!("- {t} -> mcp__{server}__{t}")),
                    "{claude}"
                );
                assert!(
                    opencode.contains(&format!("- {t} -> {server}_{t}")),
                    "{opencode}"
                );
                assert!(!opencode.contains("mcp__"), "{opencode}");
            }
            assert!(claude.contains(&format!("only mcp__{server}__herdr_link is listed")));
            assert!(opencode.contains(&format!("only {server}_herdr_link is listed")));

            // Codex: a namespace, the gateway's actions, never a prefixed Tier 1 name.
            let codex = mcp_appendix(&naming(McpHost::Codex, server));
            assert!(
                codex.contains(&format!("namespace mcp__{server}")),
                "{codex}"
            );
            assert!(codex.contains("call herdr_link with action start, send, peers or close"));
            assert!(!codex.contains(&format!("mcp__{server}__")), "{codex}");

            // Gemini CLI: one underscore each side, and Tier 1 listed (it refreshes its tools).
            let gemini = mcp_appendix(&naming(McpHost::Gemini, server));
            for t in tier1_names() {
                assert!(
                    gemini.contains(&format!("- {t} -> mcp_{server}_{t}")),
                    "{gemini}"
                );
            }
            assert!(gemini.contains(&format!("only mcp_{server}_herdr_link is listed")));
            assert!(!gemini.contains("mcp__"), "{gemini}");

            // Qwen Code: Claude Code's form, but the gateway's actions for every capability.
            let qwen = mcp_appendix(&naming(McpHost::Qwen, server));
            assert!(qwen.contains(&format!("only mcp__{server}__herdr_link is listed")));
            assert!(qwen.contains(&format!(
                "call mcp__{server}__herdr_link with action start, send, peers or close"
            )));
            assert!(!qwen.contains(" -> "), "{qwen}");

            // Copilot CLI (`-`) and Droid (`___`) list Tier 1; Cline (`__`, no prefix) and Kimi
            // Code (Claude Code's form) dispatch everything through the gateway.
            for (host, sep) in [(McpHost::Copilot, "-"), (McpHost::Droid, "___")] {
                let text = mcp_appendix(&naming(host, server));
                for t in tier1_names() {
                    assert!(
                        text.contains(&format!("- {t} -> {server}{sep}{t}")),
                        "{text}"
                    );
                }
                assert!(text.contains(&format!("only {server}{sep}herdr_link is listed")));
            }
            for (host, gw) in [
                (McpHost::Cline, format!("{server}__herdr_link")),
                (McpHost::Kimi, format!("mcp__{server}__herdr_link")),
            ] {
                let text = mcp_appendix(&naming(host, server));
                assert!(text.contains(&format!(
                    "call {gw} with action start, send, peers or close"
                )));
                assert!(!text.contains(" -> "), "{text}");
                if host == McpHost::Cline {
                    assert!(!text.contains("mcp__"), "{text}");
                }
            }

            let agy = mcp_appendix(&naming(McpHost::Agy, server));
            assert!(agy.contains(&format!("call_mcp_tool with ServerName \"{server}\"")));
            assert!(!agy.contains(&format!("mcp__{server}__")), "{agy}");

            // An unknown host: no claim that the names are prefixed one way.
            let other = mcp_appendix(&naming(McpHost::Other, server));
            assert!(!other.contains(" -> "), "{other}");
            assert!(other.contains(&format!("MCP server \"{server}\"")));
            assert!(other.contains("always the last part"));
        }
        // The active gateway carries the Contract with the host's appendix.
        let n = naming(McpHost::Codex, "hl");
        let active = mcp_tools(View::Active, &n);
        assert!(active[0].description.ends_with(&mcp_contract(&n)));
        assert!(mcp_contract(&n).starts_with(&format!("{CONTRACT}\n\n")));
        assert_eq!(
            mcp_tools(View::Dormant, &n),
            tools(Style::Mcp, View::Dormant, false)
        );
        assert!(mcp_tools(View::Outside, &n).is_empty());
    }

    #[test]
    fn mcp_hosts_from_flags_and_client_names() {
        for (flag, host) in [
            ("claude", McpHost::Claude),
            ("codex", McpHost::Codex),
            ("opencode", McpHost::OpenCode),
            ("agy", McpHost::Agy),
            ("gemini", McpHost::Gemini),
            ("qwen", McpHost::Qwen),
            ("copilot", McpHost::Copilot),
            ("droid", McpHost::Droid),
            ("cline", McpHost::Cline),
            ("kimi", McpHost::Kimi),
        ] {
            assert_eq!(McpHost::parse(flag), Some(host));
        }
        assert_eq!(McpHost::parse("vim"), None);
        for (client, host) in [
            ("Claude Code", McpHost::Claude),
            ("claude-code", McpHost::Claude),
            ("codex-mcp-client", McpHost::Codex),
            ("opencode", McpHost::OpenCode),
            ("Antigravity", McpHost::Agy),
            ("gemini-cli-mcp-client", McpHost::Gemini),
            ("qwen-cli-mcp-client-herdr_link", McpHost::Qwen),
            ("gemini", McpHost::Other),
            ("mcp", McpHost::Other),
            ("raw-test", McpHost::Other),
            ("", McpHost::Other),
        ] {
            assert_eq!(McpHost::from_client_name(client), host, "{client}");
        }
        assert!(McpNaming::server_name_ok("herdr_link"));
        assert!(McpNaming::server_name_ok("link-2"));
        for bad in ["", "a b", "x/y", &"a".repeat(65)] {
            assert!(!McpNaming::server_name_ok(bad), "{bad}");
        }
    }

    #[test]
    fn deferred_hints_for_hosts() {
        let doc = document(Style::Deferred, View::Active, false);
        let tools = doc["tools"].as_array().unwrap();
        assert!(tools[0]["prompt_snippet"]
            .as_str()
            .unwrap()
            .contains("Herdr Link"));
        assert!(tools[1..].iter().all(|t| t.get("prompt_snippet").is_none()));
        let sequential: Vec<_> = tools
            .iter()
            .filter(|t| t["sequential"] == true)
            .map(|t| &t["name"])
            .collect();
        assert_eq!(sequential, [TOOL_CLOSE]);
        let labels: Vec<_> = tools.iter().map(|t| t["label"].as_str().unwrap()).collect();
        assert_eq!(
            labels,
            [
                "Herdr Link",
                "Herdr Link Start",
                "Herdr Link Peers",
                "Herdr Link Send",
                "Herdr Link Close"
            ]
        );
        assert_eq!(
            tools[0]["prompt_snippet"],
            "Herdr Link: activate the channel to the other agents of this Herdr workspace (start, peers, send, close)."
        );
        assert!(document(Style::Mcp, View::Active, false)["tools"][0]
            .get("label")
            .is_none());
    }

    #[test]
    fn dispatcher_is_tiny_and_the_contract_carries_the_actions() {
        let d = dispatcher();
        assert_eq!(property_keys(&d), ["action", "arguments"]);
        assert_eq!(tools(Style::Gateway, View::Dormant, false)[0], d);
        assert_eq!(tools(Style::Gateway, View::Active, false)[0], d);
        // No Tier 1 semantics while dormant: no tool description, no argument of an action.
        let dormant = d.to_json().to_string();
        for t in tier1() {
            assert!(!dormant.contains(&t.description), "{}", t.name);
        }
        for fragment in [
            "config_agent",
            "cwd",
            "\"agent\"",
            "\"to\"",
            "later tool step",
            "delivery only",
            "lifecycle",
        ] {
            assert!(!dormant.contains(fragment), "{fragment}");
        }
        // Active: the Contract's appendix gives every action's full description and arguments.
        let contract = contract(Style::Gateway, View::Active).unwrap();
        for t in tier1() {
            assert!(contract.contains(&t.description), "{}", t.name);
            for (key, p) in t.input_schema["properties"].as_object().unwrap() {
                let d = p["description"].as_str().unwrap();
                assert!(contract.contains(&format!("    {key} (")), "{key}");
                assert!(contract.contains(d), "{key}: {d}");
            }
        }
        assert!(contract.contains("\n    name (string, required): "));
        assert!(contract.contains(&format!(
            "\n    args (array of strings, optional, at most {MAX_START_ARGS} items): "
        )));
        assert!(contract.contains(&format!(
            "\n    message (string, required, at most {MAX_MESSAGE_CHARS} characters): "
        )));
        assert!(contract.contains("- action \"close\" (herdr_link_close): "));
    }

    /// Every naming the MCP server can use, plus the single-gateway style: the texts a model that
    /// only ever sees the gateway gets once active.
    fn gateway_only_texts() -> Vec<(String, String)> {
        let mut out = Vec::new();
        for host in MCP_HOSTS.iter().map(|f| f.host) {
            for server in ["herdr_link", "link2"] {
                let n = naming(host, server);
                out.push((format!("{host:?}/{server} contract"), mcp_contract(&n)));
                let active = mcp_tools(View::Active, &n);
                out.push((
                    format!("{host:?}/{server} active gateway"),
                    active[0].description.clone(),
                ));
            }
        }
        out.push((
            "single gateway contract".into(),
            contract(Style::Gateway, View::Active).unwrap(),
        ));
        out
    }

    /// The drift test: every field of every Tier 1 schema, with its type and whether it is
    /// required, every rule and the result (the tool's description) reach the model under the
    /// action's own entry, in every naming. Adding a field to a Tier 1 schema cannot forget the
    /// gateway.
    #[test]
    fn every_naming_carries_the_whole_tier1_surface() {
        for (what, text) in gateway_only_texts() {
            assert!(text.contains(CONTRACT), "{what}");
            for (op, tool) in OPERATIONS.into_iter().zip(tier1()) {
                let (action, name) = (op.action, op.tool);
                let head = format!("\n- action \"{action}\" ({name}): ");
                let at = text
                    .find(&head)
                    .unwrap_or_else(|| panic!("{what}: no entry for action {action}"));
                let entry = &text[at + head.len()..];
                let entry = &entry[..entry.find("\n- action ").unwrap_or(entry.len())];
                assert!(entry.starts_with(&tool.description), "{what} {action}");
                assert!(
                    entry.contains(&result_example(name).unwrap().to_string()),
                    "{what} {action}: no result"
                );
                let props = tool.input_schema["properties"].as_object().unwrap();
                for (key, p) in props {
                    let need = if tier1::is_required(&tool, key) {
                        "required"
                    } else {
                        "optional"
                    };
                    let line = format!("\n    {key} ({}, {need}", tier1::type_text(p));
                    assert!(entry.contains(&line), "{what} {action}: no `{line}`");
                    let d = p["description"].as_str().unwrap();
                    assert!(entry.contains(d), "{what} {action}.{key}: {d}");
                }
                if props.is_empty() {
                    assert!(entry.contains("Arguments: none."), "{what} {action}");
                }
            }
        }
        // The rules between the fields, as issue 32 names them, in the start and send entries.
        let reference = tier1::action_reference();
        for rule in [
            "exactly one launch source: config_agent",
            "kind and args together",
            "with and cwd never go together",
            "At most 128,000 bytes as the message envelope encodes it",
            "The caller owns the lifecycle decision",
            "Call it as a standalone later tool step",
        ] {
            assert!(reference.contains(rule), "{rule}");
        }
    }

    /// While dormant the MCP gateway carries no Tier 1 schema, rule or description (§3), in
    /// every naming: only how to activate.
    #[test]
    fn the_dormant_mcp_gateway_is_minimal() {
        for host in [McpHost::Claude, McpHost::Codex, McpHost::Other] {
            let dormant = &mcp_tools(View::Dormant, &naming(host, "herdr_link"))[0];
            let text = format!("{} {}", dormant.description, dormant.input_schema);
            for t in tier1() {
                assert!(!text.contains(t.name), "{host:?}: {}", t.name);
                for (key, p) in t.input_schema["properties"].as_object().unwrap() {
                    assert!(!text.contains(&format!("\"{key}\"")), "{host:?}: {key}");
                    assert!(!text.contains(&format!("    {key} (")), "{host:?}: {key}");
                    assert!(
                        !text.contains(p["description"].as_str().unwrap()),
                        "{host:?}: {key}"
                    );
                }
            }
            for fragment in [
                "config_agent",
                "cwd",
                "later tool step",
                "delivery only",
                "lifecycle",
                "list_changed",
                CONTRACT,
                NORMAL_MESSAGING_RULE,
            ] {
                assert!(!text.contains(fragment), "{host:?}: {fragment}");
            }
            assert_eq!(property_keys(dormant), ["action", "arguments"]);
            assert!(dormant.description.contains("Call it once with {}"));
        }
    }

    #[test]
    fn only_deferred_gateways_do_not_dispatch() {
        assert!(!Style::Deferred.dispatches());
        assert!(Style::Gateway.dispatches());
        assert!(Style::Mcp.dispatches());
    }
}
