//! run_command in the pane's own shell (`in_subshell=false`), in bash,
//! dash, zsh and fish; its refusal to type into a program that is not a
//! shell; and what it says of the pane when the command did not end.

use serde_json::{Value, json};

use crate::pane_clean_live::{at_prompt, shell_pane, transcript};
use crate::support::{BOUND, PrivateTmux, err, ok, shell_installed};
use tmux_mcp::drive::cursor::Cursor;
use tmux_mcp::process::{self, Activity};
use tmux_mcp::tmux::history::{self, Anchor};
use tmux_mcp::tools::TmuxService;

/// Each shell by the name tmux reports, with a one-character prompt and
/// no user config.
const SHELLS: &[(&str, &str)] = &[
    ("bash", "env PS1='$ ' bash --norc --noprofile"),
    ("dash", "env PS1='$ ' dash"),
    ("zsh", "env PS1='$ ' zsh -f"),
    (
        "fish",
        "fish --no-config -C 'function fish_prompt; echo -n \"\\$ \"; end'",
    ),
];

fn status_and_output(r: &Value) -> (Value, Value) {
    (r["exit_status"].clone(), r["output"].clone())
}

/// `cd` and `export` persist in the live shell and not in the subshell;
/// status and output stay exact; a failure does not end the shell; the
/// pane shows only what was typed and printed.
#[tokio::test]
async fn the_live_shell_keeps_cd_and_export_in_every_shell() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let dir = tempfile_dir();
    for &(shell, start) in SHELLS {
        if !shell_installed(shell, "the live shell") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        let live = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10, "in_subshell": false});
        let export = if shell == "fish" {
            format!("cd {dir}; set -gx TMUX_MCP_LIVE yes-1")
        } else {
            format!("cd {dir} && export TMUX_MCP_LIVE=yes-1")
        };
        let r = ok(&svc, "run_command", live(&export)).await;
        assert_eq!(status_and_output(&r), (json!(0), json!([])), "{shell}: {r}");
        assert_eq!(r["pane_state"], "prompt", "{shell}");
        let sub = json!({"pane_id": pane, "command": "cd /", "timeout": 10});
        assert_eq!(ok(&svc, "run_command", sub).await["exit_status"], 0);
        let r = ok(&svc, "run_command", live("pwd; echo $TMUX_MCP_LIVE")).await;
        assert_eq!(
            status_and_output(&r),
            (json!(0), json!([dir, "yes-1"])),
            "{shell}: the live shell kept both, the subshell's cd did not persist"
        );
        let r = ok(&svc, "run_command", live("false")).await;
        assert_eq!(r["exit_status"], 1, "{shell}");
        let r = ok(&svc, "run_command", live("sh -c 'exit 7'")).await;
        assert_eq!(r["exit_status"], 7, "{shell}");
        let r = ok(&svc, "run_command", live("echo 'x          '")).await;
        assert_eq!(r["output"], json!(["x"]), "{shell}: the padding is cut");
        let r = ok(&svc, "run_command", live("printf no-newline")).await;
        assert_eq!(
            status_and_output(&r),
            (json!(0), json!(["no-newline"])),
            "{shell}"
        );
        let two = json!({"pane_id": pane, "command": "echo one\necho two", "in_subshell": false, "suppress_history": false});
        let r = ok(&svc, "run_command", two).await;
        assert_eq!(
            status_and_output(&r),
            (json!(0), json!(["one", "two"])),
            "{shell}"
        );
        let r = ok(&svc, "run_command", live("echo still-here")).await;
        assert_eq!(
            r["output"],
            json!(["still-here"]),
            "{shell}: the shell survived"
        );

        let lines = at_prompt(&tmux, &pane).await.join("\n");
        for plumbing in ["6973", "printf '", "eval"] {
            assert!(!lines.contains(plumbing), "{shell}: the pane holds {lines}");
        }
        assert!(
            lines.contains(&format!("$ pwd; echo $TMUX_MCP_LIVE\n{dir}\nyes-1")),
            "{shell}: {lines}"
        );

        // `exit` in the live shell ends it, and the result says so.
        let r = ok(&svc, "run_command", live("exit 3")).await;
        assert_eq!(
            (r["pane_state"].clone(), r["timed_out"].clone()),
            (json!("exited"), json!(false)),
            "{shell}: {r}"
        );
        assert!(
            r["note"]
                .as_str()
                .unwrap()
                .contains("ended the pane's shell"),
            "{r}"
        );
    }
}

