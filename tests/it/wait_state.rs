//! `wait_for_state` and the process probe under it (`tmux_mcp::process`),
//! against real shells and programs in a private tmux.
//!
//! The probe has no event to wait on, so its live tests re-probe until the
//! expected state shows, within [`BOUND`]: the condition itself is what
//! is waited for.

use std::time::{Duration, Instant};

use crate::support::{BOUND, PrivateTmux, shell_installed};
use tmux_mcp::process::{self, Activity, Probe};

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

    // A REPL editing its line in raw mode under poll.
    type_line(&tmux, &pane, "python3 -q");
    until_in(pid, Activity::Input, Some("python3")).await;
    type_line(&tmux, &pane, "import time; time.sleep(100)");
    until(pid, Activity::Running).await;
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    until(pid, Activity::Input).await;
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
