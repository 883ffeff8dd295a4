//! The Tier 1 definitions (PROTOCOL §4.2–§4.5), the one source of every capability's input
//! schema, rules and result, and the text that maps them onto the gateway's actions for hosts
//! whose model only ever sees the gateway (§4.6, §6).

use serde_json::{json, Map, Value};

use crate::limits::{MAX_MESSAGE_BYTES, MAX_MESSAGE_CHARS, MAX_START_ARGS, MAX_START_ARGS_CHARS};
use crate::ops::{Operation, OPERATIONS};
use crate::protocol::{START_DESCRIPTION, TOOL_CLOSE, TOOL_PEERS, TOOL_SEND, TOOL_START};

/// One tool definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Canonical name.
    pub name: &'static str,
    /// Model-facing description.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: Value,
}

/// The Agent Name rule as the model reads it (`protocol::is_valid_agent_name`).
const AGENT_NAME_RULE: &str = crate::limits::agent_name_rule!();

const PEERS_DESCRIPTION: &str = "List the live, named agents of this Herdr workspace and their advisory state (idle, working, blocked, done, unknown). Use it only to discover or recover an address: a peer's state never proves that its work is complete.";

const SEND_DESCRIPTION: &str = "Send a Herdr Link message, or an ordinary reply, to an agent by its Agent Name. \"sent\" is delivery only: do not wait or poll for an answer; end this turn, and the reply arrives as an inbound Herdr Link message.";

const CLOSE_DESCRIPTION: &str = "Close the pane of the explicitly named agent. The caller owns the lifecycle decision; Herdr Link only performs the close. Call it as a standalone later tool step, after any earlier Herdr Link operation has completed. Closing sends no message. Closing your own pane may end you before the result returns.";

/// What each Tier 1 tool returns on success (PROTOCOL §4.2–§4.5), as the model reads it: the
/// exact keys, with the fixed values literal and the others described in angle brackets. A
/// drift test runs each operation and compares the keys (`tests/abi_surface.rs`).
pub fn result_example(tool: &str) -> Option<Value> {
    Some(match tool {
        TOOL_START => {
            json!({"status": "started", "agent": "<the new agent's name>", "kind": "<its agent kind>"})
        }
        TOOL_PEERS => json!({
            "self": {"name": "<your Agent Name>", "state": "<state>"},
            "peers": [{"name": "<Agent Name>", "state": "<state>"}]
        }),
        TOOL_SEND => {
            json!({"status": "sent", "id": "<message id>", "to": "<recipient's Agent Name>"})
        }
        TOOL_CLOSE => json!({"status": "closed", "agent": "<the closed agent's name>"}),
        _ => return None,
    })
}

/// `description` followed by the tool's result.
fn with_result(tool: &str, description: String) -> String {
    let result = result_example(tool).expect("every Tier 1 tool has a result");
    format!("{description} Result: {result}.")
}

