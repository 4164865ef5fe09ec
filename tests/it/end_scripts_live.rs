//! The end scripts run_command leaves beside the tmux socket
//! (`<socket>.tmux-mcp-end-<N>`) for a command that outlived its call go
//! when that command ends: with its pane (killed or respawned, as a
//! person does it from the tmux CLI).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::commands_live::BASH;
use crate::pane_clean_live::shell_pane;
use crate::support::{BOUND, PrivateTmux, ok};

/// The end script of `pane` (`%N`) beside the server's socket.
fn script_of(tmux: &PrivateTmux, pane: &str) -> PathBuf {
    let socket = tmux.cmd(&["display-message", "-p", "#{socket_path}"]);
    PathBuf::from(format!("{}.tmux-mcp-end-{}", socket.trim(), &pane[1..]))
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
