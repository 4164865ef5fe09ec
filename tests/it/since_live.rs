//! `since` on wait_for_text and wait_for_state, and screen matching, with
//! real programs (the python3 REPL, less) on a live private tmux. Output
//! a since-wait must count is produced and seen to be done (a tmux
//! `wait-for` channel the program signals) before the wait starts.

use std::time::{Duration, Instant};

use crate::support::{BOUND, PrivateTmux, err, finish, ok, start_armed};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Starts the python3 REPL in `pane` and waits until it reads its input.
async fn python(svc: &tmux_mcp::tools::TmuxService, pane: &str) {
    ok(
        svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "python3 -q"}),
    )
    .await;
    let ready = ok(
        svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["input"], "timeout": 20}),
    )
    .await;
    assert_eq!(ready["state"], "input", "{ready}");
}

#[tokio::test]
async fn a_wait_since_input_counts_the_answer_already_printed() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    python(&svc, &pane).await;
    // One line: the answer, then the signal that it is printed.
    let keys = "6*7; _ = __import__('os').system('tmux wait-for -S answered')";
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": keys})).await;
    tmux.wait_for("answered", BOUND).await;

    // Without since, the answer came before the wait: it is only seen at entry.
    let before = ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["^42$"], "regex": true, "timeout": 0.3}),
    )
    .await;
    assert_eq!(before["found"], false, "{before}");
    assert_eq!(before["matched_at_entry"], true, "{before}");

    let args = json!({"pane_id": pane, "patterns": ["^42$"], "regex": true,
                      "since": "input", "timeout": 10});
    let result = ok(&svc, "wait_for_text", args).await;
    assert_eq!(result["outcome"], "matched", "{result}");
    assert_eq!(result["matched_lines"], json!(["42"]), "{result}");
    assert!(result.get("lines_missed").is_none(), "{result}");
    assert!(
        result["elapsed_seconds"].as_f64().unwrap() < 2.0,
        "it matched what was there, not a later line: {result}"
    );

    // Output before the last input does not count: 42 came before it.
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": "5+5"})).await;
    let args = json!({"pane_id": pane, "patterns": ["^42$", "^10$"], "regex": true,
                      "since": "input", "timeout": 10});
    let result = ok(&svc, "wait_for_text", args).await;
    assert_eq!(result["matched_index"], 1, "{result}");
}

#[tokio::test]
async fn waiting_for_input_since_input_waits_for_the_answer() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    python(&svc, &pane).await;
    let sent = Instant::now();
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "import time; time.sleep(1); print('WOKE')"}),
    )
    .await;
    let result = ok(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["input"], "since": "input", "timeout": 10}),
    )
    .await;
    let took = sent.elapsed();
    assert_eq!(result["state"], "input", "{result}");
    assert!(
        took >= Duration::from_secs(1),
        "before the sleep ended: {took:?} {result}"
    );
    let tail = result["tail"].to_string();
    assert!(tail.contains("WOKE"), "the answer is on screen: {result}");

    // Asked again since the same input: it has answered, and waits.
    let again = ok(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["input"], "since": "input", "timeout": 10}),
    )
    .await;
    assert_eq!(again["state"], "input", "{again}");
    assert!(again["elapsed_seconds"].as_f64().unwrap() < 1.0, "{again}");
}

#[tokio::test]
async fn a_capture_since_cursor_starts_a_wait() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    // Typed by tmux itself, not through this server: no input mark.
    let typed = |keys: &str| {
        tmux.cmd(&["send-keys", "-t", &pane, keys, "Enter"]);
    };
    typed("echo OLD-$((40+2)); tmux wait-for -S old");
    tmux.wait_for("old", BOUND).await;
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    // Printed after the cursor, before the wait, while nothing watched.
    typed("echo NEW-$((3+4)); tmux wait-for -S new");
    tmux.wait_for("new", BOUND).await;
    let args = json!({"pane_id": pane, "patterns": ["old-42", "new-7"],
                      "since": cursor, "timeout": 10});
    let result = ok(&svc, "wait_for_text", args).await;
    assert_eq!(result["outcome"], "matched", "{result}");
    assert_eq!(
        result["matched_index"], 1,
        "OLD-42 was before the cursor: {result}"
    );
    assert!(
        result["elapsed_seconds"].as_f64().unwrap() < 2.0,
        "{result}"
    );

    // A cursor of another pane is refused, and so is junk.
    let other = tmux.cmd(&["split-window", "-P", "-F", "#{pane_id}", "-t", &pane]);
    let refused = err(
        &svc,
        "wait_for_text",
        json!({"pane_id": other.trim(), "since": cursor, "timeout": 1}),
    )
    .await;
    assert!(refused.contains("cursor"), "{refused}");
    let junk = err(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "since": "yesterday", "timeout": 1}),
    )
    .await;
    assert!(junk.contains("cursor"), "{junk}");
}