fn start_description() -> String {
    format!(
        "{START_DESCRIPTION} Give name and exactly one launch source: config_agent (an entry of the project's .agents/agent_config.json, whose placement decides where the agent opens) or kind and args together (an explicit start: args are the complete launch arguments, possibly empty); config_agent never goes with kind or args. Placement: with opens the agent beside that live agent of this workspace, in its directory; otherwise it opens in a new tab in cwd (default: the project directory); with and cwd never go together. A config entry's own placement decides: one placed new_tab refuses with; one placed with needs with and refuses cwd. Returns once Herdr has accepted the start."
    )
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The send `message` (PROTOCOL §8.1): `maxLength` is [`MAX_MESSAGE_CHARS`], the most characters
/// that can ever pass; the description states the real rule, [`MAX_MESSAGE_BYTES`] as encoded.
fn message_property(description: &str) -> Value {
    let description = format!(
        "{description} Not blank. At most {} bytes as the message envelope encodes it: a plain ASCII character counts 1, a quote, backslash, newline or tab 2, another control character (DEL and U+0080 to U+009F included), U+2028, U+2029 or an invisible format character (such as a zero-width space or a bidirectional mark) 6 (12 above U+FFFF), any other character its UTF-8 length (2 to 4; Chinese 3): about 128,000 characters of plain English or 42,000 of Chinese. Every character travels, control characters included, and arrives exactly as sent.",
        group_thousands(MAX_MESSAGE_BYTES)
    );
    json!({"type": "string", "maxLength": MAX_MESSAGE_CHARS, "description": description})
}

/// `128000` as `128,000`.
fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Start `args`: strings, at most [`MAX_START_ARGS`] of them (PROTOCOL §8.1); their total
/// length, which JSON Schema cannot state, is in the description.
fn strings(description: &str) -> Value {
    let description = format!(
        "{description} At most {} characters together.",
        group_thousands(MAX_START_ARGS_CHARS)
    );
    json!({"type": "array", "items": {"type": "string"}, "maxItems": MAX_START_ARGS, "description": description})
}

fn start_properties() -> Map<String, Value> {
    let mut p = Map::new();
    p.insert(
        "name".into(),
        string(&format!(
            "Agent Name for the new agent ({AGENT_NAME_RULE}), not taken by a live agent."
        )),
    );
    p.insert(
        "with".into(),
        string("Agent Name of a live agent in this workspace; the new agent opens beside it, in its working directory. Not with cwd."),
    );
    p.insert(
        "cwd".into(),
        string("Working directory of the new tab, which must exist; relative paths start at the project directory. Not with with."),
    );
    p.insert(
        "config_agent".into(),
        string("Entry of .agents/agent_config.json to launch. Not with kind or args."),
    );
    p.insert(
        "kind".into(),
        string("Agent kind for an explicit start (for example pi, claude, codex); needs args. Not with config_agent."),
    );
    p.insert(
        "args".into(),
        strings("Complete agent arguments for an explicit start (may be empty); needs kind. Not with config_agent."),
    );
    p
}

fn start_tool() -> Tool {
    Tool {
        name: TOOL_START,
        description: with_result(TOOL_START, start_description()),
        input_schema: json!({"type": "object", "properties": start_properties(), "required": ["name"]}),
    }
}

fn peers_tool() -> Tool {
    Tool {
        name: TOOL_PEERS,
        description: with_result(TOOL_PEERS, PEERS_DESCRIPTION.into()),
        input_schema: json!({"type": "object", "properties": {}}),
    }
}

fn send_tool() -> Tool {
    Tool {
        name: TOOL_SEND,
        description: with_result(
            TOOL_SEND,
            format!(
                "{SEND_DESCRIPTION} A message may hold up to {} bytes as encoded (see message).",
                group_thousands(MAX_MESSAGE_BYTES)
            ),
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "to": string("Agent Name of the recipient; for a reply, the inbound message's \"from\"."),
                "message": message_property("Message payload (text; may carry JSON or YAML).")
            },
            "required": ["to", "message"]
        }),
    }
}

fn close_tool() -> Tool {
    Tool {
        name: TOOL_CLOSE,
        description: with_result(TOOL_CLOSE, CLOSE_DESCRIPTION.into()),
        input_schema: json!({
            "type": "object",
            "properties": {"agent": string("Agent Name of the agent whose pane to close (never a pane id).")},
            "required": ["agent"]
        }),
    }
}

/// The Tier 1 definition of the tool `tool`; every operation's tool has one (a test checks), its
/// schema's properties being the operation's input fields.
fn definition(tool: &str) -> Option<Tool> {
    Some(match tool {
        TOOL_START => start_tool(),
        TOOL_PEERS => peers_tool(),
        TOOL_SEND => send_tool(),
        TOOL_CLOSE => close_tool(),
        _ => return None,
    })
}

/// Every operation of [`OPERATIONS`] with its Tier 1 tool, in the table's order.
fn defined() -> impl Iterator<Item = (Operation, Tool)> {
    OPERATIONS
        .into_iter()
        .filter_map(|op| Some((op, definition(op.tool)?)))
}

/// The Tier 1 tools, one per operation, in the order of [`OPERATIONS`].
pub fn tools() -> Vec<Tool> {
    defined().map(|(_, tool)| tool).collect()
}

