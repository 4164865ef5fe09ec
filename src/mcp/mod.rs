//! MCP over stdio, written by hand: JSON-RPC 2.0 framing, the lifecycle,
//! one task per request, cancellation, progress and logging.
//!
//! This layer knows nothing about tmux. It serves any [`Service`]: the
//! application hands it a tool catalog and a way to start calls, and gets
//! back a [`CallContext`] per call to report progress, log, and notice
//! cancellation. Resources, prompts and completion are optional: a service
//! that serves them says so in [`Service::features`] and overrides the
//! matching default methods.

pub mod ask;
pub mod jsonrpc;
pub mod server;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use ask::{Answer, AskError, Asker};
pub use server::{serve, serve_with};

/// A boxed, sendable future (what a tool call returns).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// `serverInfo` of the `initialize` result.
#[derive(Clone, Debug, Serialize)]
pub struct Implementation {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub version: String,
    #[serde(rename = "websiteUrl", skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

/// What the MCP layer needs from the application.
pub trait Service: Send + Sync + 'static {
    fn implementation(&self) -> Implementation;
    /// The `instructions` string of `initialize` (at most 2048 bytes).
    fn instructions(&self) -> String;
    /// The `tools/list` entries, in order, exactly as served.
    fn tools(&self) -> Vec<Value>;
    /// Starts a tool call. `None` means no tool has this name (a JSON-RPC
    /// error); every failure inside a tool is an `isError` result.
    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> Option<BoxFuture<'static, CallToolResult>>;

    /// The `-32602` message for a `tools/call` of a name [`Service::call_tool`]
    /// does not serve. A service that hides tools says here how to show them.
    fn unknown_tool(&self, name: &str) -> String {
        format!("Unknown tool: {name}")
    }

    /// The optional features served; each one is declared in `initialize`
    /// and its methods answer only if it is on (else `-32601`).
    fn features(&self) -> McpFeatures {
        McpFeatures::default()
    }

    /// The `resources/templates/list` entries, in order.
    fn resource_templates(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The `resources/list` entries, in order.
    fn resources(&self) -> Vec<Value> {
        Vec::new()
    }

    /// `resources/read`: the `contents` array for `uri`.
    fn read_resource(&self, uri: &str) -> BoxFuture<'static, Result<Vec<Value>, ServiceError>> {
        let error = ServiceError::unknown_resource(uri);
        Box::pin(async move { Err(error) })
    }

    /// The `prompts/list` entries, in order.
    fn prompts(&self) -> Vec<Value> {
        Vec::new()
    }

    /// `prompts/get`: the result (`{description?, messages}`) for `name`
    /// rendered with `arguments` (string values, as MCP sends them).
    fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ServiceError> {
        let _ = arguments;
        Err(ServiceError::unknown_prompt(name))
    }

    /// `completion/complete`: candidate values, best first. The server keeps
    /// the first 100. Anything the service cannot complete is `[]`, never
    /// an error.
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'static, Vec<String>> {
        let _ = request;
        Box::pin(async { Vec::new() })
    }
}

/// Optional MCP features (see [`Service::features`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McpFeatures {
    /// `resources/list`, `resources/templates/list`, `resources/read`
    /// (no subscriptions, fixed lists).
    pub resources: bool,
    /// `prompts/list`, `prompts/get` (fixed list).
    pub prompts: bool,
    /// `completion/complete`.
    pub completions: bool,
}

/// A failed `resources/read` or `prompts/get`: the JSON-RPC error it becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServiceError {
    /// `-32002`, message `Resource not found: <detail>`.
    ResourceNotFound(String),
    /// `-32602`, message `Invalid params: <detail>`.
    InvalidParams(String),
    /// `-32603`, message `Internal error: <detail>`.
    Internal(String),
}

impl ServiceError {
    /// The reference's text for a URI no template matches.
    pub fn unknown_resource(uri: &str) -> Self {
        ServiceError::ResourceNotFound(format!("Unknown resource: '{uri}'"))
    }