#[tokio::test]
async fn since_input_with_no_input_sent_is_refused() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let refused = err(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "since": "input", "timeout": 1}),
    )
    .await;
    assert!(refused.contains("no input"), "{refused}");
}

#[tokio::test]
async fn a_screen_wait_matches_what_less_draws() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let file = std::env::temp_dir().join(format!("since-{}.txt", tmux.name()));
    let text: String = (1..=300).map(|i| format!("row {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let keys = format!("less {}", file.display());
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": keys})).await;
    let shown = ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["^row 1$"], "regex": true,
               "screen": true, "timeout": 10}),
    )
    .await;
    assert_eq!(shown["outcome"], "matched", "{shown}");

    // Woken by what less draws, not by a timer: armed before the key.
    let args = json!({"pane_id": pane, "patterns": ["^row 300$"], "regex": true,
                      "screen": true, "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "G", "enter": false}),
    )
    .await;
    let result = finish(wait).await;
    assert_eq!(result["outcome"], "matched", "{result}");
    assert_eq!(result["matched_lines"], json!(["row 300"]), "{result}");
    assert_eq!(result["alternate_screen"], true, "{result}");

    // Without screen, the same wait cannot see it (what it did before).
    let blind = ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["^row 299$"], "regex": true, "timeout": 0.3}),
    )
    .await;
    assert_eq!(blind["outcome"], "alternate_screen", "{blind}");
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "q", "enter": false}),
    )
    .await;
    std::fs::remove_file(&file).unwrap();
}

#[tokio::test]
async fn output_tmux_no_longer_holds_is_reported_missed() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let typed = |keys: &str| {
        tmux.cmd(&["send-keys", "-t", &pane, keys, "Enter"]);
    };
    typed("echo GONE-$((1+1)); tmux wait-for -S gone");
    tmux.wait_for("gone", BOUND).await;
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    // The screen and history are wiped: the cursor's line is gone.
    typed("clear; tmux clear-history; echo LATER-$((4+5)); tmux wait-for -S later");
    tmux.wait_for("later", BOUND).await;
    // Another server process: it has no recording to read instead.
    let other = tmux.service();
    let args = json!({"pane_id": pane, "patterns": ["later-9"], "since": cursor, "timeout": 10});
    let result = ok(&other, "wait_for_text", args).await;
    assert_eq!(result["outcome"], "matched", "{result}");
    assert_eq!(result["lines_missed"], true, "{result}");
}

/// A new window running bash without start-up files, at its prompt.
async fn bash(tmux: &PrivateTmux) -> String {
    // tmux-256color, the default-terminal of every release from 3.3 on:
    // for tmux 3.2a's `screen`, `clear` leaves the scrollback be.
    let start = "env PS1='$ ' TERM=tmux-256color bash --norc --noprofile";
    crate::pane_clean_live::shell_pane(tmux, "bash", start).await
}

