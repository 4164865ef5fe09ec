//! `capture_since`: incremental reads of a pane's output through a cursor.

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::bounded::{self, DEFAULT_BYTES, cut_to};
use crate::drive::cursor::{Cursor, OutputSpan};
use crate::drive::linger;
use crate::drive::pace::elapsed_seconds;
use crate::drive::read_back::{self, read_back, read_screen};
use crate::drive::shell::typed::is_plumbing;
use crate::drive::tail::lossy;
use crate::drive::watch::MAX_LINE;
use crate::panes::lines::unpadded;
use crate::panes::wipe::WipeScanner;
use crate::panes::{Follower, LineView};
use crate::tmux::PaneId;
use crate::tmux::history::{Anchor, Line};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "capture_since",
        Toolset::Inspect,
        "Capture Since",
        "Incremental read: no cursor: the screen and a cursor; with it: exactly the lines printed since (lines_missed: tmux lost some). 500 lines, 24 KB a call; truncated: call again.",
        READ,
        capture_since,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CaptureSinceArgs {
    /// From the previous call or run_command; omit at first.
    cursor: Option<String>,
    #[serde(flatten)]
    pane: PaneSel,
    /// Most lines per call; null: all.
    #[serde(default = "default_since_lines")]
    max_lines: Option<i64>,
    /// Most bytes of lines per call; null: no limit.
    #[serde(default = "default_since_bytes")]
    max_bytes: Option<i64>,
}

fn default_since_lines() -> Option<i64> {
    Some(500)
}

fn default_since_bytes() -> Option<i64> {
    Some(DEFAULT_BYTES as i64)
}

/// The outcome of `capture_since`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CaptureSinceResult {
    pub pane_id: PaneId,
    /// Pass this to the next call to get what comes after.
    pub cursor: String,
    /// The visible screen (first call) or the lines printed since the cursor, oldest first.
    pub lines: Vec<String>,
    pub elapsed_seconds: f64,
    /// Output was lost: tmux no longer holds it (history limit passed, pane cleared or respawned).
    pub lines_missed: bool,
    /// At least this many lines are gone, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed_lines: Option<i64>,
    /// More than one call's bound: call again with cursor for the rest.
    pub truncated: bool,
    /// Lines not returned (screen rows cut on a first call, newlines still to read after a cursor).
    pub truncated_lines: i64,
    /// Bytes not returned yet.
    pub truncated_bytes: i64,
}

fn limit(value: Option<i64>, name: &str) -> ToolResult<usize> {
    match value {
        None => Ok(usize::MAX),
        Some(n) if n > 0 => Ok(n as usize),
        Some(n) => Err(ToolError::invalid(format!(
            "{name} must be positive or None (received {n})"
        ))),
    }
}

/// One call's page of output after a cursor: whole lines, oldest first,
/// within the bounds; `next` is where the following page starts.
struct Page {
    lines: Vec<String>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    next: u64,
    full: bool,
    /// Newlines and bytes after `next` not returned.
    left_lines: usize,
    cut_bytes: usize,
}

impl Page {
    fn new(from: u64, max_lines: usize, max_bytes: usize) -> Self {
        Page {
            lines: Vec::new(),
            bytes: 0,
            max_lines,
            max_bytes,
            next: from,
            full: false,
            left_lines: 0,
            cut_bytes: 0,
        }
    }

    /// Takes the lines one newline-ended segment produced, or closes the
    /// page if they do not fit (a first segment always fits, cut).
    fn take(&mut self, lines: &mut Vec<Vec<u8>>, segment_end: u64) {
        let bytes: usize = lines.iter().map(|l| unpadded(l).len()).sum();
        let fits = self.lines.len() + lines.len() <= self.max_lines
            && self.bytes + bytes <= self.max_bytes;
        if !fits && !self.lines.is_empty() {
            self.full = true;
            self.left_lines += 1;
            lines.clear();
            return;
        }
        for line in lines.drain(..) {
            let line = unpadded(&line);
            if self.lines.len() >= self.max_lines {
                self.cut_bytes += line.len();
                continue;
            }
            let kept = cut_to(line, self.max_bytes.saturating_sub(self.bytes));
            self.cut_bytes += line.len() - kept.len();
            self.bytes += kept.len();
            self.lines.push(lossy(kept));
        }
        self.next = segment_end;
        self.full = !fits;
    }
}