    pub fn unknown_prompt(name: &str) -> Self {
        ServiceError::InvalidParams(format!("Unknown prompt: '{name}'"))
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServiceError::ResourceNotFound(detail) => write!(f, "Resource not found: {detail}"),
            ServiceError::InvalidParams(detail) => write!(f, "Invalid params: {detail}"),
            ServiceError::Internal(detail) => write!(f, "Internal error: {detail}"),
        }
    }
}

/// What is being completed (`completion/complete` params).
#[derive(Clone, Debug, PartialEq)]
pub struct CompletionRequest {
    pub reference: CompletionRef,
    /// The argument (template variable or prompt argument) being typed.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// Values of the other arguments already chosen (`context.arguments`).
    pub context: Map<String, Value>,
}

/// The `ref` of a completion request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompletionRef {
    /// `ref/prompt`, by prompt name.
    Prompt(String),
    /// `ref/resource`, by URI or URI template.
    Resource(String),
    /// Any other or malformed `ref`: completes to nothing.
    Other,
}

/// The result of `tools/call`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallToolResult {
    pub content: Vec<Value>,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(rename = "isError", skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl CallToolResult {
    /// A success carrying `value` as `structuredContent` plus a compact JSON
    /// text copy (some hosts read only `content`).
    pub fn structured(value: Value) -> Self {
        let text = serde_json::to_string(&value).unwrap_or_default();
        CallToolResult {
            content: vec![text_block(text)],
            structured_content: Some(value),
            is_error: false,
            meta: None,
        }
    }

    /// A success whose value is a string, wrapped as `{"result": …}` the way
    /// the reference does it; the text block holds the bare string.
    pub fn wrapped_text(text: String) -> Self {
        CallToolResult {
            content: vec![text_block(text.clone())],
            structured_content: Some(json!({ "result": text })),
            is_error: false,
            meta: None,
        }
    }

    /// A tool failure the model can read and act on.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![text_block(message.into())],
            structured_content: None,
            is_error: true,
            meta: None,
        }
    }
}

fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

impl CallToolResult {
    /// A success that is a PNG image and one line of text about it, and
    /// no `structuredContent` (clients drop or mishandle an image beside it).
    pub fn image(png: &[u8], caption: String) -> Self {
        CallToolResult {
            content: vec![
                json!({ "type": "image", "data": base64(png), "mimeType": "image/png" }),
                text_block(caption),
            ],
            structured_content: None,
            is_error: false,
            meta: None,
        }
    }
}

/// Standard base64 with padding (RFC 4648 section 4), as MCP carries
/// binary content.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// [`base64`] read back; `None` for anything else.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=').as_bytes();
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    Some(out)
}

/// A message for the single stdout writer.
pub type Outbound = jsonrpc::Message;

/// Where messages go: the queue of the single stdout writer task. Sending
/// never blocks and never fails loudly: once the writer is gone (shutdown),
/// messages are dropped.
#[derive(Clone)]
pub struct Outbox(pub mpsc::UnboundedSender<Outbound>);

impl Outbox {
    pub fn send(&self, message: impl Into<Outbound>) {
        let _ = self.0.send(message.into());
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(jsonrpc::Notification::new(method, params));
    }
}

/// The "done" flag of one request, shared by its [`Progress`] and the code
/// that answers it. The flag is checked and the message queued under one
/// lock, so a progress notification can never be queued after the response
/// (or after the request was cancelled, when no response is sent at all).
#[derive(Debug, Default)]
pub struct RequestGate {
    done: Mutex<bool>,
}

impl RequestGate {
    pub fn new() -> Arc<Self> {
        Arc::new(RequestGate::default())
    }

    pub fn is_done(&self) -> bool {
        *self.lock()
    }

    /// Queues `message` unless the request is done; returns whether it did.
    pub fn send_while_open(&self, outbox: &Outbox, message: impl Into<Outbound>) -> bool {
        let done = self.lock();
        if *done {
            return false;
        }
        outbox.send(message);
        true
    }

