//! Server and session tools.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{self, Filters};
use super::models::{ServerInfo, SessionInfo};
use super::rows;
use super::spawn::{self, SpawnArgs};
use super::target::{self, SessionSel};
use super::{App, CREATE, DESTROY, READ, ToolDef, ToolError, ToolResult};
use crate::mcp::CallContext;
use crate::tmux::{Command, TmuxError};

pub fn register(tools: &mut Vec<ToolDef>) {
    tools.push(ToolDef::new(
        "list_sessions",
        "List tmux Sessions",
        "List the sessions of a tmux server. Searches metadata only; use search_panes or capture_pane for terminal text.",
        READ,
        list_sessions,
    ));
    tools.push(ToolDef::new(
        "get_server_info",
        "Get tmux Server Info",
        "Report whether a tmux server is alive, its socket, session count and version. A socket with no server gives is_alive=false, not an error.",
        READ,
        get_server_info,
    ));
    tools.push(ToolDef::new(
        "get_session_info",
        "Get tmux Session Info",
        "Metadata of one session (session_id wins over session_name; default: the first session).",
        READ,
        get_session_info,
    ));
    tools.push(ToolDef::new(
        "create_session",
        "Create tmux Session",
        "Create a detached session with one window and one pane. Returns its SessionInfo; active_pane_id is the new pane.",
        CREATE,
        create_session,
    ));
    tools.push(ToolDef::new(
        "kill_session",
        "Kill tmux Session",
        "Kill a session and every process in it. Needs session_name or session_id. Refuses the session this MCP server runs in.",
        DESTROY,
        kill_session,
    ));
}

/// `socket_name`, shared by every targeted tool.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Sock {
    /// tmux socket name (tmux -L). Default: LIBTMUX_SOCKET, else tmux's default.
    #[serde(default)]
    pub socket_name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSessionsArgs {
    #[serde(flatten)]
    sock: Sock,
    /// Filters: {"field[__op]": "value"}, ops eq, exact, iexact, contains, icontains, startswith, istartswith, endswith, iendswith, in, nin (comma lists), regex, iregex. Object or JSON string.
    #[serde(default)]
    filters: Option<Filters>,
}

async fn list_sessions(
    app: Arc<App>,
    args: ListSessionsArgs,
    _: CallContext,
) -> ToolResult<Vec<SessionInfo>> {
    let target = app.socket(args.sock.socket_name.as_deref())?;
    filters::apply(target::sessions(&target).await?, args.filters)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ServerArgs {
    #[serde(flatten)]
    sock: Sock,
}

async fn get_server_info(
    app: Arc<App>,
    args: ServerArgs,
    _: CallContext,
) -> ToolResult<ServerInfo> {
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let list = Command::new("list-sessions").opt("-F", "#{version}");
    let (is_alive, lines) = match target.hub.run(&list).await {
        Ok(lines) => (true, lines),
        Err(TmuxError::NoServer(_)) => (false, Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let version = lines
        .first()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .filter(|v| !v.is_empty());
    Ok(ServerInfo {
        is_alive,
        socket_name: target.spec.socket_name().map(str::to_owned),
        socket_path: match &target.spec {
            crate::tmux::socket::SocketSpec::Path(p) => Some(p.display().to_string()),
            _ => None,
        },
        session_count: lines.len() as i64,
        version,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionArgs {
    #[serde(flatten)]
    session: SessionSel,
    #[serde(flatten)]
    sock: Sock,
}

async fn get_session_info(
    app: Arc<App>,
    args: SessionArgs,
    _: CallContext,
) -> ToolResult<SessionInfo> {
    let target = app.socket(args.sock.socket_name.as_deref())?;
    target::session(&target, &args.session).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionArgs {
    /// Name of the new session (no '.' or ':'). Default: tmux picks one.
    #[serde(default)]
    session_name: Option<String>,
    /// Name of its first window.
    #[serde(default)]
    window_name: Option<String>,
    /// Width in cells.
    #[serde(default)]
    x: Option<u32>,
    /// Height in cells.
    #[serde(default)]
    y: Option<u32>,
    #[serde(flatten)]
    sock: Sock,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn create_session(
    app: Arc<App>,
    args: CreateSessionArgs,
    _: CallContext,
) -> ToolResult<SessionInfo> {
    if let Some(name) = &args.session_name {
        spawn::session_name(name)?;
    }
    let spawn = args.spawn.check()?;
    let target = app.socket(args.sock.socket_name.as_deref())?;
    if let Some(name) = &args.session_name {
        let exists = target::sessions(&target)
            .await?
            .iter()
            .any(|s| s.session_name.as_deref() == Some(name));
        if exists {
            return Err(ToolError::new(
                "TmuxSessionExists",
                format!("Session named {name} exists"),
            ));
        }
    }
    let mut cmd = Command::new("new-session")
        .flag("-d")
        .flag("-P")
        .opt("-F", rows::format(rows::SESSION_FIELDS));
    cmd = cmd.opt_if("-s", args.session_name.as_deref().map(spawn::literal));
    cmd = cmd.opt_if("-n", args.window_name.as_deref().map(spawn::literal));
    cmd = cmd
        .opt_if("-x", args.x.map(|x| x.to_string()))
        .opt_if("-y", args.y.map(|y| y.to_string()));
    cmd = spawn.apply(cmd);
    // With no server (or no session) there is no control client: the hub
    // runs this in a one-shot process, which starts the server.
    let lines = target.run(cmd).await?;
    rows::records(&lines, rows::SESSION_FIELDS.len())
        .first()
        .map(|r| rows::session(r))
        .ok_or_else(|| {
            ToolError::new(
                "TmuxCommandError",
                "tmux created the session but did not describe it",
            )
        })
}

async fn kill_session(app: Arc<App>, args: SessionArgs, _: CallContext) -> ToolResult<String> {
    if !args.session.is_given() {
        return Err(ToolError::invalid(
            "Refusing to kill without an explicit target. Provide session_name or session_id.",
        ));
    }
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let session = target::session(&target, &args.session).await?;
    if app.caller_socket_is(target.hub.socket(), true)
        && let Some(me) = &app.config.caller.pane_id
    {
        let mine = target::panes(&target)
            .await?
            .into_iter()
            .find(|p| &p.info.pane_id == me);
        if mine.is_some_and(|p| p.info.session_id.as_deref() == Some(session.session_id.as_str())) {
            return Err(ToolError::new(
                "ExpectedToolError",
                "Refusing to kill the session containing this MCP server's pane. Use a manual tmux command if intended.",
            ));
        }
    }
    // A one-shot process: if our control client sits in this session it is
    // detached by the kill, and its reply could be lost with it.
    let id = target::session_id(&session.session_id)?;
    target
        .hub
        .run_oneshot(&Command::new("kill-session").target(id))
        .await?;
    let shown = args
        .session
        .session_name
        .or(args.session.session_id)
        .unwrap_or_default();
    Ok(format!("Session killed: {shown}"))
}
