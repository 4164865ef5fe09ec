//! Commands as handles: every command `run_command` typed that was still
//! running when its call returned is kept here, per tmux server (on its
//! hub), by id, with what its end said.
//!
//! While a command runs and no call waits on it, a follower task holds a
//! watch on its pane: the pane stays streamed (never paused by the quiet
//! design, its client never idle-detached), so the end delimiter reaches
//! the recording and the status is known however the command ends. A
//! later call reads the command's output from the recording where the
//! previous one stopped ([`Reader`]): no line twice.
//!
//! What a later server needs is kept in tmux itself, in two pane user
//! options that show nowhere in the pane: the start of a handle
//! ([`START_OPTION`], set by us when run_command returns with it
//! running) and its end ([`END_OPTION`], set by the wrapper line after
//! its end marker when its call had returned, or by us when we see it).
//! A restarted server takes the handles over from them ([`refresh`]),
//! and any server reads the status there when the end marker never
//! reached its stream (a flood paused the pane, no server ran): a wait
//! that saw a gap reads it every [`LOST_END_PROBE`].

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::end_scripts;
use super::span::{self, Delimiters, Span};
use super::typed::END_OPTION;
use crate::drive::bounded::HeadTail;
use crate::drive::pace::{Pace, Woke};
use crate::drive::probe;
use crate::drive::server::Server;
use crate::drive::watch::{MAX_LINE, Watch};
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::ids::PaneId;
use crate::panes::LineView;
use crate::panes::follow::Follower;
use crate::process::{self, ExitWatch};
use crate::tmux::format::Schema;
use crate::tmux::{Command, TmuxError};

/// Finished commands kept for `list_commands` (running ones are all kept).
const KEEP_FINISHED: usize = 20;
/// Characters of a command kept for listing.
const SHOWN_CHARS: usize = 200;
/// How often a stopped command's pane is probed for its shell's prompt.
const STOP_PROBE: Duration = Duration::from_millis(20);
/// How often the pane options are read for an end whose marker may have
/// been lost (after a gap in the recording).
const LOST_END_PROBE: Duration = Duration::from_millis(250);

/// The pane user option holding the handles started last in the pane's
/// process, oldest first, each `1 <id> <w|m> <started_at> <pane pid>
/// <command, hex>`, separated by `;`.
pub const START_OPTION: &str = "@tmux_mcp_cmd";
/// Handles [`START_OPTION`] keeps per pane: a restarted server takes
/// over a pane's recent commands, not only its last one.
const HANDLES_KEPT: usize = 8;

/// One command run_command started.
#[derive(Clone, Debug)]
pub struct Record {
    pub id: String,
    pub pane: PaneId,
    /// The command's first characters.
    pub command: String,
    /// Seconds since the Unix epoch.
    pub started_at: f64,
    pub ended_at: Option<f64>,
    /// The end was seen; `status` is what it said.
    pub ended: bool,
    pub status: Option<i64>,
    pub delimiters: Delimiters,
    /// The pane's recording and process when it was typed.
    pub epoch: u64,
    pub pid: u32,
    /// Where the scan for its start begins (just before the typing).
    pub scan_from: u64,
    /// Its first output byte, once seen.
    pub output_from: Option<u64>,
    /// Output returned so far ends here.
    pub returned: u64,
    /// Where its end delimiter is.
    pub end_at: Option<u64>,
    /// Taken over from tmux (a server before this one started it), and
    /// no wait has followed it yet: its recording, and what the earlier
    /// server returned, are not known.
    pub adopted: bool,
    /// It ended with its pane, no status seen: why ([`PaneEnd`]).
    pub pane_end: Option<PaneEnd>,
}

/// How a command's pane ended under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneEnd {
    /// Killed (with its window or session, or by its shell's exit).
    Gone,
    /// Its process ended and remain-on-exit kept the pane.
    Exited,
    /// A new process runs in it (`respawn-pane`).
    Respawned,
}

/// How a command's end was learnt: its status (`None`: its end said
/// none, or was not seen), or its pane's end under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Status(Option<i64>),
    Pane(PaneEnd),
}

impl PaneEnd {
    /// The pane end an error of a watch names, if it names one.
    pub fn of(kind: ErrorKind) -> Option<PaneEnd> {
        match kind {
            ErrorKind::PaneGone | ErrorKind::PaneNotFound | ErrorKind::TmuxServerGone => {
                Some(PaneEnd::Gone)
            }
            ErrorKind::PaneDead => Some(PaneEnd::Exited),
            ErrorKind::PaneRespawned => Some(PaneEnd::Respawned),
            _ => None,
        }
    }

    /// As results spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PaneEnd::Gone => "pane_gone",
            PaneEnd::Exited => "pane_exited",
            PaneEnd::Respawned => "pane_respawned",
        }
    }
}

