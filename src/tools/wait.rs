//! Waiting on output: `wait_for_text` and `capture_since` (`run_command`
//! is in [`super::run`]).
//!
//! All three read the pane's recorded `%output` (see [`super::observe`]):
//! only bytes the pane printed after the call began count, every wait is
//! woken by output events rather than a timer, and nothing is sent to tmux
//! while waiting except a capture that an output event triggered (a
//! full-screen redraw can only be matched on the rendered screen).

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounded::{self, DEFAULT_BYTES, cut_to};
use super::observe::{MAX_LINE, Watch};
use super::run::is_plumbing;
use super::target::{self, PaneSel};
use super::toolsets::Toolset;
use super::{Call, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult};
use crate::config::Config;
use crate::mcp::LogLevel;
use crate::panes::LineView;
use crate::panes::ReadInfo;
use crate::panes::matcher::{LineBatch, Matcher};
use crate::tmux::PaneId;

mod pace;
mod state;

pub use pace::{Pace, Woke, elapsed_seconds};

pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    tools.push(
        ToolDef::new(
            "wait_for_text",
            Toolset::Inspect,
            "Wait For Text",
            "Wait for NEW output matching patterns, or a stop pattern, or the timeout.",
            READ,
            wait_for_text,
        )
        .with_own_wait_ceiling(),
    );
    tools.push(
        ToolDef::new(
            "wait_for_state",
            Toolset::Inspect,
            "Wait For State",
            "Wait until the pane: prompt, input, secret (password), exited, idle, bell.",
            READ,
            state::wait_for_state,
        )
        .with_own_wait_ceiling(),
    );
    super::run::register(tools, config);
    tools.push(ToolDef::new(
        "capture_since",
        Toolset::Inspect,
        "Capture Since",
        "Incremental read: without cursor, the screen and a cursor; with it, exactly the lines printed since. lines_missed says output was lost. Default cap: 500 lines, 24 KB per call; truncated: call again with the cursor.",
        READ,
        capture_since,
    ));
}

const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 2000;

fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

/// The last lines, at most `TAIL_LINES` and `TAIL_BYTES` (tail kept; a
/// line longer than what is left keeps its own tail).
fn bounded_tail(lines: &[String]) -> Vec<String> {
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

pub(super) fn seconds(value: f64, name: &str) -> ToolResult<Duration> {
    if !value.is_finite() || value <= 0.0 {
        return Err(ToolError::invalid(format!(
            "{name} must be positive (received {value})"
        )));
    }
    Ok(Duration::from_secs_f64(value.min(1e6)))
}

// ---------------------------------------------------------------- wait_for_text

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForTextArgs {
    /// Literal, case-insensitive unless regex/match_case; null: any new output.
    patterns: Option<Vec<String>>,
    /// Failure patterns (e.g. 'error:'): a hit ends the wait as 'stopped'.
    stop: Option<Vec<String>>,
    /// patterns and stop are regular expressions.
    #[serde(default)]
    regex: bool,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_wait_timeout")]
    timeout: f64,
    /// Ignored (event-driven).
    #[serde(default = "default_interval")]
    interval: f64,
    // Match case (default: case-insensitive).
    #[serde(default)]
    match_case: bool,
}

fn default_wait_timeout() -> f64 {
    8.0
}

fn default_interval() -> f64 {
    0.05
}

/// The outcome of `wait_for_text`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaitForTextResult {
    /// True when outcome is 'matched' or 'any_output'.
    pub found: bool,
    /// 'matched', 'any_output', 'stopped', 'alternate_screen' or 'timeout'.
    #[schemars(with = "String")]
    pub outcome: Outcome,
    /// Index into patterns (or stop, when stopped) of the entry that fired.
    pub matched_index: Option<i64>,
    /// New lines matching that entry (at most 20 lines / 2000 bytes, last kept).
    pub matched_lines: Vec<String>,
    /// The last new lines the pane printed (at most 20 lines / 2000 bytes).
    pub tail: Vec<String>,
    pub saw_new_output: bool,
    /// A success pattern was already on screen when the wait began, and nothing new matched.
    pub matched_at_entry: bool,
    /// The pane used the alternate screen (a full-screen program) during the wait.
    pub alternate_screen: bool,
    pub pane_id: String,
    pub elapsed_seconds: f64,
    pub effective_timeout: f64,
}

/// How a `wait_for_text` ended, spelt on the wire as the reference does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A success pattern matched new output.
    Matched,
    /// No patterns were given, and new output came.
    AnyOutput,
    /// A stop pattern matched new output.
    Stopped,
    /// The deadline passed after the pane used the alternate screen.
    AlternateScreen,
    /// The deadline passed.
    Timeout,
}

impl Outcome {
    /// Whether the wait found what it waited for.
    pub fn found(self) -> bool {
        matches!(self, Outcome::Matched | Outcome::AnyOutput)
    }
}

