//! MCP over stdio, written by hand: JSON-RPC 2.0 framing, the lifecycle,
//! one task per request, cancellation, progress and logging.
//!
//! This layer knows nothing about tmux. It serves any [`Service`]: the
//! application hands it a tool catalog and a way to start calls, and gets
//! back a [`CallContext`] per call to report progress, log, and notice
//! cancellation.

pub mod jsonrpc;
pub mod server;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use server::serve;

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

/// A message for the single stdout writer.
pub type Outbound = Value;

/// Where notifications go: the stdout writer's queue.
#[derive(Clone)]
pub struct Outbox(pub mpsc::UnboundedSender<Outbound>);

impl Outbox {
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self
            .0
            .send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }
}

/// Everything a running call may use besides its arguments.
#[derive(Clone)]
pub struct CallContext {
    /// Cancelled by `notifications/cancelled` for this request, or at shutdown.
    pub cancel: CancellationToken,
    pub progress: Progress,
    pub log: Logger,
}

/// `notifications/progress` for one request, if it carried a `progressToken`.
#[derive(Clone)]
pub struct Progress {
    token: Option<Value>,
    outbox: Option<Outbox>,
    /// Set once the response is queued: no progress may follow it.
    done: Arc<AtomicBool>,
}

impl Progress {
    pub fn new(token: Option<Value>, outbox: Outbox, done: Arc<AtomicBool>) -> Self {
        Progress {
            token,
            outbox: Some(outbox),
            done,
        }
    }

    /// For calls made outside a request (tests, the demo).
    pub fn none() -> Self {
        Progress {
            token: None,
            outbox: None,
            done: Arc::new(AtomicBool::new(true)),
        }
    }

    pub fn wanted(&self) -> bool {
        self.token.is_some() && !self.done.load(Ordering::Acquire)
    }

    /// Reports `progress` (which must grow from call to call) out of `total`.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let (Some(token), Some(outbox)) = (&self.token, &self.outbox) else {
            return;
        };
        if self.done.load(Ordering::Acquire) {
            return;
        }
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        outbox.notify("notifications/progress", params);
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

/// `notifications/message` at or above the level the client chose.
#[derive(Clone)]
pub struct Logger {
    min: Arc<AtomicU8>,
    outbox: Option<Outbox>,
}

impl Logger {
    pub fn new(min: Arc<AtomicU8>, outbox: Outbox) -> Self {
        Logger {
            min,
            outbox: Some(outbox),
        }
    }

    pub fn none() -> Self {
        Logger {
            min: Arc::new(AtomicU8::new(u8::MAX)),
            outbox: None,
        }
    }

    pub fn log(&self, level: LogLevel, data: Value) {
        let Some(outbox) = &self.outbox else { return };
        if (level as u8) < self.min.load(Ordering::Relaxed) {
            return;
        }
        outbox.notify(
            "notifications/message",
            json!({ "level": level.as_str(), "logger": "tmux-mcp", "data": data }),
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
        }
    }
}