impl Record {
    /// This record as a command that finished within its call: ended at
    /// its end delimiter with its status, or with its pane's process when
    /// no end was seen.
    pub fn finished(mut self, ended: Option<(u64, Option<i64>)>) -> Record {
        (self.ended, self.ended_at) = (true, Some(now()));
        match ended {
            Some((at, status)) => (self.end_at, self.status) = (Some(at), status),
            None => self.pane_end = Some(PaneEnd::Exited),
        }
        self
    }

    pub fn new(
        id: String,
        watch: &Watch,
        command: &str,
        delimiters: Delimiters,
        scan_from: u64,
    ) -> Record {
        Record {
            id,
            pane: watch.id,
            command: command.chars().take(SHOWN_CHARS).collect(),
            started_at: now(),
            ended_at: None,
            ended: false,
            status: None,
            delimiters,
            epoch: watch.epoch(),
            pid: watch.pid,
            scan_from,
            output_from: None,
            returned: scan_from,
            end_at: None,
            adopted: false,
            pane_end: None,
        }
    }

    /// What [`START_OPTION`] keeps of it (one entry).
    pub fn recorded(&self) -> String {
        let kind = match self.delimiters {
            Delimiters::Markers(_) => 'w',
            Delimiters::Marks => 'm',
        };
        let hex: String = self.command.bytes().map(|b| format!("{b:02x}")).collect();
        format!(
            "1 {} {kind} {:.6} {} {hex}",
            self.id, self.started_at, self.pid
        )
    }

    /// The handle an entry of a [`START_OPTION`] value of `pane`
    /// describes.
    fn from_recorded(pane: PaneId, value: &[u8]) -> Option<Record> {
        let mut words = value.split(|&b| b == b' ');
        if words.next()? != b"1" {
            return None;
        }
        let id = std::str::from_utf8(words.next()?).ok()?;
        let valid = |c: char| c.is_ascii_alphanumeric();
        if id.is_empty() || id.len() > 64 || !id.chars().all(valid) {
            return None;
        }
        let delimiters = match words.next()? {
            b"w" => Delimiters::Markers(id.to_owned()),
            b"m" => Delimiters::Marks,
            _ => return None,
        };
        let number = |w: &[u8]| std::str::from_utf8(w).ok()?.parse::<f64>().ok();
        let started_at = number(words.next()?)?;
        let pid = std::str::from_utf8(words.next()?).ok()?.parse().ok()?;
        let hex = words.next().unwrap_or_default();
        let bytes: Vec<u8> = hex
            .chunks(2)
            .filter_map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
            .take(SHOWN_CHARS * 4)
            .collect();
        let command = String::from_utf8_lossy(&bytes)
            .chars()
            .take(SHOWN_CHARS)
            .collect();
        Some(Record {
            id: id.to_owned(),
            pane,
            command,
            started_at,
            ended_at: None,
            ended: false,
            status: None,
            delimiters,
            epoch: 0,
            pid,
            scan_from: 0,
            output_from: None,
            returned: 0,
            end_at: None,
            adopted: true,
            pane_end: None,
        })
    }
}

/// The handles a [`START_OPTION`] value of `pane` holds, oldest first,
/// each with its entry (one it cannot read is passed over).
fn recorded_starts(pane: PaneId, value: &str) -> impl Iterator<Item = (Record, &str)> {
    let entries = value.split(';');
    entries.filter_map(move |entry| Some((Record::from_recorded(pane, entry.as_bytes())?, entry)))
}

/// A handle's end as [`END_OPTION`] holds it (`;<nonce> <status>` per
/// command, appended): its status, if the option names `id`.
fn recorded_end(value: &[u8], id: &str) -> Option<Option<i64>> {
    value.split(|&b| b == b';').rev().find_map(|entry| {
        let entry = entry.trim_ascii_start();
        let (nonce, status) = entry.split_at(memchr::memchr(b' ', entry)?);
        (nonce == id.as_bytes()).then(|| {
            std::str::from_utf8(&status[1..])
                .ok()
                .and_then(|s| s.trim().parse().ok())
        })
    })
}

/// The pane's two handle options once `record` is added to what `row`
/// holds: the newest [`HANDLES_KEPT`] handles of the pane's present
/// process, and the ends of those only.
fn options_with(row: &HandleRow, record: &Record) -> (String, String) {
    let earlier = recorded_starts(record.pane, &row.start)
        .filter(|(r, _)| r.pid == record.pid && r.id != record.id);
    let earlier: Vec<(Record, &str)> = earlier.collect();
    let kept = &earlier[earlier.len().saturating_sub(HANDLES_KEPT - 1)..];
    let own = record.recorded();
    let entries = kept.iter().map(|(_, entry)| *entry);
    let start = entries.chain([own.as_str()]).collect::<Vec<_>>().join(";");
    let ends = row.end.split(';').filter(|entry| {
        let nonce = entry.trim_start().split(' ').next().unwrap_or_default();
        kept.iter().any(|(r, _)| r.id == nonce)
    });
    let end = ends.map(|entry| format!(";{entry}")).collect();
    (start, end)
}

