//! The stdio server: reads newline-delimited JSON-RPC from `input`, answers
//! on `output`, and runs each `tools/call` in its own task.
//!
//! # Tasks
//!
//! - The reader (the body of [`serve`]) owns `input` and a persistent line
//!   buffer ([`LineReader`]). It decodes each line, keeps the lifecycle state,
//!   answers the methods that never wait (`initialize`, `ping`, the `*/list`
//!   methods, `prompts/get`, `logging/setLevel`, and every error) directly,
//!   and spawns one task per `tools/call`, `resources/read` and
//!   `completion/complete` (they may wait on the application). Handling the quick methods inline keeps the lifecycle
//!   ordered: a `tools/list` pipelined right behind `initialize` sees the
//!   server initialized. Nothing the reader does waits on a tool.
//! - The writer ([`write_messages`]) is the only code that touches `output`:
//!   everyone else queues a [`Message`] in the [`Outbox`]. One compact JSON
//!   value per line, flushed after each.
//! - A call task runs the tool's future and queues its response through the
//!   request's [`RequestGate`], which is also what stops progress
//!   notifications once the response is queued or the call is cancelled.
//!
//! # Shutdown
//!
//! Only the end of `input` (or an unrecoverable error reading it or writing
//! `output`) ends the server; no message does. On EOF the reader stops
//! reading, then: (1) it cancels the shutdown token, whose children are the
//! cancellation tokens of all in-flight calls; (2) it closes every in-flight
//! request's gate, so nothing those calls produce from now on is sent;
//! (3) it gives the call tasks [`SHUTDOWN_GRACE`] to return, then aborts the
//! rest; (4) it tells the writer to stop, and the writer writes what was
//! already queued, flushes, shuts `output` down and returns (if the client
//! no longer reads, the writer is abandoned after [`FLUSH_GRACE`]). Then
//! `serve` returns `Ok(())` and the binary exits 0. A failed write to
//! `output` ends the server the same way, but `serve` returns the error.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{self, ErrorCode, Id, Incoming, Message, Response, RpcError};
use super::{
    BoxFuture, CallContext, CallToolResult, CompletionRef, CompletionRequest, Implementation,
    LogLevel, Logger, Outbox, Progress, RequestGate, Service, ServiceError,
};
use modern::Era;

mod modern;

pub use modern::MODERN_VERSION;

/// `-32002`: the resource-not-found code of the legacy revisions.
pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// At most this many values in one `completion/complete` answer (the spec's cap).
pub const MAX_COMPLETIONS: usize = 100;

/// The `initialize` revisions served, newest first ("legacy" era); the
/// stateless [`MODERN_VERSION`] is served beside them (see `modern.rs` and
/// `protocol/mcp.md`).
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The answer to a client that offers a revision we do not serve.
pub const LATEST_VERSION: &str = SUPPORTED_VERSIONS[0];

/// How long call tasks get to return after stdin ends before they are
/// aborted. Tools watch `ctx.cancel`, so they normally need far less.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// How long the writer gets, after stdin ended, to write what is queued.
/// Only reached if the client stopped reading our output.
pub const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// The answer to `initialize`: the version to speak, given the offer.
/// Echo a supported offer, else our newest (the client decides whether to
/// disconnect); never an error.
pub fn negotiate(offered: &str) -> &'static str {
    SUPPORTED_VERSIONS
        .into_iter()
        .find(|v| *v == offered)
        .unwrap_or(LATEST_VERSION)
}

/// The default bound on output bytes queued for a client that does not
/// read ([`serve_with`]); `Limits::stdout_queue` in the binary.
pub const DEFAULT_MAX_QUEUED: usize = 4 << 20;

/// Serves MCP on `input`/`output` until `input` ends, with the default
/// output bound.
///
/// Lines longer than `max_line` bytes (newline excluded) are discarded and
/// answered with an error; the server keeps going.
pub async fn serve<R, W>(
    input: R,
    output: W,
    service: Arc<dyn Service>,
    max_line: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, service, max_line, DEFAULT_MAX_QUEUED).await
}

