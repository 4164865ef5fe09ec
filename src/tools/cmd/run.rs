//! `run_command`: type a command at a shell prompt, wait for it to end, and
//! return its exit status and its own output, bounded (the machinery is
//! in [`crate::drive::shell`]).

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::bounded::{self, HeadTail, MaxLines};
use crate::drive::cursor::{Cursor, OutputSpan};
use crate::drive::input::{self, Input};
use crate::drive::pace::Pace;
use crate::drive::person;
use crate::drive::read_back;
use crate::drive::shell::handles::{self, Record};
use crate::drive::shell::line;
use crate::drive::shell::prompt;
use crate::drive::shell::span::{self, Delimiters, Span};
use crate::drive::shell::state;
use crate::drive::shell::typed::{self, ShellTyping};
use crate::drive::watch::Watch;
use crate::process::Activity;
use crate::tmux::PaneId;
use crate::tmux::history::Anchor;
use crate::tools::shared::args::seconds;
use crate::tools::shared::args::yes;
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{App, Call, INPUT, Target, ToolDef, ToolError, ToolResult};

/// `suppress_history` defaults to `LIBTMUX_SUPPRESS_HISTORY`, so the
/// catalog advertises the configured default.
pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    let tool = ToolDef::new(
        "run_command",
        Toolset::Execute,
        "Run Command",
        "Run a command at a pane's shell prompt; return its exit status and own output (head and tail; capture_since(cursor) pages the rest). Still running at the timeout: command_id for wait_for_command.",
        INPUT,
        run_command,
    );
    tools.push(
        tool.with_own_wait_ceiling()
            .with_boolean_default("suppress_history", config.suppress_history),
    );
}

/// Most lines returned by default (fewer on a shorter pane).
const DEFAULT_LINES: usize = 100;
/// Most bytes of output returned by default.
const DEFAULT_OUTPUT_BYTES: usize = 8 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCommandArgs {
    // (no schema text) The shell command to run.
    command: String,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_run_timeout")]
    timeout: f64,
    /// Most output lines (head and tail); null: all. Default: a screenful.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>")]
    max_lines: MaxLines,
    /// A leading space keeps it out of shell history.
    suppress_history: Option<bool>,
    /// A child shell (cd, export do not persist); false: the pane's own shell.
    #[serde(default = "yes")]
    in_subshell: bool,
    /// Return once it started.
    #[serde(default)]
    background: bool,
}

fn default_run_timeout() -> f64 {
    30.0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The outcome of `run_command`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunCommandResult {
    pub pane_id: PaneId,
    /// The command's exit status; null when it timed out (or the shell did not say).
    pub exit_status: Option<i64>,
    pub timed_out: bool,
    pub elapsed_seconds: f64,
    /// The command's own output lines (escape sequences removed); a line
    /// `[... N lines left out ...]` stands where the middle was cut.
    pub output: Vec<String>,
    pub output_truncated: bool,
    /// Lines left out of `output`.
    pub output_truncated_lines: i64,
    pub effective_timeout: f64,
    /// A capture_since cursor at the command's first output byte, ending at
    /// its last: pages exactly this command's output.
    pub cursor: Option<String>,
    /// What the pane does now.
    pub pane_state: Activity,
    /// Why the command did not end, and what to do next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The shell's OSC 133 marks delimited the command (typed with no wrapper).
    #[serde(default, skip_serializing_if = "is_false")]
    pub shell_marks: bool,
    /// The running command, for wait_for_command, list_commands and stop_command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_id: Option<String>,
}

/// The output bound of a call: a screenful by default.
fn output_bound(max_lines: MaxLines, height: usize, backstop: usize) -> ToolResult<(usize, usize)> {
    let screenful = (height.clamp(1, DEFAULT_LINES), DEFAULT_OUTPUT_BYTES);
    bounded::bound(max_lines, screenful, backstop)
}

fn left_out_line(n: usize) -> String {
    // Short: the model reads it on every truncated result; the description
    // says how to page the rest (capture_since with the result's cursor).
    format!("[... {n} lines left out ...]")
}

/// A call's checked arguments: the command as typed, and its bounds.
struct Checked<'a> {
    command: &'a str,
    suppress: bool,
    subshell: bool,
    effective: Duration,
}

fn check<'a>(app: &App, args: &'a RunCommandArgs) -> ToolResult<Checked<'a>> {
    let command = args.command.trim_end();
    if command.trim().is_empty() {
        return Err(ToolError::invalid("command must not be empty"));
    }
    let suppress = args.suppress_history.unwrap_or(app.config.suppress_history);
    if suppress && command.contains(['\n', '\r']) {
        return Err(ToolError::invalid(
            "command must be a single line when suppress_history=True",
        )
        .suggest("suppress_history=false runs a multi-line command (it then enters the shell's history)."));
    }
    if command.contains('\0') {
        // As every other tool: a shell line cannot carry one.
        return Err(ToolError::invalid("command contains a NUL byte"));
    }
    output_bound(args.max_lines, 1, 1)?;
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    Ok(Checked {
        command,
        suppress,
        subshell: args.in_subshell,
        effective,
    })
}

