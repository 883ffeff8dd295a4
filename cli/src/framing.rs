//! JSON-RPC framing on stdio: reading bounded lines and deciding what each one means.
//!
//! rmcp's own stdio transport silently drops a line that is not JSON, answers a well-formed but
//! mistyped request with an id-less `Invalid request`, and lets a notification that arrives
//! before `initialize` end the session. [`classify`] fixes those edges before a message reaches
//! rmcp or the direct call path ([`crate::transport`]):
//!
//! * a line that is not JSON gets `-32700 Parse error` (id `null`), and serving goes on;
//! * a JSON value that is not an object gets `-32600 Invalid Request` (id `null`);
//! * a request rmcp cannot type (bad `params`, `jsonrpc` not `"2.0"`, ...) gets `-32600` or
//!   `-32602` with *its* id (rmcp would answer a standard method with mistyped params as
//!   "method not found"); a malformed notification is ignored, as JSON-RPC requires;
//! * before `initialize`, stray notifications and responses are dropped instead of ending the
//!   session.

use std::io::BufRead;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::model::{NumberOrString, RequestId};
use serde_json::{json, Value};

/// The longest line accepted (the documented request limit, 1 MiB); a longer one is discarded
/// up to its newline and answered with `-32600`.
pub const MAX_LINE: usize = herdr_link::limits::MAX_REQUEST_BYTES;

/// What became of one input line.
#[derive(Debug)]
pub enum Line {
    /// A message for rmcp.
    Deliver(Box<ClientJsonRpcMessage>),
    /// A frame to write back ourselves.
    Reply(Vec<u8>),
    /// Nothing to do (blank line, malformed notification, stray message before `initialize`).
    Drop,
}

/// Reads `\n`-terminated lines from a blocking source, never holding more than [`MAX_LINE`]
/// bytes of one line.
pub struct LineReader<R> {
    source: R,
    line: Vec<u8>,
    discarding: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader over `source`.
    pub fn new(source: R) -> Self {
        LineReader {
            source,
            line: Vec::new(),
            discarding: false,
        }
    }

    /// The line [`LineReader::read_line`] last returned [`Read::Line`] for, without its newline.
    pub fn line(&self) -> &[u8] {
        self.line.strip_suffix(b"\n").unwrap_or(&self.line)
    }

    /// Reads the next line into the buffer [`LineReader::line`] shows.
    pub fn read_line(&mut self) -> std::io::Result<Read> {
        self.line.clear();
        loop {
            let available = match self.source.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(Read::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut done = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                    done = Some(Read::Oversized);
                }
            } else if self.line.len() + take > MAX_LINE {
                self.line.clear();
                if newline.is_some() {
                    done = Some(Read::Oversized);
                } else {
                    self.discarding = true;
                }
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    done = Some(Read::Line);
                }
            }
            self.source.consume(take);
            if let Some(d) = done {
                return Ok(d);
            }
        }
    }
}

/// One step of [`LineReader::read_line`].
pub enum Read {
    /// A whole line (its newline included) is in the reader's buffer.
    Line,
    /// A line longer than [`MAX_LINE`] was read and thrown away.
    Oversized,
    /// The input ended (a final line without a newline is incomplete and dropped).
    Eof,
}

