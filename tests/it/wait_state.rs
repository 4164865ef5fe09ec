//! `wait_for_state` and the process probe under it (`tmux_mcp::process`),
//! against real shells and programs in a private tmux.
//!
//! The probe has no event to wait on, so its live tests re-probe until the
//! expected state shows, within [`BOUND`]: the condition itself is what
//! is waited for.

use std::time::{Duration, Instant};

use crate::support::{BOUND, PrivateTmux, err, finish, ok, shell_installed, start_armed};
use serde_json::{Value, json};
use tmux_mcp::mcp::CallToolResult;
use tmux_mcp::process::{self, Activity, Probe};
use tmux_mcp::tools::TmuxService;
use tokio_util::sync::CancellationToken;

/// A window running `shell` (its start-up files skipped); its pane id and pid.
fn shell_pane(tmux: &PrivateTmux, shell: &str) -> (String, u32) {
    let out = tmux.cmd(&[
        "new-window",
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        &format!("env PS1='$ ' {shell}"),
    ]);
    let (pane, pid) = out.trim().split_once(' ').expect("id and pid");
    (pane.to_owned(), pid.parse().expect("a pid"))
}

/// A window running bash (no start-up files), once it is at its prompt.
async fn bash_at_prompt(tmux: &PrivateTmux) -> (String, u32) {
    let (pane, pid) = shell_pane(tmux, "bash --norc --noprofile");
    until(pid, Activity::Prompt).await;
    (pane, pid)
}

/// Probes until `want` shows (the probe has no event), or fails after BOUND.
async fn until(pid: u32, want: Activity) -> Probe {
    until_in(pid, want, None).await
}

/// [`until`], with `command` in the foreground (between fork and exec the
/// child still reads as the shell).
async fn until_in(pid: u32, want: Activity, command: Option<&str>) -> Probe {
    let started = Instant::now();
    loop {
        let probe = process::probe(pid);
        let named = command.is_none_or(|c| probe.foreground_command.as_deref() == Some(c));
        if probe.activity == want && named {
            return probe;
        }
        assert!(
            started.elapsed() < BOUND,
            "pane process {pid} never reached {want:?}: last {probe:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn type_line(tmux: &PrivateTmux, pane: &str, line: &str) {
    tmux.cmd(&["send-keys", "-t", pane, "-l", line]);
    tmux.cmd(&["send-keys", "-t", pane, "Enter"]);
}

/// Every activity the probe reports, in one shell.
async fn probe_states_in(shell: &str) {
    let tmux = PrivateTmux::start();
    let (pane, pid) = shell_pane(&tmux, shell);
    let at_prompt = until(pid, Activity::Prompt).await;
    assert_eq!(at_prompt.foreground_pid, Some(pid));
    assert_eq!(at_prompt.observable, process::OBSERVE_ALL);

    type_line(&tmux, &pane, "cat");
    let cat = until_in(pid, Activity::Input, Some("cat")).await;
    assert_ne!(cat.foreground_pid, Some(pid));
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;

    type_line(&tmux, &pane, "sleep 100");
    until_in(pid, Activity::Running, Some("sleep")).await;
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;

    // The shell itself busy: waiting for a command substitution's child
    // (of its own process group), not at its prompt.
    type_line(&tmux, &pane, "x=$(sleep 100)");
    let busy = until(pid, Activity::Running).await;
    assert_eq!(busy.foreground_pid, Some(pid));
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;

    // A REPL editing its line in raw mode under poll.
    type_line(&tmux, &pane, "python3 -q");
    until_in(pid, Activity::Input, Some("python3")).await;
    type_line(&tmux, &pane, "import time; time.sleep(100)");
    until(pid, Activity::Running).await;
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Input).await;
    // The interrupt's traceback printed, its new prompt shown: typing now
    // cannot race the REPL's return to its line editor.
    let at_prompt = |t: &str| {
        t.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.trim_end() == ">>>")
    };
    tmux.until_text(&pane, at_prompt).await;
    type_line(&tmux, &pane, "exit()");
    until(pid, Activity::Prompt).await;

    type_line(&tmux, &pane, "exit");
    let gone = until(pid, Activity::Exited).await;
    assert_eq!(gone.foreground_pid, None);
}

#[tokio::test]
async fn probe_tells_every_state_in_bash() {
    probe_states_in("bash --norc --noprofile").await;
}

