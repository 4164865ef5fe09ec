//! A watch whose pane the person ends under it: each kind of watch in
//! flight (`wait_for_text`, `wait_for_state`, `wait_for_attention`,
//! `wait_for_command`) while the tmux CLI kills the pane, its window or
//! its session, or respawns it. Every one ends at once (well inside its
//! own 20 s timeout) and says how the pane ended; none waits for its
//! timeout, and nothing of the watch is kept in tmux.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tmux_mcp::tools::TmuxService;
use tokio_util::sync::CancellationToken;

use crate::support::{PrivateTmux, ok, start_armed};

/// Each call's own timeout: ending near it would be a wait that missed
/// the pane's end.
const TIMEOUT: f64 = 20.0;
/// How soon an ended pane must end the watch.
const PROMPTLY: Duration = Duration::from_secs(5);

/// What the person does to the watched pane.
#[derive(Clone, Copy, Debug)]
enum Action {
    KillPane,
    KillWindow,
    KillSession,
    Respawn,
}

const ACTIONS: [Action; 4] = [
    Action::KillPane,
    Action::KillWindow,
    Action::KillSession,
    Action::Respawn,
];

impl Action {
    fn run(self, tmux: &PrivateTmux, pane: &str) {
        let args: &[&str] = match self {
            Action::KillPane => &["kill-pane", "-t", pane],
            Action::KillWindow => &["kill-window", "-t", pane],
            Action::KillSession => &["kill-session", "-t", "watched"],
            Action::Respawn => &["respawn-pane", "-k", "-t", pane],
        };
        tmux.cmd(args);
    }

    /// The end a command handle reports.
    fn pane_end(self) -> &'static str {
        match self {
            Action::Respawn => "pane_respawned",
            _ => "pane_gone",
        }
    }
}

/// A session `watched` whose first pane (returned) sits at a bash prompt,
/// beside a second pane, so a kill of the pane leaves the window.
async fn watched_pane(tmux: &PrivateTmux) -> String {
    let bash = "env PS1='$ ' bash --norc --noprofile";
    tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "watched",
        "-x",
        "100",
        "-y",
        "30",
        bash,
    ]);
    tmux.cmd(&["split-window", "-d", "-t", "watched", bash]);
    let pane = tmux.cmd(&["display-message", "-p", "-t", "watched:0.0", "#{pane_id}"]);
    let pane = pane.trim().to_owned();
    tmux.until_text(&pane, |t| t.contains('$')).await;
    pane
}

/// Runs `watch` (its arguments, given the pane) while the person does
/// `action`; returns the result (error or not) and how long it took after
/// the action.
async fn ended_by(
    svc: &TmuxService,
    tmux: &PrivateTmux,
    pane: &str,
    tool: &str,
    args: Value,
    action: Action,
) -> (bool, Value, String) {
    let handle = start_armed(svc, tool, args, CancellationToken::new()).await;
    let acted = Instant::now();
    action.run(tmux, pane);
    let result = tokio::time::timeout(PROMPTLY, handle)
        .await
        .unwrap_or_else(|_| panic!("{tool} still waits {PROMPTLY:?} after {action:?}"))
        .expect("no panic");
    let text = result.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let value = result.structured_content.unwrap_or(Value::Null);
    assert!(acted.elapsed() < PROMPTLY, "{tool} after {action:?}");
    (result.is_error, value, text)
}

#[tokio::test]
async fn a_wait_for_text_ends_when_its_pane_goes_or_is_respawned() {
    for action in ACTIONS {
        let tmux = PrivateTmux::start();
        let svc = tmux.service();
        let pane = watched_pane(&tmux).await;
        let args = json!({"pane_id": pane, "patterns": ["NEVER-PRINTED"], "timeout": TIMEOUT});
        let (error, _, text) = ended_by(&svc, &tmux, &pane, "wait_for_text", args, action).await;
        assert!(error, "{action:?}: {text}");
        let said = match action {
            Action::Respawn => "was respawned while waiting",
            _ => "was closed while waiting",
        };
        assert!(text.contains(said), "{action:?}: {text}");
    }
}

#[tokio::test]
async fn a_wait_for_state_ends_when_its_pane_goes_or_is_respawned() {
    for action in ACTIONS {
        let tmux = PrivateTmux::start();
        let svc = tmux.service();
        let pane = watched_pane(&tmux).await;
        let args = json!({"pane_id": pane, "states": ["input"], "timeout": TIMEOUT});
        let (error, _, text) = ended_by(&svc, &tmux, &pane, "wait_for_state", args, action).await;
        assert!(error, "{action:?}: {text}");
        assert!(text.contains(&pane), "{action:?}: {text}");
    }
}

/// Whatever reasons were asked for, a watched pane's end is told: it ends
/// that pane's watch.
#[tokio::test]
async fn a_wait_for_attention_tells_the_end_of_a_watched_pane() {
    for action in ACTIONS {
        let tmux = PrivateTmux::start();
        let svc = tmux.service();
        let pane = watched_pane(&tmux).await;
        let args = json!({"pane_ids": [pane], "reasons": ["bell"], "timeout": TIMEOUT});
        let (error, got, text) =
            ended_by(&svc, &tmux, &pane, "wait_for_attention", args, action).await;
        assert!(!error, "{action:?}: {text}");
        let event = &got["events"][0];
        assert_eq!(event["pane_id"], pane.as_str(), "{action:?}: {got}");
        assert_eq!(event["reason"], "exited", "{action:?}: {got}");
        if let Action::Respawn = action {
            assert_eq!(event["detail"], "respawned", "{got}");
        }
    }
}

#[tokio::test]
async fn a_command_handle_ends_with_its_pane_and_keeps_its_output() {
    for action in ACTIONS {
        let tmux = PrivateTmux::start();
        let svc = tmux.service();
        let pane = watched_pane(&tmux).await;
        let run = json!({"pane_id": pane, "command": "sleep 0.2; echo handle-output; sleep 60", "background": true});
        let started = ok(&svc, "run_command", run).await;
        let id = started["command_id"].as_str().expect("a handle").to_owned();
        tmux.until_text(&pane, |t| t.contains("\nhandle-output"))
            .await;
        let args = json!({"command_id": id, "timeout": TIMEOUT});
        let (error, got, text) =
            ended_by(&svc, &tmux, &pane, "wait_for_command", args, action).await;
        assert!(!error, "{action:?}: {text}");
        assert_eq!(got["running"], false, "{action:?}: {got}");
        assert_eq!(got["exit_status"], Value::Null, "{action:?}: {got}");
        assert_eq!(got["pane_end"], action.pane_end(), "{action:?}: {got}");
        let shown = started["output"].to_string() + &got["output"].to_string();
        assert!(
            shown.contains("handle-output"),
            "{action:?}: {shown} {started} {got}"
        );
        let listed = ok(&svc, "list_commands", json!({})).await;
        let row = listed["commands"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["command_id"] == id.as_str()))
            .cloned()
            .unwrap_or_default();
        assert_eq!(row["pane_end"], action.pane_end(), "{action:?}: {listed}");
    }
}