/// A directory of the test's own, as the shell spells it.
fn tempfile_dir() -> String {
    let dir = std::env::temp_dir().join(format!("tmux-mcp-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap().to_string_lossy().into_owned()
}

/// A pane running `cat` is refused at once (it reads the terminal: no
/// shell on its way), by name, and nothing is typed into it.
#[tokio::test]
async fn a_pane_running_another_program_is_refused_by_name() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "cat", "env PS1='$ ' sh").await;
    tmux.cmd(&["send-keys", "-t", &pane, "cat", "Enter"]);
    tmux.until_foreground(&pane, "cat").await;
    let started = std::time::Instant::now();
    let args = json!({"pane_id": pane, "command": "echo typed-into-cat", "timeout": 10});
    let text = err(&svc, "run_command", args).await;
    let took = started.elapsed();
    assert!(
        text.contains("`cat`") && text.contains("send_keys"),
        "{text}"
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "refused after {took:?}, not at once"
    );
    let lines = transcript(&tmux, &pane).join("\n");
    assert!(
        !lines.contains("typed-into-cat"),
        "nothing was typed: {lines}"
    );
}

/// A command no shell line can carry is refused before anything is typed:
/// a NUL byte, and (with suppress_history) a second line, whose refusal
/// says how to run it.
#[tokio::test]
async fn a_command_with_a_nul_or_a_second_line_is_refused_untyped() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let args = json!({"pane_id": pane, "command": "echo a\u{0}b"});
    let text = err(&svc, "run_command", args).await;
    assert!(text.contains("NUL"), "{text}");
    let args = json!({"pane_id": pane, "command": "echo a\necho b", "suppress_history": true});
    let text = err(&svc, "run_command", args).await;
    assert!(text.contains("suppress_history=false runs"), "{text}");
    let lines = transcript(&tmux, &pane).join("\n");
    assert!(!lines.contains("echo a"), "nothing was typed: {lines}");
}

/// A command that did not end in time: the result says whether it waits
/// for input or runs, in the subshell and in the live shell, and the pane
/// is usable again once it is answered.
#[tokio::test]
async fn a_timeout_says_what_the_pane_is_doing() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    for &(shell, start) in SHELLS {
        if !shell_installed(shell, "pane_state on timeout") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        // Time enough for the shell to reach the `read` or start the `sleep`
        // on a loaded machine (0.5 s was not, twice, once in CI's run):
        // neither returns anyway.
        let run = |command: &str, subshell: bool| json!({"pane_id": pane, "command": command, "timeout": 2.0, "in_subshell": subshell});
        for subshell in [true, false] {
            let r = ok(&svc, "run_command", run("read reply", subshell)).await;
            let got = (r["timed_out"].clone(), r["pane_state"].clone());
            assert_eq!(
                got,
                (json!(true), json!("input")),
                "{shell} subshell={subshell}: {r}"
            );
            assert!(r["note"].as_str().unwrap().contains("send_keys"), "{r}");
            tmux.cmd(&["send-keys", "-t", &pane, "hello", "Enter"]);
        }
        let echo = json!({"pane_id": pane, "command": "echo got-$reply", "timeout": 10, "in_subshell": false});
        let r = ok(&svc, "run_command", echo).await;
        assert_eq!(
            r["output"],
            json!(["got-hello"]),
            "{shell}: the live read kept its answer"
        );
        // In the live shell the command is the foreground job, by name (a
        // subshell's job is led by the subshell); a plain program is exec'd
        // in the subshell, so the pane names it there too.
        for subshell in [true, false] {
            let r = ok(&svc, "run_command", run("sleep 30", subshell)).await;
            let got = (
                r["pane_state"].clone(),
                r["note"].as_str().unwrap().to_owned(),
            );
            assert_eq!(got.0, "running", "{shell}: {r}");
            assert!(got.1.contains("is still running"), "{shell}: {r}");
            assert!(subshell || got.1.contains("`sleep`"), "{shell}: {r}");
            tmux.until_foreground(&pane, "sleep").await;
            tmux.cmd(&["send-keys", "-t", &pane, "C-c", ""]);
        }
    }
}

