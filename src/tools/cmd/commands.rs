//! The commands run_command started, as handles: `wait_for_command`,
//! `list_commands`, `stop_command` (the machinery is in
//! [`crate::drive::shell::handles`]).

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::bounded::HeadTail;
use crate::drive::cursor::{Cursor, OutputSpan};
use crate::drive::pace::Pace;
use crate::drive::read_back;
use crate::drive::shell::handles::{self, CommandWait, PaneEnd, Record};
use crate::tmux::PaneId;
use crate::tools::shared::args::seconds;
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, INPUT, READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "wait_for_command",
            Toolset::Execute,
            "Wait For Command",
            "Wait for a command_id to end: its exit status and the output no call returned yet.",
            READ,
            wait_for_command,
        )
        .with_own_wait_ceiling(),
    );
    tools.push(ToolDef::new(
        "list_commands",
        Toolset::Execute,
        "List Commands",
        "The commands run_command started here: running ones and the last finished.",
        READ,
        list_commands,
    ));
    tools.push(
        ToolDef::new(
            "stop_command",
            Toolset::Execute,
            "Stop Command",
            "Signal a command_id's own processes (never the shell) and wait for its exit status.",
            INPUT,
            stop_command,
        )
        .with_own_wait_ceiling(),
    );
}

/// Most lines a wait returns (head and tail).
const MAX_LINES: usize = 100;
/// Most bytes a wait returns.
const MAX_BYTES: usize = 8 * 1024;
/// How long stop_command waits for the end by default.
const STOP_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForCommandArgs {
    command_id: String,
    // (no schema text) Seconds to wait (capped by the server).
    #[serde(default = "default_timeout")]
    timeout: f64,
}

fn default_timeout() -> f64 {
    30.0
}

/// A command as a wait or a stop leaves it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandResult {
    pub command_id: String,
    pub pane_id: PaneId,
    pub running: bool,
    /// Null while it runs, or when its end gave none.
    pub exit_status: Option<i64>,
    /// Its output lines no earlier call returned; a line
    /// `[... N lines left out ...]` stands where the middle was cut.
    pub output: Vec<String>,
    pub output_truncated: bool,
    /// Output lines were lost before they could be read (a flood paused
    /// the pane, or an earlier server followed the command).
    pub lines_missed: bool,
    /// A capture_since cursor at the first line of `output`.
    pub cursor: Option<String>,
    pub elapsed_seconds: f64,
    /// Ended with its pane: pane_gone, pane_exited or pane_respawned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane_end: Option<&'static str>,
}

/// The result of a wait on a command, with a cursor that pages the
/// output it returned (from the recording) and reads on from tmux after
/// the last line (as run_command's does).
async fn result(
    target: &Target,
    waited: CommandWait,
    output: HeadTail,
    started: Instant,
) -> CommandResult {
    let CommandWait {
        record,
        from,
        missed,
    } = waited;
    let last = output.last().map(str::to_owned);
    let (rows, anchor) = read_back::anchor_at(target, record.pane, None, last.as_deref())
        .await
        .unwrap_or_default();
    let cursor = from.map(|offset| {
        Cursor {
            pane: record.pane,
            server: rows.server,
            pid: record.pid,
            anchor,
            output: Some(OutputSpan {
                epoch: record.epoch,
                offset,
                stop: record.end_at.unwrap_or(record.returned),
            }),
        }
        .encode()
    });
    CommandResult {
        command_id: record.id,
        pane_id: record.pane,
        running: !record.ended,
        exit_status: record.status,
        output_truncated: output.truncated() || missed,
        lines_missed: missed,
        output: output.into_lines(|n| format!("[... {n} lines left out ...]")),
        cursor,
        elapsed_seconds: started.elapsed().as_secs_f64(),
        pane_end: record.pane_end.map(PaneEnd::as_str),
    }
}

async fn wait_for_command(
    Call { app, target, ctx }: Call,
    args: WaitForCommandArgs,
) -> ToolResult<CommandResult> {
    let started = Instant::now();
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    let subject = format!("command {}", args.command_id);
    let mut pace = Pace::new(&ctx, subject, started, effective);
    pace.report_start("waiting");
    let mut output = HeadTail::new(MAX_LINES, MAX_BYTES);
    let waited = handles::wait(&target, &args.command_id, &mut pace, &mut output, None).await?;
    Ok(result(&target, waited, output, started).await)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListCommandsArgs {
    pane_id: Option<String>,
    running: Option<bool>,
}

/// One command run_command started.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandEntry {
    pub command_id: String,
    pub pane_id: PaneId,
    /// Its first 200 characters.
    pub command: String,
    /// Seconds since the Unix epoch.
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub running: bool,
    pub exit_status: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane_end: Option<&'static str>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListCommandsResult {
    pub commands: Vec<CommandEntry>,
}

fn entry(r: Record) -> CommandEntry {
    CommandEntry {
        command_id: r.id,
        pane_id: r.pane,
        command: r.command,
        started_at: r.started_at,
        ended_at: r.ended_at,
        running: !r.ended,
        exit_status: r.status,
        pane_end: r.pane_end.map(PaneEnd::as_str),
    }
}

async fn list_commands(target: Target, args: ListCommandsArgs) -> ToolResult<ListCommandsResult> {
    // Handles an earlier server started, and ends only tmux saw.
    handles::refresh(&target).await?;
    let commands = target
        .server
        .commands
        .list()
        .into_iter()
        .rev()
        .filter(|r| {
            args.pane_id
                .as_ref()
                .is_none_or(|p| *p == r.pane.to_string())
        })
        .filter(|r| args.running.is_none_or(|running| running != r.ended))
        .map(entry)
        .collect();
    Ok(ListCommandsResult { commands })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StopCommandArgs {
    command_id: String,
    /// INT, TERM or KILL.
    #[serde(default = "default_signal")]
    signal: String,
    // (no schema text) Seconds to wait for its end (capped by the server).
    #[serde(default = "default_stop_timeout")]
    timeout: f64,
}

fn default_stop_timeout() -> f64 {
    STOP_WAIT.as_secs_f64()
}

fn default_signal() -> String {
    "INT".to_owned()
}

async fn stop_command(
    Call { app, target, ctx }: Call,
    args: StopCommandArgs,
) -> ToolResult<CommandResult> {
    let started = Instant::now();
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    let signal = match args.signal.trim_start_matches("SIG") {
        "INT" => libc::SIGINT,
        "TERM" => libc::SIGTERM,
        "KILL" => libc::SIGKILL,
        other => {
            return Err(ToolError::invalid(format!(
                "signal must be INT, TERM or KILL (received {other:?})"
            )));
        }
    };
    let commands = &target.server.commands;
    let id = &args.command_id;
    let record = commands.get(id);
    let mut stopping = None;
    if let Some(record) = record.filter(|r| !r.ended) {
        if target.hub.local_socket().is_none() {
            return Err(ToolError::new(
                ErrorKind::Refused,
                "stop_command signals local panes only; send_keys C-c interrupts a remote one",
            ));
        }
        handles::signal_command(record.pid, signal)
            .map_err(|why| ToolError::new(ErrorKind::Refused, format!("command {id}: {why}")))?;
        stopping = Some(signal);
    }
    let mut pace = Pace::new(&ctx, format!("command {id}"), started, effective);
    let mut output = HeadTail::new(MAX_LINES, MAX_BYTES);
    let waited = handles::wait(&target, id, &mut pace, &mut output, stopping).await?;
    Ok(result(&target, waited, output, started).await)
}
