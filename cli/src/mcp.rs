//! `herdr-link mcp`: the shared MCP presentation (PROTOCOL §6, "listChanged first + gateway
//! fallback") served over stdio with rmcp on a single-threaded runtime.
//!
//! One stdio connection is one process, so the whole process uses one session key: activation
//! lasts for the connection and ends with it. Tool calls run the core's blocking
//! [`tools::call`] on the transport's reader threads ([`crate::transport`]), which keep reading
//! meanwhile, so pings are still answered; a session without `initialize` has its calls run
//! by rmcp on tokio's blocking pool.
//!
//! On activation the server also starts answering for its host (the `herdr-link guard` hook and
//! the `herdr` shim of the same host session ask it, [`crate::activation`]) before the
//! activating call's result is returned, and that result carries the Contract with the MCP
//! appendix as a second text block. The appendix names the tools as the host shows them: the
//! host comes from `--host` or else from the client name in `initialize` (or the request's
//! `_meta` client info); the registration name from `--server-name` (default `herdr_link`).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use herdr_link::presentation::{self, McpHost, McpNaming, Style, View};
use herdr_link::tools::{self, CallError};
use herdr_link::{env, identity, oplog, session};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, RequestId, ServerCapabilities, ServerConfig,
    ServerJsonRpcMessage, ServerNotification, ServerResult, Tool, ToolListChangedNotification,
};
use rmcp::service::{RequestContext, ServiceExt};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::activation::Shared;
use crate::transport::{self, LineTransport};

/// The session key of this process's one connection.
pub const SESSION: &str = "mcp";
/// `serverInfo.name` (the host-side namespace is `herdr_link`, with an underscore).
pub const SERVER_NAME: &str = "herdr-link";

/// The Tier-0 hint sent as `instructions` inside Herdr (never the Contract).
const HINT: &str = "Herdr Link gateway: activate it only when the user explicitly asks to use Herdr or when handling an inbound Herdr Link message.";

/// The MCP handler: tool list and tool calls over the core library.
#[derive(Debug, Clone)]
pub struct LinkServer {
    context_dir: Arc<PathBuf>,
    /// Tool calls run one at a time, in arrival order (like a sequential stdio loop), so a
    /// host that fires `send` and then `close` in one turn gets them in that order.
    calls: Arc<tokio::sync::Mutex<()>>,
    /// The activation shared with the guard hook; set on activation (`None` inside: sharing
    /// failed, see the operator log).
    shared: Arc<OnceLock<Option<Shared>>>,
    /// The host named on the command line (`None`: from `initialize`'s client name).
    host: Option<McpHost>,
    /// The registration name in the host.
    server_name: Arc<String>,
}

impl LinkServer {
    /// A server whose `herdr_link_start` reads `.agents/agent_config.json` under
    /// `context_dir`, for `host` (or the host the client names) where it is registered as
    /// `server_name` (default `herdr_link`).
    pub fn new(context_dir: PathBuf, host: Option<McpHost>, server_name: Option<String>) -> Self {
        LinkServer {
            context_dir: Arc::new(context_dir),
            calls: Arc::new(tokio::sync::Mutex::new(())),
            shared: Arc::new(OnceLock::new()),
            host,
            server_name: Arc::new(
                server_name.unwrap_or_else(|| presentation::MCP_SERVER_NAME.to_string()),
            ),
        }
    }

    /// How this connection's host names the tools: the `--host` flag, else the client name
    /// the host gave in `initialize` or, where there is no `initialize` (MCP 2026-07-28, as
    /// Claude Code 2.1.332 speaks it), in the request's `_meta` clientInfo; else an unknown host.
    fn naming(&self, context: &RequestContext<RoleServer>) -> McpNaming {
        let client = context
            .peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
            .or_else(|| context.meta.client_info().map(|i| i.name));
        self.naming_for(client.as_deref())
    }

    /// The naming for a client that gave `client` as its name.
    fn naming_for(&self, client: Option<&str>) -> McpNaming {
        let host = self
            .host
            .unwrap_or_else(|| client.map_or(McpHost::Other, McpHost::from_client_name));
        McpNaming {
            host,
            server: self.server_name.as_ref().clone(),
        }
    }

