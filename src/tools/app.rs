//! [`App`], the state every tool call shares.

use std::sync::{Arc, Mutex};

use super::sock;
use super::toolsets::{Selection, Toolset};
use super::{Target, ToolError};
use crate::config::Config;
use crate::drive::input;
use crate::drive::server::Servers;
use crate::tmux::hubs::Hubs;

/// How long shutdown waits for a server's tasks to end once stopped.
const TASKS_END: std::time::Duration = std::time::Duration::from_millis(500);

/// Shared state every tool call sees.
pub struct App {
    pub config: Config,
    pub hubs: Hubs,
    /// What is kept of each server between calls, by its hub.
    pub servers: Servers,
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
            servers: Servers::default(),
            selection,
            client: Mutex::new(None),
        })
    }

    /// The socket a call targets (see `sock::resolve`).
    pub fn socket(&self, socket_name: Option<&str>) -> Result<Target, ToolError> {
        sock::resolve(&self.config, &self.hubs, &self.servers, socket_name)
    }

    /// Stops the tasks started for each server, deletes the paste buffers
    /// `load_buffer` created that are still there (best effort, bounded),
    /// then detaches from every tmux server (sessions are left untouched).
    pub async fn shutdown(&self) {
        let cleanup = async {
            for server in self.servers.all() {
                server.tasks.close(TASKS_END).await;
                for name in server.buffers.take() {
                    let _ = input::delete_buffer(&server.hub, &name).await;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), cleanup).await;
        self.hubs.shutdown().await;
    }
}
