//! Waiting on output: `wait_for_text`, `run_command`, `capture_since`.
//!
//! All three read the pane's recorded `%output` (see [`super::observe`]):
//! only bytes the pane printed after the call began count, every wait is
//! woken by output events rather than a timer, and nothing is sent to tmux
//! while waiting except a capture that an output event triggered (a
//! full-screen redraw can only be matched on the rendered screen).

use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::bytes::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::observe::{MAX_LINE, Watch, watch_pane};
use super::server::Sock;
use super::target::{self, PaneSel};
use super::{App, INPUT, READ, ToolDef, ToolError, ToolResult};
use crate::mcp::{CallContext, LogLevel};
use crate::panes::LineView;
use crate::panes::matcher::{LineBatch, Matcher};
use crate::tmux::{Command, PaneId};

pub fn register(tools: &mut Vec<ToolDef>) {
    tools.push(ToolDef::new(
        "wait_for_text",
        "Wait For Text",
        "Wait for NEW output matching patterns (literal, case-insensitive unless regex/match_case), or a stop marker such as 'error:', or the timeout; patterns=null waits for any output. Event-driven; interval is ignored.",
        READ,
        wait_for_text,
    ));
    tools.push(ToolDef::new(
        "run_command",
        "Run Command",
        "Run a shell command in a pane at a shell prompt (bash, sh, zsh, fish), wait, and return its exit status and its own output. Runs in a subshell. On timeout it keeps running (timed_out).",
        INPUT,
        run_command,
    ));
    tools.push(ToolDef::new(
        "capture_since",
        "Capture Since",
        "Incremental read: without cursor, the screen and a cursor; with the previous cursor, exactly the lines printed since (never twice). lines_missed says output was lost.",
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

fn seconds(value: f64, name: &str) -> ToolResult<Duration> {
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
    /// Success patterns; null: any new output.
    #[serde(default)]
    patterns: Option<Vec<String>>,
    /// Failure patterns: a hit ends the wait (outcome 'stopped').
    #[serde(default)]
    stop: Option<Vec<String>>,
    /// Treat patterns and stop as regular expressions.
    #[serde(default)]
    regex: bool,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_wait_timeout")]
    timeout: f64,
    /// Ignored (nothing polls); kept for compatibility.
    #[serde(default = "default_interval")]
    interval: f64,
    /// Match case (default: case-insensitive).
    #[serde(default)]
    match_case: bool,
    #[serde(flatten)]
    sock: Sock,
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
    pub outcome: String,
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
    fn judge(&self, batch: &LineBatch) -> Option<(&'static str, usize, &Matcher)> {
        if let Some((_, index)) = self.stop.first(batch) {
            return Some(("stopped", index, &self.stop));
        }
        let success = self.success.as_ref()?;
        success
            .first(batch)
            .map(|(_, index)| ("matched", index, success))
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

async fn wait_for_text(
    app: Arc<App>,
    args: WaitForTextArgs,
    ctx: CallContext,
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
    let deadline = started + effective;
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let mut watch = watch_pane(&target, &args.pane).await?;
    watch.mark_seen();
    let (screen, mut cursor) = watch.capture(&["-J"]).await?;
    let entry_rows: std::collections::HashSet<String> = screen.iter().cloned().collect();
    let at_entry = screen.iter().any(|l| patterns.success_hit(l.as_bytes()));
    // Tell a client that listens that the wait is armed: from here on,
    // output counts as new.
    ctx.progress.report(
        0.0,
        Some(effective.as_secs_f64()),
        Some(format!("Waiting on pane {}: armed", watch.id)),
    );

    let mut view = LineView::new(MAX_LINE);
    let mut batch = LineBatch::default();
    let mut tail = TailBuf::new();
    let mut saw_lines = false;
    // Lines completed on the alternate screen are not matched (a
    // full-screen program paints there); the result says it was seen.
    let mut in_alternate = watch.alternate_at_start;
    let mut alternate = in_alternate;
    let mut last_progress = Instant::now();
    let pane_id = watch.id.to_string();
    let result = |outcome: &str,
                  index: Option<usize>,
                  matched: Vec<String>,
                  tail: Vec<String>,
                  alternate: bool| {
        let found = outcome == "matched" || outcome == "any_output";
        WaitForTextResult {
            found,
            outcome: outcome.to_owned(),
            matched_index: index.map(|i| i as i64),
            matched_lines: bounded_tail(&matched),
            saw_new_output: !tail.is_empty(),
            tail,
            matched_at_entry: at_entry && !found,
            alternate_screen: alternate,
            pane_id: pane_id.clone(),
            elapsed_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            effective_timeout: effective.as_secs_f64(),
        }
    };
    loop {
        watch.mark_seen();
        // This read's lines, matched as one batch (the wait ends on the
        // read holding its first hit, so a batch is all a match needs).
        batch.clear();
        let info = watch.read_screens(
            &mut cursor,
            &mut view,
            &mut in_alternate,
            &mut |line, alt| {
                if !alt {
                    batch.push(line);
                }
                tail.push(line);
            },
        );
        saw_lines |= !batch.is_empty();
        alternate |= info.entered_alternate || in_alternate;
        // The line still being written counts too: a prompt such as
        // 'Password:' never gets its newline.
        let partial = view.partial().to_vec();
        if !partial.is_empty() && !in_alternate {
            batch.push(&partial);
        }
        // After a structural event: is the pane alive, and still streamed?
        // (Re-attaching loses the output in between.)
        let resynced = watch.check_alive(&target).await?;
        let repaint = info.bytes > 0 && info.redraw;
        if !in_alternate && patterns.judge(&batch).is_none() && (repaint || info.missed || resynced)
        {
            // Text painted by cursor moves, or output lost before it was
            // read (a reconnect, an eviction): match the rendered screen,
            // but only rows that were not there when the wait began.
            let (rows, _) = watch.capture(&["-J"]).await?;
            for row in rows.iter().filter(|r| !entry_rows.contains(*r)) {
                batch.push(row.as_bytes());
            }
        }
        if let Some((kind, index, matcher)) = patterns.judge(&batch) {
            let matched: Vec<String> = (0..batch.len())
                .map(|i| batch.line(i))
                .filter(|l| matcher.matches(index, l))
                .map(lossy)
                .collect();
            return Ok(result(
                kind,
                Some(index),
                matched,
                tail.with_partial(&partial),
                alternate,
            ));
        }
        if patterns.success.is_none() && (saw_lines || !partial.is_empty()) {
            return Ok(result(
                "any_output",
                None,
                Vec::new(),
                tail.with_partial(&partial),
                alternate,
            ));
        }
        let now = Instant::now();
        if now >= deadline {
            let outcome = if alternate {
                "alternate_screen"
            } else {
                "timeout"
            };
            if ctx.log.enabled(LogLevel::Warning) {
                let text = format!(
                    "No match in pane {} before {:.1}s timeout",
                    watch.id,
                    effective.as_secs_f64()
                );
                ctx.log.log(LogLevel::Warning, serde_json::json!(text));
            }
            return Ok(result(
                outcome,
                None,
                Vec::new(),
                tail.with_partial(&partial),
                alternate,
            ));
        }
        if ctx.progress.wanted() && now.duration_since(last_progress) >= Duration::from_secs(1) {
            last_progress = now;
            let elapsed = started.elapsed().as_secs_f64();
            let left = (effective.as_secs_f64() - elapsed).max(0.0);
            let message = format!(
                "Waiting on pane {}: {elapsed:.1}s elapsed, {left:.1}s left",
                watch.id
            );
            ctx.progress
                .report(elapsed, Some(effective.as_secs_f64()), Some(message));
        }
        // Sleep until output, the deadline, cancellation or (only when the
        // client asked for progress) the next progress report.
        let mut limit = deadline - now;
        if ctx.progress.wanted() {
            limit = limit.min(Duration::from_secs(1));
        }
        tokio::select! {
            _ = watch.changed(limit) => {}
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::new("Cancelled", "wait_for_text was cancelled"));
            }
        }
    }
}

// ---------------------------------------------------------------- run_command

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCommandArgs {
    /// The shell command to run.
    command: String,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_run_timeout")]
    timeout: f64,
    /// Keep at most this many output lines (the last ones); null keeps all.
    #[serde(default)]
    max_lines: Option<i64>,
    /// Prefix a space to keep the command out of shell history.
    #[serde(default)]
    suppress_history: Option<bool>,
    #[serde(flatten)]
    sock: Sock,
}

fn default_run_timeout() -> f64 {
    30.0
}

/// The outcome of `run_command`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunCommandResult {
    pub pane_id: String,
    /// The command's exit status; null when it timed out.
    pub exit_status: Option<i64>,
    pub timed_out: bool,
    pub elapsed_seconds: f64,
    /// The command's own output lines (escape sequences removed).
    pub output: Vec<String>,
    pub output_truncated: bool,
    pub output_truncated_lines: i64,
    pub effective_timeout: f64,
}

/// The text typed into the shell. The markers are printed by `printf` from
/// pieces, so the echo of the typed line never contains them: only the
/// shell running the command can produce them. The command runs in a
/// subshell (POSIX shells) or a `fish -c` child (fish), so `exit 3` reports
/// 3 without ending the pane's shell.
fn payload(command: &str, nonce: &str, suppress_history: bool, shell: &str) -> String {
    let space = if suppress_history { " " } else { "" };
    let start = format!("printf '%s_%s\\n' __tmux_mcp_{nonce} start");
    let end = format!("printf '%s_%s_%d\\n' __tmux_mcp_{nonce} end");
    if shell == "fish" {
        // Inside fish single quotes only \\ and \' are escapes.
        let quoted = command.replace('\\', "\\\\").replace('\'', "\\'");
        return format!("{space}{start}; fish -c '{quoted}'; {end} $status");
    }
    format!("{space}{start}; (\n{command}\n); {end} \"$?\"")
}

/// Output lines kept while a command runs: the last `max` lines, bounded
/// in bytes too, with a count of what was dropped.
struct Collected {
    lines: std::collections::VecDeque<String>,
    bytes: usize,
    dropped: usize,
    dropped_bytes: usize,
    max_lines: usize,
    max_bytes: usize,
}

impl Collected {
    fn new(max_lines: usize, max_bytes: usize) -> Self {
        Collected {
            lines: Default::default(),
            bytes: 0,
            dropped: 0,
            dropped_bytes: 0,
            max_lines,
            max_bytes,
        }
    }

    fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines
            || (self.bytes > self.max_bytes && self.lines.len() > 1)
        {
            let gone = self.lines.pop_front().expect("non-empty");
            self.bytes -= gone.len();
            self.dropped += 1;
            self.dropped_bytes += gone.len();
        }
    }
}

async fn run_command(
    app: Arc<App>,
    args: RunCommandArgs,
    ctx: CallContext,
) -> ToolResult<RunCommandResult> {
    let started = Instant::now();
    let command = args.command.trim_end();
    if command.trim().is_empty() {
        return Err(ToolError::invalid("command must not be empty"));
    }
    let suppress = args.suppress_history.unwrap_or(app.config.suppress_history);
    if suppress && command.contains(['\n', '\r']) {
        return Err(ToolError::invalid(
            "command must be a single line when suppress_history=True",
        ));
    }
    let max_lines = match args.max_lines {
        Some(n) if n <= 0 => {
            return Err(ToolError::invalid(format!(
                "max_lines must be positive or null (received {n})"
            )));
        }
        Some(n) => n as usize,
        None => usize::MAX,
    };
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    let deadline = started + effective;
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let mut watch = watch_pane(&target, &args.pane).await?;
    let nonce = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let start_marker = format!("__tmux_mcp_{nonce}_start");
    let end_marker =
        Regex::new(&format!("__tmux_mcp_{nonce}_end_(-?[0-9]+)")).expect("valid regex");

    watch.mark_seen();
    let mut cursor = watch.end();
    let typed = Command::new("send-keys")
        .target(watch.id)
        .flag("-l")
        .flag("--")
        .arg(payload(command, &nonce, suppress, &watch.command));
    target.run(typed).await?;
    target
        .run(Command::new("send-keys").target(watch.id).arg("Enter"))
        .await?;

    let mut view = LineView::new(MAX_LINE);
    let mut output = Collected::new(max_lines, app.config.limits.tool_result);
    let mut running = false;
    let pane_id = watch.id.to_string();
    let finish = |exit_status: Option<i64>, output: Collected| RunCommandResult {
        pane_id: pane_id.clone(),
        exit_status,
        timed_out: exit_status.is_none(),
        elapsed_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        output_truncated: output.dropped > 0,
        output_truncated_lines: output.dropped as i64,
        output: output.lines.into_iter().collect(),
        effective_timeout: effective.as_secs_f64(),
    };
    let mut status: Option<i64> = None;
    loop {
        watch.mark_seen();
        let info = watch.read(&mut cursor, &mut view, &mut |line| {
            if status.is_some() {
                return;
            }
            if !running {
                running = line.ends_with(start_marker.as_bytes());
                return;
            }
            match end_marker.captures(line) {
                Some(found) => {
                    let whole = found.get(0).expect("match");
                    if whole.start() > 0 {
                        // Output without a final newline shares the marker's line.
                        output.push(lossy(&line[..whole.start()]));
                    }
                    let code = std::str::from_utf8(&found[1])
                        .ok()
                        .and_then(|s| s.parse().ok());
                    status = Some(code.unwrap_or(-1));
                }
                None => output.push(lossy(line)),
            }
        });
        let resynced = status.is_none() && watch.check_alive(&target).await?;
        if status.is_none() && (info.missed || resynced) {
            // Output was lost before it could be read (an eviction, a
            // re-attach): the end marker may be in the gap, but the screen
            // still shows it.
            let (rows, _) = watch.capture(&["-J"]).await?;
            let code = rows
                .iter()
                .rev()
                .find_map(|row| end_marker.captures(row.as_bytes()));
            status = code.and_then(|c| std::str::from_utf8(&c[1]).ok()?.parse().ok());
            output.dropped = output.dropped.max(1);
        }
        if status.is_some() {
            return Ok(finish(status, output));
        }
        let now = Instant::now();
        if now >= deadline {
            if running && !view.partial().is_empty() {
                output.push(lossy(view.partial()));
            }
            return Ok(finish(None, output));
        }
        tokio::select! {
            _ = watch.changed(deadline - now) => {}
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::new("Cancelled", "run_command was cancelled; the command keeps running"));
            }
        }
    }
}

