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
//!   those no longer running release theirs (`handles::at_exit`);
//! - [`write`]'s first call on a tmux server sweeps the scripts of panes
//!   that server no longer has: left by a server that died, or for a pane
//!   killed while no server ran.
//!
//! A script whose command still runs when this server exits stays: that
//! command has not ended, and a restarted server learns its end from the
//! pane option the script sets. On a remote server the scripts are
//! written and removed over ssh; the sweep lists this machine's sockets
//! only.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use super::typed;
use crate::drive::server::Server;
use crate::ids::PaneId;
use crate::tmux::hub::Hub;
use crate::tmux::{Command, TmuxError};

/// A file modified this little before a sweep began is left to the next
/// one: a file system's clock may lag by a tick, and such a file may be
/// for a pane created since the panes were listed.
const FILE_CLOCK_SLACK: Duration = Duration::from_millis(50);

/// The end scripts this process wrote on one tmux server.
#[derive(Default)]
pub struct EndScripts {
    /// An async lock: a script's write and a removal of the same pane's
    /// never cross (over ssh either takes a round trip).
    state: tokio::sync::Mutex<ScriptsState>,
}

#[derive(Default)]
struct ScriptsState {
    /// The handle each pane's script was last written for. An entry goes
    /// with its script, so there are at most as many as panes with
    /// scripts.
    owners: HashMap<PaneId, String>,
    /// The server's stale scripts were swept.
    swept: bool,
    /// The tmux program and socket the scripts name ([`tmux_named`]),
    /// once asked.
    tmux: Option<Option<(String, String)>>,
}

/// Leaves `pane`'s end script for command `id`, sweeping the stale ones
/// first when it is the first on this server.
pub async fn write(server: &Server, pane: PaneId, id: &str) -> Result<(), TmuxError> {
    let (hub, scripts) = (&server.hub, &server.end_scripts);
    let mut state = scripts.state.lock().await;
    if !std::mem::replace(&mut state.swept, true) {
        sweep(hub).await;
    }
    state.owners.insert(pane, id.to_owned());
    let suffix = typed::end_script_suffix(pane);
    if state.tmux.is_none() {
        state.tmux = Some(tmux_named(hub).await);
    }
    let tmux = state.tmux.as_ref().and_then(|t| t.as_ref());
    let tmux = tmux.map(|(program, socket)| (program.as_str(), socket.as_str()));
    hub.write_beside_socket(&suffix, &typed::end_script(pane, tmux))
        .await
}

/// The tmux program and socket of `hub`'s server by their absolute paths,
/// for scripts run by a pane's shell, which may have no `tmux` on its
/// `PATH`.
async fn tmux_named(hub: &Hub) -> Option<(String, String)> {
    let socket = String::from_utf8(hub.socket_path().await.ok()?).ok()?;
    Some((hub.tmux_program().await?, socket))
}

/// Removes `pane`'s end script now that command `id` ended, unless the
/// script was written since for another command, or `others_running`
/// (another handle of the pane, taken over from an earlier server, may
/// be what a script this process did not write is for).
pub async fn release(server: &Server, pane: PaneId, id: &str, others_running: bool) {
    let (hub, scripts) = (&server.hub, &server.end_scripts);
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
pub async fn owned(server: &Server) -> Vec<(PaneId, String)> {
    let state = server.end_scripts.state.lock().await;
    let owners = state.owners.iter();
    owners.map(|(pane, id)| (*pane, id.clone())).collect()
}

/// Removes the end scripts beside `hub`'s socket whose pane the server
/// does not have (its pane ids start again at `%0` when it is started
/// anew, so a script is judged against the live server's panes).
/// Best effort: a failure is logged, and the next process sweeps again.
async fn sweep(hub: &crate::tmux::hub::Hub) {
    if hub.local_socket().is_none() {
        return;
    }
    let listed_at = SystemTime::now();
    let list = Command::new("list-panes")
        .flag("-a")
        .opt("-F", "#{pane_id}");
    let live: HashSet<PaneId> = match hub.run(&list).await {
        Ok(lines) => lines.iter().filter_map(|l| PaneId::parse(l)).collect(),
        Err(e) => {
            eprintln!("tmux-mcp: listing panes to sweep stale end scripts: {e}");
            return;
        }
    };
    let stale = |number: &str| typed::end_script_pane(number).is_some_and(|p| !live.contains(&p));
    let before = listed_at
        .checked_sub(FILE_CLOCK_SLACK)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    if let Err(e) = hub
        .sweep_beside_socket(typed::END_SCRIPT_PREFIX, before, stale)
        .await
    {
        eprintln!("tmux-mcp: sweeping stale end scripts: {e}");
    }
}
