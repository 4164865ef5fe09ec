//! Pane input and output beyond single keystrokes: batched typing, pasting,
//! clearing, respawning, piping to a file, and searching pane text.

use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::bounded::DEFAULT_BYTES;
use crate::drive::input::{self, Input, KeyOptions};
use crate::drive::person;
use crate::drive::shell::typed::sh_quote;
use crate::drive::tail::trimmed_lines;
use crate::tmux::{Command, PaneId, SessionId, TmuxError};
use crate::tools::shared::args::OnError;
use crate::tools::shared::args::{check_buffer_text, yes};
use crate::tools::shared::guard::Doomed;
use crate::tools::shared::lookup::{self, PaneArgs, PaneSel, SessionSel};
use crate::tools::shared::models::PaneContentMatch;
use crate::tools::shared::rows;
use crate::tools::shared::spawn::{self, SpawnArgs};
use crate::tools::toolsets::Toolset;
use crate::tools::{
    Call, DESTROY, ErrorKind, Hints, INPUT, READ, Target, ToolDef, ToolError, ToolResult,
};

/// Starts a process in place of something: it may kill a program or
/// overwrite a file, and what the process does is open-ended.
const REPLACE: Hints = Hints {
    destructive: true,
    open_world: true,
    ..Hints::BASE
};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "send_keys_batch",
        Toolset::Execute,
        "Send Keys Batch",
        "Run send_keys operations in order, each with its own target; one result row each.",
        INPUT,
        send_keys_batch,
    ));
    tools.push(ToolDef::new(
        "paste_text",
        Toolset::Execute,
        "Paste Text",
        "Paste text into a pane via a temporary buffer; no Enter is added.",
        INPUT,
        paste_text,
    ));
    tools.push(ToolDef::new(
        "clear_pane",
        Toolset::Teardown,
        "Clear Pane",
        "Reset a pane's terminal and delete its scrollback for good.",
        DESTROY,
        clear_pane,
    ));
    tools.push(ToolDef::new(
        "respawn_pane",
        Toolset::Execute,
        "Respawn Pane",
        "Restart a pane's process, keeping its id and layout.",
        REPLACE,
        respawn_pane,
    ));
    tools.push(ToolDef::new(
        "pipe_pane",
        Toolset::Execute,
        "Pipe Pane",
        "Log a pane's output to a file, or stop; writes anywhere this tmux server can (a remote server: on its host).",
        REPLACE,
        pipe_pane,
    ));
    tools.push(ToolDef::new(
        "search_panes",
        Toolset::Inspect,
        "Search Panes",
        "Find panes whose text (screen, or content_start..content_end) contains pattern; matching lines per pane, paged by offset/limit. Default cap: 24 KB (the rest in truncated_panes).",
        READ,
        search_panes,
    ));
}

// ---------------------------------------------------------------- send_keys_batch

// One send_keys operation. Its fields are described once, by send_keys
// (plain comments keep them out of the schema).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysOperation {
    // (no schema text) Text or key names to send.
    keys: String,
    /// Pane ID (e.g. '%1'). Wins over the other fields.
    pane_id: Option<String>,
    /// Used without pane_id.
    session_name: Option<String>,
    /// Used without pane_id.
    session_id: Option<String>,
    /// Used without pane_id.
    window_id: Option<String>,
    // (no schema text) Press Enter after the keys.
    #[serde(default = "yes")]
    enter: bool,
    // (no schema text) Send the text verbatim instead of reading key names.
    #[serde(default)]
    literal: bool,
    // (no schema text) Prefix a space to keep the line out of shell history.
    #[serde(default)]
    suppress_history: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendKeysBatchArgs {
    /// send_keys arguments, run in order (at most 1000).
    operations: Vec<SendKeysOperation>,
    /// Stop at the first failed row, or continue.
    #[serde(default)]
    on_error: OnError,
    /// Seconds for the whole batch; operations left then fail.
    timeout: Option<f64>,
}

// The outcome of one operation.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SendKeysOperationResult {
    pub index: usize,
    /// Null when the target was not found.
    pub pane_id: Option<PaneId>,
    pub success: bool,
    pub error: Option<String>,
    pub elapsed_seconds: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SendKeysBatchResult {
    pub results: Vec<SendKeysOperationResult>,
    pub succeeded: usize,
    pub failed: usize,
    /// Index of the failure that stopped the batch.
    pub stopped_at: Option<usize>,
}