/// A command that stops at a password prompt did not end: pane_state says
/// `secret` (a line read with echo off), in the subshell and in the live
/// shell; a plain `read` stays `input`.
#[tokio::test]
async fn a_password_prompt_is_secret_on_timeout() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (_, start) = SHELLS[0];
    let pane = shell_pane(&tmux, "bash", start).await;
    let pid: u32 = tmux
        .cmd(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .trim()
        .parse()
        .expect("a pid");
    let run = |command: &str, subshell: bool| json!({"pane_id": pane, "command": command, "timeout": 2.0, "in_subshell": subshell});
    let cases = [
        (
            "python3 -c 'import getpass; getpass.getpass()'",
            true,
            "secret",
        ),
        ("read -r -s pw", true, "secret"),
        ("read -r -s pw", false, "secret"),
        ("read -r reply", false, "input"),
    ];
    for (command, subshell, want) in cases {
        let r = ok(&svc, "run_command", run(command, subshell)).await;
        assert_eq!(
            (&r["timed_out"], &r["pane_state"]),
            (&json!(true), &json!(want)),
            "{command} subshell={subshell}: {r}"
        );
        let note = r["note"].as_str().unwrap();
        assert_eq!(note.contains("password"), want == "secret", "{r}");
        tmux.cmd(&["send-keys", "-t", &pane, "answer", "Enter"]);
        // The shell back at its prompt before anything is typed: python's
        // getpass restores the terminal with TCSAFLUSH, which drops what
        // was typed meanwhile (and a subshell is a `bash` to tmux).
        let deadline = std::time::Instant::now() + BOUND;
        while process::probe(pid).activity != Activity::Prompt {
            assert!(std::time::Instant::now() < deadline, "{command}: no prompt");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let r = ok(
            &svc,
            "run_command",
            json!({"pane_id": pane, "command": "true", "timeout": 10}),
        )
        .await;
        assert_eq!(r["exit_status"], 0, "{command}: the pane is back: {r}");
    }
}

/// A pane moved to another session between two calls: the second call
/// streams it on that session's client (the first one's is guessed from
/// the recording, and let go), and its output is exact.
#[tokio::test]
async fn a_pane_moved_to_another_session_between_calls_runs_there() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "moving", "env PS1='$ ' sh").await;
    let run = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10});
    let r = ok(&svc, "run_command", run("echo before")).await;
    assert_eq!(r["output"], json!(["before"]), "{r}");
    tmux.cmd(&["new-session", "-d", "-s", "elsewhere"]);
    tmux.cmd(&["move-window", "-s", &pane, "-t", "elsewhere:"]);
    let session = tmux.cmd(&["display-message", "-p", "-t", &pane, "#{session_name}"]);
    assert_eq!(session.trim(), "elsewhere");
    for n in 0..3 {
        let r = ok(&svc, "run_command", run(&format!("echo after-{n}"))).await;
        assert_eq!(
            (r["exit_status"].clone(), r["output"].clone()),
            (json!(0), json!([format!("after-{n}")])),
            "{r}"
        );
    }
}

/// A command that printed nothing: its cursor reads on from the line its
/// prompt is drawn on, so the next command typed there is read, also once
/// the line holds it (not anchored on the bare prompt, whose text changes).
#[tokio::test]
async fn a_silent_commands_cursor_reads_the_next_command_typed_at_its_prompt() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "silent", "env PS1='$ ' sh").await;
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "true", "timeout": 10}),
    )
    .await;
    let cursor = r["cursor"].as_str().expect("a cursor").to_owned();
    tmux.cmd(&["send-keys", "-t", &pane, "-l", "echo la''ter"]);
    tmux.cmd(&["send-keys", "-t", &pane, "Enter"]);
    let wait = json!({"pane_id": pane, "patterns": ["^later$"], "regex": true, "timeout": 10, "since": cursor});
    assert_eq!(ok(&svc, "wait_for_text", wait).await["found"], true);
    // The cursor pages the command's own output (none), then reads tmux's
    // lines after its anchor, in the same call (issue 33, `r2`).
    let since = ok(&svc, "capture_since", json!({"cursor": cursor})).await;
    assert_eq!(since["lines_missed"], false, "{since}");
    let lines: Vec<&str> = since["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.first(), Some(&"$ echo la''ter"), "{since}");
    assert!(
        lines.contains(&"later") && !lines.contains(&"$ true"),
        "{since}"
    );
    let again = ok(&svc, "capture_since", json!({"cursor": since["cursor"]})).await;
    assert_eq!(again["lines"], json!([]), "{again}");
}

