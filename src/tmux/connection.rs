//! One control client: control mode spoken over any reader and writer.
//!
//! A [`Transport`] opens the [`Pipe`] (a `tmux -C` child in
//! [`super::child`], a scripted peer in tests, ssh later); everything here
//! is the same whatever is behind it.
//!
//! Two tasks share the pipe. The writer owns its write half: it takes
//! requests in order, pushes each reply slot on the FIFO *before* writing
//! the line, and writes one command per line. The reader owns its read half
//! and the [`Parser`]: it never waits on anyone, pops the FIFO on every reply
//! this client asked for (flags 1; flags-0 blocks come from hooks), and hands
//! every event to the [`Observer`] in stream order. When the stream ends,
//! every request still waiting fails with [`TmuxError::Disconnected`].
//!
//! A client is either the server's command client (attached with
//! `no-output`, so no reply ever waits behind a pane's output) or the
//! streaming client of one session, whose [`Quiet`] pauses every pane no
//! [`Lease`] wants. Either detaches itself once it has been idle (no request
//! in flight, no lease) for the configured time.

pub mod quiet;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use self::quiet::{Lease, Quiet};
use super::control::{self, Event, Parser, Reply};
use super::door::Door;
use super::pipe::Pipe;
use super::version::Features;
use super::{Command, PaneId, SessionId, TmuxError};
use crate::config::Limits;

/// Sees every event of a control client, in stream order, on the reader task.
/// It must not block: the reader is what keeps tmux from stalling panes.
pub trait Observer: Send + Sync + 'static {
    /// Every event except replies, which go to whoever asked.
    fn event(&self, session: SessionId, event: &Event);
    /// How many bytes of `pane`'s output have been seen so far, if it is
    /// being recorded. Asked when a synced command's `%begin` is read.
    fn position(&self, _pane: PaneId) -> Option<u64> {
        None
    }
    /// The stream ended; anything observed through it may have gaps now.
    fn closed(&self, _session: SessionId) {}
}

/// What a control client is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs the server's commands; sent no pane output where the release
    /// allows it.
    Commands,
    /// Streams the watched panes of its session.
    Streaming,
}

impl Role {
    /// The `attach-session -f` flags of a client in this role.
    /// `ignore-size` (and never sending `refresh-client -C`) means no user
    /// window is ever resized.
    pub fn attach_flags(self, features: Features) -> &'static str {
        match self {
            Role::Commands if features.mute => "ignore-size,no-output",
            _ => "ignore-size",
        }
    }
}

/// How a client is set up, besides its pipe.
#[derive(Clone)]
pub struct Setup {
    pub role: Role,
    pub features: Features,
    /// Detach after this long with nothing in flight and no lease.
    pub idle_detach: Option<Duration>,
    /// Notified whenever a client becomes idle or goes away.
    pub idle: Arc<Notify>,
    /// Where the release needs our attaches and detaches kept apart
    /// ([`Features::attach_alone`]): the door this client leaves by.
    pub door: Option<Door>,
}

/// How long a detach waits for its stream to end.
const LEAVE_BOUND: Duration = Duration::from_secs(2);

/// How busy a client is: requests in flight plus leases of its panes.
#[derive(Clone)]
pub struct ClientActivity {
    busy: Arc<watch::Sender<usize>>,
    idle: Arc<Notify>,
}

impl ClientActivity {
    fn new(idle: Arc<Notify>) -> ClientActivity {
        ClientActivity {
            busy: Arc::new(watch::channel(0).0),
            idle,
        }
    }

    /// Counts as busy until the guard drops.
    pub(super) fn enter(&self) -> Busy {
        self.busy.send_modify(|n| *n += 1);
        Busy(self.clone())
    }

    fn count(&self) -> usize {
        *self.busy.borrow()
    }

    /// Cancels `closed` if nothing is busy, under the same lock as
    /// [`ClientActivity::enter`]: a lease that counted itself and then found the
    /// client open is never cut off, and one counted after finds it closed.
    fn close_if_idle(&self, closed: &CancellationToken) -> bool {
        let mut done = false;
        self.busy.send_if_modified(|n| {
            if *n == 0 {
                closed.cancel();
                done = true;
            }
            false
        });
        done
    }
}