/// Records `record`'s start in its pane, for a server started later, and
/// leaves the pane's end script ([`end_scripts::write`]) that its wrapper
/// runs after the command. Best effort: without them, only this process
/// knows the handle.
pub async fn record_start(target: &Target, record: &Record) {
    // The options are set before the script exists: until then no
    // wrapper appends to the ends, which this rewrites.
    let set = async {
        let row = HANDLE_ROW.parse(&target.run(handle_row(record.pane)).await?);
        let (start, end) = options_with(&row.into_iter().next().unwrap_or_default(), record);
        let start = target.run(set_pane_option(record.pane, START_OPTION, start));
        let end = target.run(set_pane_option(record.pane, END_OPTION, end));
        let (start, end) = tokio::join!(start, end);
        start.and(end)
    };
    let set = set.await;
    let script = end_scripts::write(&target.server, record.pane, &record.id).await;
    let failed = [
        set.err().map(|e| e.message),
        script.err().map(|e| e.to_string()),
    ];
    for e in failed.into_iter().flatten() {
        eprintln!("tmux-mcp: recording command {} in tmux: {e}", record.id);
    }
}

/// Ends command `id`, whose end this server saw (its status, or none:
/// the shell's marks gave none), and records it in its pane's
/// [`END_OPTION`] as the wrapper does: a server started later must not
/// take it over as running, and the wrapper's script may have been let
/// go ([`end_command`]) before it ran, or never made.
async fn end_seen(server: &Server, id: &str, at: Option<u64>, status: Option<i64>) {
    let Some(pane) = server.commands.get(id).filter(|r| !r.ended).map(|r| r.pane) else {
        return;
    };
    end_command(server, id, at, End::Status(status)).await;
    let end = format!(
        ";{id} {}",
        status.map(|s| s.to_string()).unwrap_or_default()
    );
    let set = Command::new("set-option")
        .flag("-ap")
        .target(pane)
        .arg(END_OPTION)
        .arg(end);
    if let Err(e) = server.hub.run(&set).await {
        eprintln!("tmux-mcp: recording the end of command {id} in tmux: {e}");
    }
}

fn set_pane_option(pane: PaneId, option: &str, value: String) -> Command {
    Command::new("set-option")
        .flag("-p")
        .target(pane)
        .arg(option)
        .arg(value)
}

/// Reads what tmux keeps of the handles: those started by an earlier
/// server are taken over, and every running one whose end the pane's
/// option records (or whose pane was respawned, ended or is gone) is
/// ended.
pub async fn refresh(target: &Target) -> ToolResult<()> {
    Ok(refresh_server(&target.server).await?)
}

/// [`refresh`] on `server`.
async fn refresh_server(server: &Server) -> Result<(), TmuxError> {
    let list = Command::new("list-panes")
        .flag("-a")
        .opt("-F", HANDLE_ROW.template());
    let rows = HANDLE_ROW.parse(&server.hub.run(&list).await?);
    let mut ended = take_over(server, &rows);
    // A pane the server does not list is gone, its command with it.
    let listed: HashSet<PaneId> = rows.iter().filter_map(|row| row.pane).collect();
    for record in server.commands.list() {
        if !record.ended && !listed.contains(&record.pane) {
            ended.push((record.id, End::Pane(PaneEnd::Gone)));
        }
    }
    for (id, end) in ended {
        end_command(server, &id, None, end).await;
    }
    Ok(())
}

/// [`refresh`] for one pane: a wait on its command after a gap reads only
/// that pane's row. A pane that is gone is left to the wait's own check.
async fn refresh_pane(target: &Target, pane: PaneId) {
    if let Ok(rows) = target.run(handle_row(pane)).await {
        for (id, end) in take_over(&target.server, &HANDLE_ROW.parse(&rows)) {
            end_command(&target.server, &id, None, end).await;
        }
    }
}

/// Ends command `id` ([`Commands::end`]); the first end seen also lets
/// its pane's end script go ([`end_scripts::release`]): however it ended,
/// the script has nothing left to record.
async fn end_command(server: &Server, id: &str, at: Option<u64>, end: End) {
    let commands = &server.commands;
    if let Some(pane) = commands.end(id, at, end) {
        let others_running = !commands.running_in(pane).is_empty();
        end_scripts::release(server, pane, id, others_running).await;
    }
}

/// At this server's exit: the handles of `server` are read once
/// more from tmux, so that each whose command no longer runs (ended,
/// its pane killed, respawned or dead, the server gone) lets its end
/// script go; a script whose command still runs stays, for a server
/// started later. Nothing is asked of a server this process left no
/// script on and follows no command of.
pub async fn at_exit(server: &Server) {
    let commands = &server.commands;
    let owned = end_scripts::owned(server).await;
    let running = commands.list().into_iter().filter(|r| !r.ended);
    let running: Vec<Record> = running.collect();
    if owned.is_empty() && running.is_empty() {
        return;
    }
    match refresh_server(server).await {
        Ok(()) => {}
        // Every command of a server that is gone has ended.
        Err(TmuxError::NoServer(_)) => {
            for record in running {
                end_command(server, &record.id, None, End::Pane(PaneEnd::Gone)).await;
            }
        }
        // Not known: the next process's sweep judges the scripts.
        Err(e) => {
            eprintln!("tmux-mcp: reading the commands' ends at exit: {e}");
            return;
        }
    }
    // Scripts a release passed over, whose command has ended since.
    for (pane, id) in end_scripts::owned(server).await {
        if commands.get(&id).is_none_or(|r| r.ended) {
            let others_running = !commands.running_in(pane).is_empty();
            end_scripts::release(server, pane, &id, others_running).await;
        }
    }
}