/// tmux's anchor for `pane` now, as run_command reads it for a command
/// that printed nothing: the last line with text above the cursor's.
fn anchor_now(tmux: &PrivateTmux, pane: &str) -> Anchor {
    let format = "#{history_size} #{cursor_y} #{pane_width}";
    let rows = tmux.cmd(&["display-message", "-p", "-t", pane, format]);
    let rows: Vec<u64> = rows
        .split_whitespace()
        .map(|f| f.parse().unwrap())
        .collect();
    let captured = tmux.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", pane]);
    let captured: Vec<Vec<u8>> = captured.lines().map(|l| l.as_bytes().to_vec()).collect();
    let lines = history::lines(&captured, 0, rows[2] as usize);
    history::before_cursor(&lines, rows[0], rows[1])
}

/// A command that printed nothing has its cursor's anchor told from its
/// input mark, not read after it: in every shell, in its own shell and in
/// a subshell, it is the anchor tmux gives; so it is behind a prompt of
/// two rows (read from tmux there).
#[tokio::test]
async fn a_silent_commands_anchor_is_the_one_tmux_gives() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let two_rows = ("sh", "env PS1='two rows\n$ ' sh");
    for &(shell, start) in SHELLS.iter().chain([&two_rows]) {
        if !shell_installed(shell, "silent anchors") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        for (command, subshell) in [("true", true), ("cd /", false), ("true", false)] {
            let run = json!({"pane_id": pane, "command": command, "timeout": 10, "in_subshell": subshell});
            let r = ok(&svc, "run_command", run).await;
            assert_eq!(status_and_output(&r), (json!(0), json!([])), "{shell}: {r}");
            let cursor = Cursor::decode(r["cursor"].as_str().unwrap()).unwrap();
            let tmux_anchor = anchor_now(&tmux, &pane);
            assert_eq!(cursor.anchor, tmux_anchor, "{start}: {command}");
        }
    }
}

/// With a history limit so small that tmux drops its oldest rows while
/// each command runs, a silent command's cursor still reads on exactly:
/// the next command and its output, nothing missed (a told anchor that a
/// drop moved is corrected by its check).
#[tokio::test]
async fn a_silent_commands_cursor_reads_on_across_history_drops() {
    let tmux = PrivateTmux::start();
    tmux.cmd(&["set-option", "-g", "history-limit", "20"]);
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "drops", "env PS1='$ ' sh").await;
    let run = |command: &str| json!({"pane_id": pane, "command": command, "timeout": 10});
    ok(&svc, "run_command", run("seq 1 60")).await;
    for i in 0..6 {
        let silent = ok(&svc, "run_command", run("true")).await;
        let own = json!({"cursor": silent["cursor"]});
        let own = ok(&svc, "capture_since", own).await;
        assert_eq!(own["lines"], json!([]), "{own}");
        ok(&svc, "run_command", run(&format!("echo mark-{i}"))).await;
        let since = ok(&svc, "capture_since", json!({"cursor": own["cursor"]})).await;
        assert_eq!(since["lines_missed"], false, "{i}: {since}");
        let lines = since["lines"].as_array().unwrap();
        assert_eq!(lines[0], format!("$ echo mark-{i}"), "{i}: {since}");
        assert!(lines.contains(&json!(format!("mark-{i}"))), "{i}: {since}");
    }
}

