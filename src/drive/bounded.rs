//! Bounding what a tool returns: an agent pays for every byte of a result.
//!
//! [`HeadTail`] keeps the first and the last lines of a stream of any
//! length in bounded memory (errors tend to be at the top, the verdict at
//! the bottom) and counts exactly what it left out between them.
//! [`tail_within`] keeps the end of a list of lines within a byte budget.

use std::collections::VecDeque;

use serde::{Deserialize, Deserializer};

use crate::drive::{ToolError, ToolResult};
use crate::panes::lines::unpadded;

/// Default byte budget of the main content of a result (a capture, a
/// buffer, a page of output) when the caller did not ask for more: with the
/// text copy beside `structuredContent`, a result stays under 64 KB.
pub const DEFAULT_BYTES: usize = 24_000;

/// A `max_lines` argument told apart three ways: left out (`None`: the
/// tool's default bound), null (`Some(None)`: all), or a count.
pub type MaxLines = Option<Option<i64>>;

/// Deserializes a [`MaxLines`]: any value given, null included, is `Some`
/// (a field left out gets `None` through `#[serde(default)]`).
pub fn explicit<'de, D: Deserializer<'de>>(d: D) -> Result<MaxLines, D::Error> {
    Option::<i64>::deserialize(d).map(Some)
}

/// The (lines, bytes) bound of a call: `default` when `max_lines` was
/// left out; a caller who names `max_lines` (null: all) asked for more, so
/// only the server's `backstop` bounds the bytes.
pub fn bound(
    max_lines: MaxLines,
    default: (usize, usize),
    backstop: usize,
) -> ToolResult<(usize, usize)> {
    match max_lines {
        None => Ok(default),
        Some(None) => Ok((usize::MAX, backstop)),
        Some(Some(n)) if n <= 0 => Err(ToolError::invalid(format!(
            "max_lines must be positive or null (received {n})"
        ))),
        Some(Some(n)) => Ok((n as usize, backstop)),
    }
}

/// How many leading lines to cut so that at most `max_lines` lines, joined
/// with `\n`, fit in `max_bytes`.
pub fn lines_to_cut(lines: &[String], (max_lines, max_bytes): (usize, usize)) -> usize {
    let over = lines.len().saturating_sub(max_lines);
    over + tail_within(&lines[over..], max_bytes)
}

