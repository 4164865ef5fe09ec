//! The self-harm guard of every destructive tool: never kill or respawn
//! the pane, window, session or server this MCP server runs in.

use crate::tmux::{Command, PaneId, SessionId, WindowId};
use crate::tools::shared::lookup::panes;
use crate::tools::shared::models::PaneInfo;
use crate::tools::shared::scope::refuse_server_wide;
use crate::tools::{App, ErrorKind, Target, ToolError, ToolResult};

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
            Doomed::Session(id) => p.session_id == Some(id),
            Doomed::Window(id) => p.window_id == Some(id),
            Doomed::Pane(id) | Doomed::Respawned(id) => p.pane_id == id,
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
        if matches!(doomed, Doomed::Server) {
            refuse_server_wide(target, "Killing the tmux server")?;
        }
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
                    .any(|p| p.pane_id == me && doomed.takes(p)),
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
