//! Scopes (`TMUX_MCP_SCOPE`): which sessions, windows and panes of a tmux
//! server the tools reach.
//!
//! - `server`: all of them (the reference's behaviour);
//! - `owned`: a session this server made (its maker mark is ours, see
//!   [`super::marks`]) with everything in it; a window it made, with every
//!   pane in it; a pane it made;
//! - `session`: what `owned` reaches, plus the session this server runs in
//!   (`TMUX_PANE` on this very tmux server) with everything in it.
//!
//! The call path fences every targeted call once, before its handler
//! runs ([`App::enter_scope`]): one `list-panes -a` with the maker marks
//! tells which objects are outside; an argument naming one is refused,
//! and the lookups ([`super::lookup`]) leave them out of every listing and
//! of every default choice. What the call creates itself is in scope.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use crate::config::Scope;
use crate::tmux::{Command, PaneId, SessionId, TmuxError, WindowId, format};
use crate::tools::shared::marks::{PANE_MARK, SESSION_MARK, WINDOW_MARK};
use crate::tools::{App, ErrorKind, Fence, Target, ToolError, ToolResult};

/// The census of a server: every pane, where it is and who made what.
const CENSUS: &[&str] = &[
    "pane_id",
    "window_id",
    "session_id",
    "session_name",
    PANE_MARK,
    WINDOW_MARK,
    SESSION_MARK,
];

/// One pane of the census.
#[derive(Debug, Default)]
struct CensusRow {
    pane: PaneId,
    window: WindowId,
    session: SessionId,
    session_name: String,
    pane_by: String,
    window_by: String,
    session_by: String,
}

impl CensusRow {
    fn parse(fields: &[String]) -> Option<CensusRow> {
        let [pane, window, session, name, pane_by, window_by, session_by] = fields else {
            return None;
        };
        Some(CensusRow {
            pane: PaneId::parse(pane.as_bytes())?,
            window: WindowId::parse(window.as_bytes())?,
            session: SessionId::parse(session.as_bytes())?,
            session_name: name.clone(),
            pane_by: pane_by.clone(),
            window_by: window_by.clone(),
            session_by: session_by.clone(),
        })
    }
}

/// What is outside `scope` on a server listed as `rows`, for the maker
/// `maker`; `home` is the pane this MCP server runs in, when it runs on
/// this server.
fn fence_of(scope: Scope, rows: &[CensusRow], maker: &str, home: Option<PaneId>) -> Fence {
    let home_session = match scope {
        Scope::Session => home.and_then(|h| rows.iter().find(|r| r.pane == h).map(|r| r.session)),
        _ => None,
    };
    let sessions_in: HashSet<SessionId> = rows
        .iter()
        .filter(|r| r.session_by == maker || Some(r.session) == home_session)
        .map(|r| r.session)
        .collect();
    // A window linked into several sessions is in when any of them is.
    let windows_in: HashSet<WindowId> = rows
        .iter()
        .filter(|r| sessions_in.contains(&r.session) || r.window_by == maker)
        .map(|r| r.window)
        .collect();
    let panes_in: HashSet<PaneId> = rows
        .iter()
        .filter(|r| windows_in.contains(&r.window) || r.pane_by == maker)
        .map(|r| r.pane)
        .collect();
    let mut fence = Fence {
        scope,
        ..Fence::default()
    };
    for r in rows {
        if !sessions_in.contains(&r.session) {
            fence.sessions.insert(r.session);
            fence.session_names.insert(r.session_name.clone());
        }
        if !windows_in.contains(&r.window) {
            fence.windows.insert(r.window);
        }
        if !panes_in.contains(&r.pane) {
            fence.panes.insert(r.pane);
        }
    }
    fence
}

/// What a scope lets the tools reach, for a refusal.
fn reach(scope: Scope) -> &'static str {
    match scope {
        Scope::Server => "the whole tmux server",
        Scope::Session => "the session it runs in and the sessions, windows and panes it created",
        Scope::Owned => "only the sessions, windows and panes it created",
    }
}