/// Types the command line and Enter once the prompt is drawn: the command
/// alone when the live shell marks its commands, else the wrapper. Returns
/// the delimiters to look for and the recording's offset before the typing.
/// `seen`: what the person check read ahead.
async fn type_command(
    watch: &mut Watch,
    target: &Target,
    run: &Checked<'_>,
    seen: Option<person::Seen>,
) -> ToolResult<(Delimiters, u64, Record)> {
    // A person typing there first finishes their line; after such a wait
    // the shell and the cursor are read again: the line is sized to them.
    let waited = person::before_typing_seen(target, watch.id, false, seen).await?;
    if !waited.duration().is_zero() {
        watch.refresh_geometry(target).await?;
        state::await_shell(watch, target).await?;
    }
    prompt::prompt_drawn(watch, target).await?;
    // Never added to a line it did not empty itself, nor typed into a mode.
    line::check(target, watch.id, true).await?;
    let how = ShellTyping {
        suppress_history: run.suppress,
        fish: watch.command == "fish",
        subshell: run.subshell,
        execs_last: ShellTyping::execs_last(&watch.command),
    };
    let one_line = !run.command.contains(['\n', '\r']);
    let marked = !run.subshell && one_line && prompt::shell_marks_prompt(watch);
    let nonce = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let (delimiters, line) = if marked {
        (Delimiters::Marks, typed::bare(run.command, how))
    } else {
        let line = typed::wrapped(run.command, &nonce, how, watch.geometry, watch.id);
        (Delimiters::Markers(nonce.clone()), line)
    };
    watch.unpaused(target).await?;
    let cursor = watch.follower().end();
    // The line and its Enter (`\r`, the byte the Enter key sends) in one
    // command: a round trip less.
    input::send(target, &waited, Input::Line(&line)).await?;
    let record = Record::new(nonce, watch, run.command, delimiters.clone(), cursor);
    Ok((delimiters, cursor, record))
}

/// Typed as is for a shell that marked its prompt, the command got no
/// mark: the shell that reads it is not that one.
const UNMARKED: &str = "the shell marked its prompt (OSC 133) but not this command: another shell may read it now; in_subshell=true types a wrapper that needs no marks";

/// A background command started.
const BACKGROUND: &str = "started: wait_for_command(command_id) follows it";

/// The shell's marks ended the command but gave no status.
const NO_STATUS: &str = "the shell's marks gave no exit status; in_subshell=true reports it";

/// What the pane does once the reading stopped (`collected`), and what
/// to tell the agent: back at the prompt; or, when the command did not end,
/// what the pane does; or the live shell ended by the command.
async fn settle(
    collected: ToolResult<bool>,
    watch: &mut Watch,
    target: &Target,
    span: &Span,
    run: &Checked<'_>,
) -> ToolResult<(bool, Activity, Option<String>)> {
    Ok(match collected {
        Ok(missed) if span.ended.is_some() => {
            prompt::await_prompt(watch, span.after_end).await;
            let unknown = matches!(span.ended, Some((_, None)));
            let note = unknown.then(|| NO_STATUS.to_owned());
            (missed, Activity::Prompt, note)
        }
        Ok(missed) => {
            let (state, mut note) = state::after_timeout(target, watch, !run.subshell).await;
            // A marking shell prints `C` before it runs anything.
            if span.by_marks() && span.output_from.is_none() && state != Activity::Exited {
                note = UNMARKED.to_owned();
            }
            (missed, state, Some(note))
        }
        // The pane's end, seen while a command ran in its own shell (an
        // `exit`, a `set -e` shell's failure).
        Err(e) if !run.subshell && e.kind.is_pane_end() => {
            let note = format!("the command ended the pane's shell: {}", e.message);
            (false, Activity::Exited, Some(note))
        }
        Err(e) => return Err(e),
    })
}

