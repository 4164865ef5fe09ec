//! [`Server`]: what this process keeps of one tmux server between calls,
//! beside its transport. Every kind of state has a field that says why it
//! is there, and every task it starts is owned by [`Server::tasks`], which
//! shutdown closes.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::drive::attention::Armed;
use crate::drive::linger::Lingering;
use crate::drive::shell::end_scripts::EndScripts;
use crate::drive::shell::handles::Commands;
use crate::tmux::hub::Hub;
use crate::tmux::socket::Address;

/// One tmux server, as the tools drive it.
pub struct Server {
    /// Its control clients: the transport every command goes through.
    pub hub: Arc<Hub>,
    /// Commands that outlive their call (`run_command(background)`, a
    /// timed-out one): their records, read by `wait_for_command`,
    /// `list_commands` and `stop_command`.
    pub commands: Commands,
    /// The scripts beside the tmux socket that tell a handle's end.
    pub end_scripts: EndScripts,
    /// `wait_for_attention`'s panes, armed between calls so what they do
    /// meanwhile is in the feed for the next call.
    pub armed: Armed,
    /// Panes kept recorded for a while after a call, so the next call's
    /// cursor still finds their output in the ring.
    pub lingering: Lingering,
    /// Zooms, resizes and teardowns take turns on releases where a zoomed
    /// window crashes tmux (`tools::shared::zoom`).
    pub resizes: Resizes,
    /// Paste buffers our tools created and have not deleted: deleted at
    /// shutdown, and the only buffers an owned scope may touch.
    pub buffers: Buffers,
    /// Every task started for this server (followers of command handles,
    /// the lingering panes' reaper, the attention keeper), closed at
    /// shutdown.
    pub tasks: Tasks,
}

impl Server {
    pub fn new(hub: Arc<Hub>) -> Server {
        Server {
            hub,
            commands: Commands::default(),
            end_scripts: EndScripts::default(),
            armed: Armed::default(),
            lingering: Lingering::default(),
            resizes: Resizes::default(),
            buffers: Buffers::default(),
            tasks: Tasks::default(),
        }
    }
}

/// The servers this process drives, by address (one [`Server`] per hub,
/// for the life of the process, as the hubs are).
#[derive(Default)]
pub struct Servers(Mutex<HashMap<Address, Arc<Server>>>);

impl Servers {
    /// The server `hub` talks to, made on first use.
    pub fn of(&self, hub: Arc<Hub>) -> Arc<Server> {
        let mut servers = self.0.lock().unwrap_or_else(|e| e.into_inner());
        servers
            .entry(hub.address().clone())
            .or_insert_with(|| Arc::new(Server::new(hub)))
            .clone()
    }

    pub fn all(&self) -> Vec<Arc<Server>> {
        let servers = self.0.lock().unwrap_or_else(|e| e.into_inner());
        servers.values().cloned().collect()
    }
}

/// One tmux server's turn for zooms, resizes and teardowns.
#[derive(Default)]
pub struct Resizes(Arc<tokio::sync::Mutex<()>>);

impl Resizes {
    /// Waits for the turn; it is held until the guard drops.
    pub async fn turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        self.0.clone().lock_owned().await
    }
}

/// The paste buffers our tools created on one server.
#[derive(Default)]
pub struct Buffers(Mutex<BTreeSet<String>>);

impl Buffers {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers a paste buffer we created, to delete it at shutdown.
    pub fn track(&self, name: &str) {
        self.lock().insert(name.to_owned());
    }

    pub fn untrack(&self, name: &str) {
        self.lock().remove(name);
    }

    /// Is `name` a paste buffer we created and have not deleted?
    pub fn tracks(&self, name: &str) -> bool {
        self.lock().contains(name)
    }

    /// The buffers still remembered, forgetting them.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lock()).into_iter().collect()
    }
}

/// The tasks started for one server: each runs until it is done or the
/// server is shut down, whichever comes first.
#[derive(Default)]
pub struct Tasks {
    tracker: TaskTracker,
    stop: CancellationToken,
}

impl Tasks {
    /// Runs `task` until it ends or [`Tasks::close`] is called.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = task => {}
                () = stop.cancelled() => {}
            }
        });
    }

    /// Stops every task and waits for them to end, at most `within`.
    pub async fn close(&self, within: Duration) {
        self.tracker.close();
        self.stop.cancel();
        let _ = tokio::time::timeout(within, self.tracker.wait()).await;
    }

    /// How many tasks run.
    pub fn running(&self) -> usize {
        self.tracker.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn closing_stops_every_task_it_owns() {
        let tasks = Tasks::default();
        let (ended, mut told) = tokio::sync::mpsc::channel::<()>(2);
        for _ in 0..2 {
            let ended = ended.clone();
            tasks.spawn(async move {
                // Tells its end by dropping the sender; never ends itself.
                let _ended = ended;
                std::future::pending::<()>().await;
            });
        }
        drop(ended);
        assert_eq!(tasks.running(), 2);
        tasks.close(Duration::from_secs(5)).await;
        assert_eq!(tasks.running(), 0);
        assert!(
            told.recv().await.is_none(),
            "both tasks dropped their state"
        );
    }

    #[test]
    fn buffers_are_remembered_until_taken() {
        let buffers = Buffers::default();
        buffers.track("b");
        buffers.track("a");
        buffers.untrack("b");
        assert!(buffers.tracks("a") && !buffers.tracks("b"));
        assert_eq!(buffers.take(), ["a"]);
        assert!(!buffers.tracks("a"));
    }
}