/// Compiled success and stop patterns.
struct Patterns {
    /// `None`: any new output ends the wait.
    success: Option<Matcher>,
    stop: Matcher,
}

fn compile(list: &[String], what: &str, regex: bool, match_case: bool) -> ToolResult<Matcher> {
    if list.iter().any(String::is_empty) {
        return Err(ToolError::invalid(format!(
            "{what} pattern must be a non-empty string"
        )));
    }
    Matcher::new(list, regex, match_case)
        .map_err(|e| ToolError::invalid(format!("Invalid regex pattern: {e}")))
}

impl Patterns {
    fn new(args: &WaitForTextArgs) -> ToolResult<Patterns> {
        let success = match &args.patterns {
            Some(list) if list.is_empty() => {
                return Err(ToolError::invalid(
                    "patterns must be a non-empty list, or null to wait for any new output",
                ));
            }
            Some(list) => Some(compile(list, "patterns", args.regex, args.match_case)?),
            None => None,
        };
        let stop = compile(
            args.stop.as_deref().unwrap_or_default(),
            "stop",
            args.regex,
            args.match_case,
        )?;
        Ok(Patterns { success, stop })
    }

    fn success_hit(&self, line: &[u8]) -> bool {
        self.success
            .as_ref()
            .is_some_and(|m| m.line_hit(line).is_some())
    }

    /// What `batch` holds, if anything: stop patterns win a tie with
    /// success patterns in the same read.
    fn judge(&self, batch: &LineBatch) -> Option<(Outcome, usize, &Matcher)> {
        if let Some((_, index)) = self.stop.first(batch) {
            return Some((Outcome::Stopped, index, &self.stop));
        }
        let success = self.success.as_ref()?;
        success
            .first(batch)
            .map(|(_, index)| (Outcome::Matched, index, success))
    }
}

/// The last lines seen, reusing their buffers: a flood of millions of lines
/// costs no allocation per line.
struct TailBuf {
    lines: std::collections::VecDeque<Vec<u8>>,
}

impl TailBuf {
    fn new() -> Self {
        TailBuf {
            lines: Default::default(),
        }
    }

    fn push(&mut self, line: &[u8]) {
        let mut buf = if self.lines.len() == TAIL_LINES {
            self.lines.pop_front().expect("full")
        } else {
            Vec::new()
        };
        buf.clear();
        buf.extend_from_slice(line);
        self.lines.push_back(buf);
    }

    fn with_partial(&self, partial: &[u8]) -> Vec<String> {
        let mut out: Vec<String> = self.lines.iter().map(|l| lossy(l)).collect();
        if !partial.is_empty() {
            out.push(lossy(partial));
        }
        bounded_tail(&out)
    }
}

/// How a wait ended: the outcome, the pattern that fired, its lines.
struct Verdict {
    outcome: Outcome,
    index: Option<usize>,
    matched: Vec<String>,
}

impl Verdict {
    fn without_match(outcome: Outcome) -> Verdict {
        Verdict {
            outcome,
            index: None,
            matched: Vec::new(),
        }
    }
}

/// What a `wait_for_text` has read of the pane so far, and what it
/// matches on.
struct TextScan {
    patterns: Patterns,
    /// The rows on screen when the wait began: a capture after a repaint
    /// matches only other rows.
    entry_rows: std::collections::HashSet<String>,
    /// A success pattern was on screen when the wait began.
    at_entry: bool,
    cursor: u64,
    view: LineView,
    /// The last read's lines, matched as one batch (the wait ends on the
    /// read holding its first hit, so a batch is all a match needs).
    batch: LineBatch,
    tail: TailBuf,
    /// The line still being written (a prompt such as 'Password:' never
    /// gets its newline), without run_command's echo.
    partial: Vec<u8>,
    saw_lines: bool,
    /// Lines completed on the alternate screen are not matched (a
    /// full-screen program paints there); the result says it was seen.
    in_alternate: bool,
    alternate: bool,
}

impl TextScan {
    fn new(patterns: Patterns, screen: Vec<String>, cursor: u64, alternate: bool) -> TextScan {
        let at_entry = screen.iter().any(|l| patterns.success_hit(l.as_bytes()));
        TextScan {
            patterns,
            entry_rows: screen.into_iter().collect(),
            at_entry,
            cursor,
            view: LineView::new(MAX_LINE),
            batch: LineBatch::default(),
            tail: TailBuf::new(),
            partial: Vec::new(),
            saw_lines: false,
            in_alternate: alternate,
            alternate,
        }
    }

