//! [`ToolError`]: a failure the agent can read and act on, its
//! [`ErrorKind`], and how a tmux failure becomes one.

use std::fmt;

use serde_json::json;

use crate::mcp::CallToolResult;
use crate::tmux::TmuxError;

/// A failure the agent can read and act on (an `isError` result).
#[derive(Debug, Clone)]
pub struct ToolError {
    pub message: String,
    pub suggestion: Option<String>,
    /// Kind of failure, reported in `_meta.error_type`.
    pub kind: ErrorKind,
    /// False for failures the agent cannot fix by changing its call.
    pub expected: bool,
    /// The call tried to type into a password prompt: the audit logs the
    /// length of what it would have typed, not even a digest (a short
    /// password's digest prefix gives it away).
    pub at_a_secret: bool,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            suggestion: None,
            kind,
            expected: true,
            at_a_secret: false,
        }
    }

    /// Bad input, refused before tmux is touched.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Validation, message)
    }

    /// Marks a refusal to type into a password prompt ([`Self::at_a_secret`]).
    pub fn at_a_secret(mut self) -> Self {
        self.at_a_secret = true;
        self
    }

    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// The message and, on a line of its own, the suggestion: what a
    /// failed call's text says.
    pub fn text(&self) -> String {
        match &self.suggestion {
            Some(s) => format!("{}\n{s}", self.message),
            None => self.message.clone(),
        }
    }

    pub(crate) fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::error(self.text());
        let mut meta = json!({ "error_type": self.kind.as_str(), "expected": self.expected });
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
            TmuxError::Command(msg) => classify(msg),
            TmuxError::NoServer(_) => ToolError::new(ErrorKind::TmuxServerNotRunning, e.to_string())
                .suggest("Check socket_name, or call list_servers to find running tmux servers."),
            TmuxError::Unsendable(_) => ToolError::invalid(e.to_string()),
            TmuxError::Unsupported(_) => ToolError::new(ErrorKind::Tmux, e.to_string()),
            TmuxError::NotResponding(_) => ToolError::new(ErrorKind::TmuxServerNotResponding, e.to_string())
                .suggest("Check the server with `tmux list-sessions` (a stopped server resumes with SIGCONT), or restart it."),
            _ => ToolError {
                expected: false,
                ..ToolError::new(ErrorKind::Tmux, e.to_string())
            },
        }
    }
}

pub type ToolResult<T> = Result<T, ToolError>;

const DISCOVER: &str = "Call list_sessions / list_windows / list_panes to discover valid ids.";
const DISCOVER_PANES: &str = "Call list_panes to discover valid pane ids.";

/// Turns a tmux error message (`TmuxError::Command`) into an error an agent can act on.
fn classify(msg: &str) -> ToolError {
    let msg = msg.trim();
    if let Some(rest) = msg.strip_prefix("can't find pane: ") {
        return pane_not_found(rest);
    }
    if msg.starts_with("can't find session") || msg.starts_with("can't find window") {
        return ToolError::new(
            ErrorKind::TmuxObjectDoesNotExist,
            format!("Object not found: {msg}"),
        )
        .suggest(DISCOVER);
    }
    if let Some(name) = msg.strip_prefix("duplicate session: ") {
        return ToolError::new(
            ErrorKind::TmuxSessionExists,
            format!("Session named {name} exists"),
        );
    }
    ToolError::new(ErrorKind::TmuxCommand, format!("tmux error: {msg}"))
}

/// No pane `id` (an id that is not `%N` names none either).
pub fn pane_not_found(id: &str) -> ToolError {
    ToolError::new(ErrorKind::PaneNotFound, format!("Pane not found: {id}")).suggest(DISCOVER_PANES)
}

/// No session or window where `key` is `value`.
pub fn not_found(key: &str, value: &str) -> ToolError {
    ToolError::new(
        ErrorKind::TmuxObjectDoesNotExist,
        format!("Object not found: Could not find {key}={value}"),
    )
    .suggest(DISCOVER)
}

/// What kind of failure a [`ToolError`] reports. The spellings are the
/// reference's (exception class names) where it has one, and part of the
/// wire: clients may branch on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input, refused before tmux is touched.
    Validation,
    /// A guard refused the call (the pane or server running this MCP server).
    Refused,
    /// A regular expression argument that does not compile. The reference
    /// reports it under the generic name `error`.
    BadRegex,
    BadSessionName,
    /// Unparsable JSON in an argument that carries JSON.
    Json,
    Cancelled,
    Timeout,
    /// tmux ran the command and refused it.
    TmuxCommand,
    /// Any other failure talking to tmux; not the agent's to fix.
    Tmux,
    TmuxServerNotRunning,
    TmuxServerNotResponding,
    TmuxServerGone,
    TmuxSessionExists,
    TmuxObjectDoesNotExist,
    SessionNotFound,
    WindowNotFound,
    PaneNotFound,
    PaneGone,
    PaneDead,
    /// The pane was respawned (`respawn-pane`): a new process in it.
    PaneRespawned,
    NoWindowsExist,
    NoPanesExist,
    /// A person is typing where the agent would: input waited and gave up.
    HumanActive,
    /// The prompt's line holds text the agent would add to (a person's
    /// half-typed command): nothing was typed.
    LineNotEmpty,
    /// The pane is in a mode (copy mode: a person scrolling back), where
    /// keys drive the mode, not the program: nothing was typed.
    PaneInMode,
}