/// The command that reads `pane`'s [`HandleRow`].
fn handle_row(pane: PaneId) -> Command {
    Command::new("display-message")
        .flag("-p")
        .target(pane)
        .arg(HANDLE_ROW.template())
}

/// One pane's row for [`refresh`]: its id and process, whether it is
/// dead, and the two handle options.
#[derive(Default)]
struct HandleRow {
    pane: Option<PaneId>,
    pid: u32,
    dead: bool,
    start: String,
    end: String,
}

const HANDLE_ROW: Schema<HandleRow> = Schema(&[
    ("pane_id", |r, v| r.pane = PaneId::parse(v.as_bytes())),
    ("pane_pid", |r, v| r.pid = v.parse().unwrap_or(0)),
    ("pane_dead", |r, v| r.dead = v == "1"),
    (START_OPTION, |r, v| r.start = v.into()),
    (END_OPTION, |r, v| r.end = v.into()),
]);

/// Takes over the handles `rows` name. Returns those to end, with their
/// status: whose end the rows record, or whose pane was respawned or
/// died (status unknown).
fn take_over(server: &Server, rows: &[HandleRow]) -> Vec<(String, End)> {
    let commands = &server.commands;
    let mut ended = Vec::new();
    for row in rows {
        let Some(pane) = row.pane else {
            continue;
        };
        let pid = row.pid;
        for (found, _) in recorded_starts(pane, &row.start) {
            if found.pid == pid && commands.get(&found.id).is_none() {
                commands.add(found);
            }
        }
        for (id, started_in) in commands.running_in(pane) {
            if let Some(status) = recorded_end(row.end.as_bytes(), &id) {
                ended.push((id, End::Status(status)));
            } else if started_in != pid {
                ended.push((id, End::Pane(PaneEnd::Respawned)));
            } else if row.dead {
                ended.push((id, End::Pane(PaneEnd::Exited)));
            }
        }
    }
    ended
}

/// Seconds since the Unix epoch.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The commands of one tmux server, by id.
#[derive(Default)]
pub struct Commands {
    records: Mutex<VecDeque<Record>>,
}

impl Commands {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Record>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `record` in the order of the commands' starts (one taken
    /// over from tmux may be older than those kept).
    pub fn add(&self, record: Record) {
        let mut records = self.lock();
        let at = records.partition_point(|r| r.started_at <= record.started_at);
        records.insert(at, record);
        forget_finished(&mut records);
    }

    pub fn get(&self, id: &str) -> Option<Record> {
        self.lock().iter().find(|r| r.id == id).cloned()
    }

    /// Changes the record of `id`, if kept.
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Record)) {
        if let Some(record) = self.lock().iter_mut().find(|r| r.id == id) {
            change(record);
        }
    }

    /// Records the end of `id`: at ring offset `at` (unknown: `None`),
    /// with `status`, or because its pane ended; the first end seen
    /// stands. Returns the command's pane when this was it.
    fn end(&self, id: &str, at: Option<u64>, end: End) -> Option<PaneId> {
        let mut ended = None;
        self.update(id, |r| {
            if !r.ended {
                (r.ended, r.ended_at, r.end_at) = (true, Some(now()), at);
                match end {
                    End::Status(status) => r.status = status,
                    End::Pane(why) => r.pane_end = Some(why),
                }
                ended = Some(r.pane);
            }
        });
        forget_finished(&mut self.lock());
        ended
    }

    /// The ids of the commands still running in `pane`, with the pane
    /// process each started in.
    fn running_in(&self, pane: PaneId) -> Vec<(String, u32)> {
        let records = self.lock();
        let running = records.iter().filter(|r| r.pane == pane && !r.ended);
        running.map(|r| (r.id.clone(), r.pid)).collect()
    }

    /// Every kept command, oldest first.
    pub fn list(&self) -> Vec<Record> {
        self.lock().iter().cloned().collect()
    }
}

/// Forgets the earliest started finished commands past [`KEEP_FINISHED`]:
/// an old one taken over from tmux and ended goes at once.
fn forget_finished(records: &mut VecDeque<Record>) {
    while records.iter().filter(|r| r.ended).count() > KEEP_FINISHED {
        let Some(oldest) = records.iter().position(|r| r.ended) else {
            break;
        };
        records.remove(oldest);
    }
}