    /// Reads what is new and judges it; after a repaint, a loss or a
    /// re-attach, the screen's new rows count too.
    async fn step(&mut self, watch: &mut Watch, target: &Target) -> ToolResult<Option<Verdict>> {
        let info = self.read(watch);
        // After a structural event: is the pane alive, and still streamed?
        // (Re-attaching loses the output in between.)
        let resynced = watch.check_alive(target).await?;
        let repaint = info.bytes > 0 && info.redraw;
        if !self.in_alternate
            && self.patterns.judge(&self.batch).is_none()
            && (repaint || info.missed || resynced)
        {
            // Text painted by cursor moves, or output lost before it was
            // read (a reconnect, an eviction): match the rendered screen,
            // but only rows that were not there when the wait began.
            let (rows, _) = watch.capture(&["-J"]).await?;
            let new = |r: &&String| !self.entry_rows.contains(*r) && !is_plumbing(r.as_bytes());
            for row in rows.iter().filter(new) {
                self.batch.push(row.as_bytes());
            }
        }
        Ok(self.verdict())
    }

    /// Reads the recording since the last read into a fresh batch.
    fn read(&mut self, watch: &Watch) -> ReadInfo {
        let TextScan {
            batch, tail, view, ..
        } = self;
        batch.clear();
        let info = watch.read_screens(
            &mut self.cursor,
            view,
            &mut self.in_alternate,
            &mut |line, alt| {
                // The echo of run_command's typed line is plumbing, not output.
                if is_plumbing(line) {
                    return;
                }
                if !alt {
                    batch.push(line);
                }
                tail.push(line);
            },
        );
        self.saw_lines |= !self.batch.is_empty();
        self.alternate |= info.entered_alternate || self.in_alternate;
        self.partial.clear();
        if !is_plumbing(self.view.partial()) {
            self.partial.extend_from_slice(self.view.partial());
        }
        if !self.partial.is_empty() && !self.in_alternate {
            self.batch.push(&self.partial);
        }
        info
    }

    fn verdict(&self) -> Option<Verdict> {
        if let Some((outcome, index, matcher)) = self.patterns.judge(&self.batch) {
            let matched = (0..self.batch.len())
                .map(|i| self.batch.line(i))
                .filter(|l| matcher.matches(index, l))
                .map(lossy)
                .collect();
            return Some(Verdict {
                outcome,
                index: Some(index),
                matched,
            });
        }
        let any = self.saw_lines || !self.partial.is_empty();
        (self.patterns.success.is_none() && any).then(|| Verdict::without_match(Outcome::AnyOutput))
    }

    /// The verdict when the deadline passed.
    fn timed_out(&self) -> Verdict {
        Verdict::without_match(if self.alternate {
            Outcome::AlternateScreen
        } else {
            Outcome::Timeout
        })
    }

    fn result(&self, verdict: Verdict, pane: PaneId, pace: &Pace) -> WaitForTextResult {
        let found = verdict.outcome.found();
        let tail = self.tail.with_partial(&self.partial);
        WaitForTextResult {
            found,
            outcome: verdict.outcome,
            matched_index: verdict.index.map(|i| i as i64),
            matched_lines: bounded_tail(&verdict.matched),
            saw_new_output: !tail.is_empty(),
            tail,
            matched_at_entry: self.at_entry && !found,
            alternate_screen: self.alternate,
            pane_id: pane.to_string(),
            elapsed_seconds: pace.elapsed_seconds(),
            effective_timeout: pace.effective().as_secs_f64(),
        }
    }
}

async fn wait_for_text(
    Call { app, target, ctx }: Call,
    args: WaitForTextArgs,
) -> ToolResult<WaitForTextResult> {
    let started = Instant::now();
    if args.interval.is_nan() || args.interval < 0.01 {
        return Err(ToolError::invalid(format!(
            "interval must be at least 0.01 s (received {})",
            args.interval
        )));
    }
    let requested = seconds(args.timeout, "timeout")?;
    let patterns = Patterns::new(&args)?;
    let effective = requested.min(app.config.wait_max);
    let id = target::resolve_pane(&target, &args.pane).await?;
    // After a gap the scan matches the screen's new rows, so a flood can be
    // paused rather than streamed byte for byte, and the wait can arm
    // before a streaming slot is free.
    let mut watch = Watch::start_deferrable(&target, id).await?;
    watch.tolerate_gaps();
    watch.mark_seen();
    let (screen, cursor) = watch.capture(&["-J"]).await?;
    let mut scan = TextScan::new(patterns, screen, cursor, watch.alternate_at_start);
    let mut pace = Pace::new(&ctx, format!("pane {}", watch.id), started, effective);
    // Tell a client that listens that the wait is armed: from here on,
    // output counts as new.
    pace.report_start("armed");
    loop {
        watch.mark_seen();
        if let Some(verdict) = scan.step(&mut watch, &target).await? {
            return Ok(scan.result(verdict, watch.id, &pace));
        }
        if pace.expired() {
            if ctx.log.enabled(LogLevel::Warning) {
                let text = format!(
                    "No match in pane {} before {:.1}s timeout",
                    watch.id,
                    effective.as_secs_f64()
                );
                ctx.log.log(LogLevel::Warning, serde_json::json!(text));
            }
            return Ok(scan.result(scan.timed_out(), watch.id, &pace));
        }
        // Whatever woke it (output, a progress tick, the deadline), read
        // again: the read after the deadline is the last.
        if let Woke::Cancelled = pace.sleep(watch.changed(pace.left())).await {
            return Err(ToolError::new(
                ErrorKind::Cancelled,
                "wait_for_text was cancelled",
            ));
        }
    }
}

