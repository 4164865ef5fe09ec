//! wait_for_text, run_command and capture_since against a live private tmux.
//! Waits are armed before the output they expect is produced: a test learns
//! that a wait is armed from its first progress notification, not from a sleep.

use std::time::Duration;

use crate::support::{
    BOUND, PrivateTmux, RESULT_BOUND, err, finish, next_report, ok, ok_sized, shell_installed,
    start_armed, start_with_progress,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn wait_for_text_sees_only_output_written_after_it_began() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo OLD-$((40+2)); tmux wait-for -S old"}),
    )
    .await;
    tmux.wait_for("old", BOUND).await;

    let args = json!({"pane_id": pane, "patterns": ["old-42", "NEW-7"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo NEW-$((3+4))"}),
    )
    .await;
    let result = finish(wait).await;
    assert_eq!(result["found"], true);
    assert_eq!(result["outcome"], "matched");
    assert_eq!(
        result["matched_index"], 1,
        "OLD-42 was on screen before: it must not match"
    );
    // The shell may print its prompt after the echo of the typed line and
    // before the output, so the line can read "$ NEW-7": what the screen shows.
    let matched = result["matched_lines"].as_array().unwrap();
    assert!(
        matched.len() == 1 && matched[0].as_str().unwrap().ends_with("NEW-7"),
        "{result}"
    );
    assert_eq!(result["matched_at_entry"], false);
    assert_eq!(result["saw_new_output"], true);
    assert!(result["effective_timeout"].as_f64().unwrap() <= 10.0);
}

#[tokio::test]
async fn wait_for_text_reports_text_that_was_only_there_at_entry() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo ONSCREEN-$((1+1)); tmux wait-for -S shown"}),
    )
    .await;
    tmux.wait_for("shown", BOUND).await;
    let result = ok(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["onscreen-2"], "timeout": 0.3}),
    )
    .await;
    assert_eq!(result["found"], false);
    assert_eq!(result["outcome"], "timeout");
    assert_eq!(result["matched_at_entry"], true);
}

#[tokio::test]
async fn stop_patterns_and_any_output() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let args = json!({"pane_id": pane, "patterns": ["never-printed"], "stop": ["FAIL-0ED"], "match_case": true});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo FAIL-$((0))ED"}),
    )
    .await;
    let result = finish(wait).await;
    assert_eq!(result["outcome"], "stopped");
    assert_eq!(result["found"], false);
    assert_eq!(result["matched_index"], 0);

    let wait = start_armed(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane}),
        CancellationToken::new(),
    )
    .await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "x", "enter": false}),
    )
    .await;
    let result = finish(wait).await;
    assert_eq!(result["outcome"], "any_output");
    assert_eq!(result["found"], true);
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "C-u", "enter": false}),
    )
    .await;
}

#[tokio::test]
async fn wait_for_text_works_when_scrollback_is_full() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    tmux.cmd(&["set-option", "-g", "history-limit", "50"]);
    let window = ok(&svc, "create_window", json!({"session_name": "main"})).await;
    let pane2 = window["active_pane_id"].as_str().unwrap().to_owned();
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane2, "keys": "seq 1 500; tmux wait-for -S filled"}),
    )
    .await;
    tmux.wait_for("filled", BOUND).await;
    let args = json!({"pane_id": pane2, "patterns": ["DONE-5"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane2, "keys": "seq 1 300; echo DONE-$((2+3))"}),
    )
    .await;
    let result = finish(wait).await;
    assert_eq!(result["found"], true, "{result}");
    let _ = pane;
}

#[tokio::test]
async fn wait_for_text_ends_on_cancel_and_on_pane_death() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let cancel = CancellationToken::new();
    let wait = start_armed(
        &svc,
        "wait_for_text",
        json!({"pane_id": pane, "patterns": ["x-never"], "timeout": 30}),
        cancel.clone(),
    )
    .await;
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(2), wait)
        .await
        .expect("cancel ends it at once")
        .unwrap();
    assert!(result.is_error);

    let split = ok(&svc, "split_window", json!({"pane_id": pane})).await;
    let doomed = split["pane_id"].as_str().unwrap().to_owned();
    let wait = start_armed(
        &svc,
        "wait_for_text",
        json!({"pane_id": doomed, "patterns": ["x-never"], "timeout": 30}),
        CancellationToken::new(),
    )
    .await;
    tmux.cmd(&["kill-pane", "-t", &doomed]);
    let result = tokio::time::timeout(BOUND, wait)
        .await
        .expect("pane death ends it")
        .unwrap();
    assert!(result.is_error);
    let text = result.content[0]["text"].as_str().unwrap();
    assert!(text.contains("closed") || text.contains("exited"), "{text}");
}

