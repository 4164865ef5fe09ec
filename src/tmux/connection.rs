//! One control client: the tasks that own a `tmux -C` child.
//!
//! The child is attached to one tmux session with
//! `tmux -u -N -S <path> -C attach-session -t $id -f ignore-size`:
//! `-u` keeps non-ASCII intact in list output, `-N` never starts a server,
//! `-S` pins the socket whatever `$TMUX` says, and `ignore-size` plus never
//! sending `refresh-client -C` means no user window is ever resized.
//!
//! Two tasks share the child. The writer owns its stdin: it takes requests
//! in order, pushes each reply slot on the FIFO *before* writing the line,
//! and writes one command per line. The reader owns its stdout and the
//! [`Parser`]: it never waits on anyone, pops the FIFO on every reply this
//! client asked for (flags 1; flags-0 blocks come from hooks), and hands
//! every event to the [`Observer`] in stream order. When the stream ends,
//! every request still waiting fails with [`TmuxError::Disconnected`].

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout};
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
    /// Starts a control client attached to `session` and waits until tmux
    /// has run the attach (the initial flags-0 block).
    pub async fn attach(
        tmux_bin: &Path,
        socket: &Path,
        session: SessionId,
        limits: &Limits,
        observer: Arc<dyn Observer>,
    ) -> Result<Connection, TmuxError> {
        let mut child = tokio::process::Command::new(tmux_bin)
            .arg("-u")
            .arg("-N")
            .arg("-S")
            .arg(socket)
            .args([
                "-C",
                "attach-session",
                "-t",
                &session.to_string(),
                "-f",
                "ignore-size",
            ])
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| TmuxError::Io(format!("{}: {e}", tmux_bin.display())))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");

        let (requests, queue) = mpsc::unbounded_channel();
        let closed = CancellationToken::new();
        let gone = CancellationToken::new();
        let pending = Arc::new(Mutex::new(VecDeque::<Slot>::new()));
        let (ready_tx, ready_rx) = oneshot::channel();
        let parser = Parser::new(limits.tmux_line, limits.tmux_reply);
        let reader = Reader {
            session,
            stdout,
            parser,
            pending: pending.clone(),
            observer,
            closed: closed.clone(),
            gone: gone.clone(),
        };
        tokio::spawn(reader.run(ready_tx));
        tokio::spawn(write_loop(stdin, queue, pending, closed.clone()));
        tokio::spawn(reap(child, closed.clone()));

        match tokio::time::timeout(limits.attach_timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => Ok(Connection {
                session,
                requests,
                closed,
                gone,
            }),
            Ok(Ok(Err(e))) => {
                closed.cancel();
                Err(e)
            }
            Ok(Err(_)) => {
                closed.cancel();
                Err(TmuxError::Disconnected)
            }
            Err(_) => {
                closed.cancel();
                Err(TmuxError::Timeout(limits.attach_timeout))
            }
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

/// The reader half: owns the child's stdout and the parser.
struct Reader {
    session: SessionId,
    stdout: ChildStdout,
    parser: Parser,
    pending: Arc<Mutex<VecDeque<Slot>>>,
    observer: Arc<dyn Observer>,
    closed: CancellationToken,
    gone: CancellationToken,
}

impl Reader {
    async fn run(self, ready: oneshot::Sender<Result<(), TmuxError>>) {
        let Reader {
            session,
            mut stdout,
            mut parser,
            pending,
            observer,
            closed,
            gone,
        } = self;
        let mut ready = Some(ready);
        let mut buf = vec![0u8; 64 * 1024];
        let mut events = Vec::new();
        loop {
            let n = match stdout.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            parser.push(&buf[..n], &mut events);
            for event in events.drain(..) {
                match event {
                    Event::Reply(reply) if reply.guard.flags == 0 => {
                        // The first flags-0 block is the attach itself; later
                        // ones come from hooks the user set, and are not ours.
                        if let Some(ready) = ready.take() {
                            let result = if reply.ok {
                                Ok(())
                            } else {
                                Err(TmuxError::Command(reply.text()))
                            };
                            let _ = ready.send(result);
                        }
                    }
                    Event::Reply(reply) => {
                        let slot = pending.lock().expect("pending lock").pop_front();
                        if let Some(slot) = slot {
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
                    }
                    event => {
                        match &event {
                            Event::Begin(guard) if guard.flags == 1 => {
                                // The block about to open answers the oldest
                                // request; take its sync point now, before
                                // any later %output is recorded.
                                let mut pending = pending.lock().expect("pending lock");
                                if let Some(slot) = pending.front_mut() {
                                    slot.position = slot.sync.and_then(|p| observer.position(p));
                                }
                            }
                            Event::SessionChanged { session: now, .. }
                                if ready.is_none() && *now != session =>
                            {
                                // Our session was destroyed and tmux moved us
                                // into another (detach-on-destroy off): that
                                // one is the user's, not ours to stay in.
                                closed.cancel();
                            }
                            Event::Exit(reason) => {
                                if let Some(ready) = ready.take() {
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
                        observer.event(session, &event);
                    }
                }
            }
        }
        // A `%exit` held back inside an open block is only settled at EOF.
        parser.finish(&mut events);
        for event in events.drain(..) {
            observer.event(session, &event);
        }
        // Cancel under the lock: the writer checks `closed` under the same lock
        // before queueing a slot, so no slot can be left behind unanswered.
        let mut pending = pending.lock().expect("pending lock");
        closed.cancel();
        for slot in pending.drain(..) {
            let _ = slot.reply.send(Err(TmuxError::Disconnected));
        }
        drop(pending);
        observer.closed(session);
        gone.cancel();
    }
}

async fn write_loop(
    mut stdin: ChildStdin,
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
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
    // Dropping stdin is the polite detach; the reader sees `%exit` and EOF.
    drop(stdin);
    while let Ok(request) = queue.try_recv() {
        let _ = request.slot.reply.send(Err(TmuxError::NotSent));
    }
}

/// Waits for the child so it never lingers as a zombie.
async fn reap(mut child: Child, closed: CancellationToken) {
    tokio::select! {
        _ = child.wait() => {}
        _ = closed.cancelled() => {
            // stdin is closed by the writer; give tmux a moment to say %exit.
            if tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await.is_err() {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }
    closed.cancel();
}