impl ErrorKind {
    /// The pane (or its whole server) ended: what a command that ends its
    /// own shell, or a wait for the pane's end, sees.
    pub fn is_pane_end(self) -> bool {
        matches!(
            self,
            ErrorKind::PaneGone
                | ErrorKind::PaneDead
                | ErrorKind::PaneRespawned
                | ErrorKind::TmuxServerGone
        )
    }

    /// The wire spelling, in `_meta.error_type` and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationError",
            ErrorKind::Refused => "ExpectedToolError",
            ErrorKind::BadRegex => "error",
            ErrorKind::BadSessionName => "BadSessionName",
            ErrorKind::Json => "JSONError",
            ErrorKind::Cancelled => "Cancelled",
            ErrorKind::Timeout => "TimeoutError",
            ErrorKind::TmuxCommand => "TmuxCommandError",
            ErrorKind::Tmux => "TmuxError",
            ErrorKind::TmuxServerNotRunning => "TmuxServerNotRunning",
            ErrorKind::TmuxServerNotResponding => "TmuxServerNotResponding",
            ErrorKind::TmuxServerGone => "TmuxServerGone",
            ErrorKind::TmuxSessionExists => "TmuxSessionExists",
            ErrorKind::TmuxObjectDoesNotExist => "TmuxObjectDoesNotExist",
            ErrorKind::SessionNotFound => "SessionNotFound",
            ErrorKind::WindowNotFound => "WindowNotFound",
            ErrorKind::PaneNotFound => "PaneNotFound",
            ErrorKind::PaneGone => "PaneGone",
            ErrorKind::PaneDead => "PaneDead",
            ErrorKind::PaneRespawned => "PaneRespawned",
            ErrorKind::NoWindowsExist => "NoWindowsExist",
            ErrorKind::NoPanesExist => "NoPanesExist",
            ErrorKind::HumanActive => "human_active",
            ErrorKind::LineNotEmpty => "line_not_empty",
            ErrorKind::PaneInMode => "pane_in_mode",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind::*;
    use super::{TmuxError, ToolError};

    /// What tmux says when it refuses a command decides the kind the agent
    /// reads, and the rest of the message is kept.
    #[test]
    fn tmux_refusals_are_classified() {
        let cases = [
            ("can't find pane: %9", PaneNotFound, "Pane not found: %9"),
            (
                "can't find session: work",
                TmuxObjectDoesNotExist,
                "Object not found: can't find session: work",
            ),
            (
                "can't find window: @4",
                TmuxObjectDoesNotExist,
                "Object not found: can't find window: @4",
            ),
            (
                "duplicate session: work",
                TmuxSessionExists,
                "Session named work exists",
            ),
            (
                "unknown command: frob\n",
                TmuxCommand,
                "tmux error: unknown command: frob",
            ),
        ];
        for (said, kind, message) in cases {
            let e = ToolError::from(TmuxError::Command(said.to_owned()));
            assert_eq!((e.kind, e.message.as_str()), (kind, message), "{said:?}");
            assert!(e.expected, "{said:?}");
        }
    }

    /// The spellings are part of the wire: pinned here, one per kind, so a
    /// renamed variant cannot change what clients read.
    #[test]
    fn wire_spellings_are_pinned() {
        let pinned = [
            (Validation, "ValidationError"),
            (Refused, "ExpectedToolError"),
            (BadRegex, "error"),
            (BadSessionName, "BadSessionName"),
            (Json, "JSONError"),
            (Cancelled, "Cancelled"),
            (Timeout, "TimeoutError"),
            (TmuxCommand, "TmuxCommandError"),
            (Tmux, "TmuxError"),
            (TmuxServerNotRunning, "TmuxServerNotRunning"),
            (TmuxServerNotResponding, "TmuxServerNotResponding"),
            (TmuxServerGone, "TmuxServerGone"),
            (TmuxSessionExists, "TmuxSessionExists"),
            (TmuxObjectDoesNotExist, "TmuxObjectDoesNotExist"),
            (SessionNotFound, "SessionNotFound"),
            (WindowNotFound, "WindowNotFound"),
            (PaneNotFound, "PaneNotFound"),
            (PaneGone, "PaneGone"),
            (PaneDead, "PaneDead"),
            (PaneRespawned, "PaneRespawned"),
            (NoWindowsExist, "NoWindowsExist"),
            (NoPanesExist, "NoPanesExist"),
            (LineNotEmpty, "line_not_empty"),
            (PaneInMode, "pane_in_mode"),
        ];
        for (kind, spelling) in pinned {
            assert_eq!(kind.as_str(), spelling);
            let result = ToolError::new(kind, "m").into_result();
            let meta = result.meta.expect("an error result carries _meta");
            assert_eq!(meta["error_type"], spelling);
        }
    }
}