/// [`serve`], with backpressure: while `max_queued` bytes or more wait to be
/// written to `output` (the client is not reading), no more input is read,
/// so the client's own writes block instead of our memory growing. Calls
/// already running still answer; every request is answered once the client
/// reads again.
pub async fn serve_with<R, W>(
    input: R,
    output: W,
    service: Arc<dyn Service>,
    max_line: usize,
    max_queued: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let writer_stop = CancellationToken::new();
    let writer_failed = CancellationToken::new();
    let queued = Arc::new(Queued::new(max_queued));
    let writer = tokio::spawn(write_messages(
        output,
        rx,
        writer_stop.clone(),
        writer_failed.clone(),
        queued.clone(),
    ));

    let mut server = Server::new(service, Outbox(tx), queued.clone());
    let mut lines = LineReader::new(input, max_line);
    let read_result = loop {
        let line = tokio::select! {
            line = async {
                queued.room().await;
                lines.next_line().await
            } => line,
            _ = writer_failed.cancelled() => break Ok(()),
        };
        match line {
            Ok(Some(Line::Complete(bytes))) => server.handle_line(&bytes),
            Ok(Some(Line::TooLong)) => {
                eprintln!("mcp: discarded an input line longer than {max_line} bytes");
                let error = RpcError::invalid_request(format!("line longer than {max_line} bytes"));
                server.outbox.send(Response::error(None, error));
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e).context("reading the input"),
        }
        server.reap();
    };

    server.shut_down().await;
    drop(server);
    writer_stop.cancel();
    let abort = writer.abort_handle();
    let write_result = match tokio::time::timeout(FLUSH_GRACE, writer).await {
        Ok(Ok(result)) => result.context("writing the output"),
        Ok(Err(e)) => Err(anyhow::anyhow!("the output writer failed: {e}")),
        Err(_) => {
            // Nobody reads our output: give up on the queued messages
            // rather than hang after EOF.
            eprintln!("mcp: output not drained within {FLUSH_GRACE:?}; dropping queued messages");
            abort.abort();
            Ok(())
        }
    };
    read_result.and(write_result)
}

/// Requests read but not started (their task waits for output room) at
/// which the reader stops reading.
const MAX_WAITING: usize = 1024;

/// The least answer size assumed for a started request.
const ANSWER_FLOOR: usize = 16 << 10;

/// Requests that may always run at once while the queue is under its
/// bound, whatever their answers' size: waits that sit for seconds must
/// not hold back other calls' start (a wait started late misses output).
const ALWAYS_STARTED: usize = 32;

/// Backpressure: output bytes serialized and not yet written, and the
/// requests whose answers are still to come, against one bound.
///
/// A request's task starts its work only while the queue is under the
/// bound and either fewer than [`ALWAYS_STARTED`] requests run or their
/// answers (each counted at the running average line size) fit under it
/// too. So a client that stops reading costs about the bound plus
/// [`ALWAYS_STARTED`] answers, not one answer per request it sent. The
/// reader stops reading while the queue is over the bound or
/// [`MAX_WAITING`] requests wait to start; otherwise it keeps reading, so
/// `ping` and cancellations are handled while calls wait to start.
struct Queued {
    bytes: AtomicUsize,
    bound: usize,
    /// Requests started and not answered yet.
    started: AtomicUsize,
    /// Requests read and not started yet.
    waiting: AtomicUsize,
    /// A running average of the lines written.
    typical: AtomicUsize,
    /// Woken when a line is written or a request is answered.
    drained: tokio::sync::Notify,
}

impl Queued {
    fn new(bound: usize) -> Self {
        Queued {
            bytes: AtomicUsize::new(0),
            bound,
            started: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            typical: AtomicUsize::new(ANSWER_FLOOR),
            drained: tokio::sync::Notify::new(),
        }
    }

    fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
        let typical = self.typical.load(Ordering::Relaxed);
        self.typical.store((typical * 7 + n) / 8, Ordering::Relaxed);
    }

    fn written(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    /// Waits until `ready` holds, rechecking each time output drains.
    async fn until(&self, ready: impl Fn() -> bool) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if ready() {
                return;
            }
            drained.await;
        }
    }

    /// Resolves once the reader may read another request.
    async fn room(&self) {
        self.until(|| {
            self.bytes.load(Ordering::Acquire) < self.bound
                && self.waiting.load(Ordering::Acquire) < MAX_WAITING
        })
        .await
    }

    /// A request was read; its task will [`start`](Self::start).
    fn read(&self) {
        self.waiting.fetch_add(1, Ordering::AcqRel);
    }

    /// Resolves when a request's work may start: the queue is under its
    /// bound, and fewer than [`ALWAYS_STARTED`] requests run or the answers
    /// of those already started fit too.
    async fn start(&self) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            let started = self.started.load(Ordering::Acquire);
            let typical = self.typical.load(Ordering::Relaxed).max(ANSWER_FLOOR);
            let bytes = self.bytes.load(Ordering::Acquire);
            let fits = bytes < self.bound
                && (started < ALWAYS_STARTED
                    || bytes + started.saturating_mul(typical) < self.bound);
            if !fits {
                drained.await;
                continue;
            }
            let next = started + 1;
            if self
                .started
                .compare_exchange(started, next, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                self.not_waiting();
                return;
            }
        }
    }

    /// A request that waited to start was cancelled.
    fn not_waiting(&self) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    /// A started request has queued its answer (or was cancelled).
    fn answered(&self) {
        self.started.fetch_sub(1, Ordering::AcqRel);
        self.drained.notify_waiters();
    }
}

/// The writer task: the only code that writes `output`.
///
/// Two stages: one serializes each message as it is queued (counting its
/// bytes in `queued`), the other writes the lines out. After `stop` fires
/// the first takes the messages queued at that moment, then the output is
/// shut down once they are written. On a write error it fires `failed`
/// (the reader then stops).
async fn write_messages<W>(
    mut output: W,
    queue: mpsc::UnboundedReceiver<Message>,
    stop: CancellationToken,
    failed: CancellationToken,
    queued: Arc<Queued>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
    let serializer = tokio::spawn(serialize_messages(queue, stop, lines_tx, queued.clone()));
    let result = async {
        while let Some(line) = lines.recv().await {
            let written = output.write_all(&line).await.and(output.flush().await);
            queued.written(line.len());
            written?;
        }
        output.shutdown().await
    }
    .await;
    serializer.abort();
    if let Err(e) = &result {
        eprintln!("mcp: cannot write the output: {e}");
        failed.cancel();
    }
    result
}

/// The first stage of the writer: messages to lines, counted as queued.
async fn serialize_messages(
    mut queue: mpsc::UnboundedReceiver<Message>,
    stop: CancellationToken,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    queued: Arc<Queued>,
) {
    let forward = |message: &Message| {
        let Some(line) = message_line(message) else {
            return true;
        };
        queued.add(line.len());
        lines.send(line).is_ok()
    };
    loop {
        let message = tokio::select! {
            biased;
            _ = stop.cancelled() => {
                // Exactly what is queued now: a producer that keeps
                // sending (a stray logger clone) cannot hold us here.
                for _ in 0..queue.len() {
                    let Ok(message) = queue.try_recv() else { break };
                    if !forward(&message) {
                        break;
                    }
                }
                break;
            }
            message = queue.recv() => match message {
                Some(message) => message,
                None => break,
            },
        };
        if !forward(&message) {
            break;
        }
    }
}

/// One message as one output line.
fn message_line(message: &Message) -> Option<Vec<u8>> {
    // `to_vec` is compact and escapes newlines inside strings, so this is
    // exactly one line.
    let mut line = match serde_json::to_vec(message) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("mcp: dropped a message that does not serialize: {e}");
            return None;
        }
    };
    line.push(b'\n');
    Some(line)
}

/// One input line, or the news that one was too long.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line without its `\n`. A last line without `\n` before EOF counts.
    Complete(Vec<u8>),
    /// A line longer than the bound. Reported as soon as the bound is
    /// crossed; the rest of it, up to its newline, is skipped.
    TooLong,
}

