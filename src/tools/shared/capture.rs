//! What every tool that returns captured text shares: its bound and how
//! the lines are trimmed.

use crate::tools::shared::bounded::{self, DEFAULT_BYTES, MaxLines};
use crate::tools::shared::tail::lossy;
use crate::tools::{App, ToolResult};

/// The default bound of a capture: 500 lines and [`DEFAULT_BYTES`].
const CAPTURE_DEFAULT: (usize, usize) = (500, DEFAULT_BYTES);

/// The (lines, bytes) bound of a call that reads text (a capture, a
/// buffer): `max_lines` or the capture default, under the result limit.
pub fn capture_bound(app: &App, max_lines: MaxLines) -> ToolResult<(usize, usize)> {
    bounded::bound(max_lines, CAPTURE_DEFAULT, app.config.limits.tool_result)
}

/// A `capture-pane -p` reply as lines, each without the spaces tmux pads
/// a row with, trailing blank rows trimmed.
pub fn trimmed_lines(reply: &[Vec<u8>]) -> Vec<String> {
    let mut lines: Vec<String> = reply.iter().map(|l| lossy(l)).collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// The global response backstop: keeps the last `limit` bytes.
pub fn backstop(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... truncated {start} bytes ...]\n{}", &text[start..])
}
