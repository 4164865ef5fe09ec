//! run_command's cursor for a command that printed nothing, without a
//! round trip after the command's end. The wrapper ([`typed::wrapped`])
//! writes the command over the line it was typed on, after the prompt; so
//! when the command printed nothing and the prompt after it stays on one
//! row, the line above the cursor (the anchor `read_back::anchor_at` would
//! read) is that line: the prompt as the input mark read it, then the
//! command ([`silent_anchor`]).
//!
//! Each prediction is checked against tmux once the call has answered
//! ([`check`]): its reads are queued ahead of anything sent after the
//! answer, so they see the pane as the read they replace would have. Where
//! tmux disagrees (a line editor that redraws the line its own way), a
//! cursor read later in this process takes tmux's anchor ([`settled`]);
//! one read by another process keeps the prediction, and reading on from
//! it then reports the lines it cannot place as missed.
//!
//! [`typed::wrapped`]: super::typed::wrapped

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;
use std::task::Poll;
use std::time::Duration;

use tokio::sync::watch;

use crate::drive::Target;
use crate::drive::read_back;
use crate::panes::anchor::Anchor;
use crate::panes::registry::TypedOn;
use crate::tmux::PaneId;

/// The anchor of the cursor of a command that printed nothing, typed on
/// `on` by the wrapper sized for the cursor at column `typed_at` of a pane
/// `width` cells wide; `None` when the line cannot be told: text right of
/// the cursor, a prompt or command that is not plain ASCII (a wide
/// character takes two cells), a backslash (the wrapper's `printf %b`
/// reads escapes), or a line that would wrap.
pub fn silent_anchor(on: &TypedOn, command: &str, typed_at: usize, width: usize) -> Option<Anchor> {
    let plain = command
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'\\');
    let prompt = on.text.is_ascii() && on.text.len() <= typed_at;
    let fits = typed_at + command.len() < width;
    if !(plain && prompt && fits && on.cursor_x == typed_at as u64) {
        return None;
    }
    Some(Anchor::new(
        on.row,
        &format!("{:typed_at$}{command}", on.text),
    ))
}

/// Whether `printed` (what the shell printed after the end marker: its
/// prompt) leaves the cursor on the row where it started: no line feed,
/// no index, no vertical move or scroll. Titles and colours are fine.
pub fn stays_on_row(printed: &[u8]) -> bool {
    let mut i = 0;
    while i < printed.len() {
        match printed[i] {
            b'\n' | 0x0b | 0x0c => return false,
            0x1b => match printed.get(i + 1) {
                // OSC: up to BEL or ST.
                Some(b']') => {
                    let rest = &printed[i + 2..];
                    let ends = |k: &usize| rest[*k] == 0x07 || rest[*k..].starts_with(b"\x1b\\");
                    let Some(end) = (0..rest.len()).find(ends) else {
                        return false;
                    };
                    i += 2 + end + if rest[end] == 0x07 { 1 } else { 2 };
                    continue;
                }
                Some(b'[') => {
                    let rest = &printed[i + 2..];
                    let Some(end) = rest.iter().position(|b| (0x40..=0x7e).contains(b)) else {
                        return false;
                    };
                    if b"ABEFHLMSTdfr".contains(&rest[end]) {
                        return false;
                    }
                    i += 2 + end + 1;
                    continue;
                }
                Some(b'D' | b'E' | b'M') | None => return false,
                Some(_) => i += 1,
            },
            _ => {}
        }
        i += 1;
    }
    true
}

/// Predictions being checked, and those tmux disagreed with, per tmux
/// server: at most [`KEPT`], the oldest forgotten first.
#[derive(Default)]
pub struct Predicted(Mutex<VecDeque<Check>>);

struct Check {
    pane: PaneId,
    predicted: Anchor,
    /// tmux's anchor, once read.
    tmux: watch::Receiver<Option<Anchor>>,
}

const KEPT: usize = 256;

impl Predicted {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Check>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn checking(&self, pane: PaneId, predicted: Anchor) -> watch::Sender<Option<Anchor>> {
        let (sender, tmux) = watch::channel(None);
        let mut checks = self.lock();
        checks.retain(|c| (c.pane, c.predicted) != (pane, predicted));
        if checks.len() >= KEPT {
            checks.pop_front();
        }
        checks.push_back(Check {
            pane,
            predicted,
            tmux,
        });
        sender
    }

    fn confirmed(&self, pane: PaneId, predicted: Anchor) {
        self.lock()
            .retain(|c| (c.pane, c.predicted) != (pane, predicted));
    }

    fn pending(&self, pane: PaneId, anchor: Anchor) -> Option<watch::Receiver<Option<Anchor>>> {
        let checks = self.lock();
        let check = checks
            .iter()
            .find(|c| (c.pane, c.predicted) == (pane, anchor))?;
        Some(check.tmux.clone())
    }
}

