//! [`Target`], the tmux server one call talks to, and the [`Fence`] of
//! what the call may not reach.

use std::collections::HashSet;
use std::sync::Arc;

use crate::config::Scope;
use crate::drive::ToolError;
use crate::drive::server::Server;
use crate::tmux::hub::Hub;
use crate::tmux::socket::SocketSpec;
use crate::tmux::{Command, PaneId, SessionId, WindowId};

/// The tmux server a call talks to.
pub struct Target {
    /// The server's transport (`server.hub`, at hand).
    pub hub: Arc<Hub>,
    /// What this process keeps of the server between calls.
    pub server: Arc<Server>,
    pub spec: SocketSpec,
    /// What the call may not reach (`TMUX_MCP_SCOPE`); `None`: everything
    /// is in scope.
    pub fence: Option<Arc<Fence>>,
}

/// The objects of one tmux server outside the scope, as listed when a call
/// began (`tools::shared::scope` builds it). What is not listed, such as
/// what the call itself creates, is in scope.
#[derive(Debug, Default)]
pub struct Fence {
    pub scope: Scope,
    pub sessions: HashSet<SessionId>,
    pub session_names: HashSet<String>,
    pub windows: HashSet<WindowId>,
    pub panes: HashSet<PaneId>,
}

impl Target {
    /// A target on `server` that every object is in scope of.
    pub fn unfenced(server: Arc<Server>, spec: SocketSpec) -> Target {
        Target {
            hub: server.hub.clone(),
            server,
            spec,
            fence: None,
        }
    }

    /// The same server, under the same fence (for work that outlives a call).
    pub fn share(&self) -> Target {
        Target {
            hub: self.hub.clone(),
            server: self.server.clone(),
            spec: self.spec.clone(),
            fence: self.fence.clone(),
        }
    }

    pub fn admits_session(&self, id: SessionId) -> bool {
        self.fence
            .as_ref()
            .is_none_or(|f| !f.sessions.contains(&id))
    }

    pub fn admits_window(&self, id: WindowId) -> bool {
        self.fence.as_ref().is_none_or(|f| !f.windows.contains(&id))
    }

    pub fn admits_pane(&self, id: PaneId) -> bool {
        self.fence.as_ref().is_none_or(|f| !f.panes.contains(&id))
    }

    pub async fn run(&self, command: Command) -> Result<Vec<Vec<u8>>, ToolError> {
        self.hub.run(&command).await.map_err(ToolError::from)
    }
}