const MAX_OPERATIONS: usize = 1000;

/// A float the way Python prints it (`5.0`, `0.25`), as the reference's
/// messages show numbers.
fn python_float(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{t:.1}")
    } else {
        format!("{t}")
    }
}

fn error_text(e: &ToolError) -> String {
    match &e.suggestion {
        Some(s) => format!("{}\n{s}", e.message),
        None => e.message.clone(),
    }
}

async fn send_keys_batch(
    target: Target,
    args: SendKeysBatchArgs,
) -> ToolResult<SendKeysBatchResult> {
    check_batch(&args)?;
    let deadline = BatchDeadline::new(args.timeout);
    let mut out = SendKeysBatchResult {
        results: Vec::new(),
        succeeded: 0,
        failed: 0,
        stopped_at: None,
    };
    for (index, op) in args.operations.into_iter().enumerate() {
        let started = Instant::now();
        let (pane, result) = send_one(&target, op, &deadline).await;
        let elapsed = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let failed = result.is_err();
        out.results.push(SendKeysOperationResult {
            index,
            pane_id: pane,
            success: !failed,
            error: result.err().map(|e| error_text(&e)),
            elapsed_seconds: elapsed,
        });
        if failed {
            out.failed += 1;
            if matches!(args.on_error, OnError::Stop) {
                out.stopped_at = Some(index);
                break;
            }
        } else {
            out.succeeded += 1;
        }
    }
    Ok(out)
}

fn check_batch(args: &SendKeysBatchArgs) -> ToolResult<()> {
    if args.operations.is_empty() {
        return Err(ToolError::invalid("operations must not be empty"));
    }
    if args.operations.len() > MAX_OPERATIONS {
        return Err(ToolError::invalid(format!(
            "operations must contain at most {MAX_OPERATIONS} operations (received {})",
            args.operations.len()
        )));
    }
    if let Some(t) = args.timeout
        && !(t.is_finite() && t > 0.0)
    {
        return Err(ToolError::invalid(format!(
            "timeout must be a positive number of seconds or null (received {t})"
        )));
    }
    Ok(())
}

/// The optional time limit of a whole batch.
struct BatchDeadline {
    at: Option<tokio::time::Instant>,
    timeout: f64,
}

impl BatchDeadline {
    fn new(timeout: Option<f64>) -> Self {
        BatchDeadline {
            at: timeout.map(|t| tokio::time::Instant::now() + Duration::from_secs_f64(t.min(1e9))),
            timeout: timeout.unwrap_or_default(),
        }
    }

    fn expired(&self) -> ToolError {
        ToolError::new(
            ErrorKind::Timeout,
            format!(
                "batch execution exceeded timeout of {}s",
                python_float(self.timeout)
            ),
        )
    }

    /// Runs `work` unless the deadline has passed, and no longer than it.
    async fn bound<T>(&self, work: impl Future<Output = ToolResult<T>>) -> ToolResult<T> {
        match self.at {
            None => work.await,
            Some(at) if tokio::time::Instant::now() >= at => Err(self.expired()),
            Some(at) => tokio::time::timeout_at(at, work)
                .await
                .unwrap_or_else(|_| Err(self.expired())),
        }
    }
}

/// Runs one operation: the pane it reached (none when its target was not
/// found), and the outcome.
async fn send_one(
    target: &Target,
    op: SendKeysOperation,
    deadline: &BatchDeadline,
) -> (Option<PaneId>, ToolResult<()>) {
    let mut resolved = None;
    let run = async {
        let sel = PaneSel {
            pane_id: op.pane_id,
            session_name: op.session_name,
            session_id: op.session_id,
            window_id: op.window_id,
        };
        let pane = lookup::resolve_pane(target, &sel).await?;
        resolved = Some(pane);
        let how = KeyOptions {
            enter: op.enter,
            literal: op.literal,
            suppress_history: op.suppress_history,
        };
        input::type_keys(target, pane, &op.keys, how)
            .await
            .map(drop)
    };
    let result = deadline.bound(run).await;
    // A well-formed id names no pane until tmux says so: then, as for
    // any failed resolution, the row has no pane.
    if matches!(&result, Err(e) if e.kind == ErrorKind::PaneNotFound) {
        resolved = None;
    }
    (resolved, result)
}

// ---------------------------------------------------------------- paste_text

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PasteTextArgs {
    /// Newlines submit lines.
    text: String,
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) Bracketed paste, when the program enabled it.
    #[serde(default = "yes")]
    bracket: bool,
}

