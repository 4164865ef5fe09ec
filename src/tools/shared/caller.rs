//! Who the caller is: the pane and tmux server this MCP server runs in
//! (`TMUX`, `TMUX_PANE`), and `is_caller` in results.

use std::path::Path;

use crate::tmux::PaneId;
use crate::tools::shared::lookup::pane_row;
use crate::tools::shared::models::PaneInfo;
use crate::tools::{App, Target, ToolResult};

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
        info.is_caller = self.is_caller(target, info.pane_id);
    }

    /// `is_caller` for the pane `pane` of `target`'s server.
    pub fn is_caller(&self, target: &Target, pane: PaneId) -> Option<bool> {
        // Null without an identity; an identity that names no pane is never this one.
        self.config.caller.pane_id.as_ref()?;
        Some(self.caller_pane() == Some(pane) && self.runs_inside(target, false))
    }

    /// The pane this MCP server runs in (`TMUX_PANE`), if it names one.
    pub(super) fn caller_pane(&self) -> Option<PaneId> {
        self.config.caller.pane_id.as_deref()?.parse().ok()
    }

    /// Is this MCP server running inside `target`'s server? Never inside a
    /// remote one. `lenient` is the guard comparator.
    pub(super) fn runs_inside(&self, target: &Target, lenient: bool) -> bool {
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
