//! send_prompt against programs that read a paste: a stand-in for an agent
//! CLI's input box (tests/programs/input-box.py: raw mode, bracketed paste,
//! an Enter within 100 ms of a paste ignored), an input box that re-draws
//! itself after every key and drops Enters or takes them as newlines
//! (tests/programs/redraw-box.py, which logs what it received), shells and
//! a REPL at their prompt, and a password prompt.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{BOUND, PrivateTmux, ok};

/// The pane's whole history and screen.
fn history(tmux: &PrivateTmux, pane: &str) -> String {
    tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", pane])
}

/// A window running the input-box stand-in, once it is ready.
async fn input_box(tmux: &PrivateTmux) -> String {
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/input-box.py");
    let args = [
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "python3",
        program,
    ];
    let pane = tmux.cmd(&args).trim().to_owned();
    tmux.until_text(&pane, |t| t.contains("> ready")).await;
    pane
}

fn submitted_line(message: &str) -> String {
    // A paste carries newlines as carriage returns, as a terminal does.
    let bytes = message.replace('\n', "\r");
    let digest = Sha256::digest(bytes.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("SUBMITTED {} {hex}", bytes.len())
}

#[tokio::test]
async fn a_message_reaches_an_input_box_once_whole_and_submitted() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = input_box(&tmux).await;

    let short = "first line\nsecond line\nthird: done";
    let big: String = (0..4200)
        .map(|i| format!("line {i:05} of a long prompt, padded to fifty bytes\n"))
        .collect();
    assert!(big.len() > 200 * 1024);
    for message in [short, big.as_str()] {
        let r = ok(
            &svc,
            "send_prompt",
            json!({"pane_id": pane, "text": message}),
        )
        .await;
        assert_eq!(r["outcome"], "submitted", "{r}");
        assert!(r["attempts"].as_i64().unwrap() >= 1, "{r}");
        let want = submitted_line(message);
        let text = tmux.until_text(&pane, |t| t.contains(&want)).await;
        assert_eq!(text.matches(&want).count(), 1, "{text}");
    }
    let text = history(&tmux, &pane);
    assert_eq!(text.matches("SUBMITTED").count(), 2, "{text}");
}

/// bash and zsh at their prompt (bracketed paste on) and the python3
/// REPL run a message once (the REPL's, two lines, as one edit).
#[tokio::test]
async fn shells_and_a_repl_run_the_message_once() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let programs: [(&str, &[&str], &str); 3] = [
        (
            "bash",
            &["bash", "--norc", "--noprofile"],
            "echo sp-$((6*7))-bash",
        ),
        ("zsh", &["zsh", "-f"], "echo sp-$((6*7))-zsh"),
        (
            "python3",
            &["python3", "-q"],
            "x = 6 * 7\nprint(f'sp-{x}-python3')",
        ),
    ];
    for (name, argv, message) in programs {
        if !crate::support::shell_installed(name, "send_prompt") {
            continue;
        }
        let mut args = vec!["new-window", "-d", "-P", "-F", "#{pane_id}"];
        args.extend_from_slice(argv);
        let pane = tmux.cmd(&args).trim().to_owned();
        tmux.until_foreground(&pane, name).await;
        let r = ok(
            &svc,
            "send_prompt",
            json!({"pane_id": pane, "text": message}),
        )
        .await;
        assert_eq!(r["outcome"], "submitted", "{name}: {r}");
        assert_eq!(r["attempts"], 1, "{name}: {r}");
        let want = format!("sp-42-{name}");
        let text = tmux
            .until_text(&pane, |t| t.lines().any(|l| l.trim_end() == want))
            .await;
        let printed = text.lines().filter(|l| l.trim_end() == want).count();
        assert_eq!(printed, 1, "{name}:\n{text}");
    }
}

#[tokio::test]
async fn without_submit_the_text_waits_in_the_program() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = input_box(&tmux).await;
    let r = ok(
        &svc,
        "send_prompt",
        json!({"pane_id": pane, "text": "draft only", "submit": false}),
    )
    .await;
    assert_eq!(r["outcome"], "typed_not_submitted", "{r}");
    assert_eq!(r["attempts"], 0);
    tmux.until_text(&pane, |t| t.contains("[draft: 10 bytes]"))
        .await;
    assert!(!history(&tmux, &pane).contains("SUBMITTED"));
}

/// A window running tests/programs/redraw-box.py in `mode`, logging to a
/// file of its own, once it has drawn its box.
async fn redraw_box(tmux: &PrivateTmux, mode: &str) -> (String, PathBuf) {
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/redraw-box.py");
    let log = std::env::temp_dir().join(format!("{}-{mode}.log", tmux.name()));
    let _ = std::fs::remove_file(&log);
    let log_arg = log.to_str().unwrap();
    let args = [
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "python3",
        program,
        log_arg,
        mode,
    ];
    let pane = tmux.cmd(&args).trim().to_owned();
    until_logged(&log, |l| l.contains(&"READY".to_owned())).await;
    (pane, log)
}

