//! Reading a pane's output back from tmux: its rows and history size, the
//! screen at an exact sync point, and the rows a cursor missed (`read_back`,
//! `anchor_at`). The second path a byte takes: tmux history → read-back →
//! cursor, which every cursor, `since` and command handle uses.

use crate::drive::error::pane_not_found;
use crate::drive::{Target, ToolError, ToolResult};
use crate::tmux::format::Schema;
use crate::tmux::history::{self, Anchor, Line, Located, SLACK};
use crate::tmux::{Command, PaneId};

/// A pane's state as a read-back needs it: who it is (the tmux server's
/// pid, the pane's process), its rows and whether history can be trimmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaneRows {
    pane: Option<PaneId>,
    /// The tmux server's process id: a cursor names its server by it.
    pub server: u32,
    pub pid: u32,
    /// Rows of history held now.
    pub history: u64,
    pub limit: u64,
    pub height: u64,
    pub width: usize,
    pub alternate: bool,
    /// The cursor's row on the screen.
    pub cursor_y: u64,
}

const ROWS: Schema<PaneRows> = Schema(&[
    ("pane_id", |r, v| r.pane = PaneId::parse(v.as_bytes())),
    ("pid", |r, v| r.server = v.parse().unwrap_or(0)),
    ("pane_pid", |r, v| r.pid = v.parse().unwrap_or(0)),
    ("history_size", |r, v| r.history = v.parse().unwrap_or(0)),
    ("history_limit", |r, v| r.limit = v.parse().unwrap_or(0)),
    ("pane_height", |r, v| r.height = v.parse().unwrap_or(0)),
    ("pane_width", |r, v| r.width = v.parse().unwrap_or(0)),
    ("alternate_on", |r, v| r.alternate = v == "1"),
    ("cursor_y", |r, v| r.cursor_y = v.parse().unwrap_or(0)),
]);

fn rows_command(id: PaneId) -> Command {
    Command::new("display-message")
        .flag("-p")
        .target(id)
        .arg(ROWS.template())
}

fn parse_rows(reply: &[Vec<u8>], id: PaneId) -> ToolResult<PaneRows> {
    ROWS.parse(reply)
        .into_iter()
        .find(|r| r.pane == Some(id))
        .ok_or_else(|| pane_not_found(&id.to_string()))
}

/// The pane's rows now, on the command client (no stream is needed).
pub async fn rows(target: &Target, id: PaneId) -> ToolResult<PaneRows> {
    parse_rows(&target.run(rows_command(id)).await?, id)
}

/// Runs `commands` on the command client together ([`Hub::run_together`]).
async fn run_together(target: &Target, commands: Vec<Command>) -> Vec<ToolResult<Vec<Vec<u8>>>> {
    let replies = target.hub.run_together(&commands).await;
    replies
        .into_iter()
        .map(|r| r.map_err(ToolError::from))
        .collect()
}

fn capture_command(id: PaneId, state: &PaneRows, from: Option<u64>, to: Option<u64>) -> Command {
    // `-S`/`-E` count from the top of the screen: relative to the history
    // size `state` saw.
    let relative = |row: u64| {
        (row.min(state.history + state.height) as i64 - state.history as i64).to_string()
    };
    let cmd = Command::new("capture-pane").flag("-p").flag("-J");
    let cmd = match from {
        Some(row) => cmd.opt("-S", relative(row)),
        None => cmd.opt("-S", "-"),
    };
    let cmd = match to {
        Some(row) => cmd.opt("-E", relative(row)),
        None => cmd.opt("-E", "-"),
    };
    cmd.target(id)
}

/// The absolute row (in `after`'s frame) a capture asked for at `from`
/// (in `state`'s frame) started on: tmux resolved `-S` against the history
/// size when it ran, which is `after`'s when the two ran together.
fn first_row(state: &PaneRows, after: &PaneRows, from: Option<u64>) -> u64 {
    let Some(row) = from else { return 0 };
    let relative = row.min(state.history + state.height) as i64 - state.history as i64;
    (after.history as i64 + relative).clamp(0, (after.history + after.height) as i64) as u64
}

/// Logical lines (`-J`) from absolute row `from` (in `state`'s frame;
/// `None`: the oldest row held) to the bottom of the screen, captured
/// together with the pane's rows: the lines, numbered in the frame of
/// those rows, and the rows. One capture, no retry: where the rows moved
/// between `state` and the capture, the lines say where they are now.
async fn capture_from(
    target: &Target,
    id: PaneId,
    state: &PaneRows,
    from: Option<u64>,
) -> ToolResult<(Vec<Line>, PaneRows)> {
    let mut replies = run_together(
        target,
        vec![capture_command(id, state, from, None), rows_command(id)],
    )
    .await
    .into_iter();
    let (Some(captured), Some(after)) = (replies.next(), replies.next()) else {
        unreachable!("two commands, two replies")
    };
    let (captured, after) = (captured?, parse_rows(&after?, id)?);
    let first = first_row(state, &after, from);
    Ok((history::lines(&captured, first, after.width), after))
}

