//! A `capture_since` cursor is exact across any gap in our stream: the
//! lines it did not see streamed are read back from tmux's own history.

use std::time::Instant;

use serde_json::{Value, json};

use crate::support::{BOUND, PrivateTmux, ok};

fn lines(result: &Value) -> Vec<String> {
    result["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn cursor(result: &Value) -> String {
    result["cursor"].as_str().unwrap().to_owned()
}

/// Types `keys` in `pane` with the tmux CLI (not through the service:
/// nothing of ours watches the pane while it prints), and waits for the
/// command to signal `channel`.
async fn print(tmux: &PrivateTmux, pane: &str, keys: &str, channel: &str) {
    let line = format!("{keys}; tmux wait-for -S {channel}");
    tmux.cmd(&["send-keys", "-t", pane, "-l", &line]);
    tmux.cmd(&["send-keys", "-t", pane, "Enter"]);
    tmux.wait_for(channel, BOUND).await;
}

fn printed(result: &Value, prefix: &str) -> Vec<String> {
    lines(result)
        .into_iter()
        .filter(|l| l.starts_with(prefix))
        .collect()
}

/// Our control clients idle-detach, the pane prints, the cursor reads
/// the lines back from tmux.
#[tokio::test]
async fn a_cursor_reads_on_across_an_idle_detach() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service_with(&[("TMUX_MCP_IDLE_DETACH_SECONDS", "1")]);
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    // A wait streams the pane: our streaming client attaches.
    ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["never-printed"], "timeout": 0.2}),
    )
    .await;
    // The event: no client of ours is attached any more.
    let started = Instant::now();
    while !tmux.cmd(&["list-clients"]).trim().is_empty() {
        assert!(started.elapsed() < BOUND, "our clients never detached");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    print(&tmux, &pane, "printf 'idle-%s\\n' 1 2 3", "idle").await;
    let next = ok(&svc, "capture_since", json!({"cursor": cursor(&first)})).await;
    assert_eq!(
        printed(&next, "idle-"),
        ["idle-1", "idle-2", "idle-3"],
        "{next}"
    );
    assert_eq!(next["lines_missed"], false);
    let again = ok(&svc, "capture_since", json!({"cursor": cursor(&next)})).await;
    assert!(printed(&again, "idle-").is_empty(), "{again}");
}

/// The pane is paused for our streaming client (nothing watches it) while
/// it prints: tmux sends us nothing, the cursor still returns every line.
#[tokio::test]
async fn a_cursor_reads_on_across_a_pause() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["never-printed"], "timeout": 0.2}),
    )
    .await;
    // The streaming client stays attached and has the pane paused.
    assert!(!tmux.cmd(&["list-clients"]).trim().is_empty());
    print(&tmux, &pane, "seq -f 'paused-%g' 1 300", "paused").await;
    let mut cursor = cursor(&first);
    let mut got = Vec::new();
    for _ in 0..10 {
        let next = ok(
            &svc,
            "capture_since",
            json!({"cursor": cursor, "max_lines": 100}),
        )
        .await;
        assert_eq!(next["lines_missed"], false, "{next}");
        got.extend(printed(&next, "paused-"));
        cursor = next["cursor"].as_str().unwrap().to_owned();
        if next["truncated"] == false {
            break;
        }
    }
    let want: Vec<String> = (1..=300).map(|i| format!("paused-{i}")).collect();
    assert_eq!(got, want);
}

/// A second server process on the same tmux reads the first's cursor.
#[tokio::test]
async fn a_cursor_reads_on_in_another_server_process() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    drop(svc);
    print(&tmux, &pane, "printf 'later-%s\\n' 1 2", "later").await;
    let args = json!({"cursor": cursor(&first)}).to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tmux-mcp"))
        .args(["call", "capture_since", &args])
        .env("LIBTMUX_SOCKET", tmux.name())
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .output()
        .expect("tmux-mcp runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let next: Value = serde_json::from_slice(&out.stdout).expect("a JSON result");
    assert_eq!(printed(&next, "later-"), ["later-1", "later-2"], "{next}");
    assert_eq!(next["lines_missed"], false);
}