/// Splits bytes into lines with a bound on their length.
///
/// The partial line lives in `self`, not in a future, so `next_line` is
/// cancel-safe (it can sit in a `select!`): the only await is `fill_buf`,
/// and bytes are consumed only after they were copied.
pub struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(input: R, max_line: usize) -> Self {
        LineReader::with_reader(BufReader::new(input), max_line)
    }

    pub fn with_reader(reader: BufReader<R>, max_line: usize) -> Self {
        LineReader {
            reader,
            line: Vec::new(),
            max_line,
            discarding: false,
        }
    }

    /// The next line; `None` at EOF.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                self.discarding = false;
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Complete(std::mem::take(&mut self.line))));
            }
            let (chunk, newline) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            let used = chunk.len() + usize::from(newline);
            if self.discarding {
                self.discarding = !newline;
                self.reader.consume(used);
                continue;
            }
            if self.line.len() + chunk.len() > self.max_line {
                self.line.clear();
                self.discarding = !newline;
                self.reader.consume(used);
                return Ok(Some(Line::TooLong));
            }
            self.line.extend_from_slice(chunk);
            self.reader.consume(used);
            if newline {
                return Ok(Some(Line::Complete(std::mem::take(&mut self.line))));
            }
        }
    }
}

/// A call that has not been answered yet.
struct InFlight {
    cancel: CancellationToken,
    gate: Arc<RequestGate>,
}

type InFlightMap = Arc<Mutex<HashMap<Id, InFlight>>>;

/// Removes a finished request from the map, unless its id was reused.
fn forget(in_flight: &InFlightMap, id: &Id, gate: &Arc<RequestGate>) {
    let mut map = lock(in_flight);
    if map
        .get(id)
        .is_some_and(|call| Arc::ptr_eq(&call.gate, gate))
    {
        map.remove(id);
    }
}

fn lock(map: &InFlightMap) -> std::sync::MutexGuard<'_, HashMap<Id, InFlight>> {
    map.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reader's state: lifecycle, log level, in-flight calls and their tasks.
struct Server {
    service: Arc<dyn Service>,
    outbox: Outbox,
    /// The negotiated revision; `None` until `initialize` succeeded.
    version: Option<&'static str>,
    log_level: Arc<AtomicU8>,
    logger: Logger,
    in_flight: InFlightMap,
    tasks: JoinSet<()>,
    /// Parent of every call's cancellation token.
    shutdown: CancellationToken,
    /// Output room: a request's work starts only when its answer fits.
    queued: Arc<Queued>,
}

impl Server {
    fn new(service: Arc<dyn Service>, outbox: Outbox, queued: Arc<Queued>) -> Self {
        let log_level = Arc::new(AtomicU8::new(Logger::OFF));
        let logger = Logger::new(
            log_level.clone(),
            outbox.clone(),
            &service.implementation().name,
        );
        Server {
            service,
            outbox,
            version: None,
            log_level,
            logger,
            in_flight: Arc::default(),
            tasks: JoinSet::new(),
            shutdown: CancellationToken::new(),
            queued,
        }
    }

