//! Server and session tools.

use std::collections::HashSet;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Config;
use crate::tmux::socket::{SocketSpec, socket_dir};
use crate::tmux::{Command, TmuxError};
use crate::tools::shared::confirm;
use crate::tools::shared::filters::{self, Filters};
use crate::tools::shared::guard::Doomed;
use crate::tools::shared::lookup::{self, SessionArgs, SessionSel};
use crate::tools::shared::marks::{self, Made};
use crate::tools::shared::models::{ServerInfo, SessionInfo};
use crate::tools::shared::rows;
use crate::tools::shared::spawn::{self, SpawnArgs};
use crate::tools::shared::zoom;
use crate::tools::toolsets::Toolset;
use crate::tools::{
    App, CHANGE, CREATE, Call, DESTROY, ErrorKind, NoArgs, READ, Target, ToolDef, ToolError,
    ToolResult, Untargeted,
};

pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    tools.push(
        ToolDef::new(
            "list_sessions",
            Toolset::Inspect,
            "List tmux Sessions",
            "List a tmux server's sessions.",
            READ,
            list_sessions,
        )
        .with_lean_text(SessionInfo::LEFT_OUT_OF_TEXT),
    );
    tools.push(ToolDef::new(
        "get_server_info",
        Toolset::Inspect,
        "Get tmux Server Info",
        "Whether a tmux server is alive, its socket, session count and version (no server: is_alive=false).",
        READ,
        get_server_info,
    ));
    tools.push(ToolDef::new(
        "list_servers",
        Toolset::Inspect,
        "List tmux Servers",
        "Find live tmux servers (local sockets, extra_socket_paths, each TMUX_MCP_HOSTS host's as ALIAS:NAME), each like get_server_info.",
        READ,
        list_servers,
    ));
    tools.push(
        ToolDef::new(
            "kill_server",
            Toolset::Teardown,
            "Kill tmux Server",
            "Kill a tmux server and every session and process in it.",
            DESTROY,
            kill_server,
        )
        .with_meta_if(config.confirm_teardown, confirm::listing_meta),
    );
    tools.push(ToolDef::new(
        "get_session_info",
        Toolset::Inspect,
        "Get tmux Session Info",
        "One session's metadata.",
        READ,
        get_session_info,
    ));
    tools.push(ToolDef::new(
        "create_session",
        Toolset::Execute,
        "Create tmux Session",
        "Create a detached session (one window, one pane); active_pane_id is its pane.",
        CREATE,
        create_session,
    ));
    tools.push(
        ToolDef::new(
            "kill_session",
            Toolset::Teardown,
            "Kill tmux Session",
            "Kill a session and its processes; needs session_name or session_id.",
            DESTROY,
            kill_session,
        )
        .with_meta_if(config.confirm_teardown, confirm::listing_meta),
    );
    tools.push(ToolDef::new(
        "rename_session",
        Toolset::Manage,
        "Rename tmux Session",
        "Rename a session (the name is stored literally).",
        CHANGE,
        rename_session,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSessionsArgs {
    /// {"field[__op]": "value"}; ops exact, contains, startswith, endswith, regex (i-prefixed: any case), in, nin.
    filters: Option<Filters>,
    /// Maker to keep ('me': this client).
    created_by: Option<String>,
}

async fn list_sessions(
    Call { app, target, ctx }: Call,
    args: ListSessionsArgs,
) -> ToolResult<Vec<SessionInfo>> {
    let mut sessions = lookup::sessions(&target).await?;
    marks::keep_made_by(
        &mut sessions,
        args.created_by.as_deref(),
        &app.maker(&target, &ctx),
    );
    filters::apply(sessions, args.filters)
}

async fn get_server_info(target: Target, _: NoArgs) -> ToolResult<ServerInfo> {
    server_info(&target, false).await
}

/// One server's [`ServerInfo`]. `oneshot` asks in a `tmux` process of its
/// own instead of on a control client: discovery must not attach clients
/// (and fire their hooks) on every server it finds.
async fn server_info(target: &Target, oneshot: bool) -> ToolResult<ServerInfo> {
    let list = Command::new("list-sessions").opt("-F", "#{version}");
    let reply = if oneshot {
        target.hub.run_oneshot(&list).await
    } else {
        target.hub.run(&list).await
    };
    let (is_alive, lines) = match reply {
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
        socket_name: target.spec.socket_name(),
        socket_path: match &target.spec {
            SocketSpec::Path(p) => Some(p.display().to_string()),
            _ => None,
        },
        // Sessions out of scope are not counted either.
        session_count: lines
            .len()
            .saturating_sub(target.fence.as_ref().map_or(0, |f| f.sessions.len()))
            as i64,
        version,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListServersArgs {
    /// More socket paths to check (tmux -S).
    extra_socket_paths: Option<Vec<String>>,
}

/// How long a socket may take to accept a connection before it counts as dead.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(100);

/// Does a tmux server listen on `path`? (A stale socket file refuses.)
async fn accepts(path: &Path) -> bool {
    let is_socket = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket());
    is_socket
        && matches!(
            tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::UnixStream::connect(path)).await,
            Ok(Ok(_))
        )
}

async fn list_servers(
    Untargeted { app, .. }: Untargeted,
    args: ListServersArgs,
) -> ToolResult<Vec<ServerInfo>> {
    // Under a narrower scope the agent sees no other server than its own.
    if app.config.scope != crate::config::Scope::Server {
        let target = app.fenced_socket(None).await?;
        return Ok(server_info(&target, true).await.into_iter().collect());
    }
    let dir = socket_dir(&app.config.tmux_tmpdir);
    let mut found: Vec<(SocketSpec, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            if let Ok(spec) = SocketSpec::name(&name) {
                found.push((spec, dir.join(&name)));
            }
        }
    }
    // Each extra path the caller named is its own row (`socket_path: P`),
    // even for a server the scan found by name: the caller asked about P.
    // A path named twice is listed once.
    let mut seen = HashSet::new();
    for path in args.extra_socket_paths.unwrap_or_default() {
        if seen.insert(path.clone()) {
            found.push((SocketSpec::Path(PathBuf::from(&path)), PathBuf::from(path)));
        }
    }
    let mut servers = Vec::new();
    for (spec, path) in found {
        if !accepts(&path).await {
            continue;
        }
        let target = Target::unfenced(app.servers.of(app.hubs.get(&path)), spec);
        // One socket that fails (another program's socket, a hung server)
        // must not hide the others.
        match server_info(&target, true).await {
            Ok(info) => servers.push(info),
            Err(e) => eprintln!(
                "tmux-mcp: list_servers: skipping {}: {}",
                path.display(),
                e.message
            ),
        }
    }
    servers.extend(remote_servers(&app).await);
    Ok(servers)
}

/// The live servers of every configured remote host, as `ALIAS:NAME`. A
/// host that cannot be reached is skipped (and logged), like a hung socket.
async fn remote_servers(app: &App) -> Vec<ServerInfo> {
    let mut servers = Vec::new();
    let limit = app.config.limits.tmux_command_timeout;
    for host in &app.config.hosts.hosts {
        let alias = &host.alias;
        let names = match app.hubs.host(alias) {
            Ok(ssh) => ssh.socket_names(limit).await,
            Err(e) => Err(e),
        };
        let names = names.unwrap_or_else(|e| {
            eprintln!("tmux-mcp: list_servers: skipping host {alias}: {e}");
            Vec::new()
        });
        for name in names {
            let Ok(spec) = SocketSpec::parse(&format!("{alias}:{name}"), &app.config.hosts) else {
                continue;
            };
            let address = spec.resolve(&app.config.tmux_tmpdir, None);
            let Ok(hub) = app.hubs.at(&address) else {
                continue;
            };
            match server_info(&Target::unfenced(app.servers.of(hub), spec), true).await {
                Ok(info) if info.is_alive => servers.push(info),
                Ok(_) => {}
                Err(e) => eprintln!(
                    "tmux-mcp: list_servers: skipping {alias}:{name}: {}",
                    e.message
                ),
            }
        }
    }
    servers
}

async fn kill_server(Call { app, target, ctx }: Call, _: NoArgs) -> ToolResult<String> {
    app.refuse_self_harm(&target, Doomed::Server).await?;
    if app.config.confirm_teardown {
        let sessions = lookup::sessions(&target).await?.len();
        let what = format!(
            "{} and its {sessions} session(s)",
            confirm::server_of(&target)
        );
        app.confirm_teardown(&ctx, &what).await?;
    }
    let _turn = zoom::unzoom_doomed(&target, Doomed::Server).await?;
    // A one-shot process: our control clients die with the server.
    target.hub.run_oneshot(&Command::new("kill-server")).await?;
    // Drop the dead clients now, so the next call attaches afresh (or runs
    // one-shot) instead of finding a client whose EOF is not read yet.
    target.hub.shutdown().await;
    Ok("Server killed successfully".to_owned())
}

async fn get_session_info(target: Target, args: SessionArgs) -> ToolResult<SessionInfo> {
    lookup::session(&target, &args.session).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateSessionArgs {
    /// Name of the new session (no '.' or ':'). Default: tmux picks one.
    session_name: Option<String>,
    // (no schema text) Name of its first window.
    window_name: Option<String>,
    /// Width in cells.
    x: Option<u32>,
    /// Height in cells.
    y: Option<u32>,
    // Run instead of the default shell (not typed), as split_window's.
    shell: Option<String>,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn create_session(
    Call { app, target, ctx }: Call,
    args: CreateSessionArgs,
) -> ToolResult<SessionInfo> {
    if let Some(name) = &args.session_name {
        spawn::session_name(name)?;
    }
    let spawn = args.spawn.check(&target)?;
    if let Some(name) = &args.session_name {
        let exists = lookup::sessions(&target)
            .await?
            .iter()
            .any(|s| s.session_name.as_deref() == Some(name));
        if exists {
            return Err(ToolError::new(
                ErrorKind::TmuxSessionExists,
                format!("Session named {name} exists"),
            ));
        }
    }
    let mut cmd = Command::new("new-session")
        .flag("-d")
        .flag("-P")
        .opt("-F", rows::SESSION.template());
    cmd = cmd.opt_if("-s", args.session_name.as_deref().map(spawn::literal));
    cmd = cmd.opt_if("-n", args.window_name.as_deref().map(spawn::literal));
    cmd = cmd
        .opt_if("-x", args.x.map(|x| x.to_string()))
        .opt_if("-y", args.y.map(|y| y.to_string()));
    cmd = spawn.apply(cmd);
    if let Some(shell) = &args.shell {
        cmd = cmd.flag("--").arg(shell);
    }
    // With no server (or no session) there is no control client: the hub
    // runs this in a one-shot process, which starts the server.
    let lines = target.run(cmd).await?;
    let mut info = rows::created(&rows::SESSION, &lines, "session")?;
    spawn::fit_new_window(&target, &format!("{}:", info.session_id)).await?;
    if let Some(pane) = info.active_pane_id {
        let maker = app.maker(&target, &ctx);
        let made = Made::Session(info.session_id, pane);
        info.created_by = marks::mark(&target, made, &maker).await.then_some(maker);
        info.attach = Some(app.attach_command(&target, pane));
    }
    Ok(info)
}

async fn kill_session(Call { app, target, ctx }: Call, args: SessionArgs) -> ToolResult<String> {
    if !args.session.is_given() {
        return Err(ToolError::invalid(
            "Refusing to kill without an explicit target. Provide session_name or session_id.",
        ));
    }
    let id = lookup::session_id_of(&target, &args.session).await?;
    app.refuse_self_harm(&target, Doomed::Session(id)).await?;
    if app.config.confirm_teardown {
        let session = lookup::session_by_id(&target, id).await?;
        let what = format!(
            "session {:?} ({id}, {} window(s)) of {}",
            session.session_name.unwrap_or_default(),
            session.window_count,
            confirm::server_of(&target)
        );
        app.confirm_teardown(&ctx, &what).await?;
    }
    let _turn = zoom::unzoom_doomed(&target, Doomed::Session(id)).await?;
    // A one-shot process: if our control client sits in this session it is
    // detached by the kill, and its reply could be lost with it.
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

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameSessionArgs {
    /// No '.' or ':'.
    new_name: String,
    #[serde(flatten)]
    session: SessionSel,
}

async fn rename_session(target: Target, args: RenameSessionArgs) -> ToolResult<SessionInfo> {
    spawn::session_name(&args.new_name)?;
    let id = lookup::session_id_of(&target, &args.session).await?;
    target
        .run(
            Command::new("rename-session")
                .target(id)
                .flag("--")
                .arg(spawn::literal(&args.new_name)),
        )
        .await?;
    lookup::session_by_id(&target, id).await
}
