//! Window tools.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{self, Filters};
use super::models::WindowInfo;
use super::rows;
use super::server::Sock;
use super::spawn::{self, SpawnArgs};
use super::target::{self, SessionSel, WindowSel};
use super::{App, CREATE, DESTROY, READ, ToolDef, ToolError, ToolResult};
use crate::mcp::CallContext;
use crate::tmux::Command;

pub fn register(tools: &mut Vec<ToolDef>) {
    tools.push(ToolDef::new(
        "list_windows",
        "List tmux Windows",
        "List the windows of a session, or of the whole server when no session is given. Metadata only.",
        READ,
        list_windows,
    ));
    tools.push(ToolDef::new(
        "get_window_info",
        "Get tmux Window Info",
        "Metadata of one window: window_id wins; else window_index in the session (given or first); else the session's first window.",
        READ,
        get_window_info,
    ));
    tools.push(ToolDef::new(
        "create_window",
        "Create tmux Window",
        "Create a window (one pane) in a session (default: the first). It stays in the background unless attach=true.",
        CREATE,
        create_window,
    ));
    tools.push(ToolDef::new(
        "kill_window",
        "Kill tmux Window",
        "Kill a window and its panes' processes. Refuses the window this MCP server runs in.",
        DESTROY,
        kill_window,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListWindowsArgs {
    #[serde(flatten)]
    session: SessionSel,
    #[serde(flatten)]
    sock: Sock,
    /// Filters: {"field[__op]": "value"}, same operators as list_sessions.
    #[serde(default)]
    filters: Option<Filters>,
}

async fn list_windows(
    app: Arc<App>,
    args: ListWindowsArgs,
    _: CallContext,
) -> ToolResult<Vec<WindowInfo>> {
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let mut windows = target::windows(&target).await?;
    if args.session.is_given() {
        let session = target::session(&target, &args.session).await?;
        windows.retain(|w| w.session_id.as_deref() == Some(session.session_id.as_str()));
    }
    filters::apply(windows, args.filters)
}

/// `window_id`, `window_index` and the session they are in.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowTarget {
    /// Window ID (e.g. '@1'). Wins over the other fields.
    #[serde(default)]
    pub window_id: Option<String>,
    /// Window index within the session.
    #[serde(default)]
    pub window_index: Option<String>,
    #[serde(flatten)]
    pub session: SessionSel,
}

impl WindowTarget {
    pub fn sel(&self) -> WindowSel<'_> {
        WindowSel {
            window_id: self.window_id.as_deref(),
            window_index: self.window_index.as_deref(),
            session: &self.session,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
    #[serde(flatten)]
    sock: Sock,
}

async fn get_window_info(
    app: Arc<App>,
    args: WindowArgs,
    _: CallContext,
) -> ToolResult<WindowInfo> {
    let target = app.socket(args.sock.socket_name.as_deref())?;
    target::window(&target, &args.window.sel()).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    Before,
    After,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateWindowArgs {
    #[serde(flatten)]
    session: SessionSel,
    /// Name of the new window.
    #[serde(default)]
    window_name: Option<String>,
    /// Make the new window the session's current window (changes what an attached user sees).
    #[serde(default)]
    attach: bool,
    /// Place the window before or after the session's current window; default: next free index.
    #[serde(default)]
    direction: Option<Placement>,
    #[serde(flatten)]
    sock: Sock,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn create_window(
    app: Arc<App>,
    args: CreateWindowArgs,
    _: CallContext,
) -> ToolResult<WindowInfo> {
    let spawn = args.spawn.check()?;
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let session = target::session(&target, &args.session).await?;
    let mut cmd = Command::new("new-window")
        .flag("-P")
        .opt("-F", rows::format(rows::WINDOW_FIELDS));
    if !args.attach {
        cmd = cmd.flag("-d");
    }
    cmd = match args.direction {
        Some(Placement::Before) => cmd.flag("-b"),
        Some(Placement::After) => cmd.flag("-a"),
        None => cmd,
    };
    cmd = cmd.target(format!("{}:", target::session_id(&session.session_id)?));
    cmd = cmd.opt_if("-n", args.window_name.as_deref().map(spawn::literal));
    cmd = spawn.apply(cmd);
    let lines = target.run(cmd).await?;
    rows::records(&lines, rows::WINDOW_FIELDS.len())
        .first()
        .map(|r| rows::window(r))
        .ok_or_else(|| {
            ToolError::new(
                "TmuxCommandError",
                "tmux created the window but did not describe it",
            )
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillWindowArgs {
    /// Window ID (e.g. '@1').
    window_id: String,
    #[serde(flatten)]
    sock: Sock,
}

async fn kill_window(app: Arc<App>, args: KillWindowArgs, _: CallContext) -> ToolResult<String> {
    let id = target::window_id(&args.window_id)?;
    let target = app.socket(args.sock.socket_name.as_deref())?;
    let session = SessionSel::default();
    let window = target::window(
        &target,
        &WindowSel {
            window_id: Some(&args.window_id),
            window_index: None,
            session: &session,
        },
    )
    .await?;
    if app.caller_socket_is(target.hub.socket(), true)
        && let Some(me) = &app.config.caller.pane_id
    {
        let panes = target::panes(&target).await?;
        if panes.iter().any(|p| {
            &p.info.pane_id == me && p.info.window_id.as_deref() == Some(window.window_id.as_str())
        }) {
            return Err(ToolError::new(
                "ExpectedToolError",
                "Refusing to kill the window containing this MCP server's pane. Use a manual tmux command if intended.",
            ));
        }
    }
    // One-shot: killing the last window of our control client's session
    // detaches that client, and its reply could be lost with it.
    target
        .hub
        .run_oneshot(&Command::new("kill-window").target(id))
        .await?;
    Ok(format!("Window killed: {id}"))
}
