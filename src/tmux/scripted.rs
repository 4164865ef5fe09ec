//! A control-mode peer played in-process, for tests: a [`Transport`] whose
//! pipes lead to a task that speaks tmux's side of control mode, with no
//! tmux and no process behind it.
//!
//! Each client answers its attach (the flags-0 block) at once, or, for a
//! session [`Scripted::hold`] names, only when the test releases it: a slow
//! attach without a clock. Every command then gets a reply whose one line
//! is the command line itself. Closing our writer ends the peer with
//! `%exit`, as tmux does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, oneshot};

use super::pipe::{Pipe, Transport};
use super::{SessionId, TmuxError};

/// Scripted control clients; see the module docs.
pub struct Scripted {
    held: Mutex<HashMap<SessionId, oneshot::Receiver<()>>>,
    opened: mpsc::UnboundedSender<SessionId>,
}

impl Scripted {
    /// The transport, and the sessions it is asked to open, in order.
    pub fn new() -> (Arc<Scripted>, mpsc::UnboundedReceiver<SessionId>) {
        let (opened, opens) = mpsc::unbounded_channel();
        let scripted = Scripted {
            held: Mutex::new(HashMap::new()),
            opened,
        };
        (Arc::new(scripted), opens)
    }

    /// Holds the next attach of `session` until the returned sender sends
    /// or is dropped.
    pub fn hold(&self, session: SessionId) -> oneshot::Sender<()> {
        let (release, held) = oneshot::channel();
        self.held.lock().expect("held lock").insert(session, held);
        release
    }
}

impl Transport for Scripted {
    fn open(&self, session: SessionId, _flags: &str) -> Result<Pipe, TmuxError> {
        let held = self.held.lock().expect("held lock").remove(&session);
        let (ours_out, theirs_in) = tokio::io::duplex(64 * 1024);
        let (theirs_out, ours_in) = tokio::io::duplex(64 * 1024);
        tokio::spawn(play(theirs_in, theirs_out, held));
        let _ = self.opened.send(session);
        Ok(Pipe {
            reader: Box::new(ours_in),
            writer: Box::new(ours_out),
            child: None,
        })
    }
}

/// tmux's side of one client: the attach block, then one reply per line.
async fn play(input: DuplexStream, mut output: DuplexStream, held: Option<oneshot::Receiver<()>>) {
    if let Some(held) = held {
        let _ = held.await;
    }
    if output
        .write_all(b"%begin 1 0 0\n%end 1 0 0\n")
        .await
        .is_err()
    {
        return;
    }
    let mut lines = BufReader::new(input).split(b'\n');
    let mut number = 1u64;
    while let Ok(Some(line)) = lines.next_segment().await {
        let mut reply = format!("%begin 1 {number} 1\n").into_bytes();
        reply.extend_from_slice(&line);
        reply.extend_from_slice(format!("\n%end 1 {number} 1\n").as_bytes());
        if output.write_all(&reply).await.is_err() {
            return;
        }
        number += 1;
    }
    let _ = output.write_all(b"%exit\n").await;
}
