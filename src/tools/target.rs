//! Finding the tmux object a call means, with the reference's precedence:
//! an id wins, then a name or index, else the first session / window / pane
//! listed. Every lookup is one `list-*` round trip filtered here, so names
//! are compared exactly (tmux's own `-t name` would also match prefixes and
//! patterns).

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::error::{not_found, pane_not_found};
use super::models::{PaneInfo, SessionInfo, WindowInfo};
use super::rows;
use super::{App, ErrorKind, Target, ToolError, ToolResult};
use crate::tmux::{Command, PaneId, SessionId, WindowId, format};

/// A pane id argument; anything but `%N` cannot name a pane.
pub fn pane_id(raw: &str) -> ToolResult<PaneId> {
    PaneId::parse(raw.as_bytes()).ok_or_else(|| pane_not_found(raw))
}

pub fn window_id(raw: &str) -> ToolResult<WindowId> {
    WindowId::parse(raw.as_bytes()).ok_or_else(|| not_found("window_id", raw))
}

pub fn session_id(raw: &str) -> ToolResult<SessionId> {
    SessionId::parse(raw.as_bytes()).ok_or_else(|| not_found("session_id", raw))
}

/// `session_name` / `session_id`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct SessionSel {
    /// Session name.
    pub session_name: Option<String>,
    /// Session ID (e.g. '$1').
    pub session_id: Option<String>,
}

impl SessionSel {
    pub fn is_given(&self) -> bool {
        self.session_name.is_some() || self.session_id.is_some()
    }

    /// The session id asked for, parsed (`None`: none was given).
    fn id(&self) -> ToolResult<Option<SessionId>> {
        self.session_id.as_deref().map(session_id).transpose()
    }

    /// Is the session `id` named `name` the one asked for? `want` is
    /// [`Self::id`].
    fn matches(&self, want: Option<SessionId>, id: SessionId, name: &str) -> bool {
        match (want, &self.session_name) {
            (Some(want), _) => want == id,
            (None, Some(want)) => want == name,
            (None, None) => true,
        }
    }

    fn miss(&self) -> ToolError {
        match (&self.session_id, &self.session_name) {
            (Some(id), _) => not_found("session_id", id),
            (None, Some(name)) => not_found("session_name", name),
            (None, None) => not_found("session", "(any)"),
        }
    }
}

/// The arguments of a tool that takes a session and nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionArgs {
    #[serde(flatten)]
    pub session: SessionSel,
}

