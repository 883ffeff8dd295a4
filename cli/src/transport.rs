//! Line-delimited JSON-RPC over stdio for rmcp, with the framing rules Herdr Link needs.
//!
//! rmcp's own stdio transport silently drops a line that is not JSON, answers a well-formed but
//! mistyped request with an id-less `Invalid request`, lets a notification that arrives before
//! `initialize` end the session, and at EOF gives in-flight calls a few seconds before dropping
//! their answers. This transport sits under rmcp's service loop and fixes those edges:
//!
//! * a line that is not JSON gets `-32700 Parse error` (id `null`), and serving goes on;
//! * a JSON value that is not an object gets `-32600 Invalid Request` (id `null`);
//! * a request rmcp cannot type (bad `params`, `jsonrpc` not `"2.0"`, ...) gets `-32600` or
//!   `-32602` with *its* id (rmcp would answer a standard method with mistyped params as
//!   "method not found"); a malformed notification is ignored, as JSON-RPC requires;
//! * before `initialize`, stray notifications and responses are dropped instead of ending the
//!   session;
//! * at EOF every request already read is answered (the notification it triggers included)
//!   before the service loop is told the stream ended.
//!
//! Everything rmcp writes goes through [`LineTransport::send`]: one JSON document plus `\n`
//! per frame, flushed, under one lock, so frames never interleave and each is on stdout when
//! the send completes (which is what orders `notifications/tools/list_changed` before the
//! response of the call that triggered it).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage};
use rmcp::model::{NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{watch, Mutex};

/// The longest line accepted (the documented request limit, 1 MiB); a longer one is discarded
/// up to its newline and answered with `-32600`.
pub const MAX_LINE: usize = herdr_link::limits::MAX_REQUEST_BYTES;

/// What became of one input line.
#[derive(Debug)]
enum Line {
    /// A message for rmcp.
    Deliver(Box<ClientJsonRpcMessage>),
    /// A frame to write back ourselves.
    Reply(Vec<u8>),
    /// Nothing to do (blank line, malformed notification, stray message before `initialize`).
    Drop,
}

/// One step of the bounded line reader.
enum Read {
    Line,
    Oversized,
    Eof,
}

/// The stdio transport handed to rmcp's `serve_server`.
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
    writer: Arc<Mutex<W>>,
    /// Ids of requests handed to rmcp and not answered yet.
    pending: Arc<watch::Sender<HashSet<RequestId>>>,
    /// Set once an `initialize` request was delivered.
    initialized: bool,
    /// Set at EOF (or on a read error).
    eof: bool,
    /// The longest EOF waits for unanswered requests.
    drain_limit: Duration,
}

impl<R, W> LineTransport<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport over `reader`/`writer`; at EOF it waits up to `drain_limit` for requests
    /// already read to be answered.
    pub fn new(reader: R, writer: W, drain_limit: Duration) -> Self {
        LineTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(writer)),
            pending: Arc::new(watch::channel(HashSet::new()).0),
            initialized: false,
            eof: false,
            drain_limit,
        }
    }

    /// Reads one `\n`-terminated line into `self.line`, never holding more than [`MAX_LINE`]
    /// bytes. Cancellation-safe: a partial line stays in `self.line` for the next call.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.reader.fill_buf().await?;
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
            self.reader.consume(take);
            if let Some(d) = done {
                return Ok(d);
            }
        }
    }

    /// Writes `frame` in the background: a write never depends on `receive` being polled to
    /// completion (rmcp polls it inside `select!`).
    fn reply(&self, frame: Vec<u8>) {
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let _ = write_frame(&writer, &frame).await;
        });
    }

    fn track(&mut self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(r) => {
                if matches!(r.request, ClientRequest::InitializeRequest(_)) {
                    self.initialized = true;
                }
                let id = r.id.clone();
                self.pending.send_modify(|p| {
                    p.insert(id);
                });
            }
            JsonRpcMessage::Notification(n) => {
                // rmcp drops the answer of a cancelled request; stop waiting for it.
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = c.params.request_id.clone() {
                        self.pending.send_modify(|p| {
                            p.remove(&id);
                        });
                    }
                }
            }
            _ => {}
        }
    }

    /// After EOF: waits (bounded) until every request read has been answered.
    async fn drain(&mut self) {
        let mut rx = self.pending.subscribe();
        let _ = tokio::time::timeout(self.drain_limit, rx.wait_for(HashSet::is_empty)).await;
    }
}

async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    frame: &[u8],
) -> std::io::Result<()> {
    let mut w = writer.lock().await;
    w.write_all(frame).await?;
    w.flush().await
}

fn frame(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// A JSON-RPC error frame; `id` `None` is written as `null`.
fn error_frame(id: Option<&RequestId>, code: i32, message: &str) -> Vec<u8> {
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
fn classify(raw: &[u8], initialized: bool) -> Line {
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

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let pending = self.pending.clone();
        async move {
            let answered = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let written = write_frame(&writer, &bytes).await;
            if let Some(id) = answered {
                pending.send_modify(|p| {
                    p.remove(&id);
                });
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.eof {
                self.drain().await;
                return None;
            }
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::Oversized) => {
                    self.reply(error_frame(
                        None,
                        -32600,
                        "Invalid Request: message too large",
                    ));
                    continue;
                }
                Ok(Read::Eof) | Err(_) => {
                    // A final line without a newline is incomplete: it is not processed.
                    self.eof = true;
                    continue;
                }
            }
            let line = std::mem::take(&mut self.line);
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let outcome = classify(body, self.initialized);
            self.line = line;
            self.line.clear();
            match outcome {
                Line::Deliver(message) => {
                    self.track(&message);
                    return Some(*message);
                }
                Line::Reply(frame) => self.reply(frame),
                Line::Drop => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