/// One reason a client is busy.
pub struct Busy(ClientActivity);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut idle = false;
        self.0.busy.send_modify(|n| {
            *n = n.saturating_sub(1);
            idle = *n == 0;
        });
        if idle {
            self.0.idle.notify_waiters();
        }
    }
}

/// Writes commands on a client, with or without waiting for the reply.
#[derive(Clone)]
pub(super) struct InFlight(mpsc::UnboundedSender<ClientRequest>);

impl InFlight {
    /// Writes `command` and waits for its reply.
    pub(super) async fn ask(&self, command: &Command) -> Result<Reply, TmuxError> {
        Ok(self.send(command, None).await?.reply)
    }

    async fn send(&self, command: &Command, sync: Option<PaneId>) -> Result<Synced, TmuxError> {
        let rx = self.queue(command, sync)?;
        rx.await.unwrap_or(Err(TmuxError::Disconnected))
    }

    /// Queues `command` for writing and returns at once; tmux's reply is
    /// dropped. Commands queued in turn are written in turn.
    pub(super) fn fire(&self, command: &Command) {
        let _ = self.queue(command, None);
    }

    /// Queues `command` like [`InFlight::fire`]; its reply, once it comes,
    /// says tmux has run it and everything written before it.
    pub(super) fn fire_answered(&self, command: &Command) -> ClientReply {
        ClientReply(self.queue(command, None).ok())
    }

    fn queue(
        &self,
        command: &Command,
        sync: Option<PaneId>,
    ) -> Result<oneshot::Receiver<Result<Synced, TmuxError>>, TmuxError> {
        let line = command.to_line()?;
        let (reply, rx) = oneshot::channel();
        let slot = Slot {
            reply,
            sync,
            position: None,
            notices: command.name() == "refresh-client",
        };
        self.0
            .send(ClientRequest::Command { line, slot })
            .map_err(|_| TmuxError::NotSent)?;
        Ok(rx)
    }

