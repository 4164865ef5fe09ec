//! The panes whose output is recorded, for one tmux server.
//!
//! [`Panes`] is told, in stream order, what every control client of the
//! server read (`tmux/output.rs` turns control-mode events into these
//! calls): it appends the output of watched panes to their [`Ring`] under a
//! short, non-async lock, then bumps the pane's change signal. Waiters hold
//! an `Arc<Pane>` and sleep on that signal; nothing here ever waits.
//!
//! Only watched panes are recorded (a pane becomes watched when a tool first
//! needs its output), so memory is bounded by `ring capacity × max panes`
//! whatever the panes print.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use tokio::sync::watch;

use super::attention::{FEED_EVENTS, Feed, Heard, Listen, Reason};
use super::ring::Ring;
use crate::ids::{PaneId, SessionId};
use crate::tmux::history::Anchor;

/// Output after this much silence starts a new quiet spell: the attention
/// feed is nudged so a waiter schedules the spell's settle points.
const NEW_SPELL: std::time::Duration = std::time::Duration::from_millis(20);

/// Milliseconds since 1970, as attention events carry them.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One watched pane.
pub struct Pane {
    pub id: PaneId,
    /// Distinguishes this recording from an earlier one of the same pane id
    /// (cursors from a recording that was dropped must not be trusted).
    pub epoch: u64,
    state: Mutex<PaneRecord>,
    /// Bumped on every change a waiter may care about: output, a gap, or a
    /// structural change (a window closed, a client went away).
    signal: watch::Sender<u64>,
}

/// What a waiter reads under the pane's lock.
pub struct PaneRecord {
    pub ring: Ring,
    /// The session whose control client streams this pane's output.
    pub session: SessionId,
    /// Bumped when something happened that may mean the pane is gone: a
    /// window closed or changed layout, or the streaming client went away.
    pub structure: u64,
    /// The streaming client went away: output may have been missed since.
    pub orphaned: bool,
    /// Armed for attention: the bell and notifications are listened for.
    pub listen: Option<Box<Listen>>,
    /// When the last output was recorded.
    pub last_output: Option<std::time::Instant>,
    /// tmux paused the pane's output (a flood): it is not quiet.
    pub paused: bool,
}

impl Pane {
    pub fn lock(&self) -> MutexGuard<'_, PaneRecord> {
        self.state.lock().expect("pane lock")
    }

    /// A receiver that wakes on the next change after this call.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.signal.subscribe()
    }

    fn bump(&self) {
        self.signal.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Its stream is gone (when `cond` holds, checked under the same
    /// lock): a gap in the recording, a structural change, and its
    /// followers woken to re-check it.
    fn orphan_if(&self, cond: impl FnOnce(&PaneRecord) -> bool) {
        let mut state = self.lock();
        if !cond(&state) {
            return;
        }
        state.orphaned = true;
        state.structure += 1;
        state.ring.mark_gap();
        drop(state);
        self.bump();
    }
}

/// Where a pane stood when this server last sent it input (keys or a
/// paste), taken just before the input was sent: a wait `since` it reads
/// from there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputMark {
    /// The pane's recording (its epoch) and the recording's end, when the
    /// pane was recorded: exact while the recording has no gap after it.
    pub ring: Option<(u64, u64)>,
    /// In tmux's terms, for when it has one: the tmux server's pid, the
    /// pane's process and the last line above the cursor.
    pub tmux: Option<(u32, u32, Anchor)>,
}

/// Input marks kept, at most (one per pane; a server has fewer panes).
const MAX_INPUT_MARKS: usize = 4096;

/// Every watched pane of one tmux server.
pub struct Panes {
    ring_capacity: usize,
    max_panes: usize,
    panes: Mutex<HashMap<PaneId, Arc<Pane>>>,
    inputs: Mutex<HashMap<PaneId, InputMark>>,
    /// What needs attention, across the armed panes.
    attention: Feed,
    /// The last value of each watched user option of each armed pane.
    status: Mutex<HashMap<(PaneId, String), String>>,
}

/// Recording numbers, unique across server processes too (a cursor names
/// its recording by one, and may be read by a later process): they start
/// from the microseconds since 1970 when the process first needs one.
static EPOCH: LazyLock<AtomicU64> = LazyLock::new(|| {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_micros() as u64);
    AtomicU64::new(now.max(1))
});

impl Panes {
    pub fn new(ring_capacity: usize, max_panes: usize) -> Self {
        Panes {
            ring_capacity,
            max_panes: max_panes.max(1),
            panes: Mutex::new(HashMap::new()),
            inputs: Mutex::new(HashMap::new()),
            attention: Feed::new(EPOCH.fetch_add(1, Ordering::Relaxed), FEED_EVENTS),
            status: Mutex::new(HashMap::new()),
        }
    }

