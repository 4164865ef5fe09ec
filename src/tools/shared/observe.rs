//! Reading a pane's output as it happens: the shared machinery of
//! `wait_for_text`, `run_command` and `capture_since`.
//!
//! A [`Watch`] is the IO half of a wait: it makes sure a pane's output is
//! recorded (the pane is watched and the control client attached to its
//! session streams it), captures the screen at an exact sync point, and
//! checks with tmux that the pane still lives after a structural event. The
//! IO-free half, reading the recording from a cursor and sleeping on the
//! pane's change signal, is its [`Follower`]: nothing polls.
//!
//! A server streams at most `Limits::streaming_clients` sessions at once. A
//! wait that can match the screen ([`Watch::start_deferrable`]) does not
//! queue for a slot: it arms at once with a capture on the command client,
//! and streams as soon as a slot frees; the late start is a gap, after
//! which the screen's new rows are matched.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use crate::panes::Follower;
use crate::panes::anchor::{self, Anchor, Line, Located, SLACK};
use crate::tmux::TmuxError;
use crate::tmux::format::Schema;
use crate::tmux::hub::{Hub, Stream};
use crate::tmux::quiet::Need;
use crate::tmux::{Command, PaneId, SessionId};
use crate::tools::error::pane_not_found;
use crate::tools::shared::capture::trimmed_lines;
use crate::tools::shared::lookup;
use crate::tools::{ErrorKind, Target, ToolError, ToolResult};

/// Longest line a matcher keeps; longer lines are cut into pieces.
pub const MAX_LINE: usize = 64 * 1024;

/// A pane whose output is being recorded, and the client streaming it.
pub struct Watch {
    pub id: PaneId,
    /// The client streaming the pane, and the lease that keeps it streamed;
    /// `None` while a deferred watch waits for a streaming slot.
    stream: Option<Stream>,
    /// What the holder needs of the stream, applied when it starts.
    need: Need,
    /// A deferred watch has just started streaming: output before was not
    /// recorded ([`Watch::check_alive`] reports it once).
    streamed_late: bool,
    pub session: SessionId,
    /// The pane's foreground command when the watch began (its shell, when
    /// it sits at a prompt).
    pub command: String,
    /// The pane's size and cursor when the watch began.
    pub geometry: Geometry,
    /// The pane was on the alternate screen when the watch began.
    pub alternate_at_start: bool,
    /// The pane's process when the watch began (0 if tmux gave none): a
    /// respawn keeps the pane id and changes it.
    pub pid: u32,
    /// The pane's terminal (`pane_tty`) when the watch began; empty if
    /// tmux gave none.
    pub tty: String,
    /// The pane's process had ended when the watch began (remain-on-exit
    /// kept the pane): `pid` may belong to another process by now.
    pub dead_at_start: bool,
    /// [`Watch::process_ended`] has told that `pid` ended.
    process_gone: bool,
    follower: Follower,
    hub: Arc<Hub>,
    command_timeout: Duration,
}

/// How a watch begins streaming its pane.
#[derive(Clone, Copy)]
enum Begin {
    /// Once tmux has run the pane's `continue`.
    Streamed,
    /// The same, or not yet when no streaming slot is free.
    Deferrable,
    /// With the `continue` in flight (see [`Watch::start_typing`]).
    Typing,
}

/// A pane's size and cursor position, in cells.
#[derive(Clone, Copy, Debug, Default)]
pub struct Geometry {
    pub width: usize,
    pub height: usize,
    pub cursor_x: usize,
}

impl Watch {
    /// Starts (or joins) the recording of `id`'s output.
    pub async fn start(target: &Target, id: PaneId) -> ToolResult<Watch> {
        Watch::begin(target, id, Begin::Streamed).await
    }

    /// [`Watch::start`] for a caller that will type into the pane: the
    /// stream's `continue` is in flight when this returns, and
    /// [`Watch::unpaused`] must have returned before the input is sent.
    pub async fn start_typing(target: &Target, id: PaneId) -> ToolResult<Watch> {
        Watch::begin(target, id, Begin::Typing).await
    }