#[tokio::test]
async fn probe_tells_every_state_in_zsh() {
    if shell_installed("zsh", "the process probe") {
        probe_states_in("zsh -f").await;
    }
}

/// The shell's own `read` builtin is input, not its prompt (bash and zsh
/// edit the prompt in raw mode; `read` reads a canonical line).
#[tokio::test]
async fn probe_sees_read_in_the_shell_itself() {
    let tmux = PrivateTmux::start();
    for shell in ["bash --norc --noprofile", "zsh -f"] {
        if !shell_installed(shell.split(' ').next().unwrap(), "read in the shell") {
            continue;
        }
        let (pane, pid) = shell_pane(&tmux, shell);
        until(pid, Activity::Prompt).await;
        type_line(&tmux, &pane, "read -r reply");
        let reading = until(pid, Activity::Input).await;
        assert_eq!(reading.foreground_pid, Some(pid), "{shell}");
        type_line(&tmux, &pane, "an answer");
        until(pid, Activity::Prompt).await;
    }
}

/// dash reads its command line with a plain read: that is its prompt.
#[tokio::test]
async fn probe_sees_dash_at_its_prompt() {
    let tmux = PrivateTmux::start();
    let (pane, pid) = shell_pane(&tmux, "dash");
    until(pid, Activity::Prompt).await;
    type_line(&tmux, &pane, "cat");
    until(pid, Activity::Input).await;
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;
}

/// A password prompt (a line read with echo off) is `secret`: getpass()
/// in a foreground program and `read -s` in the shell itself; a plain
/// `read` stays input, looked at again once it is seen reading.
#[tokio::test]
async fn probe_tells_a_password_prompt_from_a_question() {
    let tmux = PrivateTmux::start();
    let (pane, pid) = bash_at_prompt(&tmux).await;
    type_line(&tmux, &pane, GETPASS);
    let getpass = until_in(pid, Activity::Secret, Some("python3")).await;
    assert_ne!(getpass.foreground_pid, Some(pid));
    assert_eq!(getpass.observable, process::OBSERVE_ALL);
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;

    type_line(&tmux, &pane, "read -r -s pw");
    let read_s = until(pid, Activity::Secret).await;
    assert_eq!(read_s.foreground_pid, Some(pid));
    type_line(&tmux, &pane, "hunter2");
    until(pid, Activity::Prompt).await;

    type_line(&tmux, &pane, "read -r reply");
    until(pid, Activity::Input).await;
    assert_eq!(process::probe(pid).activity, Activity::Input);
    type_line(&tmux, &pane, "an answer");
    until(pid, Activity::Prompt).await;
}

/// python's getpass: opens /dev/tty, turns echo off, reads a line.
const GETPASS: &str = "python3 -c 'import getpass; getpass.getpass()'";

// ---------------------------------------------------------------- the tool

async fn wait_state(svc: &TmuxService, args: Value) -> Value {
    ok(svc, "wait_for_state", args).await
}

/// Arms a wait (it reports progress once armed), then returns its handle.
async fn armed(svc: &TmuxService, args: Value) -> tokio::task::JoinHandle<CallToolResult> {
    start_armed(svc, "wait_for_state", args, CancellationToken::new()).await
}

