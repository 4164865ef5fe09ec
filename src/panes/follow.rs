//! Following one pane's recording, sans-IO: the IO-free half of a wait.
//!
//! A [`Follower`] holds a watched [`Pane`], the change signal subscribed
//! from that same pane, where the recording ended when following began,
//! and the structure count last seen. Callers keep their own cursors (ring
//! offsets) and read from them through it, as raw chunks or as lines of a
//! [`LineView`]; between reads they sleep on [`Follower::next_change`].

use std::sync::{Arc, LazyLock};

use regex::bytes::Regex;
use tokio::sync::watch;

use super::LineView;
use super::registry::Pane;

/// Most bytes copied out of the ring under its lock at a time.
const READ_CHUNK: usize = 64 * 1024;

static SCREEN_SWITCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[\?(?:1049|1047|47)([hl])").expect("valid regex"));
static CURSOR_MOVE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[HfABCDdGr]").expect("valid regex"));

/// What a read found besides its lines.
#[derive(Default)]
pub struct ReadInfo {
    /// Output was lost before it could be read (evicted or missed).
    pub missed: bool,
    /// Bytes read.
    pub bytes: usize,
    /// Cursor moves or screen switches were seen: text may have been painted
    /// where the line view cannot see it.
    pub redraw: bool,
    /// The last alternate-screen switch seen: `Some(true)` entered it.
    pub alternate: Option<bool>,
    /// The alternate screen was entered at least once.
    pub entered_alternate: bool,
}

/// A reader of one pane's recording and the signal that wakes it.
pub struct Follower {
    pane: Arc<Pane>,
    /// Always subscribed from `pane`'s own signal.
    signal: watch::Receiver<u64>,
    /// The recording's end when following began.
    origin: u64,
    /// The pane's structure count last seen.
    structure: u64,
}

impl Follower {
    /// Follows `pane` from its recording's current end.
    pub fn new(pane: Arc<Pane>) -> Follower {
        let signal = pane.subscribe();
        let (structure, origin) = {
            let state = pane.lock();
            (state.structure, state.ring.end())
        };
        Follower {
            pane,
            signal,
            origin,
            structure,
        }
    }

    /// Follows `pane` from now on. The same recording keeps everything (its
    /// signal too, so no wake is lost); another one starts afresh, with a
    /// change pending so the caller reads it before it sleeps.
    pub fn follow(&mut self, pane: Arc<Pane>) {
        if !Arc::ptr_eq(&self.pane, &pane) {
            *self = Follower::new(pane);
            self.signal.mark_changed();
        }
    }

    /// The recording followed.
    pub fn pane(&self) -> &Arc<Pane> {
        &self.pane
    }

    /// The recording's current end: output from here on is new.
    pub fn end(&self) -> u64 {
        self.pane.lock().ring.end()
    }

    /// Marks everything seen so far as seen: the next [`next_change`](Self::next_change)
    /// waits for something newer. Call before reading, so nothing is missed.
    pub fn mark_seen(&mut self) {
        self.signal.borrow_and_update();
    }

    /// Resolves on the pane's next change (output, a gap, a structural event).
    pub async fn next_change(&mut self) {
        // The pane owns the sender and we hold the pane: it never closes.
        let _ = self.signal.changed().await;
    }

    /// Whether something structural happened since the last call (a window
    /// closed or was relaid out, the streaming client went away): `None`
    /// if not, else `Some(orphaned)`, true when the client streaming the
    /// pane is gone. Orphaned is reported on every call until re-streamed.
    pub fn structural_change(&mut self) -> Option<bool> {
        let (structure, orphaned) = {
            let state = self.pane.lock();
            (state.structure, state.orphaned)
        };
        if structure == self.structure && !orphaned {
            return None;
        }
        self.structure = structure;
        Some(orphaned)
    }

    /// Reads everything recorded from `cursor` on through `view`, advancing
    /// the cursor; `on_line` gets each completed line.
    pub fn read(
        &self,
        cursor: &mut u64,
        view: &mut LineView,
        on_line: &mut impl FnMut(&[u8]),
    ) -> ReadInfo {
        let mut alternate = false;
        self.read_screens(cursor, view, &mut alternate, &mut |line, _| on_line(line))
    }

    /// [`read`](Self::read), telling each line whether it was completed on
    /// the alternate screen. `alternate` is the state at the cursor, kept
    /// up to date across reads by the caller.
    pub fn read_screens(
        &self,
        cursor: &mut u64,
        view: &mut LineView,
        alternate: &mut bool,
        on_line: &mut impl FnMut(&[u8], bool),
    ) -> ReadInfo {
        self.read_raw(cursor, &mut |_, chunk, gap| {
            if gap {
                view.reset();
            }
            // Feed up to each screen switch with the screen it was on.
            let mut fed = 0;
            if memchr::memchr(0x1b, chunk).is_some() {
                for c in SCREEN_SWITCH.captures_iter(chunk) {
                    let end = c.get(0).map_or(fed, |m| m.end());
                    let on = *alternate;
                    view.feed(&chunk[fed..end], &mut |line| on_line(line, on));
                    fed = end;
                    *alternate = &c[1] == b"h";
                }
            }
            let on = *alternate;
            view.feed(&chunk[fed..], &mut |line| on_line(line, on));
        })
    }

    /// Reads everything recorded from `cursor` on as raw bytes, advancing
    /// the cursor; `on_chunk` gets each chunk with its ring offset, and
    /// `true` when output was lost just before it. The pane's lock is held
    /// only to copy a bounded chunk out: the connection's reader needs it to
    /// append output, and must never wait on a waiter's parsing.
    pub fn read_raw(
        &self,
        cursor: &mut u64,
        on_chunk: &mut impl FnMut(u64, &[u8], bool),
    ) -> ReadInfo {
        let mut info = ReadInfo::default();
        let mut chunk = Vec::new();
        loop {
            chunk.clear();
            let (at, gap, caught_up) = {
                let state = self.pane.lock();
                let read = state.ring.read(*cursor, READ_CHUNK);
                // A gap where following began is not a loss for this
                // follower: the capture at the sync point already shows
                // what came before.
                let gap = read.evicted > 0 || (read.after_gap && read.from != self.origin);
                chunk.extend_from_slice(read.head);
                chunk.extend_from_slice(read.tail);
                *cursor = read.from + chunk.len() as u64;
                (
                    read.from,
                    gap,
                    chunk.is_empty() || *cursor >= state.ring.end(),
                )
            };
            info.missed |= gap;
            info.bytes += chunk.len();
            if memchr::memchr(0x1b, &chunk).is_some() {
                info.redraw |= CURSOR_MOVE.is_match(&chunk);
                for c in SCREEN_SWITCH.captures_iter(&chunk) {
                    let on = &c[1] == b"h";
                    info.alternate = Some(on);
                    info.entered_alternate |= on;
                    info.redraw = true;
                }
            }
            on_chunk(at, &chunk, gap);
            if caught_up {
                break;
            }
        }
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{PaneId, SessionId};
    use crate::panes::registry::Panes;

    fn lines(follower: &Follower, cursor: &mut u64) -> (Vec<String>, ReadInfo) {
        let mut view = LineView::new(1024);
        let mut out = Vec::new();
        let info = follower.read(cursor, &mut view, &mut |l| {
            out.push(String::from_utf8_lossy(l).into_owned())
        });
        (out, info)
    }

    #[test]
    fn reads_from_where_following_began_and_wakes_on_output() {
        let panes = Panes::new(1024, 4);
        panes.watch(PaneId(1), SessionId(0));
        panes.output(SessionId(0), PaneId(1), b"before\n");
        let mut follower = Follower::new(panes.get(PaneId(1)).unwrap());
        let mut cursor = follower.end();
        assert_eq!(cursor, 7);
        follower.mark_seen();
        panes.output(SessionId(0), PaneId(1), b"after\n\x1b[?1049h");
        assert!(follower.signal.has_changed().unwrap());
        let (read, info) = lines(&follower, &mut cursor);
        assert_eq!(read, ["after"]);
        assert!(!info.missed && info.entered_alternate && info.redraw);
        assert_eq!(info.alternate, Some(true));
        assert_eq!(cursor, follower.end());
    }

    #[test]
    fn structure_and_orphaning_are_reported() {
        let panes = Panes::new(1024, 4);
        let mut follower = Follower::new(panes.watch(PaneId(1), SessionId(0)));
        panes.output(SessionId(0), PaneId(1), b"a\n");
        let mut cursor = 0;
        assert_eq!(lines(&follower, &mut cursor).0, ["a"]);
        assert_eq!(follower.structural_change(), None);
        panes.structure_changed();
        assert_eq!(follower.structural_change(), Some(false));
        assert_eq!(follower.structural_change(), None);
        panes.client_gone(SessionId(0));
        assert_eq!(follower.structural_change(), Some(true));
        assert_eq!(
            follower.structural_change(),
            Some(true),
            "until re-streamed"
        );
        // Streamed again by another client: the same recording, with a gap.
        let again = panes.watch(PaneId(1), SessionId(2));
        follower.follow(again);
        assert_eq!(follower.structural_change(), None);
        panes.output(SessionId(2), PaneId(1), b"x\n");
        let (read, info) = lines(&follower, &mut cursor);
        assert_eq!(read, ["x"]);
        assert!(info.missed, "output between the clients may be lost");
    }

    /// The signal is the followed pane's own: following another recording
    /// subscribes to it, and the switch itself is a change to read.
    #[test]
    fn the_signal_follows_the_pane() {
        let old = Panes::new(1024, 4);
        let new = Panes::new(1024, 4);
        let mut follower = Follower::new(old.watch(PaneId(1), SessionId(0)));
        follower.follow(new.watch(PaneId(1), SessionId(0)));
        assert!(follower.signal.has_changed().unwrap());
        follower.mark_seen();
        old.output(SessionId(0), PaneId(1), b"stale");
        assert!(!follower.signal.has_changed().unwrap());
        new.output(SessionId(0), PaneId(1), b"fresh");
        assert!(follower.signal.has_changed().unwrap());
    }
}
