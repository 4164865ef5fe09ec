//! The end scripts run_command leaves beside the tmux socket
//! (`<socket>.tmux-mcp-end-<N>`) for a command that outlived its call go
//! when that command ends: with its pane (killed or respawned, as a
//! person does it from the tmux CLI), at the server's exit, or, left by
//! a server that is gone, in the sweep of the next one. A script whose
//! command still runs stays for a restarted server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;

use crate::commands_live::{BASH, call, server, tmux_less_shell, until_end_recorded};
use crate::pane_clean_live::shell_pane;
use crate::ssh_live::Remote;
use crate::support::mcp::McpClient;
use crate::support::{BOUND, PrivateTmux, ok};

/// The end script of `pane` (`%N`) beside the server's socket.
fn script_of(tmux: &PrivateTmux, pane: &str) -> PathBuf {
    beside(tmux, &format!(".tmux-mcp-end-{}", &pane[1..]))
}

/// `<socket path><suffix>`, the socket path as tmux gives it.
fn beside(tmux: &PrivateTmux, suffix: &str) -> PathBuf {
    let socket = tmux.cmd(&["display-message", "-p", "#{socket_path}"]);
    PathBuf::from(format!("{}{suffix}", socket.trim()))
}

/// Waits (bounded) until nothing is at `path`.
async fn until_gone(path: &Path, what: &str) {
    let started = Instant::now();
    while path.symlink_metadata().is_ok() {
        assert!(
            started.elapsed() < BOUND,
            "{what}: {} stayed",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Closes the server's input (its shutdown signal) and waits for it to
/// exit, bounded.
async fn exit(mut client: McpClient, mut child: tokio::process::Child) {
    tokio::time::timeout(BOUND, client.close())
        .await
        .expect("the server closed its output in time");
    let status = tokio::time::timeout(BOUND, child.wait())
        .await
        .expect("the server exited in time")
        .expect("its status");
    assert!(status.success(), "{status}");
}

/// Issue 34.3: a background command's pane killed, or respawned, from the
/// tmux CLI: its script goes with it (the command ended). On two threads,
/// so the server follows the command while the test's tmux CLI runs, as
/// it would in the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_script_goes_when_its_pane_is_killed_or_respawned() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    for ends in [&["kill-pane", "-t"][..], &["respawn-pane", "-k", "-t"]] {
        let pane = shell_pane(&tmux, ends[0], BASH).await;
        let r = ok(
            &svc,
            "run_command",
            json!({"pane_id": pane, "command": "sleep 30", "background": true}),
        )
        .await;
        assert!(r["command_id"].is_string(), "{r}");
        let script = script_of(&tmux, &pane);
        assert!(
            script.is_file(),
            "{ends:?}: no script at {}",
            script.display()
        );
        // Killed while it runs, as a person would.
        tmux.until_foreground(&pane, "sleep").await;
        tmux.cmd(&[ends, &[pane.as_str()]].concat());
        until_gone(&script, ends[0]).await;
    }
}

/// On a server reached over ssh the script is written and removed there
/// (the "remote" host is this machine): its pane killed, it goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_end_script_goes_when_its_pane_is_killed() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let pane = shell_pane(&remote.tmux, "bash", BASH).await;
    let start = json!({"pane_id": pane, "command": "sleep 30", "background": true});
    let r = remote.ok("run_command", start).await;
    assert!(r["command_id"].is_string(), "{r}");
    let script = script_of(&remote.tmux, &pane);
    assert!(script.is_file(), "no script at {}", script.display());
    remote.tmux.until_foreground(&pane, "sleep").await;
    remote.tmux.cmd(&["kill-pane", "-t", &pane]);
    until_gone(&script, "remote kill-pane").await;
}