/// Every session, in tmux's order.
pub async fn sessions(target: &Target) -> ToolResult<Vec<SessionInfo>> {
    let format = rows::SESSION.template();
    let lines = match target
        .hub
        .run(&Command::new("list-sessions").opt("-F", format))
        .await
    {
        Ok(lines) => lines,
        Err(crate::tmux::TmuxError::NoServer(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut sessions = rows::SESSION.parse(&lines);
    for session in &mut sessions {
        leave_out_our_clients(target, session);
    }
    Ok(sessions)
}

/// tmux counts our own control clients as attached; an agent asking
/// whether a person watches a session must not count them.
fn leave_out_our_clients(target: &Target, session: &mut SessionInfo) {
    let Some(id) = SessionId::parse(session.session_id.as_bytes()) else {
        return;
    };
    let ours = target.hub.own_clients(id);
    if let Some(count) = session.session_attached.as_mut()
        && let Ok(n) = count.parse::<usize>()
    {
        *count = n.saturating_sub(ours).to_string();
    }
}

/// The session `sel` names, else the first one.
pub async fn session(target: &Target, sel: &SessionSel) -> ToolResult<SessionInfo> {
    let want = sel.id()?;
    sessions(target)
        .await?
        .into_iter()
        .find(|s| {
            let name = s.session_name.as_deref().unwrap_or("");
            SessionId::parse(s.session_id.as_bytes()).is_some_and(|id| sel.matches(want, id, name))
        })
        .ok_or_else(|| sel.miss())
}

/// The id of the session `sel` names, else of the first one.
pub async fn session_id_of(target: &Target, sel: &SessionSel) -> ToolResult<SessionId> {
    session_id(&session(target, sel).await?.session_id)
}

/// Every window of the server (`list-windows -a`), in tmux's order.
pub async fn windows(target: &Target) -> ToolResult<Vec<WindowInfo>> {
    let format = rows::WINDOW.template();
    let lines = target
        .run(Command::new("list-windows").flag("-a").opt("-F", format))
        .await?;
    Ok(rows::WINDOW.parse(&lines))
}

/// `window_id` / `window_index` plus the session.
#[derive(Debug)]
pub struct WindowSel<'a> {
    pub window_id: Option<WindowId>,
    pub window_index: Option<&'a str>,
    pub session: &'a SessionSel,
}

/// The window `sel` names: by id; else by index in the session (given or
/// first); else the session's first window.
pub async fn window(target: &Target, sel: &WindowSel<'_>) -> ToolResult<WindowInfo> {
    let all = windows(target).await?;
    if let Some(id) = sel.window_id {
        return all
            .into_iter()
            .find(|w| WindowId::parse(w.window_id.as_bytes()) == Some(id))
            .ok_or_else(|| not_found("window_id", &id.to_string()));
    }
    let session_id = session_for_windows(target, sel.session, &all).await?;
    let mut in_session = all
        .into_iter()
        .filter(|w| w.session_id.as_deref() == Some(session_id.as_str()));
    match sel.window_index {
        Some(index) => in_session
            .find(|w| w.window_index.as_deref() == Some(index))
            .ok_or_else(|| not_found("window_index", index)),
        None => in_session.next().ok_or_else(|| {
            ToolError::new(ErrorKind::NoWindowsExist, "The session has no windows.")
        }),
    }
}

/// The window with id `id`: what every tool that changes a window reads back.
pub async fn window_by_id(target: &Target, id: WindowId) -> ToolResult<WindowInfo> {
    window(
        target,
        &WindowSel {
            window_id: Some(id),
            window_index: None,
            session: &SessionSel::default(),
        },
    )
    .await
}

/// The session id a window lookup is scoped to.
async fn session_for_windows(
    target: &Target,
    sel: &SessionSel,
    all: &[WindowInfo],
) -> ToolResult<String> {
    if let Some(id) = sel.id()? {
        return all
            .iter()
            .find(|w| w.session_id.as_deref().and_then(|s| s.parse().ok()) == Some(id))
            .and_then(|w| w.session_id.clone())
            .ok_or_else(|| sel.miss());
    }
    if let Some(name) = &sel.session_name {
        return all
            .iter()
            .find(|w| w.session_name.as_deref() == Some(name))
            .and_then(|w| w.session_id.clone())
            .ok_or_else(|| sel.miss());
    }
    Ok(session(target, sel).await?.session_id)
}

/// Every pane of the server (`list-panes -a`), in tmux's order.
pub async fn panes(target: &Target) -> ToolResult<Vec<PaneInfo>> {
    panes_in(target, PaneScope::Server).await
}

/// Which panes a `list-panes` covers. Narrower scopes make tmux format
/// fewer panes (each costs it a /proc lookup for the command and path).
pub enum PaneScope {
    Server,
    /// A session: `$id`, or `=name` (tmux's exact-name match).
    Session(String),
    Window(WindowId),
}

/// The panes of `scope`, in tmux's order.
pub async fn panes_in(target: &Target, scope: PaneScope) -> ToolResult<Vec<PaneInfo>> {
    let format = rows::PANE.template();
    let cmd = match scope {
        PaneScope::Server => Command::new("list-panes").flag("-a"),
        PaneScope::Session(session) => Command::new("list-panes").flag("-s").target(session),
        PaneScope::Window(window) => Command::new("list-panes").target(window),
    };
    let lines = target.run(cmd.opt("-F", format)).await?;
    Ok(rows::PANE.parse(&lines))
}

/// One pane's row, by id (`display-message -p`: one round trip).
pub async fn pane_row(target: &Target, pane: PaneId) -> ToolResult<PaneInfo> {
    let lines = display_pane(target, pane, rows::PANE.template()).await?;
    own_record(pane, rows::PANE.parse(&lines), |row| row.pane_id.as_str())
}

/// `fields` of one pane, by id, in one `display-message -p`; the first
/// field must be `pane_id`.
pub async fn pane_record(
    target: &Target,
    pane: PaneId,
    fields: &[&str],
) -> ToolResult<Vec<String>> {
    debug_assert_eq!(fields.first(), Some(&"pane_id"));
    let lines = display_pane(target, pane, format::template(fields)).await?;
    own_record(pane, format::records(&lines, fields.len()), |r| {
        r[0].as_str()
    })
}

/// The reply to `display-message -p format` about `pane`.
pub async fn display_pane(
    target: &Target,
    pane: PaneId,
    format: String,
) -> ToolResult<Vec<Vec<u8>>> {
    let cmd = Command::new("display-message")
        .flag("-p")
        .target(pane)
        .arg(format);
    target.run(cmd).await
}

/// What tmux says a pane runs, for where the process probe cannot say.
#[derive(Default)]
pub struct PaneNow {
    /// The foreground command (`pane_current_command`).
    pub command: String,
    /// The pane's shell as configured (`default-shell`): a shell at its
    /// prompt runs this.
    pub shell: String,
    /// The pane's process ended and remain-on-exit keeps it (`pane_dead`):
    /// its pid may belong to another process by now.
    pub dead: bool,
    /// The pane's terminal (`pane_tty`), on the server's host.
    pub tty: String,
}

const NOW: format::Schema<PaneNow> = format::Schema(&[
    ("pane_current_command", |n, v| n.command = v.into()),
    ("default-shell", |n, v| n.shell = v.into()),
    ("pane_dead", |n, v| n.dead = v == "1"),
    ("pane_tty", |n, v| n.tty = v.into()),
]);

/// [`PaneNow`] of `pane`, in one `display-message -p` (`None`: tmux
/// printed nothing).
pub async fn pane_now(target: &Target, pane: PaneId) -> ToolResult<Option<PaneNow>> {
    let lines = display_pane(target, pane, NOW.template()).await?;
    Ok(NOW.parse(&lines).into_iter().next())
}

/// `pane`'s record, the first of a `display-message` reply. display-message
/// does not fail on a missing pane, it prints empty fields: the pane's own
/// id (`id` of the record) tells.
pub fn own_record<T>(pane: PaneId, records: Vec<T>, id: impl Fn(&T) -> &str) -> ToolResult<T> {
    records
        .into_iter()
        .next()
        .filter(|r| id(r) == pane.to_string())
        .ok_or_else(|| pane_not_found(&pane.to_string()))
}

/// The version the tmux server reports (`3.3a`, `next-3.6`).
pub async fn tmux_version(target: &Target) -> ToolResult<String> {
    let lines = target
        .run(Command::new("display-message").flag("-p").arg("#{version}"))
        .await?;
    Ok(lines
        .first()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default())
}

/// `pane_id` plus the window and session around it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PaneSel {
    /// Pane ID (e.g. '%1'). Wins over the other fields.
    pub pane_id: Option<String>,
    /// Session name, used when pane_id is not given.
    pub session_name: Option<String>,
    /// Session ID (e.g. '$1'), used when pane_id is not given.
    pub session_id: Option<String>,
    /// Window ID (e.g. '@1'), used when pane_id is not given.
    pub window_id: Option<String>,
}

/// The arguments of a tool that takes a pane and nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PaneArgs {
    #[serde(flatten)]
    pub pane: PaneSel,
}

