//! [`ToolError`]: a failure the agent can read and act on, and how a
//! tmux failure becomes one.

use serde_json::json;

use super::target;
use crate::mcp::CallToolResult;
use crate::tmux::TmuxError;

/// A failure the agent can read and act on (an `isError` result).
#[derive(Debug, Clone)]
pub struct ToolError {
    pub message: String,
    pub suggestion: Option<String>,
    /// Kind of failure, reported in `_meta.error_type`.
    pub kind: &'static str,
    /// False for failures the agent cannot fix by changing its call.
    pub expected: bool,
}

impl ToolError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            suggestion: None,
            kind,
            expected: true,
        }
    }

    /// Bad input, refused before tmux is touched.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("ValidationError", message)
    }

    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    pub(super) fn into_result(self) -> CallToolResult {
        let text = match &self.suggestion {
            Some(s) => format!("{}\n{s}", self.message),
            None => self.message.clone(),
        };
        let mut result = CallToolResult::error(text);
        let mut meta = json!({ "error_type": self.kind, "expected": self.expected });
        if let Some(s) = self.suggestion {
            meta["suggestion"] = json!(s);
        }
        result.meta = Some(meta);
        result
    }
}

impl From<TmuxError> for ToolError {
    fn from(e: TmuxError) -> Self {
        match &e {
            TmuxError::Command(msg) => target::classify(msg),
            TmuxError::NoServer(_) => ToolError::new("TmuxServerNotRunning", e.to_string())
                .suggest("Check socket_name, or call list_servers to find running tmux servers."),
            TmuxError::Unsendable(_) => ToolError::invalid(e.to_string()),
            TmuxError::NotResponding(_) => ToolError::new("TmuxServerNotResponding", e.to_string())
                .suggest("Check the server with `tmux list-sessions` (a stopped server resumes with SIGCONT), or restart it."),
            _ => ToolError {
                expected: false,
                ..ToolError::new("TmuxError", e.to_string())
            },
        }
    }
}

pub type ToolResult<T> = Result<T, ToolError>;
