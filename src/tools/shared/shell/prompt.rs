//! The shell's prompt around a command: drawn before typing, drawn again
//! after, and whether the shell marks it (OSC 133) so that the command
//! needs no wrapper.

use std::time::{Duration, Instant};

use crate::panes::LineView;
use crate::panes::marks::{MARKS, MarkHistory};
use crate::panes::osc::{OscScanner, Piece};
use crate::tools::shared::observe::{MAX_LINE, Watch};
use crate::tools::{Target, ToolResult};

/// How long to wait for a prompt not drawn yet before typing.
const PROMPT_WAIT: Duration = Duration::from_millis(200);
/// A pause in output this long ends the wait for a prompt.
const QUIET: Duration = Duration::from_millis(3);
/// How far back the recording is read for the shell's marks.
const MARKS_LOOKBACK: u64 = 64 * 1024;

/// Waits until the shell has drawn its prompt, when it seems not to have
/// (the cursor at column 0, a command just ended): the echo of the typed
/// line starts where the prompt ends. Waits for the output to pause, at
/// most `PROMPT_WAIT`.
pub async fn prompt_drawn(watch: &mut Watch, target: &Target) -> ToolResult<()> {
    if watch.geometry.cursor_x > 0 {
        return Ok(());
    }
    let started = Instant::now();
    watch.mark_seen();
    while started.elapsed() < PROMPT_WAIT && watch.changed(QUIET).await {
        watch.mark_seen();
    }
    watch.refresh_geometry(target).await
}

/// After the command's end, waits for the shell's prompt: text after the
/// end, then a pause of `QUIET` (at most `PROMPT_WAIT` in all), so
/// that the next call finds the prompt drawn and types after it.
pub async fn await_prompt(watch: &mut Watch, after_end: u64) {
    let started = Instant::now();
    let mut cursor = after_end;
    let mut view = LineView::new(MAX_LINE);
    let mut text = false;
    loop {
        watch.mark_seen();
        watch.read(&mut cursor, &mut view, &mut |_| text = true);
        text |= !view.partial().is_empty();
        let Some(left) = PROMPT_WAIT.checked_sub(started.elapsed()) else {
            return;
        };
        let limit = if text { QUIET.min(left) } else { left };
        if !watch.changed(limit).await {
            return;
        }
    }
}

/// Does the recording show the shell at a prompt it marked, with marks
/// that carry exit statuses? Reads the last `MARKS_LOOKBACK` bytes: the
/// prompt was drawn just now, and a shell that marks its prompt marked
/// the command before it too. A recording that began after the prompt
/// shows no marks, and the wrapper is typed; so does one with output lost
/// after the marks (another shell may have started unseen).
pub fn shell_marks_prompt(watch: &Watch) -> bool {
    let end = watch.end();
    let mut cursor = end.saturating_sub(MARKS_LOOKBACK);
    let mut scanner = OscScanner::new(&[MARKS]);
    let mut marks = MarkHistory::default();
    watch.read_raw(&mut cursor, &mut |at, chunk, gap| {
        if gap {
            // Unseen output may have started another shell since.
            scanner.reset();
            marks = MarkHistory::default();
        }
        scanner.scan(at, chunk, &mut |piece| {
            if let Piece::Osc(osc) = piece {
                marks.see(&osc);
            }
        });
    });
    marks.at_marked_prompt()
}