    /// Returns once tmux streams the pane to us (see [`Watch::start_typing`]).
    /// A client gone meanwhile is replaced: what came before is a gap.
    pub async fn unpaused(&mut self, target: &Target) -> ToolResult<()> {
        let Some(stream) = &mut self.stream else {
            return Ok(());
        };
        let limit = self.command_timeout;
        match tokio::time::timeout(limit, stream.lease.unpaused()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) if stream.client.is_closed() => {
                let stream = target.hub.stream(self.session, self.id).await?;
                self.streamed(stream);
                Ok(())
            }
            Ok(Err(e)) => Err(e.into()),
            Err(_) => Err(TmuxError::Timeout(limit).into()),
        }
    }

    /// [`Watch::start`] for a wait that matches the screen after a gap:
    /// with every streaming slot busy it starts unstreamed (see the module
    /// docs) instead of waiting for one.
    pub async fn start_deferrable(target: &Target, id: PaneId) -> ToolResult<Watch> {
        Watch::begin(target, id, Begin::Deferrable).await
    }

    async fn begin(target: &Target, id: PaneId, how: Begin) -> ToolResult<Watch> {
        if let Begin::Typing = how {
            return Watch::begin_typing(target, id).await;
        }
        let (session, described) = describe(target, id).await?;
        // Streamed (unpaused) before anything is captured: the capture's
        // sync point then splits the output exactly.
        let stream = match how {
            Begin::Deferrable => target.hub.try_stream(session, id).await?,
            _ => Some(target.hub.stream(session, id).await?),
        };
        Ok(Watch::new(target, id, session, described, stream))
    }

    /// [`Watch::start_typing`]: a pane recorded before is streamed on the
    /// session it was in then, while it is described; one that moved to
    /// another session meanwhile is streamed on its own session's client
    /// once the description says so.
    async fn begin_typing(target: &Target, id: PaneId) -> ToolResult<Watch> {
        let hub = &target.hub;
        let recorded = hub.panes().get(id).map(|pane| pane.lock().session);
        let early = async {
            match recorded {
                Some(session) if hub.streams_session(session) => {
                    Some(hub.stream_when(session, id, false).await)
                }
                _ => None,
            }
        };
        let (described, early) = tokio::join!(describe(target, id), early);
        let (session, described) = described?;
        let stream = match early {
            Some(Ok(stream)) if recorded == Some(session) => stream,
            _ => hub.stream_when(session, id, false).await?,
        };
        Ok(Watch::new(target, id, session, described, Some(stream)))
    }

    fn new(
        target: &Target,
        id: PaneId,
        session: SessionId,
        described: Described,
        stream: Option<Stream>,
    ) -> Watch {
        let follower = Follower::new(target.hub.panes().watch(id, session));
        Watch {
            id,
            stream,
            need: Need::Exact,
            streamed_late: false,
            session,
            command: described.command,
            geometry: described.geometry,
            alternate_at_start: described.alternate,
            pid: described.pid,
            tty: described.tty,
            dead_at_start: described.dead,
            process_gone: false,
            follower,
            hub: target.hub.clone(),
            command_timeout: target.hub.limits().tmux_command_timeout,
        }
    }

    /// The wait only matches the screen after a gap: a flood may be paused
    /// (see `tmux::quiet`) rather than streamed byte for byte.
    pub fn tolerate_gaps(&mut self) {
        self.need = Need::Screen;
        if let Some(stream) = &mut self.stream {
            stream.lease.need(Need::Screen);
        }
    }

    /// Streams the pane on `session`'s client from now on; what came
    /// before is a gap (the follower sees it, and the caller re-reads the
    /// screen).
    fn streamed(&mut self, mut stream: Stream) {
        stream.lease.need(self.need);
        self.stream = Some(stream);
        let panes = self.hub.panes();
        self.follower.follow(panes.watch(self.id, self.session));
    }

    /// Which recording of the pane this is: cursors from another one are
    /// not to be trusted.
    pub fn epoch(&self) -> u64 {
        self.follower.pane().epoch
    }

    /// Reads the pane's size, cursor and foreground command again.
    pub async fn refresh_geometry(&mut self, target: &Target) -> ToolResult<()> {
        let described = describe(target, self.id).await?.1;
        self.geometry = described.geometry;
        self.command = described.command;
        Ok(())
    }

    /// Runs `capture-pane` of this pane on the streaming client and returns
    /// the captured lines with the exact sync point: the ring offset at the
    /// reply's `%begin`.
    ///
    /// When the streaming client went away (a user's `detach-client`, an
    /// idle detach racing this call), the pane is streamed on a fresh one
    /// and captured again: a capture changes nothing, so it may be repeated.
    pub async fn capture(&mut self, flags: &[&'static str]) -> ToolResult<(Vec<String>, u64)> {
        let mut cmd = Command::new("capture-pane").flag("-p");
        for flag in flags {
            cmd = cmd.flag(flag);
        }
        let cmd = cmd.target(self.id);
        let limit = self.command_timeout;
        let mut attempts = 1;
        let (lines, position) = loop {
            let Some(stream) = &self.stream else {
                // Not streamed yet: the screen now, with no sync point.
                break (self.hub.run(&cmd).await?, None);
            };
            let run = stream.client.run_synced(&cmd, self.id);
            match tokio::time::timeout(limit, run).await {
                Err(_) => return Err(TmuxError::NotResponding(limit).into()),
                Ok(Err(TmuxError::Disconnected | TmuxError::NotSent)) if attempts < 3 => {
                    attempts += 1;
                    let stream = self.hub.stream(self.session, self.id).await?;
                    self.streamed(stream);
                }
                Ok(reply) => {
                    let synced = reply?;
                    break (synced.reply.lines, synced.position);
                }
            }
        };
        let position = position.unwrap_or_else(|| self.end());
        Ok((trimmed_lines(&lines), position))
    }

    /// Sleeps until the pane changes (output, a gap, a structural event) or
    /// `limit` passes. Returns false on timeout.
    pub async fn changed(&mut self, limit: Duration) -> bool {
        if self.stream.is_some() {
            return tokio::time::timeout(limit, self.follower.next_change())
                .await
                .is_ok();
        }
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let hub = self.hub.clone();
            let freed = hub.slot_freed();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match hub.try_stream(self.session, self.id).await {
                Ok(Some(stream)) => {
                    self.streamed(stream);
                    // What the pane printed unstreamed was not recorded:
                    // the next check says so, and the screen is matched.
                    self.streamed_late = true;
                    return true;
                }
                Ok(None) => {}
                Err(e) => eprintln!("tmux-mcp: streaming pane {} failed: {e}", self.id),
            }
            tokio::select! {
                _ = self.follower.next_change() => return true,
                _ = freed => {}
                _ = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }

    /// After a structural event (a window closed, the client went away),
    /// or once the pane's process has ended (a respawn sends no event),
    /// checks that the pane still lives, with the same process, and is
    /// still streamed. `Ok(true)`: it had to be streamed again, so output
    /// in between may be lost. `Err` says what happened in words an agent
    /// can act on. Sends nothing to tmux when nothing happened.
    pub async fn check_alive(&mut self, target: &Target) -> ToolResult<bool> {
        if std::mem::take(&mut self.streamed_late) {
            return Ok(true);
        }
        let orphaned = match self.follower.structural_change() {
            Some(orphaned) => orphaned,
            None if self.process_ended(target) => false,
            None => return Ok(false),
        };
        let cmd = Command::new("display-message")
            .flag("-p")
            .target(self.id)
            .arg(LIVENESS.template());
        let lines = match target.hub.run(&cmd).await {
            Ok(lines) => lines,
            Err(crate::tmux::TmuxError::NoServer(_)) => {
                return Err(ToolError::new(
                    ErrorKind::TmuxServerGone,
                    "the tmux server went away while waiting",
                ));
            }
            Err(e) => return Err(e.into()),
        };
        let found = LIVENESS.parse(&lines).into_iter().next();
        match found.filter(|r| r.pane == Some(self.id)) {
            None => Err(ToolError::new(
                ErrorKind::PaneGone,
                format!("pane {} was closed while waiting", self.id),
            )),
            Some(r) if self.pid != 0 && r.pid != 0 && r.pid != self.pid => Err(ToolError::new(
                ErrorKind::PaneRespawned,
                format!(
                    "pane {} was respawned while waiting: a new process runs in it",
                    self.id
                ),
            )),
            Some(r) if r.dead => Err(ToolError::new(
                ErrorKind::PaneDead,
                format!(
                    "pane {} exited while waiting (exit status {})",
                    self.id,
                    if r.status.is_empty() {
                        "unknown"
                    } else {
                        &r.status
                    }
                ),
            )),
            Some(r) => {
                // The streaming client went away, or the pane moved to
                // another session (tmux streams a pane only to clients of its
                // own session): stream it again. Output in between is lost,
                // and the ring says so.
                let session = r.session.unwrap_or(self.session);
                if !orphaned && session == self.session {
                    return Ok(false);
                }
                self.session = session;
                let stream = target.hub.stream(session, self.id).await?;
                // With the need it had (a wait that tolerates gaps stays so).
                self.streamed(stream);
                Ok(true)
            }
        }
    }

    /// The process the pane ran when the watch began has ended, while no
    /// structural event said so: a respawn, or an exit that remain-on-exit
    /// keeps. Told once, by one system call (a pane on this machine only).
    fn process_ended(&mut self, target: &Target) -> bool {
        let local = target.hub.local_socket().is_some();
        if self.process_gone || !local || self.dead_at_start || self.pid == 0 {
            return false;
        }
        self.process_gone = crate::process::has_ended(self.pid);
        self.process_gone
    }
}

/// A watch reads and marks what it has seen as its [`Follower`] does.
impl Deref for Watch {
    type Target = Follower;
    fn deref(&self) -> &Follower {
        &self.follower
    }
}

impl DerefMut for Watch {
    fn deref_mut(&mut self) -> &mut Follower {
        &mut self.follower
    }
}

/// What [`Watch::check_alive`] asks tmux of a pane.
#[derive(Default)]
struct Liveness {
    pane: Option<PaneId>,
    /// 0 when tmux gave none.
    pid: u32,
    dead: bool,
    status: String,
    session: Option<SessionId>,
}

const LIVENESS: Schema<Liveness> = Schema(&[
    ("pane_id", |r, v| r.pane = PaneId::parse(v.as_bytes())),
    ("pane_pid", |r, v| r.pid = v.parse().unwrap_or(0)),
    ("pane_dead", |r, v| r.dead = v == "1"),
    ("pane_dead_status", |r, v| r.status = v.into()),
    ("session_id", |r, v| {
        r.session = SessionId::parse(v.as_bytes())
    }),
]);

/// What a watch needs to know of its pane when it begins: its session,
/// foreground command, size and cursor, screen and process (and whether
/// that has ended).
#[derive(Default)]
struct Described {
    pane: Option<PaneId>,
    session: Option<SessionId>,
    command: String,
    geometry: Geometry,
    alternate: bool,
    /// 0 when tmux gave none.
    pid: u32,
    tty: String,
    dead: bool,
}

const DESCRIBED: Schema<Described> = Schema(&[
    ("pane_id", |d, v| d.pane = PaneId::parse(v.as_bytes())),
    ("session_id", |d, v| {
        d.session = SessionId::parse(v.as_bytes())
    }),
    ("pane_current_command", |d, v| d.command = v.into()),
    ("pane_width", |d, v| {
        d.geometry.width = v.parse().unwrap_or(0)
    }),
    ("pane_height", |d, v| {
        d.geometry.height = v.parse().unwrap_or(0)
    }),
    ("cursor_x", |d, v| {
        d.geometry.cursor_x = v.parse().unwrap_or(0)
    }),
    ("alternate_on", |d, v| d.alternate = v == "1"),
    ("pane_pid", |d, v| d.pid = v.parse().unwrap_or(0)),
    ("pane_tty", |d, v| d.tty = v.into()),
    ("pane_dead", |d, v| d.dead = v == "1"),
]);

/// The pane's session and description, or "no such pane".
async fn describe(target: &Target, id: PaneId) -> ToolResult<(SessionId, Described)> {
    let lines = target
        .run(
            Command::new("display-message")
                .flag("-p")
                .target(id)
                .arg(DESCRIBED.template()),
        )
        .await?;
    DESCRIBED
        .parse(&lines)
        .into_iter()
        .next()
        .filter(|d| d.pane == Some(id))
        .and_then(|d| Some((d.session?, d)))
        .ok_or_else(|| pane_not_found(&id.to_string()))
}

/// Resolves the pane a call means and starts watching it.
pub async fn watch_pane(target: &Target, sel: &lookup::PaneSel) -> ToolResult<Watch> {
    let id = lookup::resolve_pane(target, sel).await?;
    Watch::start(target, id).await
}

// ------------------------------------------------------------ reading back

/// A pane's state as a read-back needs it: who it is (the tmux server's
/// pid, the pane's process), its rows and whether history can be trimmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    pane: Option<PaneId>,
    /// The tmux server's process id: a cursor names its server by it.
    pub server: u32,
    pub pid: u32,
    /// Rows of history held now.
    pub history: u64,
    pub limit: u64,
    pub height: u64,
    pub width: usize,
    pub alternate: bool,
    /// The cursor's row on the screen.
    pub cursor_y: u64,
}

