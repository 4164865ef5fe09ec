//! [`App`], the state every tool call shares, and [`Target`], the tmux
//! server one call talks to.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::ToolError;
use super::sock;
use super::toolsets::{Selection, Toolset};
use crate::config::{Config, Scope};
use crate::tmux::hub::Hub;
use crate::tmux::hubs::Hubs;
use crate::tmux::socket::SocketSpec;
use crate::tmux::{Command, PaneId, SessionId, WindowId};

/// Shared state every tool call sees.
pub struct App {
    pub config: Config,
    pub hubs: Hubs,
    /// The tools this server exposes (a read batch also honours its
    /// exclusions).
    pub selection: Selection,
    /// The last `clientInfo.name` a tool call carried: whose marks the
    /// scope `owned` keeps where no call is at hand (resources,
    /// completions).
    pub client: Mutex<Option<Arc<str>>>,
}

impl App {
    /// An app exposing every tool (all four toolsets).
    pub fn new(config: Config) -> Arc<App> {
        let every = Selection {
            toolsets: Toolset::ALL.into(),
            ..Selection::default()
        };
        Self::with_selection(config, every)
    }

    /// An app exposing the tools `selection` allows.
    pub fn with_selection(config: Config, selection: Selection) -> Arc<App> {
        let hubs = Hubs::with_hosts(
            config.tmux_bin.clone(),
            config.limits.clone(),
            &config.hosts,
        );
        Arc::new(App {
            config,
            hubs,
            selection,
            client: Mutex::new(None),
        })
    }

    /// The socket a call targets (see `sock::resolve`).
    pub fn socket(&self, socket_name: Option<&str>) -> Result<Target, ToolError> {
        sock::resolve(&self.config, &self.hubs, socket_name)
    }

    /// Deletes the paste buffers `load_buffer` created that are still
    /// there (best effort, bounded), then detaches from every tmux server
    /// (sessions are left untouched).
    pub async fn shutdown(&self) {
        let cleanup = async {
            for hub in self.hubs.all() {
                for name in hub.take_buffers() {
                    let _ = hub
                        .run(&Command::new("delete-buffer").opt("-b", name))
                        .await;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), cleanup).await;
        self.hubs.shutdown().await;
    }
}

/// The tmux server a call talks to.
pub struct Target {
    pub hub: Arc<Hub>,
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
    /// A target on `hub` that every object is in scope of.
    pub fn unfenced(hub: Arc<Hub>, spec: SocketSpec) -> Target {
        Target {
            hub,
            spec,
            fence: None,
        }
    }

    /// The same server, under the same fence (for work that outlives a call).
    pub fn share(&self) -> Target {
        Target {
            hub: self.hub.clone(),
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
