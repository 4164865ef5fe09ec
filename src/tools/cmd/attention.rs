//! `wait_for_attention`: one wait across every pane of a scope (a
//! session, a window, a list of panes, or the whole server) that returns
//! as soon as one needs the agent, with every event since the caller's
//! `since` token.
//!
//! Events go to the server's feed ([`crate::panes::attention`]), not to
//! the call: the bell and notifications (OSC 9, 99, 777) are found in the
//! pane's stream as it is recorded, and a watched user option's change is
//! found by reading the options at the call's start and once a second
//! while it waits (a change between calls is reported by the next call,
//! with the value it finds). What the
//! process probe says (`input`, `secret`, `prompt`, `exited`, `idle`) is the call's
//! to find: it probes a pane at the settle points of its quiet spells, as
//! `wait_for_state` does, and records transitions: a program that starts
//! reading the terminal (`input`; a password prompt says `secret` in the
//! detail), a shell back at its prompt after running something
//! (`prompt`), a process that ended (`exited`), silence of `idle_ms` after
//! output (`idle`, only when asked for).
//!
//! The panes stay armed for [`LINGER`](crate::drive::attention::LINGER) after a call returns (streamed,
//! their stream listened to), and a keeper task looks at them as a
//! waiting call would, so events between two calls are kept (a command
//! that ran and ended while no call waited is a `prompt`); the next call
//! also probes each kept pane once at entry. A pane first armed while it
//! already waits for input or has exited reports that at once; one at its
//! prompt does not (nothing ran). A pane's end is reported once: a dead
//! pane kept by `remain-on-exit` is not reported again by later calls.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::config::Config;
use crate::drive::attention::{Armed, Place, Sentry, hand_back};
use crate::drive::pace::{Pace, Woke};
use crate::drive::probe::Settle;
use crate::panes::attention::{FeedEvent, Reason};
use crate::panes::registry::unix_ms;
use crate::process::Activity;
use crate::tmux::{Command, PaneId, SessionId, WindowId, format};
use crate::tools::shared::args::{default_wait_timeout, seconds};
use crate::tools::shared::lookup::{self, PaneScope, SessionSel};
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "wait_for_attention",
            Toolset::Inspect,
            "Wait For Attention",
            "Wait until any pane in scope needs you; pass back since.",
            READ,
            wait_for_attention,
        )
        .with_own_wait_ceiling(),
    );
}

/// Most panes one call watches.
pub const MAX_PANES: usize = 256;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForAttentionArgs {
    /// Default: all but idle.
    reasons: Option<Vec<Reason>>,
    /// The last answer's since: no event twice.
    since: Option<String>,
    #[serde(flatten)]
    session: SessionSel,
    window_id: Option<String>,
    pane_ids: Option<Vec<String>>,
    /// Quiet ms that count as idle (1000).
    idle_ms: Option<i64>,
    // (no schema text) Seconds to wait (capped by the server).
    #[serde(default = "default_wait_timeout")]
    timeout: f64,
}

/// Milliseconds without output that count as `idle` when none are given.
const IDLE_MS: i64 = 1000;

/// One thing a pane did that needs attention.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AttentionEvent {
    pub pane_id: PaneId,
    /// 'input', 'secret', 'prompt', 'exited', 'bell', 'notify', 'status' or 'idle'.
    pub reason: String,
    /// The program (input, prompt), the notification's text, or `@option=value`.
    pub detail: String,
    /// When it was seen, in seconds since 1970.
    pub time: f64,
}

/// The outcome of `wait_for_attention`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaitForAttentionResult {
    /// Oldest first; empty when the wait timed out.
    pub events: Vec<AttentionEvent>,
    /// Pass as `since` in the next call to get only what came after.
    pub since: String,
    /// Events after the given `since` that were no longer held (0: none lost).
    pub dropped: i64,
    /// How many panes were watched.
    pub panes: i64,
    pub elapsed_seconds: f64,
    pub effective_timeout: f64,
}