/// Re-reads the box's log until `cond` holds on its lines; fails after
/// [`BOUND`]. A file has no event to wait on.
async fn until_logged(log: &Path, cond: impl Fn(&[String]) -> bool) -> Vec<String> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if cond(&lines) {
            return lines;
        }
        assert!(started.elapsed() < BOUND, "the log never said it:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sends `message` to the box in `mode` and compares the outcome with
/// what the box logged: once every Enter the call counted has reached it,
/// the message was received exactly when the call says `submitted`.
async fn prompt_box(tmux: &PrivateTmux, mode: &str, message: &str) -> (Value, Vec<String>) {
    let svc = tmux.service();
    let (pane, log) = redraw_box(tmux, mode).await;
    let r = ok(
        &svc,
        "send_prompt",
        json!({"pane_id": pane, "text": message}),
    )
    .await;
    let attempts = r["attempts"].as_u64().unwrap() as usize;
    let enter = |l: &String| {
        ["DROP", "NEWLINE", "SUBMIT"]
            .iter()
            .any(|w| l.starts_with(w))
    };
    let lines = until_logged(&log, |ls| {
        ls.iter().filter(|l| enter(l)).count() >= attempts
    })
    .await;
    let _ = std::fs::remove_file(&log);
    let want = submitted_line(message).replace("SUBMITTED", "SUBMIT");
    let received = lines.iter().filter(|l| l.starts_with("SUBMIT")).count();
    assert!(received <= 1, "{mode}: {lines:?}");
    assert_eq!(
        r["outcome"] == "submitted",
        received == 1,
        "{mode}: {r} but the box logged {lines:?}"
    );
    if received == 1 {
        assert!(lines.contains(&want), "{mode}: {lines:?}");
    }
    (r, lines)
}

/// A box that re-draws on every key takes the first Enter, or drops the
/// first one (one that comes soon after the paste, or whichever comes, or
/// one soon after a paste it did not draw yet); each gets the message
/// once, and `attempts` counts the Enters it took.
#[tokio::test]
async fn a_box_that_redraws_and_drops_the_first_enter_gets_the_message_once() {
    let tmux = PrivateTmux::start();
    let message = "first line\nsecond line\nthird: done";
    let modes = [
        ("take", 1),
        ("drop-first", 2),
        ("drop-late", 2),
        ("quiet-paste", 2),
    ];
    for (mode, attempts) in modes {
        let (r, _) = prompt_box(&tmux, mode, message).await;
        assert_eq!(r["outcome"], "submitted", "{mode}: {r}");
        assert_eq!(r["attempts"], attempts, "{mode}: {r}");
    }
}

/// A box that drops every Enter, or takes it as a newline (a multi-line
/// box, or one that marks it `↵` after the text on the same row),
/// re-draws with the text still in it: typed, not submitted, after every
/// retry.
#[tokio::test]
async fn a_box_that_never_takes_enter_is_typed_not_submitted() {
    let tmux = PrivateTmux::start();
    for mode in ["drop-all", "newline", "newline-marked"] {
        for message in ["one line to send", "first line\nsecond line\nthird: done"] {
            let (r, lines) = prompt_box(&tmux, mode, message).await;
            assert_eq!(r["outcome"], "typed_not_submitted", "{mode}: {r}");
            assert_eq!(r["attempts"], 3, "{mode}: {r}");
            let word = if mode == "drop-all" {
                "DROP"
            } else {
                "NEWLINE"
            };
            assert_eq!(lines.iter().filter(|l| *l == word).count(), 3, "{lines:?}");
        }
    }
}

/// send_prompt's refusal of a password prompt says how the person reaches
/// the pane, as every input tool's does.
#[tokio::test]
async fn a_password_prompt_refusal_names_the_way_to_the_pane() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let program = "bash --norc -c 'read -r -s -p Password: x; echo \"len ${#x}\"'";
    tmux.cmd(&["send-keys", "-t", &pane, program, "Enter"]);
    let state = json!({"pane_id": pane, "states": ["secret"], "timeout": 10});
    assert_eq!(ok(&svc, "wait_for_state", state).await["state"], "secret");
    let r = ok(
        &svc,
        "send_prompt",
        json!({"pane_id": pane, "text": "guess", "timeout": 5}),
    )
    .await;
    assert_eq!(r["outcome"], "refused", "{r}");
    assert_eq!(r["attempts"], 0, "{r}");
    let note = r["note"].as_str().unwrap();
    let refused =
        crate::support::err(&svc, "send_keys", json!({"pane_id": pane, "keys": "x"})).await;
    assert!(note.contains(&format!("attach -t {pane}")), "{note}");
    assert!(note.contains("switch-client"), "{note}");
    assert_eq!(note, refused, "send_keys and send_prompt word it alike");
}