    fn handle_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match jsonrpc::decode(line) {
            Err(response) => self.outbox.send(response),
            Ok(Incoming::Notification { method, params }) => {
                self.handle_notification(&method, params)
            }
            Ok(Incoming::Request { id, method, params }) => {
                match self.handle_request(id.clone(), &method, params) {
                    Ok(Some(result)) => self.outbox.send(Response::result(id, result)),
                    Ok(None) => {}
                    Err(error) => self.outbox.send(Response::error(Some(id), error)),
                }
            }
            Ok(Incoming::Response { id }) => {
                let id = id.map_or_else(|| "null".to_owned(), |id| id.to_string());
                eprintln!("mcp: ignored a response (id {id}): this server sends no requests");
            }
        }
    }

    /// `Ok(Some)` is the result to send now, `Ok(None)` means a task answers
    /// later.
    fn handle_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
    ) -> Result<Option<Value>, RpcError> {
        let era = Era::of(method, params.as_ref(), &*self.service)?;
        if let Era::Modern(_) = era {
            return self.handle_modern(id, method, params, era);
        }
        match method {
            "ping" => Ok(Some(json!({}))),
            "initialize" => self.initialize(params).map(Some),
            "tools/list"
            | "tools/call"
            | "logging/setLevel"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
                if self.version.is_none() =>
            {
                Err(RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Server not initialized: send initialize before {method}"),
                ))
            }
            "tools/list" => self.list_tools(params).map(Some),
            "tools/call" => self.call_tool(id, params, &Era::Legacy).map(|()| None),
            "logging/setLevel" => self.set_level(params).map(Some),
            _ => self.handle_feature(id, method, params, &Era::Legacy),
        }
    }

    /// The methods of the optional features; `-32601` for a feature the
    /// service does not serve (it was not declared).
    fn handle_feature(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
        era: &Era,
    ) -> Result<Option<Value>, RpcError> {
        let features = self.service.features();
        match method {
            "resources/list" if features.resources => {
                one_page(params)?;
                Ok(Some(json!({ "resources": self.service.resources() })))
            }
            "resources/templates/list" if features.resources => {
                one_page(params)?;
                Ok(Some(
                    json!({ "resourceTemplates": self.service.resource_templates() }),
                ))
            }
            "resources/read" if features.resources => {
                let params: ReadResourceParams = jsonrpc::parse_params(params)?;
                let read = self.service.read_resource(&params.uri);
                let future = Box::pin(async move {
                    read.await
                        .map(|contents| json!({ "contents": contents }))
                        .map_err(rpc_error)
                });
                let future = era.wrap("resources/read", future);
                self.spawn_request(id, "resources/read".into(), future)
                    .map(|()| None)
            }
            "prompts/list" if features.prompts => {
                one_page(params)?;
                Ok(Some(json!({ "prompts": self.service.prompts() })))
            }
            "prompts/get" if features.prompts => {
                let params: GetPromptParams = jsonrpc::parse_params(params)?;
                let service = &self.service;
                let rendered = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    service.get_prompt(&params.name, params.arguments.unwrap_or_default())
                }))
                .map_err(|panic| {
                    internal_error(format!(
                        "prompt {} panicked: {}",
                        params.name,
                        panic_text(&panic)
                    ))
                })?;
                rendered.map(Some).map_err(rpc_error)
            }
            "completion/complete" if features.completions => {
                let request = completion_request(params)?;
                let values = self.service.complete(request);
                let future = Box::pin(async move {
                    let mut values = values.await;
                    let total = values.len();
                    let mut completion = json!({});
                    if total > MAX_COMPLETIONS {
                        values.truncate(MAX_COMPLETIONS);
                        completion["total"] = json!(total);
                        completion["hasMore"] = json!(true);
                    }
                    completion["values"] = json!(values);
                    Ok(json!({ "completion": completion }))
                });
                let future = era.wrap("completion/complete", future);
                self.spawn_request(id, "completion/complete".into(), future)
                    .map(|()| None)
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    fn handle_notification(&mut self, method: &str, params: Option<Value>) {
        // Never answered, whatever happens (JSON-RPC: no reply to a
        // notification, not even an error).
        match method {
            "notifications/cancelled" => {
                let Ok(params) = jsonrpc::parse_params::<CancelledParams>(params) else {
                    return;
                };
                let Some(id) = params.request_id.as_ref().and_then(Id::from_value) else {
                    return;
                };
                let Some(call) = lock(&self.in_flight).remove(&id) else {
                    return;
                };
                // Close first: from here on nothing is sent for this id.
                call.gate.finish(&self.outbox, None);
                call.cancel.cancel();
            }
            "notifications/initialized" => {}
            _ => {}
        }
    }

    fn initialize(&mut self, params: Option<Value>) -> Result<Value, RpcError> {
        if self.version.is_some() {
            return Err(RpcError::invalid_request("initialize was already received"));
        }
        let params: InitializeParams = jsonrpc::parse_params(params)?;
        let version = negotiate(&params.protocol_version);
        let instructions = self.service.instructions();
        let result = InitializeResult {
            protocol_version: version,
            capabilities: ServerCapabilities::of(self.service.features()),
            server_info: self.service.implementation(),
            instructions: (!instructions.is_empty()).then_some(instructions),
        };
        let result = serde_json::to_value(result).map_err(internal_error)?;
        self.version = Some(version);
        Ok(result)
    }

    fn list_tools(&self, params: Option<Value>) -> Result<Value, RpcError> {
        one_page(params)?;
        Ok(json!({ "tools": self.service.tools() }))
    }

    fn set_level(&self, params: Option<Value>) -> Result<Value, RpcError> {
        let params: SetLevelParams = jsonrpc::parse_params(params)?;
        let level = LogLevel::parse(&params.level).ok_or_else(|| {
            let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
            RpcError::invalid_params(format!(
                "Invalid log level {:?}: expected one of {}",
                params.level,
                names.join(", ")
            ))
        })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        Ok(json!({}))
    }

    fn call_tool(&mut self, id: Id, params: Option<Value>, era: &Era) -> Result<(), RpcError> {
        let params: CallToolParams = jsonrpc::parse_params(params)?;
        let arguments = call_arguments(params.arguments)?;
        if lock(&self.in_flight).contains_key(&id) {
            return Err(RpcError::invalid_request(format!(
                "request id {id} is already in use by a running call"
            )));
        }
        let token = params
            .meta
            .and_then(|meta| meta.progress_token)
            .filter(|t| Id::from_value(t).is_some());
        let gate = RequestGate::new();
        let cancel = self.shutdown.child_token();
        let ctx = CallContext {
            cancel: cancel.clone(),
            progress: Progress::new(token, self.outbox.clone(), gate.clone()),
            log: era.logger(
                &self.logger,
                &self.outbox,
                &self.service.implementation().name,
            ),
        };
        let service = &self.service;
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
            service.call_tool(&params.name, arguments, ctx)
        }));
        let future = match started {
            Ok(Some(future)) => era.wrap("tools/call", wrap_call(future)),
            Ok(None) => {
                return Err(RpcError::invalid_params(
                    self.service.unknown_tool(&params.name),
                ));
            }
            Err(panic) => {
                return Err(internal_error(format!(
                    "tool {} panicked: {}",
                    params.name,
                    panic_text(&panic)
                )));
            }
        };
        let name = format!("tool {}", params.name);
        self.spawn_answer(id, name, cancel, gate, future);
        Ok(())
    }

    /// Runs a request that is not a tool call (`resources/read`,
    /// `completion/complete`) in its own task, cancellable like a call.
    fn spawn_request(
        &mut self,
        id: Id,
        name: String,
        future: BoxFuture<'static, Result<Value, RpcError>>,
    ) -> Result<(), RpcError> {
        if lock(&self.in_flight).contains_key(&id) {
            return Err(RpcError::invalid_request(format!(
                "request id {id} is already in use by a running call"
            )));
        }
        let gate = RequestGate::new();
        let cancel = self.shutdown.child_token();
        self.spawn_answer(id, name, cancel, gate, future);
        Ok(())
    }

    /// Registers the request as in flight and spawns the task that answers it.
    fn spawn_answer(
        &mut self,
        id: Id,
        name: String,
        cancel: CancellationToken,
        gate: Arc<RequestGate>,
        future: BoxFuture<'static, Result<Value, RpcError>>,
    ) {
        lock(&self.in_flight).insert(
            id.clone(),
            InFlight {
                cancel: cancel.clone(),
                gate: gate.clone(),
            },
        );
        let outbox = self.outbox.clone();
        let in_flight = self.in_flight.clone();
        let queued = self.queued.clone();
        queued.read();
        self.tasks.spawn(async move {
            let started = tokio::select! {
                biased;
                _ = cancel.cancelled() => false,
                _ = queued.start() => true,
            };
            if !started {
                // Cancelled (or shutting down) before it began: the
                // cancellation already closed its gate.
                queued.not_waiting();
                forget(&in_flight, &id, &gate);
                return;
            }
            let response = match catch_unwind(future).await {
                Ok(Ok(result)) => Response::result(id.clone(), result),
                Ok(Err(error)) => Response::error(Some(id.clone()), error),
                Err(panic) => {
                    eprintln!("mcp: {name} panicked: {panic}");
                    Response::error(
                        Some(id.clone()),
                        internal_error(format!("{name} panicked: {panic}")),
                    )
                }
            };
            // Does nothing if the call was cancelled (the gate is closed).
            gate.finish(&outbox, Some(response.into()));
            queued.answered();
            forget(&in_flight, &id, &gate);
        });
    }

    /// Forgets finished call tasks so the set does not grow.
    fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Steps (1) to (3) of the shutdown order in the module doc.
    async fn shut_down(&mut self) {
        self.shutdown.cancel();
        for (_, call) in lock(&self.in_flight).drain() {
            call.gate.finish(&self.outbox, None);
        }
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            eprintln!(
                "mcp: aborting {} call(s) that ignored cancellation",
                self.tasks.len()
            );
            self.tasks.shutdown().await;
        }
    }
}