/// Reads one command's output from the recording, from where the last
/// call stopped, to its end.
pub struct Reader {
    span: Span,
    cursor: u64,
    view: LineView,
    /// Bytes fed since the last newline.
    since_newline: usize,
    /// Output was lost before it could be read.
    pub missed: bool,
    /// Ring offset of the first byte this reader returns.
    pub from: u64,
}

impl Reader {
    /// Goes on where `record`'s output was last returned.
    pub fn resume(record: &Record) -> Reader {
        let (span, cursor) = match record.output_from {
            Some(from) => (
                Span::resumed(record.delimiters.clone(), from),
                record.returned.max(from),
            ),
            None => (Span::new(record.delimiters.clone()), record.scan_from),
        };
        Reader {
            span,
            cursor,
            view: LineView::new(MAX_LINE),
            since_newline: 0,
            missed: false,
            from: cursor,
        }
    }

    /// Reads what is recorded; whole lines go to `output`.
    pub fn read(&mut self, watch: &Follower, output: &mut HeadTail) {
        let Reader {
            span,
            cursor,
            view,
            since_newline,
            ..
        } = self;
        let info = watch.read_raw(cursor, &mut |at, chunk, gap| {
            if gap && span.output_from.is_some() {
                view.reset();
            }
            span.scan(at, chunk, gap, &mut |bytes| {
                span::count_since_newline(since_newline, bytes);
                view.feed_parts(bytes, &mut |part, ends| output.push_part(part, ends));
            });
        });
        self.missed |= info.missed;
        if self.span.output_from.is_some() && self.from < self.span.output_from.unwrap_or(0) {
            // The start was found in this read: output begins there.
            self.from = self.span.output_from.unwrap_or(self.from);
        }
    }

    /// Where the command's end was seen, and its status.
    pub fn ended(&self) -> Option<(u64, Option<i64>)> {
        self.span.ended
    }

    pub fn output_from(&self) -> Option<u64> {
        self.span.output_from
    }

    /// Ends the read: an ended command's last line without a newline goes
    /// to `output`. Returns where the next call goes on (after the last
    /// whole line returned, while the command runs).
    pub fn finish(&mut self, output: &mut HeadTail) -> u64 {
        if let Some((at, _)) = self.span.ended {
            output.end_output(self.view.partial());
            return at;
        }
        let held = (self.since_newline + self.span.held_len()) as u64;
        self.cursor.saturating_sub(held).max(self.from)
    }
}

/// Follows `id` until it ends, holding `watch` so that its pane stays
/// streamed; records the end. Returns when the end is known, or the
/// pane's end (status unknown): the pane gone, or, on this machine, its
/// process ended (tmux tells no control client of a respawn).
pub async fn follow(target: Target, mut watch: Watch, id: String) {
    let commands = &target.server.commands;
    let Some(record) = commands.get(&id) else {
        return;
    };
    let mut reader = Reader::resume(&Record {
        output_from: None,
        ..record
    });
    let mut nothing = HeadTail::new(0, 0);
    let mut read_options = None;
    // A remote pane's pid is another machine's.
    let local = target.hub.local_socket().is_some();
    let pane_exit = local.then(|| ExitWatch::new(record.pid)).flatten();
    // Gone before it could be watched (respawned at once).
    let mut pane_exited = local && pane_exit.is_none() && process::has_ended(record.pid);
    let mut synced = false;
    loop {
        watch.follower_mut().mark_seen();
        reader.read(watch.follower(), &mut nothing);
        if let Some(from) = reader.output_from() {
            commands.update(&id, |r| {
                r.output_from.get_or_insert(from);
            });
        }
        if let Some((at, status)) = reader.ended() {
            end_seen(&target.server, &id, Some(at), status).await;
            return;
        }
        if reader.missed && due(&mut read_options) {
            // The end marker may be lost: the pane's option has the status.
            refresh_pane(&target, record.pane).await;
        }
        let alive: ToolResult<bool> = watch.check_alive(&target).await;
        let why = match alive {
            Err(e) => PaneEnd::of(e.kind).or(Some(PaneEnd::Gone)),
            Ok(_) if watch.epoch() != record_epoch(commands, &id) => Some(PaneEnd::Respawned),
            Ok(_) if pane_exited && synced => Some(PaneEnd::Respawned),
            Ok(_) => None,
        };
        if let Some(why) = why {
            end_command(&target.server, &id, None, End::Pane(why)).await;
            return;
        }
        if commands.get(&id).is_none_or(|r| r.ended) {
            end_command(&target.server, &id, None, End::Status(None)).await;
            return;
        }
        if pane_exited {
            // What it printed last is read up to a sync point first: the
            // end marker may be in it.
            let _ = watch.capture(&[]).await;
            synced = true;
            continue;
        }
        let wake = match reader.missed {
            true => LOST_END_PROBE,
            false => Duration::from_secs(60),
        };
        tokio::select! {
            _ = watch.changed(wake) => {}
            _ = probe::ended(pane_exit.as_ref()) => pane_exited = true,
        }
    }
}

