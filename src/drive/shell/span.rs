//! Where a command's output starts and ends in the pane's recording, and
//! the reading of it until it ends.
//!
//! Either delimiter is an OSC sequence found in the raw recording (tmux's
//! screen drops both, `%output` carries them byte for byte): our own
//! markers around the wrapper (`ESC ] 6973 ; <nonce> ; S` and `… ; E ;
//! <status>`), or the shell's OSC 133 marks (`C` where the output starts,
//! `D;<status>` where the command ended). Either gives the exact offset of
//! the command's first output byte: the cursor a result carries for
//! `capture_since`.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::typed::OSC;
use crate::drive::bounded::HeadTail;
use crate::drive::pace::{Pace, Woke};
use crate::drive::watch::{MAX_LINE, Watch};
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::panes::LineView;
use crate::panes::marks::{MARKS, Mark};
use crate::panes::osc::{Osc, OscScanner, Piece};

/// The OSC numbers a span looks for.
const NUMBERS: &[&[u8]] = &[OSC.as_bytes(), MARKS];

/// What delimits the command's output.
#[derive(Clone, Debug)]
pub enum Delimiters {
    /// Our markers, with this nonce.
    Markers(String),
    /// The shell's OSC 133 marks.
    Marks,
}

/// What a delimiter found says.
pub enum FoundMark {
    Start,
    End(Option<i64>),
    /// A shell's prompt mark (`A`): after the output started, the command
    /// ended even if the shell gave no `D` (it stopped marking commands).
    Prompt,
}

/// One of our markers, by its payload (`<nonce>;S`, `<nonce>;E;<status>`):
/// its nonce and what it says.
pub fn marker(payload: &[u8]) -> Option<(&[u8], FoundMark)> {
    let semi = memchr::memchr(b';', payload)?;
    let (nonce, rest) = payload.split_at(semi);
    if rest == b";S" {
        return Some((nonce, FoundMark::Start));
    }
    let status = rest.strip_prefix(b";E;")?;
    let status = std::str::from_utf8(status)
        .ok()
        .and_then(|s| s.parse().ok());
    // Our own printf wrote it: a number, or a failure of ours.
    Some((nonce, FoundMark::End(Some(status.unwrap_or(-1)))))
}

impl Delimiters {
    fn read(&self, osc: &Osc<'_>) -> Option<FoundMark> {
        match self {
            Delimiters::Markers(nonce) if osc.number == OSC.as_bytes() => marker(osc.payload)
                .filter(|(n, _)| *n == nonce.as_bytes())
                .map(|(_, found)| found),
            Delimiters::Markers(_) => None,
            Delimiters::Marks => match Mark::of(osc)? {
                Mark::Output => Some(FoundMark::Start),
                Mark::Done(status) => Some(FoundMark::End(status)),
                Mark::Prompt => Some(FoundMark::Prompt),
                Mark::Input => None,
            },
        }
    }
}

/// One command's output in the recording, found chunk by chunk.
pub struct Span {
    delimiters: Delimiters,
    scanner: OscScanner,
    /// Ring offset of the command's first output byte.
    pub output_from: Option<u64>,
    /// Ring offset of the end delimiter, and the status it carried.
    pub ended: Option<(u64, Option<i64>)>,
    /// Ring offset just past the end delimiter.
    pub after_end: u64,
    /// By marks: the output's last line, held until a newline or the end,
    /// so that zsh's `PROMPT_SP` (printed before its `D` mark) is cut off.
    held: Vec<u8>,
    /// [`collect`] returns once the output started (a background command).
    pub until_start: bool,
}

/// Most bytes of a last line held back (zsh's `PROMPT_SP` is a pane's
/// width of spaces).
const MAX_HELD: usize = 8 * 1024;

/// zsh's `PROMPT_SP`, which it prints after a command and before its
/// prompt hooks: the end-of-line mark (`%` or `#`, in reverse video), the
/// rest of the row in spaces, and `\r \r`.
static PROMPT_SP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\x1b\[[0-9;]*m)*[%#](?:\x1b\[[0-9;]*m)* *\r \r\z").expect("valid regex")
});

/// Feeds `held` with zsh's `PROMPT_SP` cut off its end.
fn feed_without_prompt_sp(held: &mut Vec<u8>, feed: &mut impl FnMut(&[u8])) {
    let end = PROMPT_SP.find(held).map_or(held.len(), |m| m.start());
    feed(&held[..end]);
    held.clear();
}

