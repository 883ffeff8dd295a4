//! One tool call, end to end: parse the request, apply the environment gate, activate the session,
//! route the tool (or gateway action) to its operation, and render the response. Every host goes
//! through here: the C ABI with JSON text, the MCP server with parsed values.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Map, Value};

use crate::env;
use crate::error::{self, LinkError};
use crate::follow;
use crate::herdr::Herdr;
use crate::limits;
use crate::oplog;
use crate::ops::{self, Operation, OPERATIONS};
use crate::presentation::{self, series, Style, View};
use crate::protocol::{ACTIVATE, CONTRACT, GATEWAY};
use crate::request;
use crate::session;
use crate::turn;

/// Why a call did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// A Link failure (one of the ten codes).
    Link(LinkError),
    /// The host sent something malformed; not a Link code. The text says what is wrong.
    InvalidRequest(String),
}

impl From<LinkError> for CallError {
    fn from(e: LinkError) -> Self {
        CallError::Link(e)
    }
}

impl CallError {
    /// The code: a Link code or `INVALID_REQUEST`.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::Link(e) => e.code(),
            CallError::InvalidRequest(_) => error::INVALID_REQUEST,
        }
    }

    /// The text after the code: for Link errors the fixed reason; for INVALID_REQUEST what is
    /// wrong with the request.
    fn text(&self) -> &str {
        match self {
            CallError::Link(e) => e.reason(),
            CallError::InvalidRequest(d) => d,
        }
    }

    /// The text a model (or host programmer) sees: `CODE: text`.
    pub fn message(&self) -> String {
        error::message(self.code(), self.text())
    }

    /// The `{"code","message"}` error object of the response.
    pub fn document(&self) -> Value {
        error::document(self.code(), self.text())
    }

    /// What the operator log records: the code and the internal detail.
    fn logged(&self) -> (&'static str, &str) {
        match self {
            CallError::Link(e) => (e.code(), e.detail()),
            CallError::InvalidRequest(d) => (error::INVALID_REQUEST, d),
        }
    }
}

/// [`CallError::message`]: never a Link error's internal detail.
impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for CallError {}

/// The result of one call plus the session's activation state after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The operation's result or its error.
    pub result: Result<Value, CallError>,
    /// Whether the session is active after the call.
    pub active: bool,
    /// True only on the call that moved the session from dormant to active.
    pub tools_changed: bool,
    /// The Contract the host shows the model together with this result (§3, §6 capability 3:
    /// the rules are visible from the activating step on, before any system prompt a host
    /// builds per user prompt can carry them). Set on the call that activated the session and
    /// on every later activation call (`carries_contract`); `None` on every other call.
    pub contract: Option<String>,
}

impl Outcome {
    /// The C ABI response document. `contract` is present only when the call carries it.
    pub fn to_json(&self) -> Value {
        let mut doc = match &self.result {
            Ok(v) => {
                json!({"ok": true, "result": v, "active": self.active, "tools_changed": self.tools_changed})
            }
            Err(e) => failure(e.document(), self.active, self.tools_changed),
        };
        if let Some(c) = &self.contract {
            doc["contract"] = json!(c);
        }
        doc
    }
}

/// A failed call's response document around its `{"code","message"}` object.
fn failure(error: Value, active: bool, tools_changed: bool) -> Value {
    json!({"ok": false, "error": error, "active": active, "tools_changed": tools_changed})
}

/// The response to a call that failed before it reached any session (the C ABI's NULL or
/// invalid UTF-8 request, an internal error): `code` and its `text`, dormant, nothing changed.
pub(crate) fn failure_json(code: &str, text: &str) -> Value {
    failure(error::document(code, text), false, false)
}

/// Whether a call's result carries the Contract: the call that moved the session from dormant
/// to active (gateway or direct Tier 1, success or Link error), and every activation call of an
/// active session, so a model that activates again sees the rules again. No other call does.
fn carries_contract(activation_call: bool, active: bool, tools_changed: bool) -> bool {
    tools_changed || (activation_call && active)
}

/// The Contract text a result carries in `style`: the style's active Contract (with its
/// appendix); without a style the bare Contract, the one text true in every presentation.
fn contract_for(style: Option<Style>) -> String {
    style
        .and_then(|s| presentation::contract(s, View::Active))
        .unwrap_or_else(|| CONTRACT.to_string())
}

/// The gateway's activation result: every operation's action is a capability.
fn activation_result() -> Value {
    let capabilities: Vec<&str> = OPERATIONS.iter().map(|op| op.action).collect();
    json!({"status": "active", "capabilities": capabilities})
}

/// What a call will do once the gate and activation are settled.
enum Route {
    Activate,
    Run(Operation, Map<String, Value>),
}