/// Whether the pane options are due to be read again (at most every
/// [`LOST_END_PROBE`], however often output wakes the loop).
fn due(last: &mut Option<std::time::Instant>) -> bool {
    let now = std::time::Instant::now();
    let due = last.is_none_or(|at| now.duration_since(at) >= LOST_END_PROBE);
    if due {
        *last = Some(now);
    }
    due
}

fn record_epoch(commands: &Commands, id: &str) -> u64 {
    commands.get(id).map_or(0, |r| r.epoch)
}

/// What one wait on a command found.
pub struct CommandWait {
    pub record: Record,
    /// Ring offset of the first output byte returned (for a cursor).
    pub from: Option<u64>,
    /// Output was lost before it could be read.
    pub missed: bool,
}

/// Waits until command `id` ends, `pace`'s deadline or a cancellation;
/// the output no earlier call returned goes to `output`.
pub async fn wait(
    target: &Target,
    id: &str,
    pace: &mut Pace,
    output: &mut HeadTail,
    stopping: Option<i32>,
) -> ToolResult<CommandWait> {
    let commands = &target.server.commands;
    if commands.get(id).is_none_or(|r| !r.ended) {
        // Started by an earlier server, or its end recorded while no
        // stream carried it.
        refresh(target).await?;
    }
    let record = commands.get(id).ok_or_else(|| unknown(id))?;
    let adopted = record.adopted && !record.ended;
    let (mut watch, record) = match start_watching(target, id, record, output).await? {
        Start::Watching(watch, record) => (watch, record),
        Start::Over(waited) => return Ok(waited),
    };
    let mut reader = Reader::resume(&record);
    // The earlier server's reading is not known.
    reader.missed |= adopted;
    let waiting = Waiting {
        target,
        id,
        record: &record,
        stopping,
    };
    let stop = waiting
        .follow(&mut watch, &mut reader, pace, output)
        .await?;
    let returned = reader.finish(output);
    commands.update(id, |r| {
        r.returned = r.returned.max(returned);
        if stop.lost_end {
            // Where its output ended is not known: later waits read no
            // further (what follows is the shell's, not the command's).
            r.end_at.get_or_insert(r.returned);
        }
    });
    if stop.cancelled {
        return Err(ToolError::new(
            ErrorKind::Cancelled,
            "the wait was cancelled; the command keeps running",
        ));
    }
    let record = commands.get(id).ok_or_else(|| unknown(id))?;
    Ok(CommandWait {
        from: reader.output_from().map(|_| reader.from),
        missed: reader.missed || stop.lost_end,
        record,
    })
}

/// Where a wait on a command starts.
enum Start {
    /// Its pane is watched, with the same recording (or, for a command an
    /// earlier server started, from now on).
    Watching(Box<Watch>, Record),
    /// Its pane ended (or was respawned) before the wait began.
    Over(CommandWait),
}

/// Watches `record`'s pane for a wait on it. A command an earlier server
/// started is followed from now on; one whose pane is gone or was
/// respawned ends, with what this process recorded of it.
async fn start_watching(
    target: &Target,
    id: &str,
    record: Record,
    output: &mut HeadTail,
) -> ToolResult<Start> {
    let commands = &target.server.commands;
    let adopted = record.adopted && !record.ended;
    match Watch::start(target, record.pane).await {
        Ok(watch) if adopted && watch.pid == record.pid => {
            // Followed from now on: output from here is its own.
            let now = watch.follower().end();
            commands.update(id, |r| {
                r.adopted = false;
                r.epoch = watch.epoch();
                (r.scan_from, r.returned, r.output_from) = (now, now, Some(now));
            });
            // It may have ended (and recorded so) before the stream began.
            refresh(target).await?;
            let record = commands.get(id).ok_or_else(|| unknown(id))?;
            Ok(Start::Watching(Box::new(watch), record))
        }
        Ok(watch) if watch.epoch() == record.epoch => Ok(Start::Watching(Box::new(watch), record)),
        started => {
            let why = match started {
                Ok(_) => PaneEnd::Respawned,
                Err(e) => PaneEnd::of(e.kind).unwrap_or(PaneEnd::Gone),
            };
            end_command(&target.server, id, None, End::Pane(why)).await;
            let record = commands.get(id).unwrap_or(record);
            Ok(Start::Over(read_left_over(target, record, output)))
        }
    }
}

/// A wait on one command, once its pane is watched.
struct Waiting<'a> {
    target: &'a Target,
    id: &'a str,
    record: &'a Record,
    /// The signal `stop_command` sent, if it did.
    stopping: Option<i32>,
}

/// How a wait's loop ended.
struct Stop {
    cancelled: bool,
    /// Its end is known from tmux while our stream did not carry it.
    lost_end: bool,
}

