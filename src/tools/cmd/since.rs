//! `capture_since`: incremental reads of a pane's output through a cursor.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::panes::LineView;
use crate::panes::lines::unpadded;
use crate::tmux::PaneId;
use crate::tools::shared::bounded::{self, DEFAULT_BYTES, cut_to};
use crate::tools::shared::cursor::Cursor;
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::shared::observe::{MAX_LINE, Watch};
use crate::tools::shared::pace::elapsed_seconds;
use crate::tools::shared::shell::typed::is_plumbing;
use crate::tools::shared::tail::lossy;
use crate::tools::toolsets::Toolset;
use crate::tools::{READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "capture_since",
        Toolset::Inspect,
        "Capture Since",
        "Incremental read: without cursor, the screen and a cursor; with it, exactly the lines printed since. lines_missed says output was lost. Default cap: 500 lines, 24 KB per call; truncated: call again with the cursor.",
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
    /// Output was lost between the two calls (evicted, or not observed).
    pub lines_missed: bool,
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
fn read_page(watch: &Watch, cursor: &Cursor, max_lines: usize, max_bytes: usize) -> (Page, bool) {
    let mut page = Page::new(cursor.offset, max_lines, max_bytes);
    let mut view = LineView::new(MAX_LINE);
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut offset = cursor.offset;
    let stop = cursor.stop.unwrap_or(u64::MAX);
    let mut end = cursor.offset;
    let info = watch.read_raw(&mut offset, &mut |at, chunk, gap| {
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

/// How long a cursor keeps its pane streamed when clients never detach.
const CURSOR_LINGER: Duration = Duration::from_secs(30);

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
    let mut watch = Watch::start(&target, id).await?;
    let mut next = Cursor {
        pane: id,
        epoch: watch.epoch(),
        pid: watch.pid,
        offset: 0,
        stop: None,
    };
    let (lines, missed, truncated_lines, truncated_bytes) =
        // A cursor is continuous only within one recording of one process.
        match cursor.filter(|c| c.pane == id && c.epoch == watch.epoch() && c.pid == watch.pid) {
            Some(c) => {
                let (page, missed) = read_page(&watch, &c, max_lines, max_bytes);
                next.offset = page.next;
                // A command's output keeps its stop until it is read.
                next.stop = c.stop.filter(|&stop| stop > page.next);
                (page.lines, missed, page.left_lines, page.cut_bytes)
            }
            // First call, or the recording (or process) the cursor pointed
            // into is gone: the screen's last rows, and lines_missed for a
            // cursor.
            None => {
                let (mut screen, position) = watch.capture(&[]).await?;
                next.offset = position;
                let over = screen.len().saturating_sub(max_lines);
                let cut = over + bounded::tail_within(&screen[over..], max_bytes);
                let bytes: usize = screen[..cut].iter().map(|l| l.len() + 1).sum();
                screen.drain(..cut);
                (screen, args.cursor.is_some(), cut, bytes)
            }
        };
    // The agent holds a cursor and will likely read on: keep the pane
    // streamed a while, so the next read has no gap.
    let linger = target.hub.limits().idle_detach;
    watch.keep_streaming(linger.unwrap_or(CURSOR_LINGER));
    Ok(CaptureSinceResult {
        pane_id: id,
        cursor: next.encode(),
        lines,
        elapsed_seconds: elapsed_seconds(started),
        lines_missed: missed,
        truncated: truncated_lines > 0 || truncated_bytes > 0,
        truncated_lines: truncated_lines as i64,
        truncated_bytes: truncated_bytes as i64,
    })
}