/// The pane `sel` names: by id; else the first pane of the window (by id,
/// else the session's first window; session given or first).
pub async fn resolve_pane(target: &Target, sel: &PaneSel) -> ToolResult<PaneId> {
    if let Some(id) = &sel.pane_id {
        return pane_id(id);
    }
    let session = SessionSel {
        session_name: sel.session_name.clone(),
        session_id: sel.session_id.clone(),
    };
    let window = window(
        target,
        &WindowSel {
            window_id: sel.window_id.as_deref().map(window_id).transpose()?,
            window_index: None,
            session: &session,
        },
    )
    .await?;
    let panes = panes(target).await?;
    let first = panes
        .iter()
        .find(|p| p.window_id.as_deref() == Some(window.window_id.as_str()));
    first
        .map(|p| pane_id(&p.pane_id))
        .unwrap_or_else(|| Err(not_found("window_id", &window.window_id)))
}

impl App {
    /// One pane's model, by id, with `is_caller` filled in.
    pub async fn pane_info(&self, target: &Target, pane: PaneId) -> ToolResult<PaneInfo> {
        let mut info = pane_row(target, pane).await?;
        self.mark_caller(target, &mut info);
        Ok(info)
    }

    /// Fills in `is_caller` the way the reference does: null without an
    /// identity, true only for our own pane on our own server.
    pub fn mark_caller(&self, target: &Target, info: &mut PaneInfo) {
        if let Ok(pane) = info.pane_id.parse() {
            info.is_caller = self.is_caller(target, pane);
        }
    }

