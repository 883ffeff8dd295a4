//! The MCP server's stdio: threads that read requests, answer Link's tool calls themselves, and
//! hand every other message to rmcp's service loop through [`LineTransport`].
//!
//! A tool call is most of what a host asks, and each one spends most of its time spawning
//! Herdr's CLI; what the transport adds is wake-ups between threads. So a `tools/call` is run on
//! the thread that read it, whose answer goes straight to stdout: the host's write wakes that
//! thread, and its write wakes the host. Before running the call, the thread hands the reader
//! to a second thread (leader and follower), so requests are still read meanwhile: pings and
//! `tools/list` are answered, a cancellation is seen, and EOF is noticed. Calls read during a
//! call wait in a queue and run in arrival order after it, one at a time (a host that sends
//! `send` then `close` in one turn gets them in that order).
//!
//! Only in the classic lifecycle (an `initialize` for a version that has it, first) are calls
//! answered directly, in the shape rmcp gives such a session (`crate::mcp`), and not before rmcp
//! has written `initialize`'s answer. Every other message goes to rmcp, as does every tool call
//! of a session that starts without `initialize` (MCP 2026-07-28, whose lifecycle rmcp decides).
//! A call of a classic session that names its own protocol version in `_meta` is rmcp's to
//! answer too, but it keeps its place in the queue: it is handed to rmcp in its turn and waited
//! for, so neither way of answering overtakes the other.
//!
//! Frames from rmcp, from the direct calls and from the framing fixes ([`crate::framing`]) are
//! written whole under stdout's lock, one write per frame (a call that changed the tool list
//! writes its `notifications/tools/list_changed` and its response together, in that order). At
//! EOF every request already read is answered (bounded) before the service loop is told the
//! stream ended; the answer to a cancelled call is dropped, and a cancelled call still waiting
//! in the queue never runs.

use std::collections::{HashSet, VecDeque};
use std::io::{BufReader, Stdin, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, ErrorData, JsonRpcMessage, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::sync::{mpsc, watch};

use herdr_link::oplog;

use crate::framing::{classify, error_frame, Line, LineReader, Read};

/// Answers one tool call read by the transport's threads: given the call, its id and the
/// client's name from `initialize`, the bytes to write (whole JSON-RPC frames, each ending in
/// `\n`). It runs on a reader thread and may block for as long as the call takes.
pub type Answer =
    Arc<dyn Fn(CallToolRequestParams, RequestId, Option<&str>) -> Vec<u8> + Send + Sync>;

/// How long a call read right after `initialize` waits for rmcp to answer `initialize`.
const INITIALIZE_WAIT: Duration = Duration::from_secs(5);

/// Buffer size of the stdin reader.
const READ_BUFFER: usize = 64 * 1024;

/// Which lifecycle the session follows, as far as the transport needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lifecycle {
    /// No request but pings or discovery yet.
    Unknown,
    /// `initialize` came first; `answered` once rmcp has written its answer.
    Classic {
        initialize: RequestId,
        answered: bool,
    },
    /// Another request came first: rmcp answers everything.
    Other,
}

/// A tool call of a classic-lifecycle session, run by the transport's threads in arrival order.
struct Call {
    id: RequestId,
    how: How,
}

/// How a [`Call`] is answered.
enum How {
    /// Run here, its answer written by the thread that runs it.
    Direct(Box<CallToolRequestParams>),
    /// Handed to rmcp (it names its own protocol version) when its turn comes, and waited for.
    Rmcp(Box<ClientJsonRpcMessage>),
}

/// What [`State::route`] decided for one message.
enum Route {
    /// For rmcp's service loop.
    Rmcp(Box<ClientJsonRpcMessage>),
    /// A call to run now, on this thread.
    Run(Box<Call>),
    /// Nothing more to do here (a call queued behind the running one).
    Done,
}

