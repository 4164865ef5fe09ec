//! The end scripts run_command leaves beside the tmux socket,
//! `<socket>.tmux-mcp-end-<N>` ([`typed::end_script`]): one per pane whose
//! command outlived its call, run by the wrapper line after the command
//! to record its end in tmux, for a server started later. Each goes once
//! it is of no more use:
//!
//! - it removes itself when the wrapper runs it;
//! - [`release`] removes it when this server ends the command's handle
//!   any other way: the end marker read from the stream, the pane killed,
//!   respawned or dead, the command stopped (`handles::end_command`);
//! - at this server's exit, the handles are read once more from tmux and
//!   those no longer running release theirs (`handles::at_exit`).
//!
//! A script whose command still runs when this server exits stays: that
//! command has not ended, and a restarted server learns its end from the
//! pane option the script sets. On a remote server the scripts are
//! written and removed over ssh.

use std::collections::HashMap;

use super::typed;
use crate::ids::PaneId;
use crate::tmux::TmuxError;
use crate::tmux::hub::Hub;

/// The end scripts this process wrote on one tmux server.
#[derive(Default)]
pub struct EndScripts {
    /// An async lock: a script's write and a removal of the same pane's
    /// never cross (over ssh either takes a round trip).
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The handle each pane's script was last written for. An entry goes
    /// with its script, so there are at most as many as panes with
    /// scripts.
    owners: HashMap<PaneId, String>,
}

fn of(hub: &Hub) -> std::sync::Arc<EndScripts> {
    hub.kept::<EndScripts>()
}

/// Leaves `pane`'s end script for command `id`.
pub async fn write(hub: &Hub, pane: PaneId, id: &str) -> Result<(), TmuxError> {
    let scripts = of(hub);
    let mut state = scripts.state.lock().await;
    state.owners.insert(pane, id.to_owned());
    let suffix = typed::end_script_suffix(pane);
    hub.write_beside_socket(&suffix, &typed::end_script(pane))
        .await
}

/// Removes `pane`'s end script now that command `id` ended, unless the
/// script was written since for another command, or `others_running`
/// (another handle of the pane, taken over from an earlier server, may
/// be what a script this process did not write is for).
pub async fn release(hub: &Hub, pane: PaneId, id: &str, others_running: bool) {
    let scripts = of(hub);
    let mut state = scripts.state.lock().await;
    let owner = state.owners.get(&pane);
    if owner.is_some_and(|owner| owner != id) || (owner.is_none() && others_running) {
        return;
    }
    state.owners.remove(&pane);
    if let Err(e) = hub
        .remove_beside_socket(&typed::end_script_suffix(pane))
        .await
    {
        eprintln!("tmux-mcp: removing the end script of {pane} (command {id}): {e}");
    }
}

/// The panes whose script this process wrote and has not removed, with
/// the command each is for.
pub async fn owned(hub: &Hub) -> Vec<(PaneId, String)> {
    let scripts = of(hub);
    let state = scripts.state.lock().await;
    let owners = state.owners.iter();
    owners.map(|(pane, id)| (*pane, id.clone())).collect()
}
