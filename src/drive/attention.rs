//! The attention sentry: a pane armed for `wait_for_attention`, looked at
//! as a waiting call would (at the settle points of its quiet spells,
//! woken by the feed), and the panes a server keeps armed between calls
//! with a keeper task looking at them, so what they do meanwhile is in the
//! feed for the next call.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::drive::person;
use crate::drive::probe::{Look, SETTLE, Settle};
use crate::drive::watch::Watch;
use crate::drive::{ErrorKind, Target, ToolResult};
use crate::panes::attention::Reason;
use crate::panes::registry::unix_ms;
use crate::process::Activity;
use crate::tmux::{PaneId, SessionId, WindowId};

/// How long panes stay armed after the last call returned.
pub const LINGER: Duration = Duration::from_secs(300);
/// The panes armed on one server, kept between calls.
#[derive(Default)]
pub struct Armed {
    /// The armed panes no call holds now. An async lock: the keeper holds
    /// it while it looks at them (a tmux command, a probe).
    pub kept: tokio::sync::Mutex<Kept>,
    /// Armed panes whose end was reported, where they were and their
    /// process: their events still belong to the scopes that held them,
    /// and the same end is not reported twice.
    pub departed: Mutex<HashMap<PaneId, Departed>>,
}

/// What the keeper looks at between calls, and how.
#[derive(Default)]
pub struct Kept {
    pub sentries: HashMap<PaneId, Sentry>,
    /// A keeper task runs.
    keeper: bool,
    /// When the panes are disarmed (the last call's return plus [`LINGER`]).
    until: Option<Instant>,
    /// The last call's settle points and `idle_ms`.
    settle: Settle,
    want_idle: Option<Duration>,
}

/// A pane whose end was reported.
#[derive(Clone, Copy)]
pub struct Departed {
    pub place: Place,
    /// Its process then (0: unknown): a dead pane with the same one is the
    /// same end; a respawned one is not.
    pid: u32,
}

impl Armed {
    /// Remembers a pane whose end was reported (bounded: the oldest are
    /// forgotten in bulk).
    pub fn depart(&self, id: PaneId, place: Place, pid: u32) {
        let mut departed = self.departed.lock().expect("departed lock");
        if departed.len() >= MAX_DEPARTED {
            departed.clear();
        }
        departed.insert(id, Departed { place, pid });
    }

    /// The end of `id` was reported already.
    pub fn reported_end(&self, id: PaneId) -> Option<u32> {
        let departed = self.departed.lock().expect("departed lock");
        departed.get(&id).map(|d| d.pid)
    }
}

/// Most closed panes remembered (the feed holds at most this many events).
const MAX_DEPARTED: usize = crate::panes::attention::FEED_EVENTS;

/// Where a pane was: its session and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub session: Option<SessionId>,
    pub window: Option<WindowId>,
}

/// One armed pane: its watch, and what the probe said last.
pub struct Sentry {
    pub watch: Watch,
    pub place: Place,
    look: Look,
    /// The activity last seen; `None` before the first look.
    pub activity: Option<Activity>,
    /// Its end was recorded.
    pub gone: bool,
    /// How much output was recorded when last looked at.
    pub seen: u64,
    /// The start of the current quiet spell (`None`: no output yet).
    pub spell: Option<Instant>,
    /// Settle points of this spell already probed.
    pub passed: usize,
    /// This spell's `idle` was recorded.
    pub idled: bool,
}

/// The event a change of what the probe says makes, if any: `prev` is
/// `None` when the pane is first armed.
fn transition(prev: Option<Activity>, now: Activity) -> Option<Reason> {
    match (prev, now) {
        (Some(a), b) if a == b => None,
        (_, Activity::Exited) => Some(Reason::Exited),
        (_, Activity::Input) => Some(Reason::Input),
        (_, Activity::Secret) => Some(Reason::Secret),
        (Some(_), Activity::Prompt) => Some(Reason::Prompt),
        _ => None,
    }
}