    /// Marks the request done and queues its final message (the response),
    /// unless it was already done. `None` closes without a message (cancel).
    /// Returns whether this call closed the gate.
    pub fn finish(&self, outbox: &Outbox, message: Option<Outbound>) -> bool {
        let mut done = self.lock();
        if *done {
            return false;
        }
        *done = true;
        if let Some(message) = message {
            outbox.send(message);
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, bool> {
        // A panic while holding this lock cannot leave the bool half-written.
        self.done.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Everything a running call may use besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// Cancelled by `notifications/cancelled` for this request, or at
    /// shutdown (stdin EOF). After it fires nothing the call produces is sent.
    pub cancel: CancellationToken,
    pub progress: Progress,
    pub log: Logger,
    /// The client's `clientInfo.name`, if it gave one.
    pub client: Option<Arc<str>>,
    /// Asks the person through the client (elicitation), if it can.
    pub ask: Asker,
}

/// `notifications/progress` for one request, if it carried a `progressToken`.
#[derive(Clone)]
pub struct Progress {
    token: Option<Value>,
    outbox: Option<Outbox>,
    /// Done once the response is queued (or the call is cancelled): no
    /// progress may follow.
    gate: Arc<RequestGate>,
}

impl Progress {
    pub fn new(token: Option<Value>, outbox: Outbox, gate: Arc<RequestGate>) -> Self {
        Progress {
            token,
            outbox: Some(outbox),
            gate,
        }
    }

    /// For calls made outside a request (tests, the demo).
    pub fn none() -> Self {
        let gate = RequestGate::new();
        *gate.lock() = true;
        Progress {
            token: None,
            outbox: None,
            gate,
        }
    }

    /// Whether a report would be sent now (the client asked for progress and
    /// the request is still open). Useful to skip building a message.
    pub fn wanted(&self) -> bool {
        self.token.is_some() && self.outbox.is_some() && !self.gate.is_done()
    }

    /// Reports `progress` (which must grow from call to call) out of `total`.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let (Some(token), Some(outbox)) = (&self.token, &self.outbox) else {
            return;
        };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.gate.send_while_open(
            outbox,
            jsonrpc::Notification::new("notifications/progress", params),
        );
    }
}

/// RFC 5424 levels, as MCP's `logging/setLevel` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// `notifications/message` at or above the level the client chose with
/// `logging/setLevel`. Until the client chooses, nothing is sent (logs still
/// go to stderr through the application's own logging).
#[derive(Clone)]
pub struct Logger {
    /// The minimum `LogLevel as u8`; [`Logger::OFF`] sends nothing.
    min: Arc<AtomicU8>,
    outbox: Option<Outbox>,
    name: Arc<str>,
}

impl Logger {
    /// The level value meaning "send nothing".
    pub const OFF: u8 = u8::MAX;

    /// `name` is the `logger` field of each message.
    pub fn new(min: Arc<AtomicU8>, outbox: Outbox, name: &str) -> Self {
        Logger {
            min,
            outbox: Some(outbox),
            name: name.into(),
        }
    }

    pub fn none() -> Self {
        Logger {
            min: Arc::new(AtomicU8::new(Logger::OFF)),
            outbox: None,
            name: "".into(),
        }
    }

    /// Whether a message at `level` would be sent.
    pub fn enabled(&self, level: LogLevel) -> bool {
        self.outbox.is_some() && (level as u8) >= self.min.load(Ordering::Relaxed)
    }

    pub fn log(&self, level: LogLevel, data: Value) {
        let Some(outbox) = &self.outbox else { return };
        if !self.enabled(level) {
            return;
        }
        outbox.notify(
            "notifications/message",
            json!({ "level": level.as_str(), "logger": &*self.name, "data": data }),
        );
    }
}

impl CallContext {
    /// A context with no client attached (tests, the demo).
    pub fn detached() -> Self {
        CallContext {
            cancel: CancellationToken::new(),
            progress: Progress::none(),
            log: Logger::none(),
            client: None,
            ask: Asker::none(),
        }
    }
}

#[cfg(test)]
mod base64_tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648_says_and_back() {
        for (raw, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), coded);
            assert_eq!(unbase64(coded).unwrap(), raw.as_bytes());
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unbase64(&base64(&all)).unwrap(), all);
        assert_eq!(unbase64("Zm9v!"), None);
    }
}