// ---------------------------------------------------------------- capture_since

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CaptureSinceArgs {
    /// The cursor returned by the previous call; omit on the first call.
    #[serde(default)]
    cursor: Option<String>,
    #[serde(flatten)]
    pane: PaneSel,
    /// Keep the last N lines; null: all.
    #[serde(default = "default_since_lines")]
    max_lines: Option<i64>,
    /// Keep at most this many bytes of lines (the last ones); null for no limit.
    #[serde(default = "default_since_bytes")]
    max_bytes: Option<i64>,
    #[serde(flatten)]
    sock: Sock,
}

fn default_since_lines() -> Option<i64> {
    Some(500)
}

fn default_since_bytes() -> Option<i64> {
    Some(128_000)
}

/// The outcome of `capture_since`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CaptureSinceResult {
    pub pane_id: String,
    /// Pass this to the next call to get only what comes after.
    pub cursor: String,
    /// The visible screen (first call) or the lines printed since the cursor.
    pub lines: Vec<String>,
    pub elapsed_seconds: f64,
    /// Output was lost between the two calls (evicted, or not observed).
    pub lines_missed: bool,
    pub truncated: bool,
    pub truncated_lines: i64,
    pub truncated_bytes: i64,
}

const CURSOR_PREFIX: &str = "tmux-mcp-cursor-v2";

