//! Reading a pane's output as it happens: the shared machinery of
//! `wait_for_text`, `run_command` and `capture_since`.
//!
//! A [`Watch`] makes sure a pane's output is recorded (the pane is watched
//! and the control client attached to its session streams it), then reads
//! the recording from a cursor through a [`LineView`], so callers see lines
//! with escape sequences removed and `\r` applied. Between reads it sleeps on
//! the pane's change signal: nothing polls.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::bytes::Regex;
use tokio::sync::watch;

use super::rows;
use super::target::{self, pane_not_found};
use super::{Target, ToolError, ToolResult};
use crate::panes::LineView;
use crate::panes::registry::Pane;
use crate::tmux::connection::Connection;
use crate::tmux::{Command, PaneId, SessionId};

/// Longest line a matcher keeps; longer lines are cut into pieces.
pub const MAX_LINE: usize = 64 * 1024;
/// Most bytes copied out of the ring under its lock at a time.
const READ_CHUNK: usize = 64 * 1024;

/// A pane whose output is being recorded, and the client streaming it.
pub struct Watch {
    pub id: PaneId,
    pub pane: Arc<Pane>,
    pub client: Connection,
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
    /// The recording's end when this watch began.
    origin: u64,
    command_timeout: Duration,
    signal: watch::Receiver<u64>,
    structure: u64,
}

/// A pane's size and cursor position, in cells.
#[derive(Clone, Copy, Debug, Default)]
pub struct Geometry {
    pub width: usize,
    pub height: usize,
    pub cursor_x: usize,
}

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

