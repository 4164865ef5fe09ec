//! The control clients of one tmux server ([`Hub`]): a local socket, or a
//! server on a configured remote host, reached over ssh ([`super::ssh`]).
//! The registry of servers by address is [`super::hubs`].
//!
//! A hub keeps two kinds of control client, both attached lazily:
//!
//! - **One command client**, attached to the server's first session with
//!   `no-output` (tmux 3.2 on): commands run there, so a reply never waits
//!   behind megabytes of some pane's `%output`.
//! - **One streaming client per session whose panes something watches**
//!   ([`Hub::stream`]): tmux streams `%output` to a control client only for
//!   the windows of its own session. Its [`super::quiet::Quiet`] pauses
//!   every pane of that session no lease wants, so unwatched panes cost
//!   their programs nothing. At most `Limits::streaming_clients` are
//!   attached at once (every attached client costs tmux work on every
//!   command, the user's own too): a new session's stream takes the place
//!   of an idle one, or waits for one to become idle.
//!
//! Any client detaches itself after `Limits::idle_detach` with nothing in
//! flight and no lease, and the next call attaches again: the user's
//! `tmux ls` stops showing a session "(attached)" because we once looked.
//! When a client goes away (`%exit`, EOF, its session killed) the next
//! call attaches a fresh one; failed attaches back off so a flapping server
//! costs a one-shot process per call, not a storm of attaches. When the
//! server has no session at all, no control client can exist, and a
//! one-shot `tmux` process runs the command: the only cold path.
//!
//! Before tmux 3.7 our attaches and detaches take turns through the hub's
//! [`Door`] (such a release crashes when one of our clients leaves while
//! another attaches).
//!
//! Each client is attached through a once-cell of its own: callers wanting
//! it wait for its one attach, and nobody else waits at all; a streaming
//! attach runs in a task of its own, so a caller that gives up leaves it to
//! the next. The hub's own
//! state sits behind a plain mutex that is never held across an await.
//!
//! A command that can end a session (a kill, a move of its last window)
//! runs in a one-shot process, and the hub then forgets the clients of
//! sessions that are gone: tmux is closing them, and a command written to
//! one before its EOF is read would be lost.
//!
//! Every streaming client's reader feeds the hub's [`Panes`] registry. What
//! the tools keep of a server lives above, in `drive::server`. The
//! server's release is learned with the first command
//! ([`Hub::version`]) and decides, through [`Features`], what the clients
//! may do.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, SystemTime};

use tokio::sync::{Notify, OnceCell};
use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::child::LocalTmux;
use super::connection::quiet::Lease;
use super::connection::{Connection, Observer, Role, Setup};
use super::door::Door;
use super::format::Schema;
use super::oneshot::OneShot;
use super::output::Notices;
use super::pipe::Transport;
use super::socket::{Address, Remote};
use super::ssh::{SshHost, SshTransport};
use super::version::{Features, Version};
use super::{Command, PaneId, SessionId, TmuxError, command};
use crate::config::Limits;
use crate::panes::registry::Panes;

/// The lines a command printed, whichever path ran it.
pub type Lines = Vec<Vec<u8>>;

/// One tmux server, by address.
pub struct Hub {
    address: Address,
    /// Runs the commands that go in a process of their own.
    oneshot: OneShot,
    limits: Limits,
    panes: Arc<Panes>,
    transport: Arc<dyn Transport>,
    clients: Mutex<Clients>,
    /// The server last seen here, as `#{pid} #{start_time}`: a server
    /// started again on the same socket is a new one.
    server: Mutex<Option<Vec<u8>>>,
    /// The server's release, once known.
    version: Mutex<Option<Version>>,
    /// tmux's socket path, once asked: the same for every server started
    /// at this address.
    socket_path: Mutex<Option<Vec<u8>>>,
    /// Notified when a client becomes idle or goes away: a streaming slot
    /// may be free.
    idle: Arc<Notify>,
    /// Keeps our attaches and detaches apart where tmux needs it.
    door: Door,
}

/// A control client, attached once however many wait for it.
type ClientCell = Arc<OnceCell<Connection>>;

struct Clients {
    /// The client commands run on.
    commands: Option<ClientCell>,
    /// One cell per session a streaming client is attached (or attaching) to.
    streams: HashMap<SessionId, ClientCell>,
    /// The command client's failed attaches.
    backoff: Backoff,
}

impl Default for Clients {
    fn default() -> Clients {
        Clients {
            commands: None,
            streams: HashMap::new(),
            backoff: Backoff::new(Duration::from_millis(50), Duration::from_secs(2)),
        }
    }
}

impl Clients {
    /// Drops the cells of clients that went away and of failed attaches
    /// nobody waits on any more.
    fn prune(&mut self) {
        let live = |cell: &ClientCell| match cell.get() {
            Some(client) => !client.is_closed(),
            // Empty: an attach in progress (someone holds the cell), or a
            // failed one nobody waits on any more.
            None => Arc::strong_count(cell) > 1,
        };
        self.streams.retain(|_, cell| live(cell));
        if self.commands.as_ref().is_some_and(|cell| !live(cell)) {
            self.commands = None;
        }
    }

    /// Every attached client.
    fn attached(&self) -> impl Iterator<Item = &Connection> {
        self.commands
            .iter()
            .chain(self.streams.values())
            .filter_map(|cell| cell.get())
    }
}

/// A pane streamed on its session's client, for as long as this lives.
pub struct Stream {
    pub client: Connection,
    pub lease: Lease,
}

impl Hub {
    /// A hub whose control clients are `tmux -C` children.
    pub fn new(socket: PathBuf, tmux_bin: PathBuf, limits: Limits) -> Self {
        let transport = Arc::new(LocalTmux {
            tmux_bin: tmux_bin.clone(),
            socket: socket.clone(),
        });
        Hub::with_transport(socket, tmux_bin, limits, transport)
    }

