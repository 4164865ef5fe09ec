//! `run_command`: type a command at a shell prompt, wait for it to end, and
//! return its exit status and its own output, bounded (the machinery is
//! in [`crate::tools::shared::shell`]).

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::tmux::{Command, PaneId};
use crate::tools::shared::args::seconds;
use crate::tools::shared::args::yes;
use crate::tools::shared::bounded::{self, HeadTail, MaxLines};
use crate::tools::shared::cursor::Cursor;
use crate::tools::shared::lookup::PaneSel;
use crate::tools::shared::observe::{Watch, watch_pane};
use crate::tools::shared::pace::Pace;
use crate::tools::shared::person;
use crate::tools::shared::shell::prompt;
use crate::tools::shared::shell::span::{self, Delimiters, Span};
use crate::tools::shared::shell::state::{self, PaneState};
use crate::tools::shared::shell::typed::{self, ShellTyping};
use crate::tools::toolsets::Toolset;
use crate::tools::{App, Call, INPUT, Target, ToolDef, ToolError, ToolResult};

/// `suppress_history` defaults to `LIBTMUX_SUPPRESS_HISTORY`, so the
/// catalog advertises the configured default.
pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    let tool = ToolDef::new(
        "run_command",
        Toolset::Execute,
        "Run Command",
        "Run a command at a pane's shell prompt (bash, sh, zsh, fish; refused if another program runs there), wait, and return its exit status and own output. On timeout it keeps running (timed_out; pane_state and note say what it does). Output: a screenful (at most 100 lines, 8 KB; head and tail); capture_since(cursor) pages the rest.",
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
    /// The shell command to run.
    command: String,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_run_timeout")]
    timeout: f64,
    /// Return at most this many output lines (head and tail); null: all. Default: a screenful.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>")]
    max_lines: MaxLines,
    /// Prefix a space to keep the command out of shell history.
    suppress_history: Option<bool>,
    /// Run in a child shell (cd, export do not persist); false: in the pane's own shell.
    #[serde(default = "yes")]
    in_subshell: bool,
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
    pub pane_state: PaneState,
    /// Why the command did not end, and what to do next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The shell's OSC 133 marks delimited the command (typed with no wrapper).
    #[serde(default, skip_serializing_if = "is_false")]
    pub shell_marks: bool,
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
        ));
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
async fn type_command(
    watch: &mut Watch,
    target: &Target,
    run: &Checked<'_>,
) -> ToolResult<(Delimiters, u64)> {
    prompt::prompt_drawn(watch, target).await?;
    let how = ShellTyping {
        suppress_history: run.suppress,
        fish: watch.command == "fish",
        subshell: run.subshell,
    };
    let one_line = !run.command.contains(['\n', '\r']);
    let marked = !run.subshell && one_line && prompt::shell_marks_prompt(watch);
    let (delimiters, line) = if marked {
        (Delimiters::Marks, typed::bare(run.command, how))
    } else {
        let nonce = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let line = typed::wrapped(run.command, &nonce, how, watch.geometry);
        (Delimiters::Markers(nonce), line)
    };
    // A person typing there first finishes their line.
    person::before_typing(target, watch.id, false).await?;
    let cursor = watch.end();
    let typed = Command::new("send-keys")
        .target(watch.id)
        .flag("-l")
        .flag("--")
        .arg(line);
    target.run(typed).await?;
    target
        .run(Command::new("send-keys").target(watch.id).arg("Enter"))
        .await?;
    Ok((delimiters, cursor))
}

/// Typed as is for a shell that marked its prompt, the command got no
/// mark: the shell that reads it is not that one.
const UNMARKED: &str = "the shell marked its prompt (OSC 133) but not this command: another shell may read it now; in_subshell=true types a wrapper that needs no marks";

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
) -> ToolResult<(bool, PaneState, Option<String>)> {
    Ok(match collected {
        Ok(missed) if span.ended.is_some() => {
            prompt::await_prompt(watch, span.after_end).await;
            let unknown = matches!(span.ended, Some((_, None)));
            let note = unknown.then(|| NO_STATUS.to_owned());
            (missed, PaneState::Prompt, note)
        }
        Ok(missed) => {
            let (state, mut note) = state::after_timeout(target, watch, !run.subshell).await;
            // A marking shell prints `C` before it runs anything.
            if span.by_marks() && span.output_from.is_none() && state != PaneState::Exited {
                note = UNMARKED.to_owned();
            }
            (missed, state, Some(note))
        }
        // The pane's end, seen while a command ran in its own shell (an
        // `exit`, a `set -e` shell's failure).
        Err(e) if !run.subshell && e.kind.is_pane_end() => {
            let note = format!("the command ended the pane's shell: {}", e.message);
            (false, PaneState::Exited, Some(note))
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
    let mut watch = watch_pane(&target, &args.pane).await?;
    state::await_shell(&mut watch, &target).await?;
    let (max_lines, max_bytes) = output_bound(
        args.max_lines,
        watch.geometry.height,
        app.config.limits.tool_result,
    )?;
    let (delimiters, cursor) = type_command(&mut watch, &target, &run).await?;
    let mut pace = Pace::new(&ctx, format!("pane {}", watch.id), started, run.effective);
    pace.report_start("command typed");

    let mut output = HeadTail::new(max_lines, max_bytes);
    let mut span = Span::new(delimiters);
    let collected = span::collect(
        &mut watch,
        &target,
        &mut pace,
        cursor,
        &mut span,
        &mut output,
    )
    .await;
    let (missed, pane_state, note) = settle(collected, &mut watch, &target, &span, &run).await?;
    let cursor = span.output_from.map(|from| {
        Cursor {
            pane: watch.id,
            epoch: watch.epoch(),
            pid: watch.pid,
            offset: from,
            stop: span.ended.map(|(at, _)| at),
        }
        .encode()
    });
    Ok(RunCommandResult {
        pane_id: watch.id,
        exit_status: span.ended.and_then(|(_, status)| status),
        timed_out: span.ended.is_none() && pane_state != PaneState::Exited,
        elapsed_seconds: pace.elapsed_seconds(),
        output_truncated: output.truncated() || missed,
        output_truncated_lines: output.left_out as i64,
        output: output.into_lines(left_out_line),
        effective_timeout: run.effective.as_secs_f64(),
        cursor,
        pane_state,
        note,
        shell_marks: span.by_marks(),
    })
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
