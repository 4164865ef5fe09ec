//! Which tmux server a call targets: the `socket_name` argument every
//! targeted tool takes ([`Sock`]) and its resolution into a [`Target`]
//! ([`resolve`]).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Target, ToolError};
use crate::config::Config;
use crate::drive::server::Servers;
use crate::tmux::hubs::Hubs;
use crate::tmux::socket::SocketSpec;

/// `socket_name`, shared by every targeted tool. The call path adds it to
/// such a tool's schema, reads it and hands the handler the resolved
/// [`Target`](super::Target), so no argument struct or handler names it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Sock {
    /// tmux socket name (tmux -L); ALIAS:NAME is NAME on a TMUX_MCP_HOSTS host. Default: LIBTMUX_SOCKET, else tmux's default.
    pub socket_name: Option<String>,
}

/// The socket a call targets: a remote `ALIAS:NAME` if the call names one
/// (refused unless ALIAS is configured), else `LIBTMUX_SOCKET_PATH` if set
/// (as in the reference), else the call's `socket_name`, else the default.
pub fn resolve(
    config: &Config,
    hubs: &Hubs,
    servers: &Servers,
    socket_name: Option<&str>,
) -> Result<Target, ToolError> {
    let invalid = |e: anyhow::Error| ToolError::invalid(e.to_string());
    let remote = socket_name.filter(|name| name.contains(':'));
    let spec = match (remote, &config.forced_socket_path, socket_name) {
        (Some(name), _, _) => SocketSpec::parse(name, &config.hosts).map_err(invalid)?,
        (None, Some(path), _) => SocketSpec::Path(path.clone()),
        (None, None, Some(name)) => SocketSpec::parse(name, &config.hosts).map_err(invalid)?,
        (None, None, None) => config.default_socket.clone(),
    };
    let address = spec.resolve(&config.tmux_tmpdir, config.caller.socket_path.as_deref());
    Ok(Target::unfenced(servers.of(hubs.at(&address)?), spec))
}
