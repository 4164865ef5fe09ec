//! `wait_for_text`: wait for new output matching patterns.
//!
//! Like `run_command` and `capture_since`, it reads the pane's recorded `%output` (see [`crate::drive::watch`]):
//! only bytes the pane printed after the call began count, every wait is
//! woken by output events rather than a timer, and nothing is sent to tmux
//! while waiting except a capture that an output event triggered (a
//! full-screen redraw can only be matched on the rendered screen).
//!
//! `since` moves the start back to an earlier read's cursor or to this
//! server's last input into the pane (see [`crate::drive::since`]);
//! `screen` also matches the visible screen, at entry and after each
//! output event (what a full-screen program draws).

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::pace::{Pace, Woke};
use crate::drive::shell::typed::is_plumbing;
use crate::drive::since::{self, Earlier, Since};
use crate::drive::tail::{TailBuf, bounded_tail, lossy};
use crate::drive::watch::{MAX_LINE, Watch};
use crate::mcp::LogLevel;
use crate::panes::LineView;
use crate::panes::ReadInfo;
use crate::panes::matcher::{LineBatch, Matcher};
use crate::tmux::PaneId;
use crate::tools::shared::args::{default_wait_timeout, seconds};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
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
    // (no schema text) Seconds to wait (capped by the server).
    #[serde(default = "default_wait_timeout")]
    timeout: f64,
    /// Ignored: waits are woken by output.
    #[serde(default = "default_interval")]
    interval: f64,
    // (no schema text) Match case (default: case-insensitive).
    #[serde(default)]
    match_case: bool,
    /// Cursor or 'input'.
    since: Option<String>,
    /// Match the screen, not new output.
    screen: Option<bool>,
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
    pub outcome: WaitOutcome,
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
    /// Output since `since` was lost (tmux no longer holds it); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_missed: Option<bool>,
    pub pane_id: PaneId,
    pub elapsed_seconds: f64,
    pub effective_timeout: f64,
}

/// How a `wait_for_text` ended, spelt on the wire as the reference does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitOutcome {
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

impl WaitOutcome {
    /// Whether the wait found what it waited for.
    pub fn found(self) -> bool {
        matches!(self, WaitOutcome::Matched | WaitOutcome::AnyOutput)
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
    fn judge(&self, batch: &LineBatch) -> Option<(WaitOutcome, usize, &Matcher)> {
        if let Some((_, index)) = self.stop.first(batch) {
            return Some((WaitOutcome::Stopped, index, &self.stop));
        }
        let success = self.success.as_ref()?;
        success
            .first(batch)
            .map(|(_, index)| (WaitOutcome::Matched, index, success))
    }
}

/// How a wait ended: the outcome, the pattern that fired, its lines.
struct Verdict {
    outcome: WaitOutcome,
    index: Option<usize>,
    matched: Vec<String>,
}

impl Verdict {
    fn without_match(outcome: WaitOutcome) -> Verdict {
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
    /// Lines printed since `since`, read back from tmux: matched first.
    earlier: Vec<String>,
    /// Some output since `since` is lost.
    missed: bool,
    /// Match the visible screen, at entry and whenever the pane prints.
    screen: bool,
    /// The screen was matched once (at entry).
    screen_seen: bool,
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
            tail: TailBuf::default(),
            partial: Vec::new(),
            saw_lines: false,
            in_alternate: alternate,
            alternate,
            earlier: Vec::new(),
            missed: false,
            screen: false,
            screen_seen: false,
        }
    }

    /// Starts from `since` rather than the entry: its recording when
    /// that holds it all, else the lines read back from tmux.
    fn since(&mut self, earlier: Earlier) {
        if let Some(from) = earlier.from {
            self.cursor = from;
        }
        self.earlier = earlier.lines;
        self.missed = earlier.missed;
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
        let printed = info.bytes > 0 || info.missed || resynced;
        if self.screen
            && (printed || !self.screen_seen)
            && self.patterns.judge(&self.batch).is_none()
        {
            // What the program shows now, whatever screen it draws on.
            self.screen_seen = true;
            let (rows, _) = watch.capture(&["-J"]).await?;
            for row in rows.iter().filter(|r| !is_plumbing(r.as_bytes())) {
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
        // What was printed since `since` and read back from tmux comes first.
        for line in self.earlier.drain(..) {
            if !is_plumbing(line.as_bytes()) {
                batch.push(line.as_bytes());
                tail.push(line.as_bytes());
            }
        }
        let info = watch.follower().read_screens(
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
        (self.patterns.success.is_none() && any)
            .then(|| Verdict::without_match(WaitOutcome::AnyOutput))
    }

    /// The verdict when the deadline passed.
    fn timed_out(&self) -> Verdict {
        Verdict::without_match(if self.alternate {
            WaitOutcome::AlternateScreen
        } else {
            WaitOutcome::Timeout
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
            lines_missed: self.missed.then_some(true),
            pane_id: pane,
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
    let since = Since::parse(args.since.as_deref())?;
    let effective = requested.min(app.config.wait_max);
    let id = lookup::resolve_pane(&target, &args.pane).await?;
    // After a gap the scan matches the screen's new rows, so a flood can be
    // paused rather than streamed byte for byte, and the wait can arm
    // before a streaming slot is free.
    let mut watch = Watch::start_deferrable(&target, id).await?;
    watch.tolerate_gaps();
    watch.follower_mut().mark_seen();
    let (screen, cursor) = watch.capture(&["-J"]).await?;
    let mut scan = TextScan::new(patterns, screen, cursor, watch.alternate_at_start);
    if let Some(since) = &since {
        scan.since(since::earlier(&target, &watch, since, cursor).await?);
    }
    scan.screen = args.screen.unwrap_or(false);
    let mut pace = Pace::new(&ctx, format!("pane {}", watch.id), started, effective);
    // Tell a client that listens that the wait is armed: from here on,
    // output counts as new.
    pace.report_start("armed");
    loop {
        watch.follower_mut().mark_seen();
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
