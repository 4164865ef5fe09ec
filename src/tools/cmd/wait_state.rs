//! `wait_for_state`: wait until a pane needs the agent: its shell is back
//! at the prompt, its program waits for input, its process exited, it has
//! been quiet for `idle_ms`, or it rang the bell; `secret` is a program
//! waiting for a password (a line read with echo off, see
//! [`crate::process`]), which `input` does not include. `running` (a
//! foreground command runs) only when named: with `prompt`, it is how an
//! agent waits for a person to answer a password prompt.
//!
//! Event-driven like `wait_for_text`. The wait sleeps on the pane's change
//! signal (output, gaps, structural events such as a closed window), on
//! the end of the pane's process and of the foreground process (pidfds,
//! [`ExitWatch`]), and on one timer: the next settle point of the current
//! quiet spell. The process probe ([`crate::process::probe`]) runs at entry,
//! at each settle point ([`Settle`]: `SETTLE` and `idle_ms` after the last
//! output, as the attention sentries' schedule) and when a watched process
//! ends; never on a free-running timer, so a quiet
//! pane costs nothing once its settle points have passed.
//!
//! What the probe cannot see: a process that stops computing and starts
//! reading the terminal without printing anything and without a process
//! ending is noticed at the next settle point only (a question is nearly
//! always printed first, and printing restarts the settle points).
//!
//! Off Linux (or with `TMUX_MCP_PROBE=portable`) the probe reads `ps` and
//! has no pidfds: a process's end is seen by the next look. Where it can
//! list no process, it only knows whether the process lives; then tmux's
//! `pane_current_command` stands in: the pane's `default-shell` there is
//! the prompt, anything else runs, and `input` is not in
//! `observable_states`. What each probe saw is in `observable_states`
//! (macOS: no `input`).
//!
//! A pane on another host (`socket_name` `HOST:NAME`) has a pid that is
//! not this machine's: no local probe and no pidfd. tmux's view stands
//! in as above, and the pane's terminal is read there with `stty` over
//! the host's shared ssh connection ([`crate::tmux::ssh`]): echo off in
//! line mode is `secret`. Whether a program waits for input is not known
//! there (`input` is not in `observable_states`).
//!
//! `bell` comes from the pane's own output stream (see
//! [`crate::panes::bell`]); `idle` counts silence from the call's start
//! (what the pane printed before is not timed).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::config::Config;
use crate::drive::pace::{Pace, Woke};
use crate::drive::probe::{Look, Settle, ended, foreground_watch};
use crate::drive::shell::state;
use crate::drive::shell::typed::is_plumbing;
use crate::drive::since::{self, Earlier, Since};
use crate::drive::tail::{TailBuf, bounded_tail};
use crate::drive::watch::{MAX_LINE, Watch};
use crate::panes::{BellScanner, LineView};
use crate::process::{Activity, ExitWatch, Probe};
use crate::tmux::PaneId;
use crate::tools::shared::args::{default_wait_timeout, seconds};
use crate::tools::shared::lookup::{self, PaneSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "wait_for_state",
            Toolset::Inspect,
            "Wait For State",
            "Wait for a state (default: all but running); secret: a password.",
            READ,
            wait_for_state,
        )
        .with_own_wait_ceiling(),
    );
}

// A state `wait_for_state` can wait for. No doc comments here: the
// schema stays a bare string enum (the catalog is what a model pays).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AwaitedState {
    // The pane's shell is back in the foreground.
    Prompt,
    // The foreground program is blocked reading the terminal.
    Input,
    // The pane's process ended (remain-on-exit panes and closed panes).
    Exited,
    // No output for idle_ms.
    Idle,
    // The pane rang the bell.
    Bell,
    // The foreground program waits for a password (echo off).
    Secret,
    // A foreground command runs (only when asked for: it needs nobody).
    Running,
}

