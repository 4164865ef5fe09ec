//! The last lines of a pane's output, bounded, that a wait returns as its
//! `tail` or `matched_lines`.

use crate::panes::lines::unpadded;

pub const TAIL_LINES: usize = 20;
pub const TAIL_BYTES: usize = 2000;

/// A line as an agent reads it: its padding cut, decoded lossily.
pub fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(unpadded(line)).into_owned()
}

/// The last lines, at most `TAIL_LINES` and `TAIL_BYTES` (tail kept; a
/// line longer than what is left keeps its own tail).
pub fn bounded_tail(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut left = TAIL_BYTES;
    for line in lines.iter().rev().take(TAIL_LINES) {
        if left == 0 {
            break;
        }
        if line.len() <= left {
            left -= line.len();
            out.push(line.clone());
        } else {
            let mut cut = line.len() - left;
            while !line.is_char_boundary(cut) {
                cut += 1;
            }
            out.push(line[cut..].to_owned());
            break;
        }
    }
    out.reverse();
    out
}

/// The last lines seen, reusing their buffers: a flood of millions of lines
/// costs no allocation per line.
#[derive(Default)]
pub struct TailBuf {
    lines: std::collections::VecDeque<Vec<u8>>,
}

impl TailBuf {
    pub fn push(&mut self, line: &[u8]) {
        let mut buf = if self.lines.len() == TAIL_LINES {
            self.lines.pop_front().expect("full")
        } else {
            Vec::new()
        };
        buf.clear();
        buf.extend_from_slice(line);
        self.lines.push_back(buf);
    }

    pub fn with_partial(&self, partial: &[u8]) -> Vec<String> {
        let mut out: Vec<String> = self.lines.iter().map(|l| lossy(l)).collect();
        if !partial.is_empty() {
            out.push(lossy(partial));
        }
        bounded_tail(&out)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_last_line_keeps_its_tail() {
        let long = "x".repeat(3000) + "END";
        let tail = bounded_tail(&["before".to_owned(), long]);
        assert_eq!(tail.len(), 1);
        assert!(tail[0].ends_with("END") && tail[0].len() == TAIL_BYTES);
    }
}