const ROWS: Schema<Rows> = Schema(&[
    ("pane_id", |r, v| r.pane = PaneId::parse(v.as_bytes())),
    ("pid", |r, v| r.server = v.parse().unwrap_or(0)),
    ("pane_pid", |r, v| r.pid = v.parse().unwrap_or(0)),
    ("history_size", |r, v| r.history = v.parse().unwrap_or(0)),
    ("history_limit", |r, v| r.limit = v.parse().unwrap_or(0)),
    ("pane_height", |r, v| r.height = v.parse().unwrap_or(0)),
    ("pane_width", |r, v| r.width = v.parse().unwrap_or(0)),
    ("alternate_on", |r, v| r.alternate = v == "1"),
    ("cursor_y", |r, v| r.cursor_y = v.parse().unwrap_or(0)),
]);

fn rows_command(id: PaneId) -> Command {
    Command::new("display-message")
        .flag("-p")
        .target(id)
        .arg(ROWS.template())
}

fn parse_rows(reply: &[Vec<u8>], id: PaneId) -> ToolResult<Rows> {
    ROWS.parse(reply)
        .into_iter()
        .find(|r| r.pane == Some(id))
        .ok_or_else(|| pane_not_found(&id.to_string()))
}

/// The pane's rows now, on the command client (no stream is needed).
pub async fn rows(target: &Target, id: PaneId) -> ToolResult<Rows> {
    parse_rows(&target.run(rows_command(id)).await?, id)
}