impl Waiting<'_> {
    /// Reads the command's output as it comes until its end, its pane's
    /// end, the deadline or a cancellation.
    async fn follow(
        &self,
        watch: &mut Watch,
        reader: &mut Reader,
        pace: &mut Pace,
        output: &mut HeadTail,
    ) -> ToolResult<Stop> {
        let (target, id) = (self.target, self.id);
        let commands = &target.server.commands;
        let record = self.record;
        let done = |lost_end| {
            Ok(Stop {
                cancelled: false,
                lost_end,
            })
        };
        // Its output was read to its end already.
        if record.ended && record.end_at.is_some_and(|at| record.returned >= at) {
            watch.follower_mut().mark_seen();
            return done(false);
        }
        let mut read_options = None;
        loop {
            watch.follower_mut().mark_seen();
            reader.read(watch.follower(), output);
            if let Some(from) = reader.output_from() {
                commands.update(id, |r| {
                    r.output_from.get_or_insert(from);
                });
            }
            if let Some((at, status)) = reader.ended() {
                end_seen(&target.server, id, Some(at), status).await;
                return done(false);
            }
            // After a gap (a flood paused the pane, our client left) the end
            // marker may be lost: the pane's option has the status once the
            // wrapper's background `tmux` set it.
            if reader.missed && due(&mut read_options) {
                refresh_pane(target, record.pane).await;
            }
            let now = commands.get(id);
            let ended = now.as_ref().is_none_or(|r| r.ended);
            if ended || pace.expired() {
                return match now.and_then(|r| r.end_at) {
                    // The follower read its end since: read up to it.
                    Some(_) if ended => {
                        reader.read(watch.follower(), output);
                        done(false)
                    }
                    _ => done(ended),
                };
            }
            if self.pane_ended(watch).await? {
                return done(false);
            }
            if let Some(signal) = self.stopping
                && self.stopped_by(signal, watch, reader, output).await?
            {
                return done(false);
            }
            // Stopping, the shell's return to its prompt is what ends the
            // wait, and it may print nothing after the probe above saw the
            // command still dying (a PROMPT_COMMAND, a prompt drawn before
            // the terminal is taken back): look again soon as well as on
            // output.
            let wake = match self.stopping {
                Some(_) => STOP_PROBE.min(pace.left()),
                None if reader.missed => LOST_END_PROBE.min(pace.left()),
                None => pace.left(),
            };
            if let Woke::Cancelled = pace.sleep(watch.changed(wake)).await {
                return Ok(Stop {
                    cancelled: true,
                    lost_end: false,
                });
            }
        }
    }

    /// Whether the command's pane ended under it (ending the command).
    async fn pane_ended(&self, watch: &mut Watch) -> ToolResult<bool> {
        match watch.check_alive(self.target).await {
            Err(e) if e.kind.is_pane_end() => {
                let why = PaneEnd::of(e.kind).unwrap_or(PaneEnd::Gone);
                end_command(&self.target.server, self.id, None, End::Pane(why)).await;
                Ok(true)
            }
            Err(e) => Err(e),
            Ok(_) => Ok(false),
        }
    }

    /// Whether the command died of the `signal` we sent: killed by it, the
    /// command took the rest of the typed line with it (a shell drops it
    /// when its child dies of SIGINT), so the shell is back at its prompt
    /// with no end printed. Its status is then the signal's, as the shell
    /// reports it.
    async fn stopped_by(
        &self,
        signal: i32,
        watch: &mut Watch,
        reader: &mut Reader,
        output: &mut HeadTail,
    ) -> ToolResult<bool> {
        let activity = probe::probe_once(self.record.pid, &watch.tty)
            .await
            .activity;
        if activity != crate::process::Activity::Prompt {
            return Ok(false);
        }
        // A round trip on the streaming client: what the shell printed
        // before it read the terminal is recorded by its reply.
        watch.capture(&[]).await?;
        reader.read(watch.follower(), output);
        let (at, status) = reader
            .ended()
            .map_or((None, Some(128 + i64::from(signal))), |(at, status)| {
                (Some(at), status)
            });
        end_seen(&self.target.server, self.id, at, status).await;
        Ok(true)
    }
}

/// What a command whose pane ended before the wait began left in this
/// process's recording of the pane (kept for a while after its end): the
/// output no earlier call returned, or `missed` when none is held.
fn read_left_over(target: &Target, record: Record, output: &mut HeadTail) -> CommandWait {
    let recording = target.hub.panes().get(record.pane);
    let Some(pane) = recording.filter(|p| p.epoch == record.epoch) else {
        return CommandWait {
            record,
            from: None,
            missed: true,
        };
    };
    let mut reader = Reader::resume(&record);
    reader.read(&Follower::new(pane), output);
    reader.finish(output);
    CommandWait {
        from: reader.output_from().map(|_| reader.from),
        missed: reader.missed,
        record,
    }
}

fn unknown(id: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Validation,
        format!("no command {id:?} on this tmux server (ids come from run_command)"),
    )
    .suggest("list_commands shows the commands this server started.")
}