/// Reads the page after `cursor` (up to its stop, else the recording's
/// end). Returns the page and whether output was lost.
fn read_page(
    follower: &Follower,
    span: &OutputSpan,
    max_lines: usize,
    max_bytes: usize,
) -> (Page, bool) {
    let mut page = Page::new(span.offset, max_lines, max_bytes);
    let mut view = LineView::new(MAX_LINE);
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut offset = span.offset;
    let stop = span.stop;
    let mut end = span.offset;
    let info = follower.read_raw(&mut offset, &mut |at, chunk, gap| {
        let chunk = &chunk[..chunk.len().min(stop.saturating_sub(at) as usize)];
        if gap && !page.full {
            view.reset();
            page.next = page.next.max(at);
        }
        end = at + chunk.len() as u64;
        if page.full {
            page.left_lines += memchr::memchr_iter(b'\n', chunk).count();
            return;
        }
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            if page.full {
                page.left_lines += 1;
                continue;
            }
            view.feed(&chunk[from..=nl], &mut |line| {
                if !is_plumbing(line) {
                    pending.push(line.to_vec());
                }
            });
            page.take(&mut pending, at + nl as u64 + 1);
            from = nl + 1;
        }
        if !page.full {
            view.feed(&chunk[from..], &mut |line| {
                if !is_plumbing(line) {
                    pending.push(line.to_vec());
                }
            });
        }
    });
    if !page.full {
        // The line still being written ends this page.
        if !view.partial().is_empty() && !is_plumbing(view.partial()) {
            pending.push(view.partial().to_vec());
        }
        page.take(&mut pending, end);
    }
    page.cut_bytes += end.saturating_sub(page.next) as usize;
    (page, info.missed)
}

/// The part of a command's output `span` still held, contiguous, in this
/// process's recording of `id`: a follower to page it with.
fn held(target: &Target, id: PaneId, span: &OutputSpan) -> Option<Follower> {
    let pane = target.hub.panes().get(id)?;
    if pane.epoch != span.epoch {
        return None;
    }
    {
        let state = pane.lock();
        let ring = &state.ring;
        let whole = span.offset >= ring.start()
            && span.stop <= ring.end()
            && ring
                .gaps_between(span.offset + 1, span.stop)
                .next()
                .is_none();
        if !whole {
            return None;
        }
    }
    Some(Follower::new(pane))
}

/// Whole lines from `lines` (blank ones at the end dropped: the screen's
/// empty rows), head first within the bounds: the lines taken, and the
/// lines and bytes left.
fn page_lines(
    lines: &[Line],
    max_lines: usize,
    max_bytes: usize,
) -> (Vec<String>, usize, usize, usize) {
    let end = lines
        .iter()
        .rposition(|l| !l.text.is_empty())
        .map_or(0, |i| i + 1);
    let lines = &lines[..end];
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut cut = 0;
    for line in lines {
        let fits = out.len() < max_lines && bytes + line.text.len() <= max_bytes;
        if !fits && !out.is_empty() {
            break;
        }
        // A first line always fits, cut.
        let kept = cut_to(line.text.as_bytes(), max_bytes);
        cut = line.text.len() - kept.len();
        bytes += kept.len();
        out.push(lossy(kept));
        if !fits {
            break;
        }
    }
    let taken = out.len();
    let left_bytes = cut
        + lines[taken..]
            .iter()
            .map(|l| l.text.len() + 1)
            .sum::<usize>();
    (out, taken, lines.len() - taken, left_bytes)
}