/// What the reader threads share, under one lock.
struct State {
    /// The stdin reader, held by the thread that reads (taken out of here while it reads).
    reader: Option<LineReader<BufReader<Stdin>>>,
    /// Threads waiting to take the reader.
    waiting: usize,
    /// Calls read while another runs, in arrival order.
    queue: VecDeque<Call>,
    /// Whether a thread is running calls.
    running: bool,
    /// Ids of calls queued or running.
    direct: HashSet<RequestId>,
    /// Ids of running calls the client cancelled (their answers are dropped).
    cancelled: HashSet<RequestId>,
    /// Set once an `initialize` request was delivered (see [`classify`]).
    initialized: bool,
    lifecycle: Lifecycle,
    /// The client's name from `initialize`.
    client: Option<String>,
    /// Messages for rmcp; dropped at EOF, which ends rmcp's input once it has read the rest.
    to_rmcp: Option<mpsc::UnboundedSender<ClientJsonRpcMessage>>,
    /// Stdin ended (or failed).
    ended: bool,
}

/// The transport's shared half: the state, stdout, the requests not answered yet.
struct Shared {
    state: Mutex<State>,
    /// Signalled when the reader is put back, the input ends, or `initialize` is answered.
    changed: Condvar,
    /// Ids of requests read and not answered yet (rmcp's and direct ones).
    pending: watch::Sender<HashSet<RequestId>>,
    answer: Answer,
    /// The longest a call handed to rmcp in its turn is waited for.
    rmcp_wait: Duration,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes whole frames to stdout, under its lock so frames never interleave.
    fn write(&self, frames: &[u8]) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(frames).and_then(|()| out.flush())
    }

    /// Marks a request answered (or cancelled). Called with the state unlocked: a call handed
    /// to rmcp is waited for under the state's lock and [`Self::changed`].
    fn unpend(&self, id: &RequestId) {
        self.unpend_locked(id);
        drop(self.lock());
        self.changed.notify_all();
    }

    /// [`Self::unpend`] for a caller that holds the state's lock (it notifies `changed`).
    fn unpend_locked(&self, id: &RequestId) {
        self.pending.send_modify(|p| {
            p.remove(id);
        });
    }

    /// Waits until the reader is free and takes it; `None` once the input has ended.
    fn take_reader(&self) -> Option<LineReader<BufReader<Stdin>>> {
        let mut st = self.lock();
        loop {
            if let Some(r) = st.reader.take() {
                return Some(r);
            }
            if st.ended {
                return None;
            }
            st.waiting += 1;
            st = self
                .changed
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
            st.waiting -= 1;
        }
    }

    /// The input ended: waiting threads leave, and rmcp's input ends after what it was given
    /// (once the calls still queued have had their turn, as some go to rmcp).
    fn end(&self) {
        let mut st = self.lock();
        st.ended = true;
        if !st.running {
            st.to_rmcp = None;
        }
        drop(st);
        self.changed.notify_all();
    }

    /// Waits (bounded) until rmcp has answered `initialize`, so no call's answer comes first.
    fn wait_for_initialize(&self) {
        let unanswered = |st: &mut State| {
            matches!(
                st.lifecycle,
                Lifecycle::Classic {
                    answered: false,
                    ..
                }
            )
        };
        let _ = self
            .changed
            .wait_timeout_while(self.lock(), INITIALIZE_WAIT, unanswered);
    }

    /// Runs `call`, then every call queued behind it, each to its end before the next.
    fn run_calls(&self, mut call: Call) {
        loop {
            self.wait_for_initialize();
            let id = call.id.clone();
            match call.how {
                How::Direct(params) => self.run_direct(*params, &id),
                How::Rmcp(message) => self.run_in_rmcp(*message, &id),
            }
            let mut st = self.lock();
            st.direct.remove(&id);
            st.cancelled.remove(&id);
            match st.queue.pop_front() {
                Some(next) => call = next,
                None => {
                    st.running = false;
                    if st.ended {
                        st.to_rmcp = None;
                    }
                    return;
                }
            }
        }
    }

    /// Runs a call here and writes its answer (unless the client cancelled it meanwhile).
    fn run_direct(&self, params: CallToolRequestParams, id: &RequestId) {
        let client = self.lock().client.clone();
        let answer = &self.answer;
        // The call's operator-log line goes to the log writer once the answer is out.
        let log = oplog::hold();
        let frames = catch_unwind(AssertUnwindSafe(|| {
            answer(params, id.clone(), client.as_deref())
        }))
        .unwrap_or_else(|_| internal_error(id));
        if !self.lock().cancelled.contains(id) {
            // A host that stopped reading loses the answer (its pipe is gone).
            let _ = self.write(&frames);
        }
        drop(log);
        self.unpend(id);
    }

    /// Hands a call to rmcp and waits (bounded) until it is answered or cancelled, so the
    /// calls behind it do not overtake it.
    fn run_in_rmcp(&self, message: ClientJsonRpcMessage, id: &RequestId) {
        let st = self.lock();
        let handed = st
            .to_rmcp
            .as_ref()
            .is_some_and(|to_rmcp| to_rmcp.send(message).is_ok());
        if !handed {
            drop(st);
            self.unpend(id);
            return;
        }
        let _ = self
            .changed
            .wait_timeout_while(st, self.rmcp_wait, |_| self.pending.borrow().contains(id));
    }
}

