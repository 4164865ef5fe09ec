//! Maker marks: every session, window and pane this server creates carries
//! a user option naming who made it, so an agent finds its own again after
//! its context was compacted or the MCP server restarted.
//!
//! The mark is the MCP client's `clientInfo.name`, followed by `@%N` when
//! this server runs inside the target tmux server (`TMUX_PANE`): the agent's
//! own pane. Both outlive this process.
//!
//! Each kind of object has an option of its own name: tmux formats inherit
//! user options (a pane without one shows its window's, a session listing
//! shows its active pane's), so one shared name would mark a pane a person
//! split in an agent's window as the agent's.

use crate::mcp::CallContext;
use crate::tmux::{Command, PaneId, SessionId, WindowId};
use crate::tools::shared::models::{PaneInfo, SessionInfo, WindowInfo};
use crate::tools::{App, Target};

/// The session option holding a session's maker.
pub const SESSION_MARK: &str = "@tmux_mcp_session_by";
/// The window option holding a window's maker.
pub const WINDOW_MARK: &str = "@tmux_mcp_window_by";
/// The pane option holding a pane's maker.
pub const PANE_MARK: &str = "@tmux_mcp_pane_by";

/// The maker named when the client gave no `clientInfo.name`.
const UNNAMED: &str = "unnamed";
/// The longest client name kept, in characters.
const MAX_NAME: usize = 64;

/// `created_by: "me"`: this client (and pane).
pub const ME: &str = "me";

impl App {
    /// The mark this call leaves on what it creates on `target`'s server.
    pub fn maker(&self, target: &Target, ctx: &CallContext) -> String {
        self.maker_named(target, ctx.client.as_deref())
    }

    /// The mark a call from the client named `client` leaves on `target`'s server.
    pub fn maker_named(&self, target: &Target, client: Option<&str>) -> String {
        let name = client_name(client);
        match self.caller_pane() {
            Some(pane) if self.runs_inside(target, false) => format!("{name}@{pane}"),
            _ => name,
        }
    }
}

/// A client's name as a mark holds it: control characters dropped, at
/// most [`MAX_NAME`] characters, never empty.
fn client_name(name: Option<&str>) -> String {
    let kept: String = name
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME)
        .collect();
    let kept = kept.trim();
    if kept.is_empty() {
        UNNAMED.to_owned()
    } else {
        kept.to_owned()
    }
}

/// What was created, for [`mark`].
pub enum Made {
    /// A session, with its first window and pane (the pane's id names both).
    Session(SessionId, PaneId),
    /// A window, with its first pane.
    Window(WindowId, PaneId),
    Pane(PaneId),
}

/// Leaves `maker` on what was created. Best effort: the object exists
/// whatever happens here, so a failure is logged, not returned.
pub async fn mark(target: &Target, made: Made, maker: &str) -> bool {
    let set = |scope: Option<&'static str>, id: String, option: &'static str| {
        let mut cmd = Command::new("set-option");
        if let Some(scope) = scope {
            cmd = cmd.flag(scope);
        }
        cmd.target(id).flag("--").arg(option).arg(maker)
    };
    let (session, window, pane) = match made {
        Made::Session(s, p) => (Some(s), Some(p.to_string()), p),
        Made::Window(w, p) => (None, Some(w.to_string()), p),
        Made::Pane(p) => (None, None, p),
    };
    let mut commands = Vec::new();
    if let Some(session) = session {
        commands.push(set(None, session.to_string(), SESSION_MARK));
    }
    // `-w -t %N` is the window `%N` is in.
    if let Some(window) = window {
        commands.push(set(Some("-w"), window, WINDOW_MARK));
    }
    if target.hub.features().await.pane_options {
        commands.push(set(Some("-p"), pane.to_string(), PANE_MARK));
    }
    let mut all = true;
    for cmd in commands {
        if let Err(e) = target.hub.run(&cmd).await {
            eprintln!("tmux-mcp: could not mark the new object with its maker: {e}");
            all = false;
        }
    }
    all
}

/// The objects a listing reports a maker for.
pub trait Marked {
    fn created_by(&self) -> Option<&str>;
}

impl Marked for SessionInfo {
    fn created_by(&self) -> Option<&str> {
        self.created_by.as_deref()
    }
}

impl Marked for WindowInfo {
    fn created_by(&self) -> Option<&str> {
        self.created_by.as_deref()
    }
}

impl Marked for PaneInfo {
    fn created_by(&self) -> Option<&str> {
        self.created_by.as_deref()
    }
}

/// Keeps what `want` made: `"me"` is `me` (this call's [`App::maker`]),
/// anything else a mark as listed.
pub fn keep_made_by<T: Marked>(items: &mut Vec<T>, want: Option<&str>, me: &str) {
    let Some(want) = want else { return };
    let want = if want == ME { me } else { want };
    items.retain(|item| item.created_by() == Some(want));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_are_kept_printable_and_short() {
        assert_eq!(client_name(Some("claude-code")), "claude-code");
        assert_eq!(client_name(None), UNNAMED);
        assert_eq!(client_name(Some(" \n\t ")), UNNAMED);
        assert_eq!(client_name(Some("a\x1b[31mb\nc")), "a[31mbc");
        assert_eq!(client_name(Some(&"x".repeat(200))).len(), MAX_NAME);
    }

    #[test]
    fn me_is_this_makers_mark() {
        let pane = |by: Option<&str>| PaneInfo {
            created_by: by.map(str::to_owned),
            ..PaneInfo::default()
        };
        let mut panes = vec![pane(Some("a@%1")), pane(Some("b")), pane(None)];
        keep_made_by(&mut panes, None, "a@%1");
        assert_eq!(panes.len(), 3);
        keep_made_by(&mut panes, Some("me"), "a@%1");
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].created_by.as_deref(), Some("a@%1"));
        let mut panes = vec![pane(Some("a@%1")), pane(Some("b"))];
        keep_made_by(&mut panes, Some("b"), "a@%1");
        assert_eq!(panes[0].created_by.as_deref(), Some("b"));
    }
}