/// What a call watches: the panes of its scope now (with where they
/// are), and the closed ones it may still report.
struct Watched {
    panes: Vec<(PaneId, Place)>,
    departed: HashSet<PaneId>,
}

/// The panes of the scope the call names.
async fn scope(target: &Target, args: &WaitForAttentionArgs, armed: &Armed) -> ToolResult<Watched> {
    let mut session = None;
    let mut window = None;
    let rows = if let Some(w) = &args.window_id {
        let id = lookup::window_id(w)?;
        window = Some(id);
        lookup::panes_in(target, PaneScope::Window(id)).await?
    } else if args.session.is_given() {
        let id = lookup::session_id_of(target, &args.session).await?;
        session = Some(id);
        lookup::panes_in(target, PaneScope::Session(id.to_string())).await?
    } else {
        lookup::panes(target).await?
    };
    let mut seen = HashSet::new();
    let mut panes: Vec<(PaneId, Place)> = rows
        .into_iter()
        .filter(|r| seen.insert(r.pane_id))
        .map(|r| {
            let place = Place {
                session: r.session_id,
                window: r.window_id,
            };
            (r.pane_id, place)
        })
        .collect();
    close_unlisted(target, armed, &seen, session, window).await?;
    let departed = armed.departed.lock().expect("departed lock").clone();
    let mut gone: HashSet<PaneId> = departed
        .iter()
        .filter(|(id, d)| {
            !seen.contains(id)
                && session.is_none_or(|s| d.place.session == Some(s))
                && window.is_none_or(|w| d.place.window == Some(w))
        })
        .map(|(id, _)| *id)
        .collect();
    if let Some(wanted) = &args.pane_ids {
        let wanted: Vec<PaneId> = wanted
            .iter()
            .map(|p| lookup::pane_id(p))
            .collect::<ToolResult<_>>()?;
        let known = |p: &PaneId| seen.contains(p) || gone.contains(p);
        if let Some(missing) = wanted.iter().find(|p| !known(p)) {
            return Err(crate::tools::error::pane_not_found(&missing.to_string()));
        }
        panes.retain(|(id, _)| wanted.contains(id));
        gone.retain(|id| wanted.contains(id));
    }
    if panes.len() > MAX_PANES {
        return Err(ToolError::invalid(format!(
            "the scope has {} panes; at most {MAX_PANES} are watched at once (narrow it with session, window_id or pane_ids)",
            panes.len()
        )));
    }
    Ok(Watched {
        panes,
        departed: gone,
    })
}

/// Kept panes of the scope that closed between calls: their end is an
/// event (once), as it would have been during a call.
async fn close_unlisted(
    target: &Target,
    armed: &Armed,
    seen: &HashSet<PaneId>,
    session: Option<SessionId>,
    window: Option<WindowId>,
) -> ToolResult<()> {
    let unlisted: Vec<PaneId> = armed
        .kept
        .lock()
        .await
        .sentries
        .iter()
        .filter(|(id, s)| {
            !seen.contains(id)
                && session.is_none_or(|x| s.place.session == Some(x))
                && window.is_none_or(|x| s.place.window == Some(x))
        })
        .map(|(id, _)| *id)
        .collect();
    for id in unlisted {
        match lookup::pane_row(target, id).await {
            Ok(_) => continue, // moved out of the scope
            Err(e) if e.kind == ErrorKind::PaneNotFound || e.kind.is_pane_end() => {}
            Err(e) => return Err(e),
        }
        let gone = armed.kept.lock().await.sentries.remove(&id);
        if let Some(sentry) = gone {
            if !sentry.gone {
                let feed = target.hub.panes().attention();
                feed.push(id, Reason::Exited, "", unix_ms());
            }
            armed.depart(id, sentry.place, sentry.watch.pid);
        }
    }
    Ok(())
}

