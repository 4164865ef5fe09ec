//! Argument values several tools share, checked the same way everywhere.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::{ToolError, ToolResult};

/// A timeout or interval argument: positive and finite (capped at 10^6 s).
pub fn seconds(value: f64, name: &str) -> ToolResult<Duration> {
    if !value.is_finite() || value <= 0.0 {
        return Err(ToolError::invalid(format!(
            "{name} must be positive (received {value})"
        )));
    }
    Ok(Duration::from_secs_f64(value.min(1e6)))
}

/// The default timeout of a wait (`wait_for_text`, `wait_for_state`).
pub fn default_wait_timeout() -> f64 {
    8.0
}

/// The default of a boolean argument that defaults to true (serde's
/// `default = "yes"`).
pub fn yes() -> bool {
    true
}

/// tmux's bounds for a window dimension (`WINDOW_MINIMUM`..`WINDOW_MAXIMUM`).
const MAX_CELLS: i64 = 10_000;

/// A window or pane size argument, checked against tmux's bounds.
pub fn cells(name: &str, value: Option<i64>) -> ToolResult<Option<String>> {
    match value {
        Some(n) if !(1..=MAX_CELLS).contains(&n) => Err(ToolError::invalid(format!(
            "{name} must be between 1 and {MAX_CELLS} (received {n})"
        ))),
        other => Ok(other.map(|n| n.to_string())),
    }
}

/// What a batch does after a failed row (shared by both batch tools).
/// Serialize lets the schema advertise the default, as the reference does.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    #[default]
    Stop,
    Continue,
}

/// Most bytes a call may put in one buffer (load_buffer, paste_text): the
/// text travels as one control-mode line.
pub const MAX_TEXT: usize = 16 << 20;

/// Checks text a call puts in a tmux buffer with `set-buffer` (as `arg` of
/// `tool`): tmux keeps no empty buffer, and the command line carries no NUL.
pub fn check_buffer_text(text: &str, arg: &str, tool: &str) -> ToolResult<()> {
    if text.is_empty() {
        return Err(ToolError::invalid(format!(
            "{arg} is empty; tmux keeps no empty buffers"
        )));
    }
    if text.len() > MAX_TEXT {
        return Err(ToolError::invalid(format!(
            "{arg} is {} bytes; {tool} accepts at most {MAX_TEXT}",
            text.len()
        )));
    }
    if text.contains('\0') {
        return Err(ToolError::invalid(format!(
            "{arg} contains a NUL byte, which a tmux buffer set this way cannot carry"
        )));
    }
    Ok(())
}
