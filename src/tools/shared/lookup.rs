//! Finding the tmux object a call means, with the reference's precedence:
//! an id wins, then a name or index, else the first session / window / pane
//! listed. Every lookup is one `list-*` round trip filtered here, so names
//! are compared exactly (tmux's own `-t name` would also match prefixes and
//! patterns).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::drive::pane::{display_pane, own_record};
use crate::tmux::{Command, PaneId, SessionId, WindowId};
use crate::tools::error::{not_found, pane_not_found};
use crate::tools::shared::models::{PaneInfo, SessionInfo, WindowInfo};
use crate::tools::shared::rows;
use crate::tools::shared::scope::out_of_scope;
use crate::tools::{ErrorKind, Target, ToolError, ToolResult};

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
    sessions.retain(|s| target.admits_session(s.session_id));
    for session in &mut sessions {
        leave_out_our_clients(target, session);
    }
    Ok(sessions)
}

/// tmux counts our own control clients as attached; an agent asking
/// whether a person watches a session must not count them.
fn leave_out_our_clients(target: &Target, session: &mut SessionInfo) {
    let ours = target.hub.own_clients(session.session_id);
    if let Some(count) = session.session_attached.as_mut()
        && let Ok(n) = count.parse::<usize>()
    {
        *count = n.saturating_sub(ours).to_string();
    }
}

/// The session `sel` names, else the first one.
pub async fn session(target: &Target, sel: &SessionSel) -> ToolResult<SessionInfo> {
    let want = sel.id()?;
    let found = sessions(target).await?.into_iter().find(|s| {
        let name = s.session_name.as_deref().unwrap_or("");
        sel.matches(want, s.session_id, name)
    });
    match (found, &target.fence) {
        (Some(session), _) => Ok(session),
        (None, Some(fence)) if !sel.is_given() => Err(out_of_scope(fence.scope, "Every session")),
        (None, _) => Err(sel.miss()),
    }
}

/// The session with id `id`: what a tool that changes a session reads back.
pub async fn session_by_id(target: &Target, id: SessionId) -> ToolResult<SessionInfo> {
    sessions(target)
        .await?
        .into_iter()
        .find(|s| s.session_id == id)
        .ok_or_else(|| not_found("session_id", &id.to_string()))
}

/// The id of the session `sel` names, else of the first one.
pub async fn session_id_of(target: &Target, sel: &SessionSel) -> ToolResult<SessionId> {
    Ok(session(target, sel).await?.session_id)
}

/// Every window of the server (`list-windows -a`), in tmux's order.
pub async fn windows(target: &Target) -> ToolResult<Vec<WindowInfo>> {
    let format = rows::WINDOW.template();
    let lines = target
        .run(Command::new("list-windows").flag("-a").opt("-F", format))
        .await?;
    let mut windows = rows::WINDOW.parse(&lines);
    windows.retain(|w| target.admits_window(w.window_id));
    Ok(windows)
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
            .find(|w| w.window_id == id)
            .ok_or_else(|| not_found("window_id", &id.to_string()));
    }
    let session_id = session_for_windows(target, sel.session, &all).await?;
    let mut in_session = all.into_iter().filter(|w| w.session_id == Some(session_id));
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
) -> ToolResult<SessionId> {
    if let Some(id) = sel.id()? {
        return all
            .iter()
            .find_map(|w| w.session_id.filter(|&s| s == id))
            .ok_or_else(|| sel.miss());
    }
    if let Some(name) = &sel.session_name {
        return all
            .iter()
            .find(|w| w.session_name.as_deref() == Some(name))
            .and_then(|w| w.session_id)
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
    let mut panes = rows::PANE.parse(&lines);
    panes.retain(|p| target.admits_pane(p.pane_id));
    Ok(panes)
}

/// One pane's row, by id (`display-message -p`: one round trip).
pub async fn pane_row(target: &Target, pane: PaneId) -> ToolResult<PaneInfo> {
    let lines = display_pane(target, pane, rows::PANE.template()).await?;
    own_record(pane, rows::PANE.parse(&lines), |row| Some(row.pane_id))
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
    let first = panes.iter().find(|p| p.window_id == Some(window.window_id));
    first
        .map(|p| p.pane_id)
        .ok_or_else(|| not_found("window_id", &window.window_id.to_string()))
}

/// `window_id`, `window_index` and the session they are in.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowTarget {
    /// Window ID (e.g. '@1'). Wins over the other fields.
    pub window_id: Option<String>,
    /// Window index within the session.
    pub window_index: Option<String>,
    #[serde(flatten)]
    pub session: SessionSel,
}

impl WindowTarget {
    /// The lookup these arguments ask for (a `window_id` that is not
    /// `@N` names no window).
    fn sel(&self) -> ToolResult<WindowSel<'_>> {
        Ok(WindowSel {
            window_id: self.window_id.as_deref().map(window_id).transpose()?,
            window_index: self.window_index.as_deref(),
            session: &self.session,
        })
    }

    /// The window these arguments name (see [`window`]).
    pub async fn resolve(&self, target: &Target) -> ToolResult<WindowInfo> {
        window(target, &self.sel()?).await
    }

    /// The id of the window these arguments name.
    pub async fn id(&self, target: &Target) -> ToolResult<WindowId> {
        Ok(self.resolve(target).await?.window_id)
    }
}