    /// `is_caller` for the pane `pane` of `target`'s server.
    pub fn is_caller(&self, target: &Target, pane: PaneId) -> Option<bool> {
        // Null without an identity; an identity that names no pane is never this one.
        self.config.caller.pane_id.as_ref()?;
        Some(self.caller_pane() == Some(pane) && self.runs_inside(target, false))
    }

    /// The pane this MCP server runs in (`TMUX_PANE`), if it names one.
    fn caller_pane(&self) -> Option<PaneId> {
        self.config.caller.pane_id.as_deref()?.parse().ok()
    }

    /// Is this MCP server running inside `target`'s server? Never inside a
    /// remote one. `lenient` is the guard comparator.
    fn runs_inside(&self, target: &Target, lenient: bool) -> bool {
        target
            .hub
            .local_socket()
            .is_some_and(|socket| self.caller_socket_is(socket, lenient))
    }

    /// Is this MCP server running inside the server at `socket`? `lenient`
    /// is the guard comparator: when unsure, it says yes.
    pub fn caller_socket_is(&self, socket: &Path, lenient: bool) -> bool {
        let caller = &self.config.caller;
        let Some(mine) = &caller.socket_path else {
            return lenient && caller.pane_id.is_some();
        };
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if canon(mine) == canon(socket) {
            return true;
        }
        lenient && mine.file_name().is_some() && mine.file_name() == socket.file_name()
    }
}

/// What a destructive call takes with it, for the self guard.
#[derive(Clone, Copy, Debug)]
pub enum Doomed {
    Server,
    Session(SessionId),
    Window(WindowId),
    Pane(PaneId),
    /// The pane stays; the process in it is replaced.
    Respawned(PaneId),
}

impl Doomed {
    /// The refusal when `self` holds the pane running this MCP server.
    fn own_pane_refusal(self) -> &'static str {
        match self {
            Doomed::Server => {
                "Refusing to kill the tmux server while this MCP server is running inside it."
            }
            Doomed::Session(_) => "Refusing to kill the session containing this MCP server's pane.",
            Doomed::Window(_) => "Refusing to kill the window containing this MCP server's pane.",
            Doomed::Pane(_) => "Refusing to kill the pane running this MCP server.",
            Doomed::Respawned(_) => "Refusing to respawn the pane running this MCP server.",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Doomed::Server => "tmux server",
            Doomed::Session(_) => "session",
            Doomed::Window(_) => "window",
            Doomed::Pane(_) | Doomed::Respawned(_) => "pane",
        }
    }

    /// Does `self` take the pane `p` with it?
    fn takes(self, p: &PaneInfo) -> bool {
        match self {
            Doomed::Server => true,
            Doomed::Session(id) => p.session_id.as_deref() == Some(&*id.to_string()),
            Doomed::Window(id) => p.window_id.as_deref() == Some(&*id.to_string()),
            Doomed::Pane(id) | Doomed::Respawned(id) => p.pane_id == id.to_string(),
        }
    }
}