#[tokio::test]
async fn wait_for_text_validates_its_arguments() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    assert!(
        err(
            &svc,
            "wait_for_text",
            json!({"pane_id": pane, "patterns": []})
        )
        .await
        .contains("non-empty list")
    );
    assert!(
        err(
            &svc,
            "wait_for_text",
            json!({"pane_id": pane, "patterns": [""]})
        )
        .await
        .contains("non-empty string")
    );
    assert!(
        err(
            &svc,
            "wait_for_text",
            json!({"pane_id": pane, "patterns": ["("], "regex": true})
        )
        .await
        .contains("Invalid regex")
    );
    assert!(
        err(
            &svc,
            "wait_for_text",
            json!({"pane_id": pane, "timeout": 0})
        )
        .await
        .contains("positive")
    );
    assert!(
        err(
            &svc,
            "wait_for_text",
            json!({"pane_id": pane, "interval": 0.001})
        )
        .await
        .contains("interval")
    );
    assert!(
        err(&svc, "wait_for_text", json!({"pane_id": "%999"}))
            .await
            .contains("Pane not found")
    );
}

#[tokio::test]
async fn run_command_returns_exact_output_and_status() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let run = |cmd: &str| json!({"pane_id": pane, "command": cmd, "timeout": 10});

    let r = ok(&svc, "run_command", run("true")).await;
    assert_eq!(
        (
            r["exit_status"].clone(),
            r["output"].clone(),
            r["timed_out"].clone()
        ),
        (json!(0), json!([]), json!(false))
    );
    let r = ok(&svc, "run_command", run("echo hello; echo 'wor ld'")).await;
    assert_eq!(r["output"], json!(["hello", "wor ld"]));
    let r = ok(&svc, "run_command", run("printf no-newline")).await;
    assert_eq!(r["output"], json!(["no-newline"]));
    let r = ok(&svc, "run_command", run("exit 3")).await;
    assert_eq!(r["exit_status"], 3);
    // The pane's shell survived `exit 3`.
    let r = ok(&svc, "run_command", run("echo still-$((1+1))")).await;
    assert_eq!(
        (r["exit_status"].clone(), r["output"].clone()),
        (json!(0), json!(["still-2"]))
    );
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "seq 1 10", "max_lines": 3}),
    )
    .await;
    // At most max_lines lines, the one that counts those left out included.
    let gap = "[... 8 lines left out ...]";
    assert_eq!(
        (r["output"].clone(), r["output_truncated_lines"].clone()),
        (json!(["1", gap, "10"]), json!(8))
    );
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "seq 1 300", "max_lines": null}),
    )
    .await;
    assert_eq!(r["output"].as_array().unwrap().len(), 300);
    assert_eq!(r["output_truncated"], false);
}

