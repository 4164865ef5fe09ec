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

use std::sync::Arc;
use std::time::Duration;

use crate::drive::error::pane_not_found;
use crate::drive::tail::trimmed_lines;
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::panes::Follower;
use crate::tmux::TmuxError;
use crate::tmux::format::Schema;
use crate::tmux::hub::{Hub, Stream};
use crate::tmux::quiet::Need;
use crate::tmux::{Command, PaneId, SessionId};

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
    /// Nothing drawn yet, it seems: the cursor at the top left and no
    /// history (a new pane whose shell has not drawn its first prompt).
    pub blank: bool,
}

impl Watch {
    /// What the watch has read of the pane's recording, and reads next:
    /// its [`Follower`].
    pub fn follower(&self) -> &Follower {
        &self.follower
    }

    pub fn follower_mut(&mut self) -> &mut Follower {
        &mut self.follower
    }

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
        let position = position.unwrap_or_else(|| self.follower().end());
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
    // After cursor_x: both must be 0 for the pane to be blank.
    ("cursor_y", |d, v| {
        d.geometry.blank = d.geometry.cursor_x == 0 && v == "0"
    }),
    ("history_size", |d, v| d.geometry.blank &= v == "0"),
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