/// The answer to a call whose handler panicked (it never should: the core catches its own).
fn internal_error(id: &RequestId) -> Vec<u8> {
    let error = ErrorData::internal_error("tool call failed", None);
    frame(&ServerJsonRpcMessage::error(error, Some(id.clone())))
}

/// One JSON-RPC frame: the message and `\n`.
pub fn frame(message: &ServerJsonRpcMessage) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

impl State {
    /// Decides where a delivered message goes, and keeps the books on requests.
    fn route(&mut self, message: ClientJsonRpcMessage, shared: &Shared) -> Route {
        match message {
            JsonRpcMessage::Request(mut r) => {
                match &r.request {
                    ClientRequest::InitializeRequest(init) => {
                        self.initialized = true;
                        if self.lifecycle == Lifecycle::Unknown {
                            // A client asking `initialize` for a version without it gets an
                            // older one from rmcp; leave such a session to rmcp entirely.
                            self.lifecycle = if init.params.protocol_version.has_initialize() {
                                self.client = Some(init.params.client_info.name.clone());
                                Lifecycle::Classic {
                                    initialize: r.id.clone(),
                                    answered: false,
                                }
                            } else {
                                Lifecycle::Other
                            };
                        }
                    }
                    ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => {}
                    _ => {
                        if self.lifecycle == Lifecycle::Unknown {
                            self.lifecycle = Lifecycle::Other;
                        }
                    }
                }
                let id = r.id.clone();
                shared.pending.send_modify(|p| {
                    p.insert(id.clone());
                });
                let classic = matches!(self.lifecycle, Lifecycle::Classic { .. });
                match r.request {
                    ClientRequest::CallToolRequest(call) if classic => {
                        // A call naming its own protocol version in `_meta` is answered as that
                        // version says: rmcp's part, in its turn.
                        let how = if names_version(&call) {
                            r.request = ClientRequest::CallToolRequest(call);
                            How::Rmcp(Box::new(JsonRpcMessage::Request(r)))
                        } else {
                            How::Direct(Box::new(call.params))
                        };
                        let call = Call {
                            id: id.clone(),
                            how,
                        };
                        self.direct.insert(id);
                        if self.running {
                            self.queue.push_back(call);
                            Route::Done
                        } else {
                            self.running = true;
                            Route::Run(Box::new(call))
                        }
                    }
                    request => {
                        r.request = request;
                        Route::Rmcp(Box::new(JsonRpcMessage::Request(r)))
                    }
                }
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = c.params.request_id.clone() {
                        // rmcp drops the answer of a cancelled request: so do the direct calls,
                        // and a call still queued never runs.
                        if self.direct.contains(&id) {
                            let queued = self.queue.len();
                            self.queue.retain(|d| d.id != id);
                            if self.queue.len() < queued {
                                self.direct.remove(&id);
                            } else {
                                self.cancelled.insert(id.clone());
                            }
                        }
                        shared.unpend_locked(&id);
                        shared.changed.notify_all();
                    }
                }
                Route::Rmcp(Box::new(JsonRpcMessage::Notification(n)))
            }
            other => Route::Rmcp(Box::new(other)),
        }
    }
}

/// Whether a call names its protocol version in `_meta` (the inline negotiation of MCP
/// 2026-07-28). rmcp moves a request's `_meta` into its extensions as it reads it.
fn names_version(call: &CallToolRequest) -> bool {
    call.extensions
        .get::<RequestMetaObject>()
        .or(call.params.meta.as_ref())
        .is_some_and(|m| m.protocol_version().is_some())
}