/// A flood comes back as a screenful, head and tail, with an exact count
/// between; the result's cursor pages exactly the command's output.
#[tokio::test]
async fn run_command_output_is_a_screenful_and_pages_exactly() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let height: usize = tmux
        .cmd(&["display-message", "-p", "-t", &pane, "#{pane_height}"])
        .trim()
        .parse()
        .unwrap();
    let args = json!({"pane_id": pane, "command": "seq 1 20000", "timeout": 20});
    let r = ok(&svc, "run_command", args).await;
    let out: Vec<&str> = r["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // A screenful of lines, the one that counts those left out included.
    let kept = height.min(100) - 1;
    assert_eq!(out.len(), kept + 1, "{out:?}");
    let head = kept.div_ceil(2);
    let expected_head: Vec<String> = (1..=head).map(|i| i.to_string()).collect();
    assert_eq!(out[..head], expected_head[..]);
    assert_eq!(*out.last().unwrap(), "20000");
    let left = 20000 - kept;
    assert_eq!(r["output_truncated_lines"], json!(left));
    assert!(
        out[head].contains(&format!("{left} lines left out")),
        "{}",
        out[head]
    );
    assert_eq!(r["exit_status"], 0);

    // Page the whole output from the cursor: every line once, in order.
    let mut cursor = r["cursor"].as_str().expect("a cursor").to_owned();
    let mut all: Vec<String> = Vec::new();
    for _ in 0..1000 {
        let (page, size) = ok_sized(&svc, "capture_since", json!({"cursor": cursor})).await;
        assert!(size < RESULT_BOUND, "a page of {size} bytes");
        let lines = page["lines"].as_array().unwrap();
        cursor = page["cursor"].as_str().unwrap().to_owned();
        all.extend(lines.iter().map(|l| l.as_str().unwrap().to_owned()));
        if page["truncated"] == false {
            break;
        }
    }
    let expected: Vec<String> = (1..=20000).map(|i| i.to_string()).collect();
    assert_eq!(
        all.len(),
        expected.len(),
        "{:?} {:?}",
        &all[..3],
        &all[all.len() - 3..]
    );
    assert!(all == expected, "the pages are not exactly the output");
}

#[tokio::test]
async fn run_command_multiline_heredoc_bash_and_timeout() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let heredoc = "cat <<'EOF'\nline one\n$HOME stays literal\nEOF";
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": heredoc, "suppress_history": false}),
    )
    .await;
    assert_eq!(r["output"], json!(["line one", "$HOME stays literal"]));
    assert!(
        err(
            &svc,
            "run_command",
            json!({"pane_id": pane, "command": heredoc})
        )
        .await
        .contains("single line")
    );
    assert!(
        err(
            &svc,
            "run_command",
            json!({"pane_id": pane, "command": "  "})
        )
        .await
        .contains("empty")
    );

    let bash = ok(
        &svc,
        "split_window",
        json!({"pane_id": pane, "shell": "env PS1='# ' bash --norc --noprofile"}),
    )
    .await;
    let bash = bash["pane_id"].as_str().unwrap().to_owned();
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": bash, "command": "echo \"in $0\"; false", "timeout": 10}),
    )
    .await;
    assert_eq!(
        (r["exit_status"].clone(), r["output"].clone()),
        (json!(1), json!(["in bash"]))
    );

    let r = ok(&svc, "run_command", json!({"pane_id": pane, "command": "echo started; tmux wait-for never-signalled", "timeout": 2.0})).await;
    assert_eq!(
        (r["timed_out"].clone(), r["exit_status"].clone()),
        (json!(true), json!(null))
    );
    assert_eq!(r["output"], json!(["started"]));
    tmux.cmd(&["wait-for", "-S", "never-signalled"]);
}

#[tokio::test]
async fn capture_since_returns_each_output_once() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    assert_eq!(first["lines_missed"], false);

    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "clear; printf 'a-%s\\n' 1 2 3; tmux wait-for -S printed"}),
    )
    .await;
    tmux.wait_for("printed", BOUND).await;
    let second = ok(&svc, "capture_since", json!({"cursor": cursor})).await;
    let lines: Vec<&str> = second["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let printed: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_start_matches("$ "))
        .filter(|l| l.starts_with("a-"))
        .collect();
    assert_eq!(printed, ["a-1", "a-2", "a-3"], "{second}");
    let cursor = second["cursor"].as_str().unwrap().to_owned();

    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "printf 'b-%s\\n' 9; tmux wait-for -S again"}),
    )
    .await;
    tmux.wait_for("again", BOUND).await;
    let third = ok(
        &svc,
        "capture_since",
        json!({"cursor": cursor, "pane_id": pane}),
    )
    .await;
    let lines: Vec<&str> = third["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        lines.iter().any(|l| l.ends_with("b-9")) && !lines.iter().any(|l| l.contains("a-")),
        "{lines:?}"
    );

    assert!(
        err(&svc, "capture_since", json!({"cursor": "junk"}))
            .await
            .contains("invalid capture_since cursor")
    );
    let other = ok(&svc, "split_window", json!({"pane_id": pane})).await;
    let mismatch = json!({"cursor": third["cursor"], "pane_id": other["pane_id"]});
    assert!(
        err(&svc, "capture_since", mismatch)
            .await
            .contains("does not match")
    );
}