/// Every state `wait_for_state` reports, each armed before its cause.
async fn tool_states_in(shell: &str, comm: &str) {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, pid) = shell_pane(&tmux, shell);
    until(pid, Activity::Prompt).await;

    // True at entry: reported at once, with the default states.
    let entry = wait_state(&svc, json!({"pane_id": pane, "timeout": 10})).await;
    assert_eq!(entry["state"], "prompt", "{entry}");
    assert_eq!(entry["found"], true);
    assert_eq!(entry["foreground_command"], comm);
    assert_eq!(entry["foreground_pid"], pid);
    assert_eq!(
        entry["observable_states"],
        json!([
            "prompt", "input", "secret", "running", "exited", "idle", "bell"
        ])
    );
    assert!(entry["elapsed_seconds"].as_f64().unwrap() < 5.0);

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["input"], "timeout": 10}),
    )
    .await;
    type_line(&tmux, &pane, "cat");
    let input = finish(wait).await;
    assert_eq!(input["state"], "input", "{input}");
    assert_eq!(input["foreground_command"], "cat");
    assert_ne!(input["foreground_pid"], pid);
    // Still reading: true at entry, so a second wait answers at once.
    let again = wait_state(
        &svc,
        json!({"pane_id": pane, "states": ["input"], "timeout": 10}),
    )
    .await;
    assert_eq!(again["state"], "input", "{again}");
    assert_eq!(again["foreground_pid"], input["foreground_pid"]);

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["prompt"], "timeout": 10}),
    )
    .await;
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    let prompt = finish(wait).await;
    assert_eq!(prompt["state"], "prompt", "{prompt}");
    assert_eq!(prompt["activity"], "prompt");

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["bell"], "timeout": 10}),
    )
    .await;
    type_line(&tmux, &pane, "printf 'ring\\007\\n'");
    let bell = finish(wait).await;
    assert_eq!(bell["state"], "bell", "{bell}");

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["exited"], "timeout": 10}),
    )
    .await;
    type_line(&tmux, &pane, "exit");
    let exited = finish(wait).await;
    assert_eq!(exited["state"], "exited", "{exited}");
    assert_eq!(exited["activity"], "exited");
    assert_eq!(exited["foreground_pid"], Value::Null);
}

#[tokio::test]
async fn wait_for_state_in_bash() {
    tool_states_in("bash --norc --noprofile", "bash").await;
}

#[tokio::test]
async fn wait_for_state_in_zsh() {
    if shell_installed("zsh", "wait_for_state") {
        tool_states_in("zsh -f", "zsh").await;
    }
}

#[tokio::test]
async fn wait_for_state_in_fish() {
    if shell_installed("fish", "wait_for_state") {
        tool_states_in("fish --no-config", "fish").await;
    }
}

/// A question printed and then read: the wait ends on the read, and the
/// tail shows the question.
#[tokio::test]
async fn a_question_is_input_and_the_tail_shows_it() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, _) = bash_at_prompt(&tmux).await;
    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["input"], "timeout": 10}),
    )
    .await;
    type_line(&tmux, &pane, "(read -r -p 'Continue? [y/N] ' answer)");
    let asked = finish(wait).await;
    assert_eq!(asked["state"], "input", "{asked}");
    let tail = asked["tail"].as_array().unwrap();
    assert!(
        tail.last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("Continue? [y/N]"),
        "{asked}"
    );
}

/// A tail's lines end at their last visible character: the spaces a
/// program pads a row with are cut.
#[tokio::test]
async fn the_tail_carries_no_padding() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, _) = bash_at_prompt(&tmux).await;
    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["input"], "timeout": 10}),
    )
    .await;
    type_line(
        &tmux,
        &pane,
        "(printf 'padded%40s\\n' ''; read -r -p 'Name?   ' x)",
    );
    let asked = finish(wait).await;
    assert_eq!(asked["state"], "input", "{asked}");
    let tail: Vec<&str> = asked["tail"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert!(tail.iter().all(|l| !l.ends_with(' ')), "{tail:?}");
    assert!(tail.contains(&"padded"), "{tail:?}");
    assert_eq!(tail.last(), Some(&"Name?"), "{tail:?}");
}

#[tokio::test]
async fn idle_and_timeout_and_no_probe_while_quiet() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, _) = bash_at_prompt(&tmux).await;

    let idle = wait_state(
        &svc,
        json!({"pane_id": pane, "states": ["idle"], "idle_ms": 300, "timeout": 10}),
    )
    .await;
    assert_eq!(idle["state"], "idle", "{idle}");
    assert!(idle["elapsed_seconds"].as_f64().unwrap() >= 0.3, "{idle}");

    // A title set with OSC ... BEL is not a bell; nothing else comes: timeout.
    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["bell"], "timeout": 2}),
    )
    .await;
    type_line(&tmux, &pane, "printf '\\033]0;a title\\007'");
    let quiet = finish(wait).await;
    assert_eq!(quiet["state"], "timeout", "{quiet}");
    assert_eq!(quiet["found"], false);
    assert_eq!(quiet["activity"], "prompt");
    assert_eq!(quiet["effective_timeout"], 2.0);
    assert!(quiet["elapsed_seconds"].as_f64().unwrap() >= 2.0);
    // Entry, the settle points (20, 100, 500 ms and idle_ms) of the quiet
    // spell before the typed line's output and of the one after it, and
    // none while the pane stays quiet (a 50 ms timer would make 40).
    let probes = quiet["probes"].as_i64().unwrap();
    assert!((2..=9).contains(&probes), "{quiet}");
}