/// Runs `commands` on the command client together ([`Hub::run_together`]).
async fn run_together(target: &Target, commands: Vec<Command>) -> Vec<ToolResult<Vec<Vec<u8>>>> {
    let replies = target.hub.run_together(&commands).await;
    replies
        .into_iter()
        .map(|r| r.map_err(ToolError::from))
        .collect()
}

fn capture_command(id: PaneId, state: &Rows, from: Option<u64>, to: Option<u64>) -> Command {
    // `-S`/`-E` count from the top of the screen: relative to the history
    // size `state` saw.
    let relative = |row: u64| {
        (row.min(state.history + state.height) as i64 - state.history as i64).to_string()
    };
    let cmd = Command::new("capture-pane").flag("-p").flag("-J");
    let cmd = match from {
        Some(row) => cmd.opt("-S", relative(row)),
        None => cmd.opt("-S", "-"),
    };
    let cmd = match to {
        Some(row) => cmd.opt("-E", relative(row)),
        None => cmd.opt("-E", "-"),
    };
    cmd.target(id)
}

/// The absolute row (in `after`'s frame) a capture asked for at `from`
/// (in `state`'s frame) started on: tmux resolved `-S` against the history
/// size when it ran, which is `after`'s when the two ran together.
fn first_row(state: &Rows, after: &Rows, from: Option<u64>) -> u64 {
    let Some(row) = from else { return 0 };
    let relative = row.min(state.history + state.height) as i64 - state.history as i64;
    (after.history as i64 + relative).clamp(0, (after.history + after.height) as i64) as u64
}