/// How often a waiting call reads the watched options. tmux sends no
/// notification when an option changes, and a subscription
/// (`refresh-client -B`) keeps per-client state that crashed tmux before
/// 3.7 once the session was killed (`protocol/tmux-control.md` §7d): a
/// read on the command client keeps nothing in tmux.
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// Reads every watched option of every pane in one query: a value that
/// differs from the one read before for an armed pane is a `status`
/// event (the first read of a pane is its baseline).
async fn read_status(
    target: &Target,
    options: &[String],
    sentries: &HashMap<PaneId, Sentry>,
) -> ToolResult<()> {
    let fields: Vec<&str> = std::iter::once("pane_id")
        .chain(options.iter().map(String::as_str))
        .collect();
    let cmd = Command::new("list-panes")
        .flag("-a")
        .opt("-F", format::template(&fields));
    let panes = target.hub.panes();
    for record in format::records(&target.run(cmd).await?, fields.len()) {
        let Some(id) = PaneId::parse(record[0].as_bytes()) else {
            continue;
        };
        if sentries.contains_key(&id) {
            for (option, value) in options.iter().zip(&record[1..]) {
                panes.status(id, option, value);
            }
        }
    }
    Ok(())
}

pub(super) async fn wait_for_attention(
    Call { app, target, ctx }: Call,
    args: WaitForAttentionArgs,
) -> ToolResult<WaitForAttentionResult> {
    let started = std::time::Instant::now();
    let idle_ms = args.idle_ms.unwrap_or(IDLE_MS);
    if idle_ms <= 0 {
        return Err(ToolError::invalid(format!(
            "idle_ms must be a positive number of milliseconds (received {idle_ms})"
        )));
    }
    let reasons = reasons_asked(args.reasons.as_deref())?;
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    let idle =
        Duration::from_millis(idle_ms as u64).min(app.config.wait_max + Duration::from_secs(1));
    let want_idle = reasons.contains(&Reason::Idle).then_some(idle);
    let settle = Settle::new(want_idle);

    let feed = target.hub.panes().attention();
    // Checked before anything is armed: a bad token costs nothing.
    let token = match &args.since {
        Some(t) => Some(t.clone()),
        None => Some(feed.token()),
    };
    if feed.read(token.as_deref(), |_| false).is_err() {
        return Err(ToolError::invalid(format!(
            "since must be a token from an earlier wait_for_attention answer (received {:?})",
            args.since.as_deref().unwrap_or_default()
        )));
    }
    let armed = &target.server.armed;
    let scope = scope(&target, &args, armed).await?;
    let (mut sentries, departed) = arm_scope(&target, armed, scope).await?;
    let options = &app.config.attention_options;
    let result = watch_all(
        &target,
        &ctx,
        options,
        &reasons,
        &settle,
        want_idle,
        token,
        &mut sentries,
        &departed,
        started,
        effective,
    )
    .await;
    hand_back(&target, sentries, settle, want_idle).await;
    result
}

/// The reasons a call asked for (all but `idle` when none were named).
fn reasons_asked(asked: Option<&[Reason]>) -> ToolResult<HashSet<Reason>> {
    Ok(match asked {
        None => [
            Reason::Input,
            Reason::Secret,
            Reason::Prompt,
            Reason::Exited,
            Reason::Bell,
            Reason::Notify,
            Reason::Status,
        ]
        .into(),
        Some([]) => {
            return Err(ToolError::invalid(
                "reasons must name at least one of input, secret, prompt, exited, bell, notify, status, idle (or be omitted for all but idle)",
            ));
        }
        Some(r) => r.iter().copied().collect(),
    })
}

