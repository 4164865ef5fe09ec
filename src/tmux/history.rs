//! Where a reader stopped, as a position in tmux's own record of a pane:
//! the pane's history and screen, read back with `capture-pane -J`.
//!
//! Our ring holds only what a control client streamed; tmux holds the
//! pane's history whether or not anyone streamed it. An [`Anchor`] names a
//! logical line (wrapped rows joined) by the absolute row it starts on
//! (`history_size + y` when it was seen) and proves it by a hash of its
//! text. Reading on from an anchor ([`locate`]) finds that line again in a
//! fresh capture and returns what follows it, whatever happened in between:
//! the pane paused, our client gone, the MCP server restarted.
//!
//! tmux numbers rows from the oldest kept history line, so a row stays put
//! until history reaches `history_limit`; then tmux drops the oldest
//! `max(limit / 10, 1)` rows at once ([`trim_chunk`]). A line that is not
//! where it was is looked for `k` chunks higher; one that was dropped means
//! lines are missing, and the count is known to be at least what the
//! smallest such drop removed after the anchor.
//!
//! Sans-IO: the caller runs the captures and the state queries.

use sha2::{Digest, Sha256};

/// How far (in rows) a line is looked for around where it should be when
/// the rows of a capture are uncertain: row counts of joined lines are
/// counted in characters, exact for ASCII, not for wide characters.
pub const SLACK: u64 = 4;

/// How uncertain the rows [`lines`] gave are: 0 when every character is
/// ASCII (a wrapped row then holds exactly `width` of them), else
/// [`SLACK`]. A looser search would find the wrong one of many equal
/// lines (a prompt).
pub fn uncertainty(lines: &[Line]) -> u64 {
    if lines.iter().all(|l| l.text.is_ascii()) {
        0
    } else {
        SLACK
    }
}

/// A logical line proved by its text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Anchor {
    /// Absolute row the line starts on (0: the oldest history row then).
    pub row: u64,
    /// Length in bytes of the text seen (trailing spaces trimmed).
    pub len: u32,
    /// First 8 bytes of the SHA-256 of that text.
    pub hash: u64,
}

impl Anchor {
    /// The anchor of `text` starting at `row`.
    pub fn new(row: u64, text: &str) -> Anchor {
        let text = text.trim_end();
        Anchor {
            row,
            len: text.len().min(u32::MAX as usize) as u32,
            hash: hash(text.as_bytes()),
        }
    }

    /// The line still reads as it did (or was written on after it: a
    /// prompt the person typed on). `Some(true)`: unchanged.
    fn proves(&self, text: &str) -> Option<bool> {
        let text = text.trim_end().as_bytes();
        let len = self.len as usize;
        if text.len() < len || hash(&text[..len]) != self.hash {
            return None;
        }
        Some(text.len() == len)
    }
}

fn hash(text: &[u8]) -> u64 {
    let digest = Sha256::digest(text);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// Rows tmux drops at once when history is full.
pub fn trim_chunk(history_limit: u64) -> u64 {
    (history_limit / 10).max(1)
}

/// A captured logical line and the absolute row it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub row: u64,
    pub text: String,
}

/// Splits `capture-pane -J` output that starts at absolute row `first`
/// into logical lines with their rows, for a pane `width` cells wide.
/// Trailing spaces are kept by `-J` on wrapped rows, which is what lets the
/// rows of a joined line be counted; they are trimmed from the text.
pub fn lines(captured: &[Vec<u8>], first: u64, width: usize) -> Vec<Line> {
    let width = width.max(1) as u64;
    let mut row = first;
    let mut out = Vec::with_capacity(captured.len());
    for raw in captured {
        let text = String::from_utf8_lossy(raw);
        let cells = text.chars().count() as u64;
        let rows = cells.div_ceil(width).max(1);
        out.push(Line {
            row,
            text: text.trim_end().to_owned(),
        });
        row += rows;
    }
    out
}

/// The anchor of what a reader has now seen of `lines`: the last line
/// with text (a blank tail is not kept: it is the screen's empty rows).
/// `None` when every line is blank: then `fallback` (the top row read).
pub fn anchor_after(lines: &[Line], fallback: u64) -> Anchor {
    match lines.iter().rev().find(|l| !l.text.is_empty()) {
        Some(l) => Anchor::new(l.row, &l.text),
        None => Anchor::new(fallback, ""),
    }
}