    /// The pane's recording and its end now, if it is recorded.
    pub fn end_of(&self, id: PaneId) -> Option<(u64, u64)> {
        self.get(id).map(|p| (p.epoch, p.lock().ring.end()))
    }

    /// Input is being sent to `id`: `mark` is where it stood.
    pub fn record_input(&self, id: PaneId, mark: InputMark) {
        let mut inputs = self.inputs.lock().expect("inputs lock");
        if inputs.len() >= MAX_INPUT_MARKS && !inputs.contains_key(&id) {
            // Bounded: a server with this many panes starts over.
            inputs.clear();
        }
        inputs.insert(id, mark);
    }

    /// Where `id` stood when this server last sent it input.
    pub fn last_input(&self, id: PaneId) -> Option<InputMark> {
        self.inputs.lock().expect("inputs lock").get(&id).cloned()
    }

    /// The pane's recording, started now if it was not watched yet. `session`
    /// is the session whose control client will stream it.
    pub fn watch(&self, id: PaneId, session: SessionId) -> Arc<Pane> {
        let mut panes = self.panes.lock().expect("panes lock");
        if let Some(pane) = panes.get(&id) {
            let mut state = pane.lock();
            if state.session != session || state.orphaned {
                // A new streaming client: what came before may be incomplete.
                state.session = session;
                state.orphaned = false;
                state.ring.mark_gap();
            }
            return pane.clone();
        }
        if panes.len() >= self.max_panes {
            // Drop the recording nobody holds with the lowest epoch (oldest).
            let idle = panes
                .values()
                .filter(|p| Arc::strong_count(p) == 1)
                .min_by_key(|p| p.epoch)
                .map(|p| p.id);
            if let Some(idle) = idle {
                panes.remove(&idle);
            }
        }
        let pane = Arc::new(Pane {
            id,
            epoch: EPOCH.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(PaneRecord {
                ring: Ring::new(self.ring_capacity),
                session,
                structure: 0,
                orphaned: false,
                listen: None,
                last_output: None,
                paused: false,
            }),
            signal: watch::channel(0).0,
        });
        panes.insert(id, pane.clone());
        pane
    }

    /// The pane's recording, if it is watched.
    pub fn get(&self, id: PaneId) -> Option<Arc<Pane>> {
        self.panes.lock().expect("panes lock").get(&id).cloned()
    }

    /// Output of `pane` read by `session`'s control client.
    pub fn output(&self, session: SessionId, pane: PaneId, data: &[u8]) {
        let Some(pane) = self.get(pane) else { return };
        let mut heard = Vec::new();
        let mut spell = false;
        {
            let mut state = pane.lock();
            if state.session != session {
                // Another client attached to a session holding the same
                // window streams it too; count each byte once.
                return;
            }
            let at = state.ring.end();
            state.ring.append(data);
            if let Some(listen) = &mut state.listen {
                listen.feed(at, data, &mut heard);
                let now = std::time::Instant::now();
                spell = state
                    .last_output
                    .is_none_or(|last| now.duration_since(last) >= NEW_SPELL);
                state.last_output = Some(now);
            }
        }
        pane.bump();
        // The clock is read only for an event: this runs for every chunk.
        let at_ms = if heard.is_empty() { 0 } else { unix_ms() };
        for h in &heard {
            match h {
                Heard::Bell => self.attention.push(pane.id, Reason::Bell, "", at_ms),
                Heard::Notify(text) => self.attention.push(pane.id, Reason::Notify, text, at_ms),
            }
        }
        if spell && heard.is_empty() {
            self.attention.nudge();
        }
    }

    /// The server's attention feed.
    pub fn attention(&self) -> &Feed {
        &self.attention
    }

    /// Listens to the pane's stream for attention (it must be watched).
    pub fn arm(&self, id: PaneId) {
        if let Some(pane) = self.get(id) {
            let mut state = pane.lock();
            if state.listen.is_none() {
                state.listen = Some(Box::default());
            }
        }
    }

    /// A watched user option of `pane` reads `value` now: an event when
    /// it changed from the value known before (the first one known is
    /// only remembered). Only armed panes are followed.
    pub fn status(&self, pane: PaneId, option: &str, value: &str) {
        let armed = self.get(pane).is_some_and(|p| p.lock().listen.is_some());
        if !armed {
            return;
        }
        let mut status = self.status.lock().expect("status lock");
        // Bounded by the recordings: forget panes no longer watched.
        if status.len() >= 8 * self.max_panes {
            let panes = self.panes.lock().expect("panes lock");
            status.retain(|(p, _), _| panes.contains_key(p));
        }
        let key = (pane, option.to_owned());
        let old = status.insert(key, value.to_owned());
        drop(status);
        if old.is_some_and(|old| old != value) {
            let detail = format!("{option}={value}");
            self.attention
                .push(pane, Reason::Status, &detail, unix_ms());
        }
    }