static SCREEN_SWITCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[\?(?:1049|1047|47)([hl])").expect("valid regex"));
static CURSOR_MOVE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[HfABCDdGr]").expect("valid regex"));

impl Watch {
    /// Starts (or joins) the recording of `id`'s output.
    pub async fn start(target: &Target, id: PaneId) -> ToolResult<Watch> {
        let Described {
            session,
            command,
            geometry,
            alternate_at_start,
            pid,
        } = describe(target, id).await?;
        let client = target.hub.streaming(session).await?;
        let pane = target.hub.panes().watch(id, session);
        let signal = pane.subscribe();
        let (structure, origin) = {
            let state = pane.lock();
            (state.structure, state.ring.end())
        };
        Ok(Watch {
            id,
            pane,
            client,
            session,
            command,
            geometry,
            alternate_at_start,
            pid,
            origin,
            command_timeout: target.hub.limits().tmux_command_timeout,
            signal,
            structure,
        })
    }

    /// Reads the pane's size and cursor again.
    pub async fn refresh_geometry(&mut self, target: &Target) -> ToolResult<()> {
        self.geometry = describe(target, self.id).await?.geometry;
        Ok(())
    }

    /// The recording's current end: output from here on is new.
    pub fn end(&self) -> u64 {
        self.pane.lock().ring.end()
    }

    /// Runs `capture-pane` of this pane on the streaming client and returns
    /// the captured lines with the exact sync point: the ring offset at the
    /// reply's `%begin`.
    pub async fn capture(&self, flags: &[&'static str]) -> ToolResult<(Vec<String>, u64)> {
        let mut cmd = Command::new("capture-pane").flag("-p");
        for flag in flags {
            cmd = cmd.flag(flag);
        }
        let limit = self.command_timeout;
        let synced =
            tokio::time::timeout(limit, self.client.run_synced(&cmd.target(self.id), self.id))
                .await
                .map_err(|_| ToolError::from(crate::tmux::TmuxError::NotResponding(limit)))??;
        let position = synced.position.unwrap_or_else(|| self.end());
        let mut lines: Vec<String> = synced
            .reply
            .lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        Ok((lines, position))
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
                // A gap where this watch began is not a loss for it: the
                // capture at the sync point already shows what came before.
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

    /// Sleeps until the pane changes (output, a gap, a structural event) or
    /// `limit` passes. Returns false on timeout.
    pub async fn changed(&mut self, limit: Duration) -> bool {
        matches!(
            tokio::time::timeout(limit, self.signal.changed()).await,
            Ok(Ok(()))
        )
    }

    /// Marks everything seen so far as seen: the next [`changed`](Self::changed)
    /// waits for something newer. Call before reading, so nothing is missed.
    pub fn mark_seen(&mut self) {
        self.signal.borrow_and_update();
    }

    /// After a structural event (a window closed, the client went away),
    /// checks that the pane still lives and is still streamed. `Ok(true)`:
    /// it had to be streamed again, so output in between may be lost. `Err`
    /// says what happened in words an agent can act on. Sends nothing to
    /// tmux when nothing happened.
    pub async fn check_alive(&mut self, target: &Target) -> ToolResult<bool> {
        let (structure, orphaned) = {
            let state = self.pane.lock();
            (state.structure, state.orphaned)
        };
        if structure == self.structure && !orphaned {
            return Ok(false);
        }
        self.structure = structure;
        let format = rows::format(&["pane_id", "pane_dead", "pane_dead_status", "session_id"]);
        let cmd = Command::new("display-message")
            .flag("-p")
            .target(self.id)
            .arg(format);
        let lines = match target.hub.run(&cmd).await {
            Ok(lines) => lines,
            Err(crate::tmux::TmuxError::NoServer(_)) => {
                return Err(ToolError::new(
                    "TmuxServerGone",
                    "the tmux server went away while waiting",
                ));
            }
            Err(e) => return Err(e.into()),
        };
        let record = rows::records(&lines, 4)
            .into_iter()
            .next()
            .filter(|r| r[0] == self.id.to_string());
        match record {
            None => Err(ToolError::new(
                "PaneGone",
                format!("pane {} was closed while waiting", self.id),
            )),
            Some(r) if r[1] == "1" => Err(ToolError::new(
                "PaneDead",
                format!(
                    "pane {} exited while waiting (exit status {})",
                    self.id,
                    if r[2].is_empty() { "unknown" } else { &r[2] }
                ),
            )),
            Some(r) => {
                // The streaming client went away, or the pane moved to
                // another session (tmux streams a pane only to clients of its
                // own session): stream it again. Output in between is lost,
                // and the ring says so.
                let session = SessionId::parse(r[3].as_bytes()).unwrap_or(self.session);
                if !orphaned && session == self.session {
                    return Ok(false);
                }
                self.session = session;
                self.client = target.hub.streaming(session).await?;
                self.pane = target.hub.panes().watch(self.id, session);
                Ok(true)
            }
        }
    }
}

/// What a watch needs to know of its pane when it begins.
struct Described {
    session: SessionId,
    command: String,
    geometry: Geometry,
    alternate_at_start: bool,
    pid: u32,
}

/// A pane's session, foreground command, size and cursor, screen and process.
async fn describe(target: &Target, id: PaneId) -> ToolResult<Described> {
    let format = rows::format(&[
        "pane_id",
        "session_id",
        "pane_current_command",
        "pane_width",
        "pane_height",
        "cursor_x",
        "alternate_on",
        "pane_pid",
    ]);
    let lines = target
        .run(
            Command::new("display-message")
                .flag("-p")
                .target(id)
                .arg(format),
        )
        .await?;
    let record = rows::records(&lines, 8)
        .into_iter()
        .next()
        .filter(|r| r[0] == id.to_string());
    record
        .and_then(|r| {
            let cells = |i: usize| r[i].parse().unwrap_or(0);
            Some(Described {
                session: SessionId::parse(r[1].as_bytes())?,
                command: r[2].clone(),
                geometry: Geometry {
                    width: cells(3),
                    height: cells(4),
                    cursor_x: cells(5),
                },
                alternate_at_start: r[6] == "1",
                pid: r[7].parse().unwrap_or(0),
            })
        })
        .ok_or_else(|| pane_not_found(&id.to_string()))
}

/// Resolves the pane a call means and starts watching it.
pub async fn watch_pane(target: &Target, sel: &target::PaneSel) -> ToolResult<Watch> {
    let id = target::resolve_pane(target, sel).await?;
    Watch::start(target, id).await
}