/// Logical lines (`-J`) from absolute row `from` (in `state`'s frame;
/// `None`: the oldest row held) to the bottom of the screen, captured
/// together with the pane's rows: the lines, numbered in the frame of
/// those rows, and the rows. One capture, no retry: where the rows moved
/// between `state` and the capture, the lines say where they are now.
async fn capture_from(
    target: &Target,
    id: PaneId,
    state: &Rows,
    from: Option<u64>,
) -> ToolResult<(Vec<Line>, Rows)> {
    let mut replies = run_together(
        target,
        vec![capture_command(id, state, from, None), rows_command(id)],
    )
    .await
    .into_iter();
    let (Some(captured), Some(after)) = (replies.next(), replies.next()) else {
        unreachable!("two commands, two replies")
    };
    let (captured, after) = (captured?, parse_rows(&after?, id)?);
    let first = first_row(state, &after, from);
    Ok((anchor::lines(&captured, first, after.width), after))
}

/// How uncertain the rows of a capture are because the pane's rows moved
/// between `state` and `after`: exact when they did not (a looser search
/// would find the wrong one of many equal lines, a prompt), else by
/// [`SLACK`] (the capture and `after`, sent together, as a rule ran in
/// one go).
fn moved(state: &Rows, after: &Rows) -> u64 {
    if after.history == state.history {
        0
    } else {
        SLACK
    }
}