    /// A hub of a server on a remote host: control clients and one-shot
    /// commands both go through `ssh`.
    pub fn remote(remote: Remote, ssh: Arc<SshTransport>, limits: Limits) -> Self {
        Hub::assemble(
            Address::Remote(remote),
            OneShot::Ssh(ssh.clone()),
            limits,
            ssh,
        )
    }

    /// A hub whose control clients come from `transport`; one-shot commands
    /// still run `tmux_bin`.
    pub fn with_transport(
        socket: PathBuf,
        tmux_bin: PathBuf,
        limits: Limits,
        transport: Arc<dyn Transport>,
    ) -> Self {
        let oneshot = OneShot::Local(LocalTmux {
            tmux_bin,
            socket: socket.clone(),
        });
        Hub::assemble(Address::Local(socket), oneshot, limits, transport)
    }

    fn assemble(
        address: Address,
        oneshot: OneShot,
        limits: Limits,
        transport: Arc<dyn Transport>,
    ) -> Self {
        let panes = Arc::new(Panes::new(limits.pane_ring, limits.watched_panes));
        Hub {
            address,
            oneshot,
            limits,
            panes,
            transport,
            clients: Mutex::new(Clients::default()),
            server: Mutex::new(None),
            version: Mutex::new(None),
            socket_path: Mutex::new(None),
            idle: Arc::new(Notify::new()),
            door: Door::default(),
        }
    }

    /// The recorded output of this server's watched panes.
    pub fn panes(&self) -> &Arc<Panes> {
        &self.panes
    }

    pub fn address(&self) -> &Address {
        &self.address
    }

    /// The host a remote server runs on (its shared ssh connection).
    pub fn ssh_host(&self) -> Option<&Arc<SshHost>> {
        match &self.oneshot {
            OneShot::Ssh(ssh) => Some(&ssh.host),
            OneShot::Local(_) => None,
        }
    }

    /// The tmux program our commands run, as an absolute path: this
    /// server's (found on this process's `PATH` when a bare name), or what
    /// `command -v tmux` finds on the remote host, where they run `tmux`.
    /// `None` when it cannot be told.
    pub async fn tmux_program(&self) -> Option<String> {
        let host = match &self.oneshot {
            OneShot::Local(local) => return absolute_program(&local.tmux_bin),
            OneShot::Ssh(ssh) => &ssh.host,
        };
        let ask = ["sh", "-c", "command -v tmux"].map(OsStr::new);
        let done = host.run(&ask, self.limits.tmux_command_timeout, None).await;
        let found = String::from_utf8(done.ok()?.stdout).ok()?;
        Some(found.trim().to_owned()).filter(|path| path.starts_with('/'))
    }

    /// The socket path, for a server on this machine.
    pub fn local_socket(&self) -> Option<&Path> {
        match &self.address {
            Address::Local(path) => Some(path),
            Address::Remote(_) => None,
        }
    }

    /// Writes `content` to the file `<tmux's socket path><suffix>` on the
    /// tmux server's host: for the shells there, which know the socket
    /// from `$TMUX`. Made afresh, readable by its owner only, never
    /// through a link: a socket given with `-S` may sit in a directory
    /// others write to.
    pub async fn write_beside_socket(&self, suffix: &str, content: &str) -> Result<(), TmuxError> {
        let path = self.beside_socket(suffix).await?;
        let path = OsStr::from_bytes(&path);
        let Some(host) = self.ssh_host() else {
            return write_afresh(Path::new(path), content)
                .map_err(|e| TmuxError::Io(format!("{}: {e}", path.display())));
        };
        self.sh_on_host(host, WRITE_AFRESH_SH, &[path, OsStr::new(content)])
            .await
    }

    /// Removes the file `<tmux's socket path><suffix>` on the tmux
    /// server's host if it is a regular file of our own user: never a
    /// link, nor another user's file. A file already gone is no error.
    pub async fn remove_beside_socket(&self, suffix: &str) -> Result<(), TmuxError> {
        let path = self.beside_socket(suffix).await?;
        let path = OsStr::from_bytes(&path);
        let Some(host) = self.ssh_host() else {
            return remove_own_file(Path::new(path))
                .map(|_| ())
                .map_err(|e| TmuxError::Io(format!("{}: {e}", path.display())));
        };
        self.sh_on_host(host, REMOVE_OWN_FILE_SH, &[path]).await
    }

    /// Removes the files beside this machine's tmux socket named
    /// `<socket's file name><prefix><rest>` whose `rest` is `stale`:
    /// regular files of our own user only (never a link), last modified
    /// before `before` (one written since may be for something `stale` was
    /// not told of). A remote server's files are left alone: its host's
    /// directory is not listed. Returns how many were removed.
    pub async fn sweep_beside_socket(
        &self,
        prefix: &str,
        before: SystemTime,
        stale: impl Fn(&str) -> bool,
    ) -> Result<usize, TmuxError> {
        if self.local_socket().is_none() {
            return Ok(0);
        }
        let socket = self.socket_path().await?;
        let socket = Path::new(OsStr::from_bytes(&socket));
        sweep_beside(socket, prefix, before, stale)
            .map_err(|e| TmuxError::Io(format!("{}: {e}", socket.display())))
    }

    /// `<tmux's socket path><suffix>`.
    async fn beside_socket(&self, suffix: &str) -> Result<Vec<u8>, TmuxError> {
        let socket = self.socket_path().await?;
        Ok([socket.as_slice(), suffix.as_bytes()].concat())
    }

    /// Runs `sh -c script sh args…` on `host`, over its shared connection.
    async fn sh_on_host(
        &self,
        host: &SshHost,
        script: &str,
        args: &[&OsStr],
    ) -> Result<(), TmuxError> {
        let mut argv: Vec<&OsStr> = ["sh", "-c", script, "sh"].map(OsStr::new).into();
        argv.extend_from_slice(args);
        let done = host
            .run(&argv, self.limits.tmux_command_timeout, None)
            .await?;
        match done.status.success() {
            true => Ok(()),
            false => Err(TmuxError::Io(
                String::from_utf8_lossy(&done.stderr).trim().to_owned(),
            )),
        }
    }