fn internal_error(detail: impl std::fmt::Display) -> RpcError {
    RpcError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("Internal error: {detail}"),
    )
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// A tool call's future as a request answer: the result, serialized.
fn wrap_call(
    future: BoxFuture<'static, CallToolResult>,
) -> BoxFuture<'static, Result<Value, RpcError>> {
    Box::pin(async move { serde_json::to_value(future.await).map_err(internal_error) })
}

/// Rejects a `cursor`: every list is one page, so no cursor is one we issued.
fn one_page(params: Option<Value>) -> Result<(), RpcError> {
    let params: ListParams = jsonrpc::parse_params(params)?;
    match params.cursor {
        Some(cursor) => Err(RpcError::invalid_params(format!(
            "Invalid params: invalid cursor {cursor:?}"
        ))),
        None => Ok(()),
    }
}

/// The JSON-RPC error a failed read or prompt becomes.
fn rpc_error(error: ServiceError) -> RpcError {
    match error {
        ServiceError::ResourceNotFound(_) => RpcError::new(RESOURCE_NOT_FOUND, error.to_string()),
        ServiceError::InvalidParams(_) => RpcError::invalid_params(error.to_string()),
        ServiceError::Internal(detail) => internal_error(detail),
    }
}

/// The `arguments` of a `tools/call`: an object, absent (`{}`), or a JSON
/// string holding an object, which some models send; that string is decoded
/// once (a string inside it is not decoded again).
fn call_arguments(arguments: Option<Value>) -> Result<Value, RpcError> {
    let refused = || RpcError::invalid_params("Invalid params: arguments must be an object");
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(arguments @ Value::Object(_)) => Ok(arguments),
        Some(Value::String(text)) => match serde_json::from_str(&text) {
            Ok(arguments @ Value::Object(_)) => Ok(arguments),
            _ => Err(refused()),
        },
        Some(_) => Err(refused()),
    }
}