/// Decides the route from the tool name and input, before anything else happens, so a malformed
/// request never activates a session or touches Herdr. Without `dispatch` (the deferred style)
/// the gateway only activates and its input is ignored (§4.1).
fn route(
    tool: &str,
    mut input: Map<String, Value>,
    dispatch: bool,
) -> Result<(Route, Option<String>), CallError> {
    if tool == GATEWAY && !dispatch {
        return Ok((Route::Activate, None));
    }
    if tool == GATEWAY {
        let action = match input.get("action") {
            None => return Ok((Route::Activate, None)),
            Some(Value::String(a)) if a == ACTIVATE => {
                return Ok((Route::Activate, Some(a.clone())))
            }
            Some(Value::String(a)) => a.clone(),
            Some(other) => {
                return Err(CallError::InvalidRequest(format!(
                    "gateway action must be a string, got {}",
                    limits::echo(&other.to_string())
                )))
            }
        };
        let op = ops::by_action(&action).ok_or_else(|| {
            CallError::InvalidRequest(format!(
                "unknown gateway action {}; use {}, or omit action to activate",
                limits::echo(&action),
                series(OPERATIONS.iter().map(|op| op.action), "or")
            ))
        })?;
        let args = match input.remove("arguments") {
            Some(Value::Object(a)) => a,
            Some(_) => {
                return Err(CallError::InvalidRequest(
                    "gateway arguments must be an object".into(),
                ))
            }
            None => {
                input.remove("action");
                input
            }
        };
        return Ok((Route::Run(op, args), Some(action)));
    }
    let op = ops::by_tool(tool).ok_or_else(|| {
        let tools = std::iter::once(GATEWAY).chain(OPERATIONS.iter().map(|op| op.tool));
        CallError::InvalidRequest(format!(
            "unknown tool {}; use {}",
            limits::echo(tool),
            series(tools, "or")
        ))
    })?;
    Ok((Route::Run(op, input), None))
}

/// Runs one tool call for `session` from a host that did not state its presentation style: the
/// gateway dispatches actions (as in the `gateway` and `mcp` styles). `context_dir` locates the
/// start config (default: the process working directory).
pub fn call(
    session: &str,
    tool: &str,
    input: Map<String, Value>,
    context_dir: Option<&Path>,
) -> Outcome {
    call_in_style(None, session, tool, input, context_dir)
}

/// [`call`] for a host that presents Link in `style`: the gateway dispatches actions only where
/// that style offers dispatch ([`Style::dispatches`]); in the deferred style it only activates.
/// It starts no presence: who answers the exec-boundary guard is the serving process's choice
/// ([`call_json`] for a process that loads the library; the MCP server for its host).
pub fn call_in_style(
    style: Option<Style>,
    session: &str,
    tool: &str,
    input: Map<String, Value>,
    context_dir: Option<&Path>,
) -> Outcome {
    let started = Instant::now();
    let dispatch = style.map_or(true, Style::dispatches);
    let (route, action) = match route(tool, input, dispatch) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                result: Err(e),
                active: session::is_active(session),
                tools_changed: false,
                contract: None,
            }
        }
    };
    let Some(herdr_env) = env::gate() else {
        let e = LinkError::NotInHerdr(
            "HERDR_ENV=1, HERDR_BIN_PATH and HERDR_PANE_ID are required".into(),
        );
        log(
            session,
            tool,
            action.as_deref(),
            (&[], None, None),
            Err(&e.clone().into()),
            started,
        );
        return Outcome {
            result: Err(e.into()),
            active: session::is_active(session),
            tools_changed: false,
            contract: None,
        };
    };
    let tools_changed = session::activate(session);
    let herdr = Herdr::new(&herdr_env);
    let turns = turn::Record::default();
    let activation_call = matches!(route, Route::Activate);
    let sent = RefCell::new(None);
    let result = match route {
        Route::Activate => Ok(activation_result()),
        Route::Run(op, args) => {
            let cx = ops::Context {
                herdr: &herdr,
                turns: &turns,
                sent: &sent,
                pane: &herdr_env.pane_id,
                context_dir,
            };
            contained(op, || op.run(&cx, &args)).map_err(CallError::from)
        }
    };
    let trace = herdr.take_trace();
    let turn = turns.take();
    let message = sent.into_inner();
    log(
        session,
        tool,
        action.as_deref(),
        (&trace, turn.as_ref(), message.as_ref()),
        result.as_ref(),
        started,
    );
    // A delivered message is followed from the side, after its line and never in its result.
    if let (Some(message), Ok(_)) = (message, &result) {
        follow::delivered(&herdr_env, session, message);
    }
    Outcome {
        result,
        active: true,
        tools_changed,
        contract: carries_contract(activation_call, true, tools_changed)
            .then(|| contract_for(style)),
    }
}

