//! The pipe of one control client and the process behind it: what a
//! [`Transport`] opens (a local `tmux -C` child, one over ssh, a script in
//! tests) and [`super::connection`] speaks control mode over. Both sides
//! import this file; it imports neither.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

use super::{SessionId, TmuxError};

/// The byte stream of one control client, and what is behind it.
pub struct Pipe {
    /// What the control-mode client prints: replies and notifications.
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// Where commands are written, one per line. Closing it detaches.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// The process behind the pipe, if any: reaped when it exits, and
    /// killed if it outstays a detach.
    pub child: Option<Child>,
}

/// How a hub opens control clients.
pub trait Transport: Send + Sync + 'static {
    /// A pipe to a control-mode client attaching to `session` with
    /// `attach-session -f FLAGS` ([`super::connection::Role::attach_flags`]). It returns at
    /// once; [`super::connection::Connection::start`] waits for the attach.
    fn open(&self, session: SessionId, flags: &str) -> Result<Pipe, TmuxError>;
}

/// Waits for a control client's child so it never lingers as a zombie. Once
/// `closed` fires the writer has closed its stdin (the polite detach); the
/// child gets a moment to say `%exit`, then is killed.
pub(super) async fn reap(mut child: Child, closed: CancellationToken) {
    tokio::select! {
        _ = child.wait() => {}
        _ = closed.cancelled() => {
            if tokio::time::timeout(Duration::from_secs(2), child.wait()).await.is_err() {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }
    closed.cancel();
}
