//! The registry of tmux servers by [`Address`]: a local socket, or a
//! server on a configured remote host, each with its [`Hub`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::TmuxError;
use super::hosts::Hosts;
use super::hub::Hub;
use super::socket::Address;
use super::ssh::{Ssh, SshHost, SshTransport};
use crate::config::Limits;

/// Every tmux server this process has talked to, by address, and the
/// remote hosts it may reach.
pub struct Hubs {
    tmux_bin: PathBuf,
    limits: Limits,
    /// The configured hosts by alias, sharing one ssh setup.
    hosts: HashMap<String, Arc<SshHost>>,
    ssh: Arc<Ssh>,
    hubs: Mutex<HashMap<Address, Arc<Hub>>>,
}

impl Hubs {
    /// Hubs of local servers only.
    pub fn new(tmux_bin: PathBuf, limits: Limits) -> Self {
        Hubs::with_hosts(tmux_bin, limits, &Hosts::default())
    }

    /// Hubs of local servers and of servers on the `hosts` configured.
    pub fn with_hosts(tmux_bin: PathBuf, limits: Limits, hosts: &Hosts) -> Self {
        // ssh gives up connecting in half a command's time, so its own
        // words reach the caller before the command times out.
        let ssh = Ssh::new(hosts.ssh.clone(), limits.tmux_command_timeout / 2);
        let hosts = hosts
            .hosts
            .iter()
            .map(|h| (h.alias.clone(), SshHost::new(ssh.clone(), h.clone())))
            .collect();
        Hubs {
            tmux_bin,
            limits,
            hosts,
            ssh,
            hubs: Mutex::new(HashMap::new()),
        }
    }

    /// The hub of the local server at `socket`, created on first use.
    pub fn get(&self, socket: &Path) -> Arc<Hub> {
        let mut hubs = self.hubs.lock().expect("hubs lock");
        hubs.entry(Address::Local(socket.to_path_buf()))
            .or_insert_with(|| {
                Arc::new(Hub::new(
                    socket.to_path_buf(),
                    self.tmux_bin.clone(),
                    self.limits.clone(),
                ))
            })
            .clone()
    }

    /// The hub of the server at `address`, created on first use (nothing is
    /// started until a command runs). A remote address must name a
    /// configured host.
    pub fn at(&self, address: &Address) -> Result<Arc<Hub>, TmuxError> {
        let remote = match address {
            Address::Local(socket) => return Ok(self.get(socket)),
            Address::Remote(remote) => remote,
        };
        let host = self.host(&remote.alias)?;
        let mut hubs = self.hubs.lock().expect("hubs lock");
        let hub = hubs.entry(address.clone()).or_insert_with(|| {
            let ssh = Arc::new(SshTransport {
                host,
                socket: remote.name.clone(),
            });
            Arc::new(Hub::remote(remote.clone(), ssh, self.limits.clone()))
        });
        Ok(hub.clone())
    }

    /// The configured host `alias`.
    pub fn host(&self, alias: &str) -> Result<Arc<SshHost>, TmuxError> {
        self.hosts.get(alias).cloned().ok_or_else(|| {
            TmuxError::Ssh(format!("the remote host alias {alias:?} is not configured"))
        })
    }

    /// The configured hosts, in no particular order.
    pub fn hosts(&self) -> Vec<Arc<SshHost>> {
        self.hosts.values().cloned().collect()
    }

    /// Every hub, in no particular order.
    pub fn all(&self) -> Vec<Arc<Hub>> {
        self.hubs
            .lock()
            .expect("hubs lock")
            .values()
            .cloned()
            .collect()
    }

    /// Detaches from every server, and closes the ssh connections.
    pub async fn shutdown(&self) {
        for hub in self.all() {
            hub.shutdown().await;
        }
        for host in self.hosts() {
            host.close().await;
        }
        self.ssh.remove_dir();
    }
}
