//! Input into a pane: the one place that builds `send-keys` or
//! `paste-buffer` for text (copy mode's `-X` commands and `-R` aside).
//!
//! An input goes out only with what [`person::before_typing`] returned for
//! its pane ([`Waited`]: the person's floor kept, a password prompt
//! refused), so a new input tool cannot skip those checks. Each input
//! leaves an [`InputMark`]: where the pane stood just before, in this
//! process's recording and in tmux's terms, read in the same queue run as
//! the input (the reads are queued ahead of it on the command client), so
//! a wait `since: "input"` reads from there at no extra round trip.

use crate::drive::person::{self, Waited};
use crate::drive::{Target, ToolResult};
use crate::panes::registry::InputMark;
use crate::tmux::format::Schema;
use crate::tmux::history::{self, Anchor};
use crate::tmux::hub::Hub;
use crate::tmux::{Command, PaneId, TmuxError};

/// What goes into a pane.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// Key names as `send-keys` reads them (`C-c`, `Up`), or text typed
    /// as is (`literal`).
    Keys { keys: &'a str, literal: bool },
    /// The Enter key.
    Enter,
    /// A line typed as is and run: its text and `\r` (the byte Enter
    /// sends) in one command.
    Line(&'a str),
    /// Text pasted through a buffer of its own, deleted once pasted;
    /// bracketed (`paste-buffer -p`) when the program asked for it.
    Text { text: &'a str, bracketed: bool },
    /// The paste buffer `name`, kept.
    Buffer { name: &'a str, bracketed: bool },
}

impl Input<'_> {
    /// The command that delivers it to `pane` (a [`Input::Text`] is
    /// pasted from `buffer`).
    fn command(self, pane: PaneId, buffer: &str) -> Command {
        let keys = Command::new("send-keys").target(pane);
        match self {
            Input::Keys {
                keys: text,
                literal,
            } => {
                let keys = if literal { keys.flag("-l") } else { keys };
                keys.flag("--").arg(text)
            }
            Input::Enter => keys.arg("Enter"),
            Input::Line(line) => keys.flag("-l").flag("--").arg(format!("{line}\r")),
            Input::Text { bracketed, .. } => paste(pane, buffer, bracketed, true),
            Input::Buffer { name, bracketed } => paste(pane, name, bracketed, false),
        }
    }

    /// Keys, which a mode's bindings read (a paste is not).
    fn is_keys(self) -> bool {
        matches!(self, Input::Keys { .. } | Input::Enter | Input::Line(_))
    }
}

/// `paste-buffer [-p] [-d] -b buffer -t pane`.
fn paste(pane: PaneId, buffer: &str, bracketed: bool, delete: bool) -> Command {
    let paste = Command::new("paste-buffer");
    let paste = if bracketed { paste.flag("-p") } else { paste };
    let paste = if delete { paste.flag("-d") } else { paste };
    paste.opt("-b", buffer).target(pane)
}

/// Sends `input` to the pane `cleared` was checked for, marking where the
/// pane stood just before.
pub async fn send(target: &Target, cleared: &Waited, input: Input<'_>) -> Result<(), TmuxError> {
    let pane = cleared.pane();
    let Input::Text { text, .. } = input else {
        return marked(target, pane, input, input.command(pane, "")).await;
    };
    let name = format!("libtmux_mcp_{}_paste", uuid::Uuid::new_v4().simple());
    let load = Command::new("set-buffer")
        .opt("-b", &name)
        .flag("--")
        .arg(text);
    target.hub.run(&load).await?;
    let pasted = marked(target, pane, input, input.command(pane, &name)).await;
    if pasted.is_err() {
        // `-d` did not run: the buffer must not outlive the call.
        let _ = delete_buffer(&target.hub, &name).await;
    }
    pasted
}

/// Deletes the paste buffer `name` and no other. Where tmux would delete
/// the newest buffer in place of a missing one
/// ([`Features::delete_takes_newest`]), `save-buffer` to `/dev/null` runs
/// first in the same list: it fails on a missing name, and tmux then drops
/// the delete.
///
/// [`Features::delete_takes_newest`]: crate::tmux::version::Features::delete_takes_newest
pub async fn delete_buffer(hub: &Hub, name: &str) -> Result<(), TmuxError> {
    let delete = Command::new("delete-buffer").opt("-b", name);
    if !hub.features().await.delete_takes_newest {
        return hub.run(&delete).await.map(drop);
    }
    let exists = Command::new("save-buffer").opt("-b", name).arg("/dev/null");
    hub.run_oneshot_list(&[exists, delete]).await.map(drop)
}

/// Runs `command`, the delivery of `input`, after recording where `pane`
/// stands ([`InputMark`]); a pane tmux does not answer for keeps only
/// what the recording says.
async fn marked(
    target: &Target,
    pane: PaneId,
    input: Input<'_>,
    command: Command,
) -> Result<(), TmuxError> {
    let hub = &target.hub;
    let ring = hub.panes().end_of(pane);
    let rows = Command::new("display-message")
        .flag("-p")
        .target(pane)
        .arg(STANDING.template());
    // The visible screen, from its top row.
    let screen = Command::new("capture-pane")
        .flag("-p")
        .flag("-J")
        .opt("-S", "0")
        .target(pane);
    let mut replies = hub.run_together(&[rows, screen, command]).await.into_iter();
    let (rows, screen, sent) = (replies.next(), replies.next(), replies.next());
    let standing = match &rows {
        Some(Ok(rows)) => STANDING.parse(rows).into_iter().next(),
        _ => None,
    };
    if standing.as_ref().is_some_and(|s| s.in_mode) && input.is_keys() {
        hub.retire_commands();
    }
    let tmux = match (standing, screen) {
        (Some(standing), Some(Ok(screen))) => standing.anchor(&screen),
        _ => None,
    };
    hub.panes().record_input(pane, InputMark { ring, tmux });
    sent.unwrap_or(Err(TmuxError::NotSent)).map(drop)
}

/// Where a pane stands as tmux has it, just before an input.
#[derive(Default)]
struct Standing {
    server: Option<u32>,
    pid: Option<u32>,
    history: Option<u64>,
    cursor_y: Option<u64>,
    width: Option<usize>,
    /// In a mode (copy mode, a chooser): keys go to its bindings.
    in_mode: bool,
}

const STANDING: Schema<Standing> = Schema(&[
    ("pid", |s, v| s.server = v.parse().ok()),
    ("pane_pid", |s, v| s.pid = v.parse().ok()),
    ("history_size", |s, v| s.history = v.parse().ok()),
    ("cursor_y", |s, v| s.cursor_y = v.parse().ok()),
    ("pane_width", |s, v| s.width = v.parse().ok()),
    ("pane_in_mode", |s, v| s.in_mode = !v.is_empty() && v != "0"),
]);

impl Standing {
    /// The tmux half of an [`InputMark`]: the server, the pane's process
    /// and the last line above the cursor on `screen` (read with it);
    /// `None` on any doubt.
    fn anchor(&self, screen: &[Vec<u8>]) -> Option<(u32, u32, Anchor)> {
        let (history, cursor_y) = (self.history?, self.cursor_y?);
        let lines = history::lines(screen, history, self.width?);
        let at = history::before_cursor(&lines, history, cursor_y);
        Some((self.server?, self.pid?, at))
    }
}

/// How [`type_keys`] delivers text.
#[derive(Clone, Copy, Debug)]
pub struct KeyOptions {
    pub enter: bool,
    pub literal: bool,
    pub suppress_history: bool,
}

/// Keys that give up on a prompt rather than answer it: they may go to a
/// pane that asks for a password (nothing secret in them).
const GIVE_UP: &[&str] = &["C-c", "C-d", "C-z", "C-\\", "Escape"];

/// Types `keys` into `pane` (send_keys and send_keys_batch): `send-keys
/// [-l]` with a leading space when suppressing history, then a separate
/// Enter when asked. First what the person is owed
/// ([`person::before_typing`]), except that a lone key that gives up
/// ([`GIVE_UP`]) may go to a password prompt; how long that waited.
pub async fn type_keys(
    target: &Target,
    pane: PaneId,
    keys: &str,
    how: KeyOptions,
) -> ToolResult<Waited> {
    let text = if how.suppress_history {
        format!(" {keys}")
    } else {
        keys.to_owned()
    };
    if text.is_empty() && !how.enter {
        // Nothing to type: nothing anyone is owed.
        return Ok(Waited::at_once(pane));
    }
    let gives_up = !how.literal && !how.enter && !how.suppress_history && GIVE_UP.contains(&keys);
    let cleared = person::before_typing(target, pane, gives_up).await?;
    if !text.is_empty() {
        let keys = Input::Keys {
            keys: &text,
            literal: how.literal,
        };
        send(target, &cleared, keys).await?;
    }
    if how.enter {
        send(target, &cleared, Input::Enter).await?;
    }
    Ok(cleared)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record tmux prints for `fields` (`␞` between, `␟` after).
    fn standing(fields: &str) -> Option<Standing> {
        let reply = fields.replace(' ', "\u{241E}") + "\u{241F}";
        STANDING.parse(&[reply.into_bytes()]).into_iter().next()
    }

    #[test]
    fn the_tmux_half_of_an_input_mark_is_the_line_above_the_cursor() {
        let screen: Vec<Vec<u8>> = vec![b"$ make".to_vec(), b"done".to_vec(), b"$ ".to_vec()];
        let s = standing("900 77 40 2 80 0").unwrap();
        assert!(!s.in_mode);
        let (server, pid, at) = s.anchor(&screen).unwrap();
        assert_eq!((server, pid), (900, 77));
        assert_eq!(at, Anchor::new(41, "done"));
        assert!(standing("900 77 40 2 80 1").unwrap().in_mode);
        for junk in ["900 77 40 2  0", "900 x 40 2 80 0", "99999999999 1 1 1 1 0"] {
            let s = standing(junk).unwrap_or_default();
            assert_eq!(s.anchor(&screen), None, "{junk:?}");
        }
    }

    #[test]
    fn each_input_is_one_command_to_its_pane() {
        let pane = PaneId(4);
        let line = |input: Input| {
            String::from_utf8(input.command(pane, "buf").to_line().unwrap()).unwrap()
        };
        let keys = Input::Keys {
            keys: "C-c",
            literal: false,
        };
        assert_eq!(line(keys), "send-keys -t '%4' -- 'C-c'");
        let text = Input::Keys {
            keys: "-n x",
            literal: true,
        };
        assert_eq!(line(text), "send-keys -t '%4' -l -- '-n x'");
        assert_eq!(line(Input::Enter), "send-keys -t '%4' -- 'Enter'");
        assert!(line(Input::Line("ls")).starts_with("send-keys -t '%4' -l -- 'ls"));
        let pasted = Input::Text {
            text: "x",
            bracketed: true,
        };
        assert_eq!(line(pasted), "paste-buffer -p -d -b 'buf' -t '%4'");
        let kept = Input::Buffer {
            name: "mine",
            bracketed: false,
        };
        assert_eq!(line(kept), "paste-buffer -b 'mine' -t '%4'");
        assert!(Input::Enter.is_keys() && !kept.is_keys());
    }
}