/// The first `limit` bytes of `line`, cut on a character boundary.
pub fn cut_to(line: &[u8], limit: usize) -> &[u8] {
    if line.len() <= limit {
        return line;
    }
    let mut end = limit;
    // Back up over UTF-8 continuation bytes so a character stays whole.
    while end > 0 && (line[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    &line[..end]
}

/// The first lines and the last lines of a stream, within `max_lines`
/// and `max_bytes` together; what does not fit is left out of the middle.
pub struct HeadTail {
    head: Vec<String>,
    tail: VecDeque<String>,
    head_open: bool,
    head_bytes: usize,
    tail_bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    /// Lines left out between head and tail.
    pub left_out: usize,
    /// Bytes cut from lines longer than the whole budget.
    pub cut_bytes: usize,
    /// The parts of a line cut at the line view's bound, joined up to
    /// `max_bytes` ([`HeadTail::push_part`]); what is past is cut.
    pending: Vec<u8>,
}

impl HeadTail {
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        HeadTail {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_open: true,
            head_bytes: 0,
            tail_bytes: 0,
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(1),
            left_out: 0,
            cut_bytes: 0,
            pending: Vec::new(),
        }
    }

    /// Adds a part of the next line; `ends`: the line ends with it. A line
    /// longer than the line view's bound comes in parts, and is one line
    /// here: kept up to `max_bytes`, the rest counted in `cut_bytes`, not
    /// as lines left out.
    pub fn push_part(&mut self, part: &[u8], ends: bool) {
        if self.pending.is_empty() && ends {
            return self.push(part);
        }
        let room = self.max_bytes.saturating_sub(self.pending.len());
        let kept = cut_to(part, room);
        self.cut_bytes += part.len() - kept.len();
        self.pending.extend_from_slice(kept);
        if ends {
            let line = std::mem::take(&mut self.pending);
            self.push(&line);
        }
    }

    /// Ends the output's last line: `last`, what the line view holds of it
    /// (empty when the output ended with a newline, or at a part's end).
    pub fn end_output(&mut self, last: &[u8]) {
        if !last.is_empty() || !self.pending.is_empty() {
            self.push_part(last, true);
        }
    }

    /// Adds the next line (bytes, decoded lossily only when kept), or the
    /// end of one whose parts came before. The line that stands for those
    /// left out counts against `max_lines`.
    pub fn push(&mut self, line: &[u8]) {
        if !self.pending.is_empty() {
            return self.push_part(line, true);
        }
        let line = unpadded(line);
        let head_lines = (self.max_lines - 1).div_ceil(2);
        let head_budget = self.max_bytes / 2;
        if self.head_open
            && self.head.len() < head_lines
            && self.head_bytes + line.len() <= head_budget
        {
            self.head_bytes += line.len();
            self.head.push(String::from_utf8_lossy(line).into_owned());
            return;
        }
        self.head_open = false;
        let lines_left = self.max_lines - self.head.len();
        let bytes_left = self.max_bytes - self.head_bytes;
        let kept = cut_to(line, bytes_left);
        self.cut_bytes += line.len() - kept.len();
        self.tail_bytes += kept.len();
        self.tail
            .push_back(String::from_utf8_lossy(kept).into_owned());
        loop {
            let marker = usize::from(self.left_out > 0 || self.tail.len() > lines_left);
            let over_lines = self.tail.len() + marker > lines_left;
            let over_bytes = self.tail_bytes > bytes_left && self.tail.len() > 1;
            let Some(gone) = (over_lines || over_bytes)
                .then(|| self.tail.pop_front())
                .flatten()
            else {
                break;
            };
            self.tail_bytes -= gone.len();
            self.left_out += 1;
        }
    }

    /// The last line kept.
    pub fn last(&self) -> Option<&str> {
        self.tail.back().or(self.head.last()).map(String::as_str)
    }

    /// True when something was left out or cut.
    pub fn truncated(&self) -> bool {
        self.left_out > 0 || self.cut_bytes > 0
    }

    /// The kept lines in order; `gap` makes the line that stands where
    /// lines were left out (given their count).
    pub fn into_lines(self, gap: impl FnOnce(usize) -> String) -> Vec<String> {
        let mut out = self.head;
        if self.left_out > 0 {
            out.push(gap(self.left_out));
        }
        out.extend(self.tail);
        out
    }
}

/// How many leading lines to drop so that the rest, joined with `\n`,
/// fits in `max_bytes` (at least one line is always kept).
pub fn tail_within(lines: &[String], max_bytes: usize) -> usize {
    if lines.is_empty() {
        return 0;
    }
    let mut bytes = 0;
    for (i, line) in lines.iter().enumerate().rev() {
        bytes += line.len() + 1;
        if bytes > max_bytes + 1 {
            return (i + 1).min(lines.len() - 1);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: usize, max_lines: usize, max_bytes: usize) -> (Vec<String>, usize) {
        let mut h = HeadTail::new(max_lines, max_bytes);
        for i in 1..=lines {
            h.push(i.to_string().as_bytes());
        }
        let left = h.left_out;
        (h.into_lines(|n| format!("[{n}]")), left)
    }

    #[test]
    fn a_line_in_parts_is_one_line_cut_not_lines_left_out() {
        let long = |h: &mut HeadTail| {
            for _ in 0..4 {
                h.push_part(&[b'x'; 64 * 1024], false);
            }
            h.push_part(&[b'x'; 37_856], true);
        };
        // Alone: kept up to the budget, the rest cut, nothing left out.
        let mut h = HeadTail::new(100, 1000);
        long(&mut h);
        assert_eq!((h.left_out, h.cut_bytes), (0, 300_000 - 1000));
        assert_eq!(h.into_lines(|n| format!("[{n}]")), ["x".repeat(1000)]);
        // Between two lines that the budget keeps: one line left out.
        let mut h = HeadTail::new(100, 1000);
        h.push(b"before");
        long(&mut h);
        h.push(b"after");
        assert_eq!(h.left_out, 1);
        assert_eq!(
            h.into_lines(|n| format!("[{n}]")),
            ["before", "[1]", "after"]
        );
    }

    #[test]
    fn what_fits_is_kept_whole() {
        let (lines, left) = run(10, 10, 1000);
        assert_eq!(left, 0);
        assert_eq!(lines, (1..=10).map(|i| i.to_string()).collect::<Vec<_>>());
    }

    #[test]
    fn head_and_tail_with_an_exact_count_between() {
        // The marker is one of the max_lines lines.
        let (lines, left) = run(20_000, 5, 1000);
        assert_eq!(lines, ["1", "2", "[19996]", "19999", "20000"]);
        assert_eq!(left, 19_996);
        let (lines, left) = run(10, 3, 1000);
        assert_eq!(
            (lines, left),
            (vec!["1".into(), "[8]".into(), "10".into()], 8)
        );
        for max in 1..8 {
            assert_eq!(run(100, max, 1000).0.len(), max, "max_lines={max}");
        }
    }

    #[test]
    fn bytes_bound_too() {
        // 100-byte lines, 450 bytes: 2 in the head, 2 in the tail.
        let mut h = HeadTail::new(100, 450);
        for i in 0..10u8 {
            h.push(&[b'a' + i; 100]);
        }
        assert_eq!(h.left_out, 6);
        let lines = h.into_lines(|n| n.to_string());
        assert_eq!(lines.len(), 5);
        assert!(lines[0].starts_with('a') && lines[4].starts_with('j'));
    }

    #[test]
    fn a_line_longer_than_the_budget_is_cut_on_a_character() {
        let mut h = HeadTail::new(10, 7);
        h.push("ééééé".as_bytes());
        assert_eq!(h.cut_bytes, 4);
        assert!(h.truncated());
        assert_eq!(h.into_lines(|_| unreachable!()), ["ééé"]);
    }

    #[test]
    fn the_bound_is_the_default_unless_asked() {
        let d = (500, DEFAULT_BYTES);
        assert_eq!(bound(None, d, 1 << 20).unwrap(), d);
        assert_eq!(bound(Some(Some(3)), d, 1 << 20).unwrap(), (3, 1 << 20));
        assert_eq!(
            bound(Some(None), d, 1 << 20).unwrap(),
            (usize::MAX, 1 << 20)
        );
        assert!(bound(Some(Some(0)), d, 1 << 20).is_err());
        let lines: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert_eq!(lines_to_cut(&lines, (4, 1000)), 6);
        assert_eq!(lines_to_cut(&lines, (100, 3)), 8);
    }

    #[test]
    fn tail_within_keeps_the_last_lines() {
        let lines: Vec<String> = ["aaaa", "bb", "cc"].map(String::from).into();
        assert_eq!(tail_within(&lines, 100), 0);
        assert_eq!(tail_within(&lines, 5), 1);
        assert_eq!(tail_within(&lines, 1), 2);
    }
}