#[tokio::test]
async fn a_remain_on_exit_pane_and_a_dead_one_at_entry_are_exited() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, _) = bash_at_prompt(&tmux).await;
    tmux.cmd(&["set-option", "-w", "-t", &pane, "remain-on-exit", "on"]);
    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["exited"], "timeout": 10}),
    )
    .await;
    type_line(&tmux, &pane, "echo bye; exit 3");
    let exited = finish(wait).await;
    assert_eq!(exited["state"], "exited", "{exited}");
    let dead = tmux.cmd(&["display-message", "-p", "-t", &pane, "#{pane_dead}"]);
    assert_eq!(dead.trim(), "1", "the pane remains");
    let again = wait_state(&svc, json!({"pane_id": pane, "timeout": 10})).await;
    assert_eq!(again["state"], "exited", "{again}");
}

#[tokio::test]
async fn bad_arguments_and_a_wrong_pane_are_errors() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let unknown = err(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["prompt", "asleep"]}),
    )
    .await;
    assert!(
        unknown.contains("asleep") && unknown.contains("prompt"),
        "{unknown}"
    );
    let empty = err(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": []}),
    )
    .await;
    assert!(empty.contains("states"), "{empty}");
    let idle = err(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "idle_ms": 0}),
    )
    .await;
    assert!(idle.contains("idle_ms"), "{idle}");
    let timeout = err(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "timeout": -1}),
    )
    .await;
    assert!(timeout.contains("timeout"), "{timeout}");
    let gone = err(&svc, "wait_for_state", json!({"pane_id": "%9999"})).await;
    assert!(gone.contains("%9999"), "{gone}");
}

/// Cancelling an armed wait ends it at once: the cancellation, not the
/// timeout (60 s), ends the call within the bound.
#[tokio::test]
async fn a_wait_is_cancelled_at_once() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let args = json!({"pane_id": tmux.first_pane(), "states": ["bell"], "timeout": 60});
    let cancel = CancellationToken::new();
    let wait = start_armed(&svc, "wait_for_state", args, cancel.clone()).await;
    cancel.cancel();
    let ended = tokio::time::timeout(BOUND, wait).await;
    let result = ended.expect("ended in time").expect("no panic");
    let text = result.content[0]["text"].as_str().unwrap_or_default();
    assert!(result.is_error && text.contains("cancelled"), "{text}");
}

/// `secret` is a state of its own: armed before the prompt, true at
/// entry, reported in activity; a plain `read` is input, never secret.
#[tokio::test]
async fn a_password_prompt_is_secret_and_a_question_is_input() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (pane, _) = bash_at_prompt(&tmux).await;
    let both = json!({"pane_id": pane, "states": ["input", "secret"], "timeout": 10});

    let wait = armed(&svc, both.clone()).await;
    type_line(&tmux, &pane, GETPASS);
    let asked = finish(wait).await;
    assert_eq!(
        (
            &asked["state"],
            &asked["activity"],
            &asked["foreground_command"]
        ),
        (&json!("secret"), &json!("secret"), &json!("python3")),
        "{asked}"
    );
    let tail = asked["tail"].as_array().unwrap();
    assert!(
        tail.last().unwrap().as_str().unwrap().contains("Password:"),
        "{asked}"
    );
    // True at entry, with every state wanted (the default).
    let entry = wait_state(&svc, json!({"pane_id": pane, "timeout": 10})).await;
    assert_eq!(entry["state"], "secret", "{entry}");
    // Waiting for input only does not take a password prompt for one.
    let input_only = json!({"pane_id": pane, "states": ["input"], "timeout": 1});
    let not_input = wait_state(&svc, input_only).await;
    assert_eq!(
        (&not_input["state"], &not_input["activity"]),
        (&json!("timeout"), &json!("secret")),
        "{not_input}"
    );
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["prompt"], "timeout": 10}),
    )
    .await;
    let prompt = finish(wait).await;
    assert_eq!(prompt["state"], "prompt", "{prompt}");

    let wait = armed(&svc, both.clone()).await;
    type_line(&tmux, &pane, "read -r -s -p 'pw: ' pw");
    let read_s = finish(wait).await;
    assert_eq!(read_s["state"], "secret", "{read_s}");
    type_line(&tmux, &pane, "hunter2");

    let wait = armed(
        &svc,
        json!({"pane_id": pane, "states": ["prompt"], "timeout": 10}),
    )
    .await;
    finish(wait).await;
    let wait = armed(&svc, both).await;
    type_line(&tmux, &pane, "read -r -p 'name: ' reply");
    let question = finish(wait).await;
    assert_eq!(
        (&question["state"], &question["activity"]),
        (&json!("input"), &json!("input")),
        "{question}"
    );
}