/// The refusal of a call that names `what`, outside `scope`.
pub fn out_of_scope(scope: Scope, what: &str) -> ToolError {
    let wider = match scope {
        Scope::Owned => "TMUX_MCP_SCOPE=session or server",
        _ => "TMUX_MCP_SCOPE=server",
    };
    ToolError::new(
        ErrorKind::Refused,
        format!(
            "{what} is outside this MCP server's scope (TMUX_MCP_SCOPE={}: {}).",
            scope.as_str(),
            reach(scope)
        ),
    )
    .suggest(format!(
        "Work in a session, window or pane this server created (create_session), or ask the person to widen the scope ({wider} in the MCP server's environment)."
    ))
}

/// Refuses what changes the whole server (global options and
/// environment, the server itself) on a fenced target.
pub fn refuse_server_wide(target: &Target, what: &str) -> ToolResult<()> {
    match &target.fence {
        Some(fence) => Err(out_of_scope(fence.scope, what)),
        None => Ok(()),
    }
}

impl App {
    /// Fences `target` for a call from the client named `client`: one
    /// census of the server, nothing under the scope `server`.
    pub async fn fence(&self, target: &mut Target, client: Option<&str>) -> ToolResult<()> {
        let scope = self.config.scope;
        if scope == Scope::Server {
            return Ok(());
        }
        let maker = self.maker_named(target, client);
        let home = self
            .caller_pane()
            .filter(|_| self.runs_inside(target, false));
        let census = Command::new("list-panes")
            .flag("-a")
            .opt("-F", format::template(CENSUS));
        let lines = match target.hub.run(&census).await {
            Ok(lines) => lines,
            Err(TmuxError::NoServer(_)) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let rows: Vec<CensusRow> = format::records(&lines, CENSUS.len())
            .iter()
            .filter_map(|r| CensusRow::parse(r))
            .collect();
        target.fence = Some(Arc::new(fence_of(scope, &rows, &maker, home)));
        Ok(())
    }

    /// The server `socket_name` names, fenced for the last client a tool
    /// call named (what resources and completions reach).
    pub async fn fenced_socket(&self, socket_name: Option<&str>) -> ToolResult<Target> {
        let mut target = self.socket(socket_name)?;
        let client = self
            .client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.fence(&mut target, client.as_deref()).await?;
        Ok(target)
    }

    /// The scope gate of the call path: fences `target`, then refuses a
    /// call whose arguments `args` name an object outside the scope.
    pub async fn enter_scope(
        &self,
        target: &mut Target,
        args: &Value,
        client: Option<&str>,
    ) -> ToolResult<()> {
        self.fence(target, client).await?;
        match &target.fence {
            Some(fence) => check_args(target, fence, args),
            None => Ok(()),
        }
    }
}

/// Refuses `target`'s pane `pane` when its fence leaves it out.
pub fn refuse_pane(target: &Target, pane: PaneId) -> ToolResult<()> {
    match &target.fence {
        Some(fence) if fence.panes.contains(&pane) => {
            Err(out_of_scope(fence.scope, &format!("Pane {pane}")))
        }
        _ => Ok(()),
    }
}

/// Refuses `target`'s session named `name` when its fence leaves it out.
pub fn refuse_session_named(target: &Target, name: &str) -> ToolResult<()> {
    match &target.fence {
        Some(fence) if fence.session_names.contains(name) => {
            Err(out_of_scope(fence.scope, &format!("Session {name:?}")))
        }
        _ => Ok(()),
    }
}

/// Refuses arguments naming an object `fence` leaves out; a batch's
/// `operations` are checked one by one. An id or name that names nothing
/// passes (the tool says it is not found).
fn check_args(target: &Target, fence: &Fence, args: &Value) -> ToolResult<()> {
    let Some(map) = args.as_object() else {
        return Ok(());
    };
    for (key, value) in map {
        match value {
            Value::Array(items) if key == "operations" => {
                for item in items {
                    check_args(target, fence, item)?;
                }
            }
            Value::Object(_) if key == "arguments" => check_args(target, fence, value)?,
            Value::Array(items) if key == "pane_ids" => {
                for raw in items.iter().filter_map(Value::as_str) {
                    if names_outside(target, fence, "pane_id", raw) {
                        return Err(out_of_scope(fence.scope, &format!("pane_ids {raw:?}")));
                    }
                }
            }
            Value::String(raw) if names_outside(target, fence, key, raw) => {
                return Err(out_of_scope(fence.scope, &format!("{key} {raw:?}")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Does the argument `key` with value `raw` name something `fence` leaves out?
fn names_outside(target: &Target, fence: &Fence, key: &str, raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let session_named = |raw: &str| match raw.strip_prefix('$') {
        Some(_) => SessionId::parse(bytes).is_some_and(|s| fence.sessions.contains(&s)),
        None => fence.session_names.contains(raw),
    };
    match key {
        "pane_id" | "source_pane_id" | "target_pane_id" => {
            PaneId::parse(bytes).is_some_and(|p| fence.panes.contains(&p))
        }
        "window_id" => WindowId::parse(bytes).is_some_and(|w| fence.windows.contains(&w)),
        "session_id" => SessionId::parse(bytes).is_some_and(|s| fence.sessions.contains(&s)),
        "session_name" | "destination_session" => session_named(raw),
        // An option's or hook's object: an id, else a session name.
        "target" => match bytes.first() {
            Some(b'%') => PaneId::parse(bytes).is_some_and(|p| fence.panes.contains(&p)),
            Some(b'@') => WindowId::parse(bytes).is_some_and(|w| fence.windows.contains(&w)),
            _ => session_named(raw),
        },
        // Paste buffers belong to the server: only those this server loaded are in.
        "buffer_name" => !target.server.buffers.tracks(raw),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pane: &str, window: &str, session: &str, by: [&str; 3]) -> CensusRow {
        CensusRow {
            pane: pane.parse().unwrap(),
            window: WindowId::parse(window.as_bytes()).unwrap(),
            session: SessionId::parse(session.as_bytes()).unwrap(),
            session_name: format!("s{}", &session[1..]),
            pane_by: by[0].into(),
            window_by: by[1].into(),
            session_by: by[2].into(),
        }
    }

    /// $0: the person's session, where the agent runs in %0, split %5 into
    /// @0 and made window @3; $1: the agent's session, where the person split %4.
    fn server() -> Vec<CensusRow> {
        vec![
            row("%0", "@0", "$0", ["", "", ""]),
            row("%1", "@1", "$0", ["", "", ""]),
            row("%5", "@0", "$0", ["me", "", ""]),
            row("%3", "@3", "$0", ["me", "me", ""]),
            row("%2", "@2", "$1", ["me", "me", "me"]),
            row("%4", "@2", "$1", ["", "", ""]),
        ]
    }

    fn outside(f: &Fence) -> (Vec<String>, Vec<String>, Vec<String>) {
        let mut s: Vec<String> = f.sessions.iter().map(|i| i.to_string()).collect();
        let mut w: Vec<String> = f.windows.iter().map(|i| i.to_string()).collect();
        let mut p: Vec<String> = f.panes.iter().map(|i| i.to_string()).collect();
        s.sort();
        w.sort();
        p.sort();
        (s, w, p)
    }

    #[test]
    fn owned_keeps_what_carries_our_mark_and_what_is_inside_it() {
        let home = "%0".parse().ok();
        let f = fence_of(Scope::Owned, &server(), "me", home);
        let (s, w, p) = outside(&f);
        assert_eq!(s, ["$0"]);
        assert_eq!(w, ["@0", "@1"]);
        assert_eq!(p, ["%0", "%1"]);
        assert!(f.session_names.contains("s0") && !f.session_names.contains("s1"));
    }

    #[test]
    fn session_adds_the_session_this_server_runs_in() {
        let f = fence_of(Scope::Session, &server(), "me", "%1".parse().ok());
        assert_eq!(outside(&f), (vec![], vec![], vec![]));
        let f = fence_of(Scope::Session, &server(), "me", "%2".parse().ok());
        let (s, _, p) = outside(&f);
        assert_eq!(s, ["$0"]);
        assert_eq!(p, ["%0", "%1"]);
        // Outside tmux (or on another server) it is `owned`.
        let f = fence_of(Scope::Session, &server(), "me", None);
        assert_eq!(outside(&f).0, ["$0"]);
        // Another maker's marks are not ours.
        let f = fence_of(Scope::Owned, &server(), "other", None);
        assert_eq!(outside(&f).2.len(), 6);
    }
}