/// zsh and fish, when installed (CI installs both).
#[tokio::test]
async fn run_command_in_zsh_and_fish_when_installed() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    // Each shell replaces a plain sh and announces itself with a line only
    // it can print (the typed text shows the unexpanded form), so the test
    // knows the shell runs before it types: run_command picks its syntax
    // from the pane's current command.
    let shells = [
        (
            "zsh",
            "exec zsh -f -c 'echo zsh-$((40+2))-ready; exec zsh -f'",
            "zsh-42-ready",
        ),
        (
            "fish",
            "exec fish --no-config -C 'echo fish-(math 40 + 2)-ready'",
            "fish-42-ready",
        ),
    ];
    for (shell, start, ready) in shells {
        if !shell_installed(shell, "run_command") {
            continue;
        }
        let split = ok(&svc, "split_window", json!({"pane_id": pane})).await;
        let id = split["pane_id"].as_str().unwrap().to_owned();
        let args = json!({"pane_id": id, "patterns": [ready], "timeout": 10});
        let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
        ok(&svc, "send_keys", json!({"pane_id": id, "keys": start})).await;
        assert_eq!(finish(wait).await["found"], true, "{shell} did not start");
        let command = if shell == "fish" {
            "echo it\\'s-(math 6 \\* 7); exit 3"
        } else {
            "echo it\\'s-$((6*7)); exit 3"
        };
        let args = json!({"pane_id": id, "command": command, "timeout": 10});
        let r = ok(&svc, "run_command", args).await;
        let got = (r["exit_status"].clone(), r["output"].clone());
        assert_eq!(got, (json!(3), json!(["it's-42"])), "{shell}: {r}");
        let r = ok(
            &svc,
            "run_command",
            json!({"pane_id": id, "command": "echo still-here", "timeout": 10}),
        )
        .await;
        assert_eq!(
            r["output"],
            json!(["still-here"]),
            "{shell}: the shell survived exit 3"
        );
    }
}