/// The sentries of `scope`'s panes: kept from an earlier call, or armed
/// now; and the closed panes the call may still report. A pane closed
/// between the listing and its arming is told as `exited`, and the rest
/// are watched.
async fn arm_scope(
    target: &Target,
    armed: &Armed,
    scope: Watched,
) -> ToolResult<(HashMap<PaneId, Sentry>, HashSet<PaneId>)> {
    let mut sentries: HashMap<PaneId, Sentry> = HashMap::new();
    let mut kept = {
        let mut all = armed.kept.lock().await;
        scope
            .panes
            .iter()
            .filter_map(|(id, _)| all.sentries.remove(id).map(|s| (*id, s)))
            .collect::<HashMap<_, _>>()
    };
    let mut departed = scope.departed;
    for (id, place) in &scope.panes {
        let sentry = match kept.remove(id) {
            Some(s) => s,
            None => match Sentry::arm(target, *id, *place).await {
                Ok(mut s) => {
                    // A dead pane whose end was told (remain-on-exit keeps
                    // it listed): not told again, until a respawn. tmux
                    // 3.8 gives a dead pane no pid (0): the same end.
                    let told = armed.reported_end(*id);
                    let same = told.is_some_and(|pid| pid == s.watch.pid || s.watch.pid == 0);
                    if s.watch.dead_at_start && same {
                        s.activity = Some(Activity::Exited);
                        s.gone = true;
                    }
                    s
                }
                Err(e)
                    if e.kind == ErrorKind::PaneNotFound
                        || e.kind.is_pane_end() && e.kind != ErrorKind::TmuxServerGone =>
                {
                    if armed.reported_end(*id).is_none() {
                        let feed = target.hub.panes().attention();
                        feed.push(*id, Reason::Exited, "", unix_ms());
                        armed.depart(*id, *place, 0);
                    }
                    departed.insert(*id);
                    continue;
                }
                Err(e) => return Err(e),
            },
        };
        sentries.insert(*id, sentry);
    }
    Ok((sentries, departed))
}

#[allow(clippy::too_many_arguments)]
async fn watch_all(
    target: &Target,
    ctx: &crate::mcp::CallContext,
    options: &[String],
    reasons: &HashSet<Reason>,
    settle: &Settle,
    want_idle: Option<Duration>,
    token: Option<String>,
    sentries: &mut HashMap<PaneId, Sentry>,
    departed: &HashSet<PaneId>,
    started: std::time::Instant,
    effective: Duration,
) -> ToolResult<WaitForAttentionResult> {
    let feed = target.hub.panes().attention();
    let mut signal = feed.subscribe();
    let status = reasons.contains(&Reason::Status);
    let mut next_status = Instant::now();
    let mut pace = Pace::new(ctx, format!("{} panes", sentries.len()), started, effective);
    pace.report_start("armed");
    let mut first = true;
    loop {
        signal.borrow_and_update();
        if status && Instant::now() >= next_status {
            read_status(target, options, sentries).await?;
            next_status = Instant::now() + STATUS_EVERY;
        }
        for sentry in sentries.values_mut() {
            sentry.look(target, settle, first, want_idle).await?;
        }
        first = false;
        let batch = feed
            .read(token.as_deref(), |e: &FeedEvent| {
                // A pane's end ends its watch: told whatever was asked.
                (reasons.contains(&e.reason) || e.reason == Reason::Exited)
                    && (sentries.contains_key(&e.pane) || departed.contains(&e.pane))
            })
            .map_err(|_| ToolError::invalid("since is not a token of this server"))?;
        if !batch.events.is_empty() || pace.expired() {
            return Ok(WaitForAttentionResult {
                events: batch
                    .events
                    .into_iter()
                    .map(|e| AttentionEvent {
                        pane_id: e.pane,
                        reason: e.reason.as_str().to_owned(),
                        detail: e.detail,
                        time: e.at_ms as f64 / 1000.0,
                    })
                    .collect(),
                since: batch.token,
                dropped: batch.dropped as i64,
                panes: sentries.len() as i64,
                elapsed_seconds: pace.elapsed_seconds(),
                effective_timeout: effective.as_secs_f64(),
            });
        }
        let now = Instant::now();
        let next = sentries
            .values()
            .filter_map(|s| s.next_probe(settle))
            .chain(status.then_some(next_status))
            .min();
        let limit = next.map_or(pace.left(), |at| at.saturating_duration_since(now));
        let woke = pace
            .sleep(async {
                tokio::select! {
                    _ = signal.changed() => {}
                    _ = tokio::time::sleep(limit) => {}
                }
            })
            .await;
        if woke == Woke::Cancelled {
            return Err(ToolError::new(
                ErrorKind::Cancelled,
                "wait_for_attention was cancelled",
            ));
        }
    }
}
