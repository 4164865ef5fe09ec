//! The stdio server: reads newline-delimited JSON-RPC from `input`, answers
//! on `output`, and runs each `tools/call` in its own task.
//!
//! # Tasks
//!
//! - The reader (the body of [`serve`]) owns `input` and a persistent line
//!   buffer ([`LineReader`]). It decodes each line, keeps the lifecycle state,
//!   answers the methods that never wait (`initialize`, `ping`, the `*/list`
//!   methods, `prompts/get`, `logging/setLevel`, and every error) directly,
//!   and spawns one task per `tools/call`, `resources/read` and
//!   `completion/complete` (they may wait on the application). Handling the
//!   quick methods inline keeps the lifecycle ordered: a `tools/list`
//!   pipelined right behind `initialize` sees the server initialized.
//!   Nothing the reader does waits on a tool.
//! - The writer (`writer.rs`) is the only code that touches `output`:
//!   everyone else queues a [`Message`](super::jsonrpc::Message) in the
//!   [`Outbox`]. One compact JSON value per line, flushed after each.
//! - A call task runs the tool's future and queues its response through the
//!   request's [`RequestGate`](super::RequestGate), which is also what stops
//!   progress notifications once the response is queued or the call is
//!   cancelled.
//!
//! # Shutdown
//!
//! Only the end of `input` (or an unrecoverable error reading it or writing
//! `output`) ends the server; no message does. On EOF the reader stops
//! reading, then: (1) it cancels the shutdown token, whose children are the
//! cancellation tokens of all in-flight calls; (2) it closes every in-flight
//! request's gate, so nothing those calls produce from now on is sent;
//! (3) it gives the call tasks [`SHUTDOWN_GRACE`] to return, then aborts the
//! rest; (4) it tells the writer to stop, and the writer writes what was
//! already queued, flushes, shuts `output` down and returns (if the client
//! no longer reads, the writer is abandoned after [`FLUSH_GRACE`]). Then
//! `serve` returns `Ok(())` and the binary exits 0. A failed write to
//! `output` ends the server the same way, but `serve` returns the error.
//!
//! # Files
//!
//! - `lines.rs`: framing, input bytes to bounded lines.
//! - `dispatch.rs`: the reader's state, the lifecycle and the method table.
//! - `in_flight.rs`: requests being answered, their tasks and cancellation.
//! - `../ask.rs`: requests we send the client (elicitation) and their answers.
//! - `backpressure.rs`: the bound on output queued for a client that does not read.
//! - `writer.rs`: the one task that writes `output`.
//! - `params.rs`: the wire shapes of params and results.
//! - `modern.rs`: what the stateless 2026-07-28 revision changes.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{ErrorCode, Id, Response, RpcError};
use super::{Outbox, Service};
use backpressure::Queued;
use dispatch::Dispatcher;
use params::ServerCapabilities;
use writer::write_messages;

mod backpressure;
mod dispatch;
mod lines;
mod modern;
mod params;
mod writer;

pub use lines::{FrameLine, LineReader};
pub use modern::MODERN_VERSION;

/// `-32002`: the resource-not-found code of the legacy revisions.
pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// At most this many values in one `completion/complete` answer (the spec's cap).
pub const MAX_COMPLETIONS: usize = 100;

/// The `initialize` revisions served, newest first ("legacy" era); the
/// stateless [`MODERN_VERSION`] is served beside them (see `modern.rs` and
/// `protocol/mcp.md`).
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The answer to a client that offers a revision we do not serve.
pub const LATEST_VERSION: &str = SUPPORTED_VERSIONS[0];

/// How long call tasks get to return after stdin ends before they are
/// aborted. Tools watch `ctx.cancel`, so they normally need far less.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// How long the writer gets, after stdin ended, to write what is queued.
/// Only reached if the client stopped reading our output.
pub const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// The answer to `initialize`: the version to speak, given the offer.
/// Echo a supported offer, else our newest (the client decides whether to
/// disconnect); never an error.
pub fn negotiate(offered: &str) -> &'static str {
    SUPPORTED_VERSIONS
        .into_iter()
        .find(|v| *v == offered)
        .unwrap_or(LATEST_VERSION)
}

/// The default bound on output bytes queued for a client that does not
/// read ([`serve_with`]); `Limits::stdout_queue` in the binary.
pub const DEFAULT_MAX_QUEUED: usize = 4 << 20;

/// Serves MCP on `input`/`output` until `input` ends, with the default
/// output bound.
///
/// Lines longer than `max_line` bytes (newline excluded) are discarded and
/// answered with an error; the server keeps going.
pub async fn serve<R, W>(
    input: R,
    output: W,
    service: Arc<dyn Service>,
    max_line: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, service, max_line, DEFAULT_MAX_QUEUED).await
}

/// [`serve`], with backpressure: while `max_queued` bytes or more wait to be
/// written to `output` (the client is not reading), no more input is read,
/// so the client's own writes block instead of our memory growing. Calls
/// already running still answer; every request is answered once the client
/// reads again.
pub async fn serve_with<R, W>(
    input: R,
    output: W,
    service: Arc<dyn Service>,
    max_line: usize,
    max_queued: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let writer_stop = CancellationToken::new();
    let writer_failed = CancellationToken::new();
    let queued = Arc::new(Queued::new(max_queued));
    let writer = tokio::spawn(write_messages(
        output,
        rx,
        writer_stop.clone(),
        writer_failed.clone(),
        queued.clone(),
    ));

    let mut server = Dispatcher::new(service, Outbox(tx), queued.clone());
    let mut lines = LineReader::new(input, max_line);
    let read_result = loop {
        let line = tokio::select! {
            line = async {
                queued.room().await;
                lines.next_line().await
            } => line,
            _ = writer_failed.cancelled() => break Ok(()),
        };
        match line {
            Ok(Some(FrameLine::Complete(bytes))) => server.handle_line(&bytes),
            Ok(Some(FrameLine::TooLong)) => {
                eprintln!("mcp: discarded an input line longer than {max_line} bytes");
                let error = RpcError::invalid_request(format!("line longer than {max_line} bytes"));
                server.outbox.send(Response::error(None, error));
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e).context("reading the input"),
        }
        server.reap();
    };

    server.shut_down().await;
    drop(server);
    writer_stop.cancel();
    let abort = writer.abort_handle();
    let write_result = match tokio::time::timeout(FLUSH_GRACE, writer).await {
        Ok(Ok(result)) => result.context("writing the output"),
        Ok(Err(e)) => Err(anyhow::anyhow!("the output writer failed: {e}")),
        Err(_) => {
            // Nobody reads our output: give up on the queued messages
            // rather than hang after EOF.
            eprintln!("mcp: output not drained within {FLUSH_GRACE:?}; dropping queued messages");
            abort.abort();
            Ok(())
        }
    };
    read_result.and(write_result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_echoes_supported_versions() {
        for v in SUPPORTED_VERSIONS {
            assert_eq!(negotiate(v), v);
        }
        assert_eq!(negotiate("1999-01-01"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
    }
}