    /// tmux's socket path, asked once.
    pub async fn socket_path(&self) -> Result<Vec<u8>, TmuxError> {
        if let Some(known) = self.socket_path.lock().expect("socket path lock").clone() {
            return Ok(known);
        }
        let ask = Command::new("display-message")
            .flag("-p")
            .arg("#{socket_path}");
        let lines = self.run(&ask).await?;
        let Some(socket) = lines.into_iter().next().filter(|s| s.starts_with(b"/")) else {
            return Err(TmuxError::Io("tmux gave no socket path".into()));
        };
        *self.socket_path.lock().expect("socket path lock") = Some(socket.clone());
        Ok(socket)
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Runs one command and returns its output lines. Commands that would
    /// block a control client's whole queue, or could end its session, run
    /// in a process of their own. The whole call (finding or attaching a
    /// client included) is bounded by the command timeout: a server that
    /// accepts and never answers is [`TmuxError::NotResponding`] within it.
    ///
    /// Input into a pane goes through `drive::input`, which marks it.
    pub async fn run(&self, command: &Command) -> Result<Lines, TmuxError> {
        if command.is_one_of(QUEUE_BLOCKING) || command.is_one_of(SESSION_ENDING) {
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

    /// Returns once every command queued on the command client so far has
    /// reached tmux (written, not answered): what any client sends tmux
    /// after this comes after them.
    pub async fn commands_written(&self) {
        let client = self
            .clients()
            .commands
            .as_ref()
            .and_then(|c| c.get())
            .cloned();
        if let Some(client) = client {
            client.written().await;
        }
    }

    /// Runs `commands` on the command client together: each is queued as
    /// soon as it is polled, in order, so they reach tmux back to back and,
    /// as a rule, run in one go with no pane output parsed between them.
    /// Replies in the same order.
    pub async fn run_together(&self, commands: &[Command]) -> Vec<Result<Lines, TmuxError>> {
        in_order(commands.iter().map(|c| self.run(c)).collect()).await
    }

    /// Lets the command client go once keys went to a pane in a mode
    /// (read in the same queue run as the keys, so no person's key came
    /// between): the mode's binding for a key may open a prompt (copy
    /// mode's `f`, `g`, `/`) on the client that sent it, and from tmux 3.3
    /// that client's queue waits until the prompt closes, which nobody can
    /// do on a control client: every later command would go unanswered.
    /// Closing the client closes its prompt; the next command attaches a
    /// fresh one (see protocol/tmux-control.md, "Keys into a mode").
    pub fn retire_commands(&self) {
        let client = self.clients().commands.take();
        if let Some(client) = client.and_then(|cell| cell.get().cloned()) {
            tokio::spawn(client.leave());
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
        let result = self.process(command, timeout, cancel).await;
        if command.is_one_of(SESSION_ENDING) {
            // Whether it succeeded or not: a failed `kill-server` may still
            // have ended sessions, and checking is cheap.
            self.forget_ended_sessions().await;
        }
        result
    }

    /// Runs `command` in a `tmux` process (here, or over ssh on the
    /// server's host) and reads what it printed.
    async fn process(
        &self,
        command: &Command,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Lines, TmuxError> {
        self.process_argv(command.to_argv()?, timeout, cancel).await
    }

    /// Runs `commands` as one list in a one-shot process
    /// ([`command::list_argv`]): for a step that must not run when the one
    /// before it failed, with nothing of anyone else's in between.
    pub async fn run_oneshot_list(&self, commands: &[Command]) -> Result<Lines, TmuxError> {
        debug_assert!(!commands.iter().any(|c| c.is_one_of(SESSION_ENDING)));
        let limit = self.limits.tmux_command_timeout;
        let argv = command::list_argv(commands)?;
        match self.process_argv(argv, limit, None).await {
            Err(TmuxError::Timeout(_)) => Err(TmuxError::NotResponding(limit)),
            other => other,
        }
    }

    async fn process_argv(
        &self,
        argv: Vec<OsString>,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Lines, TmuxError> {
        self.refuse_unsupported()?;
        let done = self.oneshot.run(argv, timeout, cancel).await?;
        if done.status.success() {
            return Ok(lines(done.stdout));
        }
        let stderr = String::from_utf8_lossy(&done.stderr).trim().to_owned();
        if is_no_server(&stderr) {
            Err(TmuxError::NoServer(stderr))
        } else {
            Err(TmuxError::Command(stderr))
        }
    }

    fn clients(&self) -> MutexGuard<'_, Clients> {
        self.clients.lock().expect("clients lock")
    }

    /// The server's release (asked once; [`Version::UNKNOWN`] when it does
    /// not say, or cannot be asked now).
    pub async fn version(&self) -> Version {
        self.asked_version().await.unwrap_or(Version::UNKNOWN)
    }

    /// [`Hub::version`], with the error when the server could not be
    /// asked (not known yet, and it does not answer).
    async fn asked_version(&self) -> Result<Version, TmuxError> {
        if let Some(version) = *self.version.lock().expect("version lock") {
            return Ok(version);
        }
        let ask = Command::new("display-message").flag("-p").arg("#{version}");
        let lines = self.run_oneshot(&ask).await?;
        Ok(self.learn_version(lines.first().map(Vec::as_slice)))
    }

    /// What this server's release can do (see [`Features`]).
    pub async fn features(&self) -> Features {
        Features::of(self.version().await)
    }

    /// [`Hub::features`] for a caller that acts on the server next: a
    /// server that does not answer fails here, once, instead of costing
    /// a timeout for the version and another for the action.
    pub async fn features_or_err(&self) -> Result<Features, TmuxError> {
        self.asked_version().await.map(Features::of)
    }

    /// Fails when this server's release, once learned, is older than the
    /// oldest supported: no command of ours reaches it.
    fn refuse_unsupported(&self) -> Result<(), TmuxError> {
        match *self.version.lock().expect("version lock") {
            Some(version) if !version.is_supported() => Err(TmuxError::Unsupported(version)),
            _ => Ok(()),
        }
    }

    fn learn_version(&self, reported: Option<&[u8]>) -> Version {
        let version = reported
            .and_then(Version::parse)
            .unwrap_or(Version::UNKNOWN);
        *self.version.lock().expect("version lock") = Some(version);
        version
    }

    /// The command client, attaching it if needed; `None` when the server
    /// has no session to attach to (or attaching is backing off).
    async fn client(&self) -> Option<Connection> {
        let cell = {
            let mut clients = self.clients();
            clients.prune();
            if let Some(client) = clients.commands.as_ref().and_then(|c| c.get()) {
                return Some(client.clone());
            }
            if clients.backoff.remaining().is_some() {
                return None;
            }
            clients
                .commands
                .get_or_insert_with(ClientCell::default)
                .clone()
        };
        let attach = async {
            let session = self.meet_server().await.ok_or(None)?;
            // A release too old to serve: the call goes the one-shot way,
            // which refuses it.
            self.refuse_unsupported().map_err(|_| None)?;
            self.attach(session, Role::Commands).await.map_err(Some)
        };
        match cell.get_or_try_init(|| attach).await {
            Ok(client) => {
                self.clients().backoff.succeeded();
                Some(client.clone())
            }
            // No session: nothing to attach to, and nothing to back off from.
            Err(None) => None,
            Err(Some(e)) => {
                eprintln!("tmux-mcp: attaching to {} failed: {e}", self.address);
                self.clients().backoff.failed();
                None
            }
        }
    }

    /// Streams `pane`, of `session`, on that session's streaming client
    /// (unpausing it there) until the returned lease drops.
    pub async fn stream(
        self: &Arc<Self>,
        session: SessionId,
        pane: PaneId,
    ) -> Result<Stream, TmuxError> {
        self.stream_when(session, pane, true).await
    }

    /// [`Hub::stream`], handing the lease out once its `continue` is
    /// written (`unpaused: false`), not run: the holder awaits
    /// [`Lease::unpaused`] before anything another client sends can make
    /// the pane print, and meanwhile does other round trips.
    pub async fn stream_when(
        self: &Arc<Self>,
        session: SessionId,
        pane: PaneId,
        unpaused: bool,
    ) -> Result<Stream, TmuxError> {
        let deadline = tokio::time::Instant::now() + self.limits.attach_timeout;
        match self.lease(session, pane, Some(deadline), unpaused).await? {
            Some(stream) => Ok(stream),
            None => Err(TmuxError::Command(format!(
                "all {} streaming clients of this tmux server are busy with other waits \
                 (TMUX_MCP_STREAMING_CLIENTS); try again when one ends",
                self.limits.streaming_clients
            ))),
        }
    }

    /// Whether `session`'s streaming client is attached now.
    pub fn streams_session(&self, session: SessionId) -> bool {
        let clients = self.clients();
        let client = clients.streams.get(&session).and_then(|c| c.get());
        client.is_some_and(|c| !c.is_closed())
    }

    /// [`Hub::stream`] if a streaming slot is free now (or an idle client
    /// can make room); `None` when every slot is busy. Wait on
    /// [`Hub::slot_freed`] and try again.
    pub async fn try_stream(
        self: &Arc<Self>,
        session: SessionId,
        pane: PaneId,
    ) -> Result<Option<Stream>, TmuxError> {
        self.lease(session, pane, None, true).await
    }

    /// Resolves when a client became idle or went away: a streaming slot
    /// may be free. Create it before [`Hub::try_stream`] so no wake is lost.
    pub fn slot_freed(&self) -> tokio::sync::futures::Notified<'_> {
        self.idle.notified()
    }

    async fn lease(
        self: &Arc<Self>,
        session: SessionId,
        pane: PaneId,
        wait_until: Option<tokio::time::Instant>,
        unpaused: bool,
    ) -> Result<Option<Stream>, TmuxError> {
        loop {
            let Some(client) = self.streaming(session, wait_until).await? else {
                return Ok(None);
            };
            let lease = {
                // Under the lock eviction picks its idle client with: either
                // this lease makes the client busy first, or the client is
                // no longer the session's and another is asked for.
                let clients = self.clients();
                let current = clients.streams.get(&session).and_then(|c| c.get());
                if !current.is_some_and(|c| c.is(&client)) {
                    continue;
                }
                client.stream(pane)
            };
            // An idle client may have let go just before the lease counted;
            // the lease counts first, so checking after it cannot miss that.
            if client.is_closed() {
                continue;
            }
            let mut lease = lease;
            if !unpaused {
                return Ok(Some(Stream { client, lease }));
            }
            let limit = self.limits.tmux_command_timeout;
            match tokio::time::timeout(limit, lease.unpaused()).await {
                Ok(Ok(())) => return Ok(Some(Stream { client, lease })),
                // It went away meanwhile: another client is asked for.
                Ok(Err(_)) if client.is_closed() => continue,
                Ok(Err(e)) => return Err(e),
                Err(_) => return Err(TmuxError::Timeout(limit)),
            }
        }
    }

    /// The streaming client of `session`, attaching it unless it is live.
    /// Concurrent callers for one session share one attach; other sessions'
    /// callers are never held up by it. With every streaming slot taken,
    /// an idle client makes room, or this waits until `wait_until` for one
    /// to become idle (`None`: it does not wait).
    async fn streaming(
        self: &Arc<Self>,
        session: SessionId,
        wait_until: Option<tokio::time::Instant>,
    ) -> Result<Option<Connection>, TmuxError> {
        loop {
            let freed = self.idle.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let (cell, evicted) = self.stream_slot(session);
            if let Some(evicted) = evicted {
                // Through the door where the release needs it, which keeps
                // this detach and the attach below apart in either order
                // (so for a moment the bound may be one over).
                tokio::spawn(evicted.leave_if_idle());
            }
            if let Some(cell) = cell {
                // In a task of its own: an attach, once begun, is finished
                // and kept for whoever asks next, even when this caller
                // gives up (a wait woken by a progress tick).
                let hub = self.clone();
                let attach = tokio::spawn(async move {
                    let attach = || hub.attach(session, Role::Streaming);
                    cell.get_or_try_init(attach).await.cloned()
                });
                return match attach.await {
                    Ok(client) => client.map(Some),
                    Err(_) => Err(TmuxError::Disconnected),
                };
            }
            let Some(deadline) = wait_until else {
                return Ok(None);
            };
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return Ok(None);
            }
        }
    }

    /// `session`'s stream cell, made room for if needed: `None` when every
    /// slot is busy. The second value is an idle client to let go.
    fn stream_slot(&self, session: SessionId) -> (Option<ClientCell>, Option<Connection>) {
        let mut clients = self.clients();
        clients.prune();
        if let Some(cell) = clients.streams.get(&session) {
            return (Some(cell.clone()), None);
        }
        let mut evicted = None;
        if clients.streams.len() >= self.limits.streaming_clients {
            let idle = clients
                .streams
                .iter()
                .find(|(_, cell)| cell.get().is_some_and(Connection::is_idle))
                .map(|(s, _)| *s);
            let Some(idle) = idle else {
                return (None, None);
            };
            evicted = clients.streams.remove(&idle).and_then(|c| c.get().cloned());
        }
        let cell = clients.streams.entry(session).or_default().clone();
        (Some(cell), evicted)
    }

    async fn attach(&self, session: SessionId, role: Role) -> Result<Connection, TmuxError> {
        let features = Features::of(self.version().await);
        self.refuse_unsupported()?;
        let door = features.attach_alone.then(|| self.door.clone());
        // Held until tmux has run the attach: no detach of ours meanwhile.
        let _pass = match &door {
            Some(door) => Some(door.enter().await),
            None => None,
        };
        let pipe = self.transport.open(session, role.attach_flags(features))?;
        let observer: Arc<dyn Observer> = match role {
            Role::Streaming => self.panes.clone(),
            Role::Commands => Arc::new(Notices(self.panes.clone())),
        };
        let setup = Setup {
            role,
            features,
            idle_detach: self.limits.idle_detach,
            // Only a streaming client frees a streaming slot: the command
            // client's every reply must not wake the waiters for one.
            idle: match role {
                Role::Streaming => self.idle.clone(),
                Role::Commands => Arc::new(Notify::new()),
            },
            door,
        };
        Connection::start(pipe, session, &self.limits, observer, setup).await
    }

    /// Runs `respawn` (a `respawn-pane` of `pane`). Where the release keeps
    /// stale control-mode offsets across a respawn
    /// ([`Features::pause_before_respawn`]), the pane is first paused on
    /// every streaming client of ours, and tmux has run each pause before
    /// the respawn is sent; it is streamed again afterwards where a lease
    /// still wants it.
    pub async fn respawn(&self, pane: PaneId, respawn: &Command) -> Result<Lines, TmuxError> {
        if !Features::of(self.version().await).pause_before_respawn {
            return self.run(respawn).await;
        }
        let streams: Vec<Connection> = {
            let clients = self.clients();
            clients
                .streams
                .values()
                .filter_map(|cell| cell.get().cloned())
                .filter(|client| !client.is_closed())
                .collect()
        };
        let limit = self.limits.tmux_command_timeout;
        let answers: Vec<_> = streams.iter().filter_map(|c| c.hold(pane)).collect();
        for answer in answers {
            // An error is a client that went away: it holds no offset any more.
            if tokio::time::timeout(limit, answer.arrived()).await.is_err() {
                streams.iter().for_each(|client| client.unhold(pane));
                return Err(TmuxError::Timeout(limit));
            }
        }
        let result = self.run(respawn).await;
        for client in &streams {
            client.unhold(pane);
        }
        result
    }

    /// How many of our clients are attached to `session` now: what the
    /// "attached" counts tmux reports include of ours.
    pub fn own_clients(&self, session: SessionId) -> usize {
        let clients = self.clients();
        clients
            .attached()
            .filter(|c| !c.is_closed() && c.session() == session)
            .count()
    }

    /// Meets the server before a client attaches, in one round trip:
    /// notes which server this is (see [`Hub::same_server`]) and its
    /// release, and returns its first session.
    async fn meet_server(&self) -> Option<SessionId> {
        let list = Command::new("list-sessions").opt("-F", MET.template());
        let met = MET.parse(&self.run_oneshot(&list).await.ok()?);
        let first = met.iter().filter_map(|m| m.session).min();
        if let Some(m) = met.first() {
            if !m.pid.is_empty() {
                self.same_server(format!("{} {}", m.pid, m.start_time).as_bytes());
            }
            self.learn_version(Some(m.version.as_bytes()));
        }
        first
    }

    /// Records the server's identity; when it is not the server seen
    /// before (restarted on the same socket, its pane ids reused), every
    /// recording of the old one is dropped, so no cursor or wait mistakes
    /// the new server's panes for the old ones.
    fn same_server(&self, identity: &[u8]) {
        let before = self
            .server
            .lock()
            .expect("server lock")
            .replace(identity.to_vec());
        if before.is_some_and(|b| b != identity) {
            eprintln!(
                "tmux-mcp: {}: the tmux server was restarted (a new server, its panes new)",
                self.address
            );
            self.panes.server_replaced();
        }
    }

    /// After a command that can end sessions: detaches and forgets the
    /// clients whose session is gone, so no later command is written to a
    /// client tmux is closing.
    async fn forget_ended_sessions(&self) {
        let attached: Vec<SessionId> = self.clients().attached().map(Connection::session).collect();
        if attached.is_empty() {
            return;
        }
        let list = Command::new("list-sessions").opt("-F", "#{session_id}");
        let limit = self.limits.tmux_command_timeout;
        let alive: Vec<SessionId> = match self.process(&list, limit, None).await {
            Ok(lines) => lines.iter().filter_map(|l| SessionId::parse(l)).collect(),
            // The last session went and the server with it.
            Err(TmuxError::NoServer(_)) => Vec::new(),
            Err(_) => return,
        };
        let ended = attached.into_iter().filter(|s| !alive.contains(s));
        self.forget(ended.collect()).await;
    }

    /// Detaches our clients attached to `sessions` and waits (bounded) for
    /// each stream to end.
    async fn forget(&self, sessions: Vec<SessionId>) {
        let clients: Vec<Connection> = {
            let mut clients = self.clients();
            let mut cells: Vec<ClientCell> = sessions
                .iter()
                .filter_map(|s| clients.streams.remove(s))
                .collect();
            let commands_ended = clients
                .commands
                .as_ref()
                .and_then(|c| c.get())
                .is_some_and(|c| sessions.contains(&c.session()));
            if commands_ended {
                cells.extend(clients.commands.take());
            }
            cells.iter().filter_map(|c| c.get().cloned()).collect()
        };
        // They close together; waiting in turn costs the slowest one.
        let leaving: Vec<_> = clients
            .into_iter()
            .map(|c| tokio::spawn(c.leave()))
            .collect();
        for left in leaving {
            let _ = left.await;
        }
    }

    /// Detaches every control client; sessions are left as they are.
    pub async fn shutdown(&self) {
        let sessions = self.clients().attached().map(Connection::session).collect();
        self.forget(sessions).await;
    }
}

/// [`write_afresh`] for a remote host's `sh`: `$1` the path, `$2` the content.
const WRITE_AFRESH_SH: &str = "rm -f \"$1\" && umask 077 && set -C && printf %s \"$2\" >\"$1\"";

/// [`remove_own_file`] for a remote host's `sh`: `$1` the path.
const REMOVE_OWN_FILE_SH: &str =
    "if [ -f \"$1\" ] && ! [ -L \"$1\" ] && [ -O \"$1\" ]; then rm -f \"$1\"; fi";

/// Tries of one command on successive control clients, each going away.
const MAX_ATTEMPTS: usize = 3;

/// What meeting a server reads of each session: its id, and (the same
/// on every row) which server this is and its release.
#[derive(Default)]
struct Met {
    session: Option<SessionId>,
    pid: String,
    start_time: String,
    version: String,
}

const MET: Schema<Met> = Schema(&[
    ("session_id", |m, v| {
        m.session = SessionId::parse(v.as_bytes())
    }),
    ("pid", |m, v| m.pid = v.into()),
    ("start_time", |m, v| m.start_time = v.into()),
    ("version", |m, v| m.version = v.into()),
]);

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
        TmuxError::Disconnected => command.is_one_of(READ_ONLY),
        _ => false,
    }
}

/// Writes `content` to a new file at `path` (any file or link there is
/// removed first; created exclusively, mode 0600, so a link put there
/// meanwhile is never followed).
fn write_afresh(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(content.as_bytes())
}

/// Whether `meta` is a regular file (not a link) of this process's user.
fn own_regular_file(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    meta.file_type().is_file() && meta.uid() == uid
}

/// Removes `path` if it is a regular file of ours (see [`own_regular_file`]);
/// whether it did. Nothing there is no error.
fn remove_own_file(path: &Path) -> std::io::Result<bool> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if own_regular_file(&meta) => match std::fs::remove_file(path) {
            Err(e) if !gone(&e) => Err(e),
            removed => Ok(removed.is_ok()),
        },
        Ok(_) => Ok(false),
        Err(e) if gone(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// [`Hub::sweep_beside_socket`] in `socket`'s directory. A file that
/// cannot be read or removed is passed over: the others still go.
fn sweep_beside(
    socket: &Path,
    prefix: &str,
    before: SystemTime,
    stale: impl Fn(&str) -> bool,
) -> std::io::Result<usize> {
    let (Some(dir), Some(name)) = (socket.parent(), socket.file_name()) else {
        return Ok(0);
    };
    let lead = [name.as_bytes(), prefix.as_bytes()].concat();
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let file = entry.file_name();
        let rest = file.as_bytes().strip_prefix(lead.as_slice());
        let Some(rest) = rest.and_then(|r| std::str::from_utf8(r).ok()) else {
            continue;
        };
        let path = entry.path();
        let old = std::fs::symlink_metadata(&path)
            .ok()
            .filter(own_regular_file)
            .and_then(|meta| meta.modified().ok())
            .is_some_and(|modified| modified < before);
        if old && stale(rest) && remove_own_file(&path).unwrap_or(false) {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Awaits `runs`, polling each in the order given: what they send is
/// queued in that order.
async fn in_order<F: Future>(runs: Vec<F>) -> Vec<F::Output> {
    let mut runs: Vec<_> = runs.into_iter().map(Box::pin).collect();
    let mut done: Vec<Option<F::Output>> = runs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (run, out) in runs.iter_mut().zip(done.iter_mut()) {
            if out.is_none() {
                match run.as_mut().poll(cx) {
                    Poll::Ready(r) => *out = Some(r),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    done.into_iter().flatten().collect()
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

/// Commands that can end a session (its last pane or window killed or moved
/// away, or the whole server): on a client attached to that session the
/// reply could be lost with the client.
const SESSION_ENDING: &[&str] = &[
    "break-pane",
    "join-pane",
    "kill-pane",
    "kill-server",
    "kill-session",
    "kill-window",
    "move-pane",
    "move-window",
    "unlink-window",
];

/// A one-shot process's stdout as lines, without the final newline.
fn lines(mut stdout: Vec<u8>) -> Lines {
    if stdout.last() == Some(&b'\n') {
        stdout.pop();
    }
    if stdout.is_empty() {
        return Vec::new();
    }
    stdout.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

fn is_no_server(stderr: &str) -> bool {
    stderr.starts_with("no server running") || stderr.starts_with("error connecting to")
}

/// `program` as an absolute path: found on this process's `PATH` when it
/// is a bare name.
fn absolute_program(program: &Path) -> Option<String> {
    let found = match program.is_absolute() {
        true => program.to_path_buf(),
        false if program.components().count() == 1 => std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file() && path.is_absolute())?,
        false => std::env::current_dir().ok()?.join(program),
    };
    found.to_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::PaneId;
    use crate::tmux::scripted::Scripted;
    use std::time::Instant;
    use tokio::sync::mpsc::UnboundedReceiver;

    #[test]
    fn a_file_beside_the_socket_is_made_afresh_never_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tmux-mcp-afresh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (victim, path) = (dir.join("victim"), dir.join("sock.tmux-mcp-end-3"));
        std::fs::write(&victim, "keep").unwrap();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_afresh(&path, "script").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "script");
        write_afresh(&path, "again").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "again");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sweep_removes_only_old_regular_files_of_ours_with_the_name_it_is_given() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = SystemTime::now();
        let minute = Duration::from_secs(60);
        let file = |name: &str, modified: SystemTime| {
            let path = dir.join(name);
            std::fs::write(&path, "x").unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(modified).unwrap();
        };
        file("sock.end-1", now - minute);
        file("sock.end-2", now - minute);
        file("sock.end-3", now + minute);
        file("other.end-4", now - minute);
        file("victim", now - minute);
        std::os::unix::fs::symlink(dir.join("victim"), dir.join("sock.end-5")).unwrap();
        std::fs::create_dir(dir.join("sock.end-6")).unwrap();
        // Every name but 2 is stale: 1 goes; 3 is newer than the sweep,
        // 4 beside another socket, 5 a link, 6 a directory.
        let swept = sweep_beside(&dir.join("sock"), ".end-", now, |rest| rest != "2");
        assert_eq!(swept.unwrap(), 1);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let kept = [
            "other.end-4",
            "sock.end-2",
            "sock.end-3",
            "sock.end-5",
            "sock.end-6",
        ];
        assert_eq!(left, [&kept[..], &["victim"]].concat());
        // A link is never removed, nor what it points to; a file is.
        assert!(!remove_own_file(&dir.join("sock.end-5")).unwrap());
        assert!(dir.join("victim").exists());
        assert!(remove_own_file(&dir.join("sock.end-2")).unwrap());
        assert!(!remove_own_file(&dir.join("sock.end-2")).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The remote host's `sh` does what [`write_afresh`] and
    /// [`remove_own_file`] do here (run by this machine's `sh`).
    #[test]
    fn the_remote_shell_lines_make_and_remove_only_our_own_files() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-sh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sh = |script: &str, args: &[&Path]| {
            let status = std::process::Command::new("sh")
                .args(["-c", script, "sh"])
                .args(args)
                .status()
                .unwrap();
            assert!(status.success(), "{script}");
        };
        let (victim, link, file) = (dir.join("victim"), dir.join("link"), dir.join("file"));
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        sh(WRITE_AFRESH_SH, &[&file, Path::new("script")]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "script");
        sh(REMOVE_OWN_FILE_SH, &[&link]);
        sh(REMOVE_OWN_FILE_SH, &[&file]);
        sh(REMOVE_OWN_FILE_SH, &[&file]);
        assert!(link.symlink_metadata().is_ok() && !file.exists());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A hub whose control clients are scripted; it has no tmux for
    /// one-shot commands, so tests attach through [`Hub::streaming`] first.
    fn scripted_hub() -> (Arc<Hub>, Arc<Scripted>, UnboundedReceiver<SessionId>) {
        let (scripted, opens) = Scripted::new();
        let hub = Hub::with_transport(
            "/nonexistent/socket".into(),
            "/nonexistent/tmux".into(),
            Limits::default(),
            scripted.clone(),
        );
        (Arc::new(hub), scripted, opens)
    }

    /// `session`'s streaming client, a slot being free.
    async fn streaming(hub: &Arc<Hub>, session: SessionId) -> Result<Connection, TmuxError> {
        let far = tokio::time::Instant::now() + Duration::from_secs(5);
        Ok(hub
            .streaming(session, Some(far))
            .await?
            .expect("a free slot"))
    }

    /// On both sides of `Features::attach_alone`: before 3.7 the evicted
    /// client leaves through the door before the new one attaches.
    #[tokio::test]
    async fn streaming_clients_are_bounded_and_an_idle_one_makes_room() {
        for release in ["3.3a", "3.7b"] {
            let (scripted, mut opens) = Scripted::new();
            let limits = Limits {
                streaming_clients: 1,
                ..Limits::default()
            };
            let hub = Arc::new(Hub::with_transport(
                "/nonexistent/socket".into(),
                "/nonexistent/tmux".into(),
                limits,
                scripted.clone(),
            ));
            hub.learn_version(Some(release.as_bytes()));
            let first = hub.stream(SessionId(0), PaneId(0)).await.unwrap();
            let first_client = first.client.clone();
            assert_eq!(opens.recv().await, Some(SessionId(0)));
            let freed = hub.slot_freed();
            tokio::pin!(freed);
            freed.as_mut().enable();
            assert!(
                hub.try_stream(SessionId(1), PaneId(1))
                    .await
                    .unwrap()
                    .is_none(),
                "{release}: a second session streamed past the bound"
            );
            drop(first);
            tokio::time::timeout(Duration::from_secs(5), freed)
                .await
                .expect("the slot's release was announced");
            let second = hub.try_stream(SessionId(1), PaneId(1)).await.unwrap();
            assert_eq!(second.map(|s| s.client.session()), Some(SessionId(1)));
            assert_eq!(opens.recv().await, Some(SessionId(1)));
            assert_eq!(
                hub.own_clients(SessionId(0)),
                0,
                "{release}: the idle client stayed"
            );
            tokio::time::timeout(Duration::from_secs(5), first_client.wait_closed())
                .await
                .unwrap_or_else(|_| panic!("{release}: the idle client was not detached"));
        }
    }

    #[tokio::test]
    async fn a_slow_attach_of_one_session_holds_up_no_call_on_another() {
        let (hub, scripted, mut opens) = scripted_hub();
        streaming(&hub, SessionId(0)).await.unwrap();
        assert_eq!(opens.recv().await, Some(SessionId(0)));
        let release = scripted.hold(SessionId(1));
        let slow = tokio::spawn({
            let hub = hub.clone();
            async move { streaming(&hub, SessionId(1)).await }
        });
        // $1's attach is under way, and stays so until released.
        assert_eq!(opens.recv().await, Some(SessionId(1)));

        let started = Instant::now();
        let others = async {
            let listed = streaming(&hub, SessionId(0)).await?;
            let listed = listed.run(&Command::new("list-panes").flag("-a")).await?;
            let other = streaming(&hub, SessionId(2)).await?;
            let shown = other.run(&Command::new("display-message")).await?;
            Ok::<_, TmuxError>((listed.lines, shown.lines))
        };
        let (listed, shown) = tokio::time::timeout(Duration::from_secs(5), others)
            .await
            .expect("calls on other sessions wait for $1's attach")
            .unwrap();
        let took = started.elapsed();
        eprintln!("other sessions' calls during a held attach: {took:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        assert_eq!(listed, [b"list-panes -a".to_vec()]);
        assert_eq!(shown, [b"display-message".to_vec()]);

        assert!(!slow.is_finished(), "the held attach finished early");
        release.send(()).unwrap();
        let client = slow.await.unwrap().unwrap();
        assert_eq!(client.session(), SessionId(1));
    }

    #[tokio::test]
    async fn callers_of_one_session_share_its_attach() {
        let (hub, scripted, mut opens) = scripted_hub();
        let release = scripted.hold(SessionId(3));
        let callers: Vec<_> = (0..3)
            .map(|_| {
                let hub = hub.clone();
                tokio::spawn(async move { streaming(&hub, SessionId(3)).await })
            })
            .collect();
        assert_eq!(opens.recv().await, Some(SessionId(3)));
        release.send(()).unwrap();
        for caller in callers {
            assert_eq!(caller.await.unwrap().unwrap().session(), SessionId(3));
        }
        assert!(opens.try_recv().is_err(), "a second attach was opened");
    }

    #[tokio::test]
    async fn an_attach_its_caller_gave_up_on_is_finished_and_kept() {
        let (hub, scripted, mut opens) = scripted_hub();
        let release = scripted.hold(SessionId(5));
        let gave_up =
            tokio::time::timeout(Duration::from_millis(20), streaming(&hub, SessionId(5)));
        assert!(gave_up.await.is_err(), "the held attach finished early");
        assert_eq!(opens.recv().await, Some(SessionId(5)));
        release.send(()).unwrap();
        // The next caller gets the client the first one began, not another.
        let client = streaming(&hub, SessionId(5)).await.unwrap();
        assert!(!client.is_closed());
        assert!(opens.try_recv().is_err(), "a second attach was opened");
    }

    #[tokio::test]
    async fn a_client_that_went_away_is_attached_afresh() {
        let (hub, _scripted, mut opens) = scripted_hub();
        let first = streaming(&hub, SessionId(4)).await.unwrap();
        assert_eq!(opens.recv().await, Some(SessionId(4)));
        first.clone().leave().await;
        tokio::time::timeout(Duration::from_secs(5), first.wait_closed())
            .await
            .expect("the scripted client closes after a detach");
        let again = streaming(&hub, SessionId(4)).await.unwrap();
        assert_eq!(opens.recv().await, Some(SessionId(4)));
        assert!(!again.is_closed());
        assert_eq!(
            first.run(&Command::new("list-panes")).await,
            Err(TmuxError::NotSent)
        );
        hub.shutdown().await;
        assert!(again.is_closed());
    }

    #[tokio::test]
    async fn a_server_started_again_on_the_socket_drops_the_old_recordings() {
        let (hub, _scripted, _opens) = scripted_hub();
        let old = hub.panes().watch(PaneId(0), SessionId(0));
        hub.same_server(b"100 1700000000");
        hub.same_server(b"100 1700000000");
        assert!(
            hub.panes().get(PaneId(0)).is_some(),
            "the same server forgot"
        );
        hub.same_server(b"200 1700000500");
        assert!(
            hub.panes().get(PaneId(0)).is_none(),
            "the old recording is kept"
        );
        assert!(old.lock().orphaned);
        let new = hub.panes().watch(PaneId(0), SessionId(0));
        assert_ne!(
            new.epoch, old.epoch,
            "a cursor into the old pane would be trusted"
        );
    }

    #[test]
    fn queue_blocking_commands_are_recognised() {
        // Named here, not read from the list: each must stay in it.
        for name in ["wait-for", "run-shell", "if-shell", "source-file"] {
            assert!(Command::new(name).is_one_of(QUEUE_BLOCKING), "{name}");
        }
        for name in ["capture-pane", "send-keys", "display-message"] {
            assert!(!Command::new(name).is_one_of(QUEUE_BLOCKING), "{name}");
        }
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
