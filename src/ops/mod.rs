//! The four Tier 1 operations, one module each, and [`OPERATIONS`], the one table of them: per
//! operation its tool, gateway action, input fields, fallback error code and handler. Routing,
//! the request shape, the Tier 1 presentation and the MCP server all read the table. A handler
//! takes a [`Context`] (the [`Herdr`] driver, the caller's pane, ...) and the input, and returns
//! the receipt JSON or a [`LinkError`].

mod close;
mod delivery;
pub mod peers;
mod send;
pub mod start;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::LinkError;
use crate::herdr::Herdr;
use crate::oplog::MessageTrace;
use crate::protocol::{TOOL_CLOSE, TOOL_PEERS, TOOL_SEND, TOOL_START};
use crate::turn;

/// What an operation runs with: the Herdr to call, the record of delivery turns, where a send
/// leaves what it learned for the operator log, the caller's pane, and the directory a
/// configured start reads `.agents/agent_config.json` from (default: the working directory).
pub struct Context<'a> {
    /// The Herdr driver.
    pub herdr: &'a Herdr,
    /// The delivery turns taken during the call.
    pub turns: &'a turn::Record,
    /// Set by an operation that sends a message: what the operator log says of it.
    pub sent: &'a RefCell<Option<MessageTrace>>,
    /// The caller's pane (`HERDR_PANE_ID`).
    pub pane: &'a str,
    /// Where a configured start looks for its config.
    pub context_dir: Option<&'a Path>,
}

/// Runs an operation with its input.
type Handler = fn(&Context<'_>, &Map<String, Value>) -> Result<Value, LinkError>;

/// One operation: how a model calls it and what runs it.
#[derive(Clone, Copy)]
pub struct Operation {
    /// Its Tier 1 tool.
    pub tool: &'static str,
    /// Its gateway action, also its capability word in the activation result.
    pub action: &'static str,
    /// The fields its input may hold (a Tier 1 tool's properties, an action's `arguments`).
    pub fields: &'static [&'static str],
    /// Whether a host runs it alone, never beside another call of the same batch (§6: close).
    pub runs_alone: bool,
    /// The error an unexpected failure inside it becomes: the operation's own code.
    fallback: fn(String) -> LinkError,
    handler: Handler,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.action)
    }
}

impl PartialEq for Operation {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool
    }
}

impl Operation {
    /// Wraps an unexpected failure inside Link (a panic) in this operation's code, with a text
    /// that says so: Herdr did not refuse anything.
    pub fn fallback(&self, detail: String) -> LinkError {
        (self.fallback)(detail)
    }

    /// Runs the operation with its input.
    pub fn run(&self, cx: &Context<'_>, input: &Map<String, Value>) -> Result<Value, LinkError> {
        (self.handler)(cx, input)
    }
}

/// Every operation, in the order every presentation lists them. A new operation is a row here,
/// its handler below and its Tier 1 definition (`presentation/tier1.rs`); everything else
/// (routing, the gateway's actions and fields, the tool lists) follows from this table.
pub const OPERATIONS: [Operation; 4] = [
    Operation {
        tool: TOOL_START,
        action: "start",
        fields: &start::FIELDS,
        runs_alone: false,
        fallback: LinkError::StartUnexpected,
        handler: run_start,
    },
    Operation {
        tool: TOOL_PEERS,
        action: "peers",
        fields: &[],
        runs_alone: false,
        fallback: LinkError::PeersUnexpected,
        handler: run_peers,
    },
    Operation {
        tool: TOOL_SEND,
        action: "send",
        fields: &["to", "message"],
        runs_alone: false,
        fallback: LinkError::SendUnexpected,
        handler: run_send,
    },
    Operation {
        tool: TOOL_CLOSE,
        action: "close",
        fields: &["agent"],
        runs_alone: true,
        fallback: LinkError::CloseUnexpected,
        handler: run_close,
    },
];

/// The operation the Tier 1 tool `tool` runs.
pub fn by_tool(tool: &str) -> Option<Operation> {
    OPERATIONS.into_iter().find(|op| op.tool == tool)
}

/// The operation the gateway action `action` runs.
pub fn by_action(action: &str) -> Option<Operation> {
    OPERATIONS.into_iter().find(|op| op.action == action)
}

/// How many input fields the operations have together.
const FIELD_COUNT: usize = {
    let (mut n, mut i) = (0, 0);
    while i < OPERATIONS.len() {
        n += OPERATIONS[i].fields.len();
        i += 1;
    }
    n
};

/// Every operation's input fields, `first` before them.
const fn fields_after<const N: usize>(first: &'static [&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut n = 0;
    while n < first.len() {
        out[n] = first[n];
        n += 1;
    }
    let mut i = 0;
    while i < OPERATIONS.len() {
        let mut j = 0;
        while j < OPERATIONS[i].fields.len() {
            out[n] = OPERATIONS[i].fields[j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// The fields of a gateway action's `arguments` object (and of any Tier 1 tool's input): every
/// operation's input fields.
pub const INPUT_FIELDS: [&str; FIELD_COUNT] = fields_after(&[]);

/// The fields a gateway call's input may use: `action`, then every operation's input fields.
pub const GATEWAY_FIELDS: [&str; FIELD_COUNT + 1] = fields_after(&["action"]);

fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn run_start(cx: &Context<'_>, args: &Map<String, Value>) -> Result<Value, LinkError> {
    let dir = cx
        .context_dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    start::start(cx.herdr, cx.pane, args, &dir)
}

fn run_peers(cx: &Context<'_>, _args: &Map<String, Value>) -> Result<Value, LinkError> {
    peers::peers(cx.herdr, cx.pane)
}

fn run_send(cx: &Context<'_>, args: &Map<String, Value>) -> Result<Value, LinkError> {
    let message = str_arg(args, "message");
    let mut sent = cx.sent.borrow_mut();
    let trace = sent.insert(MessageTrace {
        to: str_arg(args, "to").unwrap_or_default().to_string(),
        text: message.unwrap_or_default().to_string(),
        ..MessageTrace::default()
    });
    let to = str_arg(args, "to")
        .ok_or_else(|| LinkError::SendToMissing("`to` is missing or not a string".into()))?;
    send::send(cx.herdr, cx.turns, trace, cx.pane, to, message)
}

fn run_close(cx: &Context<'_>, args: &Map<String, Value>) -> Result<Value, LinkError> {
    let agent = str_arg(args, "agent")
        .ok_or_else(|| LinkError::CloseAgentMissing("`agent` is missing or not a string".into()))?;
    close::close(cx.herdr, cx.turns, cx.pane, agent)
}
