//! The stdio server loop. (To be written: see the MCP layer task.)

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use super::Service;

/// Serves MCP on `input`/`output` until `input` ends.
pub async fn serve<R, W>(
    _input: R,
    _output: W,
    _service: Arc<dyn Service>,
    _max_line: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    anyhow::bail!("not yet written")
}
