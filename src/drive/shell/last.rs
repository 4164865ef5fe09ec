//! The last command's output of a pane, from its shell's OSC 133 marks:
//! what `capture_pane(last_command=true)` returns.
//!
//! It can be known two ways, and only these:
//! - the pane's recording holds the marks: its output was recorded while
//!   that command ran (a wait or a run_command watched it). This is exact,
//!   byte for byte, with the status of its `D` mark;
//! - tmux ≥ 3.7 keeps the marks per line (`capture-pane -F` shows a line
//!   where output started as `O`, a prompt as `P`): the lines from the
//!   last `O` to the next `P`, as the screen holds them, with no status.
//!
//! Otherwise the shell emits no marks, or they were never seen: an error
//! says so.

use super::span::{FoundMark, marker};
use super::typed::OSC;
use crate::drive::bounded;
use crate::drive::tail::lossy;
use crate::drive::watch::MAX_LINE;
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::panes::marks::{CommandOutput, MARKS, MarkHistory};
use crate::panes::osc::{OscScanner, Piece};
use crate::panes::{Follower, LineView};
use crate::tmux::version::Features;
use crate::tmux::{Command, PaneId};

/// The last command's output lines, and what is known of its end.
struct LastCommand {
    lines: Vec<String>,
    /// `None`: still running; `Some(None)`: ended, status unknown.
    ended: Option<Option<i64>>,
}

/// The last command's output of `pane`, as capture_pane text: a header
/// line saying how it ended, then its last lines within `bound`.
pub async fn last_command(
    target: &Target,
    pane: PaneId,
    bound: (usize, usize),
) -> ToolResult<String> {
    let found = match from_recording(target, pane) {
        Some(found) => found,
        None => from_tmux(target, pane).await?,
    };
    let header = match found.ended {
        None => "[last command: still running]".to_owned(),
        Some(None) => "[last command: ended, exit status unknown]".to_owned(),
        Some(Some(status)) => format!("[last command: exit status {status}]"),
    };
    let cut = bounded::lines_to_cut(&found.lines, bound);
    let mut text = header;
    if cut > 0 {
        text.push_str(&format!("\n[... truncated {cut} lines ...]"));
    }
    for line in &found.lines[cut..] {
        text.push('\n');
        text.push_str(line);
    }
    Ok(text)
}

/// The last command the pane's recording shows between marks, unless
/// output was lost after its start (a later command may have run unseen).
fn from_recording(target: &Target, pane: PaneId) -> Option<LastCommand> {
    let follower = Follower::new(target.hub.panes().get(pane)?);
    let mut scanner = OscScanner::new(&[MARKS]);
    let mut marks = MarkHistory::default();
    let mut gap_at = None;
    let mut cursor = 0;
    follower.read_raw(&mut cursor, &mut |at, chunk, gap| {
        if gap {
            scanner.reset();
            gap_at = Some(at);
        }
        scanner.scan(at, chunk, &mut |piece| {
            if let Piece::Osc(osc) = piece {
                marks.see(&osc);
            }
        });
    });
    let run = marks.last_command()?;
    if gap_at.is_some_and(|gap| gap > run.from) {
        return None;
    }
    Some(recorded_output(&follower, run))
}

/// The recorded output of `run` as lines, and its status. When
/// run_command's wrapper ran it, the shell's marks hold the wrapper's own
/// output too (the command shown again) and the wrapper's status: the
/// output is what our markers delimit, the status the one they carry.
fn recorded_output(follower: &Follower, run: CommandOutput) -> LastCommand {
    let mut view = LineView::new(MAX_LINE);
    let mut lines = Vec::new();
    const MARKERS: &[&[u8]] = &[OSC.as_bytes()];
    let mut scanner = OscScanner::new(MARKERS);
    let (mut status, mut stopped) = (run.status, false);
    let mut cursor = run.from;
    let to = run.to.unwrap_or(u64::MAX);
    follower.read_raw(&mut cursor, &mut |at, chunk, _| {
        let keep = to.saturating_sub(at).min(chunk.len() as u64) as usize;
        scanner.scan(at, &chunk[..keep], &mut |piece| match piece {
            Piece::Text(_, bytes) if !stopped => {
                view.feed(bytes, &mut |line| lines.push(lossy(line)))
            }
            Piece::Text(..) => {}
            Piece::Osc(osc) => match marker(osc.payload) {
                Some((_, FoundMark::Start)) => {
                    lines.clear();
                    view.reset();
                }
                Some((_, FoundMark::End(own))) => {
                    (status, stopped) = (own, true);
                }
                Some((_, FoundMark::Prompt)) | None => {}
            },
        });
    });
    if !view.partial().is_empty() {
        lines.push(lossy(view.partial()));
    }
    // Our end marker ends it even before the shell's `D` is recorded.
    let ended = (run.to.is_some() || stopped).then_some(status);
    LastCommand { lines, ended }
}

