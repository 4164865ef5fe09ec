//! What every tool that returns captured text shares: its bound and the
//! backstop on its size.

use crate::drive::bounded::{self, DEFAULT_BYTES, MaxLines};
use crate::tools::{App, ToolResult};

/// The default bound of a capture: 500 lines and [`DEFAULT_BYTES`].
const CAPTURE_DEFAULT: (usize, usize) = (500, DEFAULT_BYTES);

/// The (lines, bytes) bound of a call that reads text (a capture, a
/// buffer): `max_lines` or the capture default, under the result limit.
pub fn capture_bound(app: &App, max_lines: MaxLines) -> ToolResult<(usize, usize)> {
    bounded::bound(max_lines, CAPTURE_DEFAULT, app.config.limits.tool_result)
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
