//! What a person left at the pane before the agent types a line into it
//! (issue 33): a mode, or a half-typed command.
//!
//! `run_command` types its line and Enter after whatever the prompt's line
//! holds, so a person's half-typed `ls -la # …` ran and the agent's
//! command never did. And keys sent to a pane in a mode (copy mode: a
//! person scrolling back) drive the mode, not the shell: a copy-mode key
//! that opens a prompt (`f`, `g`, `/`...) holds our control client's
//! command queue (see protocol/tmux-control.md, "Keys into a mode").
//! So before `run_command` types, and before `send_prompt` pastes, the
//! pane is read in one round trip (cursor, mode, visible screen) and the
//! input is refused, nothing typed, with `pane_in_mode` or
//! `line_not_empty` (the text named, bounded).
//!
//! Where the prompt ends on the cursor's line (tmux knows no prompt, and
//! a line read when nothing was recorded says nothing of who wrote it):
//! after the first prompt sign (`$ # % > ❯ »`) followed by a blank; with
//! none, a line whose text ends in a blank before the cursor is all prompt
//! (`➜  ~ `: prompts end so), and one whose text runs up to the cursor is
//! all typed (an empty `PS1`, or a person's `…#`). The text from the
//! prompt's end to the cursor is typed text, and so is text right at the
//! cursor (a person who moved back along their line); text after the
//! cursor past a blank gap is a right prompt (zsh `RPROMPT`). Not seen: a
//! half-typed line ending in a blank after a prompt with no sign (or an
//! empty one); a sign and blank typed after an empty prompt name only the
//! text after them. Falsely refused: a prompt with no sign that ends with
//! no blank (`host:~` with the cursor right after it). `send_keys` and
//! `paste_text` are not checked: they are how an agent edits a line on
//! purpose (`C-u`, completion, a word at a time).

use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::tmux::format::Schema;
use crate::tmux::history;
use crate::tmux::{Command, PaneId};

/// Characters that end a shell's (or a REPL's) prompt when a space or the
/// cursor follows them.
const PROMPT_SIGNS: &[char] = &['$', '#', '%', '>', '❯', '»'];

/// Most characters of the person's text a refusal repeats.
const NAMED_CHARS: usize = 60;

/// What the checks read of a pane: its cursor and width, and its mode.
#[derive(Default)]
struct LineAt {
    x: Option<usize>,
    y: Option<usize>,
    width: Option<usize>,
    in_mode: bool,
    mode: String,
}

const LINE_AT: Schema<LineAt> = Schema(&[
    ("cursor_x", |a, v| a.x = v.parse().ok()),
    ("cursor_y", |a, v| a.y = v.parse().ok()),
    ("pane_width", |a, v| a.width = v.parse().ok()),
    ("pane_in_mode", |a, v| a.in_mode = !v.is_empty() && v != "0"),
    ("pane_mode", |a, v| a.mode = v.into()),
]);

/// Refuses input into `pane` when it is in a mode, or (`line`: the input
/// is a line for a shell or REPL prompt) when the prompt's line holds text.
pub async fn check(target: &Target, pane: PaneId, line: bool) -> ToolResult<()> {
    let read = [
        Command::new("display-message")
            .flag("-p")
            .target(pane)
            .arg(LINE_AT.template()),
        // The visible screen, wrapped rows joined.
        Command::new("capture-pane")
            .flag("-p")
            .flag("-J")
            .opt("-S", "0")
            .target(pane),
    ];
    let mut replies = target.hub.run_together(&read).await.into_iter();
    let (Some(fields), Some(screen)) = (replies.next(), replies.next()) else {
        return Ok(());
    };
    let at = LINE_AT
        .parse(&fields?)
        .into_iter()
        .next()
        .unwrap_or_default();
    if at.in_mode {
        return Err(in_mode(pane, &at.mode));
    }
    let (Some(x), Some(y), Some(width)) = (at.x, at.y, at.width) else {
        return Ok(());
    };
    if !line {
        return Ok(());
    }
    let lines = history::lines(&screen?, 0, width);
    let Some(on) = lines.iter().rev().find(|l| l.row <= y as u64) else {
        return Ok(());
    };
    let cursor = (y - on.row as usize) * width + x;
    match typed_text(&on.text, cursor) {
        Some(text) => Err(not_empty(pane, &text)),
        None => Ok(()),
    }
}