fn log(
    session: &str,
    tool: &str,
    action: Option<&str>,
    (calls, turn, message): (
        &[oplog::CallTrace],
        Option<&turn::TurnTrace>,
        Option<&oplog::MessageTrace>,
    ),
    result: Result<&Value, &CallError>,
    started: Instant,
) {
    let (code, detail) = result.map_or_else(CallError::logged, |_| (oplog::OK, ""));
    oplog::Entry::new(session, tool, code, detail)
        .action(action)
        .calls(calls)
        .turn(turn)
        .message(message)
        .since(started)
        .record();
}

/// Starts this process's activation presence: a process that loads the library answers the
/// exec-boundary guard (the `herdr` shim, the hooks of its children) for itself, per session
/// marker ([`session::exec_answer`]; docs/guard.md, "Activation presence"). Started here, on the C ABI's
/// path, and only here: the MCP server answers for its host instead (its own activation
/// sharing), so it runs one presence socket, not two. A failure goes to the operator log.
fn hold_presence(session: &str) {
    let started = Instant::now();
    if let Err(detail) = crate::presence::serve_self(session::exec_answer) {
        oplog::Entry::new(session, "guard", "presence_failed", &detail)
            .action(Some("presence"))
            .since(started)
            .record();
    }
}

/// Runs an operation; an unexpected failure inside it (a panic) becomes the operation's fallback
/// code instead of escaping, like any other unclassified failure.
fn contained(
    op: Operation,
    f: impl FnOnce() -> Result<Value, LinkError>,
) -> Result<Value, LinkError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(op.fallback(format!("unexpected failure during {}", op.action))))
}

static ARGUMENTS_SHAPE: request::Shape = request::Shape {
    values: &ops::INPUT_FIELDS,
    objects: &[],
    keep_other_names: true,
};

static INPUT_SHAPE: request::Shape = request::Shape {
    values: &ops::GATEWAY_FIELDS,
    objects: &[("arguments", &ARGUMENTS_SHAPE)],
    keep_other_names: true,
};

static REQUEST_SHAPE: request::Shape = request::Shape {
    values: &["session", "tool", "context_dir", "style"],
    objects: &[("input", &INPUT_SHAPE)],
    keep_other_names: false,
};

/// The C ABI request `{"session","tool","input","context_dir","style"}` as text in, response JSON
/// out. The text is bounded (PROTOCOL.md §8.1) and parsed without building unknown fields. The
/// call that activates a session starts this process's presence ([`hold_presence`]) before the
/// answer is returned.
pub fn call_json(request: &str) -> Value {
    match parse_request(request) {
        Ok((session, tool, input, dir, style)) => {
            let outcome = call_in_style(style, &session, &tool, input, dir.as_deref());
            if outcome.tools_changed {
                hold_presence(&session);
            }
            outcome.to_json()
        }
        Err(e) => Outcome {
            result: Err(e),
            active: false,
            tools_changed: false,
            contract: None,
        }
        .to_json(),
    }
}

type Parsed = (
    String,
    String,
    Map<String, Value>,
    Option<PathBuf>,
    Option<Style>,
);

/// The `session` of a parsed request: a non-empty string of at most the documented length.
fn session_of(obj: &Map<String, Value>) -> Result<String, String> {
    obj.get("session")
        .and_then(Value::as_str)
        .filter(|s| limits::session_key_ok(s))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "`session` must be a non-empty string of at most {} bytes",
                limits::MAX_SESSION_KEY_BYTES
            )
        })
}

fn parse_request(request: &str) -> Result<Parsed, CallError> {
    let bad = |m: &str| CallError::InvalidRequest(m.to_string());
    let mut obj = request::parse(request, &REQUEST_SHAPE).map_err(|r| bad(&r.to_string()))?;
    let session = session_of(&obj).map_err(|m| bad(&m))?;
    let tool = obj
        .get("tool")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`tool` must be a string"))?
        .to_string();
    let input = match obj.remove("input") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(bad("`input` must be a JSON object")),
    };
    let dir = match obj.get("context_dir") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) if !d.trim().is_empty() => {
            let p = PathBuf::from(d);
            Some(if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map(|c| c.join(&p)).unwrap_or(p)
            })
        }
        Some(_) => return Err(bad("`context_dir` must be a non-empty string")),
    };
    let style = match obj.get("style") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_str()
                .and_then(Style::parse)
                .ok_or_else(|| bad("`style` must be \"deferred\", \"gateway\" or \"mcp\""))?,
        ),
    };
    Ok((session, tool, input, dir, style))
}

