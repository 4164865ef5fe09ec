//! [`App`], the state every tool call shares, and [`Target`], the tmux
//! server one call talks to.

use std::sync::Arc;

use super::ToolError;
use super::sock;
use super::toolsets::{Selection, Toolset};
use crate::config::Config;
use crate::tmux::Command;
use crate::tmux::hub::Hub;
use crate::tmux::hubs::Hubs;
use crate::tmux::socket::SocketSpec;

/// Shared state every tool call sees.
pub struct App {
    pub config: Config,
    pub hubs: Hubs,
    /// The tools this server exposes (a read batch also honours its
    /// exclusions).
    pub selection: Selection,
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
}

impl Target {
    pub async fn run(&self, command: Command) -> Result<Vec<Vec<u8>>, ToolError> {
        self.hub.run(&command).await.map_err(ToolError::from)
    }
}