/// On a server reached over ssh, a pane whose shell has no `tmux` on its
/// `PATH` records its command's end: the script names the remote host's
/// tmux by its absolute path (issue 29).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_shell_without_tmux_on_its_path_records_its_end() {
    let Some(remote) = Remote::start() else {
        return;
    };
    let (bin, shell, fifo) = tmux_less_shell("remote");
    let pane = shell_pane(&remote.tmux, "bare", &shell).await;
    let command = format!("cat {}; exit 5", fifo.display());
    let start = json!({"pane_id": pane, "command": command, "background": true});
    // A server of its own, gone before the command ends: the end comes
    // to tmux through the script alone.
    let svc = crate::ssh_live::service(&remote.sshd, Duration::from_secs(10));
    let r = ok(&svc, "run_command", remote.args(start)).await;
    let id = r["command_id"].as_str().expect("a command id").to_owned();
    svc.shutdown().await;
    std::fs::write(&fifo, "").expect("the fifo's writer");
    until_end_recorded(&remote.tmux, &pane, &id).await;
    let _ = std::fs::remove_dir_all(&bin);
}

/// The server exits just after a pane of one of its commands was killed:
/// that script is gone once it exited, while the script of a command
/// still running stays (a restarted server learns its end from it). A
/// server that took a command over (and follows none) lets its script go
/// at exit once its pane was killed.
#[tokio::test]
async fn at_exit_only_the_scripts_of_running_commands_stay() {
    let tmux = PrivateTmux::start();
    let killed = shell_pane(&tmux, "killed", BASH).await;
    let running = shell_pane(&tmux, "running", BASH).await;
    let (mut a, first) = server(&tmux).await;
    for pane in [&killed, &running] {
        let start = json!({"pane_id": pane, "command": "sleep 30", "background": true});
        call(&mut a, "run_command", start).await;
        assert!(script_of(&tmux, pane).is_file(), "{pane}");
    }
    tmux.cmd(&["kill-pane", "-t", &killed]);
    exit(a, first).await;
    assert!(
        !script_of(&tmux, &killed).exists(),
        "the killed pane's stayed"
    );
    let kept = script_of(&tmux, &running);
    assert!(kept.is_file(), "the running command's went");

    // A new server takes the running command over from tmux; its pane is
    // then killed while that server follows nothing.
    let (mut b, second) = server(&tmux).await;
    let listed = call(&mut b, "list_commands", json!({"running": true})).await;
    assert_eq!(
        listed["commands"][0]["pane_id"],
        running.as_str(),
        "{listed}"
    );
    tmux.cmd(&["kill-pane", "-t", &running]);
    exit(b, second).await;
    assert!(!kept.exists(), "the taken-over command's script stayed");
}

/// Scripts left beside the socket with no pane (a server that died, a
/// pane killed while no server ran) are swept by the next server before
/// it writes its first: only regular files of ours, named exactly so,
/// whose pane the live server does not have.
#[tokio::test]
async fn the_first_script_written_sweeps_those_whose_pane_is_gone() {
    let tmux = PrivateTmux::start();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    let live = tmux.first_pane();
    let left = |suffix: &str| {
        let path = beside(&tmux, suffix);
        std::fs::write(&path, "exit 0\n").unwrap();
        // Left some time ago.
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        path
    };
    let stale = left(".tmux-mcp-end-999");
    let kept = [
        left(&format!(".tmux-mcp-end-{}", &live[1..])),
        left(".tmux-mcp-end-0999"),
        left(".tmux-mcp-end-998x"),
        left("x.tmux-mcp-end-997"),
    ];
    let victim = left(".victim");
    let link = beside(&tmux, ".tmux-mcp-end-996");
    std::os::unix::fs::symlink(&victim, &link).unwrap();

    let svc = tmux.service();
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "sleep 30", "background": true}),
    )
    .await;
    assert!(r["command_id"].is_string(), "{r}");
    assert!(!stale.exists(), "{} stayed", stale.display());
    for path in kept.iter().chain([&victim, &link]) {
        assert!(path.symlink_metadata().is_ok(), "{} went", path.display());
        std::fs::remove_file(path).unwrap();
    }
    // Its own command runs on: its script stays until the server is killed.
    let script = script_of(&tmux, &pane);
    assert!(script.is_file());
    std::fs::remove_file(script).unwrap();
}