/// A pane on another host: its pid is not this machine's, so no local
/// probe runs; tmux says prompt or running, and the pane's terminal read
/// there (`stty` over the host's ssh) says secret. The "host" is this
/// machine behind a stand-in ssh that runs the remote line with `sh`
/// (what sshd does): `input` is then not observable, which shows the
/// local probe was not used.
#[tokio::test]
async fn a_remote_password_prompt_is_secret_through_ssh() {
    use std::os::unix::fs::PermissionsExt;
    let tmux = PrivateTmux::start();
    let dir = std::env::temp_dir().join(format!("tmuxmcp-sh-ssh-{}", tmux.name));
    std::fs::create_dir_all(&dir).unwrap();
    let ssh = dir.join("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\neval \"line=\\${$#}\"\nexec sh -c \"$line\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let svc = tmux.service_with(&[
        ("TMUX_MCP_HOSTS", "there=there"),
        ("TMUX_MCP_SSH", ssh.to_str().unwrap()),
    ]);
    let socket = format!("there:{}", tmux.name);
    let (pane, pid) = bash_at_prompt(&tmux).await;
    let args = |states: Value, timeout: u64| json!({"pane_id": pane, "socket_name": socket, "states": states, "timeout": timeout});

    let entry = wait_state(&svc, args(json!(["prompt"]), 10)).await;
    assert_eq!(entry["state"], "prompt", "{entry}");
    assert_eq!(
        entry["observable_states"],
        json!(["prompt", "secret", "running", "exited", "idle", "bell"]),
        "{entry}"
    );
    let wait = armed(&svc, args(json!(["secret"]), 10)).await;
    type_line(&tmux, &pane, GETPASS);
    let asked = finish(wait).await;
    assert_eq!(
        (&asked["state"], &asked["foreground_command"]),
        (&json!("secret"), &json!("python3")),
        "{asked}"
    );
    assert_eq!(
        asked["foreground_pid"],
        Value::Null,
        "not this machine's pid"
    );
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Prompt).await;
    // A plain read is not secret (and, remotely, not told from running).
    type_line(&tmux, &pane, "cat");
    until_in(pid, Activity::Input, Some("cat")).await;
    let cat = wait_state(&svc, args(json!(["secret", "prompt"]), 1)).await;
    assert_eq!(
        (&cat["state"], &cat["activity"]),
        (&json!("timeout"), &json!("running")),
        "{cat}"
    );
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn wait_for_input(svc: &TmuxService, pane: &str, timeout: f64) -> Value {
    let args = json!({"pane_id": pane, "states": ["input"], "timeout": timeout});
    wait_state(svc, args).await
}

