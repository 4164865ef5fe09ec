//! Panes kept recorded between calls: a pane this server handed a cursor
//! for (`capture_since`) or typed into stays streamed for a while, so a
//! later read from that cursor, or `since: "input"`, finds in the stream
//! what a `clear` or a redraw wiped from tmux's own record (see
//! [`crate::panes::wipe`]). A while is the idle time after which our
//! clients detach (`TMUX_MCP_IDLE_DETACH_SECONDS`, at most [`LINGER`]):
//! a cursor read later relies on tmux's record alone, as it did, and no
//! client stays attached for it. Bounded: at most [`MAX_KEPT`] panes, the
//! least recently used let go first; a flooding pane may be paused (a
//! gap: the reader then trusts tmux's record alone).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::drive::Target;
use crate::drive::server::Server;
use crate::drive::watch::Watch;
use crate::tmux::PaneId;

/// Longest a pane stays recorded after the last call that kept it.
pub const LINGER: Duration = Duration::from_secs(300);
/// Most panes kept recorded at once.
pub const MAX_KEPT: usize = 32;

/// The panes one server keeps recorded.
#[derive(Default)]
pub struct Lingering {
    panes: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    held: HashMap<PaneId, (Watch, Instant)>,
    /// A reaper task lets expired ones go.
    reaper: bool,
}

/// Keeps `id` recorded for a while from now (best effort: a pane that
/// cannot be streamed is simply not kept). Returns once the pane is
/// streamed: output after this is recorded.
pub async fn keep(target: &Target, id: PaneId) {
    let kept = &target.server.lingering;
    let linger = target
        .hub
        .limits()
        .idle_detach
        .map_or(LINGER, |d| d.min(LINGER));
    let until = Instant::now() + linger;
    if let Some((_, at)) = kept.panes.lock().expect("kept lock").held.get_mut(&id) {
        *at = until;
        return;
    }
    let Ok(mut watch) = Watch::start(target, id).await else {
        return;
    };
    watch.tolerate_gaps();
    let mut panes = kept.panes.lock().expect("kept lock");
    if panes.held.len() >= MAX_KEPT && !panes.held.contains_key(&id) {
        let oldest = panes
            .held
            .iter()
            .min_by_key(|(_, (_, at))| *at)
            .map(|(p, _)| *p);
        if let Some(oldest) = oldest {
            panes.held.remove(&oldest);
        }
    }
    panes.held.insert(id, (watch, until));
    if !panes.reaper {
        panes.reaper = true;
        let server = target.server.clone();
        target.server.tasks.spawn(reap(server));
    }
}

/// Lets each pane go once its time is up; ends when none is kept.
async fn reap(server: Arc<Server>) {
    let kept = &server.lingering;
    loop {
        let next = {
            let mut panes = kept.panes.lock().expect("kept lock");
            let now = Instant::now();
            panes.held.retain(|_, (_, until)| *until > now);
            match panes.held.values().map(|(_, until)| *until).min() {
                Some(next) => next,
                None => {
                    panes.reaper = false;
                    return;
                }
            }
        };
        tokio::time::sleep_until(next).await;
    }
}