/// What was printed after an anchor, read back from tmux.
pub struct ReadBack {
    /// The new logical lines, oldest first, with their rows now.
    pub lines: Vec<Line>,
    /// Output was lost: tmux no longer holds it (or the pane is not the
    /// one the anchor was taken in).
    pub missed: bool,
    /// At least this many lines are gone, when that is known.
    pub missing: Option<u64>,
    /// Where the reader is when no line is new: the anchor, moved as
    /// tmux's rows moved.
    pub anchor: Anchor,
    pub rows: Rows,
}

/// The visible screen as new lines, anchored after its last line.
pub async fn read_screen(target: &Target, id: PaneId) -> ToolResult<ReadBack> {
    let state = rows(target, id).await?;
    screen_of(target, id, &state).await
}

async fn screen_of(target: &Target, id: PaneId, state: &Rows) -> ToolResult<ReadBack> {
    let (lines, rows) = capture_from(target, id, state, Some(state.history)).await?;
    Ok(ReadBack {
        anchor: anchor::anchor_after(&lines, rows.history),
        lines,
        missed: false,
        missing: None,
        rows,
    })
}

/// Which of `rows` (where an anchored line can be now, nearest first)
/// holds `anchor`: each looked at by a small capture of its own, all sent
/// together with the pane's rows. `Some(None)`: none does; `None`: the
/// rows moved meanwhile, so the answer proves nothing.
async fn probe(
    target: &Target,
    id: PaneId,
    state: &Rows,
    anchor: &Anchor,
    candidates: &[u64],
) -> ToolResult<Option<Option<u64>>> {
    let span = (anchor.len as u64)
        .div_ceil(state.width.max(1) as u64)
        .max(1);
    let mut commands: Vec<Command> = candidates
        .iter()
        .map(|&row| {
            let from = row.saturating_sub(SLACK);
            capture_command(id, state, Some(from), Some(row + span + SLACK))
        })
        .collect();
    commands.push(rows_command(id));
    let mut replies = run_together(target, commands).await;
    let after = parse_rows(&replies.pop().expect("the rows' reply")?, id)?;
    if after.history != state.history || after.server != state.server || after.pid != state.pid {
        return Ok(None);
    }
    for (&row, captured) in candidates.iter().zip(replies) {
        let lines = anchor::lines(&captured?, row.saturating_sub(SLACK), state.width);
        let slack = anchor::uncertainty(&lines);
        if let anchor::Found::At { .. } = anchor::find_within(&lines, anchor, row, slack) {
            return Ok(Some(Some(row)));
        }
    }
    Ok(Some(None))
}