    /// Runs one tool call to its end (blocking while Herdr's CLI runs) and shares the
    /// activation with the hook before the result goes out, so the model's next Bash call
    /// already sees it.
    fn run_call(&self, request: CallToolRequestParams, naming: &McpNaming) -> Ran {
        let name = request.name.into_owned();
        let input = request.arguments.unwrap_or_default();
        let outcome = tools::call_in_style(
            Some(Style::Mcp),
            SESSION,
            &name,
            input,
            Some(&self.context_dir),
        );
        if outcome.active && self.shared.get().is_none() {
            self.share_activation();
        }
        // The core decides which calls carry the Contract (the call that activated the
        // session, success or Link error, and every activation call); the text names the tools
        // as this host shows them.
        let contract = outcome
            .contract
            .is_some()
            .then(|| presentation::mcp_contract(naming));
        let result = match outcome.result {
            Ok(value) => Ok(text_result(value.to_string(), contract, false)),
            Err(e @ CallError::Link(_)) => Ok(text_result(e.message(), contract, true)),
            Err(e @ CallError::InvalidRequest(_)) => {
                Err(ErrorData::invalid_params(e.message(), None))
            }
        };
        Ran {
            result,
            tools_changed: outcome.tools_changed,
        }
    }

    /// Answers a tool call the transport's threads read (the classic lifecycle): the frames to
    /// write, `notifications/tools/list_changed` first when the call changed the tool list.
    pub fn answer(
        &self,
        request: CallToolRequestParams,
        id: RequestId,
        client: Option<&str>,
    ) -> Vec<u8> {
        let ran = self.run_call(request, &self.naming_for(client));
        let mut frames = Vec::new();
        if ran.tools_changed {
            frames = transport::frame(&ServerJsonRpcMessage::notification(
                ServerNotification::ToolListChangedNotification(ToolListChangedNotification {
                    method: Default::default(),
                    extensions: Default::default(),
                }),
            ));
        }
        frames.extend(transport::frame(&match ran.result {
            Ok(result) => {
                // The shape rmcp gives a session that negotiated a version with `initialize`.
                let mut result = ServerResult::CallToolResult(result);
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        }));
        frames
    }

    /// Records the activation for the hook (once per process). Failures are logged, never
    /// shown to the model: without the record the hook allows, as for a dormant session.
    fn share_activation(&self) {
        self.shared.get_or_init(|| {
            let started = Instant::now();
            let session = std::env::var("CLAUDE_CODE_SESSION_ID").ok();
            let shared = Shared::activate(session.as_deref());
            if let Err(detail) = &shared {
                oplog::Entry::new(SESSION, "guard", "share_failed", detail)
                    .action(Some("share"))
                    .since(started)
                    .record();
            }
            shared.ok()
        });
    }

    /// Removes the shared record (the server is ending).
    fn unshare(&self) {
        if let Some(Some(s)) = self.shared.get() {
            s.remove();
        }
    }
}

/// The view `tools/list` presents right now.
pub fn current_view() -> View {
    if env::gate().is_none() {
        View::Outside
    } else if session::is_active(SESSION) {
        View::Active
    } else {
        View::Dormant
    }
}

/// The MCP tool definitions for `view`, named for the host as `naming` says.
pub fn tool_list(view: View, naming: &McpNaming) -> Vec<Tool> {
    presentation::mcp_tools(view, naming)
        .into_iter()
        .map(|t| {
            let schema = match t.input_schema {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            Tool::new(t.name, t.description, Arc::new(schema))
        })
        .collect()
}

/// What one tool call produced, for either way of answering it.
struct Ran {
    result: Result<CallToolResult, ErrorData>,
    /// The call changed the tool list (`notifications/tools/list_changed` goes first).
    tools_changed: bool,
}

fn text_result(text: String, contract: Option<String>, is_error: bool) -> CallToolResult {
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(contract.map(ContentBlock::text));
    let mut result = if is_error {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    };
    if !is_error {
        // A success carries only `content` (no `isError: false`).
        result.is_error = None;
    }
    result
}

impl ServerHandler for LinkServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")));
        if env::gate().is_some() {
            config.with_instructions(HINT)
        } else {
            config
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_list(
            current_view(),
            &self.naming(&context),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let naming = self.naming(&context);
        let _turn = self.calls.lock().await;
        let me = self.clone();
        let ran = tokio::task::spawn_blocking(move || me.run_call(request, &naming))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool call failed: {e}"), None))?;
        if ran.tools_changed {
            // Written before this returns, so the host sees it before the response.
            let _ = context.peer.notify_tool_list_changed().await;
        }
        ran.result.map(Into::into)
    }
}

/// Serves MCP on stdin/stdout until EOF; returns the process exit code.
pub fn run(context_dir: PathBuf, host: Option<McpHost>, server_name: Option<String>) -> i32 {
    crate::doctor::mcp_startup_hint();
    let bootstrap = identity::bootstrap_in_background(SESSION);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("herdr-link mcp: cannot start the runtime: {e}");
            return 1;
        }
    };
    let code = runtime.block_on(async move {
        // At EOF, requests already read may still be running a Herdr call (at most the start
        // limit); wait for them so their answers are written.
        let drain = env::start_timeout() + Duration::from_secs(5);
        let server = LinkServer::new(context_dir, host, server_name);
        let direct = server.clone();
        let answer: transport::Answer =
            Arc::new(move |request, id, client| direct.answer(request, id, client));
        let transport = match LineTransport::start(answer, drain) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("herdr-link mcp: cannot start reading stdin: {e}");
                return 1;
            }
        };
        let handle = server.clone();
        let code = match server.serve(transport).await {
            Ok(running) => match running.waiting().await {
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("herdr-link mcp: {e}");
                    1
                }
            },
            // EOF before `initialize` is an ordinary end.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => 0,
            Err(e) => {
                eprintln!("herdr-link mcp: {e}");
                1
            }
        };
        // The connection is over: so is the activation the hook may see.
        handle.unshare();
        code
    });
    // Do not wait for anything still running on the blocking pool.
    runtime.shutdown_background();
    // Every call answered has its operator-log line queued: write them before the process ends.
    oplog::flush(LOG_GRACE);
    // Let a startup bootstrap still talking to Herdr finish (briefly), so no Herdr call it made
    // outlives the server.
    if let Some(handle) = bootstrap {
        let deadline = std::time::Instant::now() + BOOTSTRAP_GRACE;
        while !handle.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    code
}

