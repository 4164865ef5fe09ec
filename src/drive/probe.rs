//! Looking at a pane's process, as the state waits do: the probe of
//! [`crate::process`] run off the async threads, tmux's view where the OS
//! says too little, the settle points of a quiet spell at which to look,
//! and the end of a watched process.

use std::time::Duration;

use crate::drive::Target;
use crate::drive::pane::pane_now;
use tokio::time::Instant;

use crate::process::{self, Activity, ExitWatch, Probe, Prober};
use crate::tmux::PaneId;

/// Quiet spells after the last output at which the probe runs (besides
/// `idle_ms`): soon after a prompt or question is printed, then twice more
/// for a program slow to reach its read.
pub const SETTLE: [Duration; 3] = [
    Duration::from_millis(20),
    Duration::from_millis(100),
    Duration::from_millis(500),
];

/// When to probe a pane in a quiet spell: [`SETTLE`] and, when asked,
/// `idle` after its last output. The one schedule of wait_for_state and
/// of the attention sentries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settle {
    points: Vec<Duration>,
}

impl Settle {
    pub fn new(idle: Option<Duration>) -> Settle {
        let mut points = SETTLE.to_vec();
        points.extend(idle);
        points.sort();
        points.dedup();
        Settle { points }
    }

    pub fn points(&self) -> &[Duration] {
        &self.points
    }

    /// The point due once `passed` points of a spell that began at
    /// `spell` were probed; `None` when all were.
    pub fn next(&self, spell: Instant, passed: usize) -> Option<Instant> {
        self.points.get(passed).map(|point| spell + *point)
    }

    /// How many points of a spell that began at `spell` a probe at `now`
    /// covers.
    pub fn passed(&self, spell: Instant, now: Instant) -> usize {
        let quiet = now.saturating_duration_since(spell);
        self.points
            .iter()
            .take_while(|point| **point <= quiet)
            .count()
    }
}

/// How a pane's process is looked at, the same for every tool that
/// follows a pane (wait_for_state, the attention sentries): the process
/// probe on this machine (kept between looks), tmux's view where the
/// operating system says nothing or the pane runs on another host
/// ([`with_tmux_command`]), and a pane dead from the start exited.
pub struct Look {
    /// `None` for a dead pane, an unknown pid, or another host's.
    prober: Option<Prober>,
    remote: bool,
    dead: bool,
}

impl Look {
    pub fn new(target: &Target, pid: u32, tty: &str, dead: bool) -> Look {
        let remote = target.hub.local_socket().is_none();
        let prober = (!dead && !remote && pid != 0).then(|| Prober::new(pid).with_tty(tty));
        Look {
            prober,
            remote,
            dead,
        }
    }

    /// What the pane `id` is doing now.
    pub async fn at(&mut self, target: &Target, id: PaneId) -> Probe {
        let probe = match self.remote && !self.dead {
            true => Probe::unobserved(),
            false => probe_pane(&mut self.prober).await,
        };
        with_tmux_command(target, id, probe).await
    }
}

/// Resolves when the watched process ends; never without one.
pub async fn ended(watch: Option<&ExitWatch>) {
    match watch {
        Some(w) => w.exited().await,
        None => std::future::pending().await,
    }
}

/// Probes off the async threads (a probe reads /proc: a few files, or
/// with a command running, now and then one per process). `None` (no pid,
/// or a dead pane whose pid may be another process's by now) is exited.
pub async fn probe_pane(prober: &mut Option<Prober>) -> Probe {
    let Some(mut p) = prober.take() else {
        return Probe::exited();
    };
    match tokio::task::spawn_blocking(move || (p.probe(), p)).await {
        Ok((probe, p)) => {
            *prober = Some(p);
            probe
        }
        // A probe never panics; were it to, the pane reads as exited.
        Err(_) => Probe::exited(),
    }
}

/// One probe of process `pid` on terminal `tty`, off the async threads.
pub async fn probe_once(pid: u32, tty: &str) -> Probe {
    probe_pane(&mut Some(Prober::new(pid).with_tty(tty))).await
}

/// How long ago process `pid` started and whether it is a shell
/// ([`process::started`]), off the async threads.
pub async fn started(pid: u32) -> Option<process::Started> {
    tokio::task::spawn_blocking(move || process::started(pid))
        .await
        .ok()
        .flatten()
}

/// Where the OS says nothing but that the process lives (no `/proc`, or
/// a pane on another host), what tmux says: the foreground command
/// (`pane_current_command`) is the pane's shell (`default-shell`) at a
/// prompt, anything else runs. On another host, the pane's terminal read
/// there (`stty` over the same ssh connection) tells a password prompt.
pub async fn with_tmux_command(target: &Target, id: PaneId, probe: Probe) -> Probe {
    if probe.observable != process::OBSERVE_EXITED || probe.activity == Activity::Exited {
        return probe;
    }
    let Ok(Some(now)) = pane_now(target, id).await else {
        return probe;
    };
    if now.dead {
        return Probe::exited();
    }
    let mut probe = from_command(&now.command, &now.shell);
    if let Some(host) = target.hub.ssh_host().filter(|_| !now.tty.is_empty()) {
        let timeout = target.hub.limits().tmux_command_timeout;
        if let Ok(Some(mode)) = host.terminal_mode(&now.tty, timeout).await {
            probe.observable = process::OBSERVE_REMOTE;
            if mode.is_secret() {
                probe.activity = Activity::Secret;
            }
        }
    }
    probe
}

/// The activity tmux's view gives: `command` is the foreground process's
/// name, `shell` the path of the shell panes start (a login shell's name
/// may carry a leading `-`).
fn from_command(command: &str, shell: &str) -> Probe {
    let shell = shell.rsplit('/').next().unwrap_or(shell);
    let at_prompt = !command.is_empty() && command.trim_start_matches('-') == shell;
    Probe {
        activity: if at_prompt {
            Activity::Prompt
        } else {
            Activity::Running
        },
        foreground_pid: None,
        foreground_command: (!command.is_empty()).then(|| command.to_owned()),
        observable: process::OBSERVE_COMMAND,
    }
}

/// The exit watch on the foreground process `probe` names, kept when it
/// is the same process.
pub fn foreground_watch(
    current: Option<(u32, ExitWatch)>,
    probe: &Probe,
    pane_pid: u32,
) -> Option<(u32, ExitWatch)> {
    let pid = probe.foreground_pid.filter(|p| *p != pane_pid)?;
    match current {
        Some((old, watch)) if old == pid => Some((old, watch)),
        _ => ExitWatch::new(pid).map(|w| (pid, w)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_proc_tmux_says_whether_the_shell_holds_the_pane() {
        let at_prompt = from_command("-zsh", "/bin/zsh");
        assert_eq!(at_prompt.activity, Activity::Prompt);
        assert_eq!(at_prompt.foreground_command.as_deref(), Some("-zsh"));
        assert_eq!(
            from_command("bash", "/usr/local/bin/bash").activity,
            Activity::Prompt
        );
        let running = from_command("make", "/bin/bash");
        assert_eq!(running.activity, Activity::Running);
        assert_eq!(running.observable, process::OBSERVE_COMMAND);
        assert_eq!(from_command("", "/bin/sh").activity, Activity::Running);
    }
}
