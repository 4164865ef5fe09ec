//! Window tools.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::shared::args::cells;
use crate::tools::shared::filters::{self, Filters};
use crate::tools::shared::models::WindowInfo;

use crate::config::Config;
use crate::tmux::Command;
use crate::tmux::layout;
use crate::tmux::version::Features;
use crate::tools::error::not_found;
use crate::tools::shared::confirm;
use crate::tools::shared::guard::Doomed;
use crate::tools::shared::lookup::{self, SessionSel, WindowSel, WindowTarget};
use crate::tools::shared::marks::{self, Made};
use crate::tools::shared::rows;
use crate::tools::shared::spawn::{self, SpawnArgs};
use crate::tools::toolsets::Toolset;
use crate::tools::{
    CHANGE, CREATE, Call, DESTROY, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult,
};

pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    tools.push(ToolDef::new(
        "list_windows",
        Toolset::Inspect,
        "List tmux Windows",
        "List a session's windows, or every window when no session is given.",
        READ,
        list_windows,
    ));
    tools.push(ToolDef::new(
        "get_window_info",
        Toolset::Inspect,
        "Get tmux Window Info",
        "One window's metadata.",
        READ,
        get_window_info,
    ));
    tools.push(ToolDef::new(
        "create_window",
        Toolset::Execute,
        "Create tmux Window",
        "Create a window (one pane) in a session; it stays in the background unless attach=true.",
        CREATE,
        create_window,
    ));
    tools.push(
        ToolDef::new(
            "kill_window",
            Toolset::Teardown,
            "Kill tmux Window",
            "Kill a window and its panes' processes.",
            DESTROY,
            kill_window,
        )
        .with_meta_if(config.confirm_teardown, confirm::listing_meta),
    );
    tools.push(ToolDef::new(
        "rename_window",
        Toolset::Manage,
        "Rename tmux Window",
        "Rename a window (stored literally); turns off automatic renaming.",
        CHANGE,
        rename_window,
    ));
    tools.push(ToolDef::new(
        "select_window",
        Toolset::Manage,
        "Select tmux Window",
        "Make a window its session's current one, by target or direction.",
        CHANGE,
        select_window,
    ));
    tools.push(ToolDef::new(
        "select_layout",
        Toolset::Manage,
        "Select tmux Layout",
        "Arrange a window's panes: even-horizontal, even-vertical, main-horizontal, main-vertical, tiled (-mirrored: tmux 3.5+), or a window_layout string.",
        CHANGE,
        select_layout,
    ));
    tools.push(ToolDef::new(
        "resize_window",
        Toolset::Manage,
        "Resize tmux Window",
        "Set a window's width and/or height (1-10000 cells); it then stops following client sizes.",
        CHANGE,
        resize_window,
    ));
    tools.push(ToolDef::new(
        "move_window",
        Toolset::Manage,
        "Move tmux Window",
        "Move a window to another index and/or session; moving a session's last window away ends that session.",
        CHANGE,
        move_window,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListWindowsArgs {
    #[serde(flatten)]
    session: SessionSel,
    /// Filters, as in list_sessions.
    filters: Option<Filters>,
    // As in list_sessions (no description: the catalog is budgeted).
    created_by: Option<String>,
}

async fn list_windows(
    Call { app, target, ctx }: Call,
    args: ListWindowsArgs,
) -> ToolResult<Vec<WindowInfo>> {
    let mut windows = lookup::windows(&target).await?;
    if args.session.is_given() {
        let session = lookup::session(&target, &args.session).await?;
        windows.retain(|w| w.session_id == Some(session.session_id));
    }
    let me = app.maker(&target, &ctx);
    marks::keep_made_by(&mut windows, args.created_by.as_deref(), &me);
    filters::apply(windows, args.filters)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
}

async fn get_window_info(target: Target, args: WindowArgs) -> ToolResult<WindowInfo> {
    args.window.resolve(&target).await
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
    // (no schema text) Name of the new window.
    window_name: Option<String>,
    /// Make it the session's current window.
    #[serde(default)]
    attach: bool,
    /// Before or after the current window (default: next free index).
    direction: Option<Placement>,
    // As in create_session.
    shell: Option<String>,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn create_window(
    Call { app, target, ctx }: Call,
    args: CreateWindowArgs,
) -> ToolResult<WindowInfo> {
    let spawn = args.spawn.check(&target)?;
    let session = lookup::session(&target, &args.session).await?;
    let mut cmd = Command::new("new-window")
        .flag("-P")
        .opt("-F", rows::WINDOW.template());
    if !args.attach {
        cmd = cmd.flag("-d");
    }
    cmd = match args.direction {
        Some(Placement::Before) => cmd.flag("-b"),
        Some(Placement::After) => cmd.flag("-a"),
        None => cmd,
    };
    cmd = cmd.target(format!("{}:", session.session_id));
    cmd = cmd.opt_if("-n", args.window_name.as_deref().map(spawn::literal));
    cmd = spawn.apply(cmd);
    if let Some(shell) = &args.shell {
        cmd = cmd.flag("--").arg(shell);
    }
    let lines = target.run(cmd).await?;
    let mut info = rows::created(&rows::WINDOW, &lines, "window")?;
    if spawn::fit_new_window(&target, &info.window_id.to_string()).await? {
        info = lookup::window_by_id(&target, info.window_id).await?;
    }
    if let Some(pane) = info.active_pane_id {
        let maker = app.maker(&target, &ctx);
        let made = Made::Window(info.window_id, pane);
        info.created_by = marks::mark(&target, made, &maker).await.then_some(maker);
        info.attach = Some(app.attach_command(&target, pane));
    }
    Ok(info)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillWindowArgs {
    // (no schema text) Window ID (e.g. '@1').
    window_id: String,
}

async fn kill_window(Call { app, target, ctx }: Call, args: KillWindowArgs) -> ToolResult<String> {
    let id = lookup::window_id(&args.window_id)?;
    let window = lookup::window_by_id(&target, id).await?;
    app.refuse_self_harm(&target, Doomed::Window(id)).await?;
    if app.config.confirm_teardown {
        let what = format!(
            "window {:?} ({id}, {} pane(s)) of session {:?} on {}",
            window.window_name.unwrap_or_default(),
            window.pane_count,
            window.session_name.unwrap_or_default(),
            confirm::server_of(&target)
        );
        app.confirm_teardown(&ctx, &what).await?;
    }
    // The hub runs the kill in a process of its own and forgets a client of
    // ours whose session went with the window.
    target.run(Command::new("kill-window").target(id)).await?;
    Ok(format!("Window killed: {id}"))
}

/// `$S:@W`: the window in the session it was found in (a window linked
/// into several sessions is otherwise ambiguous).
fn window_in_session(window: &WindowInfo) -> String {
    match window.session_id {
        Some(s) => format!("{s}:{}", window.window_id),
        None => window.window_id.to_string(),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameWindowArgs {
    // (no schema text) New window name.
    new_name: String,
    #[serde(flatten)]
    window: WindowTarget,
}

async fn rename_window(target: Target, args: RenameWindowArgs) -> ToolResult<WindowInfo> {
    let id = args.window.id(&target).await?;
    target
        .run(
            Command::new("rename-window")
                .target(id)
                .flag("--")
                .arg(spawn::literal(&args.new_name)),
        )
        .await?;
    lookup::window_by_id(&target, id).await
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowDirection {
    Next,
    Previous,
    Last,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectWindowArgs {
    /// Window ID (e.g. '@1'). Wins over window_index and direction.
    window_id: Option<String>,
    /// Window index within the session.
    window_index: Option<String>,
    /// last: the previously current window.
    direction: Option<WindowDirection>,
    #[serde(flatten)]
    session: SessionSel,
}

async fn select_window(target: Target, args: SelectWindowArgs) -> ToolResult<WindowInfo> {
    if args.window_id.is_none() && args.window_index.is_none() && args.direction.is_none() {
        return Err(ToolError::invalid(
            "Provide window_id, window_index, or direction.",
        ));
    }
    let Some(direction) = args
        .direction
        .filter(|_| args.window_id.is_none() && args.window_index.is_none())
    else {
        let window = lookup::window(
            &target,
            &WindowSel {
                window_id: args
                    .window_id
                    .as_deref()
                    .map(lookup::window_id)
                    .transpose()?,
                window_index: args.window_index.as_deref(),
                session: &args.session,
            },
        )
        .await?;
        target
            .run(Command::new("select-window").target(window_in_session(&window)))
            .await?;
        return lookup::window_by_id(&target, window.window_id).await;
    };
    let sid = lookup::session_id_of(&target, &args.session).await?;
    let name = match direction {
        WindowDirection::Next => "next-window",
        WindowDirection::Previous => "previous-window",
        WindowDirection::Last => "last-window",
    };
    target.run(Command::new(name).target(sid)).await?;
    lookup::windows(&target)
        .await?
        .into_iter()
        .find(|w| w.session_id == Some(sid) && w.window_active.as_deref() == Some("1"))
        .ok_or_else(|| {
            ToolError::new(
                ErrorKind::NoWindowsExist,
                "The session has no current window.",
            )
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectLayoutArgs {
    // (no schema text) A name or a layout string.
    layout: String,
    #[serde(flatten)]
    window: WindowTarget,
}

async fn select_layout(target: Target, args: SelectLayoutArgs) -> ToolResult<WindowInfo> {
    // tmux 3.3a crashes on a name it does not know and on a malformed
    // layout string, so nothing but a known name or a checked string goes.
    let kind = layout::classify(&args.layout).map_err(ToolError::invalid)?;
    let window = args.window.resolve(&target).await?;
    match kind {
        layout::Layout::Named { since: Some(since) } => {
            let version = target.hub.version().await;
            if !Features::of(version).mirrored_layouts {
                return Err(ToolError::invalid(format!(
                    "Layout '{}' needs tmux {since} or newer; this server runs tmux {version}. Use main-horizontal or main-vertical.",
                    args.layout
                )));
            }
        }
        layout::Layout::Named { since: None } => {}
        layout::Layout::Custom { floating: 1.., .. } => {
            // tmux's layout_parse stops at the '<' and refuses the string.
            return Err(ToolError::invalid(
                "The layout string holds floating panes (its <...> part), which tmux cannot restore; use the part before '<' with its checksum, in a window without floating panes, or a layout name.",
            ));
        }
        layout::Layout::Custom { panes, .. } => {
            if panes as i64 != window.pane_count {
                return Err(ToolError::invalid(format!(
                    "The layout string describes {panes} panes but window {} has {}; copy window_layout from a window with the same number of panes.",
                    window.window_id, window.pane_count
                )));
            }
        }
    }
    let id = window.window_id;
    target
        .run(Command::new("select-layout").target(id).arg(&args.layout))
        .await?;
    lookup::window_by_id(&target, id).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResizeWindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
    // (no schema text) New height in cells.
    height: Option<i64>,
    // (no schema text) New width in cells.
    width: Option<i64>,
}

async fn resize_window(target: Target, args: ResizeWindowArgs) -> ToolResult<WindowInfo> {
    let width = cells("width", args.width)?;
    let height = cells("height", args.height)?;
    if width.is_none() && height.is_none() {
        return Err(ToolError::invalid("Provide height, width, or both."));
    }
    let id = args.window.id(&target).await?;
    target
        .run(
            Command::new("resize-window")
                .target(id)
                .opt_if("-x", width)
                .opt_if("-y", height),
        )
        .await?;
    lookup::window_by_id(&target, id).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveWindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
    /// Digits; empty: the next free index.
    #[serde(default)]
    destination_index: String,
    /// Name or $id; default: the window's own.
    destination_session: Option<String>,
}

async fn move_window(target: Target, args: MoveWindowArgs) -> ToolResult<WindowInfo> {
    let index = &args.destination_index;
    if !index.is_empty()
        && (!index.bytes().all(|b| b.is_ascii_digit()) || index.parse::<i32>().is_err())
    {
        return Err(ToolError::invalid(format!(
            "destination_index must be empty (next free index) or a window index of digits, got '{index}'"
        )));
    }
    let window = args.window.resolve(&target).await?;
    let dest = match &args.destination_session {
        // A window is always listed with its session.
        None => window
            .session_id
            .ok_or_else(|| not_found("session_id", ""))?,
        Some(want) => {
            let sel = if want.starts_with('$') {
                SessionSel {
                    session_name: None,
                    session_id: Some(want.clone()),
                }
            } else {
                SessionSel {
                    session_name: Some(want.clone()),
                    session_id: None,
                }
            };
            lookup::session(&target, &sel).await?.session_id
        }
    };
    let cmd = Command::new("move-window")
        .opt("-s", window_in_session(&window))
        .target(format!("{dest}:{index}"));
    // Moving a session's last window away ends that session: the hub runs
    // the move in a process of its own and forgets a client of ours that
    // was attached there before the window is read back.
    target.run(cmd).await?;
    lookup::window_by_id(&target, window.window_id).await
}