/// `completion/complete` params. `argument` is required; a `ref` of an
/// unknown type or shape completes to nothing rather than failing.
fn completion_request(params: Option<Value>) -> Result<CompletionRequest, RpcError> {
    let params: CompleteParams = jsonrpc::parse_params(params)?;
    let reference = match params.reference {
        Some(r) => {
            let field = |key: &str| r.get(key).and_then(Value::as_str).map(str::to_owned);
            match (
                r.get("type").and_then(Value::as_str),
                field("name"),
                field("uri"),
            ) {
                (Some("ref/prompt"), Some(name), _) => CompletionRef::Prompt(name),
                (Some("ref/resource"), _, Some(uri)) => CompletionRef::Resource(uri),
                _ => CompletionRef::Other,
            }
        }
        None => CompletionRef::Other,
    };
    let context = params
        .context
        .and_then(|c| c.arguments)
        .map(|args| {
            args.into_iter()
                .filter(|(_, v)| v.is_string())
                .collect::<Map<String, Value>>()
        })
        .unwrap_or_default();
    Ok(CompletionRequest {
        reference,
        argument: params.argument.name,
        value: params.argument.value,
        context,
    })
}

/// Runs `future`, turning a panic inside it into `Err(message)`: a broken
/// tool gets a `-32603` answer instead of leaving its request unanswered.
async fn catch_unwind<T>(mut future: BoxFuture<'static, T>) -> Result<T, String> {
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic_text(&panic))),
        }
    })
    .await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    /// Required, and must be a string: anything else is `-32602`.
    protocol_version: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult {
    protocol_version: &'static str,
    capabilities: ServerCapabilities,
    server_info: Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
}