/// How uncertain the rows of a capture are because the pane's rows moved
/// between `state` and `after`: exact when they did not (a looser search
/// would find the wrong one of many equal lines, a prompt), else by
/// [`SLACK`] (the capture and `after`, sent together, as a rule ran in
/// one go).
fn moved(state: &PaneRows, after: &PaneRows) -> u64 {
    if after.history == state.history {
        0
    } else {
        SLACK
    }
}

/// What was printed after an anchor, read back from tmux.
pub struct ReadBack {
    /// The new logical lines, oldest first, with their rows now.
    pub lines: Vec<Line>,
    /// Output was lost: tmux no longer holds it (or the pane is not the
    /// one the anchor was taken in).
    pub missed: bool,
    /// At least this many lines are gone, when that is known.
    pub missing: Option<u64>,
    /// Where the reader is when no line is new: the anchor, moved as
    /// tmux's rows moved.
    pub anchor: Anchor,
    pub rows: PaneRows,
}

/// The visible screen as new lines, anchored after its last line.
pub async fn read_screen(target: &Target, id: PaneId) -> ToolResult<ReadBack> {
    let state = rows(target, id).await?;
    screen_of(target, id, &state).await
}

async fn screen_of(target: &Target, id: PaneId, state: &PaneRows) -> ToolResult<ReadBack> {
    let (lines, rows) = capture_from(target, id, state, Some(state.history)).await?;
    Ok(ReadBack {
        anchor: history::anchor_after(&lines, rows.history),
        lines,
        missed: false,
        missing: None,
        rows,
    })
}

/// Which of `rows` (where an anchored line can be now, nearest first)
/// holds `anchor`: each looked at by a small capture of its own, all sent
/// together with the pane's rows. `Some(None)`: none does; `None`: the
/// rows moved meanwhile, so the answer proves nothing.
async fn probe(
    target: &Target,
    id: PaneId,
    state: &PaneRows,
    anchor: &Anchor,
    candidates: &[u64],
) -> ToolResult<Option<Option<u64>>> {
    let span = (anchor.len as u64)
        .div_ceil(state.width.max(1) as u64)
        .max(1);
    let mut commands: Vec<Command> = candidates
        .iter()
        .map(|&row| {
            let from = row.saturating_sub(SLACK);
            capture_command(id, state, Some(from), Some(row + span + SLACK))
        })
        .collect();
    commands.push(rows_command(id));
    let mut replies = run_together(target, commands).await;
    let after = parse_rows(&replies.pop().expect("the rows' reply")?, id)?;
    if after.history != state.history || after.server != state.server || after.pid != state.pid {
        return Ok(None);
    }
    for (&row, captured) in candidates.iter().zip(replies) {
        let lines = history::lines(&captured?, row.saturating_sub(SLACK), state.width);
        let slack = history::uncertainty(&lines);
        if let history::Found::At { .. } = history::find_within(&lines, anchor, row, slack) {
            return Ok(Some(Some(row)));
        }
    }
    Ok(Some(None))
}

/// Every line printed in pane `id` after `anchor` (taken in tmux server
/// `server`, pane process `pid`), read back from the pane's history and
/// screen. When tmux no longer holds the anchored line, the result says
/// so and holds what tmux still has (the whole history after a trim, the
/// screen after a clear or respawn).
///
/// Bounded: the pane's rows, then (history at its limit, the line not on
/// its own row) one batch of small probes for the chunk it moved up by,
/// then one capture from just above where the line is; only when the rows
/// moved so far meanwhile that it is not there, one capture of the whole
/// history, searched as a whole.
pub async fn read_back(
    target: &Target,
    id: PaneId,
    server: u32,
    pid: u32,
    anchor: Anchor,
) -> ToolResult<ReadBack> {
    let lost = |mut screen: ReadBack, missing| {
        screen.missed = true;
        screen.missing = missing;
        screen
    };
    let state = rows(target, id).await?;
    if state.server != server || state.pid != pid {
        // Another tmux server, or the pane's process was replaced.
        return Ok(lost(screen_of(target, id, &state).await?, None));
    }
    if state.alternate {
        // A full-screen program draws: its screen is what there is to
        // read, and the anchor (in the normal screen's rows) stays valid
        // for when it leaves.
        let mut screen = screen_of(target, id, &state).await?;
        screen.anchor = anchor;
        return Ok(screen);
    }
    let bottom = state.history + state.height;
    let candidates = history::candidates(anchor.row, state.limit, state.history, bottom);
    let expected = match candidates.as_slice() {
        // Not on its row and history not trimmed: cleared or rewritten.
        [] if !history::trimmable(state.limit, state.history) => {
            return Ok(lost(screen_of(target, id, &state).await?, None));
        }
        [] => None,
        [only] => Some(Some(*only)),
        _ => probe(target, id, &state, &anchor, &candidates).await?,
    };
    match expected {
        Some(Some(row)) => {
            if let Some(found) = near_row(target, id, &state, &anchor, row).await? {
                return Ok(found);
            }
        }
        // Dropped from history: everything tmux holds is new.
        Some(None) => return all_new(target, id, &state, &anchor).await,
        None => {}
    }
    // The rows moved under the probes or the capture: the whole history,
    // once, searched as a whole.
    searched_whole(target, id, &state, &anchor, lost).await
}

