//! No plumbing in the pane: after run_command, the pane's screen and
//! scrollback (read with the tmux CLI) hold what a person would have typed
//! and seen, in each shell, while exit status and output stay exact.

use std::time::Duration;

use crate::support::{PrivateTmux, finish, ok, shell_installed, start_armed};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(15);

/// Each shell with a one-character prompt, started with no user config.
const SHELLS: &[(&str, &str)] = &[
    ("sh", "env PS1='$ ' sh"),
    ("bash", "env PS1='$ ' bash --norc --noprofile"),
    ("zsh", "env PS1='$ ' zsh -f"),
    (
        "fish",
        "fish --no-config -C 'function fish_prompt; echo -n \"\\$ \"; end'",
    ),
];

/// The pane as tmux holds it: scrollback and screen, wrapped rows joined,
/// trailing blank rows left out.
pub(crate) fn transcript(tmux: &PrivateTmux, pane: &str) -> Vec<String> {
    let text = tmux.cmd(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-", "-E", "-"]);
    // tmux 3.7 keeps a tab as a tab; earlier releases as the spaces it drew.
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.replace('\t', "        ").trim_end().to_owned())
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// The transcript once the shell has drawn its prompt again (the result
/// of run_command may come back first).
pub(crate) async fn at_prompt(tmux: &PrivateTmux, pane: &str) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let lines = transcript(tmux, pane);
        if lines.last().is_some_and(|l| l.ends_with('$')) || tokio::time::Instant::now() > deadline
        {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Starts `start` in a new window and returns its pane once the shell
/// printed its prompt.
pub(crate) async fn shell_pane(tmux: &PrivateTmux, name: &str, start: &str) -> String {
    let pane = tmux.cmd(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-n",
        name,
        start,
    ]);
    let pane = pane.trim().to_owned();
    let deadline = tokio::time::Instant::now() + BOUND;
    while transcript(tmux, &pane).last().map(String::as_str) != Some("$") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} gave no prompt"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pane
}

#[tokio::test]
async fn the_pane_holds_only_what_a_person_would_have_seen() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    for &(shell, start) in SHELLS {
        if !shell_installed(shell, "the clean pane") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        let run = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10});
        let r = ok(&svc, "run_command", run("echo hello 'wor  ld'")).await;
        assert_eq!(
            (r["exit_status"].clone(), r["output"].clone()),
            (json!(0), json!(["hello wor  ld"])),
            "{shell}"
        );
        let r = ok(&svc, "run_command", run("printf no-newline")).await;
        assert_eq!(r["output"], json!(["no-newline"]), "{shell}");
        let r = ok(&svc, "run_command", run("exit 3")).await;
        assert_eq!(r["exit_status"], 3, "{shell}");
        let long = format!("echo {}", "x".repeat(230));
        let r = ok(&svc, "run_command", run(&long)).await;
        assert_eq!(r["output"], json!(["x".repeat(230)]), "{shell}");
        let r = ok(&svc, "run_command", run("echo \"é ü\"")).await;
        assert_eq!(r["output"], json!(["é ü"]), "{shell}");
        // Quotes and backslashes reach the shell as typed.
        let quoted = r"printf '%s|%s\n' 'it'\''s' 'a\b'";
        let r = ok(&svc, "run_command", run(quoted)).await;
        assert_eq!(r["output"], json!([r"it's|a\b"]), "{shell}");
        // zsh starts with an empty row (PROMPT_SP); zsh and fish mark
        // output without a final newline: their own doing.
        let mut lines = at_prompt(&tmux, &pane).await;
        if lines.first().is_some_and(String::is_empty) {
            lines.remove(0);
        }
        let mut expected = vec![
            "$ echo hello 'wor  ld'".to_owned(),
            "hello wor  ld".to_owned(),
            "$ printf no-newline".to_owned(),
            "no-newline$ exit 3".to_owned(),
            format!("$ {long}"),
            "x".repeat(230),
            "$ echo \"é ü\"".to_owned(),
            "é ü".to_owned(),
            format!("$ {quoted}"),
            r"it's|a\b".to_owned(),
            "$".to_owned(),
        ];
        if shell == "zsh" || shell == "fish" {
            let mark = lines[3].strip_prefix("no-newline").unwrap_or_default();
            assert!(["%", "#", "⏎"].contains(&mark), "{shell}: {lines:#?}");
            expected.splice(3..4, [format!("no-newline{mark}"), "$ exit 3".to_owned()]);
        }
        assert_eq!(lines, expected, "{shell}: the pane holds {lines:#?}");
        if shell == "fish" {
            continue;
        }
        // A multi-line command shows as typed, its lines one under another.
        tmux.cmd(&["clear-history", "-t", &pane]);
        ok(&svc, "run_command", run("clear")).await;
        let heredoc = "cat <<'EOF'\n\tline one\n$HOME stays literal\nEOF";
        let args = json!({"pane_id": pane, "command": heredoc, "suppress_history": false});
        let r = ok(&svc, "run_command", args).await;
        assert_eq!(
            r["output"],
            json!(["\tline one", "$HOME stays literal"]),
            "{shell}"
        );
        let lines = at_prompt(&tmux, &pane).await;
        let tail: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .skip_while(|l| !l.starts_with("$ cat"))
            .collect();
        let tab = "        line one";
        assert_eq!(
            tail,
            [
                "$ cat <<'EOF'",
                tab,
                "$HOME stays literal",
                "EOF",
                tab,
                "$HOME stays literal",
                "$"
            ],
            "{shell}: {lines:#?}"
        );
    }
}

