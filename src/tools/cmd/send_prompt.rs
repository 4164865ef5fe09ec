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
//! paste, and each Enter is judged by what it changed within [`VERIFY`]
//! (see [`Typed`]); one that did not take is sent again, at most
//! [`ATTEMPTS`] times in all.
//!
//! Output after Enter proves nothing by itself: an input box that re-draws
//! itself after every key it reads prints its box, text and all, for an
//! Enter it dropped or took as a newline. So the row the end of the
//! message was drawn on is found before Enter, and Enter took when:
//!
//! - that row's text is gone from the screen (the box emptied), or
//! - the program turned bracketed paste off (`ESC [?2004l`): its line
//!   editor gave the line up, as bash, zsh and readline do before they
//!   run it.
//!
//! A program that does not show the end of the message (a box that shows
//! `[pasted 200 lines]`) cannot be read that way: any output after Enter
//! counts there, as nothing better can be seen.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::drive::input::{self, Input};
use crate::drive::pace::{Pace, Woke, elapsed_seconds};
use crate::drive::person;
use crate::drive::probe::probe_pane;
use crate::drive::shell::{line, state};
use crate::drive::watch::Watch;
use crate::process::{Activity, Prober};
use crate::tmux::{Command, PaneId};
use crate::tools::shared::args::{check_buffer_text, seconds, yes};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, INPUT, Target, ToolDef, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "send_prompt",
            Toolset::Execute,
            "Send Prompt",
            "Paste a message into a pane's program (agent CLI, REPL; a shell command: run_command) as one paste, then Enter once it took it, checked and retried.",
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
/// How long after Enter the program has to show that it took it.
const VERIFY: Duration = Duration::from_millis(700);
/// Quiet after Enter's output before the screen is read (a re-draw in
/// several writes is judged whole).
const REDRAWN: Duration = Duration::from_millis(60);
/// How much of the end of the message is looked for on the screen.
const TAIL_CHARS: usize = 12;
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
    let cleared = match person::before_typing(&target, pane, false).await {
        Err(e) if e.kind == ErrorKind::Refused => {
            return Ok(finish(PromptOutcome::Refused, 0, Some(e.text())));
        }
        cleared => cleared?,
    };
    // Not into a mode; at a shell's prompt, not after a person's text.
    let shell = state::is_shell(&watch.command) && !watch.alternate_at_start;
    line::check(&target, pane, shell).await?;
    let text = Input::Text {
        text: &args.text,
        bracketed: true,
    };
    input::send(&target, &cleared, text).await?;
    if !args.submit {
        return Ok(finish(PromptOutcome::TypedNotSubmitted, 0, None));
    }
    // The paste is in: Enter and its checks take a few seconds at most,
    // whatever is left of the timeout; a cancel stops them.
    let submitting = async {
        settle(&mut watch).await;
        let pasted = screen(&target, pane).await?;
        let mut typed = Typed::find(&args.text, &pasted);
        for attempt in 1..=ATTEMPTS {
            let before = watch.follower().end();
            input::send(&target, &cleared, Input::Enter).await?;
            let judge = (args.text.as_str(), &mut typed, &pasted);
            if took(&mut watch, &target, judge, before).await? {
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
        "the text is in the pane but {ATTEMPTS} Enters did not submit it: look with snapshot_pane"
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
/// process cannot be observed (a remote host), or the probe cannot see
/// input (hidden wait channels, as on macOS), it is taken as reading.
async fn until_reading(
    watch: &mut Watch,
    target: &Target,
    pace: &mut Pace,
) -> Option<(PromptOutcome, String)> {
    if target.hub.local_socket().is_none() || watch.pid == 0 {
        return None;
    }
    let mut prober = Some(Prober::new(watch.pid).with_tty(&watch.tty));
    loop {
        let probe = probe_pane(&mut prober).await;
        match probe.activity {
            Activity::Prompt | Activity::Input | Activity::Secret => return None,
            Activity::Exited => {
                return Some((PromptOutcome::NotReady, "the pane's process exited".into()));
            }
            Activity::Running if !probe.observable.contains(&"input") => return None,
            Activity::Running => {}
        }
        let changed = watch.changed(READY_EVERY);
        if let Woke::Deadline | Woke::Cancelled = pace.sleep(changed).await {
            let why = "the program was not reading its terminal within the timeout";
            return Some((PromptOutcome::NotReady, why.into()));
        }
    }
}

/// Waits until the pane has printed nothing for [`SETTLE`] (the program
/// has taken the paste), at most [`SETTLE_BOUND`].
async fn settle(watch: &mut Watch) {
    let bound = tokio::time::Instant::now() + SETTLE_BOUND;
    while tokio::time::Instant::now() < bound && watch.changed(SETTLE).await {}
}

/// A pane's screen: its rows (without the spaces tmux pads them with)
/// and the cursor's row.
#[derive(Debug, Default)]
struct PromptScreen {
    rows: Vec<String>,
    cursor_y: usize,
}

/// Reads `pane`'s screen: its rows and cursor in one go.
async fn screen(target: &Target, pane: PaneId) -> ToolResult<PromptScreen> {
    let commands = [
        Command::new("capture-pane").flag("-p").target(pane),
        Command::new("display-message")
            .flag("-p")
            .target(pane)
            .arg("#{cursor_y}"),
    ];
    let mut replies = target.hub.run_together(&commands).await.into_iter();
    let (Some(rows), Some(cursor)) = (replies.next(), replies.next()) else {
        unreachable!("two commands, two replies")
    };
    let rows = rows?
        .iter()
        .map(|r| String::from_utf8_lossy(r).trim_end().to_owned())
        .collect();
    let cursor = cursor?;
    let cursor_y = cursor
        .first()
        .and_then(|l| std::str::from_utf8(l).ok()?.trim().parse().ok())
        .unwrap_or(0);
    Ok(PromptScreen { rows, cursor_y })
}

/// Where the message was drawn before Enter: the row holding the last
/// [`TAIL_CHARS`] characters of its last line (of those that do, the
/// lowest at or above the cursor), how many rows read the same, and the
/// prompt its first line was typed after.
#[derive(Debug, PartialEq)]
struct Typed {
    tail: String,
    row: String,
    /// Where that row is on the screen, and where the tail ends in it.
    at: usize,
    tail_end: usize,
    copies: usize,
    /// What the row the message's first line is on shows before it (`>>>`,
    /// `$`), when not blank.
    prompt: Option<String>,
    /// That row, and where the first line starts in it.
    head_at: Option<(usize, usize)>,
}

impl Typed {
    /// `None` when the screen does not show the end of `text`.
    fn find(text: &str, screen: &PromptScreen) -> Option<Typed> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let (first, last) = (lines.next()?, lines.next_back());
        let last = last.unwrap_or(first);
        let start = last
            .char_indices()
            .rev()
            .nth(TAIL_CHARS - 1)
            .map_or(0, |(i, _)| i);
        let tail = &last[start..];
        let end = lowest(&screen.rows, screen.cursor_y, tail)?;
        let row = screen.rows[end].clone();
        let tail_end = row.rfind(tail)? + tail.len();
        let copies = screen.rows.iter().filter(|r| **r == row).count();
        let head: String = first.chars().take(TAIL_CHARS).collect();
        let head_at =
            lowest(&screen.rows, end, &head).and_then(|y| Some((y, screen.rows[y].find(&head)?)));
        let prompt = head_at
            .map(|(y, x)| screen.rows[y][..x].trim_end().to_owned())
            .filter(|p| !p.trim().is_empty());
        Some(Typed {
            tail: tail.to_owned(),
            row,
            at: end,
            tail_end,
            copies,
            prompt,
            head_at,
        })
    }

    /// Whether the message's first line is drawn in a line `before` showed
    /// empty (the same text before it, nothing readable after): an input
    /// line that now holds the message.
    fn in_line_empty_before(&self, now: &PromptScreen, before: &PromptScreen) -> bool {
        let Some((y, x)) = self.head_at else {
            return false;
        };
        let (Some(row), Some(was)) = (now.rows.get(y), before.rows.get(y)) else {
            return false;
        };
        was.get(..x) == row.get(..x) && !was[x.min(was.len())..].chars().any(char::is_alphanumeric)
    }

    /// Whether `screen`, after Enter, shows that the program took the
    /// message: the row its end was on is gone (the input area emptied),
    /// unless the same row still reads the same up to the message's end
    /// (a box that took Enter as a newline, or marks it after the text),
    /// or the cursor is on a fresh prompt below it (a REPL or shell ran
    /// it and asks again).
    fn taken(&self, screen: &PromptScreen) -> bool {
        let copies = screen.rows.iter().filter(|r| **r == self.row).count();
        let kept = |r: &String| r.get(..self.tail_end) == self.row.get(..self.tail_end);
        if copies < self.copies && !screen.rows.get(self.at).is_some_and(kept) {
            return true;
        }
        let (Some(prompt), Some(at)) = (&self.prompt, screen.rows.get(screen.cursor_y)) else {
            return false;
        };
        let below = screen.rows[..screen.cursor_y].contains(&self.row);
        below && at.starts_with(prompt.as_str()) && !at.contains(&self.tail)
    }
}

/// The row holding `text`: the lowest at or above row `at`, else the
/// lowest of all.
fn lowest(rows: &[String], at: usize, text: &str) -> Option<usize> {
    let holding = |(_, r): &(usize, &String)| r.contains(text);
    let mut all = rows.iter().enumerate().filter(holding);
    all.clone()
        .rfind(|(y, _)| *y <= at)
        .or_else(|| all.next_back())
        .map(|(y, _)| y)
}

/// Whether the Enter sent after `before` took, within [`VERIFY`]: the
/// program left its line editor, or the screen, once quiet, no longer
/// shows the message's end where it was typed (see the module docs).
/// Without `typed` (the screen did not show the message before Enter:
/// a program that draws a paste only at its next key), any output counts,
/// unless the message now shows in an input line that was empty
/// (`pasted`, the screen then): Enter did not take it, and that is where
/// the next attempt is judged.
async fn took(
    watch: &mut Watch,
    target: &Target,
    (text, typed, pasted): (&str, &mut Option<Typed>, &PromptScreen),
    before: u64,
) -> ToolResult<bool> {
    let bound = tokio::time::Instant::now() + VERIFY;
    let mut seen = before;
    let mut cursor = before;
    let mut scan = PasteOff::default();
    loop {
        // Output past what was judged, or the bound.
        while watch.follower().end() <= seen {
            let left = bound.saturating_duration_since(tokio::time::Instant::now());
            let woke = !left.is_zero() && watch.changed(left).await;
            if !woke && watch.follower().end() <= seen {
                return Ok(false);
            }
        }
        while tokio::time::Instant::now() < bound && watch.changed(REDRAWN).await {}
        seen = watch.follower().end();
        let Some(judged) = typed.as_ref() else {
            let now = screen(target, watch.id).await?;
            let shown = Typed::find(text, &now).filter(|t| t.in_line_empty_before(&now, pasted));
            if shown.is_none() {
                return Ok(true);
            }
            // Judged from here on as if it had shown before Enter.
            *typed = shown;
            continue;
        };
        watch
            .follower()
            .read_raw(&mut cursor, &mut |_, chunk, _| scan.feed(chunk));
        if scan.seen || judged.taken(&screen(target, watch.id).await?) {
            return Ok(true);
        }
    }
}

/// Finds `ESC [?2004l` (bracketed paste off) in output read in chunks.
#[derive(Default)]
struct PasteOff {
    carry: Vec<u8>,
    seen: bool,
}

impl PasteOff {
    const OFF: &'static [u8] = b"\x1b[?2004l";

    fn feed(&mut self, chunk: &[u8]) {
        if self.seen {
            return;
        }
        self.carry.extend_from_slice(chunk);
        self.seen = memchr::memmem::find(&self.carry, Self::OFF).is_some();
        let keep = self.carry.len().saturating_sub(Self::OFF.len() - 1);
        self.carry.drain(..keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: &[&str], cursor_y: usize) -> PromptScreen {
        PromptScreen {
            rows: rows.iter().map(|r| r.to_string()).collect(),
            cursor_y,
        }
    }

    const BOX: &[&str] = &[
        "+----------------+",
        "| > first line   |",
        "|   third: done  |",
        "+----------------+",
        "status: ready",
    ];

    #[test]
    fn a_box_that_redraws_the_text_did_not_take_it() {
        let typed = Typed::find("first line\nthird: done\n", &screen(BOX, 2)).unwrap();
        assert_eq!(typed.row, "|   third: done  |");
        assert_eq!(typed.prompt.as_deref(), Some("| >"));
        // Dropped: the same box, a new status.
        let mut dropped = BOX.to_vec();
        dropped[4] = "status: enter ignored";
        assert!(!typed.taken(&screen(&dropped, 2)));
        // Taken as a newline: the box grew below the text.
        let grown = [BOX[0], BOX[1], BOX[2], "|                |", BOX[3], BOX[4]];
        assert!(!typed.taken(&screen(&grown, 3)));
        // Taken as a newline, marked after the text on its row.
        let marked = [BOX[0], BOX[1], "|   third: done↵ |", BOX[3], BOX[4]];
        assert!(!typed.taken(&screen(&marked, 4)));
        // Taken: the box is empty, the message above it.
        let sent = [
            "sent: first line third: done",
            BOX[0],
            "| >              |",
            BOX[3],
        ];
        assert!(typed.taken(&screen(&sent, 2)));
    }

    #[test]
    fn a_paste_drawn_only_after_enter_is_in_the_line_that_was_empty() {
        let empty = [
            "+-------+",
            "| >              |",
            "+-------+",
            "status: ready",
        ];
        let after = [
            "+-------+",
            "| > hello agent↵  |",
            "+-------+",
            "status: ignored",
        ];
        let now = screen(&after, 3);
        let typed = Typed::find("hello agent", &now).unwrap();
        assert!(typed.in_line_empty_before(&now, &screen(&empty, 3)));
        // Where the row held other text, it is not an input line emptied.
        let busy = [
            "+-------+",
            "| > older words  |",
            "+-------+",
            "status: ready",
        ];
        assert!(!typed.in_line_empty_before(&now, &screen(&busy, 3)));
        let echoed = ["sent:", "> hello agent", "| >              |"];
        let now = screen(&echoed, 2);
        let typed = Typed::find("hello agent", &now).unwrap();
        assert!(!typed.in_line_empty_before(&now, &screen(&empty, 3)));
    }

    #[test]
    fn a_repl_that_ran_the_line_asks_again_below_it() {
        let before = [">>> x = 6 * 7", ">>> print(f'sp-{x}')"];
        let typed = Typed::find("x = 6 * 7\nprint(f'sp-{x}')", &screen(&before, 1)).unwrap();
        assert_eq!(typed.prompt.as_deref(), Some(">>>"));
        let ran = [before[0], before[1], "sp-42", ">>>"];
        assert!(typed.taken(&screen(&ran, 3)));
        // The cursor on a continuation row is not a fresh prompt.
        let more = [before[0], before[1], "..."];
        assert!(!typed.taken(&screen(&more, 2)));
    }

    #[test]
    fn a_message_the_screen_does_not_show_cannot_be_read_there() {
        let shown = screen(&["> ready", "[draft: 34 bytes]"], 2);
        assert_eq!(Typed::find("first line\nthird: done", &shown), None);
        assert_eq!(Typed::find("\n \n", &shown), None);
    }

    #[test]
    fn bracketed_paste_turned_off_is_seen_across_chunks() {
        let mut scan = PasteOff::default();
        scan.feed(b"\r\n\x1b[?20");
        assert!(!scan.seen);
        scan.feed(b"04l\rsp-42\r\n");
        assert!(scan.seen);
        let mut on = PasteOff::default();
        on.feed(b"\x1b[?2004h$ ");
        assert!(!on.seen);
    }
}