/// Checked in this order: the first true one is reported.
const ORDER: [AwaitedState; 7] = [
    AwaitedState::Exited,
    AwaitedState::Bell,
    AwaitedState::Secret,
    AwaitedState::Input,
    AwaitedState::Prompt,
    AwaitedState::Running,
    AwaitedState::Idle,
];

impl AwaitedState {
    fn as_str(self) -> &'static str {
        match self {
            AwaitedState::Prompt => "prompt",
            AwaitedState::Input => "input",
            AwaitedState::Exited => "exited",
            AwaitedState::Idle => "idle",
            AwaitedState::Bell => "bell",
            AwaitedState::Secret => "secret",
            AwaitedState::Running => "running",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForStateArgs {
    // (no schema text) Default: all.
    states: Option<Vec<AwaitedState>>,
    /// Quiet ms that count as idle.
    #[serde(default = "default_idle_ms")]
    idle_ms: i64,
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) Seconds to wait (capped by the server).
    #[serde(default = "default_wait_timeout")]
    timeout: f64,
    /// Cursor or 'input'.
    since: Option<String>,
}

fn default_idle_ms() -> i64 {
    1000
}

/// The outcome of `wait_for_state`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaitForStateResult {
    /// 'prompt', 'input', 'secret', 'exited', 'idle', 'bell' or 'timeout'.
    pub state: String,
    /// True unless state is 'timeout'.
    pub found: bool,
    /// What the pane's process was doing at the last look: 'prompt', 'input', 'secret', 'running' or 'exited'.
    pub activity: String,
    /// The foreground program (its command name), if known.
    pub foreground_command: Option<String>,
    pub foreground_pid: Option<i64>,
    /// The states the probe could observe here; the others are never reported.
    pub observable_states: Vec<String>,
    /// The last lines on screen (at most 20 lines / 2000 bytes).
    pub tail: Vec<String>,
    /// Output since `since` was lost (tmux no longer holds it); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_missed: Option<bool>,
    pub pane_id: PaneId,
    /// How many times the process state was read during the wait.
    pub probes: i64,
    pub elapsed_seconds: f64,
    pub effective_timeout: f64,
}

/// The states asked for, as a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wanted([bool; 7]);

impl Wanted {
    fn new(states: Option<&[AwaitedState]>) -> ToolResult<Wanted> {
        let Some(states) = states else {
            // Every state that needs the agent: not running.
            let mut all = [true; 7];
            all[AwaitedState::Running as usize] = false;
            return Ok(Wanted(all));
        };
        if states.is_empty() {
            return Err(ToolError::invalid(
                "states must name at least one of prompt, input, secret, exited, idle, bell, running (or be omitted for all but running)",
            ));
        }
        let mut set = [false; 7];
        for s in states {
            set[*s as usize] = true;
        }
        Ok(Wanted(set))
    }

    fn has(&self, state: AwaitedState) -> bool {
        self.0[state as usize]
    }
}

/// What the wait knows of the pane, and when to look again: the part of
/// `wait_for_state` that does no IO.
struct Tracker {
    wanted: Wanted,
    idle: Duration,
    /// When to probe in a quiet spell: [`SETTLE`](crate::drive::probe::SETTLE) and idle.
    settle: Settle,
    /// The start of the current quiet spell: the last output, or the call.
    quiet_since: Instant,
    /// Settle points of the current quiet spell already probed.
    passed: usize,
    probe: Probe,
    probes: u64,
    bell: bool,
    /// tmux says the pane is dead or gone.
    gone: bool,
    /// With `since`: whether the program has answered since then (see
    /// [`ProbeAnswer`]) and been probed after that; `None` without `since`.
    answered: Option<ProbeAnswer>,
}

/// Whether a program answered since a starting point: it printed a line
/// (the echo of what it was sent) and then more (its answer, or its next
/// prompt), and the probe looked after that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ProbeAnswer {
    /// Lines it printed since, the line being written counted.
    lines: usize,
    /// A probe ran after it answered.
    probed: bool,
}