/// A wait running beside run_command sees the command and its output, but
/// never the typed wrapper or a marker; nor do capture_pane and
/// snapshot_pane.
#[tokio::test]
async fn waits_and_captures_never_see_the_plumbing() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let since = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let args = json!({"pane_id": pane, "patterns": ["DONE-7"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    let run = json!({"pane_id": pane, "command": "echo DONE-$((3+4))", "timeout": 10});
    assert_eq!(
        ok(&svc, "run_command", run).await["output"],
        json!(["DONE-7"])
    );
    let waited = finish(wait).await;
    assert_eq!(waited["found"], true);
    let plumbing = |v: &Value| v.to_string().contains("6973") || v.to_string().contains("printf");
    assert!(
        !plumbing(&waited["tail"]) && !plumbing(&waited["matched_lines"]),
        "{waited}"
    );
    let screen = ok(&svc, "capture_pane", json!({"pane_id": pane})).await;
    let snap = ok(&svc, "snapshot_pane", json!({"pane_id": pane})).await;
    assert!(
        !plumbing(&screen) && !plumbing(&snap["content"]),
        "{screen} {snap}"
    );
    assert!(
        screen
            .as_str()
            .unwrap()
            .contains("$ echo DONE-$((3+4))\nDONE-7"),
        "{screen}"
    );
    let since = ok(&svc, "capture_since", json!({"cursor": since["cursor"]})).await;
    let lines = &since["lines"];
    assert!(
        !plumbing(lines) && lines.to_string().contains("DONE-7"),
        "{since}"
    );
}

/// A command run the moment a full-screen program quits (the person's
/// `q` in less) leaves the pane as a person would: the program's screen
/// gone, then the command and its output after the prompt, no line of the
/// wrapper (issue 33).
#[tokio::test]
async fn a_command_right_after_a_full_screen_program_leaves_no_wrapper() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    for &(shell, start) in &SHELLS[..3] {
        if !shell_installed(shell, "the clean pane after less") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        for round in 0..3 {
            tmux.cmd(&["send-keys", "-t", &pane, "less /etc/services", "Enter"]);
            until_alternate(&tmux, &pane, "1").await;
            tmux.cmd(&["send-keys", "-t", &pane, "q"]);
            let echo = format!("echo after-{round}");
            let run = json!({"pane_id": pane, "command": echo, "timeout": 10});
            let r = ok(&svc, "run_command", run).await;
            assert_eq!(r["output"], json!([format!("after-{round}")]), "{shell}");
            let lines = at_prompt(&tmux, &pane).await;
            let tail = &lines[lines.len().saturating_sub(3)..];
            let want = [
                format!("$ {echo}"),
                format!("after-{round}"),
                "$".to_owned(),
            ];
            assert_eq!(tail, want, "{shell} {round}: {lines:#?}");
            assert!(
                !lines
                    .iter()
                    .any(|l| l.contains("printf") || l.contains("6973")),
                "{shell} {round}: {lines:#?}"
            );
        }
    }
}

/// Waits until `pane`'s `alternate_on` reads `on`.
async fn until_alternate(tmux: &PrivateTmux, pane: &str, on: &str) {
    let deadline = tokio::time::Instant::now() + BOUND;
    while tmux
        .cmd(&["display-message", "-p", "-t", pane, "#{alternate_on}"])
        .trim()
        != on
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{pane}: alternate_on never {on}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