/// Every line printed in pane `id` after `anchor` (taken in tmux server
/// `server`, pane process `pid`), read back from the pane's history and
/// screen. When tmux no longer holds the anchored line, the result says
/// so and holds what tmux still has (the whole history after a trim, the
/// screen after a clear or respawn).
///
/// Bounded: the pane's rows, then (history at its limit, the line not on
/// its own row) one batch of small probes for the chunk it moved up by,
/// then one capture from just above where the line is; only when the rows
/// moved so far meanwhile that it is not there, one capture of the whole
/// history, searched as a whole.
pub async fn read_back(
    target: &Target,
    id: PaneId,
    server: u32,
    pid: u32,
    anchor: Anchor,
) -> ToolResult<ReadBack> {
    let lost = |mut screen: ReadBack, missing| {
        screen.missed = true;
        screen.missing = missing;
        screen
    };
    let state = rows(target, id).await?;
    if state.server != server || state.pid != pid {
        // Another tmux server, or the pane's process was replaced.
        return Ok(lost(screen_of(target, id, &state).await?, None));
    }
    if state.alternate {
        // A full-screen program draws: its screen is what there is to
        // read, and the anchor (in the normal screen's rows) stays valid
        // for when it leaves.
        let mut screen = screen_of(target, id, &state).await?;
        screen.anchor = anchor;
        return Ok(screen);
    }
    let bottom = state.history + state.height;
    let candidates = anchor::candidates(anchor.row, state.limit, state.history, bottom);
    let expected = match candidates.as_slice() {
        // Not on its row and history not trimmed: cleared or rewritten.
        [] if !anchor::trimmable(state.limit, state.history) => {
            return Ok(lost(screen_of(target, id, &state).await?, None));
        }
        [] => None,
        [only] => Some(Some(*only)),
        _ => probe(target, id, &state, &anchor, &candidates).await?,
    };
    match expected {
        Some(Some(row)) => {
            // From a screenful above it: rows that move while the capture
            // is on its way still leave the line inside.
            let from = row.saturating_sub(SLACK + state.height);
            let (lines, rows) = capture_from(target, id, &state, Some(from)).await?;
            // Where it is now: rows of the old frame moved by what tmux
            // trimmed in between (nothing, or whole chunks).
            let slack = anchor::uncertainty(&lines) + moved(&state, &rows);
            let chunk = anchor::trim_chunk(rows.limit);
            let moves = if anchor::trimmable(rows.limit, rows.history) {
                3
            } else {
                1
            };
            let looked = (0..moves).filter_map(|k| row.checked_sub(k * chunk));
            for r in looked {
                if let anchor::Found::At { index, fresh } =
                    anchor::find_within(&lines, &anchor, r, slack)
                {
                    let from = if fresh { index } else { index + 1 };
                    return Ok(ReadBack {
                        anchor: Anchor {
                            row: lines[index].row,
                            ..anchor
                        },
                        lines: lines[from..].to_vec(),
                        missed: false,
                        missing: None,
                        rows,
                    });
                }
            }
        }
        Some(None) => {
            // Dropped from history: everything tmux holds is new.
            let (all, rows) = capture_from(target, id, &state, None).await?;
            return Ok(ReadBack {
                anchor: Anchor::new(0, ""),
                lines: all,
                missed: true,
                missing: Some(anchor::missing_after(anchor.row, state.limit)),
                rows,
            });
        }
        None => {}
    }
    // The rows moved under the probes or the capture: the whole history,
    // once, searched as a whole.
    let (all, rows) = capture_from(target, id, &state, None).await?;
    let slack = anchor::uncertainty(&all) + moved(&state, &rows);
    match anchor::locate(&all, &anchor, rows.limit, rows.history, slack) {
        Located::Found { from, dropped } => Ok(ReadBack {
            lines: all[from..].to_vec(),
            missed: false,
            missing: None,
            anchor: Anchor {
                row: anchor.row.saturating_sub(dropped),
                ..anchor
            },
            rows,
        }),
        Located::Trimmed { missing } => Ok(ReadBack {
            anchor: Anchor::new(0, ""),
            lines: all,
            missed: true,
            missing: Some(missing),
            rows,
        }),
        Located::Gone => Ok(lost(screen_of(target, id, &rows).await?, None)),
    }
}

/// A cursor's anchor for pane `id` now: the last line printed whose text
/// is `last` (the last line a call returned), looked for from the bottom
/// of the screen and the screenful above it, else the last line with text;
/// with no `last`, the last line with text above the cursor's (where a
/// prompt is drawn, or about to be, and typed on later).
/// Given the pane's `height`, one round trip: the capture starts that many
/// rows above the screen (tmux stops at the oldest it holds), and the rows
/// read with it number its lines.
pub async fn anchor_at(
    target: &Target,
    id: PaneId,
    height: Option<usize>,
    last: Option<&str>,
) -> ToolResult<(Rows, Anchor)> {
    let state = match height {
        // Rows as seen from the screen's top: `from` is `height` above it.
        Some(height) => Rows {
            history: height as u64,
            height: height as u64,
            ..Rows::default()
        },
        None => rows(target, id).await?,
    };
    let from = state.history.saturating_sub(state.height);
    let (lines, rows) = capture_from(target, id, &state, Some(from)).await?;
    let Some(text) = last.map(str::trim_end) else {
        let anchor = anchor::before_cursor(&lines, rows.history, rows.cursor_y);
        return Ok((rows, anchor));
    };
    let anchor = match lines.iter().rev().find(|l| l.text == text) {
        Some(line) => Anchor::new(line.row, &line.text),
        None => anchor::anchor_after(&lines, rows.history),
    };
    Ok((rows, anchor))
}