async fn paste_text(target: Target, args: PasteTextArgs) -> ToolResult<String> {
    check_buffer_text(&args.text, "text", "paste_text")?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let waited = person::before_typing(&target, pane, false).await?;
    let text = Input::Text {
        text: &args.text,
        bracketed: args.bracket,
    };
    input::send(&target, &waited, text).await?;
    Ok(format!("Text pasted to pane {pane}{}", waited.note()))
}

// ---------------------------------------------------------------- clear_pane

async fn clear_pane(target: Target, args: PaneArgs) -> ToolResult<String> {
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    // In this order: the reset pushes the screen into history, which the
    // second command then deletes.
    target
        .run(Command::new("send-keys").flag("-R").target(pane))
        .await?;
    target
        .run(Command::new("clear-history").target(pane))
        .await?;
    Ok(format!("Pane cleared: {pane}"))
}

// ---------------------------------------------------------------- respawn_pane

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RespawnPaneArgs {
    // (no schema text) Pane ID (e.g. '%1').
    pane_id: String,
    /// Kill the running process; false works on a dead pane only.
    #[serde(default = "yes")]
    kill: bool,
    /// Command instead of the default one.
    shell: Option<String>,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn respawn_pane(
    Call { app, target, .. }: Call,
    args: RespawnPaneArgs,
) -> ToolResult<crate::tools::shared::models::PaneInfo> {
    let spawn = args.spawn.check(&target)?;
    let pane = lookup::pane_id(&args.pane_id)?;
    app.refuse_self_harm(&target, Doomed::Respawned(pane))
        .await?;
    let mut cmd = Command::new("respawn-pane").target(pane);
    if args.kill {
        cmd = cmd.flag("-k");
    }
    cmd = spawn.apply(cmd);
    if let Some(shell) = &args.shell {
        cmd = cmd.flag("--").arg(shell);
    }
    target.hub.respawn(pane, &cmd).await?;
    app.pane_info(&target, pane).await
}

// ---------------------------------------------------------------- pipe_pane

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PipePaneArgs {
    #[serde(flatten)]
    pane: PaneSel,
    /// File (an absolute path) to write to; null stops.
    output_path: Option<String>,
    /// false truncates the file first.
    #[serde(default = "yes")]
    append: bool,
}

/// Longest output_path accepted (Linux PATH_MAX).
const MAX_PATH: usize = 4096;
/// Longest pipe command sent to tmux, escaped (its strftime buffer is 8 KiB).
const MAX_COMMAND: usize = 8000;

/// Escapes a pipe-pane command so tmux runs it exactly: pipe-pane passes
/// the command through strftime (`%` doubled) and then through format
/// expansion (`#` runs doubled, see [`spawn::literal`]).
fn pipe_command_literal(command: &str) -> String {
    spawn::literal(&command.replace('%', "%%"))
}

async fn pipe_pane(target: Target, args: PipePaneArgs) -> ToolResult<String> {
    let command = match &args.output_path {
        None => None,
        Some(path) if path.trim().is_empty() => {
            return Err(ToolError::invalid(
                "output_path must be a non-empty path, or None to stop piping.",
            ));
        }
        Some(path) if path.contains('\0') => {
            return Err(ToolError::invalid(
                "output_path must not contain a NUL byte",
            ));
        }
        Some(path) if path.len() > MAX_PATH => {
            return Err(ToolError::invalid(format!(
                "output_path is {} bytes; paths are at most {MAX_PATH}",
                path.len()
            )));
        }
        Some(path) => {
            let redirect = if args.append { ">>" } else { ">" };
            let command = pipe_command_literal(&format!("cat {redirect} {}", sh_quote(path)));
            // tmux expands the command into a buffer of 8 KiB; a longer one
            // would come out empty and silently log nothing.
            if command.len() > MAX_COMMAND {
                return Err(ToolError::invalid(format!(
                    "output_path is too long once escaped for the shell and tmux ({} bytes, at most {MAX_COMMAND}); use a shorter path",
                    command.len()
                )));
            }
            Some(command)
        }
    };
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let mut cmd = Command::new("pipe-pane").target(pane);
    match command {
        None => {
            target.run(cmd).await?;
            Ok(format!("Piping stopped for pane {pane}"))
        }
        Some(command) => {
            cmd = cmd.flag("--").arg(command);
            target.run(cmd).await?;
            let path = args.output_path.unwrap_or_default();
            Ok(format!("Piping pane {pane} to {path}"))
        }
    }
}

// ---------------------------------------------------------------- search_panes

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchPanesArgs {
    /// At most 1000 characters.
    pattern: String,
    /// pattern is a Rust regex.
    #[serde(default)]
    regex: bool,
    #[serde(flatten)]
    session: SessionSel,
    // (no schema text) Match case exactly.
    #[serde(default)]
    match_case: bool,
    /// First line: 0 is the screen's top, negative scrollback.
    content_start: Option<i64>,
    // (no schema text) Last line (same numbering).
    content_end: Option<i64>,
    /// Last N matching lines kept per pane.
    #[serde(default = "default_lines_per_pane")]
    max_matched_lines_per_pane: i64,
    /// Most panes returned; null: all.
    #[serde(default = "default_limit")]
    limit: Option<i64>,
    /// Panes to skip.
    #[serde(default)]
    offset: i64,
}

fn default_lines_per_pane() -> i64 {
    50
}

fn default_limit() -> Option<i64> {
    Some(500)
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchPanesResult {
    /// This page, sorted by pane id.
    pub matches: Vec<PaneContentMatch>,
    /// Lines were capped or panes are left after this page.
    pub truncated: bool,
    /// Matching panes after this page.
    pub truncated_panes: Vec<PaneId>,
    pub total_panes_matched: usize,
    pub offset: i64,
    pub limit: Option<i64>,
}

const MAX_PATTERN: usize = 1000;

fn compile(pattern: &str, regex: bool, match_case: bool) -> ToolResult<Regex> {
    if pattern.chars().count() > MAX_PATTERN {
        return Err(ToolError::invalid(format!(
            "pattern is longer than {MAX_PATTERN} characters."
        )));
    }
    let source = if regex {
        pattern.to_owned()
    } else {
        regex::escape(pattern)
    };
    RegexBuilder::new(&source)
        .case_insensitive(!match_case)
        .build()
        .map_err(|e| ToolError::new(ErrorKind::BadRegex, format!("Invalid regex pattern: {e}")))
}

async fn search_panes(
    Call { app, target, .. }: Call,
    args: SearchPanesArgs,
) -> ToolResult<SearchPanesResult> {
    let re = compile(&args.pattern, args.regex, args.match_case)?;
    if args.max_matched_lines_per_pane <= 0 {
        return Err(ToolError::invalid(format!(
            "max_matched_lines_per_pane must be positive (received {})",
            args.max_matched_lines_per_pane
        )));
    }
    let session = if args.session.is_given() {
        Some(lookup::session(&target, &args.session).await?.session_id)
    } else {
        None
    };
    let candidates = search_candidates(&target, session).await?;
    let captures = capture_all(&target, &candidates, args.content_start, args.content_end).await?;
    let cap = args.max_matched_lines_per_pane as usize;
    let mut lines_capped = false;
    let mut matches = Vec::new();
    for (mut m, capture) in candidates.into_iter().zip(captures) {
        let Some(capture) = capture else { continue };
        let mut hits: Vec<String> = trimmed_lines(&capture)
            .into_iter()
            .filter(|l| re.is_match(l))
            .collect();
        if hits.is_empty() {
            continue;
        }
        if hits.len() > cap {
            hits.drain(..hits.len() - cap);
            lines_capped = true;
        }
        m.matched_lines = hits;
        m.is_caller = app.is_caller(&target, m.pane_id);
        matches.push(m);
    }
    // Numeric pane-id order (`%2` before `%10`).
    matches.sort_by_key(|m| m.pane_id);
    Ok(search_page(matches, lines_capped, args.offset, args.limit))
}

/// Every pane of the server, or of one session (by id), each listed once.
async fn search_candidates(
    target: &Target,
    session: Option<SessionId>,
) -> ToolResult<Vec<PaneContentMatch>> {
    let lines = target
        .run(
            Command::new("list-panes")
                .flag("-a")
                .opt("-F", rows::SEARCH.template()),
        )
        .await?;
    let mut seen = std::collections::HashSet::new();
    Ok(rows::SEARCH
        .parse(&lines)
        .into_iter()
        .filter(|m| session.is_none() || m.session_id == session)
        .filter(|m| target.admits_pane(m.pane_id))
        // A window linked into several sessions lists its panes once per session.
        .filter(|m| seen.insert(m.pane_id))
        .collect())
}

/// The page `offset`/`limit` of the sorted matches, kept under the default
/// bound by moving panes from the end of the page to truncated_panes (the
/// JSON stays whole; offset pages through them). A lone pane over the
/// bound keeps its last matched lines.
fn search_page(
    mut matches: Vec<PaneContentMatch>,
    mut lines_capped: bool,
    offset: i64,
    limit: Option<i64>,
) -> SearchPanesResult {
    let total = matches.len();
    let start = (offset.max(0) as usize).min(total);
    let end = match limit {
        Some(limit) => start.saturating_add(limit.max(0) as usize).min(total),
        None => total,
    };
    let rest = matches.split_off(end);
    let mut page: Vec<PaneContentMatch> = matches.split_off(start);
    let mut truncated_panes: Vec<PaneId> = rest.into_iter().map(|m| m.pane_id).collect();
    // A pane id's bytes in the JSON array: its text, quotes and a comma.
    let id_size = |id: &PaneId| id.to_string().len() + 3;
    let budget = DEFAULT_BYTES;
    let json_size = |m: &PaneContentMatch| serde_json::to_string(m).map_or(0, |s| s.len() + 1);
    let mut size: usize = page.iter().map(json_size).sum::<usize>()
        + truncated_panes.iter().map(id_size).sum::<usize>()
        + 200;
    while size > budget && page.len() > 1 {
        let Some(last) = page.pop() else { break };
        size -= json_size(&last);
        size += id_size(&last.pane_id);
        truncated_panes.insert(0, last.pane_id);
    }
    if let Some(only) = page.first_mut() {
        while size > budget && only.matched_lines.len() > 1 {
            size -= only.matched_lines.remove(0).len() + 3;
            lines_capped = true;
        }
    }
    SearchPanesResult {
        matches: page,
        truncated: lines_capped || !truncated_panes.is_empty(),
        truncated_panes,
        total_panes_matched: total,
        offset,
        limit,
    }
}

/// Captures every candidate at once on the control client (all commands
/// go out before the first reply is read). A pane that vanished since it
/// was listed gives `None`.
async fn capture_all(
    target: &Target,
    panes: &[PaneContentMatch],
    start: Option<i64>,
    end: Option<i64>,
) -> ToolResult<Vec<Option<Vec<Vec<u8>>>>> {
    let mut set = tokio::task::JoinSet::new();
    for (i, m) in panes.iter().enumerate() {
        let pane = m.pane_id;
        let cmd = Command::new("capture-pane")
            .flag("-p")
            .flag("-J")
            .target(pane)
            .opt_if("-S", start.map(|n| n.to_string()))
            .opt_if("-E", end.map(|n| n.to_string()));
        let hub = target.hub.clone();
        set.spawn(async move { (i, hub.run(&cmd).await) });
    }
    let mut out: Vec<Option<Vec<Vec<u8>>>> = vec![None; panes.len()];
    while let Some(joined) = set.join_next().await {
        let (i, reply) =
            joined.map_err(|e| ToolError::new(ErrorKind::Tmux, format!("capture failed: {e}")))?;
        match reply {
            Ok(lines) => out[i] = Some(lines),
            Err(TmuxError::Command(msg)) if msg.contains("can't find pane") => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_commands_survive_strftime_and_formats() {
        assert_eq!(
            pipe_command_literal("cat >> '/t/#{pane_id} %d #[x]'"),
            "cat >> '/t/##{pane_id} %%d #[x]'"
        );
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }

    #[test]
    fn patterns_are_bounded_and_literal_by_default() {
        assert!(compile(&"a".repeat(1001), false, false).is_err());
        let re = compile("1.1", false, false).unwrap();
        assert!(re.is_match("192.1.1") && !re.is_match("121"));
        assert!(compile("AbC", false, false).unwrap().is_match("xabcx"));
        assert!(!compile("AbC", false, true).unwrap().is_match("xabcx"));
        let bad = compile("(", true, false).unwrap_err();
        assert!(
            bad.message.starts_with("Invalid regex pattern"),
            "{}",
            bad.message
        );
        assert_eq!(bad.kind.as_str(), "error");
    }

    #[test]
    fn floats_print_like_python() {
        assert_eq!(python_float(5.0), "5.0");
        assert_eq!(python_float(0.25), "0.25");
    }
}