    /// Returns once the commands queued so far are written to tmux (not
    /// yet answered); at once when the client is gone.
    pub(super) async fn written(&self) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(ClientRequest::Written(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// The reply to come of a command queued with `InFlight::fire_answered`.
pub struct ClientReply(Option<oneshot::Receiver<Result<Synced, TmuxError>>>);

impl ClientReply {
    /// Waits for the reply (a command that could not be queued fails as
    /// disconnected).
    pub async fn arrived(self) -> Result<(), TmuxError> {
        match self.0 {
            Some(rx) => rx.await.unwrap_or(Err(TmuxError::Disconnected)).map(drop),
            None => Err(TmuxError::Disconnected),
        }
    }
}

/// A reply, with the sync point when one was asked for.
#[derive(Debug)]
pub struct Synced {
    pub reply: Reply,
    /// The pane's output position when tmux began this command: every byte
    /// before it is in what the command saw, every byte after it is new.
    pub position: Option<u64>,
}

/// Where a reply goes, queued in the order the lines were written.
struct Slot {
    reply: oneshot::Sender<Result<Synced, TmuxError>>,
    sync: Option<PaneId>,
    position: Option<u64>,
    /// The reply carries notices to hand on ([`control::flow_notice`]).
    notices: bool,
}

enum ClientRequest {
    Command {
        line: Vec<u8>,
        slot: Slot,
    },
    /// Answered once everything queued before it is written.
    Written(oneshot::Sender<()>),
}

/// A handle on a live control client. Cheap to clone.
#[derive(Clone)]
pub struct Connection {
    session: SessionId,
    commands: InFlight,
    activity: ClientActivity,
    /// Mutes the panes nobody wants; `None` when the client streams
    /// nothing (the command client) or cannot mute (old tmux).
    quiet: Option<Arc<Quiet>>,
    /// Cancelled when the client is going away (detach asked, or stream over).
    closed: CancellationToken,
    /// Cancelled once the reader has seen the end of the stream.
    gone: CancellationToken,
    door: Option<Door>,
}

impl Connection {
    /// Starts speaking control mode over `pipe`, a client attaching to
    /// `session`, and waits until tmux has run the attach (the initial
    /// flags-0 block), within the attach timeout.
    pub async fn start(
        pipe: Pipe,
        session: SessionId,
        limits: &Limits,
        observer: Arc<dyn Observer>,
        setup: Setup,
    ) -> Result<Connection, TmuxError> {
        let (requests, queue) = mpsc::unbounded_channel();
        let commands = InFlight(requests);
        let activity = ClientActivity::new(setup.idle.clone());
        let quiet = (setup.role == Role::Streaming && setup.features.mute)
            .then(|| Quiet::new(session, commands.clone()));
        let closed = CancellationToken::new();
        let gone = CancellationToken::new();
        let pending = Arc::new(Mutex::new(VecDeque::<Slot>::new()));
        let (ready_tx, ready_rx) = oneshot::channel();
        let reader = PipeReader {
            session,
            parser: Parser::new(limits.tmux_line, limits.tmux_reply),
            pending: pending.clone(),
            observer,
            quiet: quiet.clone(),
            closed: closed.clone(),
            ready: Some(ready_tx),
            idle: setup.idle.clone(),
            attached: false,
            notices_in_reply: setup.features.notices_in_reply,
        };
        tokio::spawn(reader.run(pipe.reader, gone.clone()));
        tokio::spawn(write_loop(pipe.writer, queue, pending, closed.clone()));
        if let Some(child) = pipe.child {
            tokio::spawn(super::pipe::reap(child, closed.clone()));
        }
        // Until the client is handed over, a failed attach or a caller that
        // gave up leaves it detaching (through the door), not attached with
        // nobody to use it.
        let leaving = Leaving {
            activity: activity.clone(),
            closed: closed.clone(),
            gone: gone.clone(),
            door: setup.door.clone(),
        };
        let mut unfinished = Unfinished(Some(leaving.clone()));
        match tokio::time::timeout(limits.attach_timeout, ready_rx).await {
            Ok(Ok(attached)) => attached?,
            Ok(Err(_)) => return Err(TmuxError::Disconnected),
            Err(_) => return Err(TmuxError::Timeout(limits.attach_timeout)),
        }
        if let Some(quiet) = &quiet {
            quiet.mute_session().await;
        }
        unfinished.0 = None;
        if let Some(after) = setup.idle_detach {
            tokio::spawn(detach_when_idle(activity.busy.subscribe(), leaving, after));
        }
        Ok(Connection {
            session,
            commands,
            activity,
            quiet,
            closed,
            gone,
            door: setup.door,
        })
    }

    /// Whether `other` is a handle on this same client.
    pub fn is(&self, other: &Connection) -> bool {
        Arc::ptr_eq(&self.activity.busy, &other.activity.busy)
    }

    /// Returns once every command queued on this client so far is written
    /// to tmux (not yet answered).
    pub async fn written(&self) {
        self.commands.written().await
    }

    /// Nothing in flight and no lease: the client may be let go.
    pub fn is_idle(&self) -> bool {
        self.activity.count() == 0
    }

    /// Streams `pane`'s output on this client until the lease drops.
    pub fn stream(&self, pane: PaneId) -> Lease {
        let busy = self.activity.enter();
        match &self.quiet {
            Some(quiet) => quiet.lease(pane, busy),
            None => Lease::unmuted(pane, busy),
        }
    }

    /// Pauses `pane` on this client before a respawn ([`Quiet::hold`]);
    /// `None` on a client that cannot mute.
    pub(super) fn hold(&self, pane: PaneId) -> Option<ClientReply> {
        self.quiet.as_ref().map(|quiet| quiet.hold(pane))
    }

    /// Streams `pane` again after [`Connection::hold`] if a lease wants it.
    pub(super) fn unhold(&self, pane: PaneId) {
        if let Some(quiet) = &self.quiet {
            quiet.unhold(pane);
        }
    }

    /// The session this client is attached to.
    pub fn session(&self) -> SessionId {
        self.session
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Resolves when the control client's stream has ended.
    pub async fn wait_closed(&self) {
        self.gone.cancelled().await
    }

    /// Sends one command and waits for its reply block.
    pub async fn run(&self, command: &Command) -> Result<Reply, TmuxError> {
        Ok(self.send(command, None).await?.reply)
    }

    /// Like [`run`](Self::run), and also reports `pane`'s output position at
    /// the command's `%begin`: the exact point between "already on screen"
    /// and "new" for a `capture-pane` of that pane on this client.
    pub async fn run_synced(&self, command: &Command, pane: PaneId) -> Result<Synced, TmuxError> {
        self.send(command, Some(pane)).await
    }

    async fn send(&self, command: &Command, sync: Option<PaneId>) -> Result<Synced, TmuxError> {
        let _busy = self.activity.enter();
        self.commands.send(command, sync).await
    }

    /// Detaches politely (closing stdin makes tmux print `%exit` and the
    /// child exit; sessions are left exactly as they were), through the
    /// door where the release needs one, and waits (bounded) for the
    /// stream to end.
    pub async fn leave(self) {
        self.leaving().leave(false).await;
    }

    /// [`Connection::leave`] if it is still idle once through the door (a
    /// client let go to make room, that a caller may have just leased).
    pub async fn leave_if_idle(self) {
        self.leaving().leave(true).await;
    }

    fn leaving(self) -> Leaving {
        Leaving {
            activity: self.activity,
            closed: self.closed,
            gone: self.gone,
            door: self.door,
        }
    }
}

/// A client being set up; detached if dropped before it is handed over.
struct Unfinished(Option<Leaving>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        let Some(leaving) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { leaving.leave(false).await });
            }
            // No runtime (the process is ending): no attach can be racing.
            Err(_) => leaving.closed.cancel(),
        }
    }
}