impl ProbeAnswer {
    fn done(&self) -> bool {
        self.lines >= 2
    }
}

impl Tracker {
    fn new(wanted: Wanted, idle: Duration, now: Instant, probe: Probe) -> Tracker {
        Tracker {
            wanted,
            idle,
            settle: Settle::new(Some(idle)),
            quiet_since: now,
            passed: 0,
            probe,
            probes: 1,
            bell: false,
            gone: false,
            answered: None,
        }
    }

    /// The program has printed `lines` lines since the starting point
    /// (the line being written counted as one).
    fn printed(&mut self, lines: usize) {
        if let Some(answer) = &mut self.answered {
            let before = answer.done();
            answer.lines = lines;
            if answer.done() && !before {
                // The probe it is judged by must come after the answer.
                answer.probed = false;
            }
        }
    }

    /// Waiting for input (or at the prompt) counts only once the program
    /// answered since `since` and was probed after it.
    fn waits_again(&self) -> bool {
        self.answered.is_none_or(|a| a.done() && a.probed)
    }

    #[cfg(test)]
    fn points(&self) -> &[Duration] {
        self.settle.points()
    }

    /// Output came at `now`: a new quiet spell begins.
    fn output(&mut self, now: Instant) {
        self.quiet_since = now;
        self.passed = 0;
    }

    /// When the next probe of this quiet spell is due, if one is.
    fn next_probe(&self) -> Option<Instant> {
        self.settle.next(self.quiet_since, self.passed)
    }

    fn probe_due(&self, now: Instant) -> bool {
        self.next_probe().is_some_and(|at| now >= at)
    }

    /// Records a probe made at `now`: the points it covers are passed.
    fn probed(&mut self, probe: Probe, now: Instant) {
        self.passed = self.settle.passed(self.quiet_since, now);
        self.probe = probe;
        self.probes += 1;
        if let Some(answer) = &mut self.answered {
            answer.probed |= answer.done();
        }
    }

    fn is(&self, state: AwaitedState, now: Instant) -> bool {
        match state {
            AwaitedState::Exited => self.gone || self.probe.activity == Activity::Exited,
            AwaitedState::Bell => self.bell,
            AwaitedState::Input => self.probe.activity == Activity::Input && self.waits_again(),
            AwaitedState::Secret => self.probe.activity == Activity::Secret && self.waits_again(),
            AwaitedState::Prompt => self.probe.activity == Activity::Prompt && self.waits_again(),
            AwaitedState::Running => self.probe.activity == Activity::Running,
            AwaitedState::Idle => now.saturating_duration_since(self.quiet_since) >= self.idle,
        }
    }

    /// The first wanted state that holds.
    fn verdict(&self, now: Instant) -> Option<AwaitedState> {
        ORDER
            .into_iter()
            .find(|s| self.wanted.has(*s) && self.is(*s, now))
    }

    /// The states this wait can report: the probe's, plus the stream's.
    fn observable(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .probe
            .observable
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        names.extend(["idle".to_owned(), "bell".to_owned()]);
        names
    }
}

/// What ended one sleep.
enum Wake {
    /// The pane changed (output, a gap, a structural event).
    Pane,
    /// A settle point (or the sleep's bound) came.
    Timer,
    /// The pane's process or the foreground process ended.
    ProcessEnded,
}

/// The pane's own output since the call began, for the bell and the tail.
struct OwnOutput {
    cursor: u64,
    bell: BellScanner,
    view: LineView,
    tail: TailBuf,
    /// Lines completed, and bytes read, since the stream's start.
    lines: usize,
    bytes: usize,
}