/// One reader thread: takes the reader, reads and routes lines until it runs a call (then hands
/// the reader on) or the input ends.
fn read_requests(shared: Arc<Shared>) {
    while let Some(mut reader) = shared.take_reader() {
        loop {
            match reader.read_line() {
                Ok(Read::Line) => {}
                Ok(Read::Oversized) => {
                    let _ = shared.write(&error_frame(
                        None,
                        -32600,
                        "Invalid Request: message too large",
                    ));
                    continue;
                }
                Ok(Read::Eof) | Err(_) => {
                    // A final line without a newline is incomplete: it is not processed.
                    shared.end();
                    return;
                }
            }
            // Only this thread changes `initialized`, so it may classify outside the lock.
            let initialized = shared.lock().initialized;
            let message = match classify(reader.line(), initialized) {
                Line::Deliver(message) => message,
                Line::Reply(frame) => {
                    let _ = shared.write(&frame);
                    continue;
                }
                Line::Drop => continue,
            };
            let mut st = shared.lock();
            match st.route(*message, &shared) {
                Route::Rmcp(message) => {
                    if let Some(to_rmcp) = &st.to_rmcp {
                        let _ = to_rmcp.send(*message);
                    }
                }
                Route::Done => {}
                Route::Run(call) => {
                    st.reader = Some(reader);
                    let nobody_waits = st.waiting == 0;
                    drop(st);
                    if nobody_waits {
                        // If no thread can be started, this one reads again after the call.
                        let _ = spawn_reader(&shared);
                    } else {
                        shared.changed.notify_all();
                    }
                    shared.run_calls(*call);
                    break;
                }
            }
        }
    }
}

fn spawn_reader(shared: &Arc<Shared>) -> std::io::Result<()> {
    let shared = shared.clone();
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || read_requests(shared))
        .map(drop)
}

/// rmcp's side of the stdio: the messages the reader threads pass on, and stdout.
pub struct LineTransport {
    shared: Arc<Shared>,
    from_readers: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    /// The longest EOF waits for unanswered requests.
    drain_limit: Duration,
}

impl LineTransport {
    /// Starts reading stdin (tool calls answered by `answer`) and returns rmcp's transport; at
    /// EOF it waits up to `drain_limit` for requests already read to be answered (and as long,
    /// at most, for a call handed to rmcp in its turn).
    pub fn start(answer: Answer, drain_limit: Duration) -> std::io::Result<Self> {
        let (to_rmcp, from_readers) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                reader: Some(LineReader::new(BufReader::with_capacity(
                    READ_BUFFER,
                    std::io::stdin(),
                ))),
                waiting: 0,
                queue: VecDeque::new(),
                running: false,
                direct: HashSet::new(),
                cancelled: HashSet::new(),
                initialized: false,
                lifecycle: Lifecycle::Unknown,
                client: None,
                to_rmcp: Some(to_rmcp),
                ended: false,
            }),
            changed: Condvar::new(),
            pending: watch::channel(HashSet::new()).0,
            answer,
            rmcp_wait: drain_limit,
        });
        spawn_reader(&shared)?;
        Ok(LineTransport {
            shared,
            from_readers,
            drain_limit,
        })
    }

    /// After EOF: waits (bounded) until every request read has been answered.
    async fn drain(&mut self) {
        let mut rx = self.shared.pending.subscribe();
        let _ = tokio::time::timeout(self.drain_limit, rx.wait_for(HashSet::is_empty)).await;
    }
}

impl Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            let answered = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let written = shared.write(&bytes);
            if let Some(id) = answered {
                let mut st = shared.lock();
                let initialize_answered = match &mut st.lifecycle {
                    Lifecycle::Classic {
                        initialize,
                        answered,
                    } if *initialize == id && !*answered => {
                        *answered = true;
                        true
                    }
                    _ => false,
                };
                drop(st);
                if initialize_answered {
                    shared.changed.notify_all();
                }
                shared.unpend(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let Some(message) = self.from_readers.recv().await {
            return Some(message);
        }
        self.drain().await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
