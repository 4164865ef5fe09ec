//! Where `%output` lands: a control client's events, applied to the pane
//! recordings of its server.
//!
//! The connection's reader hands every event to its [`Observer`] in stream
//! order; for a tmux server that observer is the server's [`Panes`]. This
//! file is the one place that knows which events matter to a recording:
//! output is appended, a pause is a gap, and anything that may have closed
//! a pane makes every waiter check its own.

use std::sync::Arc;

use super::connection::Observer;
use super::control::Event;
use crate::ids::{PaneId, SessionId};
use crate::panes::registry::Panes;

/// What the command client sees that matters to the recordings: only the
/// structural events. It streams no pane (it is attached `no-output`, or,
/// on a release that cannot, its output is left to the streaming clients),
/// and its going away leaves every recording as it was.
pub struct Notices(pub Arc<Panes>);

impl Observer for Notices {
    fn event(&self, session: SessionId, event: &Event) {
        if !matches!(event, Event::Output { .. }) {
            self.0.event(session, event);
        }
    }
}

impl Observer for Panes {
    fn event(&self, session: SessionId, event: &Event) {
        match event {
            Event::Output { pane, data } => self.output(session, *pane, data),
            Event::Pause(pane) => self.paused(*pane, true),
            Event::Continue(pane) => self.paused(*pane, false),
            Event::LayoutChange { .. }
            | Event::WindowClose(_)
            | Event::UnlinkedWindowClose(_)
            | Event::SessionsChanged
            | Event::Exit(_) => self.structure_changed(),
            _ => {}
        }
    }

    fn closed(&self, session: SessionId) {
        self.client_gone(session);
    }

    fn position(&self, pane: PaneId) -> Option<u64> {
        Panes::position(self, pane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panes::LineView;
    use crate::tmux::control::Parser;

    /// Replays a recorded control-mode stream, cut into `chunk`-byte reads,
    /// into a recording of pane `%0`, and returns the lines a waiter reads
    /// through a line view of `max_line`, then the partial line.
    fn replay(name: &str, chunk: usize, max_line: usize) -> (Vec<String>, Vec<u8>) {
        let path = format!("{}/fixtures/tmux/{name}", env!("CARGO_MANIFEST_DIR"));
        let stream = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let panes = Panes::new(1 << 24, 4);
        let pane = panes.watch(PaneId(0), SessionId(0));
        let mut parser = Parser::new(1 << 20, 1 << 24);
        let mut events = Vec::new();
        for piece in stream.chunks(chunk) {
            parser.push(piece, &mut events);
            for event in events.drain(..) {
                panes.event(SessionId(0), &event);
            }
        }
        let state = pane.lock();
        assert!(state.ring.end() > 0, "{name} has %output of %0");
        let mut view = LineView::new(max_line);
        let mut lines = Vec::new();
        view.feed(&state.ring.read(0, usize::MAX).to_vec(), &mut |line| {
            lines.push(String::from_utf8(line.to_vec()).expect("whole characters"));
        });
        (lines, view.partial().to_vec())
    }

    #[test]
    fn escapes_and_utf8_reach_the_waiter_intact() {
        let whole = replay("02-output-escapes-utf8.cc", usize::MAX, 1 << 16);
        assert_eq!(
            whole.0,
            [
                r"printf 'tab\there back\\slash utf8: é € 😀\n\033[1;31mred\033[0m\n'",
                "tab\there back\\slash utf8: é € 😀",
                "red",
            ]
        );
        assert_eq!(whole.1, b"$ ");
        assert_eq!(replay("02-output-escapes-utf8.cc", 1, 1 << 16), whole);
    }

    #[test]
    fn a_flood_split_across_outputs_and_reads_is_one_line() {
        let (lines, partial) = replay("06-output-flood-utf8.cc", 7, 1 << 16);
        let flood: String = (1..=250)
            .map(|i| format!("é€😀{i} col é€😀é€😀 "))
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("for i in $(seq 1 250)"));
        assert_eq!(lines[1], flood);
        assert_eq!(lines[2], "__flood__");
        assert_eq!(partial, b"$ ");
        // With a small bound the flood is cut into pieces of whole characters
        // (`replay` checks each is UTF-8).
        let (short, _) = replay("06-output-flood-utf8.cc", 4096, 100);
        assert!(short.len() > 3 && short.iter().all(|l| l.len() <= 103));
    }
}
