//! What the pane is doing, as `run_command` reports it: whether its
//! foreground is a shell it can type into, and, when a command did not
//! end, whether it runs, waits for input, or ended the pane.

use std::time::{Duration, Instant};

use crate::drive::pane::pane_now;
use crate::drive::probe::{self, probe_once};
use crate::drive::watch::Watch;
use crate::drive::{ErrorKind, Target, ToolError, ToolResult};
use crate::process::{Activity, Probe};
use crate::tmux::PaneId;

/// Shells whose syntax run_command speaks (POSIX, or fish), by the name
/// tmux reports as the pane's current command.
const SHELLS: &[&str] = &[
    "sh", "dash", "bash", "rbash", "zsh", "fish", "ksh", "ksh93", "mksh", "oksh", "pdksh", "ash",
    "yash", "posh",
];

/// Is `command` (tmux's `pane_current_command`) a shell run_command can
/// drive?
pub fn is_shell(command: &str) -> bool {
    SHELLS.contains(&command)
}

/// How long a pane whose foreground is not a shell may take to show one
/// (a pane just started runs `env … sh` for a moment) before it is refused.
const SHELL_WAIT: Duration = Duration::from_millis(500);

/// How long after its start a pane's shell may take to reach its prompt:
/// its start-up files run commands in the foreground first (`pyenv init`,
/// nvm, oh-my-zsh take a second or more), which are no program of the
/// person's to refuse.
const START_WAIT: Duration = Duration::from_secs(5);

/// Waits until the pane's foreground process is a shell, re-reading it when
/// the pane prints (a shell starting draws its prompt), at most
/// `SHELL_WAIT`, or until `START_WAIT` after the pane's process started;
/// else refuses: typing the command would feed it to that program
/// instead. A program that already waits for terminal input (the process
/// probe says so) is no shell on its way, and is refused at once. A shell
/// that started less than `START_WAIT` ago and has drawn nothing yet
/// ([`crate::drive::watch::Geometry::blank`]) is waited for until it
/// draws: fish runs its start-up file in its own process group, so its
/// foreground reads `fish` meanwhile, and a line typed then is echoed
/// before the prompt (issue 29, 5).
pub async fn await_shell(watch: &mut Watch, target: &Target) -> ToolResult<()> {
    if is_shell(&watch.command) && !watch.geometry.blank {
        return Ok(());
    }
    let starting_until = starting_until(watch, target).await;
    let deadline = (Instant::now() + SHELL_WAIT).max(starting_until.unwrap_or(Instant::now()));
    // What the watch read when it began may predate the output that
    // changed it: each look follows a mark of the recording as seen, so
    // whatever comes after the look wakes the wait.
    while !is_shell(&watch.command) {
        watch.follower_mut().mark_seen();
        watch.refresh_geometry(target).await?;
        if is_shell(&watch.command) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let local = watch.pid != 0 && target.hub.local_socket().is_some();
        let reading = local
            && matches!(
                probe_once(watch.pid, &watch.tty).await.activity,
                Activity::Input | Activity::Secret
            );
        if left.is_zero() || reading {
            return Err(not_a_shell(watch));
        }
        watch.changed(left).await;
    }
    match starting_until {
        Some(until) => until_drawn(watch, target, until).await,
        None => Ok(()),
    }
}

/// Waits until the watched pane draws something (its screen no longer
/// [`blank`](crate::drive::watch::Geometry::blank)), or until `until`.
async fn until_drawn(watch: &mut Watch, target: &Target, until: Instant) -> ToolResult<()> {
    while watch.geometry.blank {
        watch.follower_mut().mark_seen();
        watch.refresh_geometry(target).await?;
        let left = until.saturating_duration_since(Instant::now());
        if !watch.geometry.blank || left.is_zero() || !watch.changed(left).await {
            break;
        }
    }
    Ok(())
}

/// Before input into a pane whose screen is blank: when its own process
/// is a local shell that started less than `START_WAIT` ago, waits until
/// it draws (its first prompt) or that time is up, so that what is typed
/// is not echoed before the prompt or read by a start-up file's command
/// (issue 29, 5). A process that is no shell yet may be on its way to one
/// (`env VAR=… zsh`, `sh -c` before its exec): it is given `SHELL_WAIT`
/// from its start to become one. Whether it waited: the caller's look is
/// then stale.
pub async fn await_first_draw(target: &Target, pane: PaneId, pid: u32) -> ToolResult<bool> {
    if pid == 0 || target.hub.local_socket().is_none() {
        return Ok(false);
    }
    let mut watch = None;
    loop {
        let Some(started) = probe::started(pid).await else {
            return Ok(watch.is_some());
        };
        let bound = if started.shell {
            START_WAIT
        } else {
            SHELL_WAIT
        };
        let Some(left) = bound
            .checked_sub(started.age)
            .filter(|left| !left.is_zero())
        else {
            return Ok(watch.is_some());
        };
        let watch = match &mut watch {
            Some(watch) => watch,
            None => watch.insert(Watch::start(target, pane).await?),
        };
        until_drawn(watch, target, Instant::now() + left).await?;
        if !watch.geometry.blank || started.shell {
            return Ok(true);
        }
    }
}

