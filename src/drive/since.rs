//! Where a wait starts: `since`, a cursor from an earlier read
//! (`capture_since`, `run_command`) or `"input"`, the moment this server
//! last sent the pane input (recorded by the hub before every `send-keys`
//! and `paste-buffer`, see [`crate::panes::registry::InputMark`]).
//!
//! What the pane printed since then is found where it is still exact: in
//! this process's recording when that holds it without a gap, else read
//! back from tmux after the anchored line ([`read_back`]), as
//! `capture_since` does. What neither holds is reported as missed, never
//! passed over silently.

use crate::drive::cursor::Cursor;
use crate::drive::read_back::read_back;
use crate::drive::watch::Watch;
use crate::drive::{Target, ToolError, ToolResult};
use crate::panes::registry::InputMark;

/// A wait's starting point, as the caller gave it.
pub enum Since {
    Cursor(Cursor),
    Input,
}

impl Since {
    /// `None`: the wait starts when the call does.
    pub fn parse(text: Option<&str>) -> ToolResult<Option<Since>> {
        match text {
            None => Ok(None),
            Some("input") => Ok(Some(Since::Input)),
            Some(cursor) => Cursor::decode(cursor).map(|c| Some(Since::Cursor(c))),
        }
    }
}

/// What the pane printed between the starting point and the wait's entry.
#[derive(Default)]
pub struct Earlier {
    /// The recording holds all of it, unbroken: read it from this offset.
    pub from: Option<u64>,
    /// Else the lines tmux still holds, oldest first (the screen's blank
    /// rows at the end dropped). They may overlap what the recording
    /// holds after the entry.
    pub lines: Vec<String>,
    /// Some of it is lost: tmux no longer holds it, or nothing proves
    /// where the starting point is.
    pub missed: bool,
    /// Of `lines`, how many were complete (the cursor had left them).
    pub complete: usize,
    /// The line the cursor is on has text: a line still being written.
    pub writing: bool,
}

/// What `watch`'s pane printed since `since`, up to the entry (the
/// recording's offset `entry`, where the wait's own reading starts).
pub async fn earlier(
    target: &Target,
    watch: &Watch,
    since: &Since,
    entry: u64,
) -> ToolResult<Earlier> {
    // Both kinds of starting point, as an input mark is.
    let start = match since {
        Since::Cursor(c) if c.pane != watch.id => {
            return Err(ToolError::invalid(format!(
                "since: the cursor is for pane {}, not {}",
                c.pane, watch.id
            )));
        }
        Since::Cursor(c) => InputMark {
            // Where the read that gave it ended: a command's output span
            // (run_command's, or one still being paged) is what that read
            // covered, not news.
            ring: c.output.map(|o| (o.epoch, o.stop)),
            // A cursor of the format before anchors names no server.
            tmux: (c.server != 0).then_some((c.server, c.pid, c.anchor)),
        },
        Since::Input => match target.hub.panes().last_input(watch.id) {
            Some(mark) => mark,
            None => {
                return Err(ToolError::invalid(format!(
                    "since 'input': this server has sent pane {} no input",
                    watch.id
                )));
            }
        },
    };
    if let Some(from) = start
        .ring
        .and_then(|(epoch, at)| unbroken(watch, epoch, at, entry))
    {
        return Ok(Earlier {
            from: Some(from),
            ..Earlier::default()
        });
    }
    let Some((server, pid, anchor)) = start.tmux else {
        return Ok(Earlier {
            missed: true,
            ..Earlier::default()
        });
    };
    let read = read_back(target, watch.id, server, pid, anchor).await?;
    let cursor = read.rows.history + read.rows.cursor_y;
    let (complete, writing) = match read.lines.iter().rposition(|l| l.row <= cursor) {
        Some(at) => (at, !read.lines[at].text.is_empty()),
        None => (0, false),
    };
    let end = read
        .lines
        .iter()
        .rposition(|l| !l.text.is_empty())
        .map_or(0, |i| i + 1);
    Ok(Earlier {
        from: None,
        lines: read.lines[..end].iter().map(|l| l.text.clone()).collect(),
        missed: read.missed,
        complete,
        writing,
    })
}

/// `at` when the watch's recording (epoch `epoch`) holds everything from
/// `at` to `entry` with no gap: a gap at `at` itself may be output lost
/// before it (a paused pane resumed), so it counts too.
fn unbroken(watch: &Watch, epoch: u64, at: u64, entry: u64) -> Option<u64> {
    if watch.epoch() != epoch || at > entry {
        return None;
    }
    let state = watch.follower().pane().lock();
    let ring = &state.ring;
    let whole = at >= ring.start() && ring.gaps_between(at, entry + 1).next().is_none();
    whole.then_some(at)
}
