//! Which panes a streaming client streams: the ones something watches.
//!
//! tmux sends a control client the output of every pane of its session,
//! and building `%output` slows the pane that prints (tmux before 3.7
//! formats it one byte at a time: a busy pane runs about 2.4× slower). So
//! a streaming client keeps every pane of its session paused
//! (`refresh-client -A '%N:pause'`) except the panes a [`Lease`] wants:
//! panes present at attach are paused then, later ones as soon as they
//! appear (`%window-add`, `%layout-change`) or first print. A paused pane
//! is still read by tmux, so its program never waits for us; what it
//! prints while paused is simply not sent (never `off`: see
//! [`Features::mute`](crate::tmux::version::Features::mute)).
//!
//! A lease taken before a capture unpauses the pane first: the
//! `continue` is written on the same client ahead of the capture, so the
//! sync point stays exact; and the hub hands the lease out only once tmux
//! has run it ([`Lease::unpaused`]), since what makes the pane print (a
//! `send-keys` on the command client) is not ordered with this client.
//!
//! A lease that tolerates gaps (a wait that matches the screen) lets a
//! flooding pane be paused too: when it prints faster than
//! [`FLOOD_BYTES`] per [`FLOOD_WINDOW`], it is paused for a while
//! (doubling from [`FLOOD_PAUSE_FIRST`] to [`FLOOD_PAUSE_MAX`]), then
//! resumed, or sooner once it has gone quiet; output within
//! [`FLOOD_WINDOW`] of a resume means the flood goes on, and the pane is
//! paused again at its first chunk. The pause and
//! resume are gaps in the recording, after which the waiter matches the
//! screen. Nothing is skipped silently.
//!
//! All of this runs on the client's reader task or on a lease's drop: the
//! commands are written without waiting for their replies, under the lock
//! that orders them, so the order tmux sees is the order of decisions.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{Busy, ClientReply, InFlight};
use crate::tmux::control::Event;
use crate::tmux::{Command, PaneId, SessionId, TmuxError, WindowId};

/// A watched pane printing at least this much within [`FLOOD_WINDOW`] is
/// flooding.
pub const FLOOD_BYTES: usize = 64 * 1024;
pub const FLOOD_WINDOW: Duration = Duration::from_millis(100);
/// How long a flooding pane is paused the first time in a row, and at most.
pub const FLOOD_PAUSE_FIRST: Duration = Duration::from_millis(25);
pub const FLOOD_PAUSE_MAX: Duration = Duration::from_millis(200);
/// How often a pane paused for a flood is asked whether it went quiet.
pub const FLOOD_PROBE: Duration = Duration::from_millis(2);

/// What a lease needs of its pane's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Every byte (a command's output): never paused for a flood.
    Exact,
    /// The screen is enough after a gap (a wait matching text).
    Screen,
}

/// The muting state of one streaming client.
pub struct Quiet {
    session: SessionId,
    commands: InFlight,
    state: Mutex<QuietState>,
}

#[derive(Default)]
struct QuietState {
    wanted: HashMap<PaneId, Want>,
    /// Panes we paused because nothing wants them.
    muted: HashSet<PaneId>,
    /// Flood pauses so far: tells a stale resume from the current one.
    episodes: u64,
    /// Wanted panes paused around a respawn ([`Quiet::hold`]), streamed
    /// again by [`Quiet::unhold`].
    held: HashSet<PaneId>,
}

#[derive(Default)]
struct Want {
    exact: usize,
    screen: usize,
    flood: Flood,
}

#[derive(Default)]
struct Flood {
    window_start: Option<Instant>,
    bytes: usize,
    /// Paused for a flood: which pause.
    paused: Option<u64>,
    /// When the last flood pause ended: output this soon after it means the
    /// flood goes on, and the pane is paused again at once.
    resumed: Option<Instant>,
    next_pause: Option<Duration>,
}

impl Want {
    fn is_empty(&self) -> bool {
        self.exact == 0 && self.screen == 0
    }
}

