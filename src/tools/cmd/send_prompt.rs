//! `send_prompt`: deliver a message to the program in a pane the way a
//! person pastes it, press Enter once the program has taken it, and check
//! that Enter took.
//!
//! Agent input boxes (Claude Code, Codex, Gemini's successors) read a
//! paste as one message, but drop an Enter that arrives while they are
//! still handling the paste, or take it as a newline inside it. So the
//! text goes in as one bracketed paste (from a paste buffer: never typed
//! key by key, never split into lines that each submit), Enter follows as
//! a key of its own once the pane has been quiet for [`SETTLE`] after the
//! paste, and a submission is judged from what the pane prints next: no
//! output within [`VERIFY`] means the Enter was swallowed, and it is sent
//! again, at most [`ATTEMPTS`] times in all.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::process::{Activity, Prober};
use crate::tmux::{Command, PaneId};
use crate::tools::shared::args::{check_buffer_text, seconds, yes};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::shared::observe::Watch;
use crate::tools::shared::pace::{Pace, Woke, elapsed_seconds};
use crate::tools::shared::person;
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, INPUT, Target, ToolDef, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "send_prompt",
            Toolset::Execute,
            "Send Prompt",
            "Paste a message into a pane's program (agent CLI, REPL, shell) as one paste, then Enter once it took it, checked and retried.",
            INPUT,
            send_prompt,
        )
        .with_own_wait_ceiling(),
    );
}

/// Quiet after the paste before Enter: input boxes ignore an Enter that
/// comes while they still handle a paste (seen: under 80–100 ms).
const SETTLE: Duration = Duration::from_millis(150);
/// The longest a paste may keep the pane printing before Enter goes anyway.
const SETTLE_BOUND: Duration = Duration::from_secs(3);
/// How long after Enter the pane must print something for it to count.
const VERIFY: Duration = Duration::from_millis(700);
/// Enter is sent at most this many times.
const ATTEMPTS: i64 = 3;
/// How often a pane whose program is busy is looked at again.
const READY_EVERY: Duration = Duration::from_millis(50);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendPromptArgs {
    // (no schema text) The message; its newlines stay inside it.
    text: String,
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) Then press Enter (checked).
    #[serde(default = "yes")]
    submit: bool,
    /// Seconds for the program to be ready.
    #[serde(default = "default_timeout")]
    timeout: f64,
}

fn default_timeout() -> f64 {
    10.0
}

/// What became of the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptOutcome {
    Submitted,
    TypedNotSubmitted,
    NotReady,
    Refused,
}

/// The outcome of `send_prompt`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SendPromptResult {
    pub pane_id: PaneId,
    pub outcome: PromptOutcome,
    /// How many times Enter was sent.
    pub attempts: i64,
    pub elapsed_seconds: f64,
    /// Why, when the message was not submitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