// ---------------------------------------------------------------- capture_since

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
    pub pane_id: String,
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

const CURSOR_PREFIX: &str = "tmux-mcp-cursor-v2";

/// Where a previous call stopped: the pane, its recording, the pane's
/// process (a respawn keeps the pane id, not the process), a ring offset,
/// and (for a command's output) the offset where reading stops.
pub(super) struct Cursor {
    pub pane: PaneId,
    pub epoch: u64,
    pub pid: u32,
    pub offset: u64,
    pub stop: Option<u64>,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let mut text = format!(
            "{CURSOR_PREFIX}.{}.{}.{}.{}",
            self.pane, self.epoch, self.pid, self.offset
        );
        if let Some(stop) = self.stop {
            text.push_str(&format!(".{stop}"));
        }
        text
    }

    fn decode(text: &str) -> ToolResult<Cursor> {
        let bad = |why: &str| ToolError::invalid(format!("invalid capture_since cursor: {why}"));
        let mut parts = text.split('.');
        if parts.next() != Some(CURSOR_PREFIX) {
            return Err(bad("unsupported cursor format"));
        }
        let pane = parts
            .next()
            .and_then(|p| PaneId::parse(p.as_bytes()))
            .ok_or_else(|| bad("missing or invalid pane"))?;
        let mut number = |what: &str| {
            parts
                .next()
                .and_then(|p| p.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("missing or invalid {what}")))
        };
        let epoch = number("epoch")?;
        let pid = u32::try_from(number("process")?).map_err(|_| bad("invalid process"))?;
        let offset = number("offset")?;
        let stop = match parts.next() {
            None => None,
            Some(p) => Some(p.parse().map_err(|_| bad("invalid stop"))?),
        };
        if parts.next().is_some() {
            return Err(bad("unsupported cursor format"));
        }
        Ok(Cursor {
            pane,
            epoch,
            pid,
            offset,
            stop,
        })
    }
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
        let bytes: usize = lines.iter().map(Vec::len).sum();
        let fits = self.lines.len() + lines.len() <= self.max_lines
            && self.bytes + bytes <= self.max_bytes;
        if !fits && !self.lines.is_empty() {
            self.full = true;
            self.left_lines += 1;
            lines.clear();
            return;
        }
        for line in lines.drain(..) {
            if self.lines.len() >= self.max_lines {
                self.cut_bytes += line.len();
                continue;
            }
            let kept = cut_to(&line, self.max_bytes.saturating_sub(self.bytes));
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
        (Some(c), Some(requested)) if c.pane.to_string() != *requested => {
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
        _ => target::resolve_pane(&target, &args.pane).await?,
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
        pane_id: id.to_string(),
        cursor: next.encode(),
        lines,
        elapsed_seconds: elapsed_seconds(started),
        lines_missed: missed,
        truncated: truncated_lines > 0 || truncated_bytes > 0,
        truncated_lines: truncated_lines as i64,
        truncated_bytes: truncated_bytes as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        for stop in [None, Some(120)] {
            let c = Cursor {
                pane: PaneId(3),
                epoch: 7,
                pid: 4242,
                offset: 99,
                stop,
            };
            let back = Cursor::decode(&c.encode()).unwrap();
            let got = (back.pane, back.epoch, back.pid, back.offset, back.stop);
            assert_eq!(got, (PaneId(3), 7, 4242, 99, stop));
        }
        for bad in [
            "",
            "x",
            "tmux-mcp-cursor-v1.%3.7.9",
            "tmux-mcp-cursor-v2.%3.7.9",
            "tmux-mcp-cursor-v2.3.7.1.9",
            "tmux-mcp-cursor-v2.%3.7.x.9",
            "tmux-mcp-cursor-v2.%3.7.1.9.x",
            "tmux-mcp-cursor-v2.%3.7.1.9.1.2",
        ] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_long_last_line_keeps_its_tail() {
        let long = "x".repeat(3000) + "END";
        let tail = bounded_tail(&["before".to_owned(), long]);
        assert_eq!(tail.len(), 1);
        assert!(tail[0].ends_with("END") && tail[0].len() == TAIL_BYTES);
    }
}
