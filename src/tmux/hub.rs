//! The control clients of one tmux server ([`Hub`]), and the registry of
//! servers by socket ([`Hubs`]).
//!
//! A hub attaches control clients lazily: the first command attaches one to
//! the server's first session and later commands reuse it (commands work on
//! any pane of the server whichever session the client is in). When the
//! client goes away (`%exit`, EOF, its session killed) the next command
//! attaches again; failed attaches back off so a flapping server costs a
//! one-shot process per call, not a storm of attaches. When the server has no
//! session at all, a control client cannot exist, and a one-shot `tmux`
//! process runs the command: the only cold path.
//!
//! tmux streams `%output` to a control client only for the windows of the
//! session it is attached to, so a tool that needs a pane's output asks for
//! the client of that pane's session ([`Hub::streaming`]); every client's
//! reader feeds the hub's [`Panes`] registry. Paste buffers our tools create
//! are remembered here so they can be deleted at shutdown.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::connection::{Connection, Observer};
use super::{Command, SessionId, TmuxError};
use crate::config::Limits;
use crate::panes::registry::Panes;

/// The lines a command printed, whichever path ran it.
pub type Lines = Vec<Vec<u8>>;

/// One tmux server, by socket path.
pub struct Hub {
    socket: PathBuf,
    tmux_bin: PathBuf,
    limits: Limits,
    panes: Arc<Panes>,
    state: tokio::sync::Mutex<State>,
    /// Paste buffers our tools created here and have not deleted.
    buffers: Mutex<BTreeSet<String>>,
}

#[derive(Default)]
struct State {
    /// Live control clients, one per session they are attached to.
    clients: HashMap<SessionId, Connection>,
    /// After a failed attach: when to try again, and the next delay.
    backoff: Option<(Instant, Duration)>,
}

const BACKOFF_START: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

impl Hub {
    pub fn new(socket: PathBuf, tmux_bin: PathBuf, limits: Limits) -> Self {
        let panes = Arc::new(Panes::new(limits.pane_ring, limits.watched_panes));
        Hub {
            socket,
            tmux_bin,
            limits,
            panes,
            state: tokio::sync::Mutex::new(State::default()),
            buffers: Mutex::new(BTreeSet::new()),
        }
    }