/// What a detach of one client needs.
#[derive(Clone)]
struct Leaving {
    activity: ClientActivity,
    closed: CancellationToken,
    gone: CancellationToken,
    door: Option<Door>,
}

impl Leaving {
    /// Detaches (only if idle, once through the door, when `if_idle`);
    /// true if it did.
    async fn leave(&self, if_idle: bool) -> bool {
        let _pass = match &self.door {
            Some(door) => Some(door.leave().await),
            None => None,
        };
        if !if_idle {
            self.closed.cancel();
        } else if !self.activity.close_if_idle(&self.closed) {
            return false;
        }
        let _ = tokio::time::timeout(LEAVE_BOUND, self.gone.cancelled()).await;
        true
    }
}

/// The reader half: owns the read half of the pipe and the parser.
struct PipeReader {
    session: SessionId,
    parser: Parser,
    pending: Arc<Mutex<VecDeque<Slot>>>,
    observer: Arc<dyn Observer>,
    quiet: Option<Arc<Quiet>>,
    closed: CancellationToken,
    /// Told the attach's outcome, then `None`.
    ready: Option<oneshot::Sender<Result<(), TmuxError>>>,
    /// Notified when the stream ends: a client slot is free.
    idle: Arc<Notify>,
    /// tmux ran the attach. A client that never attached held no slot, and
    /// waking the slot's waiters for it would have them attach again at
    /// once (a failing attach retried in a loop).
    attached: bool,
    /// `Features::notices_in_reply`: flow notices come inside replies.
    notices_in_reply: bool,
}

