//! Faults of the tmux side: a wedged server (its socket accepts and never
//! answers), and control clients detached from outside.

use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::{PrivateTmux, call, finish, start_armed};
use serde_json::json;
use tmux_mcp::config::Config;
use tmux_mcp::tools::{App, TmuxService};
use tokio_util::sync::CancellationToken;

/// A socket that accepts connections and never answers: a stopped or stuck
/// tmux server as its clients see it. Removed when dropped.
struct Wedged {
    path: PathBuf,
}

impl Wedged {
    fn start() -> Wedged {
        let path = std::env::temp_dir().join(format!("tmuxmcp-wedged-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("bind");
        // Accepted connections are held open and never read or written.
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
            }
        });
        Wedged { path }
    }
}

impl Drop for Wedged {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn service_at(path: &std::path::Path, timeout: Duration) -> TmuxService {
    let path = path.display().to_string();
    let (mut config, _) = Config::from_vars(|var| match var {
        "LIBTMUX_SOCKET_PATH" => Some(path.clone()),
        _ => None,
    })
    .expect("config");
    config.limits.tmux_command_timeout = timeout;
    TmuxService::new(App::new(config))
}

#[tokio::test]
async fn a_wedged_server_is_reported_as_not_responding_within_the_timeout() {
    let wedged = Wedged::start();
    let timeout = Duration::from_millis(800);
    let svc = service_at(&wedged.path, timeout);
    for (tool, args) in [
        ("list_sessions", json!({})),
        ("get_server_info", json!({})),
        ("list_panes", json!({})),
        ("capture_pane", json!({"pane_id": "%0"})),
        ("send_keys", json!({"pane_id": "%0", "keys": "x"})),
        ("get_session_info", json!({"session_name": "main"})),
        ("kill_server", json!({})),
    ] {
        let started = Instant::now();
        let result = tokio::time::timeout(Duration::from_secs(30), call(&svc, tool, args))
            .await
            .unwrap_or_else(|_| panic!("{tool} did not answer"));
        let took = started.elapsed();
        assert!(result.is_error, "{tool}: {:?}", result.structured_content);
        let text = result.content[0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("tmux server is not responding"),
            "{tool}: {text}"
        );
        assert!(
            !text.contains("no tmux server") && !text.contains("not found"),
            "{tool}: {text}"
        );
        // One command timeout, not one per attempt (with slack for a busy machine).
        assert!(
            took < timeout + Duration::from_millis(700),
            "{tool} took {took:?}"
        );
    }
    // A socket nobody listens on is still "no server", not "not responding".
    drop(wedged);
    let stale = std::env::temp_dir().join(format!("tmuxmcp-stale-{}.sock", std::process::id()));
    drop(UnixListener::bind(&stale).expect("bind"));
    let svc = service_at(&stale, timeout);
    let result = call(&svc, "capture_pane", json!({"pane_id": "%0"})).await;
    let text = result.content[0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("no tmux server"), "{text}");
    let _ = std::fs::remove_file(&stale);
}

#[tokio::test]
async fn a_live_server_still_answers_with_the_bounded_path() {
    let tmux = PrivateTmux::start();
    let svc = service_at(&tmux.socket_path(), Duration::from_secs(10));
    let result = call(&svc, "list_sessions", json!({})).await;
    assert!(!result.is_error, "{:?}", result.content);
}

/// Detaches every client of the server from outside, as a person tidying
/// `tmux ls` would; returns how many there were.
fn detach_all(tmux: &PrivateTmux) -> usize {
    let clients = tmux.cmd(&["list-clients", "-F", "#{client_name}"]);
    let names: Vec<&str> = clients.lines().filter(|l| !l.is_empty()).collect();
    for name in &names {
        let _ = tmux.try_cmd(&["detach-client", "-t", name]);
    }
    names.len()
}

/// A control client that goes away costs no call: the next call, and a wait
/// in flight, carry on with a fresh client.
#[tokio::test]
async fn detached_control_clients_cost_no_call() {
    let tmux = PrivateTmux::start();
    tmux.cmd(&["new-session", "-d", "-s", "other"]);
    let svc = tmux.service();
    let pane = tmux.first_pane();
    for round in 0..20 {
        let first = call(&svc, "capture_pane", json!({"pane_id": pane})).await;
        assert!(!first.is_error, "round {round}: {:?}", first.content);
        let other = call(&svc, "list_panes", json!({"session_name": "other"})).await;
        assert!(!other.is_error, "round {round}: {:?}", other.content);
        assert!(detach_all(&tmux) >= 1, "round {round}: no client to detach");
        for (tool, args) in [
            (
                "wait_for_text",
                json!({"pane_id": pane, "patterns": ["NEVER-SEEN"], "timeout": 0.05}),
            ),
            ("capture_since", json!({"pane_id": pane})),
            (
                "send_keys",
                json!({"pane_id": pane, "keys": "", "enter": false}),
            ),
            ("capture_pane", json!({"pane_id": pane})),
            ("list_sessions", json!({})),
            ("get_pane_info", json!({"pane_id": pane})),
            ("show_option", json!({"option": "status", "global_": true})),
        ] {
            let result = call(&svc, tool, args).await;
            assert!(
                !result.is_error,
                "round {round} {tool}: {:?}",
                result.content
            );
        }
    }
}

/// A wait in flight when its streaming client is detached carries on with a
/// fresh client.
#[tokio::test]
async fn a_wait_survives_its_client_being_detached() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    for round in 0..5 {
        let args =
            json!({"pane_id": pane, "patterns": [format!("BACK-{}", round + 40)], "timeout": 10});
        let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
        assert!(detach_all(&tmux) >= 1, "round {round}: no client to detach");
        let keys = format!("echo BACK-$(({round}+40))");
        tmux.cmd(&["send-keys", "-t", &pane, &keys, "Enter"]);
        let result = finish(wait).await;
        assert_eq!(result["found"], true, "round {round}: {result}");
    }
}
