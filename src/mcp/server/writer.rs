//! The writer: the one task that writes `output`, one compact JSON value
//! per line, flushed after each.

use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Queued;
use crate::mcp::jsonrpc::Message;

/// The writer task: the only code that writes `output`.
///
/// Two stages: one serializes each message as it is queued (counting its
/// bytes in `queued`), the other writes the lines out. After `stop` fires
/// the first takes the messages queued at that moment, then the output is
/// shut down once they are written. On a write error it fires `failed`
/// (the reader then stops).
pub(super) async fn write_messages<W>(
    mut output: W,
    queue: mpsc::UnboundedReceiver<Message>,
    stop: CancellationToken,
    failed: CancellationToken,
    queued: Arc<Queued>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
    let serializer = tokio::spawn(serialize_messages(queue, stop, lines_tx, queued.clone()));
    let result = async {
        while let Some(line) = lines.recv().await {
            let written = output.write_all(&line).await.and(output.flush().await);
            queued.written(line.len());
            written?;
        }
        output.shutdown().await
    }
    .await;
    serializer.abort();
    if let Err(e) = &result {
        eprintln!("mcp: cannot write the output: {e}");
        failed.cancel();
    }
    result
}

/// The first stage of the writer: messages to lines, counted as queued.
pub(super) async fn serialize_messages(
    mut queue: mpsc::UnboundedReceiver<Message>,
    stop: CancellationToken,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    queued: Arc<Queued>,
) {
    let forward = |message: &Message| {
        let Some(line) = message_line(message) else {
            return true;
        };
        queued.add(line.len());
        lines.send(line).is_ok()
    };
    loop {
        let message = tokio::select! {
            biased;
            _ = stop.cancelled() => {
                // Exactly what is queued now: a producer that keeps
                // sending (a stray logger clone) cannot hold us here.
                for _ in 0..queue.len() {
                    let Ok(message) = queue.try_recv() else { break };
                    if !forward(&message) {
                        break;
                    }
                }
                break;
            }
            message = queue.recv() => match message {
                Some(message) => message,
                None => break,
            },
        };
        if !forward(&message) {
            break;
        }
    }
}

/// One message as one output line.
pub(super) fn message_line(message: &Message) -> Option<Vec<u8>> {
    // `to_vec` is compact and escapes newlines inside strings, so this is
    // exactly one line.
    let mut line = match serde_json::to_vec(message) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("mcp: dropped a message that does not serialize: {e}");
            return None;
        }
    };
    line.push(b'\n');
    Some(line)
}