/// When a local pane's process started less than `START_WAIT` ago, the
/// moment that much time will have passed since; `None` for an older or a
/// remote one (whose pid is not this machine's).
pub async fn starting_until(watch: &Watch, target: &Target) -> Option<Instant> {
    if watch.pid == 0 || target.hub.local_socket().is_none() {
        return None;
    }
    let age = probe::started(watch.pid).await?.age;
    (age < START_WAIT).then(|| Instant::now() + (START_WAIT - age))
}

fn not_a_shell(watch: &Watch) -> ToolError {
    let running = if watch.command.is_empty() {
        "no known command".to_owned()
    } else {
        format!("`{}`", watch.command)
    };
    ToolError::new(
        ErrorKind::Refused,
        format!(
            "pane {} is running {running}, not a shell at its prompt: run_command would type into it",
            watch.id
        ),
    )
    .suggest(
        "Answer it with send_keys, stop it with send_keys(keys='C-c', enter=false), or wait_for_text for its shell's prompt.",
    )
}

const WAITS_FOR_SECRET: &str = "the command is waiting for a password (the terminal does not echo): a person types it in the pane; wait_for_state(states=['prompt']) follows, send C-c (send_keys keys='C-c' enter=false) gives up";
const WAITS_FOR_INPUT: &str = "the command is waiting for input: answer with send_keys, or send C-c (send_keys keys='C-c' enter=false)";

/// What the pane is doing when its command did not end by the deadline,
/// and what the agent can do about it: from the process probe (`/proc`),
/// else from what tmux reports. `live`: the command ran in the pane's own
/// shell, so that shell reading the terminal is the command's doing (its
/// `read`, or more lines it asked for), not a prompt.
pub async fn after_timeout(target: &Target, watch: &Watch, live: bool) -> (Activity, String) {
    // A remote pane's pid is not this machine's: tmux's view only.
    let local = target.hub.local_socket().is_some();
    let probe = match local && watch.pid != 0 {
        true => Some(probe_once(watch.pid, &watch.tty).await),
        false => None,
    };
    let (activity, foreground) = match probe {
        Some(p) => (Some(p.activity), p.foreground_command),
        None => (None, None),
    };
    match activity {
        Some(Activity::Exited) => return exited(),
        Some(Activity::Input) => return (Activity::Input, WAITS_FOR_INPUT.to_owned()),
        Some(Activity::Secret) => return (Activity::Secret, WAITS_FOR_SECRET.to_owned()),
        Some(Activity::Prompt) if live => return (Activity::Input, WAITS_FOR_INPUT.to_owned()),
        Some(Activity::Running) => return running(foreground.as_deref().unwrap_or_default()),
        _ => {}
    }
    match pane_now(target, watch.id).await {
        Ok(Some(now)) if !now.dead => running(&now.command),
        Ok(_) => exited(),
        // No answer is no news of an end (issue 33: a live shell read
        // `exited` while tmux's queue was held).
        Err(e) => {
            let (state, note) = running("");
            (
                state,
                format!("{note} (tmux did not answer: {})", e.message),
            )
        }
    }
}

fn exited() -> (Activity, String) {
    (Activity::Exited, "the pane's process ended".to_owned())
}

fn running(command: &str) -> (Activity, String) {
    let what = if command.is_empty() || is_shell(command) {
        "the command".to_owned()
    } else {
        format!("`{command}`")
    };
    (
        Activity::Running,
        format!(
            "{what} is still running: wait_for_command(command_id) follows it, stop_command(command_id) stops it"
        ),
    )
}

/// `probe`, unless it says `Prompt` for a shell that started less than
/// `START_WAIT` ago (`starting_until`) and has drawn nothing yet: that one
/// is still starting (fish runs its start-up file in its own process
/// group, with a thread of its own waiting in `poll`), so `Running`.
pub async fn before_first_prompt(
    watch: &mut Watch,
    target: &Target,
    starting_until: Option<Instant>,
    probe: Probe,
) -> Probe {
    let starting = starting_until.is_some_and(|until| Instant::now() < until);
    if probe.activity != Activity::Prompt || !starting {
        return probe;
    }
    if watch.refresh_geometry(target).await.is_err() || !watch.geometry.blank {
        return probe;
    }
    Probe {
        activity: Activity::Running,
        ..probe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_are_told_from_other_programs() {
        for shell in ["bash", "sh", "dash", "zsh", "fish", "ksh"] {
            assert!(is_shell(shell), "{shell}");
        }
        for other in ["cat", "python3", "vim", "less", "", "bash5"] {
            assert!(!is_shell(other), "{other}");
        }
    }
}