/// The last command tmux ≥ 3.7 shows by its line marks.
async fn from_tmux(target: &Target, pane: PaneId) -> ToolResult<LastCommand> {
    let unknown = |why: &str| {
        ToolError::new(
            ErrorKind::Refused,
            format!("the last command's output of pane {pane} is not known: {why}"),
        )
        .suggest("run_command returns a command's output; a shell with OSC 133 marks (fish 4, or bash/zsh with their integration) lets it be read later.")
    };
    let version = target.hub.version().await;
    if !Features::of(version).line_marks {
        return Err(unknown(&format!(
            "its output was not recorded while it ran with OSC 133 marks, and tmux {version} does not keep them per line (3.7 does)"
        )));
    }
    let cmd = Command::new("capture-pane")
        .flag("-p")
        .flag("-F")
        .opt_if("-S", Some("-".to_owned()))
        .opt_if("-E", Some("-".to_owned()))
        .target(pane);
    let rows = target.run(cmd).await?;
    marked_output(&rows)
        .ok_or_else(|| unknown("no line of the pane is marked as a command's output"))
}

/// From `capture-pane -p -F` rows (`<flags> <text>`), the lines from the
/// last row marked `O` (output start) to the next marked `P` (prompt);
/// wrapped rows (`W`) are joined.
fn marked_output(rows: &[Vec<u8>]) -> Option<LastCommand> {
    let parsed: Vec<(&[u8], &[u8])> = rows
        .iter()
        .map(|row| {
            let space = memchr::memchr(b' ', row).unwrap_or(row.len());
            (&row[..space], row.get(space + 1..).unwrap_or_default())
        })
        .collect();
    let start = parsed
        .iter()
        .rposition(|(flags, _)| flags.contains(&b'O'))?;
    // A row marked both: the prompt came back on the row where output
    // would have started (a command with no output; or output without a
    // final newline, which whole rows cannot tell apart).
    let prompt = parsed[start..]
        .iter()
        .position(|(flags, _)| flags.contains(&b'P'))
        .map(|p| start + p);
    let mut lines: Vec<String> = Vec::new();
    let mut joining = false;
    for (flags, text) in &parsed[start..prompt.unwrap_or(parsed.len())] {
        let text = String::from_utf8_lossy(text);
        match lines.last_mut() {
            Some(last) if joining => last.push_str(&text),
            _ => lines.push(text.into_owned()),
        }
        joining = flags.contains(&b'W');
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    Some(LastCommand {
        lines,
        ended: prompt.map(|_| None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<Vec<u8>> {
        text.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    /// The recording of `stream`, read for its last command.
    fn last_recorded(stream: &[u8]) -> Option<LastCommand> {
        use crate::ids::SessionId;
        let panes = crate::panes::registry::Panes::new(1 << 16, 4);
        let pane = panes.watch(PaneId(1), SessionId(0));
        panes.output(SessionId(0), PaneId(1), stream);
        let follower = Follower::new(pane);
        let mut scanner = OscScanner::new(&[MARKS]);
        let mut marks = MarkHistory::default();
        follower.read_raw(&mut 0, &mut |at, chunk, _| {
            scanner.scan(at, chunk, &mut |piece| {
                if let Piece::Osc(osc) = piece {
                    marks.see(&osc);
                }
            })
        });
        Some(recorded_output(&follower, marks.last_command()?))
    }

    #[test]
    fn a_recorded_command_is_read_between_its_marks_or_our_markers() {
        let plain = b"$ seq 2\r\n\x1b]133;C\x07\x1b[1m1\r\n2\x1b]133;D;1\x07\x1b]133;A\x07$ ";
        let last = last_recorded(plain).unwrap();
        assert_eq!(
            (last.lines, last.ended),
            (vec!["1".into(), "2".into()], Some(Some(1)))
        );
        // Our wrapper ran it: its re-shown command is not output, and its
        // status is the command's, not the wrapper line's.
        let wrapped = b"\x1b]133;C\x07\r\x1b[1A\x1b[3G\x1b[Jexit 3\n\x1b]6973;n;S\x07out\r\n\x1b]6973;n;E;3\x07\x1b]133;D;0\x07";
        let last = last_recorded(wrapped).unwrap();
        assert_eq!(
            (last.lines, last.ended),
            (vec!["out".into()], Some(Some(3)))
        );
        let running = last_recorded(b"\x1b]133;C\x07so far").unwrap();
        assert_eq!(
            (running.lines, running.ended),
            (vec!["so far".into()], None)
        );
        assert!(last_recorded(b"$ no marks\r\n").is_none());
    }

    #[test]
    fn the_last_marked_output_runs_to_the_next_prompt() {
        let done = marked_output(&rows(
            "P $ echo old\nO old\nP $ seq 3\nO 1\n- 2\nW 3333\n- 33\nP $ \n- \n",
        ))
        .unwrap();
        assert_eq!(done.lines, ["1", "2", "333333"]);
        assert_eq!(done.ended, Some(None));
        let running = marked_output(&rows("P $ sleep 9; echo\nO partial\n- \n")).unwrap();
        assert_eq!(running.lines, ["partial"]);
        assert_eq!(running.ended, None);
        let empty = marked_output(&rows("P $ true\nOP $ \n")).unwrap();
        assert_eq!((empty.lines.len(), empty.ended), (0, Some(None)));
        assert!(marked_output(&rows("- $ ls\n- a\n")).is_none());
    }
}
