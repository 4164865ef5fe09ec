//! The tools on a "remote" tmux server: a private tmux server on this
//! machine reached only through a private sshd on 127.0.0.1
//! (`socket_name: "loop:NAME"`), and the refusal of hosts not configured.

use std::time::Duration;

use serde_json::{Value, json};
use tmux_mcp::config::Config;
use tmux_mcp::tools::{App, TmuxService};
use tokio_util::sync::CancellationToken;

use crate::support::sshd::Sshd;
use crate::support::{BOUND, PrivateTmux, err, finish, ok, start_armed};

/// A private tmux server, an sshd in front of it, and a service that
/// reaches the server as `loop:NAME`.
pub struct Remote {
    pub tmux: PrivateTmux,
    pub sshd: Sshd,
    pub svc: TmuxService,
}

impl Remote {
    pub fn start() -> Option<Remote> {
        Remote::start_with(Duration::from_secs(10))
    }

    /// [`Remote::start`] with a command timeout of `timeout`.
    pub fn start_with(timeout: Duration) -> Option<Remote> {
        let sshd = Sshd::start()?;
        let tmux = PrivateTmux::start();
        let svc = service(&sshd, timeout);
        Some(Remote { tmux, sshd, svc })
    }

    /// `loop:NAME`, this server's `socket_name` over ssh.
    pub fn socket(&self) -> String {
        format!("loop:{}", self.tmux.name)
    }

    /// `args` with this server's `socket_name` added.
    pub fn args(&self, mut args: Value) -> Value {
        args["socket_name"] = json!(self.socket());
        args
    }

    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        ok(&self.svc, tool, self.args(args)).await
    }
}

/// A service that reaches `sshd`'s hosts, with a command timeout of `timeout`.
pub fn service(sshd: &Sshd, timeout: Duration) -> TmuxService {
    let env = sshd.env();
    let (mut config, _) = Config::from_vars(|var| {
        if let Some((_, v)) = env.iter().find(|(k, _)| *k == var) {
            return Some(v.clone());
        }
        (var == "TMUX_TMPDIR")
            .then(|| std::env::var(var).ok())
            .flatten()
    })
    .expect("config");
    config.limits.tmux_command_timeout = timeout;
    TmuxService::new(App::new(config))
}