fn refused(what: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Refused,
        format!("{what} Use a manual tmux command if intended."),
    )
}

impl App {
    /// The guard of every destructive tool: refuses when `doomed` on
    /// `target` holds the pane running this MCP server, or (a kill only)
    /// the pane in which the client showing this server's session runs.
    pub async fn refuse_self_harm(&self, target: &Target, doomed: Doomed) -> ToolResult<()> {
        if self.takes_own_pane(target, doomed).await? {
            return Err(refused(doomed.own_pane_refusal()));
        }
        if !matches!(doomed, Doomed::Respawned(_))
            && self.hosts_caller_client(target, doomed).await?
        {
            return Err(refused(&format!(
                "Refusing to kill the {} hosting the tmux client this MCP server's session is shown through (nested tmux).",
                doomed.noun()
            )));
        }
        Ok(())
    }

    /// Does `doomed` hold our own pane? The socket comparison is lenient:
    /// when unsure, it says yes.
    async fn takes_own_pane(&self, target: &Target, doomed: Doomed) -> ToolResult<bool> {
        if !self.runs_inside(target, true) {
            return Ok(false);
        }
        let me = self.caller_pane();
        Ok(match doomed {
            Doomed::Server => true,
            Doomed::Pane(id) | Doomed::Respawned(id) => me == Some(id),
            Doomed::Session(_) | Doomed::Window(_) => match me {
                None => false,
                Some(me) => panes(target)
                    .await?
                    .iter()
                    .any(|p| p.pane_id.parse() == Ok(me) && doomed.takes(p)),
            },
        })
    }

    /// Nested tmux: `$TMUX` names only the innermost server, but the client
    /// through which the caller's session is shown may run in a pane of
    /// another (outer) server. Does `doomed` on `target` hold a pane whose
    /// tty is the tty of such a client? Never true outside tmux.
    async fn hosts_caller_client(&self, target: &Target, doomed: Doomed) -> ToolResult<bool> {
        // A remote host's ttys are not this machine's, whatever their names.
        if target.hub.local_socket().is_none() {
            return Ok(false);
        }
        let ttys = self.caller_client_ttys().await;
        if ttys.is_empty() {
            return Ok(false);
        }
        let panes = panes(target).await?;
        Ok(panes
            .iter()
            .any(|p| p.pane_tty.as_ref().is_some_and(|tty| ttys.contains(tty)) && doomed.takes(p)))
    }

    /// The ttys of the clients attached to the caller's session on the
    /// caller's server, asked one-shot (no control client is attached to a
    /// server only for this). Empty outside tmux, or when that server cannot
    /// be asked (then we are not running inside it).
    async fn caller_client_ttys(&self) -> Vec<String> {
        let caller = &self.config.caller;
        let (Some(socket), Some(pane)) = (&caller.socket_path, self.caller_pane()) else {
            return Vec::new();
        };
        let hub = self.hubs.get(socket);
        let session = Command::new("display-message")
            .flag("-p")
            .target(pane)
            .arg("#{session_id}");
        let session = match hub.run_oneshot(&session).await {
            Ok(lines) => lines.first().and_then(|l| SessionId::parse(l)),
            Err(_) => None,
        };
        let Some(session) = session else {
            return Vec::new();
        };
        let clients = Command::new("list-clients")
            .target(session)
            .opt("-F", "#{client_tty}");
        hub.run_oneshot(&clients)
            .await
            .unwrap_or_default()
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .filter(|tty| !tty.is_empty())
            .collect()
    }
}