impl Span {
    pub fn new(delimiters: Delimiters) -> Self {
        Span {
            delimiters,
            scanner: OscScanner::new(NUMBERS),
            output_from: None,
            ended: None,
            after_end: 0,
            held: Vec::new(),
            until_start: false,
        }
    }

    /// A span whose start was already seen at `output_from`: reading goes
    /// on from anywhere inside the output.
    pub fn resumed(delimiters: Delimiters, output_from: u64) -> Self {
        Span {
            output_from: Some(output_from),
            ..Span::new(delimiters)
        }
    }

    /// Bytes of the output's last line held back, not fed yet.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Feeds what is held back (the deadline came first).
    pub fn flush(&mut self, feed: &mut impl FnMut(&[u8])) {
        feed(&self.held);
        self.held.clear();
    }

    pub fn by_marks(&self) -> bool {
        matches!(self.delimiters, Delimiters::Marks)
    }

    /// Scans the chunk recorded at ring offset `at` (`gap`: output was lost
    /// before it); the command's output in it goes to `feed`.
    pub fn scan(&mut self, at: u64, chunk: &[u8], gap: bool, feed: &mut impl FnMut(&[u8])) {
        let Span {
            delimiters,
            scanner,
            output_from,
            ended,
            after_end,
            held,
            ..
        } = self;
        let marks = matches!(delimiters, Delimiters::Marks);
        if gap {
            scanner.reset();
        }
        scanner.scan(at, chunk, &mut |piece| {
            if ended.is_some() {
                return;
            }
            match piece {
                Piece::Text(_, bytes) if output_from.is_some() && marks => {
                    held.extend_from_slice(bytes);
                    if let Some(nl) = memchr::memrchr(b'\n', held) {
                        feed(&held[..=nl]);
                        held.drain(..=nl);
                    }
                    if held.len() > MAX_HELD {
                        feed(held);
                        held.clear();
                    }
                }
                Piece::Text(_, bytes) if output_from.is_some() => feed(bytes),
                Piece::Text(..) => {}
                Piece::Osc(osc) => match delimiters.read(&osc) {
                    Some(FoundMark::Start) if output_from.is_none() => *output_from = Some(osc.end),
                    // The marks of a line that ran nothing (a comment) end
                    // with no start; our markers always have one.
                    Some(FoundMark::End(status))
                        if output_from.is_some() || matches!(delimiters, Delimiters::Marks) =>
                    {
                        *ended = Some((osc.at, status));
                        *after_end = osc.end;
                        feed_without_prompt_sp(held, feed);
                    }
                    Some(FoundMark::Prompt) if output_from.is_some() => {
                        *ended = Some((osc.at, None));
                        *after_end = osc.end;
                        feed_without_prompt_sp(held, feed);
                    }
                    _ => {}
                },
            }
        });
    }
}

/// Keeps `since`, the bytes of output after its last newline, as `bytes`
/// are fed: where a line still being written starts.
pub fn count_since_newline(since: &mut usize, bytes: &[u8]) {
    match memchr::memrchr(b'\n', bytes) {
        Some(nl) => *since = bytes.len() - nl - 1,
        None => *since += bytes.len(),
    }
}