impl OwnOutput {
    /// Reads what is new; returns (bytes read, bells rung).
    fn read(&mut self, watch: &Watch) -> (usize, usize) {
        let OwnOutput {
            cursor,
            bell,
            view,
            tail,
            lines,
            ..
        } = self;
        let mut rang = 0;
        let info = watch.follower().read_raw(cursor, &mut |_, chunk, gap| {
            if gap {
                bell.reset();
                view.reset();
            }
            rang += bell.feed(chunk);
            view.feed(chunk, &mut |line| {
                *lines += 1;
                if !is_plumbing(line) {
                    tail.push(line);
                }
            });
        });
        self.bytes += info.bytes;
        (info.bytes, rang)
    }
}

/// One `wait_for_state` call's view of its pane: the IO half around the
/// [`Tracker`].
struct Waiter {
    watch: Watch,
    stream: OwnOutput,
    tracker: Tracker,
    /// The pane's process, and how it is looked at.
    pid: u32,
    look: Look,
    pane_exit: Option<ExitWatch>,
    /// The foreground process (when it is not the pane's) and its end.
    fg_exit: Option<(u32, ExitWatch)>,
    /// With `since`: what was printed from it to the entry.
    earlier: Option<Earlier>,
    /// A new pane's shell may still be starting until then
    /// ([`state::before_first_prompt`]).
    starting_until: Option<std::time::Instant>,
}

impl Waiter {
    /// Starts watching the pane and looks at its process once.
    async fn start(
        target: &Target,
        sel: &PaneSel,
        wanted: Wanted,
        idle: Duration,
        started: Instant,
        since: Option<&Since>,
    ) -> ToolResult<Waiter> {
        let mut watch = watch_pane(target, sel).await?;
        watch.follower_mut().mark_seen();
        let entry = watch.follower().end();
        let earlier = match since {
            Some(since) => Some(since::earlier(target, &watch, since, entry).await?),
            None => None,
        };
        let stream = OwnOutput {
            // The recording from `since` when it holds all of it, else from
            // after what was read back (tmux's view then is the start).
            cursor: match &earlier {
                Some(e) => e.from.unwrap_or_else(|| watch.follower().end()),
                None => entry,
            },
            bell: BellScanner::new(),
            view: LineView::new(MAX_LINE),
            tail: TailBuf::default(),
            lines: 0,
            bytes: 0,
        };
        let pid = watch.pid;
        let dead = watch.dead_at_start;
        let remote = target.hub.local_socket().is_none();
        // Watch for the end before the first look, so an end in between counts.
        let pane_exit = if dead || remote {
            None
        } else {
            ExitWatch::new(pid)
        };
        let mut look = Look::new(target, pid, &watch.tty, dead);
        let entry = look.at(target, watch.id).await;
        let starting_until = match dead {
            true => None,
            false => state::starting_until(&watch, target).await,
        };
        let entry = state::before_first_prompt(&mut watch, target, starting_until, entry).await;
        let fg_exit = foreground_watch(None, &entry, pid);
        let mut tracker = Tracker::new(wanted, idle, started, entry);
        tracker.gone = dead;
        if let Some(e) = &earlier {
            // The entry probe came after what was read back.
            let lines = e.complete + usize::from(e.writing);
            tracker.answered = Some(ProbeAnswer {
                lines,
                probed: lines >= 2,
            });
        }
        Ok(Waiter {
            watch,
            stream,
            tracker,
            pid,
            look,
            pane_exit,
            fg_exit,
            earlier,
            starting_until,
        })
    }

    /// Lines printed since `since`: those read back (the line being
    /// written then is continued by the stream), then the stream's.
    fn printed_since(&self) -> usize {
        let (complete, writing) = self
            .earlier
            .as_ref()
            .map_or((0, false), |e| (e.complete, e.writing));
        let writing = if self.stream.bytes > 0 {
            !self.stream.view.partial().is_empty()
        } else {
            writing
        };
        complete + self.stream.lines + usize::from(writing)
    }