impl Sentry {
    pub async fn arm(target: &Target, id: PaneId, place: Place) -> ToolResult<Sentry> {
        let mut watch = Watch::start(target, id).await?;
        // A flooding pane may be paused for a while: the stream is
        // listened to for the bell and notifications, not read whole.
        watch.tolerate_gaps();
        target.hub.panes().arm(id);
        let look = Look::new(target, watch.pid, &watch.tty, watch.dead_at_start);
        Ok(Sentry {
            seen: watch.follower().end(),
            watch,
            place,
            look,
            activity: None,
            gone: false,
            // Arming starts a quiet spell: the first probe waits for the
            // output to settle, as every later one does.
            spell: Some(Instant::now()),
            passed: 0,
            idled: false,
        })
    }

    /// The pane's end as tmux tells it (`Some` detail: `respawned` or
    /// none), or `None` while it lives.
    async fn end_seen(&mut self, target: &Target) -> ToolResult<Option<&'static str>> {
        match self.watch.check_alive(target).await {
            Ok(_) => Ok(None),
            Err(e) if !e.kind.is_pane_end() || e.kind == ErrorKind::TmuxServerGone => Err(e),
            Err(e) if e.kind == ErrorKind::PaneRespawned => Ok(Some("respawned")),
            Err(_) => Ok(Some("")),
        }
    }

    /// The settle point due next in this quiet spell.
    pub fn next_probe(&self, settle: &Settle) -> Option<Instant> {
        let spell = self.spell.filter(|_| !self.gone)?;
        settle.next(spell, self.passed)
    }

    /// Looks at the pane: new output starts a spell; a structural event
    /// checks it lives; a due settle point (or `force`) probes it.
    pub async fn look(
        &mut self,
        target: &Target,
        settle: &Settle,
        force: bool,
        want_idle: Option<Duration>,
    ) -> ToolResult<()> {
        if self.gone {
            return Ok(());
        }
        let feed = target.hub.panes().attention();
        let id = self.watch.id;
        let now = Instant::now();
        let end = self.watch.follower().end();
        if end != self.seen {
            self.seen = end;
            let last = self.watch.follower().pane().lock().last_output;
            self.spell = Some(last.map_or(now, Instant::from_std).min(now));
            self.passed = 0;
            self.idled = false;
        }
        if let Some(detail) = self.end_seen(target).await? {
            self.gone = true;
            feed.push(id, Reason::Exited, detail, unix_ms());
            return Ok(());
        }
        let due = self.next_probe(settle).is_some_and(|at| now >= at);
        // A program that just printed is not waiting for anything yet: the
        // probe is believed only once output settled (as wait_for_state's
        // settle points). A pane tmux paused for a flood prints on.
        let settled = !self.watch.follower().pane().lock().paused
            && self
                .spell
                .is_none_or(|spell| now.saturating_duration_since(spell) >= SETTLE[0]);
        if (force || due) && settled {
            let probe = self.look.at(target, id).await;
            if self.watch.follower().end() != self.seen {
                // Output during the probe: the next look starts a spell.
                return Ok(());
            }
            if let Some(spell) = self.spell {
                self.passed = settle.passed(spell, now);
            }
            if let Some(reason) = transition(self.activity, probe.activity) {
                let command = probe.foreground_command.clone().unwrap_or_default();
                let detail = match probe.activity {
                    // Who can answer it, and how they reach the pane.
                    Activity::Secret => format!("{command}: {}", person::reach(target, id)),
                    // The process ended after the look above: tmux tells
                    // whether the pane went, or was respawned under us.
                    Activity::Exited => self.end_seen(target).await?.unwrap_or("").to_owned(),
                    _ => command,
                };
                self.gone = reason == Reason::Exited;
                feed.push(id, reason, &detail, unix_ms());
            }
            self.activity = Some(probe.activity);
        }
        if let (Some(idle), Some(spell)) = (want_idle, self.spell)
            && !self.idled
            && now.saturating_duration_since(spell) >= idle
        {
            self.idled = true;
            feed.push(id, Reason::Idle, "", unix_ms());
        }
        Ok(())
    }
}