    /// tmux paused (`true`) or resumed `pane`'s output: a gap, and a pane
    /// that is not quiet while paused.
    pub fn paused(&self, pane: PaneId, paused: bool) {
        if let Some(p) = self.get(pane) {
            p.lock().paused = paused;
        }
        self.gap(pane);
    }

    /// tmux paused or resumed `pane`'s output: some of it may be missing.
    pub fn gap(&self, pane: PaneId) {
        if let Some(pane) = self.get(pane) {
            let mut state = pane.lock();
            state.ring.mark_gap();
            if let Some(listen) = &mut state.listen {
                listen.reset();
            }
            drop(state);
            pane.bump();
        }
    }

    /// Something happened that may mean a pane is gone (a window closed or
    /// changed layout, sessions changed): every waiter checks its pane.
    pub fn structure_changed(&self) {
        self.each(|pane| {
            pane.lock().structure += 1;
            pane.bump();
        });
        self.attention.nudge();
    }

    /// `session`'s control client went away: what it streamed may have
    /// gaps from now on, until a new client streams it.
    pub fn client_gone(&self, session: SessionId) {
        self.each(|pane| pane.orphan_if(|state| state.session == session));
        self.attention.nudge();
        // Recordings nobody follows any more are released with the client
        // (it detaches when nothing was watched for the idle time): memory
        // is held only for panes that are streamed. A cursor into one reads
        // on from a new recording, with lines_missed.
        self.panes
            .lock()
            .expect("panes lock")
            .retain(|_, pane| Arc::strong_count(pane) > 1 || pane.lock().session != session);
    }

    /// The server was replaced by a new one (its pane ids start again):
    /// every recording is orphaned and forgotten, so a pane id seen again
    /// starts a new recording, and cursors into the old ones miss lines.
    pub fn server_replaced(&self) {
        self.inputs.lock().expect("inputs lock").clear();
        let old: Vec<Arc<Pane>> = {
            let mut panes = self.panes.lock().expect("panes lock");
            panes.drain().map(|(_, p)| p).collect()
        };
        for pane in old {
            pane.orphan_if(|_| true);
        }
    }

    /// How many bytes of `pane`'s output were recorded, if it is watched.
    pub fn position(&self, pane: PaneId) -> Option<u64> {
        self.get(pane).map(|p| p.lock().ring.end())
    }

    fn each(&self, mut f: impl FnMut(&Pane)) {
        let panes: Vec<Arc<Pane>> = self
            .panes
            .lock()
            .expect("panes lock")
            .values()
            .cloned()
            .collect();
        for pane in panes {
            f(&pane);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watched_panes_from_their_streaming_session_are_recorded() {
        let panes = Panes::new(1024, 8);
        panes.output(SessionId(0), PaneId(1), b"lost");
        let pane = panes.watch(PaneId(1), SessionId(0));
        let mut rx = pane.subscribe();
        panes.output(SessionId(0), PaneId(1), b"kept");
        panes.output(SessionId(5), PaneId(1), b"twice");
        assert!(rx.has_changed().unwrap());
        rx.borrow_and_update();
        assert_eq!(panes.position(PaneId(1)), Some(4));
        assert_eq!(pane.lock().ring.read(0, 100).head, b"kept");
        panes.watch(PaneId(2), SessionId(0));
        panes.watch(PaneId(3), SessionId(4));
        panes.client_gone(SessionId(0));
        assert!(rx.has_changed().unwrap());
        assert!(pane.lock().orphaned);
        assert!(
            panes.get(PaneId(1)).is_some(),
            "a followed recording is kept"
        );
        assert!(
            panes.get(PaneId(2)).is_none(),
            "an idle one goes with its client"
        );
        assert!(panes.get(PaneId(3)).is_some(), "another session's stays");
    }

    #[test]
    fn the_number_of_recordings_is_bounded() {
        let panes = Panes::new(16, 2);
        let held = panes.watch(PaneId(1), SessionId(0));
        panes.watch(PaneId(2), SessionId(0));
        panes.watch(PaneId(3), SessionId(0));
        assert!(panes.get(PaneId(1)).is_some(), "a held recording is kept");
        assert!(panes.get(PaneId(2)).is_none(), "the oldest idle one goes");
        drop(held);
    }
}