/// The control client streaming a pane can go away (a user's
/// `detach-client`), and a pane can move to another session (tmux streams a
/// pane only to clients of its own session): a wait follows either way.
#[tokio::test]
async fn waits_survive_a_detached_client_and_a_moved_window() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let args = json!({"pane_id": pane, "patterns": ["BACK-7"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    tmux.cmd(&["detach-client", "-s", "main"]);
    tmux.cmd(&["send-keys", "-t", &pane, "echo BACK-$((3+4))", "Enter"]);
    let result = finish(wait).await;
    assert_eq!(result["found"], true, "{result}");

    tmux.cmd(&["new-session", "-d", "-s", "other"]);
    let window = ok(&svc, "create_window", json!({"session_name": "main"})).await;
    let moved = window["active_pane_id"].as_str().unwrap().to_owned();
    let args = json!({"pane_id": moved, "patterns": ["MOVED-9"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    let wid = window["window_id"].as_str().unwrap();
    tmux.cmd(&["move-window", "-s", wid, "-t", "other:"]);
    tmux.cmd(&["send-keys", "-t", &moved, "echo MOVED-$((4+5))", "Enter"]);
    let result = finish(wait).await;
    assert_eq!(result["found"], true, "{result}");
}

/// Text printed on the alternate screen (a full-screen program) does not
/// satisfy wait_for_text; the result says the pane was there, and a wait
/// that times out because of it says `alternate_screen`.
#[tokio::test]
async fn the_alternate_screen_is_not_matched() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    // Entered during the wait; text after leaving it matches again.
    let args = json!({"pane_id": pane, "patterns": ["ALT-42", "MAIN-3"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    let keys =
        "printf '\\033[?1049h'; echo ALT-$((6*7)); printf '\\033[?1049l'; echo MAIN-$((1+2))";
    tmux.cmd(&["send-keys", "-t", &pane, keys, "Enter"]);
    let result = finish(wait).await;
    assert_eq!(result["outcome"], "matched", "{result}");
    assert_eq!(
        result["matched_index"], 1,
        "ALT-42 was on the alternate screen: {result}"
    );
    assert_eq!(result["alternate_screen"], true, "{result}");

    // Entered during the wait, and still there at the timeout (time enough
    // for the shell to get there first on a loaded machine).
    let args = json!({"pane_id": pane, "patterns": ["ALT-42"], "timeout": 3});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    let keys = "printf '\\033[?1049h'; echo ALT-$((6*7)); tmux wait-for -S entered";
    tmux.cmd(&["send-keys", "-t", &pane, keys, "Enter"]);
    tmux.wait_for("entered", BOUND).await;
    let result = finish(wait).await;
    assert_eq!(result["found"], false, "{result}");
    assert_eq!(result["outcome"], "alternate_screen", "{result}");
    assert_eq!(result["alternate_screen"], true, "{result}");

    // Already there when the wait began: new text there is not matched.
    let args = json!({"pane_id": pane, "patterns": ["ALT-8"], "timeout": 1});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    tmux.cmd(&["send-keys", "-t", &pane, "echo ALT-$((4+4))", "Enter"]);
    let result = finish(wait).await;
    assert_eq!(result["found"], false, "{result}");
    assert_eq!(result["outcome"], "alternate_screen", "{result}");
    assert_eq!(result["alternate_screen"], true, "{result}");
}

/// A cursor does not survive a respawn (same pane id, a new process): the
/// next call says lines were missed, and answers with the new screen.
#[tokio::test]
async fn a_capture_since_cursor_does_not_survive_a_respawn() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let cursor = first["cursor"].as_str().unwrap().to_owned();
    tmux.cmd(&[
        "respawn-pane",
        "-k",
        "-t",
        &pane,
        "echo RESPAWNED-$((2+3)); tmux wait-for -S respawned; exec sh",
    ]);
    tmux.wait_for("respawned", BOUND).await;
    let after = ok(&svc, "capture_since", json!({"cursor": cursor})).await;
    assert_eq!(after["lines_missed"], true, "{after}");
    assert_eq!(after["pane_id"], pane.as_str());
    let lines = after["lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| l == "RESPAWNED-5"),
        "the new screen: {after}"
    );

    // The cursor it returned is continuous again.
    let cursor = after["cursor"].as_str().unwrap().to_owned();
    tmux.cmd(&[
        "send-keys",
        "-t",
        &pane,
        "echo AGAIN-$((1+1)); tmux wait-for -S again",
        "Enter",
    ]);
    tmux.wait_for("again", BOUND).await;
    let next = ok(&svc, "capture_since", json!({"cursor": cursor})).await;
    assert_eq!(next["lines_missed"], false, "{next}");
    // Keys typed before the new sh drew its prompt are echoed by the tty,
    // so the output may follow the prompt on its line ("# AGAIN-2").
    let said = |l: &Value| l.as_str().is_some_and(|l| l.ends_with("AGAIN-2"));
    assert!(next["lines"].as_array().unwrap().iter().any(said), "{next}");
}

#[tokio::test]
async fn run_command_reports_progress_while_the_command_runs() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    // The command runs until the test releases it: the reports cannot be
    // explained by a command that merely ended late.
    let args =
        json!({"pane_id": pane, "command": "tmux wait-for release; echo RELEASED", "timeout": 30});
    let (call, mut progress) =
        start_with_progress(&svc, "run_command", args, CancellationToken::new());
    let typed = next_report(&mut progress).await;
    assert_eq!(typed["progress"], 0.0, "{typed}");
    assert_eq!(typed["total"], 30.0, "{typed}");
    assert_eq!(
        typed["message"],
        format!("Waiting on pane {pane}: command typed")
    );
    let tick = next_report(&mut progress).await;
    let message = tick["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Waiting on pane {pane}: "))
            && message.contains("s elapsed, "),
        "{tick}"
    );
    assert!(tick["progress"].as_f64().unwrap() >= 1.0, "{tick}");
    tmux.cmd(&["wait-for", "-S", "release"]);
    let result = finish(call).await;
    assert_eq!(result["exit_status"], 0, "{result}");
    assert_eq!(result["output"], json!(["RELEASED"]), "{result}");
}