/// The refusal of input into a pane in `mode`.
pub fn in_mode(pane: PaneId, mode: &str) -> ToolError {
    let mode = if mode.is_empty() { "a mode" } else { mode };
    ToolError::new(
        ErrorKind::PaneInMode,
        format!(
            "pane_in_mode: pane {pane} is in {mode} (a person scrolling back?): keys would drive the mode, not the program; nothing was typed."
        ),
    )
    .suggest(format!(
        "Ask the person, or try again once they leave it (list_panes shows pane_in_mode); exit_copy_mode(pane_id='{pane}') ends it for them."
    ))
}

fn not_empty(pane: PaneId, text: &str) -> ToolError {
    let count = text.chars().count();
    let named: String = text.chars().take(NAMED_CHARS).collect();
    let more = if count > NAMED_CHARS { "…" } else { "" };
    ToolError::new(
        ErrorKind::LineNotEmpty,
        format!(
            "line_not_empty: the prompt's line in pane {pane} already holds `{named}{more}` ({count} characters, a person's half-typed command?); typing now would run it with the agent's: nothing was typed."
        ),
    )
    .suggest(format!(
        "Ask the person to finish or clear it, or wait; send_keys(pane_id='{pane}', keys='C-u', enter=false) clears it (the text is lost)."
    ))
}

/// The text typed at the prompt of `line` (a logical line, trailing blanks
/// trimmed) with the cursor `cursor` characters in: see the module docs.
/// `None` when nothing is typed.
pub fn typed_text(line: &str, cursor: usize) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let split = cursor.min(chars.len());
    let (before, after) = chars.split_at(split);
    // A cursor past the text stands after blanks the capture trimmed.
    let blank_before_cursor = cursor > chars.len() || before.last() == Some(&' ');
    let signed = (0..before.len()).find(|&i| {
        let spaced = before.get(i + 1).map_or(blank_before_cursor, |&n| n == ' ');
        PROMPT_SIGNS.contains(&before[i]) && spaced
    });
    let prompt_end = match signed {
        Some(i) => i + 1,
        None if blank_before_cursor => before.len(),
        None => 0,
    };
    let mut typed: String = before[prompt_end..].iter().collect();
    if after.first().is_some_and(|c| *c != ' ') {
        // Up to a blank gap: what lies past one is a right prompt.
        let gap = after.windows(2).position(|w| w == [' ', ' ']);
        typed.extend(&after[..gap.unwrap_or(after.len())]);
    }
    let typed = typed.trim();
    (!typed.is_empty()).then(|| typed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::typed_text;

    #[test]
    fn an_empty_prompt_holds_nothing_typed() {
        // Trailing blanks are trimmed from captured lines: the cursor is
        // past the text.
        for prompt in [
            "bash-5.2$",
            "$",
            "user@host:~/src$",
            "root@host:/#",
            "host%",
            "user@host ~>",
            "~/p on main ❯",
            ">>>",
            "(venv) [user@host dir]$",
            "50%done; bash-5.2$",
            "",
        ] {
            let cursor = prompt.chars().count() + 1;
            assert_eq!(typed_text(prompt, cursor), None, "{prompt:?}");
        }
    }

    #[test]
    fn a_half_typed_line_is_named_whatever_it_holds() {
        let line = "bash-5.2$ echo PERSON-HALF-TYPED-THIS #";
        assert_eq!(
            typed_text(line, line.len()).as_deref(),
            Some("echo PERSON-HALF-TYPED-THIS #")
        );
        assert_eq!(
            typed_text("$ ls -la > x", 12).as_deref(),
            Some("ls -la > x")
        );
        assert_eq!(
            typed_text(">>> import os", 13).as_deref(),
            Some("import os")
        );
    }

    #[test]
    fn text_at_the_cursor_is_typed_but_a_right_prompt_is_not() {
        // The person typed `ls -la` and went back to its start.
        assert_eq!(typed_text("$ ls -la", 2).as_deref(), Some("ls -la"));
        // zsh's RPROMPT, past a blank gap.
        let rprompt = format!("host% {}[0]", " ".repeat(40));
        assert_eq!(typed_text(&rprompt, 6), None);
        let both = format!("host% make{}[0]", " ".repeat(40));
        assert_eq!(typed_text(&both, 8).as_deref(), Some("make"));
    }

    #[test]
    fn with_no_sign_a_blank_before_the_cursor_tells_prompt_from_text() {
        // `➜  ~ ` (trimmed), the cursor after its blank: a prompt.
        assert_eq!(typed_text("➜  ~", 5), None);
        // An empty PS1: the person's `…#` runs up to the cursor.
        let line = "echo PERSON-HALF-TYPED-THIS #";
        assert_eq!(typed_text(line, line.len()).as_deref(), Some(line));
        assert_eq!(typed_text("", 0), None);
    }
}
