//! How a server's one-shot `tmux` processes are run: as children here
//! ([`super::child`]), or on the server's host over ssh ([`super::ssh`]).

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::TmuxError;
use super::child::{Finished, LocalTmux};
use super::ssh::SshTransport;

/// Where a hub's one-shot `tmux` processes run.
pub enum OneShot {
    Local(LocalTmux),
    Ssh(Arc<SshTransport>),
}

impl OneShot {
    /// Runs `tmux ARGV...` against the server to completion:
    /// `tmux -u -S <socket> ARGV...` here, or over ssh.
    pub async fn run(
        &self,
        argv: Vec<OsString>,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Finished, TmuxError> {
        match self {
            OneShot::Local(local) => local.run(argv, timeout, cancel).await,
            OneShot::Ssh(ssh) => ssh.run(&argv, timeout, cancel).await,
        }
    }
}