/// Only what is served: tools (a fixed list), logging, and the optional
/// features the service serves (fixed lists, no subscriptions).
#[derive(Serialize)]
struct ServerCapabilities {
    tools: ListChanged,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<ResourcesCapability>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<ListChanged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    completions: Option<Map<String, Value>>,
    logging: Map<String, Value>,
}

impl ServerCapabilities {
    fn of(features: super::Features) -> Self {
        let fixed = ListChanged {
            list_changed: false,
        };
        ServerCapabilities {
            tools: fixed,
            resources: features.resources.then_some(ResourcesCapability {
                subscribe: false,
                list_changed: false,
            }),
            prompts: features.prompts.then_some(fixed),
            completions: features.completions.then(Map::new),
            logging: Map::new(),
        }
    }
}

#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListChanged {
    list_changed: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourcesCapability {
    subscribe: bool,
    list_changed: bool,
}

#[derive(Deserialize)]
struct ListParams {
    /// Any JSON value: a non-string cursor is just as invalid.
    cursor: Option<Value>,
}

#[derive(Deserialize)]
struct ReadResourceParams {
    uri: String,
}

#[derive(Deserialize)]
struct GetPromptParams {
    name: String,
    /// MCP sends strings; other JSON values are passed on for the service to judge.
    arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct CompleteParams {
    #[serde(rename = "ref")]
    reference: Option<Value>,
    argument: CompleteArgument,
    context: Option<CompleteContext>,
}

#[derive(Deserialize)]
struct CompleteArgument {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct CompleteContext {
    arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct CallToolParams {
    name: String,
    arguments: Option<Value>,
    #[serde(rename = "_meta")]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestMeta {
    progress_token: Option<Value>,
}

#[derive(Deserialize)]
struct SetLevelParams {
    level: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelledParams {
    request_id: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max_line: usize, capacity: usize) -> Vec<Line> {
        let mut reader =
            LineReader::with_reader(BufReader::with_capacity(capacity, input), max_line);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    fn complete(s: &str) -> Line {
        Line::Complete(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn lines_are_the_same_at_every_buffer_size() {
        let input = b"ab\n\ncdef\nlonger-than-eight\nxyz\n\xff\xfe\nlast";
        let expected = vec![
            complete("ab"),
            complete(""),
            complete("cdef"),
            Line::TooLong,
            complete("xyz"),
            Line::Complete(b"\xff\xfe".to_vec()),
            complete("last"),
        ];
        for capacity in 1..=input.len() + 1 {
            assert_eq!(
                lines(input, 8, capacity).await,
                expected,
                "capacity {capacity}"
            );
        }
    }

    #[tokio::test]
    async fn bound_is_inclusive_and_overlong_tail_is_skipped() {
        assert_eq!(
            lines(b"12345678\n123456789\nok\n", 8, 3).await,
            vec![complete("12345678"), Line::TooLong, complete("ok")]
        );
        // An over-long last line without newline is reported once.
        assert_eq!(
            lines(b"ok\n123456789012345", 8, 4).await,
            vec![complete("ok"), Line::TooLong]
        );
    }

    #[test]
    fn negotiation_echoes_supported_versions() {
        for v in SUPPORTED_VERSIONS {
            assert_eq!(negotiate(v), v);
        }
        assert_eq!(negotiate("1999-01-01"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
    }
}