/// Checks `predicted`, the anchor of `pane`'s cursor, against tmux. The
/// reads are written to tmux on the command client before this returns;
/// their replies are awaited on a task of their own.
pub async fn check(target: &Target, pane: PaneId, height: usize, predicted: Anchor) {
    let server = target.server.clone();
    let sender = server.predicted.checking(pane, predicted);
    let shared = target.share();
    let mut read = Box::pin(async move {
        // A failed read leaves the prediction as it is (the sender dropped).
        if let Ok((_, tmux)) = read_back::anchor_at(&shared, pane, Some(height), None).await {
            let _ = sender.send(Some(tmux));
            if tmux == predicted {
                server.predicted.confirmed(pane, predicted);
            }
        }
    });
    // One poll queues the reads (the command client is attached: the
    // call's own input went through it); once they are written, anything
    // sent after the call's answer reaches tmux after them.
    let done = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx).is_ready())).await;
    if !done {
        target.server.tasks.spawn(read);
        target.hub.commands_written().await;
    }
}

/// `anchor` of a cursor for `pane`, as tmux has it: a prediction still
/// being checked is waited for (at most `limit`), one tmux disagreed with
/// is replaced by tmux's.
pub async fn settled(target: &Target, pane: PaneId, anchor: Anchor, limit: Duration) -> Anchor {
    let Some(mut tmux) = target.server.predicted.pending(pane, anchor) else {
        return anchor;
    };
    match tokio::time::timeout(limit, tmux.wait_for(Option::is_some)).await {
        Ok(Ok(read)) => read.unwrap_or(anchor),
        _ => anchor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn typed_on(text: &str, cursor_x: u64) -> TypedOn {
        TypedOn {
            row: 42,
            text: text.into(),
            cursor_x,
        }
    }

    #[test]
    fn a_silent_command_anchors_on_its_own_line() {
        let on = typed_on("$", 2);
        assert_eq!(
            silent_anchor(&on, "true", 2, 80),
            Some(Anchor::new(42, "$ true"))
        );
        let on = typed_on("user@host:~/src$", 17);
        assert_eq!(
            silent_anchor(&on, "cd build && make -s", 17, 80),
            Some(Anchor::new(42, "user@host:~/src$ cd build && make -s"))
        );
    }

    #[test]
    fn what_cannot_be_told_is_not_predicted() {
        let on = typed_on("$", 2);
        // The wrapper was sized for another column than the mark read.
        assert_eq!(silent_anchor(&on, "true", 3, 80), None);
        // Text right of the cursor (a right prompt, a half-typed line).
        assert_eq!(
            silent_anchor(&typed_on("$ ls      [main]", 2), "true", 2, 80),
            None
        );
        // Wide or non-ASCII prompts and commands; escapes printf would read.
        assert_eq!(silent_anchor(&typed_on("❯", 2), "true", 2, 80), None);
        assert_eq!(silent_anchor(&on, "echo é", 2, 80), None);
        assert_eq!(silent_anchor(&on, "printf 'a\\n'", 2, 80), None);
        assert_eq!(silent_anchor(&on, "a\tb", 2, 80), None);
        // A line that reaches the margin wraps.
        assert_eq!(silent_anchor(&on, &"x".repeat(78), 2, 80), None);
        assert!(silent_anchor(&on, &"x".repeat(77), 2, 80).is_some());
    }

    #[test]
    fn a_prompt_stays_on_its_row_unless_it_moves_down() {
        for stays in [
            &b"$ "[..],
            b"\x1b[1;32muser\x1b[0m$ ",
            b"\x1b]0;title\x07$ ",
            b"\x1b]133;A\x1b\\$ \x1b[K",
            // zsh's PROMPT_SP, then bracketed paste on.
            b"\x1b[7m%\x1b[27m     \r \r$ \x1b[?2004h",
            b"",
        ] {
            assert!(stays_on_row(stays), "{stays:?}");
        }
        for moves in [
            &b"user@host\r\n$ "[..],
            b"\x0b$ ",
            b"\x1b[1A$ ",
            b"\x1b[2;1H$ ",
            b"\x1bE$ ",
            b"\x1b]0;never ended",
            b"\x1b[",
            b"\x1b",
        ] {
            assert!(!stays_on_row(moves), "{moves:?}");
        }
    }

    #[tokio::test]
    async fn a_prediction_tmux_disagreed_with_is_replaced_in_this_process() {
        let checks = Arc::new(Predicted::default());
        let (right, wrong) = (Anchor::new(42, "$ true"), Anchor::new(43, "$ true"));
        let pane = PaneId(3);
        let sender = checks.checking(pane, wrong);
        let waiting = checks.pending(pane, wrong).unwrap();
        sender.send(Some(right)).unwrap();
        assert_eq!(*waiting.borrow(), Some(right));
        assert!(checks.pending(PaneId(4), wrong).is_none());
        // Confirmed predictions are forgotten; the store is bounded.
        let sender = checks.checking(pane, right);
        sender.send(Some(right)).unwrap();
        checks.confirmed(pane, right);
        assert!(checks.pending(pane, right).is_none());
        for row in 0..2 * KEPT as u64 {
            drop(checks.checking(pane, Anchor::new(row, "x")));
        }
        assert_eq!(checks.lock().len(), KEPT);
    }
}