    /// The recorded output of this server's watched panes.
    pub fn panes(&self) -> &Arc<Panes> {
        &self.panes
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Remembers a paste buffer we created, to delete it at shutdown.
    pub fn track_buffer(&self, name: &str) {
        self.buffers
            .lock()
            .expect("buffers lock")
            .insert(name.to_owned());
    }

    pub fn untrack_buffer(&self, name: &str) {
        self.buffers.lock().expect("buffers lock").remove(name);
    }

    /// The buffers still remembered, forgetting them.
    pub fn take_buffers(&self) -> Vec<String> {
        std::mem::take(&mut *self.buffers.lock().expect("buffers lock"))
            .into_iter()
            .collect()
    }

    /// Runs one command and returns its output lines. Commands that would
    /// block a control client's whole queue run in a process of their own.
    /// The whole call (finding or attaching a client included) is bounded
    /// by the command timeout: a server that accepts and never answers is
    /// [`TmuxError::NotResponding`] within it.
    pub async fn run(&self, command: &Command) -> Result<Lines, TmuxError> {
        if blocks_queue(command) {
            return self.run_oneshot(command).await;
        }
        let limit = self.limits.tmux_command_timeout;
        let run = async {
            let mut attempts = 0;
            loop {
                let Some(client) = self.client().await else {
                    return self.run_oneshot(command).await;
                };
                attempts += 1;
                match client.run(command).await {
                    Ok(reply) => return Ok(reply.lines),
                    // The client went away (a user's `detach-client`, its
                    // session killed): a fresh one is attached next time.
                    Err(e) if attempts < MAX_ATTEMPTS && may_resend(command, &e) => continue,
                    Err(e) => return Err(e),
                }
            }
        };
        match tokio::time::timeout(limit, run).await {
            Ok(reply) => reply,
            Err(_) => Err(TmuxError::NotResponding(limit)),
        }
    }

    /// Runs a command in a `tmux` process of its own. For commands that must
    /// not run on a shared client (they block its queue, or end its session).
    pub async fn run_oneshot(&self, command: &Command) -> Result<Lines, TmuxError> {
        let limit = self.limits.tmux_command_timeout;
        match self.oneshot(command, limit, None).await {
            Err(TmuxError::Timeout(_)) => Err(TmuxError::NotResponding(limit)),
            other => other,
        }
    }

    /// [`Hub::run_oneshot`] with a caller-chosen bound, for commands that may
    /// legitimately wait (`wait-for`). When `timeout` passes
    /// ([`TmuxError::Timeout`]) or `cancel` fires ([`TmuxError::Cancelled`])
    /// the process is killed and reaped before this returns.
    pub async fn run_oneshot_bounded(
        &self,
        command: &Command,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Lines, TmuxError> {
        self.oneshot(command, timeout, Some(cancel)).await
    }

    async fn oneshot(
        &self,
        command: &Command,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Lines, TmuxError> {
        let argv = command.to_argv()?;
        let mut child = tokio::process::Command::new(&self.tmux_bin)
            .arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .args(argv)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| TmuxError::Io(format!("{}: {e}", self.tmux_bin.display())))?;
        let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(TmuxError::Io("tmux output pipes missing".into()));
        };
        let finished = {
            let run = async {
                let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
                tokio::try_join!(out.read_to_end(&mut stdout), err.read_to_end(&mut stderr))?;
                let status = child.wait().await?;
                Ok::<_, std::io::Error>((status, stdout, stderr))
            };
            let cancelled = async {
                match cancel {
                    Some(token) => token.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                done = run => Ok(done),
                _ = tokio::time::sleep(timeout) => Err(TmuxError::Timeout(timeout)),
                _ = cancelled => Err(TmuxError::Cancelled),
            }
        };
        let (status, mut stdout, stderr) = match finished {
            Ok(done) => done.map_err(|e| TmuxError::Io(e.to_string()))?,
            Err(e) => {
                // SIGKILL and reap: no tmux client outlives the call.
                let _ = child.kill().await;
                return Err(e);
            }
        };
        if status.success() {
            if stdout.last() == Some(&b'\n') {
                stdout.pop();
            }
            if stdout.is_empty() {
                return Ok(Vec::new());
            }
            return Ok(stdout.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect());
        }
        let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
        if is_no_server(&stderr) {
            Err(TmuxError::NoServer(stderr))
        } else {
            Err(TmuxError::Command(stderr))
        }
    }

    /// A live control client, attaching one if needed; `None` when the server
    /// has no session to attach to (or attaching is backing off).
    async fn client(&self) -> Option<Connection> {
        let mut state = self.state.lock().await;
        state.clients.retain(|_, client| !client.is_closed());
        if let Some(client) = state.clients.values().next() {
            return Some(client.clone());
        }
        if let Some((until, _)) = state.backoff
            && Instant::now() < until
        {
            return None;
        }
        let session = self.first_session().await?;
        match self.attach(session).await {
            Ok(client) => {
                state.backoff = None;
                state.clients.insert(session, client.clone());
                Some(client)
            }
            Err(e) => {
                let delay = state
                    .backoff
                    .map_or(BACKOFF_START, |(_, d)| (d * 2).min(BACKOFF_MAX));
                eprintln!(
                    "tmux-mcp: attaching to {} {session} failed: {e}",
                    self.socket.display()
                );
                state.backoff = Some((Instant::now() + delay, delay));
                None
            }
        }
    }

    /// The control client attached to `session`, which is the one that
    /// streams `%output` of that session's panes (tmux sends a client output
    /// only for windows of its own session).
    pub async fn streaming(&self, session: SessionId) -> Result<Connection, TmuxError> {
        let mut state = self.state.lock().await;
        state.clients.retain(|_, client| !client.is_closed());
        if let Some(client) = state.clients.get(&session) {
            return Ok(client.clone());
        }
        let client = self.attach(session).await?;
        state.clients.insert(session, client.clone());
        Ok(client)
    }

    async fn attach(&self, session: SessionId) -> Result<Connection, TmuxError> {
        let observer: Arc<dyn Observer> = self.panes.clone();
        Connection::attach(
            &self.tmux_bin,
            &self.socket,
            session,
            &self.limits,
            observer,
        )
        .await
    }

    async fn first_session(&self) -> Option<SessionId> {
        let list = Command::new("list-sessions").opt("-F", "#{session_id}");
        let lines = self.run_oneshot(&list).await.ok()?;
        lines.iter().filter_map(|l| SessionId::parse(l)).min()
    }

    /// Forgets the control client attached to `session` after a one-shot
    /// command ended that session: tmux is closing the client, and a command
    /// sent to it before its EOF is read would be lost.
    pub async fn session_ended(&self, session: SessionId) {
        let client = self.state.lock().await.clients.remove(&session);
        if let Some(client) = client {
            client.detach();
            let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_closed()).await;
        }
    }

    /// Detaches every control client; sessions are left as they are.
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        let clients: Vec<Connection> = state.clients.drain().map(|(_, c)| c).collect();
        for client in &clients {
            client.detach();
        }
        for client in clients {
            let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_closed()).await;
        }
    }
}