async fn send_prompt(
    Call { app, target, ctx }: Call,
    args: SendPromptArgs,
) -> ToolResult<SendPromptResult> {
    let started = Instant::now();
    check_buffer_text(&args.text, "text", "send_prompt")?;
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let mut pace = Pace::new(&ctx, format!("pane {pane}"), started, effective);
    let finish = |outcome, attempts, note: Option<String>| SendPromptResult {
        pane_id: pane,
        outcome,
        attempts,
        elapsed_seconds: elapsed_seconds(started),
        note,
    };
    if app.is_caller(&target, pane) == Some(true) {
        let note = "this is the pane this MCP server runs in".to_owned();
        return Ok(finish(PromptOutcome::Refused, 0, Some(note)));
    }
    let mut watch = Watch::start(&target, pane).await?;
    if let Some((outcome, note)) = until_reading(&mut watch, &target, &mut pace).await {
        return Ok(finish(outcome, 0, Some(note)));
    }
    // A password prompt is the person's to answer, and a person typing
    // there has the floor (see `person`, which words the refusal for every
    // input tool: how the person reaches the pane, how to wait for them).
    match person::before_typing(&target, pane, false).await {
        Err(e) if e.kind == ErrorKind::Refused => {
            return Ok(finish(PromptOutcome::Refused, 0, Some(e.text())));
        }
        waited => waited?,
    };
    paste(&target, pane, &args.text).await?;
    if !args.submit {
        return Ok(finish(PromptOutcome::TypedNotSubmitted, 0, None));
    }
    // The paste is in: Enter and its checks take a few seconds at most,
    // whatever is left of the timeout; a cancel stops them.
    let submitting = async {
        settle(&mut watch).await;
        for attempt in 1..=ATTEMPTS {
            let before = watch.end();
            target
                .run(Command::new("send-keys").target(pane).arg("Enter"))
                .await?;
            if printed_after(&mut watch, before).await {
                return Ok(Some(attempt));
            }
        }
        ToolResult::Ok(None)
    };
    let submitted = tokio::select! {
        done = submitting => done?,
        _ = ctx.cancel.cancelled() => None,
    };
    if let Some(attempts) = submitted {
        return Ok(finish(PromptOutcome::Submitted, attempts, None));
    }
    let note = format!(
        "the text is in the pane but {ATTEMPTS} Enters drew no output: look with snapshot_pane"
    );
    Ok(finish(
        PromptOutcome::TypedNotSubmitted,
        ATTEMPTS,
        Some(note),
    ))
}

/// Waits until the pane's program reads its terminal (at a prompt or
/// waiting for input, or for a password, which [`person::before_typing`]
/// then refuses); `Some` when it will not: an ended process, or the
/// deadline. Where the
/// process cannot be observed (a remote host, no `/proc`), it is taken as
/// reading.
async fn until_reading(
    watch: &mut Watch,
    target: &Target,
    pace: &mut Pace,
) -> Option<(PromptOutcome, String)> {
    if target.hub.local_socket().is_none() || watch.pid == 0 || !cfg!(target_os = "linux") {
        return None;
    }
    let mut prober = Prober::new(watch.pid);
    loop {
        match prober.probe().activity {
            Activity::Prompt | Activity::Input | Activity::Secret => return None,
            Activity::Exited => {
                return Some((PromptOutcome::NotReady, "the pane's process exited".into()));
            }
            Activity::Running => {}
        }
        let changed = watch.changed(READY_EVERY);
        if let Woke::Deadline | Woke::Cancelled = pace.sleep(changed).await {
            let why = "the program was not reading its terminal within the timeout";
            return Some((PromptOutcome::NotReady, why.into()));
        }
    }
}

/// Pastes `text` into `pane` through a buffer of its own, bracketed when
/// the program asked for bracketed paste; the buffer is deleted.
async fn paste(target: &Target, pane: PaneId, text: &str) -> ToolResult<()> {
    let name = format!("libtmux_mcp_{}_prompt", uuid::Uuid::new_v4().simple());
    let load = Command::new("set-buffer")
        .opt("-b", &name)
        .flag("--")
        .arg(text);
    target.run(load).await?;
    let put = Command::new("paste-buffer")
        .flag("-p")
        .flag("-d")
        .opt("-b", &name)
        .target(pane);
    if let Err(e) = target.run(put).await {
        let _ = target
            .run(Command::new("delete-buffer").opt("-b", &name))
            .await;
        return Err(e);
    }
    Ok(())
}

/// Waits until the pane has printed nothing for [`SETTLE`] (the program
/// has taken the paste), at most [`SETTLE_BOUND`].
async fn settle(watch: &mut Watch) {
    let bound = tokio::time::Instant::now() + SETTLE_BOUND;
    while tokio::time::Instant::now() < bound && watch.changed(SETTLE).await {}
}

/// Did the pane print anything past `before` within [`VERIFY`]?
async fn printed_after(watch: &mut Watch, before: u64) -> bool {
    let bound = tokio::time::Instant::now() + VERIFY;
    while watch.end() <= before {
        let left = bound.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() || !watch.changed(left).await {
            return watch.end() > before;
        }
    }
    true
}