/// run_command's cursor after a timeout reads on after what the call
/// returned, though nothing streamed the pane since.
#[tokio::test]
async fn a_timed_out_commands_cursor_reads_on() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let run = ok(
        &svc,
        "run_command",
        json!({
            "pane_id": pane,
            "command": "for i in 1 2 3; do echo line$i; sleep 1; done; tmux wait-for -S counted",
            "timeout": 1,
        }),
    )
    .await;
    assert_eq!(run["timed_out"], true, "{run}");
    assert_eq!(run["output"], json!(["line1"]), "{run}");
    tmux.wait_for("counted", BOUND).await;
    let next = ok(&svc, "capture_since", json!({"cursor": run["cursor"]})).await;
    assert_eq!(printed(&next, "line"), ["line2", "line3"], "{next}");
    assert_eq!(next["lines_missed"], false);
}

/// Past the history limit tmux has dropped lines: lines_missed, with how
/// many at least, and what tmux still holds.
#[tokio::test]
async fn lines_past_the_history_limit_are_missed_and_counted() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["set-option", "-g", "history-limit", "100"]);
    // The limit is a new pane's.
    let pane = tmux
        .cmd(&["new-window", "-P", "-F", "#{pane_id}", "-t", "main"])
        .trim()
        .to_owned();
    // A line of its own to anchor on: a cursor of a screen the shell has
    // not drawn on yet anchors no text, which proves nothing.
    print(&tmux, &pane, "echo anchored", "anchored").await;
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    print(&tmux, &pane, "seq -f 'many-%g' 1 1000", "many").await;
    let next = ok(
        &svc,
        "capture_since",
        json!({"cursor": cursor(&first), "max_lines": null}),
    )
    .await;
    assert_eq!(next["lines_missed"], true, "{next}");
    assert!(next["missed_lines"].as_i64().unwrap() > 0, "{next}");
    let held = printed(&next, "many-");
    assert_eq!(held.last().map(String::as_str), Some("many-1000"));
    assert!(
        held.len() <= 100 + 50,
        "only what tmux holds: {}",
        held.len()
    );
    // From there on nothing is missed.
    print(&tmux, &pane, "echo after", "after").await;
    let after = ok(&svc, "capture_since", json!({"cursor": cursor(&next)})).await;
    assert_eq!(after["lines_missed"], false, "{after}");
    assert_eq!(printed(&after, "after"), ["after"], "{after}");
}

/// A pane at its history limit that printed a little since the cursor:
/// tmux trimmed a chunk, the anchored line moved up, nothing is missed.
#[tokio::test]
async fn a_line_moved_up_by_a_trim_is_found_again() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["set-option", "-g", "history-limit", "100"]);
    let pane = tmux
        .cmd(&["new-window", "-P", "-F", "#{pane_id}", "-t", "main"])
        .trim()
        .to_owned();
    // Fill the history to its limit.
    print(&tmux, &pane, "seq -f 'fill-%g' 1 300", "filled").await;
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    // 25 lines: more than one chunk (10 rows) is trimmed meanwhile.
    print(&tmux, &pane, "seq -f 'moved-%g' 1 25", "moved").await;
    let next = ok(&svc, "capture_since", json!({"cursor": cursor(&first)})).await;
    assert_eq!(next["lines_missed"], false, "{next}");
    let want: Vec<String> = (1..=25).map(|i| format!("moved-{i}")).collect();
    assert_eq!(printed(&next, "moved-"), want, "{next}");
    assert!(printed(&next, "fill-").is_empty(), "{next}");
    let again = ok(&svc, "capture_since", json!({"cursor": cursor(&next)})).await;
    assert!(printed(&again, "moved-").is_empty(), "{again}");
}