/// Tries of one command on successive control clients, each going away.
const MAX_ATTEMPTS: usize = 3;

/// Commands that change nothing in tmux. When the client they were written
/// to goes away before replying, tmux may or may not have run them (tmux
/// 3.7 discards a detached control client's pending output, so no reply
/// does not prove "not run"): only these are written again on a fresh
/// client, where running twice is harmless. Any other command is resent
/// only when it never reached tmux ([`TmuxError::NotSent`]); a `send-keys`
/// written twice would type twice.
const READ_ONLY: &[&str] = &[
    "capture-pane",
    "display-message",
    "has-session",
    "list-buffers",
    "list-clients",
    "list-panes",
    "list-sessions",
    "list-windows",
    "show-buffer",
    "show-environment",
    "show-hooks",
    "show-options",
    "show-window-options",
];

fn may_resend(command: &Command, error: &TmuxError) -> bool {
    match error {
        TmuxError::NotSent => true,
        TmuxError::Disconnected => READ_ONLY.contains(&command.name()),
        _ => false,
    }
}

/// Commands that make tmux print `%end` at once and then hold the client's
/// command queue until they finish (or that spawn nested command blocks):
/// on a shared control client they would stall every other call.
const QUEUE_BLOCKING: &[&str] = &[
    "wait-for",
    "run-shell",
    "load-buffer",
    "if-shell",
    "source-file",
];

fn blocks_queue(command: &Command) -> bool {
    QUEUE_BLOCKING.contains(&command.name())
}

fn is_no_server(stderr: &str) -> bool {
    stderr.starts_with("no server running") || stderr.starts_with("error connecting to")
}

/// Every tmux server this process has talked to, by socket path.
pub struct Hubs {
    tmux_bin: PathBuf,
    limits: Limits,
    hubs: Mutex<HashMap<PathBuf, Arc<Hub>>>,
}

impl Hubs {
    pub fn new(tmux_bin: PathBuf, limits: Limits) -> Self {
        Hubs {
            tmux_bin,
            limits,
            hubs: Mutex::new(HashMap::new()),
        }
    }

    /// The hub of the server at `socket`, created on first use.
    pub fn get(&self, socket: &Path) -> Arc<Hub> {
        let mut hubs = self.hubs.lock().expect("hubs lock");
        hubs.entry(socket.to_path_buf())
            .or_insert_with(|| {
                Arc::new(Hub::new(
                    socket.to_path_buf(),
                    self.tmux_bin.clone(),
                    self.limits.clone(),
                ))
            })
            .clone()
    }

    /// Every hub, in no particular order.
    pub fn all(&self) -> Vec<Arc<Hub>> {
        self.hubs
            .lock()
            .expect("hubs lock")
            .values()
            .cloned()
            .collect()
    }

    /// Detaches from every server.
    pub async fn shutdown(&self) {
        for hub in self.all() {
            hub.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_blocking_commands_are_recognised() {
        for name in QUEUE_BLOCKING {
            assert!(blocks_queue(&Command::new(name)));
        }
        assert!(!blocks_queue(&Command::new("capture-pane")));
    }

    #[test]
    fn only_commands_that_change_nothing_are_resent_after_being_written() {
        let lost = TmuxError::Disconnected;
        assert!(may_resend(&Command::new("capture-pane"), &lost));
        assert!(may_resend(&Command::new("list-panes"), &lost));
        assert!(!may_resend(&Command::new("send-keys"), &lost));
        assert!(!may_resend(&Command::new("kill-pane"), &lost));
        assert!(may_resend(&Command::new("send-keys"), &TmuxError::NotSent));
        assert!(!may_resend(
            &Command::new("list-panes"),
            &TmuxError::Command("no".into())
        ));
    }
}