/// How long an exiting server waits for its queued operator-log lines to be written.
const LOG_GRACE: Duration = Duration::from_secs(2);
/// How long an exiting server waits for its startup bootstrap.
const BOOTSTRAP_GRACE: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use herdr_link::protocol::{ACTIVATE, GATEWAY};
    use herdr_link::OPERATIONS;

    /// tools/list is the operation table: the gateway, then every operation's tool once active,
    /// and the gateway's actions are `activate` and every operation's action; nothing else.
    #[test]
    fn tools_list_is_the_operation_table() {
        let naming = McpNaming::default();
        let names = |view| -> Vec<String> {
            tool_list(view, &naming)
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect()
        };
        let tier1 = OPERATIONS.iter().map(|op| op.tool.to_string());
        let active: Vec<String> = std::iter::once(GATEWAY.to_string()).chain(tier1).collect();
        assert_eq!(names(View::Active), active);
        assert_eq!(names(View::Dormant), [GATEWAY]);
        assert!(names(View::Outside).is_empty());
        let actions: Vec<&str> = std::iter::once(ACTIVATE)
            .chain(OPERATIONS.iter().map(|op| op.action))
            .collect();
        for view in [View::Dormant, View::Active] {
            let gateway = tool_list(view, &naming).remove(0);
            assert_eq!(
                gateway.input_schema["properties"]["action"]["enum"],
                serde_json::json!(actions)
            );
        }
    }
}