    /// Reads what is new, checks the pane after a structural event, probes
    /// when a settle point is due; returns the first wanted state that holds.
    async fn look(&mut self, target: &Target) -> ToolResult<Option<AwaitedState>> {
        self.watch.follower_mut().mark_seen();
        let now = Instant::now();
        let (bytes, rang) = self.stream.read(&self.watch);
        if bytes > 0 {
            self.tracker.output(now);
            let lines = self.printed_since();
            self.tracker.printed(lines);
        }
        self.tracker.bell |= rang > 0;
        if let Err(e) = self.watch.check_alive(target).await {
            if !e.kind.is_pane_end() || !self.tracker.wanted.has(AwaitedState::Exited) {
                return Err(e);
            }
            self.tracker.gone = true;
        }
        if self.tracker.probe_due(now) && !self.tracker.gone {
            self.probe(target, now).await;
        }
        Ok(self.tracker.verdict(now))
    }

    async fn probe(&mut self, target: &Target, now: Instant) {
        let probe = self.look.at(target, self.watch.id).await;
        let probe =
            state::before_first_prompt(&mut self.watch, target, self.starting_until, probe).await;
        self.fg_exit = foreground_watch(self.fg_exit.take(), &probe, self.pid);
        self.tracker.probed(probe, now);
    }

    /// Sleeps until the pane changes, a watched process ends, the next
    /// settle point, the deadline or a cancellation.
    async fn sleep(&mut self, pace: &mut Pace) -> Woke<Wake> {
        let now = Instant::now();
        let limit = self
            .tracker
            .next_probe()
            .map_or(pace.left(), |at| at.saturating_duration_since(now));
        let pane_end = self.pane_exit.as_ref();
        let fg_end = self.fg_exit.as_ref().map(|(_, w)| w);
        let watch = &mut self.watch;
        pace.sleep(async {
            tokio::select! {
                changed = watch.changed(limit) => if changed { Wake::Pane } else { Wake::Timer },
                _ = ended(pane_end) => Wake::ProcessEnded,
                _ = ended(fg_end) => Wake::ProcessEnded,
            }
        })
        .await
    }

    /// A watched process ended: its watch is dropped (it would wake every
    /// sleep from here on), then the pane is looked at.
    async fn process_ended(&mut self, target: &Target) {
        self.pane_exit = self.pane_exit.take().filter(|w| !w.has_exited());
        self.fg_exit = self.fg_exit.take().filter(|(_, w)| !w.has_exited());
        self.probe(target, Instant::now()).await;
    }

    async fn result(&mut self, state: Option<AwaitedState>, pace: &Pace) -> WaitForStateResult {
        let Waiter {
            tracker,
            stream,
            watch,
            ..
        } = self;
        // The screen shows the question an agent must answer; a closed pane
        // has none, and its last streamed lines stand in.
        let screen = if tracker.gone {
            None
        } else {
            watch.capture(&["-J"]).await.ok().map(|(rows, _)| rows)
        };
        let tail = match screen {
            Some(rows) => bounded_tail(&rows),
            None => stream.tail.with_partial(stream.view.partial()),
        };
        let probe = &tracker.probe;
        let exited = state == Some(AwaitedState::Exited);
        WaitForStateResult {
            state: state.map_or("timeout", AwaitedState::as_str).to_owned(),
            found: state.is_some(),
            activity: if exited {
                "exited"
            } else {
                probe.activity.as_str()
            }
            .to_owned(),
            foreground_command: probe.foreground_command.clone().filter(|_| !exited),
            foreground_pid: probe.foreground_pid.filter(|_| !exited).map(i64::from),
            observable_states: tracker.observable(),
            tail,
            lines_missed: self
                .earlier
                .as_ref()
                .is_some_and(|e| e.missed)
                .then_some(true),
            pane_id: watch.id,
            probes: tracker.probes as i64,
            elapsed_seconds: pace.elapsed_seconds(),
            effective_timeout: pace.effective().as_secs_f64(),
        }
    }
}