/// The `hl_presentation` request `{"session","style","view"?}` as text in, document out.
pub fn presentation_json(request: &str) -> Value {
    use crate::presentation::document;
    static SHAPE: request::Shape = request::Shape {
        values: &["session", "style", "view"],
        objects: &[],
        keep_other_names: false,
    };
    let parsed = (|| {
        let obj = request::parse(request, &SHAPE).map_err(|r| r.to_string())?;
        let session = session_of(&obj)?;
        let style = obj
            .get("style")
            .and_then(Value::as_str)
            .and_then(Style::parse)
            .ok_or("`style` must be \"deferred\", \"gateway\" or \"mcp\"")?;
        let catalog = match obj.get("view") {
            None | Some(Value::Null) => false,
            Some(Value::String(v)) if v == "catalog" => true,
            Some(Value::String(v)) if v == "session" => false,
            Some(_) => return Err("`view` must be \"catalog\" or \"session\"".to_string()),
        };
        Ok::<_, String>((session, style, catalog))
    })();
    match parsed {
        Ok((session, style, catalog)) => {
            let view = if env::gate().is_none() {
                View::Outside
            } else if session::is_active(&session) {
                View::Active
            } else {
                View::Dormant
            };
            document(style, view, catalog)
        }
        Err(m) => presentation_refused(&m),
    }
}

/// The `hl_command_env` answer: `request` is `{"PATH": …, "HERDR_BIN_PATH": …}` (each a string,
/// missing or null), the answer the variables to set ([`crate::paths::env_for_commands`]);
/// `None` for a request that is not such an object.
pub(crate) fn command_env_json(request: &str) -> Option<Value> {
    let Ok(Value::Object(req)) = serde_json::from_str::<Value>(request) else {
        return None;
    };
    let field = |k: &str| match req.get(k) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.as_str())),
        Some(_) => None,
    };
    let (path, bin) = (field("PATH")?, field("HERDR_BIN_PATH")?);
    let changes =
        crate::paths::env_for_commands(path.unwrap_or_default().as_ref(), bin.map(AsRef::as_ref));
    Some(Value::Object(crate::paths::changes_json(changes)))
}

/// The `hl_presentation` answer to a malformed request: no tools, no Contract, and why.
pub(crate) fn presentation_refused(why: &str) -> Value {
    json!({"tools": [], "contract": null, "error": error::document(error::INVALID_REQUEST, why)})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of the table is reachable by its tool and by its gateway action, with
    /// nothing else routed; and a malformed name is refused with the list of real ones.
    #[test]
    fn routing_reads_the_operation_table() {
        for op in OPERATIONS {
            let Ok((Route::Run(by_tool, _), None)) = route(op.tool, Map::new(), true) else {
                panic!("{} is not routed", op.tool)
            };
            assert_eq!(by_tool, op);
            let input = json!({"action": op.action, "arguments": {}});
            let Value::Object(input) = input else {
                unreachable!()
            };
            let Ok((Route::Run(by_action, _), Some(a))) = route(GATEWAY, input, true) else {
                panic!("action {} is not routed", op.action)
            };
            assert_eq!((by_action, a.as_str()), (op, op.action));
            for f in op.fields {
                assert!(ops::INPUT_FIELDS.contains(f), "{f}");
            }
        }
        assert!(matches!(
            route(GATEWAY, Map::new(), true),
            Ok((Route::Activate, None))
        ));
        let unknown = |tool: &str, input: Value| match route(
            tool,
            input.as_object().unwrap().clone(),
            true,
        ) {
            Err(CallError::InvalidRequest(m)) => m,
            _ => panic!("{tool} {input} was routed"),
        };
        assert_eq!(
            unknown("herdr_link_x", json!({})),
            "unknown tool \"herdr_link_x\"; use herdr_link, herdr_link_start, herdr_link_peers, herdr_link_send or herdr_link_close"
        );
        assert_eq!(
            unknown(GATEWAY, json!({"action": "stop"})),
            "unknown gateway action \"stop\"; use start, peers, send or close, or omit action to activate"
        );
        assert_eq!(ops::GATEWAY_FIELDS[0], "action");
        assert_eq!(ops::GATEWAY_FIELDS[1..], ops::INPUT_FIELDS);
        assert_eq!(
            activation_result()["capabilities"],
            json!(["start", "peers", "send", "close"])
        );
    }

    #[test]
    fn unexpected_failures_get_the_operation_fallback() {
        let codes = [
            "START_FAILED",
            "NOT_IN_HERDR",
            "SEND_FAILED",
            "CLOSE_FAILED",
        ];
        for (op, code) in OPERATIONS.into_iter().zip(codes) {
            let e = contained(op, || panic!("boom")).unwrap_err();
            assert_eq!(e.code(), code);
            assert!(!e.agent_text().contains("boom"));
        }
        let classified = contained(OPERATIONS[2], || Err(LinkError::NotInHerdr("x".into())));
        assert_eq!(
            classified.unwrap_err().code(),
            "NOT_IN_HERDR",
            "classified errors pass through"
        );
    }
}
