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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::span::{Delimiters, Span};
use crate::ids::PaneId;
use crate::panes::LineView;
use crate::tmux::hub::Hub;
use crate::tools::shared::bounded::HeadTail;
use crate::tools::shared::observe::{MAX_LINE, Watch};
use crate::tools::shared::pace::{Pace, Woke};
use crate::tools::{ErrorKind, Target, ToolError, ToolResult};

/// Finished commands kept for `list_commands` (running ones are all kept).
const KEEP_FINISHED: usize = 20;
/// Characters of a command kept for listing.
const SHOWN_CHARS: usize = 200;

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
}

impl Record {
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
        }
    }
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
    /// The commands kept for `hub`'s server.
    pub fn of(hub: &Hub) -> Arc<Commands> {
        hub.kept::<Commands>()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Record>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `record`, forgetting the oldest finished ones past the bound.
    pub fn add(&self, record: Record) {
        let mut records = self.lock();
        records.push_back(record);
        while records.iter().filter(|r| r.ended).count() > KEEP_FINISHED {
            let Some(oldest) = records.iter().position(|r| r.ended) else {
                break;
            };
            records.remove(oldest);
        }
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
    /// with `status`. The first end seen stands.
    pub fn end(&self, id: &str, at: Option<u64>, status: Option<i64>) {
        self.update(id, |r| {
            if !r.ended {
                r.ended = true;
                r.ended_at = Some(now());
                r.status = status;
                r.end_at = at;
            }
        });
    }

    /// Every kept command, oldest first.
    pub fn list(&self) -> Vec<Record> {
        self.lock().iter().cloned().collect()
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
    pub fn read(&mut self, watch: &Watch, output: &mut HeadTail) {
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
                match memchr::memrchr(b'\n', bytes) {
                    Some(nl) => *since_newline = bytes.len() - nl - 1,
                    None => *since_newline += bytes.len(),
                }
                view.feed(bytes, &mut |line| output.push(line));
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
            if !self.view.partial().is_empty() {
                output.push(self.view.partial());
            }
            return at;
        }
        let held = (self.since_newline + self.span.held_len()) as u64;
        self.cursor.saturating_sub(held).max(self.from)
    }
}

/// Follows `id` until it ends, holding `watch` so that its pane stays
/// streamed; records the end. Returns when the end is known, or the
/// pane's end (status unknown).
pub async fn follow(target: Target, mut watch: Watch, id: String) {
    let commands = Commands::of(&target.hub);
    let Some(record) = commands.get(&id) else {
        return;
    };
    let mut reader = Reader::resume(&Record {
        output_from: None,
        ..record
    });
    let mut nothing = HeadTail::new(0, 0);
    loop {
        watch.mark_seen();
        reader.read(&watch, &mut nothing);
        if let Some(from) = reader.output_from() {
            commands.update(&id, |r| {
                r.output_from.get_or_insert(from);
            });
        }
        if let Some((at, status)) = reader.ended() {
            commands.end(&id, Some(at), status);
            return;
        }
        let alive: ToolResult<bool> = watch.check_alive(&target).await;
        let gone = alive.is_err() || watch.epoch() != record_epoch(&commands, &id);
        if gone || commands.get(&id).is_none_or(|r| r.ended) {
            commands.end(&id, None, None);
            return;
        }
        watch.changed(Duration::from_secs(60)).await;
    }
}

fn record_epoch(commands: &Commands, id: &str) -> u64 {
    commands.get(id).map_or(0, |r| r.epoch)
}

/// What one wait on a command found.
pub struct Waited {
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
) -> ToolResult<Waited> {
    let commands = Commands::of(&target.hub);
    let record = commands.get(id).ok_or_else(|| unknown(id))?;
    let mut watch = match Watch::start(target, record.pane).await {
        Ok(watch) if watch.epoch() == record.epoch => watch,
        // The pane is gone or was respawned: its output with it.
        _ => {
            commands.end(id, None, None);
            let record = commands.get(id).unwrap_or(record);
            return Ok(Waited {
                record,
                from: None,
                missed: true,
            });
        }
    };
    let mut reader = Reader::resume(&record);
    let cancelled = loop {
        watch.mark_seen();
        reader.read(&watch, output);
        if let Some(from) = reader.output_from() {
            commands.update(id, |r| {
                r.output_from.get_or_insert(from);
            });
        }
        if let Some((at, status)) = reader.ended() {
            commands.end(id, Some(at), status);
            break false;
        }
        let ended = commands.get(id).is_none_or(|r| r.ended);
        if ended || pace.expired() {
            break false;
        }
        match watch.check_alive(target).await {
            Err(e) if e.kind.is_pane_end() => {
                commands.end(id, None, None);
                break false;
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        // Killed by the signal we sent, the command took the rest of the
        // typed line with it (a shell drops it when its child dies of
        // SIGINT): the shell is back at its prompt with no end printed.
        // Its status is then the signal's, as the shell reports it.
        if let Some(signal) = stopping
            && crate::process::probe(record.pid).activity == crate::process::Activity::Prompt
        {
            // A round trip on the streaming client: what the shell printed
            // before it read the terminal is recorded by its reply.
            watch.capture(&[]).await?;
            reader.read(&watch, output);
            let ended = reader
                .ended()
                .map_or((None, Some(128 + i64::from(signal))), |(at, status)| {
                    (Some(at), status)
                });
            commands.end(id, ended.0, ended.1);
            break false;
        }
        if let Woke::Cancelled = pace.sleep(watch.changed(pace.left())).await {
            break true;
        }
    };
    let returned = reader.finish(output);
    commands.update(id, |r| r.returned = r.returned.max(returned));
    if cancelled {
        return Err(ToolError::new(
            ErrorKind::Cancelled,
            "the wait was cancelled; the command keeps running",
        ));
    }
    let record = commands.get(id).ok_or_else(|| unknown(id))?;
    Ok(Waited {
        from: reader.output_from().map(|_| reader.from),
        missed: reader.missed,
        record,
    })
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
/// panes only (`/proc`); returns what was signalled.
pub fn signal_command(pane_pid: u32, signal: i32) -> Result<i32, String> {
    let stat = std::fs::read(format!("/proc/{pane_pid}/stat"))
        .ok()
        .and_then(|bytes| crate::process::parse_stat(&bytes))
        .ok_or("the pane's process is gone")?;
    let group = stat.tpgid;
    if group <= 0 || group == stat.pgrp {
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