pub(super) async fn wait_for_state(
    Call { app, target, ctx }: Call,
    args: WaitForStateArgs,
) -> ToolResult<WaitForStateResult> {
    let started = std::time::Instant::now();
    let wanted = Wanted::new(args.states.as_deref())?;
    if args.idle_ms <= 0 {
        return Err(ToolError::invalid(format!(
            "idle_ms must be a positive number of milliseconds (received {})",
            args.idle_ms
        )));
    }
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    // Longer than any wait can last, an idle never comes: capped there, no
    // deadline computed from it can overflow.
    let idle = Duration::from_millis(args.idle_ms as u64)
        .min(app.config.wait_max + Duration::from_secs(1));
    let from = Since::parse(args.since.as_deref())?;
    let since = Instant::from_std(started);
    let mut waiter = Waiter::start(&target, &args.pane, wanted, idle, since, from.as_ref()).await?;
    let mut pace = Pace::new(
        &ctx,
        format!("pane {}", waiter.watch.id),
        started,
        effective,
    );
    pace.report_start("armed");
    loop {
        if let Some(state) = waiter.look(&target).await? {
            return Ok(waiter.result(Some(state), &pace).await);
        }
        if pace.expired() {
            return Ok(waiter.result(None, &pace).await);
        }
        match waiter.sleep(&mut pace).await {
            Woke::Cancelled => {
                return Err(ToolError::new(
                    ErrorKind::Cancelled,
                    "wait_for_state was cancelled",
                ));
            }
            Woke::Changed(Wake::ProcessEnded) => waiter.process_ended(&target).await,
            Woke::Changed(Wake::Pane | Wake::Timer) | Woke::Tick | Woke::Deadline => {}
        }
    }
}