impl Quiet {
    pub(in crate::tmux) fn new(session: SessionId, commands: InFlight) -> Arc<Quiet> {
        Arc::new(Quiet {
            session,
            commands,
            state: Mutex::new(QuietState::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, QuietState> {
        self.state.lock().expect("quiet lock")
    }

    /// Streams `pane` until the lease drops.
    pub(in crate::tmux) fn lease(self: &Arc<Self>, pane: PaneId, busy: Busy) -> Lease {
        let mut state = self.state();
        let want = state.wanted.entry(pane).or_default();
        want.exact += 1;
        let resume = want.flood.paused.take().is_some();
        let unpaused = (state.muted.remove(&pane) || resume)
            .then(|| self.commands.fire_answered(&refresh(pane, "continue")));
        Lease {
            quiet: Some(self.clone()),
            pane,
            need: Need::Exact,
            unpaused,
            _busy: busy,
        }
    }

    /// Pauses `pane` on this client whatever wants it, before a respawn
    /// (see [`Features::pause_before_respawn`](super::version::Features::pause_before_respawn)):
    /// a paused pane's offset on this client no longer holds tmux's buffer
    /// of the pane, even when the pane has left this client's session. The
    /// answer says tmux has run the pause (and so has drained the buffer
    /// down to what its other readers still need). The pause discards what
    /// was queued for this client: a gap for the pane's leases.
    pub(super) fn hold(&self, pane: PaneId) -> ClientReply {
        let mut state = self.state();
        if state.wanted.contains_key(&pane) {
            state.held.insert(pane);
        } else {
            state.muted.insert(pane);
        }
        self.commands.fire_answered(&refresh(pane, "pause"))
    }

    /// Streams `pane` again after [`Quiet::hold`] if something still wants
    /// it (and no flood pause is running); otherwise it stays paused.
    pub(super) fn unhold(&self, pane: PaneId) {
        let mut state = self.state();
        if !state.held.remove(&pane) {
            return;
        }
        match state.wanted.get(&pane) {
            Some(want) if want.flood.paused.is_none() => self.set(pane, "continue"),
            Some(_) => {}
            None => {
                state.muted.insert(pane);
            }
        }
    }

    /// Pauses every pane of the session nothing wants (after the attach).
    pub(in crate::tmux) async fn mute_session(&self) {
        let list = Command::new("list-panes")
            .flag("-s")
            .target(self.session)
            .opt("-F", "#{pane_id}");
        self.mute_listed(list).await;
    }

    async fn mute_listed(&self, list: Command) {
        let Ok(reply) = self.commands.ask(&list).await else {
            return;
        };
        self.mute(
            reply
                .lines
                .iter()
                .filter_map(|l| PaneId::parse(l))
                .collect(),
        );
    }

    /// Pauses those of `panes` nothing wants that are not paused yet, in one
    /// command.
    fn mute(&self, panes: Vec<PaneId>) {
        let mut state = self.state();
        let fresh: Vec<PaneId> = panes
            .into_iter()
            .filter(|p| !state.wanted.contains_key(p) && !state.muted.contains(p))
            .collect();
        if fresh.is_empty() {
            return;
        }
        let mut pause = Command::new("refresh-client");
        for pane in &fresh {
            pause = pause.opt("-A", format!("{pane}:pause"));
            state.muted.insert(*pane);
        }
        self.commands.fire(&pause);
    }

    /// Sees each event of the client before the recordings do.
    pub(in crate::tmux) fn event(self: &Arc<Self>, event: &Event) {
        match event {
            Event::Output { pane, data } => self.output(*pane, data.len()),
            // A layout names its panes (floating ones too): no need to ask tmux.
            Event::LayoutChange { layout, .. } => self.mute(crate::tmux::layout::panes(layout)),
            Event::WindowAdd(window) => {
                let window: WindowId = *window;
                let quiet = self.clone();
                tokio::spawn(async move {
                    let list = Command::new("list-panes")
                        .target(window)
                        .opt("-F", "#{pane_id}");
                    quiet.mute_listed(list).await;
                });
            }
            _ => {}
        }
    }

    fn output(self: &Arc<Self>, pane: PaneId, bytes: usize) {
        let mut guard = self.state();
        let state = &mut *guard;
        let Some(want) = state.wanted.get_mut(&pane) else {
            // A pane nothing wants that is not paused yet (new since the
            // last listing): pause it now.
            if state.muted.insert(pane) {
                self.set(pane, "pause");
            }
            return;
        };
        // Only a pane wanted by nothing but screen-matching waits may be
        // paused for a flood.
        if want.exact > 0 || want.flood.paused.is_some() {
            return;
        }
        let now = Instant::now();
        let flood = &mut want.flood;
        let still_flooding = flood
            .resumed
            .take()
            .is_some_and(|at| now.duration_since(at) < FLOOD_WINDOW);
        match flood.window_start {
            _ if still_flooding => flood.bytes = FLOOD_BYTES,
            Some(start) if now.duration_since(start) < FLOOD_WINDOW => flood.bytes += bytes,
            window => {
                if window.is_some() && flood.bytes < FLOOD_BYTES {
                    // A calm window: the next flood starts with a short pause.
                    flood.next_pause = None;
                }
                flood.window_start = Some(now);
                flood.bytes = bytes;
            }
        }
        if flood.bytes < FLOOD_BYTES {
            return;
        }
        let pause = flood.next_pause.unwrap_or(FLOOD_PAUSE_FIRST);
        flood.next_pause = Some((pause * 2).min(FLOOD_PAUSE_MAX));
        state.episodes += 1;
        let episode = state.episodes;
        flood.paused = Some(episode);
        self.set(pane, "pause");
        let quiet = self.clone();
        tokio::spawn(async move {
            quiet.until_quiet(pane, episode, pause).await;
            quiet.flood_over(pane, episode);
        });
    }

    /// Returns once the paused pane has gone quiet, or `pause` has passed:
    /// a wait on a flood sees its end within a few milliseconds, not at the
    /// next resume. tmux still reads a paused pane, so what it printed
    /// shows in its history size and cursor: two probes [`FLOOD_PROBE`]
    /// apart that read the same say it printed nothing in between. A quiet
    /// spell inside a flood only resumes it early; the next chunk pauses
    /// it again.
    async fn until_quiet(&self, pane: PaneId, episode: u64, pause: Duration) {
        let deadline = tokio::time::Instant::now() + pause;
        let probe = Command::new("display-message")
            .flag("-p")
            .target(pane)
            .arg("#{history_size} #{cursor_x} #{cursor_y}");
        let mut last = None;
        while tokio::time::timeout_at(deadline, tokio::time::sleep(FLOOD_PROBE))
            .await
            .is_ok()
        {
            let paused = self.state().wanted.get(&pane).map(|w| w.flood.paused);
            if paused != Some(Some(episode)) {
                return;
            }
            let Ok(reply) = self.commands.ask(&probe).await else {
                return;
            };
            let seen = Some(reply.lines);
            if seen == last {
                return;
            }
            last = seen;
        }
    }

    /// A flood pause has lasted its time: stream the pane again.
    fn flood_over(&self, pane: PaneId, episode: u64) {
        let mut state = self.state();
        let Some(want) = state.wanted.get_mut(&pane) else {
            return;
        };
        if want.flood.paused == Some(episode) {
            want.flood.paused = None;
            want.flood.window_start = None;
            want.flood.bytes = 0;
            want.flood.resumed = Some(Instant::now());
            self.set(pane, "continue");
        }
    }

    fn change_need(&self, pane: PaneId, from: Need, to: Need) {
        let mut state = self.state();
        if let Some(want) = state.wanted.get_mut(&pane) {
            *need_count(want, from) -= 1;
            *need_count(want, to) += 1;
            if want.exact > 0 && want.flood.paused.take().is_some() {
                self.set(pane, "continue");
            }
        }
    }

    fn release(&self, pane: PaneId, need: Need) {
        let mut state = self.state();
        let Some(want) = state.wanted.get_mut(&pane) else {
            return;
        };
        *need_count(want, need) -= 1;
        self.mute_if_unwanted(&mut state, pane);
    }

    fn mute_if_unwanted(&self, state: &mut QuietState, pane: PaneId) {
        if state.wanted.get(&pane).is_some_and(Want::is_empty) {
            let want = state.wanted.remove(&pane).unwrap_or_default();
            state.muted.insert(pane);
            if want.flood.paused.is_none() {
                self.set(pane, "pause");
            }
        }
    }

    /// Writes `refresh-client -A '%N:state'`; the caller holds the lock, so
    /// commands reach tmux in the order they were decided.
    fn set(&self, pane: PaneId, to: &str) {
        self.commands.fire(&refresh(pane, to));
    }
}

/// `refresh-client -A '%N:TO'`: pause or continue one pane for this client.
fn refresh(pane: PaneId, to: &str) -> Command {
    Command::new("refresh-client").opt("-A", format!("{pane}:{to}"))
}

fn need_count(want: &mut Want, need: Need) -> &mut usize {
    match need {
        Need::Exact => &mut want.exact,
        Need::Screen => &mut want.screen,
    }
}

/// A pane streamed on one client for as long as this lives.
pub struct Lease {
    /// `None` on a client that streams everything (a release that cannot
    /// mute).
    quiet: Option<Arc<Quiet>>,
    pane: PaneId,
    need: Need,
    /// The pane's `continue`, until tmux has run it (see [`Lease::unpaused`]).
    unpaused: Option<ClientReply>,
    _busy: Busy,
}

impl Lease {
    pub(in crate::tmux) fn unmuted(pane: PaneId, busy: Busy) -> Lease {
        Lease {
            quiet: None,
            pane,
            need: Need::Exact,
            unpaused: None,
            _busy: busy,
        }
    }

    /// Waits until tmux has run the pane's `continue` (and the pauses
    /// written before it): from then on its output is sent. Commands on
    /// another client (the `send-keys` of a `run_command`) are not ordered
    /// with this client's, so nothing may be typed into the pane before.
    pub async fn unpaused(&mut self) -> Result<(), TmuxError> {
        match self.unpaused.take() {
            Some(answer) => answer.arrived().await,
            None => Ok(()),
        }
    }

    /// Says what the holder needs; [`Need::Screen`] lets a flood be paused.
    pub fn need(&mut self, need: Need) {
        if let Some(quiet) = &self.quiet
            && need != self.need
        {
            quiet.change_need(self.pane, self.need, need);
        }
        self.need = need;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(quiet) = self.quiet.take() {
            quiet.release(self.pane, self.need);
        }
    }
}
