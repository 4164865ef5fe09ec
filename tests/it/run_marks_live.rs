//! A shell that emits OSC 133 marks: run_command types the command alone
//! and reads its output and status from the marks; capture_pane tells the
//! last command's output of a pane nobody drove, from the recording or
//! (tmux ≥ 3.7) from tmux's own marks.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tmux_mcp::tools::TmuxService;
use tokio_util::sync::CancellationToken;

use crate::pane_clean_live::{at_prompt, shell_pane, transcript};
use crate::support::{BOUND, PrivateTmux, call, err, ok, start_armed};

/// bash with no config that marks its prompt (`A`, `B`), each command's
/// output (`C`, from `PS0`) and its end with the status (`D`, from
/// `PROMPT_COMMAND`), as bash's integration scripts do.
const MARKED_BASH: &str = r#"env PS1='\[\e]133;A\a\]$ \[\e]133;B\a\]' PS0='\e]133;C\a' PROMPT_COMMAND='printf "\033]133;D;%s\007" $?' bash --norc --noprofile"#;

/// The first two commands in the live shell of a marking shell: the
/// first is wrapped (before it nothing of the pane was recorded, so its
/// marks were not seen yet; the prompt after it is), the second is read
/// by the marks. Returns the second's result.
async fn first_marked_run(svc: &TmuxService, pane: &str) -> Value {
    let live = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10, "in_subshell": false});
    let r = ok(svc, "run_command", live("echo first")).await;
    assert_eq!(r["output"], json!(["first"]), "{r}");
    let r = ok(svc, "run_command", live("echo marked; (exit 4)")).await;
    let got = (
        r["exit_status"].clone(),
        r["output"].clone(),
        r["shell_marks"].clone(),
    );
    assert_eq!(got, (json!(4), json!(["marked"]), json!(true)), "{r}");
    r
}

/// The screen once the pane is back at its prompt: `typed` (what the
/// commands typed and printed) shows, and none of our plumbing (the 6973
/// markers, a wrapper's `printf`).
async fn assert_screen_shows_no_plumbing(tmux: &PrivateTmux, pane: &str, typed: &str) {
    let lines = at_prompt(tmux, pane).await.join("\n");
    assert!(lines.contains(typed), "{lines}");
    assert!(
        !lines.contains("6973") && !lines.contains("printf '"),
        "{lines}"
    );
}

#[tokio::test]
async fn run_command_reads_a_marking_shell_with_no_wrapper() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "marked", MARKED_BASH).await;
    let live = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10, "in_subshell": false});
    let r = first_marked_run(&svc, &pane).await;
    let page = ok(&svc, "capture_since", json!({"cursor": r["cursor"]})).await;
    assert_eq!(
        page["lines"],
        json!(["marked"]),
        "the cursor spans the output: {page}"
    );
    // Typed as is: the shell's history holds the command itself.
    let r = ok(&svc, "run_command", live("history 2")).await;
    let history = r["output"].as_array().unwrap();
    assert!(
        history[0]
            .as_str()
            .unwrap()
            .ends_with("  echo marked; (exit 4)"),
        "{r}"
    );
    let r = ok(&svc, "run_command", live("printf no-newline")).await;
    assert_eq!(
        (r["exit_status"].clone(), r["output"].clone()),
        (json!(0), json!(["no-newline"]))
    );
    ok(&svc, "run_command", live("cd /")).await;
    let r = ok(&svc, "run_command", live("pwd")).await;
    assert_eq!(
        (r["output"].clone(), r["shell_marks"].clone()),
        (json!(["/"]), json!(true))
    );
    // The subshell still needs the wrapper, marks or not; the last command
    // read back is what the wrapper ran, with its status (not the line's).
    let sub = json!({"pane_id": pane, "command": "cd /tmp; echo sub; exit 3", "timeout": 10});
    let r = ok(&svc, "run_command", sub).await;
    let got = (
        r["exit_status"].clone(),
        r["output"].clone(),
        r.get("shell_marks"),
    );
    assert_eq!(got, (json!(3), json!(["sub"]), None));
    let last = ok(
        &svc,
        "capture_pane",
        json!({"pane_id": pane, "last_command": true}),
    )
    .await;
    assert_eq!(last, "[last command: exit status 3]\nsub");

    // A command that stops the marking of commands (the prompt's marks
    // stay) ends at the next prompt, with no status, and the wrapper is
    // used from then on.
    let r = ok(&svc, "run_command", live("PS0=; PROMPT_COMMAND=")).await;
    let got = (
        r["exit_status"].clone(),
        r["timed_out"].clone(),
        r["shell_marks"].clone(),
    );
    assert_eq!(got, (json!(null), json!(false), json!(true)), "{r}");
    assert!(
        r["note"].as_str().unwrap().contains("no exit status"),
        "{r}"
    );
    let r = ok(&svc, "run_command", live("echo wrapped; (exit 5)")).await;
    let got = (
        r["exit_status"].clone(),
        r["output"].clone(),
        r.get("shell_marks"),
    );
    assert_eq!(got, (json!(5), json!(["wrapped"]), None), "{r}");

    // suppress_history's leading space is typed, and shows.
    let typed = "$  echo marked; (exit 4)\nmarked\n$  history 2";
    assert_screen_shows_no_plumbing(&tmux, &pane, typed).await;
}

