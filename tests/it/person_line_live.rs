//! What a person left at a shell before the agent types (issue 33, points
//! 1 and 2), on a private tmux with a real bash at its prompt: a
//! half-typed line is never submitted (`line_not_empty`, nothing typed),
//! and a pane in copy mode is refused (`pane_in_mode`) within the
//! deadline, while keys an agent sends into the mode hold no other call.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{BOUND, PrivateTmux, call, ok};

/// A window running bash with its default prompt (`bash-5.2$ `), no
/// start-up files; its pane once the prompt is drawn.
async fn bash_pane(tmux: &PrivateTmux) -> String {
    let pane = tmux
        .cmd(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "main",
            "env -u PS1 bash --norc --noprofile",
        ])
        .trim()
        .to_owned();
    tmux.until_foreground(&pane, "bash").await;
    tmux.until_text(&pane, |t| t.trim_end().ends_with(['$', '#']))
        .await;
    pane
}

/// Calls a tool that must fail; its `_meta.error_type` and text.
async fn refused(svc: &tmux_mcp::tools::TmuxService, tool: &str, args: Value) -> (String, String) {
    let result = call(svc, tool, args).await;
    assert!(
        result.is_error,
        "{tool} should have failed: {:?}",
        result.structured_content
    );
    let meta = result.meta.expect("an error carries _meta");
    let text = result.content[0]["text"].as_str().unwrap_or_default();
    (
        meta["error_type"].as_str().unwrap_or_default().to_owned(),
        text.to_owned(),
    )
}

fn cursor_x(tmux: &PrivateTmux, pane: &str) -> u32 {
    let x = tmux.cmd(&["display-message", "-p", "-t", pane, "#{cursor_x}"]);
    x.trim().parse().expect("a column")
}

fn screen(tmux: &PrivateTmux, pane: &str) -> String {
    tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", pane])
}

#[tokio::test]
async fn a_persons_half_typed_line_is_never_submitted() {
    let tmux = PrivateTmux::start();
    let pane = bash_pane(&tmux).await;
    let svc = tmux.service();
    // The person types and pauses, without Enter.
    let half = "echo PERSON-HALF-TYPED-THIS #";
    tmux.cmd(&["send-keys", "-t", &pane, "-l", half]);
    tmux.until_text(&pane, |t| t.contains(half)).await;
    let run = json!({"pane_id": pane, "command": "echo AGENT-RAN", "timeout": 5});
    let (kind, text) = refused(&svc, "run_command", run.clone()).await;
    assert_eq!(kind, "line_not_empty", "{text}");
    assert!(text.contains(half), "the text is named: {text}");
    let (kind, text) = refused(
        &svc,
        "send_prompt",
        json!({"pane_id": pane, "text": "echo AGENT-PROMPT", "timeout": 5}),
    )
    .await;
    assert_eq!(kind, "line_not_empty", "{text}");
    // Nothing typed, nothing run, no handle left running.
    let shown = screen(&tmux, &pane);
    assert!(
        !shown.contains("AGENT") && !shown.contains("PERSON-HALF-TYPED-THIS\n"),
        "{shown}"
    );
    assert!(
        shown.trim_end().ends_with(half),
        "the person's line is whole:\n{shown}"
    );
    let commands = ok(&svc, "list_commands", json!({})).await;
    assert_eq!(commands["commands"], json!([]), "{commands}");
    // The person moves back to their line's start: still their text.
    let at_end = cursor_x(&tmux, &pane);
    tmux.cmd(&["send-keys", "-t", &pane, "C-a"]);
    let started = Instant::now();
    while cursor_x(&tmux, &pane) >= at_end {
        assert!(started.elapsed() < BOUND, "the cursor never moved back");
        // tmux has no event for a cursor move: re-read.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (kind, text) = refused(&svc, "run_command", run.clone()).await;
    assert_eq!(kind, "line_not_empty", "{text}");
    // Cleared (by the agent, on purpose: send_keys is not checked), the
    // line takes the command.
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "C-k", "enter": false}),
    )
    .await;
    tmux.until_text(&pane, |t| !t.contains("PERSON")).await;
    let ran = ok(&svc, "run_command", run).await;
    assert_eq!(ran["exit_status"], 0, "{ran}");
    assert_eq!(ran["output"], json!(["AGENT-RAN"]), "{ran}");
}

#[tokio::test]
async fn copy_mode_is_refused_in_time_and_keys_into_it_hold_no_other_call() {
    let tmux = PrivateTmux::start();
    let pane = bash_pane(&tmux).await;
    let svc = tmux.service();
    let seq = json!({"pane_id": pane, "command": "seq 1 50", "timeout": 10});
    assert_eq!(ok(&svc, "run_command", seq).await["exit_status"], 0);
    // The person scrolls back.
    tmux.cmd(&["copy-mode", "-t", &pane]);
    let started = Instant::now();
    let run = json!({"pane_id": pane, "command": "echo hi", "timeout": 3});
    let (kind, text) = refused(&svc, "run_command", run.clone()).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(kind, "pane_in_mode", "{text}");
    assert!(text.contains("copy-mode"), "{text}");
    let (kind, _) = refused(&svc, "send_prompt", json!({"pane_id": pane, "text": "hi"})).await;
    assert_eq!(kind, "pane_in_mode");
    let in_mode = tmux.cmd(&["display-message", "-p", "-t", &pane, "#{pane_in_mode}"]);
    assert_eq!(in_mode.trim(), "1", "the person's copy mode is left alone");
    let panes = ok(
        &svc,
        "list_panes",
        json!({"session_name": "main", "states": true}),
    )
    .await;
    let row = panes
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["pane_id"] == pane.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(row["pane_in_mode"], true, "{panes}");
    // The agent's own keys go to the mode (the reference's send_keys):
    // `f` opens copy mode's jump prompt, which from tmux 3.3 holds the
    // queue of the client that sent it. Every other call still answers.
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "f", "enter": false}),
    )
    .await;
    let started = Instant::now();
    ok(&svc, "list_sessions", json!({})).await;
    ok(&svc, "get_pane_info", json!({"pane_id": pane})).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Once the person leaves the mode, the command runs.
    tmux.cmd(&["send-keys", "-t", &pane, "-X", "cancel"]);
    let ran = ok(&svc, "run_command", run).await;
    assert_eq!(ran["output"], json!(["hi"]), "{ran}");
}
