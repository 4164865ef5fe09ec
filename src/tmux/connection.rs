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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::control::{Event, Parser, Reply};
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

/// The byte stream of one control client, and what is behind it.
pub struct Pipe {
    /// What the control-mode client prints: replies and notifications.
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// Where commands are written, one per line. Closing it detaches.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// The process behind the pipe, if any: reaped when it exits, and
    /// killed if it outstays a detach.
    pub child: Option<Child>,
}

/// How a hub opens control clients.
pub trait Transport: Send + Sync + 'static {
    /// A pipe to a control-mode client attaching to `session`. It returns
    /// at once; [`Connection::start`] waits for the attach.
    fn open(&self, session: SessionId) -> Result<Pipe, TmuxError>;
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
}

struct Request {
    line: Vec<u8>,
    slot: Slot,
}

/// A handle on a live control client. Cheap to clone.
#[derive(Clone)]
pub struct Connection {
    session: SessionId,
    requests: mpsc::UnboundedSender<Request>,
    /// Cancelled when the client is going away (detach asked, or stream over).
    closed: CancellationToken,
    /// Cancelled once the reader has seen the end of the stream.
    gone: CancellationToken,
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
    ) -> Result<Connection, TmuxError> {
        let (requests, queue) = mpsc::unbounded_channel();
        let closed = CancellationToken::new();
        let gone = CancellationToken::new();
        let pending = Arc::new(Mutex::new(VecDeque::<Slot>::new()));
        let (ready_tx, ready_rx) = oneshot::channel();
        let reader = Reader {
            session,
            parser: Parser::new(limits.tmux_line, limits.tmux_reply),
            pending: pending.clone(),
            observer,
            closed: closed.clone(),
            ready: Some(ready_tx),
        };
        tokio::spawn(reader.run(pipe.reader, gone.clone()));
        tokio::spawn(write_loop(pipe.writer, queue, pending, closed.clone()));
        if let Some(child) = pipe.child {
            tokio::spawn(super::child::reap(child, closed.clone()));
        }
        let attached = match tokio::time::timeout(limits.attach_timeout, ready_rx).await {
            Ok(Ok(attached)) => attached,
            Ok(Err(_)) => Err(TmuxError::Disconnected),
            Err(_) => Err(TmuxError::Timeout(limits.attach_timeout)),
        };
        if attached.is_err() {
            closed.cancel();
        }
        attached.map(|()| Connection {
            session,
            requests,
            closed,
            gone,
        })
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
        let line = command.to_line()?;
        let (reply, rx) = oneshot::channel();
        let slot = Slot {
            reply,
            sync,
            position: None,
        };
        self.requests
            .send(Request { line, slot })
            .map_err(|_| TmuxError::NotSent)?;
        rx.await.unwrap_or(Err(TmuxError::Disconnected))
    }

    /// Detaches politely: closing stdin makes tmux print `%exit` and the
    /// child exit. Sessions are left exactly as they were.
    pub fn detach(&self) {
        self.closed.cancel();
    }
}

/// The reader half: owns the read half of the pipe and the parser.
struct Reader {
    session: SessionId,
    parser: Parser,
    pending: Arc<Mutex<VecDeque<Slot>>>,
    observer: Arc<dyn Observer>,
    closed: CancellationToken,
    /// Told the attach's outcome, then `None`.
    ready: Option<oneshot::Sender<Result<(), TmuxError>>>,
}

impl Reader {
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
    }

    fn handle(&mut self, event: Event) {
        match event {
            // The first flags-0 block is the attach itself; later ones come
            // from hooks the user set, and are not ours.
            Event::Reply(reply) if reply.guard.flags == 0 => {
                if let Some(ready) = self.ready.take() {
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
                self.observer.event(self.session, &event);
            }
        }
    }

    /// Hands a reply to the oldest request.
    fn answer(&self, reply: Reply) {
        let slot = self.pending.lock().expect("pending lock").pop_front();
        let Some(slot) = slot else { return };
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

async fn write_loop(
    mut writer: Box<dyn AsyncWrite + Send + Unpin>,
    mut queue: mpsc::UnboundedReceiver<Request>,
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
        let mut line = request.line;
        // An empty or blank line would detach the client or get no reply,
        // and the FIFO would slip; the builder never makes one.
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            let _ = request
                .slot
                .reply
                .send(Err(TmuxError::Command("empty command".into())));
            continue;
        }
        line.push(b'\n');
        {
            let mut pending = pending.lock().expect("pending lock");
            if closed.is_cancelled() {
                let _ = request.slot.reply.send(Err(TmuxError::NotSent));
                break;
            }
            pending.push_back(request.slot);
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
        let _ = request.slot.reply.send(Err(TmuxError::NotSent));
    }
}