#[tokio::test]
async fn an_alias_that_is_not_configured_is_refused_before_ssh_runs() {
    let dir = std::env::temp_dir().join(format!("tmuxmcp-noalias-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let ssh = dir.join("ssh");
    std::fs::write(
        &ssh,
        format!("#!/bin/sh\ntouch {}\nexit 255\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmux = PrivateTmux::start();
    let ssh_path = ssh.display().to_string();
    let svc = tmux.service_with(&[
        ("TMUX_MCP_HOSTS", "gpu=me@gpu"),
        ("TMUX_MCP_SSH", &ssh_path),
    ]);
    for name in ["evil.example:x", "me@evil:", "gpu2:work"] {
        let text = err(&svc, "list_sessions", json!({"socket_name": name})).await;
        assert!(text.contains("not configured"), "{name}: {text}");
        assert!(text.contains("configured aliases: gpu"), "{name}: {text}");
    }
    let text = err(
        &svc,
        "create_session",
        json!({"socket_name": "x:y", "session_name": "s"}),
    )
    .await;
    assert!(text.contains("not configured"), "{text}");
    assert!(
        !marker.exists(),
        "ssh was started for an alias nobody configured"
    );
    // A local name still works, and so does the configured alias (its ssh runs).
    ok(&svc, "list_sessions", json!({})).await;
    let text = err(&svc, "list_sessions", json!({"socket_name": "gpu:work"})).await;
    assert!(text.contains("ssh to gpu (me@gpu) failed"), "{text}");
    assert!(marker.exists(), "the configured alias did not run ssh");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_tools_work_on_a_server_behind_ssh() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let info = remote.ok("get_server_info", json!({})).await;
    assert_eq!(info["is_alive"], true, "{info}");
    assert_eq!(info["socket_name"], remote.socket());
    // The release is the remote server's own, asked over ssh.
    let version = remote.tmux.cmd(&["display", "-p", "#{version}"]);
    assert_eq!(info["version"], version.trim(), "{info}");

    let made = remote
        .ok(
            "create_session",
            json!({"session_name": "far", "x": 80, "y": 24}),
        )
        .await;
    let pane = made["active_pane_id"].as_str().unwrap().to_owned();
    let sessions = remote.tmux.cmd(&["list-sessions", "-F", "#{session_name}"]);
    assert!(sessions.lines().any(|s| s == "far"), "{sessions}");

    remote
        .ok(
            "send_keys",
            json!({"pane_id": pane, "keys": "echo it\\'s $((6*7)) é; tmux wait-for -S typed"}),
        )
        .await;
    remote.tmux.wait_for("typed", BOUND).await;
    let shown = remote.ok("capture_pane", json!({"pane_id": pane})).await;
    let text = shown
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| shown.to_string());
    assert!(text.contains("it's 42 é"), "{text}");

    let ran = remote
        .ok(
            "run_command",
            json!({"pane_id": pane, "command": "printf 'a\\nb\\n'; false", "timeout": 10}),
        )
        .await;
    assert_eq!(ran["exit_status"], 1, "{ran}");
    assert_eq!(ran["output"], json!(["a", "b"]), "{ran}");
    let cursor = ran["cursor"].as_str().unwrap().to_owned();
    let page = remote
        .ok("capture_since", json!({"pane_id": pane, "cursor": cursor}))
        .await;
    assert_eq!(page["lines"], json!(["a", "b"]), "{page}");
    assert_eq!(page["lines_missed"], false, "{page}");

    let wait = start_armed(
        &remote.svc,
        "wait_for_text",
        remote.args(json!({"pane_id": pane, "patterns": ["FAR-11"], "timeout": 10})),
        CancellationToken::new(),
    )
    .await;
    remote
        .tmux
        .cmd(&["send-keys", "-t", &pane, "echo FAR-$((5+6))", "Enter"]);
    let found = finish(wait).await;
    assert_eq!(found["found"], true, "{found}");

    // Resources name the remote server the same way.
    let uri = format!("tmux://sessions?socket_name={}", remote.socket());
    let contents = tmux_mcp::mcp::Service::read_resource(&remote.svc, &uri)
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    let text = contents[0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("\"far\""), "{text}");

    // The control client carries ordinary calls: no ssh process per call.
    let before = remote.sshd.calls().len();
    for _ in 0..20 {
        remote.ok("capture_pane", json!({"pane_id": pane})).await;
        remote
            .ok(
                "send_keys",
                json!({"pane_id": pane, "keys": "", "enter": false}),
            )
            .await;
    }
    assert_eq!(
        remote.sshd.calls().len(),
        before,
        "{:?}",
        remote.sshd.calls()
    );

    // start_directory is a path on the remote host, checked there.
    let made = remote
        .ok(
            "create_session",
            json!({"session_name": "dir", "start_directory": "/tmp"}),
        )
        .await;
    let dir_pane = made["active_pane_id"].as_str().unwrap().to_owned();
    // tmux reads the path off the pane's process, which may not have
    // started yet (an empty path): read again until it has.
    let started = std::time::Instant::now();
    let path = loop {
        let path = remote
            .tmux
            .cmd(&["display", "-p", "-t", &dir_pane, "#{pane_current_path}"]);
        if !path.trim().is_empty() || started.elapsed() > BOUND {
            break path;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(path.trim(), "/tmp");
    let refused = err(
        &remote.svc,
        "create_session",
        remote.args(json!({"session_name": "rel", "start_directory": "relative/dir"})),
    )
    .await;
    assert!(refused.contains("absolute path on its host"), "{refused}");

    let servers = ok(&remote.svc, "list_servers", json!({})).await;
    let row = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["socket_name"] == remote.socket())
        .unwrap_or_else(|| panic!("{} not listed: {servers}", remote.socket()));
    assert_eq!(row["is_alive"], true);
    assert_eq!(row["session_count"], 3, "{row}");
}

#[tokio::test]
async fn a_remote_server_with_no_session_is_started_over_ssh() {
    let Some(remote) = Remote::start() else {
        return;
    };
    // A name no server uses yet: create_session runs one-shot over ssh.
    let fresh = format!("{}-fresh", remote.tmux.name);
    let _guard = PrivateTmux::named(fresh.clone());
    let socket = format!("loop:{fresh}");
    let info = ok(
        &remote.svc,
        "get_server_info",
        json!({"socket_name": socket}),
    )
    .await;
    assert_eq!(info["is_alive"], false, "{info}");
    let made = ok(
        &remote.svc,
        "create_session",
        json!({"socket_name": socket, "session_name": "new"}),
    )
    .await;
    assert_eq!(made["session_name"], "new");
    let listed = std::process::Command::new("tmux")
        .args(["-L", &fresh, "list-sessions", "-F", "#{session_name}"])
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "new");
}

/// Muting works over ssh as locally: the streaming client, an `ssh … tmux
/// -C` process, is sent the output of the leased pane only (the bandwidth
/// a neighbour's flood would cost).
#[tokio::test]
async fn unwatched_remote_panes_are_muted() {
    use crate::quiet_live::{client_over, only_the_leased_pane_streams, pane, split};
    use tmux_mcp::config::Host;
    use tmux_mcp::tmux::connection::Role;
    use tmux_mcp::tmux::ssh::{Ssh, SshHost, SshTransport};
    use tmux_mcp::tmux::version::Features;

    let Some(remote) = Remote::start() else {
        return;
    };
    let features = Features::of(remote.tmux.version());
    if !features.mute {
        eprintln!("SKIPPED: tmux {} cannot mute panes", remote.tmux.version());
        return;
    }
    let watched = pane(&remote.tmux, "main");
    let other = split(&remote.tmux);
    let host = Host {
        alias: "loop".into(),
        destination: "loop".into(),
    };
    let transport = SshTransport {
        host: SshHost::new(Ssh::new(remote.sshd.ssh(), Duration::from_secs(5)), host),
        socket: Some(remote.tmux.name.clone()),
    };
    let (client, seen) = client_over(&transport, &remote.tmux, Role::Streaming, features).await;
    assert!(
        !remote.sshd.clients("attach-session").is_empty(),
        "not over ssh"
    );
    let _lease = only_the_leased_pane_streams(&remote.tmux, &client, &seen, watched, other).await;
    transport.host.close().await;
}

/// wait_for_attention on a pane of a server behind ssh reads the pane as
/// tmux tells it (its foreground command), not as exited: the local
/// process probe has nothing to look at there (it read every remote pane
/// as exited at its first settle point); a pane killed there is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_pane_at_its_prompt_is_not_reported_exited() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let pane = remote.tmux.first_pane();
    let args = json!({"pane_ids": [pane], "reasons": ["exited", "input"], "timeout": 1.5});
    let r = remote.ok("wait_for_attention", args).await;
    assert_eq!(r["events"], json!([]), "{r}");
    // Its end is still told.
    let second = remote
        .tmux
        .cmd(&["split-window", "-d", "-P", "-F", "#{pane_id}"]);
    let second = second.trim();
    let args = json!({"pane_ids": [second], "reasons": ["exited"], "timeout": 0.5});
    let armed = remote.ok("wait_for_attention", args).await;
    assert_eq!(armed["events"], json!([]), "{armed}");
    remote.tmux.cmd(&["kill-pane", "-t", second]);
    let args = json!({"pane_ids": [second], "reasons": ["exited"], "timeout": 10, "since": armed["since"]});
    let r = remote.ok("wait_for_attention", args).await;
    assert_eq!(r["events"][0]["reason"], "exited", "{r}");
}