/// Keeps a call's sentries for the next one, for [`LINGER`], with a
/// keeper looking at them meanwhile (started if none runs).
pub async fn hand_back(
    target: &Target,
    sentries: HashMap<PaneId, Sentry>,
    settle: Settle,
    want_idle: Option<Duration>,
) {
    let armed = &target.server.armed;
    let mut kept = armed.kept.lock().await;
    for (id, sentry) in sentries {
        if sentry.gone {
            armed.depart(id, sentry.place, sentry.watch.pid);
        } else {
            kept.sentries.insert(id, sentry);
        }
    }
    kept.until = Some(Instant::now() + LINGER);
    kept.settle = settle;
    kept.want_idle = want_idle;
    if !kept.keeper && !kept.sentries.is_empty() {
        kept.keeper = true;
        target.server.tasks.spawn(keep(target.share()));
    }
}

/// The keeper: looks at the kept panes as a waiting call would (at the
/// settle points of their quiet spells, woken by the feed), so what they
/// do between calls is in the feed for the next call. Ends when none are
/// kept any more: disarmed after [`LINGER`], or the server went away.
async fn keep(target: Target) {
    let armed = &target.server.armed;
    let mut signal = target.hub.panes().attention().subscribe();
    loop {
        signal.borrow_and_update();
        let wake = {
            let mut kept = armed.kept.lock().await;
            let until = kept.until.unwrap_or_else(Instant::now);
            let alive = Instant::now() < until && look_kept(&target, armed, &mut kept).await;
            if !alive || kept.sentries.is_empty() {
                kept.sentries.clear();
                kept.keeper = false;
                return;
            }
            let settle = &kept.settle;
            let next = kept.sentries.values().filter_map(|s| s.next_probe(settle));
            next.min().map_or(until, |at| at.min(until))
        };
        tokio::select! {
            changed = signal.changed() => if changed.is_err() {
                armed.kept.lock().await.keeper = false;
                return;
            },
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
}

/// One look at every kept pane; the ended ones depart. `false` when the
/// tmux server went away.
async fn look_kept(target: &Target, armed: &Armed, kept: &mut Kept) -> bool {
    let Kept {
        sentries,
        settle,
        want_idle,
        ..
    } = kept;
    for sentry in sentries.values_mut() {
        // Another error (a slow reply) is looked at again on the next wake.
        if let Err(e) = sentry.look(target, settle, false, *want_idle).await
            && e.kind == ErrorKind::TmuxServerGone
        {
            return false;
        }
    }
    sentries.retain(|id, s| {
        if s.gone {
            armed.depart(*id, s.place, s.watch.pid);
        }
        !s.gone
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_that_need_the_agent_are_events() {
        use Activity::*;
        // First armed: what already needs the agent, not a quiet prompt.
        assert_eq!(transition(None, Input), Some(Reason::Input));
        assert_eq!(transition(None, Secret), Some(Reason::Secret));
        assert_eq!(transition(None, Exited), Some(Reason::Exited));
        assert_eq!(transition(None, Prompt), None);
        assert_eq!(transition(None, Running), None);
        // Then transitions only.
        assert_eq!(transition(Some(Running), Prompt), Some(Reason::Prompt));
        assert_eq!(transition(Some(Input), Prompt), Some(Reason::Prompt));
        assert_eq!(transition(Some(Prompt), Prompt), None);
        assert_eq!(transition(Some(Input), Input), None);
        assert_eq!(transition(Some(Input), Secret), Some(Reason::Secret));
        assert_eq!(transition(Some(Secret), Input), Some(Reason::Input));
        assert_eq!(transition(Some(Prompt), Running), None);
        assert_eq!(transition(Some(Running), Exited), Some(Reason::Exited));
    }
}