/// Reads the recording from `cursor` until the span ends, the deadline,
/// a cancellation or the pane's end; output goes to `output`. Returns
/// whether output was lost on the way. A command still running leaves
/// `cursor` at the start of the line it is writing: that line goes to
/// `output` as it stands, and a later read returns it whole.
pub async fn collect(
    watch: &mut Watch,
    target: &Target,
    pace: &mut Pace,
    cursor: &mut u64,
    span: &mut Span,
    output: &mut HeadTail,
) -> ToolResult<bool> {
    let mut view = LineView::new(MAX_LINE);
    let mut missed = false;
    // Bytes of output fed since the last newline.
    let mut since_newline = 0;
    loop {
        watch.follower_mut().mark_seen();
        let info = watch.follower().read_raw(cursor, &mut |at, chunk, gap| {
            if gap && span.output_from.is_some() {
                view.reset();
            }
            span.scan(at, chunk, gap, &mut |bytes| {
                count_since_newline(&mut since_newline, bytes);
                view.feed_parts(bytes, &mut |part, ends| output.push_part(part, ends));
            });
        });
        // Output lost before it could be read (an eviction, a re-attach)
        // is reported as truncation; the end may still come.
        missed |= info.missed && span.output_from.is_some();
        if span.ended.is_none() {
            watch.check_alive(target).await?;
        }
        let started = span.until_start && span.output_from.is_some();
        if span.ended.is_some() || pace.expired() || started {
            if span.ended.is_none() {
                let held = (since_newline + span.held_len()) as u64;
                let from = span.output_from.unwrap_or(*cursor);
                *cursor = cursor.saturating_sub(held).max(from);
            }
            span.flush(&mut |bytes| {
                view.feed_parts(bytes, &mut |part, ends| output.push_part(part, ends))
            });
            // Output without a final newline.
            output.end_output(view.partial());
            return Ok(missed);
        }
        // Output, a progress tick or the deadline: read again.
        if let Woke::Cancelled = pace.sleep(watch.changed(pace.left())).await {
            return Err(ToolError::new(
                ErrorKind::Cancelled,
                "run_command was cancelled; the command keeps running",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Ended = Option<(u64, Option<i64>)>;

    /// Feeds `stream` split at `split`: (output, output_from, end).
    fn scan_split(
        delimiters: Delimiters,
        stream: &[u8],
        split: usize,
    ) -> (Vec<u8>, Option<u64>, Ended) {
        let mut span = Span::new(delimiters);
        let mut out = Vec::new();
        let (a, b) = stream.split_at(split);
        span.scan(100, a, false, &mut |bytes| out.extend_from_slice(bytes));
        span.scan(100 + a.len() as u64, b, false, &mut |bytes| {
            out.extend_from_slice(bytes)
        });
        (out, span.output_from, span.ended)
    }

    #[test]
    fn markers_are_found_at_every_split_point() {
        let stream =
            b"echo\r\n\x1b]6973;n1;S\x07hello\r\nno newline\x1b]6973;n2;E;4\x07\x1b]6973;n1;E;3\x07$ ";
        let start = 6 + 12;
        let end = stream.len() - 2 - 14;
        for split in 0..=stream.len() {
            let (out, from, ended) = scan_split(Delimiters::Markers("n1".into()), stream, split);
            assert_eq!(
                out, b"hello\r\nno newline",
                "split {split}: another nonce is skipped"
            );
            assert_eq!(from, Some(100 + start as u64), "split {split}");
            assert_eq!(ended, Some((100 + end as u64, Some(3))), "split {split}");
        }
    }

    #[test]
    fn shell_marks_delimit_the_output_at_every_split_point() {
        let stream =
            b"ls\r\n\x1b]133;C\x07a\r\n\x1b]133;B\x07b\x1b]133;D;2;aid=7\x1b\\\x1b]133;A\x07$ ";
        let start = 4 + 8;
        let end = 4 + 8 + 3 + 8 + 1;
        for split in 0..=stream.len() {
            let (out, from, ended) = scan_split(Delimiters::Marks, stream, split);
            assert_eq!(out, b"a\r\nb", "split {split}: an input mark is no output");
            assert_eq!(from, Some(100 + start as u64), "split {split}");
            assert_eq!(ended, Some((100 + end as u64, Some(2))), "split {split}");
        }
        // A command that stopped the marking: the next prompt ends it, with
        // no status; a prompt mark before the output starts ends nothing.
        let stream = b"\x1b]133;A\x07x\r\n\x1b]133;C\x07\x1b]133;A\x07$ ";
        let (out, from, ended) = scan_split(Delimiters::Marks, stream, 0);
        assert_eq!((out, from, ended), (vec![], Some(119), Some((119, None))));
        // zsh's PROMPT_SP before its D mark is no output.
        let stream = b"\x1b]133;C\x07no-newline\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m    \r \r\x1b]133;D;0\x07";
        for split in 0..=stream.len() {
            let (out, _, ended) = scan_split(Delimiters::Marks, stream, split);
            assert_eq!(out, b"no-newline", "split {split}");
            assert!(ended.is_some());
        }
        // A comment runs nothing: the shell marks its end only.
        let (out, from, ended) = scan_split(Delimiters::Marks, b"# x\r\n\x1b]133;D\x07", 0);
        assert_eq!((out, from, ended), (vec![], None, Some((105, None))));
    }
}
