//! Faults of the tmux side: a wedged server (its socket accepts and never
//! answers), and control clients detached from outside.

mod support;

use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{PrivateTmux, call};
use tmux_mcp::config::Config;
use tmux_mcp::tools::{App, TmuxService};

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