/// Sends `signal` to the foreground process group of `record`'s pane, if
/// that group is not the pane's shell: the command's own processes. Local
/// panes only (the process probe's view of the groups); returns what was
/// signalled.
pub fn signal_command(pane_pid: u32, signal: i32) -> Result<i32, String> {
    let (pgrp, group) = crate::process::groups(pane_pid).ok_or("the pane's process is gone")?;
    if group <= 0 || group == pgrp {
        return Err(
            "no command of its own runs in the pane's foreground (the pane's shell holds it)"
                .into(),
        );
    }
    // SAFETY: kill(2) with a negative pid signals that process group; it
    // touches no memory of ours.
    let sent = unsafe { libc::kill(-group, signal) };
    if sent != 0 {
        return Err(format!("kill: {}", std::io::Error::last_os_error()));
    }
    Ok(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_recorded_in_tmux_is_read_back() {
        let record = Record {
            command: "echo 'é'\nexit 7".into(),
            ..Record::from_recorded(PaneId(4), b"1 abc123 w 1700000000.25 42 ").unwrap()
        };
        let value = record.recorded();
        assert!(
            value.starts_with("1 abc123 w 1700000000.250000 42 6563"),
            "{value}"
        );
        let back = Record::from_recorded(PaneId(4), value.as_bytes()).unwrap();
        assert_eq!(
            (
                back.id.as_str(),
                back.command.as_str(),
                back.pid,
                back.started_at
            ),
            ("abc123", "echo 'é'\nexit 7", 42, 1_700_000_000.25)
        );
        assert!(back.adopted && !back.ended);
        assert!(matches!(back.delimiters, Delimiters::Markers(ref n) if n == "abc123"));
        for bad in [
            &b""[..],
            b"2 abc w 1 2 ",
            b"1 a;b w 1 2 ",
            b"1 abc x 1 2",
            b"1 abc w z 2",
        ] {
            assert!(Record::from_recorded(PaneId(4), bad).is_none(), "{bad:?}");
        }
        assert_eq!(recorded_end(b"abc123 7", "abc123"), Some(Some(7)));
        assert_eq!(recorded_end(b"abc123 x", "abc123"), Some(None));
        assert_eq!(recorded_end(b"other 7", "abc123"), None);
        assert_eq!(recorded_end(b"", "abc123"), None);
        let appended = b";aaa 1;abc123 7;bbb ";
        assert_eq!(recorded_end(appended, "abc123"), Some(Some(7)));
        assert_eq!(recorded_end(appended, "bbb"), Some(None));
        assert_eq!(recorded_end(appended, "ccc"), None);
    }

    fn started(id: &str, pid: u32, at: f64) -> Record {
        let entry = format!("1 {id} m {at} {pid} 6869");
        Record::from_recorded(PaneId(4), entry.as_bytes()).unwrap()
    }

    /// A pane keeps its newest handles of its present process, and the
    /// ends of those only; each reads back.
    #[test]
    fn a_pane_keeps_its_recent_handles_and_their_ends() {
        let mut row = HandleRow::default();
        for n in 0..12u32 {
            let record = started(&format!("c{n}"), 42, f64::from(n));
            (row.start, row.end) = options_with(&row, &record);
            row.end.push_str(&format!(";c{n} {n}"));
        }
        let ids: Vec<String> = recorded_starts(PaneId(4), &row.start)
            .map(|(r, _)| r.id)
            .collect();
        let newest: Vec<String> = (4..12).map(|n| format!("c{n}")).collect();
        assert_eq!(ids, newest);
        assert!(!row.end.contains("c3 "), "{}", row.end);
        assert!(row.end.starts_with(";c4 4;"), "{}", row.end);
        for n in 4..12 {
            assert_eq!(
                recorded_end(row.end.as_bytes(), &format!("c{n}")),
                Some(Some(i64::from(n)))
            );
        }
        // A respawned pane's process starts a list of its own.
        let (start, end) = options_with(&row, &started("d0", 43, 20.0));
        assert_eq!(recorded_starts(PaneId(4), &start).count(), 1, "{start}");
        assert_eq!(end, "");
        // A value from before the list, and junk, read as far as they go.
        let old = "1 abc w 1.5 42 6869;junk;;2 x";
        let ids: Vec<String> = recorded_starts(PaneId(4), old).map(|(r, _)| r.id).collect();
        assert_eq!(ids, ["abc"]);
    }

    /// Commands are kept in the order they started, and an old one taken
    /// over and ended past the bound of finished ones is forgotten at once.
    #[test]
    fn an_old_finished_command_taken_over_is_forgotten() {
        let commands = Commands::default();
        for n in 1..=KEEP_FINISHED {
            commands.add(Record {
                ended: true,
                ..started(&format!("c{n}"), 42, n as f64 + 10.0)
            });
        }
        commands.add(started("old", 42, 1.0));
        assert_eq!(commands.list()[0].id, "old");
        commands.end("old", None, End::Status(Some(0)));
        assert!(commands.get("old").is_none());
        assert_eq!(commands.list().len(), KEEP_FINISHED);
    }
}