/// The output of a command typed by someone else, read back from the
/// recording while the pane was watched: exact, with its status.
#[tokio::test]
async fn the_last_command_of_a_watched_pane_comes_from_its_recording() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "marked", MARKED_BASH).await;
    let watching = json!({"pane_id": pane, "patterns": ["never-printed"], "timeout": 10});
    let cancel = CancellationToken::new();
    let wait = start_armed(&svc, "wait_for_text", watching, cancel.clone()).await;
    tmux.cmd(&["send-keys", "-t", &pane, "seq 3; false", "Enter"]);
    let last = json!({"pane_id": pane, "last_command": true});
    let deadline = Instant::now() + BOUND;
    // Until the command has ended; before its first mark nothing is known.
    let text = loop {
        let result = call(&svc, "capture_pane", last.clone()).await;
        let text = result.content[0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if text.starts_with("[last command: exit status") || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(text, "[last command: exit status 1]\n1\n2\n3");
    let bounded = json!({"pane_id": pane, "last_command": true, "max_lines": 1});
    let text = ok(&svc, "capture_pane", bounded).await;
    assert_eq!(
        text,
        "[last command: exit status 1]\n[... truncated 2 lines ...]\n3"
    );
    cancel.cancel();
    let _ = wait.await;
}

/// tmux ≥ 3.7 keeps the marks per line: a pane never watched still tells
/// its last command's output (whole lines, no status). Earlier releases
/// cannot, and the error says why.
#[tokio::test]
async fn the_last_command_of_an_unwatched_pane_comes_from_tmux_3_7() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "unwatched",
        "-P",
        "-F",
        "#{pane_id}",
        MARKED_BASH,
    ]);
    let pane = pane.trim().to_owned();
    let deadline = Instant::now() + BOUND;
    while transcript(&tmux, &pane).last().map(String::as_str) != Some("$") {
        assert!(Instant::now() < deadline, "no prompt");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tmux.cmd(&["send-keys", "-t", &pane, "seq 3; false", "Enter"]);
    while transcript(&tmux, &pane).join("\n") != "$ seq 3; false\n1\n2\n3\n$" {
        assert!(Instant::now() < deadline, "{:?}", transcript(&tmux, &pane));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let last = json!({"pane_id": pane, "last_command": true});
    if keeps_line_marks(&tmux.cmd(&["-V"])) {
        let text = ok(&svc, "capture_pane", last).await;
        assert_eq!(text, "[last command: ended, exit status unknown]\n1\n2\n3");
    } else {
        let text = err(&svc, "capture_pane", last).await;
        assert!(
            text.contains("does not keep them per line (3.7 does)"),
            "{text}"
        );
    }
}

/// Is `tmux -V` (`tmux 3.7b`) 3.7 or later?
fn keeps_line_marks(version: &str) -> bool {
    let digits = version
        .trim()
        .trim_start_matches(|c: char| !c.is_ascii_digit());
    let mut parts = digits.split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts
        .next()
        .map(|p| {
            p.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    (major, minor) >= (3, 7)
}

/// zsh with its hooks marking prompt and commands (`precmd`, `preexec`),
/// as zsh's integration scripts do: the same, with no wrapper.
#[tokio::test]
async fn run_command_reads_a_marking_zsh_with_no_wrapper() {
    if !crate::support::shell_installed("zsh", "shell marks") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tmux-mcp-zsh-marks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rc = r#"PS1=$'%{\e]133;A\a%}$ %{\e]133;B\a%}'
precmd() { print -n "\e]133;D;$?\a" }
preexec() { print -n "\e]133;C\a" }
"#;
    std::fs::write(dir.join(".zshrc"), rc).unwrap();
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let start = format!("env ZDOTDIR={} zsh", dir.display());
    let pane = shell_pane(&tmux, "marked-zsh", &start).await;
    let live = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10, "in_subshell": false});
    first_marked_run(&svc, &pane).await;
    // zsh's PROMPT_SP comes before its D mark, and is not output.
    let r = ok(&svc, "run_command", live("printf no-newline")).await;
    let got = (r["output"].clone(), r["shell_marks"].clone());
    assert_eq!(got, (json!(["no-newline"]), json!(true)), "{r}");
    ok(&svc, "run_command", live("cd /")).await;
    let r = ok(&svc, "run_command", live("pwd")).await;
    assert_eq!(
        (r["output"].clone(), r["shell_marks"].clone()),
        (json!(["/"]), json!(true))
    );
    assert_screen_shows_no_plumbing(&tmux, &pane, "$  echo marked; (exit 4)\nmarked\n").await;
    let _ = std::fs::remove_dir_all(&dir);
}