/// How the action reference shows a field's type: `string`, `array of strings`, ...
pub fn type_text(p: &Value) -> String {
    match (p["type"].as_str(), p["items"]["type"].as_str()) {
        (Some("array"), Some(item)) => format!("array of {item}s"),
        (Some(t), _) => t.to_string(),
        (None, _) => "value".to_string(),
    }
}

/// Whether `key` is required by `tool`'s input schema.
pub fn is_required(tool: &Tool, key: &str) -> bool {
    tool.input_schema["required"]
        .as_array()
        .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(key)))
}

/// One Tier 1 tool's input as an action's arguments: one line per field with its type, whether
/// it is required, its limit and its description.
fn arguments_text(tool: &Tool) -> String {
    let fields: Vec<String> = tool.input_schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, p)| {
            let need = if is_required(tool, key) {
                "required"
            } else {
                "optional"
            };
            let limit = match (p["maxLength"].as_u64(), p["maxItems"].as_u64()) {
                (Some(n), _) => format!(", at most {n} characters"),
                (_, Some(n)) => format!(", at most {n} items"),
                _ => String::new(),
            };
            let description = p["description"].as_str().unwrap_or_default();
            format!(
                "\n    {key} ({}, {need}{limit}): {description}",
                type_text(p)
            )
        })
        .collect();
    if fields.is_empty() {
        "\n  Arguments: none.".to_string()
    } else {
        format!("\n  Arguments:{}", fields.concat())
    }
}

/// Every action of a dispatching gateway, generated from the Tier 1 definitions: the action,
/// the tool it stands for, the tool's full description (its rules and result) and its
/// arguments (PROTOCOL §4.6: the same schemas and rules whatever the form).
pub fn action_reference() -> String {
    let mut s = String::new();
    for (op, tool) in defined() {
        s.push_str(&format!(
            "\n- action \"{}\" ({}): {}{}",
            op.action,
            tool.name,
            tool.description,
            arguments_text(&tool)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::is_valid_agent_name;

    /// Every operation has its Tier 1 tool, whose properties are the operation's input fields
    /// (in order) and whose description ends with its result; nothing else has one.
    #[test]
    fn every_operation_has_its_tool() {
        let names: Vec<_> = tools().iter().map(|t| t.name).collect();
        let table: Vec<_> = OPERATIONS.iter().map(|op| op.tool).collect();
        assert_eq!(names, table);
        for (op, tool) in defined() {
            let props: Vec<&str> = tool.input_schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(props, op.fields, "{}", op.tool);
            assert!(result_example(op.tool).is_some(), "{}", op.tool);
        }
        assert_eq!(result_example("herdr_link"), None);
        assert!(definition("herdr_link").is_none());
    }

    #[test]
    fn the_agent_name_rule_is_the_one_checked() {
        for ok in ["a", "w2", "brain_1-x", &format!("a{}", "b".repeat(31))] {
            assert!(is_valid_agent_name(ok), "{ok}");
        }
        for bad in ["", "2a", "A", "a b", "a.b", &format!("a{}", "b".repeat(32))] {
            assert!(!is_valid_agent_name(bad), "{bad}");
        }
        assert!(
            start_tool().input_schema["properties"]["name"]["description"]
                .as_str()
                .unwrap()
                .contains(AGENT_NAME_RULE)
        );
    }

    #[test]
    fn the_start_rules_are_stated() {
        let d = start_tool().description;
        for rule in [
            "exactly one launch source",
            "kind and args together",
            "config_agent never goes with kind or args",
            "with and cwd never go together",
            "placed new_tab refuses with",
            "needs with and refuses cwd",
        ] {
            assert!(d.contains(rule), "{rule}: {d}");
        }
        let args = &start_tool().input_schema["properties"]["args"];
        assert_eq!(args["maxItems"], MAX_START_ARGS);
        assert!(args["description"].as_str().unwrap().contains(&format!(
            "{} characters together",
            group_thousands(MAX_START_ARGS_CHARS)
        )));
        assert_eq!(group_thousands(128_000), "128,000");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn every_description_ends_with_its_result() {
        for t in tools() {
            let result = result_example(t.name).unwrap().to_string();
            assert!(
                t.description.ends_with(&format!(" Result: {result}.")),
                "{}: {}",
                t.name,
                t.description
            );
        }
    }
}