async fn capture_since(target: Target, args: CaptureSinceArgs) -> ToolResult<CaptureSinceResult> {
    let started = Instant::now();
    let max_lines = limit(args.max_lines, "max_lines")?;
    let max_bytes = limit(args.max_bytes, "max_bytes")?;
    let cursor = args.cursor.as_deref().map(Cursor::decode).transpose()?;
    let id = match (&cursor, &args.pane.pane_id) {
        (Some(c), Some(requested)) if lookup::pane_id(requested).ok() != Some(c.pane) => {
            return Err(ToolError::invalid(format!(
                "cursor pane {} does not match requested pane {requested}",
                c.pane
            )));
        }
        (Some(c), None)
            if args.pane.session_name.is_none()
                && args.pane.session_id.is_none()
                && args.pane.window_id.is_none() =>
        {
            c.pane
        }
        _ => lookup::resolve_pane(&target, &args.pane).await?,
    };
    // Recorded from now until the next read: the stream is there to read
    // should tmux's record be wiped meanwhile.
    linger::keep(&target, id).await;
    let bounds = (max_lines, max_bytes);
    let Some(cursor) = cursor.filter(|c| c.pane == id) else {
        let mut first = first_read(&target, id, bounds).await?;
        first.lines_missed = args.cursor.is_some();
        first.elapsed_seconds = elapsed_seconds(started);
        return Ok(first);
    };
    let mut missed = false;
    if let Some(span) = cursor.output {
        // Only while the server and the pane's process are the cursor's (a
        // server started again on the same socket reuses the pane ids
        // before we notice it).
        let same = read_back::rows(&target, id)
            .await
            .is_ok_and(|now| now.server == cursor.server && now.pid == cursor.pid);
        let paged = match same {
            true if span.offset < span.stop => page_output(&target, &cursor, span, bounds),
            true => page_wiped(&target, &cursor, span, bounds).await?,
            false => None,
        };
        if let Some(mut paged) = paged {
            paged.elapsed_seconds = elapsed_seconds(started);
            return Ok(paged);
        }
        // This process no longer holds a command's output (restarted, or
        // evicted): what is left of it is not told apart from what followed.
        missed = span.offset < span.stop;
    }
    // After a command's output, its next prompt alone is no news.
    let after_command = cursor.output.is_some();
    let mut read = read_on(&target, &cursor, bounds, after_command).await?;
    read.lines_missed |= missed;
    read.elapsed_seconds = elapsed_seconds(started);
    Ok(read)
}

/// Where this process's recording of `id` ends now, as the span a cursor
/// carries when nothing is left to page: a later read from the cursor
/// finds there what tmux's record may have lost.
fn recorded_end(target: &Target, id: PaneId) -> Option<OutputSpan> {
    let (epoch, end) = target.hub.panes().end_of(id)?;
    Some(OutputSpan {
        epoch,
        offset: end,
        stop: end,
    })
}

/// First call: the screen's last rows, and a cursor after them.
async fn first_read(
    target: &Target,
    id: PaneId,
    (max_lines, max_bytes): (usize, usize),
) -> ToolResult<CaptureSinceResult> {
    let at = recorded_end(target, id);
    let read = read_screen(target, id).await?;
    let mut screen: Vec<String> = read.lines.iter().map(|l| l.text.clone()).collect();
    while screen.last().is_some_and(|l| l.is_empty()) {
        screen.pop();
    }
    let over = screen.len().saturating_sub(max_lines);
    let cut = over + bounded::tail_within(&screen[over..], max_bytes);
    let bytes: usize = screen[..cut].iter().map(|l| l.len() + 1).sum();
    screen.drain(..cut);
    let next = Cursor {
        pane: id,
        server: read.rows.server,
        pid: read.rows.pid,
        anchor: read.anchor,
        output: at,
    };
    Ok(CaptureSinceResult {
        pane_id: id,
        cursor: next.encode(),
        lines: screen,
        elapsed_seconds: 0.0,
        lines_missed: false,
        missed_lines: None,
        truncated: cut > 0,
        truncated_lines: cut as i64,
        truncated_bytes: bytes as i64,
    })
}

/// A command's output, paged from this process's recording: byte for
/// byte, up to where the command ended. `None` when it is not held.
fn page_output(
    target: &Target,
    cursor: &Cursor,
    span: OutputSpan,
    (max_lines, max_bytes): (usize, usize),
) -> Option<CaptureSinceResult> {
    let follower = held(target, cursor.pane, &span)?;
    let (page, lost) = read_page(&follower, &span, max_lines, max_bytes);
    // Paged to its end, the span says where the recording stood then.
    let next = Cursor {
        output: Some(OutputSpan {
            offset: page.next.min(span.stop),
            ..span
        }),
        ..*cursor
    };
    Some(paged(cursor.pane, next, page, lost))
}

fn paged(id: PaneId, next: Cursor, page: Page, lost: bool) -> CaptureSinceResult {
    CaptureSinceResult {
        pane_id: id,
        cursor: next.encode(),
        lines: page.lines,
        elapsed_seconds: 0.0,
        lines_missed: lost,
        missed_lines: None,
        truncated: page.left_lines > 0 || page.cut_bytes > 0,
        truncated_lines: page.left_lines as i64,
        truncated_bytes: page.cut_bytes as i64,
    }
}