fn frame(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// A JSON-RPC error frame; `id` `None` is written as `null`.
pub fn error_frame(id: Option<&RequestId>, code: i32, message: &str) -> Vec<u8> {
    let id = match id {
        Some(NumberOrString::Number(n)) => json!(n),
        Some(NumberOrString::String(s)) => json!(s.as_ref()),
        None => Value::Null,
    };
    frame(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// The JSON-RPC parse error answer.
pub fn parse_error_frame() -> Vec<u8> {
    error_frame(None, -32700, "Parse error")
}

fn request_id(v: &Value) -> Option<RequestId> {
    match v {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// Standard MCP request methods this server may receive.
const STANDARD_METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// rmcp falls back to a custom request when a standard request's params do not fit its type
/// (then answers "method not found"); that is really an invalid-params error.
fn is_mistyped_standard(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::CustomRequest(c) if STANDARD_METHODS.contains(&c.method.as_str()))
}

/// Only a request's `id`, for refusing a request too large to build.
static ID_ONLY: herdr_link::request::Shape = herdr_link::request::Shape {
    values: &["id"],
    objects: &[],
    keep_other_names: false,
};

/// Decides what one input line (without its newline) means. `initialized` says whether an
/// `initialize` request has already been delivered.
pub fn classify(raw: &[u8], initialized: bool) -> Line {
    let raw = raw.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(raw);
    let raw = raw.trim_ascii();
    if raw.is_empty() {
        return Line::Drop;
    }
    if herdr_link::request::holds_more_values_than(raw, herdr_link::limits::MAX_VALUES) {
        // Building it (twice: a value, then rmcp's message) would cost memory out of all
        // proportion; refuse it with the id read cheaply (nothing else is built).
        let id = std::str::from_utf8(raw)
            .ok()
            .and_then(|t| herdr_link::request::parse(t, &ID_ONLY).ok())
            .and_then(|m| m.get("id").and_then(request_id));
        return Line::Reply(error_frame(
            id.as_ref(),
            -32600,
            "Invalid Request: more JSON values than the server accepts in one request",
        ));
    }
    let value: Value = match serde_json::from_slice(raw) {
        Ok(v) => v,
        Err(_) => return Line::Reply(parse_error_frame()),
    };
    let Some(obj) = value.as_object() else {
        return Line::Reply(error_frame(None, -32600, "Invalid Request"));
    };
    let has_id = obj.contains_key("id");
    let method = obj.get("method").and_then(Value::as_str);
    let version_ok = obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let is_request = has_id && method.is_some();
    if !initialized && !is_request {
        // Before `initialize` only requests mean anything; rmcp would end the session on a
        // notification or a response.
        return Line::Drop;
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(JsonRpcMessage::Request(r)) if version_ok && is_mistyped_standard(&r.request) => {
            Line::Reply(error_frame(
                Some(&r.id),
                -32602,
                &format!("Invalid params for {}", method.unwrap_or_default()),
            ))
        }
        Ok(message) if version_ok => Line::Deliver(Box::new(message)),
        Ok(_) | Err(_) => {
            if !has_id
                || (method.is_none() && (obj.contains_key("result") || obj.contains_key("error")))
            {
                // A notification (never answered) or a client response we did not ask for.
                return Line::Drop;
            }
            let id = obj.get("id").and_then(request_id);
            match (id, method, version_ok) {
                (Some(id), Some(method), true) => Line::Reply(error_frame(
                    Some(&id),
                    -32602,
                    &format!("Invalid params for {method}"),
                )),
                (id, _, _) => Line::Reply(error_frame(id.as_ref(), -32600, "Invalid Request")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines are cut at newlines, a line over the limit is reported once and skipped whole, and
    /// a last line without a newline is not a line.
    #[test]
    fn reads_bounded_lines() {
        let mut input = b"one\n".to_vec();
        input.extend(vec![b'x'; MAX_LINE + 10]);
        input.extend_from_slice(b"\ntwo\nthree");
        let mut r = LineReader::new(std::io::BufReader::with_capacity(4096, &input[..]));
        assert!(matches!(r.read_line().unwrap(), Read::Line));
        assert_eq!(r.line(), b"one");
        assert!(matches!(r.read_line().unwrap(), Read::Oversized));
        assert!(matches!(r.read_line().unwrap(), Read::Line));
        assert_eq!(r.line(), b"two");
        assert!(matches!(r.read_line().unwrap(), Read::Eof));
    }

    fn reply(line: &str, initialized: bool) -> Option<Value> {
        match classify(line.as_bytes(), initialized) {
            Line::Reply(f) => Some(serde_json::from_slice(&f).unwrap()),
            _ => None,
        }
    }

    #[test]
    fn classifies_lines() {
        let e = reply("not json", true).unwrap();
        assert_eq!(e["error"]["code"], -32700);
        assert!(e["id"].is_null());
        assert_eq!(reply("[1,2]", true).unwrap()["error"]["code"], -32600);
        assert_eq!(reply("null", false).unwrap()["error"]["code"], -32600);
        let e = reply(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"nope"}"#,
            true,
        )
        .unwrap();
        assert_eq!(e["error"]["code"], -32602);
        assert_eq!(e["id"], 7);
        let e = reply(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#, true).unwrap();
        assert_eq!(e["error"]["code"], -32600);
        assert_eq!(e["id"], "a");
        let e = reply(r#"{"jsonrpc":"2.0","id":3}"#, true).unwrap();
        assert_eq!(e["error"]["code"], -32600);
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                false
            ),
            Line::Drop
        ));
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                true
            ),
            Line::Deliver(_)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"9.9","method":"tools/list"}"#, true),
            Line::Drop
        ));
        assert!(matches!(classify(b"   ", true), Line::Drop));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false),
            Line::Deliver(_)
        ));
    }
}