/// Where input typed now lands, as an anchor: the last line with text
/// above the logical line holding the cursor (that line is written on by
/// the echo, so it is new output itself). `lines` are the visible screen,
/// its first row at absolute row `top`; the cursor is on screen row
/// `cursor_y`. With nothing above the cursor, the top row, unproved.
pub fn before_cursor(lines: &[Line], top: u64, cursor_y: u64) -> Anchor {
    let cursor = top + cursor_y;
    let at = lines.iter().rposition(|l| l.row <= cursor).unwrap_or(0);
    anchor_after(&lines[..at], top)
}

/// Where the anchored line is in `lines`.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// At this index; `fresh` when it was written on since (it is new
    /// output itself and is returned again).
    At { index: usize, fresh: bool },
    /// Not there.
    Lost,
}

/// Looks for `anchor` near `expected` (its row, or that row less what
/// tmux dropped), the nearest proof winning.
pub fn find(lines: &[Line], anchor: &Anchor, expected: u64) -> Found {
    find_within(lines, anchor, expected, SLACK)
}

/// [`find`] within `slack` rows of `expected`.
pub fn find_within(lines: &[Line], anchor: &Anchor, expected: u64, slack: u64) -> Found {
    let best = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.row.abs_diff(expected) <= slack)
        .filter_map(|(index, line)| {
            let same = anchor.proves(&line.text)?;
            // The nearest wins; at equal distance an unchanged line.
            Some(((line.row.abs_diff(expected), !same, index), same))
        })
        .min_by_key(|(key, _)| *key);
    match best {
        Some(((_, _, index), same)) => Found::At {
            index,
            fresh: !same,
        },
        None => Found::Lost,
    }
}

/// Whether rows may have been trimmed: tmux trims only a history at its
/// limit, and leaves it within a chunk of it; below that, rows stay put.
pub fn trimmable(limit: u64, history: u64) -> bool {
    limit > 0 && history + trim_chunk(limit) >= limit
}

/// The rows where a line anchored at `row` can be now, nearest first: its
/// own row, and (history at its `limit`) each whole chunk higher, among
/// the `bottom` rows tmux holds.
pub fn candidates(row: u64, limit: u64, history: u64, bottom: u64) -> Vec<u64> {
    let step = trim_chunk(limit);
    let mut rows = Vec::new();
    let mut at = Some(row);
    while let Some(r) = at {
        if r < bottom {
            rows.push(r);
        }
        if !trimmable(limit, history) {
            break;
        }
        at = r.checked_sub(step);
    }
    rows
}

/// At least how many lines printed after a line anchored at `row` are
/// gone once tmux dropped it: the smallest drop that removed the row also
/// removed the rows after it up to the next multiple of the chunk.
pub fn missing_after(row: u64, limit: u64) -> u64 {
    let step = trim_chunk(limit);
    (row / step + 1) * step - row - 1
}

/// What a read from an anchor found in a capture of the whole history.
#[derive(Debug, PartialEq, Eq)]
pub enum Located {
    /// Found after `dropped` rows were trimmed from the top; the lines
    /// from `from` on are new.
    Found { from: usize, dropped: u64 },
    /// The line was dropped from history: every line held is new, and at
    /// least `missing` lines (maybe 0) printed after it are gone.
    Trimmed { missing: u64 },
    /// Not found and not explained by trimming (cleared, rewritten).
    Gone,
}

