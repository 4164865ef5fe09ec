//! The shell's prompt around a command: drawn before typing, drawn again
//! after, and whether the shell marks it (OSC 133) so that the command
//! needs no wrapper.

use std::time::{Duration, Instant};

use crate::drive::probe::probe_once;
use crate::drive::watch::{MAX_LINE, Watch};
use crate::drive::{Target, ToolResult};
use crate::panes::LineView;
use crate::panes::marks::{MARKS, Mark, MarkHistory};
use crate::panes::osc::{OscScanner, Piece};
use crate::process::Activity;

/// How long to wait for a prompt not drawn yet before typing.
const PROMPT_WAIT: Duration = Duration::from_millis(200);
/// A pause in output this long ends the wait for a prompt.
const QUIET: Duration = Duration::from_millis(3);
/// Longest a busy shell (its start-up files, a `PROMPT_COMMAND`) is
/// waited for to read its terminal before typing.
const BUSY_SHELL_WAIT: Duration = Duration::from_secs(3);
/// How often a busy shell is looked at again while it prints nothing.
const BUSY_SHELL_LOOK: Duration = Duration::from_millis(25);
/// How far back the recording is read for the shell's marks.
const MARKS_LOOKBACK: u64 = 64 * 1024;

/// Waits until the shell has drawn its prompt, when it seems not to have
/// (the cursor at column 0): the echo of the typed line starts where the
/// prompt ends. A shell that is busy itself (a new pane's shell still
/// reading its start-up files) is waited for until it reads its terminal,
/// at most `BUSY_SHELL_WAIT`; then the output, for a pause, at most
/// `PROMPT_WAIT`.
pub async fn prompt_drawn(watch: &mut Watch, target: &Target) -> ToolResult<()> {
    if watch.geometry.cursor_x == 0 && busy_shell_waited(watch, target).await {
        watch.refresh_geometry(target).await?;
    }
    if watch.geometry.cursor_x > 0 {
        return Ok(());
    }
    let started = Instant::now();
    watch.follower_mut().mark_seen();
    while started.elapsed() < PROMPT_WAIT && watch.changed(QUIET).await {
        watch.follower_mut().mark_seen();
    }
    watch.refresh_geometry(target).await
}

/// Waits while the pane's terminal is not read by its shell nor by a
/// program (`Running`), as when a new pane's shell runs its start-up
/// files: a line typed then is echoed before the prompt is drawn, and the
/// wrapper's erase lands on the wrong rows. Whether it waited. Local panes
/// only (the process probe).
async fn busy_shell_waited(watch: &mut Watch, target: &Target) -> bool {
    if watch.pid == 0 || target.hub.local_socket().is_none() {
        return false;
    }
    let started = Instant::now();
    let mut waited = false;
    loop {
        // The shell itself, or what its start-up files run (zsh gives
        // those a process group of their own).
        let busy = probe_once(watch.pid, &watch.tty).await.activity == Activity::Running;
        if !busy || started.elapsed() >= BUSY_SHELL_WAIT {
            return waited;
        }
        waited = true;
        watch.follower_mut().mark_seen();
        watch.changed(BUSY_SHELL_LOOK).await;
    }
}

/// After the command's end, waits for the shell's prompt, so that the
/// next call finds it drawn and types after it. The prompt is drawn when
/// the shell marks its end (OSC 133 `B`), or when the line after the end
/// puts the cursor where the prompt left it before the command was typed
/// (the same prompt drawn again). A prompt that differs from the one
/// before, or an empty one, ends the wait at a pause of `QUIET` after the
/// first text instead. At most `PROMPT_WAIT` in all.
pub async fn await_prompt(watch: &mut Watch, after_end: u64) {
    let width = watch.geometry.cursor_x;
    let started = Instant::now();
    let mut cursor = after_end;
    let mut view = LineView::new(MAX_LINE);
    let mut scanner = OscScanner::new(&[MARKS]);
    let (mut text, mut marked) = (false, false);
    loop {
        watch.follower_mut().mark_seen();
        watch
            .follower()
            .read_raw(&mut cursor, &mut |at, chunk, gap| {
                if gap {
                    scanner.reset();
                    view.reset();
                }
                scanner.scan(at, chunk, &mut |piece| match piece {
                    Piece::Text(_, bytes) => view.feed(bytes, &mut |_| text = true),
                    Piece::Osc(osc) => marked |= Mark::of(&osc) == Some(Mark::Input),
                });
            });
        text |= !view.partial().is_empty();
        if marked || (width > 0 && columns(view.before_cursor()) >= width) {
            return;
        }
        let Some(left) = PROMPT_WAIT.checked_sub(started.elapsed()) else {
            return;
        };
        let limit = if text { QUIET.min(left) } else { left };
        if !watch.changed(limit).await {
            return;
        }
    }
}

/// The columns `line` takes, a character each (as [`LineView`] counts).
fn columns(line: &[u8]) -> usize {
    line.iter().filter(|&&b| b & 0xc0 != 0x80).count()
}

/// Does the recording show the shell at a prompt it marked, with marks
/// that carry exit statuses? Reads the last `MARKS_LOOKBACK` bytes: the
/// prompt was drawn just now, and a shell that marks its prompt marked
/// the command before it too. A recording that began after the prompt
/// shows no marks, and the wrapper is typed; so does one with output lost
/// after the marks (another shell may have started unseen).
pub fn shell_marks_prompt(watch: &Watch) -> bool {
    let end = watch.follower().end();
    let mut cursor = end.saturating_sub(MARKS_LOOKBACK);
    let mut scanner = OscScanner::new(&[MARKS]);
    let mut marks = MarkHistory::default();
    watch
        .follower()
        .read_raw(&mut cursor, &mut |at, chunk, gap| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        assert_eq!(columns(b"$ "), 2);
        assert_eq!(columns("é> ".as_bytes()), 3);
        assert_eq!(columns(b""), 0);
    }
}