/// A command run at once in a new pane whose shell still reads slow
/// start-up files (a `.bashrc` that sleeps, as `pyenv init` or nvm take
/// time) runs once the shell reads its terminal: its status and output,
/// and a screen with the prompt and the command only, no wrapper line.
/// While the rc file's `sleep` is the pane's foreground, run_command waits
/// for the shell (up to 5 s after the pane's start) instead of refusing
/// `sleep` as a program of the person's (issue 29, 5).
#[tokio::test]
async fn a_new_panes_slow_shell_is_waited_for_before_typing() {
    let dir = tempfile_dir();
    for shell in slow_shells() {
        for delay in ["0.3", "1"] {
            let tmux = PrivateTmux::start();
            let svc = tmux.service();
            let program = slow_shell(&dir, shell, delay);
            let pane = new_window(&svc, &program).await;
            let r = ok(
                &svc,
                "run_command",
                json!({"pane_id": pane, "command": "sh -c 'echo hi; exit 3'"}),
            )
            .await;
            assert_eq!(
                status_and_output(&r),
                (json!(3), json!(["hi"])),
                "{shell} {delay}: {r}"
            );
            let screen = tmux
                .until_text(&pane, |t| t.trim_end().ends_with('$'))
                .await;
            assert_eq!(
                drawn_lines(&screen),
                ["$ sh -c 'echo hi; exit 3'", "hi", "$"],
                "{shell} {delay}: the screen holds what a person typing it would have seen"
            );
        }
    }
}

/// The shells a slow start is tried in: bash, and zsh and fish where
/// installed.
fn slow_shells() -> Vec<&'static str> {
    let others = ["zsh", "fish"].into_iter();
    let installed = others.filter(|shell| shell_installed(shell, "slow rc"));
    std::iter::once("bash").chain(installed).collect()
}

/// A new window in session `main` running `program`: its pane.
async fn new_window(svc: &TmuxService, program: &str) -> String {
    let made = ok(
        svc,
        "create_window",
        json!({"session_name": "main", "shell": program}),
    )
    .await;
    made["active_pane_id"].as_str().expect("a pane").to_owned()
}

/// The program that starts `shell` with start-up files that sleep `delay`
/// seconds before they set the prompt to `$ `, written under `dir`.
fn slow_shell(dir: &str, shell: &str, delay: &str) -> String {
    let rc = format!("{dir}/{shell}-{delay}");
    std::fs::create_dir_all(&rc).expect("rc dir");
    let start = format!("sleep {delay}\nPS1='$ '\n");
    match shell {
        "bash" => {
            std::fs::write(format!("{rc}/bashrc"), start).expect("bashrc");
            format!("bash --noprofile --rcfile {rc}/bashrc")
        }
        "zsh" => {
            std::fs::write(format!("{rc}/.zshrc"), start).expect("zshrc");
            format!("env ZDOTDIR={rc} zsh")
        }
        _ => {
            let config = format!("{rc}/fish");
            std::fs::create_dir_all(&config).expect("fish config dir");
            let prompt = "function fish_prompt; echo -n '$ '; end";
            let start = format!("sleep {delay}\n{prompt}\nset fish_greeting\n");
            std::fs::write(format!("{config}/config.fish"), start).expect("config.fish");
            format!("env XDG_CONFIG_HOME={rc} fish")
        }
    }
}

/// The screen's lines that hold anything, without trailing blanks.
fn drawn_lines(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Text typed at once into a new pane whose shell still reads slow
/// start-up files, by each input tool, lands on the shell's first prompt
/// line: not echoed above it by the terminal while the rc file sleeps,
/// nor lost (issue 29, 5).
#[tokio::test]
async fn input_into_a_new_panes_slow_shell_waits_for_its_prompt() {
    let dir = tempfile_dir();
    for shell in slow_shells() {
        let tmux = PrivateTmux::start();
        let svc = tmux.service();
        let program = slow_shell(&dir, shell, "1");
        let inputs = [
            ("send_keys", json!({"keys": "echo sent"}), "sent"),
            ("paste_text", json!({"text": "echo pasted"}), ""),
            ("send_prompt", json!({"text": "echo prompted"}), "prompted"),
        ];
        for (tool, mut args, printed) in inputs {
            let pane = new_window(&svc, &program).await;
            args["pane_id"] = json!(pane);
            let typed = args.get("keys").or(args.get("text")).cloned().unwrap();
            let line = format!("$ {}", typed.as_str().unwrap());
            ok(&svc, tool, args).await;
            let want: Vec<&str> = match printed {
                "" => vec![&line],
                out => vec![&line, out, "$"],
            };
            let screen = tmux
                .until_text(&pane, |t| {
                    let drawn = drawn_lines(t);
                    drawn.len() >= want.len() && drawn.last() == want.last()
                })
                .await;
            assert_eq!(drawn_lines(&screen), want, "{shell} {tool}");
        }
    }
}
