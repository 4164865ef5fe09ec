//! Faults of remote tmux: the ssh of a control client killed, the shared
//! master connection killed, the remote tmux server killed and started
//! again, sshd stopped in the middle of a wait, and a host that accepts a
//! connection and never answers.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::ssh_live::{Remote, service};
use crate::support::sshd::kill;
use crate::support::{BOUND, call, finish, ok, start_armed};

/// Starts a wait for `pattern` on `pane` of the remote server; returns once
/// it is armed.
async fn wait_for(
    remote: &Remote,
    pane: &str,
    pattern: &str,
) -> tokio::task::JoinHandle<tmux_mcp::mcp::CallToolResult> {
    let args = remote.args(json!({"pane_id": pane, "patterns": [pattern], "timeout": 30}));
    start_armed(&remote.svc, "wait_for_text", args, CancellationToken::new()).await
}

/// The result of a call that must end within the bound.
async fn ended(
    handle: tokio::task::JoinHandle<tmux_mcp::mcp::CallToolResult>,
) -> tmux_mcp::mcp::CallToolResult {
    tokio::time::timeout(BOUND, handle)
        .await
        .expect("the wait ended")
        .expect("no panic")
}

fn text(result: &tmux_mcp::mcp::CallToolResult) -> String {
    result.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_wait_carries_on_when_its_control_clients_ssh_is_killed() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let pane = remote.tmux.first_pane();
    let wait = wait_for(&remote, &pane, "AFTER-3").await;
    let clients = remote.sshd.clients("attach-session");
    assert!(!clients.is_empty(), "no control client over ssh");
    for pid in clients {
        kill(pid);
    }
    remote
        .tmux
        .cmd(&["send-keys", "-t", &pane, "echo AFTER-$((1+2))", "Enter"]);
    let found = finish(wait).await;
    assert_eq!(found["found"], true, "{found}");
    // And the next call has a client again.
    remote.ok("capture_pane", json!({"pane_id": pane})).await;
}

#[tokio::test]
async fn a_killed_master_connection_is_made_again() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let pane = remote.tmux.first_pane();
    remote.ok("capture_pane", json!({"pane_id": pane})).await;
    let master = remote.sshd.master().expect("a master connection");
    kill(master);
    // The control client went with it; the call reconnects.
    let shown = remote.ok("list_panes", json!({})).await;
    assert!(shown.to_string().contains(&pane), "{shown}");
    let again = remote.sshd.master().expect("a new master connection");
    assert_ne!(again, master);
}

#[tokio::test]
async fn a_restarted_remote_server_is_a_new_server() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let pane = remote.tmux.first_pane();
    let ran = remote
        .ok(
            "run_command",
            json!({"pane_id": pane, "command": "echo OLD", "timeout": 10}),
        )
        .await;
    let cursor = ran["cursor"].as_str().unwrap().to_owned();
    let wait = wait_for(&remote, &pane, "NEVER-PRINTED").await;
    remote.tmux.cmd(&["kill-server"]);
    let gone = ended(wait).await;
    assert!(gone.is_error, "{:?}", gone.structured_content);
    assert!(text(&gone).contains("went away"), "{}", text(&gone));

    // A new server under the same name: its first pane has the same id.
    remote
        .tmux
        .cmd(&["new-session", "-d", "-s", "main", "env PS1='$ ' sh"]);
    assert_eq!(remote.tmux.first_pane(), pane);
    let page = remote
        .ok("capture_since", json!({"pane_id": pane, "cursor": cursor}))
        .await;
    assert_eq!(page["lines_missed"], true, "{page}");
    let fresh = remote
        .ok(
            "run_command",
            json!({"pane_id": pane, "command": "echo NEW", "timeout": 10}),
        )
        .await;
    assert_eq!(fresh["output"], json!(["NEW"]), "{fresh}");
}

#[tokio::test]
async fn stopping_sshd_mid_wait_ends_the_wait_with_a_clear_error() {
    let Some(mut remote) = Remote::start() else {
        return;
    };
    let pane = remote.tmux.first_pane();
    let wait = wait_for(&remote, &pane, "NEVER-PRINTED").await;
    remote.sshd.stop();
    let result = ended(wait).await;
    assert!(result.is_error, "{:?}", result.structured_content);
    let said = text(&result);
    assert!(said.contains("ssh to loop (loop) failed"), "{said}");
    assert!(said.contains("Connection refused"), "{said}");
    // Calls fail the same way, and quickly, while sshd is down.
    let started = Instant::now();
    let failed = call(&remote.svc, "list_panes", remote.args(json!({}))).await;
    assert!(failed.is_error);
    assert!(text(&failed).contains("ssh to loop"), "{}", text(&failed));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Back up: calls reconnect once the backoff has passed.
    remote.sshd.resume();
    let deadline = Instant::now() + BOUND;
    let listed: Value = loop {
        let result = call(&remote.svc, "list_panes", remote.args(json!({}))).await;
        if !result.is_error {
            break result.structured_content.unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "never reconnected: {}",
            text(&result)
        );
        // The backoff says when it tries again (at most 8 s).
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(listed.to_string().contains(&pane), "{listed}");
}

#[tokio::test]
async fn a_host_that_does_not_answer_fails_within_the_command_timeout() {
    let Some(remote) = Remote::start() else {
        return;
    };
    // Accepts connections and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    remote.sshd.add_host("mute", port);
    let timeout = Duration::from_secs(2);
    let svc = service(&remote.sshd, timeout);
    for (tool, args) in [
        ("list_sessions", json!({"socket_name": "mute:x"})),
        (
            "create_session",
            json!({"socket_name": "mute:", "session_name": "s"}),
        ),
    ] {
        let started = Instant::now();
        let result = call(&svc, tool, args).await;
        let took = started.elapsed();
        assert!(result.is_error, "{tool}");
        let said = text(&result);
        eprintln!("{tool} on a mute host, {took:?}: {said}");
        assert!(said.contains("ssh to mute (mute) failed"), "{tool}: {said}");
        // It fails rather than hangs; how soon past the timeout is a
        // figure (printed above), with room for a loaded machine here.
        assert!(
            took < timeout + Duration::from_secs(3),
            "{tool} took {took:?}"
        );
    }
    // list_servers skips the host that does not answer, and lists the other.
    let servers = ok(&svc, "list_servers", json!({})).await;
    assert!(servers.to_string().contains(&remote.socket()), "{servers}");
}