/// The lines after `anchor`, expected at `row`: captured from a screenful
/// above it (rows that move while the capture is on its way still leave
/// the line inside), and looked for where tmux's trimming may have moved
/// it; `None` when it is not there.
async fn near_row(
    target: &Target,
    id: PaneId,
    state: &PaneRows,
    anchor: &Anchor,
    row: u64,
) -> ToolResult<Option<ReadBack>> {
    let from = row.saturating_sub(SLACK + state.height);
    let (lines, rows) = capture_from(target, id, state, Some(from)).await?;
    // Where it is now: rows of the old frame moved by what tmux trimmed
    // in between (nothing, or whole chunks).
    let slack = history::uncertainty(&lines) + moved(state, &rows);
    let chunk = history::trim_chunk(rows.limit);
    let moves = if history::trimmable(rows.limit, rows.history) {
        3
    } else {
        1
    };
    let looked = (0..moves).filter_map(|k| row.checked_sub(k * chunk));
    for r in looked {
        if let history::Found::At { index, fresh } = history::find_within(&lines, anchor, r, slack)
        {
            let from = if fresh { index } else { index + 1 };
            return Ok(Some(ReadBack {
                anchor: Anchor {
                    row: lines[index].row,
                    ..*anchor
                },
                lines: lines[from..].to_vec(),
                missed: false,
                missing: None,
                rows,
            }));
        }
    }
    Ok(None)
}

/// Everything tmux holds, all new: `anchor` was dropped from history.
async fn all_new(
    target: &Target,
    id: PaneId,
    state: &PaneRows,
    anchor: &Anchor,
) -> ToolResult<ReadBack> {
    let (all, rows) = capture_from(target, id, state, None).await?;
    Ok(ReadBack {
        anchor: Anchor::new(0, ""),
        lines: all,
        missed: true,
        missing: Some(history::missing_after(anchor.row, state.limit)),
        rows,
    })
}

/// The whole history, captured once and searched for `anchor` as a whole.
async fn searched_whole(
    target: &Target,
    id: PaneId,
    state: &PaneRows,
    anchor: &Anchor,
    lost: impl Fn(ReadBack, Option<u64>) -> ReadBack,
) -> ToolResult<ReadBack> {
    let (all, rows) = capture_from(target, id, state, None).await?;
    let slack = history::uncertainty(&all) + moved(state, &rows);
    match history::locate(&all, anchor, rows.limit, rows.history, slack) {
        Located::Found { from, dropped } => Ok(ReadBack {
            lines: all[from..].to_vec(),
            missed: false,
            missing: None,
            anchor: Anchor {
                row: anchor.row.saturating_sub(dropped),
                ..*anchor
            },
            rows,
        }),
        Located::Trimmed { missing } => Ok(ReadBack {
            anchor: Anchor::new(0, ""),
            lines: all,
            missed: true,
            missing: Some(missing),
            rows,
        }),
        Located::Gone => Ok(lost(screen_of(target, id, &rows).await?, None)),
    }
}

/// A cursor's anchor for pane `id` now: the last line printed whose text
/// is `last` (the last line a call returned), looked for from the bottom
/// of the screen and the screenful above it, else the last line with text;
/// with no `last`, the last line with text above the cursor's (where a
/// prompt is drawn, or about to be, and typed on later).
/// Given the pane's `height`, one round trip: the capture starts that many
/// rows above the screen (tmux stops at the oldest it holds), and the rows
/// read with it number its lines.
pub async fn anchor_at(
    target: &Target,
    id: PaneId,
    height: Option<usize>,
    last: Option<&str>,
) -> ToolResult<(PaneRows, Anchor)> {
    let state = match height {
        // Rows as seen from the screen's top: `from` is `height` above it.
        Some(height) => PaneRows {
            history: height as u64,
            height: height as u64,
            ..PaneRows::default()
        },
        None => rows(target, id).await?,
    };
    let from = state.history.saturating_sub(state.height);
    let (lines, rows) = capture_from(target, id, &state, Some(from)).await?;
    let Some(text) = last.map(str::trim_end) else {
        let anchor = history::before_cursor(&lines, rows.history, rows.cursor_y);
        return Ok((rows, anchor));
    };
    let anchor = match lines.iter().rev().find(|l| l.text == text) {
        Some(line) => Anchor::new(line.row, &line.text),
        None => history::anchor_after(&lines, rows.history),
    };
    Ok((rows, anchor))
}