/// Output a `clear` wiped from tmux after a capture_since cursor is read
/// from the stream this server recorded (issue 33, `r1`: the cursor's
/// prompt line passed for an equal prompt after the clear, and the read
/// said nothing was new and nothing missed).
#[tokio::test]
async fn output_a_clear_wiped_after_a_cursor_is_read_from_the_stream() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    tmux.cmd(&["send-keys", "-t", &pane, "clear", "Enter"]);
    tmux.until_text(&pane, |t| t.trim() == "$").await;
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    tmux.cmd(&[
        "send-keys",
        "-t",
        &pane,
        "printf 'IMPORTANT-%s\\n' OUTPUT; seq 1 40; clear; tmux wait-for -S cleared",
        "Enter",
    ]);
    tmux.wait_for("cleared", BOUND).await;
    tmux.until_text(&pane, |t| t.trim() == "$").await;

    let read = ok(
        &svc,
        "capture_since",
        json!({"pane_id": pane, "cursor": cursor}),
    )
    .await;
    let lines = read["lines"].as_array().expect("lines");
    assert!(lines.contains(&json!("IMPORTANT-OUTPUT")), "{read}");
    assert!(lines.contains(&json!("40")), "{read}");
    assert_eq!(read["lines_missed"], false, "{read}");
    let args =
        json!({"pane_id": pane, "patterns": ["IMPORTANT-OUTPUT"], "since": cursor, "timeout": 2});
    let wait = ok(&svc, "wait_for_text", args).await;
    assert_eq!(wait["outcome"], "matched", "{wait}");
    // The next read goes on from there: nothing again.
    let next = json!({"pane_id": pane, "cursor": read["cursor"]});
    let again = ok(&svc, "capture_since", next).await;
    assert_eq!(again["lines"], json!([]), "{again}");
}

/// `since: "input"` reads what the input printed before a `clear` wiped
/// it, and a shell back at its prompt counts (issue 33, `r3`: the wait for
/// the text timed out, and so did the wait for the prompt).
#[tokio::test]
async fn since_input_reads_what_a_clear_wiped() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    let keys = "printf 'IMPORTANT-%s\\n' OUTPUT; seq 1 5; clear; tmux wait-for -S cleared";
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": keys})).await;
    tmux.wait_for("cleared", BOUND).await;
    tmux.until_text(&pane, |t| t.trim() == "$").await;

    let args =
        json!({"pane_id": pane, "patterns": ["IMPORTANT-OUTPUT"], "since": "input", "timeout": 2});
    let wait = ok(&svc, "wait_for_text", args).await;
    assert_eq!(wait["outcome"], "matched", "{wait}");
    let args = json!({"pane_id": pane, "states": ["prompt"], "since": "input", "timeout": 5});
    let state = ok(&svc, "wait_for_state", args).await;
    assert_eq!(state["state"], "prompt", "{state}");
}

/// capture_since from run_command's cursor returns what the pane printed
/// after the command (issue 33, `r2`: the first read said nothing was new,
/// and only a second call returned it).
#[tokio::test]
async fn a_run_command_cursor_reads_what_followed_at_once() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    let run = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "true"}),
    )
    .await;
    assert_eq!(run["exit_status"], 0, "{run}");
    let cursor = run["cursor"].as_str().expect("a cursor").to_owned();
    let keys = "echo LATER-$((1+1)); tmux wait-for -S later";
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": keys})).await;
    tmux.wait_for("later", BOUND).await;

    let read = ok(
        &svc,
        "capture_since",
        json!({"pane_id": pane, "cursor": cursor}),
    )
    .await;
    let lines = read["lines"].as_array().expect("lines");
    assert!(lines.contains(&json!("LATER-2")), "{read}");
}

#[tokio::test]
async fn a_run_command_cursor_starts_a_wait_after_its_output() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let run = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "echo RUN-$((0+1))", "timeout": 20}),
    )
    .await;
    assert_eq!(run["output"], json!(["RUN-1"]), "{run}");
    let cursor = run["cursor"].as_str().expect("a cursor").to_owned();
    tmux.cmd(&[
        "send-keys",
        "-t",
        &pane,
        "echo AFTER-$((1+1)); tmux wait-for -S after",
        "Enter",
    ]);
    tmux.wait_for("after", BOUND).await;
    let args = json!({"pane_id": pane, "patterns": ["run-1", "after-2"],
                      "since": cursor, "timeout": 10});
    let result = ok(&svc, "wait_for_text", args).await;
    assert_eq!(
        result["matched_index"], 1,
        "RUN-1 was what run_command read: {result}"
    );
    assert!(
        result["elapsed_seconds"].as_f64().unwrap() < 2.0,
        "{result}"
    );
}