/// Where a previous call stopped: the pane, its recording, the pane's
/// process (a respawn keeps the pane id, not the process), a ring offset.
struct Cursor {
    pane: PaneId,
    epoch: u64,
    pid: u32,
    offset: u64,
}

impl Cursor {
    fn encode(&self) -> String {
        format!(
            "{CURSOR_PREFIX}.{}.{}.{}.{}",
            self.pane, self.epoch, self.pid, self.offset
        )
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
        let epoch = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad("missing or invalid epoch"))?;
        let pid = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad("missing or invalid process"))?;
        let offset = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad("missing or invalid offset"))?;
        if parts.next().is_some() {
            return Err(bad("unsupported cursor format"));
        }
        Ok(Cursor {
            pane,
            epoch,
            pid,
            offset,
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

async fn capture_since(
    app: Arc<App>,
    args: CaptureSinceArgs,
    _: CallContext,
) -> ToolResult<CaptureSinceResult> {
    let started = Instant::now();
    let max_lines = limit(args.max_lines, "max_lines")?;
    let max_bytes = limit(args.max_bytes, "max_bytes")?;
    let cursor = args.cursor.as_deref().map(Cursor::decode).transpose()?;
    let target = app.socket(args.sock.socket_name.as_deref())?;
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
    let watch = Watch::start(&target, id).await?;
    // Lines are kept as they come, bounded: the tail survives.
    let mut kept = Collected::new(max_lines, max_bytes);
    // A cursor is continuous only within one recording of one process.
    let same = |c: &Cursor| c.pane == id && c.epoch == watch.pane.epoch && c.pid == watch.pid;
    let (end, missed) = match cursor.filter(same) {
        Some(c) => {
            let mut offset = c.offset;
            let mut view = LineView::new(MAX_LINE);
            let info = watch.read(&mut offset, &mut view, &mut |line| kept.push(lossy(line)));
            if !view.partial().is_empty() {
                kept.push(lossy(view.partial()));
            }
            (offset, info.missed)
        }
        // First call, or the recording (or process) the cursor pointed
        // into is gone: the screen, and lines_missed for a cursor.
        None => {
            let (screen, position) = watch.capture(&[]).await?;
            screen.into_iter().for_each(|line| kept.push(line));
            (position, args.cursor.is_some())
        }
    };
    let (truncated_lines, mut truncated_bytes) = (kept.dropped, kept.dropped_bytes);
    let mut lines: Vec<String> = kept.lines.into_iter().collect();
    if let [only] = lines.as_mut_slice()
        && only.len() > max_bytes
    {
        // One line longer than the byte bound keeps its last bytes.
        let mut cut = only.len() - max_bytes;
        while !only.is_char_boundary(cut) {
            cut += 1;
        }
        only.drain(..cut);
        truncated_bytes += cut;
    }
    Ok(CaptureSinceResult {
        pane_id: id.to_string(),
        cursor: Cursor {
            pane: id,
            epoch: watch.pane.epoch,
            pid: watch.pid,
            offset: end,
        }
        .encode(),
        lines,
        elapsed_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
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
    fn markers_never_appear_in_the_typed_text() {
        let typed = payload("echo hi", "abc", true, "bash");
        assert!(typed.starts_with(' '));
        assert!(!typed.contains("__tmux_mcp_abc_start"));
        assert!(!typed.contains("__tmux_mcp_abc_end_"));
        let fish = payload("echo 'a' \\x", "abc", false, "fish");
        assert!(fish.contains("fish -c 'echo \\'a\\' \\\\x'"), "{fish}");
        assert!(!fish.contains("__tmux_mcp_abc_start"));
    }

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        let c = Cursor {
            pane: PaneId(3),
            epoch: 7,
            pid: 4242,
            offset: 99,
        };
        let back = Cursor::decode(&c.encode()).unwrap();
        assert_eq!(
            (back.pane, back.epoch, back.pid, back.offset),
            (PaneId(3), 7, 4242, 99)
        );
        for bad in [
            "",
            "x",
            "tmux-mcp-cursor-v1.%3.7.9",
            "tmux-mcp-cursor-v2.%3.7.9",
            "tmux-mcp-cursor-v2.3.7.1.9",
            "tmux-mcp-cursor-v2.%3.7.x.9",
            "tmux-mcp-cursor-v2.%3.7.1.9.1",
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

    #[test]
    fn collected_output_keeps_the_tail() {
        let mut c = Collected::new(2, 1000);
        for i in 0..5 {
            c.push(i.to_string());
        }
        assert_eq!(c.lines, ["3", "4"]);
        assert_eq!(c.dropped, 3);
    }
}