/// A program blocked writing to its pane (tmux drains the pty slower than
/// `yes` fills it) sleeps where a reader does; it is running, never
/// input, while a question next to it is input.
#[tokio::test]
async fn a_flooding_writer_is_running_and_a_question_is_input() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let (yes, yes_pid) = bash_at_prompt(&tmux).await;
    let (pipe, pipe_pid) = bash_at_prompt(&tmux).await;
    let (ask, _) = bash_at_prompt(&tmux).await;
    type_line(&tmux, &yes, "yes");
    type_line(&tmux, &pipe, r"cat /dev/zero | tr '\0' x");
    type_line(&tmux, &ask, "python3 -c 'input(\"name? \")'");
    until_in(yes_pid, Activity::Running, Some("yes")).await;
    until(pipe_pid, Activity::Running).await;
    // `tr` flooding: its x's fill the screen.
    let started = Instant::now();
    while !tmux
        .cmd(&["capture-pane", "-p", "-t", &pipe])
        .contains(&"x".repeat(80))
    {
        assert!(started.elapsed() < BOUND, "{pipe} never flooded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let question = wait_for_input(&svc, &ask, 10.0).await;
    assert_eq!(
        (&question["state"], &question["foreground_command"]),
        (&json!("input"), &json!("python3")),
        "{question}"
    );
    // Looked at again and again while they flood: never input.
    for (pane, pid) in [(&yes, yes_pid), (&pipe, pipe_pid)] {
        let mut prober = process::Prober::new(pid);
        let looks: Vec<Activity> = (0..300).map(|_| prober.probe().activity).collect();
        assert!(
            looks.iter().all(|a| *a == Activity::Running),
            "{pane}: {looks:?}"
        );
        let not_input = wait_for_input(&svc, pane, 1.0).await;
        assert_eq!(
            (&not_input["state"], &not_input["activity"]),
            (&json!("timeout"), &json!("running")),
            "{not_input}"
        );
    }
    let listed = ok(&svc, "list_panes", json!({"states": true})).await;
    let state = |pane: &str| {
        listed
            .as_array()
            .expect("a list")
            .iter()
            .find(|p| p["pane_id"] == pane)
            .map(|p| p["pane_state"].clone())
    };
    assert_eq!(
        (state(&yes), state(&pipe), state(&ask)),
        (
            Some(json!("running")),
            Some(json!("running")),
            Some(json!("input"))
        ),
        "{listed}"
    );
    for pane in [&yes, &pipe] {
        tmux.cmd(&["send-keys", "-t", pane, "C-c"]);
    }
}

/// A program started in a pane's place (`create_window(shell=...)`) is no
/// shell: at its own prompt it waits for input, as the README's
/// orchestration example says (issue 33, r9).
#[tokio::test]
async fn a_program_started_as_the_pane_reads_input_at_its_prompt() {
    if !cfg!(target_os = "linux") || !shell_installed("python3", "a REPL as the pane") {
        return;
    }
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let window = ok(
        &svc,
        "create_window",
        json!({"session_name": "main", "shell": "python3 -q"}),
    )
    .await;
    let pane = window["active_pane_id"]
        .as_str()
        .expect("a pane")
        .to_owned();
    tmux.until_text(&pane, |t| t.contains(">>>")).await;
    let args = json!({"pane_id": pane, "states": ["input"], "timeout": 10});
    let found = ok(&svc, "wait_for_state", args).await;
    assert_eq!(found["found"], true, "{found}");
    assert_eq!(found["state"], "input", "{found}");
}

/// A new pane's shell that still runs its start-up file (an rc that
/// sleeps, as pyenv or nvm take time) is not at its prompt until it drew
/// one: wait_for_state(prompt) right after create_window answers once the
/// prompt is on screen, in bash and in fish (which runs its config in its
/// own process group, its foreground `fish` all along; issue 29, 5).
#[tokio::test]
async fn a_new_panes_first_prompt_is_waited_for() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let dir = std::env::temp_dir().join(format!("tmuxmcp-first-prompt-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("fish")).unwrap();
    std::fs::write(dir.join("bashrc"), "sleep 1\nPS1='$ '\n").unwrap();
    let fish = "sleep 1\nfunction fish_prompt; echo -n '$ '; end\nset fish_greeting\n";
    std::fs::write(dir.join("fish/config.fish"), fish).unwrap();
    let d = dir.display();
    let starts = [
        (
            "bash",
            true,
            format!("bash --noprofile --rcfile {d}/bashrc"),
        ),
        (
            "fish",
            shell_installed("fish", "first prompt"),
            format!("env XDG_CONFIG_HOME={d} fish"),
        ),
    ];
    for (shell, installed, program) in starts {
        if !installed {
            continue;
        }
        let made = json!({"session_name": "main", "shell": program});
        let made = ok(&svc, "create_window", made).await;
        let pane = made["active_pane_id"].as_str().unwrap().to_owned();
        let args = json!({"pane_id": pane, "states": ["prompt"], "timeout": 10});
        let got = wait_state(&svc, args).await;
        assert_eq!(got["state"], "prompt", "{shell}: {got}");
        let screen = tmux.cmd(&["capture-pane", "-p", "-t", &pane]);
        assert!(
            screen.trim_start().starts_with('$'),
            "{shell}: answered before the prompt: {screen:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