impl PipeReader {
    async fn run(mut self, mut stream: Box<dyn AsyncRead + Send + Unpin>, gone: CancellationToken) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut events = Vec::new();
        loop {
            let n = match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            self.parser.push(&buf[..n], &mut events);
            for event in events.drain(..) {
                self.handle(event);
            }
        }
        // A `%exit` held back inside an open block is only settled at EOF.
        self.parser.finish(&mut events);
        for event in events.drain(..) {
            self.observer.event(self.session, &event);
        }
        // Cancel under the lock: the writer checks `closed` under the same lock
        // before queueing a slot, so no slot can be left behind unanswered.
        let mut pending = self.pending.lock().expect("pending lock");
        self.closed.cancel();
        for slot in pending.drain(..) {
            let _ = slot.reply.send(Err(TmuxError::Disconnected));
        }
        drop(pending);
        self.observer.closed(self.session);
        gone.cancel();
        if self.attached {
            self.idle.notify_waiters();
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            // The first flags-0 block is the attach itself; later ones come
            // from hooks the user set, and are not ours.
            Event::Reply(reply) if reply.guard.flags == 0 => {
                if let Some(ready) = self.ready.take() {
                    self.attached = reply.ok;
                    let result = if reply.ok {
                        Ok(())
                    } else {
                        Err(TmuxError::Command(reply.text()))
                    };
                    let _ = ready.send(result);
                }
            }
            Event::Reply(reply) => self.answer(reply),
            event => {
                self.notice(&event);
                if let Some(quiet) = &self.quiet {
                    quiet.event(&event);
                }
                self.observer.event(self.session, &event);
            }
        }
    }

    /// Hands a reply to the oldest request.
    fn answer(&self, reply: Reply) {
        let slot = self.pending.lock().expect("pending lock").pop_front();
        let Some(slot) = slot else { return };
        if slot.notices && self.notices_in_reply {
            // A pause or resume is a gap in the pane's recording, at this
            // point of the stream. (From 3.8 it follows the reply as a
            // notification, before any output of the pane after it.)
            for event in reply.lines.iter().filter_map(|l| control::flow_notice(l)) {
                self.observer.event(self.session, &event);
            }
        }
        let result = match (reply.ok, reply.overflowed) {
            (_, true) => Err(TmuxError::Overflow),
            (true, false) => Ok(Synced {
                reply,
                position: slot.position,
            }),
            (false, false) => Err(TmuxError::Command(reply.text())),
        };
        let _ = slot.reply.send(result);
    }

    /// What the client itself must act on among the notifications.
    fn notice(&mut self, event: &Event) {
        match event {
            Event::Begin(guard) if guard.flags == 1 => {
                // The block about to open answers the oldest request; take
                // its sync point now, before any later %output is recorded.
                let mut pending = self.pending.lock().expect("pending lock");
                if let Some(slot) = pending.front_mut() {
                    slot.position = slot.sync.and_then(|p| self.observer.position(p));
                }
            }
            Event::SessionChanged { session: now, .. }
                if self.ready.is_none() && *now != self.session =>
            {
                // Our session was destroyed and tmux moved us into another
                // (detach-on-destroy off): that one is the user's, not ours
                // to stay in.
                self.closed.cancel();
            }
            Event::Exit(reason) => {
                if let Some(ready) = self.ready.take() {
                    let why = reason
                        .as_deref()
                        .map(String::from_utf8_lossy)
                        .unwrap_or_default();
                    let _ = ready.send(Err(TmuxError::Command(
                        format!("attach failed {why}").trim().into(),
                    )));
                }
            }
            _ => {}
        }
    }
}

/// Detaches the client once it has had nothing in flight and no lease for
/// `after` on end: the user's `tmux ls` no longer shows us attached.
async fn detach_when_idle(mut busy: watch::Receiver<usize>, leaving: Leaving, after: Duration) {
    let closed = leaving.closed.clone();
    loop {
        tokio::select! {
            idle = busy.wait_for(|n| *n == 0) => if idle.is_err() { return },
            _ = closed.cancelled() => return,
        }
        tokio::select! {
            _ = tokio::time::sleep(after) => {
                // Re-checked once through the door, atomically with any
                // lease being taken.
                if leaving.leave(true).await {
                    return;
                }
            }
            changed = busy.changed() => if changed.is_err() { return },
            _ = closed.cancelled() => return,
        }
    }
}

async fn write_loop(
    mut writer: Box<dyn AsyncWrite + Send + Unpin>,
    mut queue: mpsc::UnboundedReceiver<ClientRequest>,
    pending: Arc<Mutex<VecDeque<Slot>>>,
    closed: CancellationToken,
) {
    loop {
        let request = tokio::select! {
            request = queue.recv() => match request {
                Some(request) => request,
                None => break,
            },
            _ = closed.cancelled() => break,
        };
        let (mut line, slot) = match request {
            ClientRequest::Command { line, slot } => (line, slot),
            ClientRequest::Written(done) => {
                let _ = done.send(());
                continue;
            }
        };
        // An empty or blank line would detach the client or get no reply,
        // and the FIFO would slip; the builder never makes one.
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            let _ = slot
                .reply
                .send(Err(TmuxError::Command("empty command".into())));
            continue;
        }
        line.push(b'\n');
        {
            let mut pending = pending.lock().expect("pending lock");
            if closed.is_cancelled() {
                let _ = slot.reply.send(Err(TmuxError::NotSent));
                break;
            }
            pending.push_back(slot);
        }
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
    // Closing the writer is the polite detach; the reader sees `%exit` and
    // EOF. (Shut down as well as dropped: an in-memory pipe closes only so.)
    let _ = writer.shutdown().await;
    drop(writer);
    while let Ok(request) = queue.try_recv() {
        if let ClientRequest::Command { slot, .. } = request {
            let _ = slot.reply.send(Err(TmuxError::NotSent));
        }
    }
}