/// What the pane printed after the recording's offset `span.stop`, read
/// from the stream when that rewrote the screen (a `clear`, a redraw:
/// tmux's record may no longer hold it, and an equal line printed later
/// may pass for the anchored one); `None` otherwise, or when the recording
/// does not hold all of it. The next cursor is anchored in tmux's record
/// as it is now.
async fn page_wiped(
    target: &Target,
    cursor: &Cursor,
    span: OutputSpan,
    (max_lines, max_bytes): (usize, usize),
) -> ToolResult<Option<CaptureSinceResult>> {
    let Some(follower) = wiped_stream(target, cursor.pane, span) else {
        return Ok(None);
    };
    let screen = read_screen(target, cursor.pane).await?;
    // Up to what was recorded by the capture's end: output in between is
    // above the new anchor, so it is read now (a gap is reported).
    let end = follower.pane().lock().ring.end();
    let rest = OutputSpan {
        offset: span.stop,
        stop: end,
        ..span
    };
    let (page, lost) = read_page(&follower, &rest, max_lines, max_bytes);
    let next = Cursor {
        pane: cursor.pane,
        server: screen.rows.server,
        pid: screen.rows.pid,
        anchor: screen.anchor,
        output: Some(OutputSpan {
            offset: page.next.min(end),
            ..rest
        }),
    };
    Ok(Some(paged(cursor.pane, next, page, lost)))
}

/// The recording of `id` from `span.stop` to its end, when it holds all of
/// it (no gap, nothing evicted) and it rewrote the normal screen: a
/// follower to page it with.
fn wiped_stream(target: &Target, id: PaneId, span: OutputSpan) -> Option<Follower> {
    let pane = target.hub.panes().get(id)?;
    if pane.epoch != span.epoch {
        return None;
    }
    let end = {
        let state = pane.lock();
        let ring = &state.ring;
        let whole = span.stop >= ring.start()
            && span.stop <= ring.end()
            && ring
                .gaps_between(span.stop, ring.end() + 1)
                .next()
                .is_none();
        if !whole {
            return None;
        }
        ring.end()
    };
    let follower = Follower::new(pane);
    let mut scanner = WipeScanner::default();
    let mut at = span.stop;
    follower.read_raw(&mut at, &mut |from, chunk, _| {
        scanner.feed(&chunk[..chunk.len().min(end.saturating_sub(from) as usize)]);
    });
    scanner.wiped().then_some(follower)
}

/// Read back from tmux after the cursor's anchored line. `prompt_old`:
/// the line the cursor is on alone (a prompt being drawn) is not new yet,
/// and the cursor stays.
async fn read_on(
    target: &Target,
    cursor: &Cursor,
    (max_lines, max_bytes): (usize, usize),
    prompt_old: bool,
) -> ToolResult<CaptureSinceResult> {
    let id = cursor.pane;
    let at = recorded_end(target, id);
    let read = read_back(target, id, cursor.server, cursor.pid, cursor.anchor).await?;
    let at_cursor = read.rows.history + read.rows.cursor_y;
    if prompt_old && !read.missed && only_line_at(&read.lines, at_cursor) {
        return Ok(CaptureSinceResult {
            pane_id: id,
            cursor: cursor.encode(),
            lines: Vec::new(),
            elapsed_seconds: 0.0,
            lines_missed: false,
            missed_lines: None,
            truncated: false,
            truncated_lines: 0,
            truncated_bytes: 0,
        });
    }
    let (lines, taken, left_lines, left_bytes) = page_lines(&read.lines, max_lines, max_bytes);
    let anchor = match read.lines[..taken].iter().rposition(|l| !l.text.is_empty()) {
        Some(last) => Anchor::new(read.lines[last].row, &read.lines[last].text),
        None => read.anchor,
    };
    let next = Cursor {
        pane: id,
        server: read.rows.server,
        pid: read.rows.pid,
        anchor,
        // Lines left to read are tmux's: the stream position would skip
        // them.
        output: at.filter(|_| left_lines == 0 && left_bytes == 0),
    };
    Ok(CaptureSinceResult {
        pane_id: id,
        cursor: next.encode(),
        lines,
        elapsed_seconds: 0.0,
        lines_missed: read.missed,
        missed_lines: read.missing.map(|n| n as i64),
        truncated: left_lines > 0 || left_bytes > 0,
        truncated_lines: left_lines as i64,
        truncated_bytes: left_bytes as i64,
    })
}

/// The only line with text in `lines` is the one holding the cursor's row.
fn only_line_at(lines: &[Line], cursor: u64) -> bool {
    let mut written = lines.iter().filter(|l| !l.text.is_empty());
    match (written.next(), written.next()) {
        (Some(line), None) => {
            let next = lines.iter().find(|l| l.row > line.row).map(|l| l.row);
            line.row <= cursor && next.is_none_or(|n| cursor < n)
        }
        _ => false,
    }
}