/// Finds `anchor` in `lines`, a capture starting at absolute row 0 of a
/// pane whose history limit is `limit` and whose history now holds
/// `history` rows: at its own row first, then `k` trim chunks higher.
pub fn locate(lines: &[Line], anchor: &Anchor, limit: u64, history: u64, slack: u64) -> Located {
    let chunk = trim_chunk(limit);
    let trimmed = trimmable(limit, history);
    let mut dropped = 0;
    while let Some(expected) = anchor.row.checked_sub(dropped) {
        if let Found::At { index, fresh } = find_within(lines, anchor, expected, slack) {
            let from = if fresh { index } else { index + 1 };
            return Located::Found { from, dropped };
        }
        if !trimmed {
            return Located::Gone;
        }
        dropped += chunk;
    }
    Located::Trimmed {
        missing: missing_after(anchor.row, limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(rows: &[&str]) -> Vec<Vec<u8>> {
        rows.iter().map(|r| r.as_bytes().to_vec()).collect()
    }

    #[test]
    fn joined_lines_count_their_rows() {
        // Width 4: "abcdefgh" spans two rows, "ij" one.
        let got = lines(&captured(&["ab  ", "abcdefgh", "ij", ""]), 10, 4);
        let rows: Vec<u64> = got.iter().map(|l| l.row).collect();
        assert_eq!(rows, [10, 11, 13, 14]);
        assert_eq!(got[0].text, "ab");
        assert_eq!(anchor_after(&got, 10), Anchor::new(13, "ij"));
        assert_eq!(anchor_after(&got[3..], 14), Anchor::new(14, ""));
    }

    #[test]
    fn an_anchor_is_found_unchanged_or_written_on() {
        let got = lines(&captured(&["x", "$ ", "y"]), 0, 80);
        let prompt = Anchor::new(1, "$ ");
        assert_eq!(
            find(&got, &prompt, 1),
            Found::At {
                index: 1,
                fresh: false
            }
        );
        let typed = lines(&captured(&["x", "$ ls", "y"]), 0, 80);
        assert_eq!(
            find(&typed, &prompt, 1),
            Found::At {
                index: 1,
                fresh: true
            }
        );
        let other = lines(&captured(&["x", "% ", "y"]), 0, 80);
        assert_eq!(find(&other, &prompt, 1), Found::Lost);
        // Too far from where it should be.
        assert_eq!(find(&got, &Anchor::new(9, "$ "), 9), Found::Lost);
    }

    #[test]
    fn trimmed_history_is_followed_by_chunks() {
        // Limit 100 (chunk 10): the anchor "line5" at row 5 now sits at
        // row 5 - 10k for no k >= 0: it was dropped.
        let held: Vec<String> = (40..140).map(|i| format!("line{i}")).collect();
        let refs: Vec<&str> = held.iter().map(String::as_str).collect();
        let got = lines(&captured(&refs), 0, 80);
        let gone = Anchor::new(5, "line5");
        assert_eq!(
            locate(&got, &gone, 100, 95, SLACK),
            Located::Trimmed { missing: 4 }
        );
        // "line63" was at row 63, the top 40 rows were dropped (4 chunks).
        let moved = Anchor::new(63, "line63");
        assert_eq!(
            locate(&got, &moved, 100, 95, SLACK),
            Located::Found {
                from: 24,
                dropped: 40
            }
        );
        assert_eq!(got[24].text, "line64");
        // Far from the limit rows do not move: a changed row is gone.
        assert_eq!(locate(&got, &moved, 2000, 95, SLACK), Located::Gone);
    }

    #[test]
    fn candidates_are_the_rows_whole_chunks_higher() {
        // Limit 100 (chunk 10), history at it: row 25, then 15 and 5.
        assert_eq!(candidates(25, 100, 95, 120), [25, 15, 5]);
        // Rows tmux does not hold yet are no candidates.
        assert_eq!(
            candidates(125, 100, 95, 120),
            [115, 105, 95, 85, 75, 65, 55, 45, 35, 25, 15, 5]
        );
        // Far from the limit a line stays on its row.
        assert_eq!(candidates(25, 2000, 95, 120), [25]);
        assert_eq!(missing_after(5, 100), 4);
        assert_eq!(missing_after(9, 100), 0);
        assert_eq!(missing_after(10, 100), 9);
    }

    #[test]
    fn a_blank_anchor_is_proved_by_any_line() {
        let blank = Anchor::new(0, "");
        let got = lines(&captured(&["hello"]), 0, 80);
        assert_eq!(
            locate(&got, &blank, 2000, 0, SLACK),
            Located::Found {
                from: 0,
                dropped: 0
            }
        );
    }

    #[test]
    fn input_is_anchored_above_the_cursor_line() {
        let screen: Vec<Vec<u8>> = [">>> 1", "1", ">>> ", ""]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        let rows = lines(&screen, 100, 80);
        assert_eq!(before_cursor(&rows, 100, 2), Anchor::new(101, "1"));
        assert_eq!(before_cursor(&rows, 100, 0), Anchor::new(100, ""));
        // A cursor on a wrapped line's second row is still on that line.
        let wide = vec![vec![b'x'; 100], b"$ ".to_vec()];
        let rows = lines(&wide, 0, 80);
        assert_eq!(before_cursor(&rows, 0, 1), Anchor::new(0, ""));
        assert_eq!(before_cursor(&rows, 0, 2), Anchor::new(0, &"x".repeat(100)));
    }
}