async fn run_command(
    Call { app, target, ctx }: Call,
    args: RunCommandArgs,
) -> ToolResult<RunCommandResult> {
    let started = Instant::now();
    let run = check(&app, &args)?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    // What the person check reads goes out with the pane's description
    // and its stream's `continue`: one round trip.
    let (watch, seen) = tokio::join!(
        Watch::start_typing(&target, pane),
        person::look_ahead(&target, pane)
    );
    let (mut watch, seen) = (watch?, seen?);
    state::await_shell(&mut watch, &target).await?;
    let (max_lines, max_bytes) = output_bound(
        args.max_lines,
        watch.geometry.height,
        app.config.limits.tool_result,
    )?;
    let (delimiters, mut cursor, record) = type_command(&mut watch, &target, &run, seen).await?;
    let mut pace = Pace::new(&ctx, format!("pane {}", watch.id), started, run.effective);
    pace.report_start("command typed");

    let mut output = HeadTail::new(max_lines, max_bytes);
    let mut span = Span::new(delimiters);
    span.until_start = args.background;
    let collected = span::collect(
        &mut watch,
        &target,
        &mut pace,
        &mut cursor,
        &mut span,
        &mut output,
    )
    .await;
    // The cursor reads on after what this call returned: the output's
    // span in the recording while it is left to page (ended, or cut), then
    // tmux's own lines after the anchor (see `capture_since`). The anchor
    // of a command that printed is its last line, drawn by now: read while
    // the prompt is awaited (a pane the command ended has none: its cursor
    // pages the output). One that printed nothing is anchored above the
    // cursor, where the prompt goes: read once the prompt is drawn.
    let last = output.last().map(str::to_owned);
    let pane_id = watch.id;
    let anchor = anchor_of(&target, pane_id, watch.geometry.height, last.as_deref());
    let settle = settle(collected, &mut watch, &target, &span, &run);
    let (settled, anchored) = if last.is_some() {
        tokio::join!(settle, anchor)
    } else {
        (settle.await, anchor.await)
    };
    let (missed, pane_state, mut note) = settled?;
    let ((server, pid), anchor) = anchored.unwrap_or_default();
    let running = span.ended.is_none() && pane_state != Activity::Exited;
    let command_id = running.then(|| record.id.clone());
    if args.background && running {
        note = Some(BACKGROUND.to_owned());
    }
    let paged = span.ended.is_some() || output.truncated() || missed;
    let page = cursor_after(&watch, &span, paged, (server, pid), anchor);
    keep_record(&target, watch, record, &span, cursor, running).await;
    Ok(RunCommandResult {
        pane_id,
        exit_status: span.ended.and_then(|(_, status)| status),
        timed_out: running && !args.background,
        elapsed_seconds: pace.elapsed_seconds(),
        output_truncated: output.truncated() || missed,
        output_truncated_lines: output.left_out as i64,
        output: output.into_lines(left_out_line),
        effective_timeout: run.effective.as_secs_f64(),
        cursor: page,
        pane_state,
        note,
        shell_marks: span.by_marks(),
        command_id,
    })
}

/// The anchor of the cursor after a command: the last line above the
/// cursor, or `last` (what the call returned last), with the tmux server
/// and the pane's process it was read from.
async fn anchor_of(
    target: &Target,
    pane: PaneId,
    height: usize,
    last: Option<&str>,
) -> ToolResult<((u32, u32), Anchor)> {
    let (rows, anchor) = read_back::anchor_at(target, pane, Some(height), last).await?;
    Ok(((rows.server, rows.pid), anchor))
}

/// The cursor a result hands out once the command's output began: it
/// pages the output's span in the recording while it is left to page
/// (`paged`: ended, or cut), then reads tmux's lines after `anchor`.
fn cursor_after(
    watch: &Watch,
    span: &Span,
    paged: bool,
    (server, pid): (u32, u32),
    anchor: Anchor,
) -> Option<String> {
    let from = span.output_from?;
    let cursor = Cursor {
        pane: watch.id,
        server,
        pid,
        anchor,
        output: paged.then(|| OutputSpan {
            epoch: watch.epoch(),
            offset: from,
            stop: span
                .ended
                .map_or_else(|| watch.follower().end(), |(at, _)| at),
        }),
    };
    Some(cursor.encode())
}

/// Keeps `record` for `list_commands` and `wait_for_command`: a command
/// still running is followed to its end by a task holding `watch`; one
/// that finished within the call is listed too, so an agent that lost its
/// context finds its last commands and their statuses.
async fn keep_record(
    target: &Target,
    watch: Watch,
    mut record: Record,
    span: &Span,
    cursor: u64,
    running: bool,
) {
    if !running {
        target.server.commands.add(record.finished(span.ended));
        return;
    }
    record.output_from = span.output_from;
    record.returned = cursor;
    let id = record.id.clone();
    handles::record_start(target, &record).await;
    target.server.commands.add(record);
    target
        .server
        .tasks
        .spawn(handles::follow(target.share(), watch, id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_a_screenful_unless_asked() {
        assert_eq!(output_bound(None, 40, 1 << 20).unwrap(), (40, 8192));
        assert_eq!(output_bound(None, 500, 1 << 20).unwrap(), (100, 8192));
        assert_eq!(
            output_bound(Some(Some(3)), 40, 1 << 20).unwrap(),
            (3, 1 << 20)
        );
        assert_eq!(output_bound(Some(None), 40, 1 << 20).unwrap().0, usize::MAX);
        assert!(output_bound(Some(Some(0)), 40, 1 << 20).is_err());
    }
}