/// Resolves the pane a call means and starts watching it.
async fn watch_pane(target: &Target, sel: &PaneSel) -> ToolResult<Watch> {
    let id = lookup::resolve_pane(target, sel).await?;
    Watch::start(target, id).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process;

    fn probe(activity: Activity) -> Probe {
        Probe {
            activity,
            foreground_pid: Some(7),
            foreground_command: Some("x".into()),
            observable: process::OBSERVE_ALL,
        }
    }

    fn tracker(states: &[AwaitedState], idle_ms: u64, at: Instant, now: Activity) -> Tracker {
        let wanted = Wanted::new(Some(states)).unwrap();
        Tracker::new(wanted, Duration::from_millis(idle_ms), at, probe(now))
    }

    #[test]
    fn probes_run_at_the_settle_points_of_a_quiet_spell_then_stop() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut t = tracker(&[AwaitedState::Input], 1000, t0, Activity::Running);
        let mut at = Vec::new();
        while let Some(next) = t.next_probe() {
            at.push(next.duration_since(t0).as_millis());
            t.probed(probe(Activity::Running), next);
        }
        assert_eq!(at, [20, 100, 500, 1000]);
        assert!(!t.probe_due(ms(100_000)), "no probe once the spell is old");
        // Output starts a new spell; a late wake covers the points it passed.
        t.output(ms(5000));
        assert_eq!(t.next_probe(), Some(ms(5020)));
        t.probed(probe(Activity::Running), ms(5400));
        assert_eq!(t.next_probe(), Some(ms(5500)));
        assert_eq!(t.probes, 1 + 4 + 1);
    }

    #[test]
    fn an_idle_shorter_than_a_settle_point_is_one_of_them() {
        let t0 = Instant::now();
        let t = tracker(&[AwaitedState::Idle], 50, t0, Activity::Running);
        assert_eq!(
            t.points(),
            [20, 50, 100, 500].map(Duration::from_millis).to_vec()
        );
    }

    #[test]
    fn the_first_wanted_state_that_holds_wins() {
        let t0 = Instant::now();
        let all = [
            AwaitedState::Prompt,
            AwaitedState::Input,
            AwaitedState::Exited,
            AwaitedState::Idle,
            AwaitedState::Bell,
        ];
        let mut t = tracker(&all, 1000, t0, Activity::Prompt);
        assert_eq!(t.verdict(t0), Some(AwaitedState::Prompt), "true at entry");
        t.bell = true;
        assert_eq!(t.verdict(t0), Some(AwaitedState::Bell));
        t.gone = true;
        assert_eq!(t.verdict(t0), Some(AwaitedState::Exited));
        let mut t = tracker(
            &[AwaitedState::Idle, AwaitedState::Input],
            1000,
            t0,
            Activity::Running,
        );
        assert_eq!(t.verdict(t0 + Duration::from_millis(999)), None);
        assert_eq!(
            t.verdict(t0 + Duration::from_secs(1)),
            Some(AwaitedState::Idle)
        );
        t.output(t0 + Duration::from_millis(900));
        assert_eq!(
            t.verdict(t0 + Duration::from_secs(1)),
            None,
            "output restarts idle"
        );
        t.probed(probe(Activity::Input), t0 + Duration::from_secs(1));
        assert_eq!(
            t.verdict(t0 + Duration::from_secs(1)),
            Some(AwaitedState::Input)
        );
        // Running is never a state to wait for.
        let t = tracker(&[AwaitedState::Prompt], 1000, t0, Activity::Running);
        assert_eq!(t.verdict(t0 + Duration::from_secs(60)), None);
    }

    #[test]
    fn since_a_start_waiting_counts_once_it_answered_and_was_probed_after() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut t = tracker(&[AwaitedState::Input], 1000, t0, Activity::Input);
        t.answered = Some(ProbeAnswer::default());
        assert_eq!(t.verdict(t0), None, "still reading the keys just sent");
        t.printed(1);
        assert_eq!(t.verdict(t0), None, "only the echo of the keys");
        t.probed(probe(Activity::Running), ms(20));
        t.printed(2);
        t.probed(probe(Activity::Running), ms(40));
        assert_eq!(t.verdict(ms(40)), None, "answered, still running");
        t.probed(probe(Activity::Input), ms(60));
        assert_eq!(t.verdict(ms(60)), Some(AwaitedState::Input));
        // A probe from before the answer does not count.
        let mut t = tracker(&[AwaitedState::Input], 1000, t0, Activity::Input);
        t.answered = Some(ProbeAnswer::default());
        t.printed(3);
        assert_eq!(t.verdict(t0), None);
        t.probed(probe(Activity::Input), ms(20));
        assert_eq!(t.verdict(ms(20)), Some(AwaitedState::Input));
    }

    #[test]
    fn observable_states_add_the_streams_own() {
        let t0 = Instant::now();
        let mut t = tracker(&[AwaitedState::Bell], 1000, t0, Activity::Prompt);
        assert_eq!(
            t.observable(),
            [
                "prompt", "input", "secret", "running", "exited", "idle", "bell"
            ]
        );
        t.probe.observable = process::OBSERVE_EXITED;
        assert_eq!(t.observable(), ["exited", "idle", "bell"]);
        assert!(Wanted::new(Some(&[])).is_err());
    }

    #[test]
    fn running_is_reported_only_when_named() {
        let t0 = Instant::now();
        let all = Wanted::new(None).unwrap();
        let t = Tracker::new(
            all,
            Duration::from_millis(1000),
            t0,
            probe(Activity::Running),
        );
        assert_eq!(t.verdict(t0), None);
        let t = tracker(
            &[AwaitedState::Prompt, AwaitedState::Running],
            1000,
            t0,
            Activity::Running,
        );
        assert_eq!(t.verdict(t0), Some(AwaitedState::Running));
        let t = tracker(
            &[AwaitedState::Prompt, AwaitedState::Running],
            1000,
            t0,
            Activity::Secret,
        );
        assert_eq!(t.verdict(t0), None);
    }
}
