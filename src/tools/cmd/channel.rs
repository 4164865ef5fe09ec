//! tmux `wait-for` channels: block until a shell signals, or signal one.
//!
//! `wait-for` holds a control client's whole command queue, so both tools run
//! a `tmux` process of their own, bounded and killed on timeout or
//! cancellation. `wait_for_channel` reports progress while its process
//! blocks (see `paced`).

use std::future::Future;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Config;
use crate::drive::pace::{Pace, Woke};
use crate::tmux::{Command, TmuxError};
use crate::tools::toolsets::Toolset;
use crate::tools::{Call, ErrorKind, Hints, ToolDef, ToolError, ToolResult};

/// Changes nothing of tmux's objects, but consumes or leaves channel state.
const CHANNEL: Hints = Hints::BASE;

/// The reference's bound on `wait-for -S`.
const SIGNAL_TIMEOUT: Duration = Duration::from_secs(5);

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "wait_for_channel",
        Toolset::Manage,
        "Wait For tmux Channel",
        "Block until `tmux wait-for -S <channel>` runs (e.g. send_keys 'make; tmux wait-for -S done'); an earlier signal is consumed at once. A timeout is an error.",
        CHANNEL,
        wait_for_channel,
    )
    .with_own_wait_ceiling());
    tools.push(ToolDef::new(
        "signal_channel",
        Toolset::Manage,
        "Signal tmux Channel",
        "Signal a tmux wait-for channel, waking its waiters; with none, one signal is kept for the next.",
        CHANNEL,
        signal_channel,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForChannelArgs {
    /// 1-128 of A-Z a-z 0-9 _ . : -
    channel: String,
    /// Seconds (> 0), capped by the server.
    #[serde(default = "default_timeout")]
    timeout: f64,
}

fn default_timeout() -> f64 {
    30.0
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SignalChannelArgs {
    /// 1-128 of A-Z a-z 0-9 _ . : -
    channel: String,
}

/// `^[A-Za-z0-9_.:-]{1,128}$`, checked before anything is spawned.
fn check_channel(name: &str) -> ToolResult<()> {
    let ok = (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b));
    if ok {
        return Ok(());
    }
    Err(
        ToolError::invalid(format!("Invalid channel name: {name:?}")).suggest(
            "Channel names are 1 to 128 characters from A-Z, a-z, 0-9, '_', '.', ':' and '-'.",
        ),
    )
}

/// Seconds the way Python prints a float: `30.0`, `0.3`.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.1}")
    } else {
        format!("{}", (s * 1000.0).round() / 1000.0)
    }
}

async fn wait_for_channel(
    Call { app, target, ctx }: Call,
    args: WaitForChannelArgs,
) -> ToolResult<String> {
    let started = Instant::now();
    let channel = args.channel;
    check_channel(&channel)?;
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        return Err(ToolError::invalid(format!(
            "timeout must be a positive number of seconds (received {})",
            args.timeout
        )));
    }
    let timeout = Duration::from_secs_f64(args.timeout.min(app.config.wait_max.as_secs_f64()));
    let cmd = Command::new("wait-for").flag("--").arg(&channel);
    let waited = target.hub.run_oneshot_bounded(&cmd, timeout, &ctx.cancel);
    let mut pace = Pace::new(&ctx, format!("channel '{channel}'"), started, timeout);
    match paced(&mut pace, waited).await {
        Ok(_) => {}
        Err(TmuxError::Timeout(_)) => {
            return Err(ToolError::new(
                ErrorKind::Timeout,
                format!(
                    "wait-for timeout: channel '{channel}' was not signalled within {}s",
                    secs(timeout)
                ),
            )
            .suggest("Check that the command signalling the channel ran (tmux wait-for -S <channel>), or wait again with a longer timeout."));
        }
        Err(TmuxError::Cancelled) => return Err(cancelled()),
        Err(e) => return Err(failed("wait-for failed", &channel, e)),
    }
    // tmux also exits 0 when its server shuts down cleanly.
    let probe = target
        .hub
        .run_oneshot_bounded(
            &Command::new("list-sessions").opt("-F", "#{session_id}"),
            Duration::from_secs(5),
            &ctx.cancel,
        )
        .await;
    match probe {
        Err(TmuxError::NoServer(_)) => Err(ToolError::new(
            ErrorKind::TmuxServerNotRunning,
            format!(
                "wait-for returned for channel '{channel}' but the tmux server is no longer running, so the channel was probably never signalled — tmux exits 0 for both. Re-check the work you were waiting on."
            ),
        )),
        Err(TmuxError::Cancelled) => Err(cancelled()),
        _ => Ok(format!(
            "Channel '{channel}' was signalled (timeout {}s)",
            secs(timeout)
        )),
    }
}

/// Runs the `wait-for` process to its end, reporting progress meanwhile.
///
/// The process blocks inside the tmux server until the channel is
/// signalled, and bounds itself (its timeout, the call's cancellation, both
/// of which kill it). The ticks only wake this task on a bounded interval
/// (a second) to tell the client the call is alive; nothing is sent to
/// tmux between them, and the process is not restarted, so this is not
/// polling.
async fn paced<T>(pace: &mut Pace, waited: impl Future<Output = T>) -> T {
    tokio::pin!(waited);
    loop {
        match pace.sleep(waited.as_mut()).await {
            Woke::Changed(result) => return result,
            Woke::Tick => {}
            // The process's own timeout or cancellation ends it now.
            Woke::Deadline | Woke::Cancelled => return waited.await,
        }
    }
}

async fn signal_channel(
    Call { target, ctx, .. }: Call,
    args: SignalChannelArgs,
) -> ToolResult<String> {
    let channel = args.channel;
    check_channel(&channel)?;
    let cmd = Command::new("wait-for").flag("-S").flag("--").arg(&channel);
    match target
        .hub
        .run_oneshot_bounded(&cmd, SIGNAL_TIMEOUT, &ctx.cancel)
        .await
    {
        Ok(_) => Ok(format!("Channel '{channel}' signalled")),
        Err(TmuxError::Timeout(_)) => Err(ToolError::new(
            ErrorKind::Timeout,
            format!(
                "signal-channel timeout after {}s: channel '{channel}'",
                secs(SIGNAL_TIMEOUT)
            ),
        )),
        Err(TmuxError::Cancelled) => Err(cancelled()),
        Err(e) => Err(failed("signal-channel failed", &channel, e)),
    }
}

/// Never sent: the MCP layer drops the response of a cancelled request.
fn cancelled() -> ToolError {
    ToolError::new(ErrorKind::Cancelled, "The request was cancelled.")
}

fn failed(what: &str, channel: &str, e: TmuxError) -> ToolError {
    let kind = match e {
        TmuxError::NoServer(_) => ErrorKind::TmuxServerNotRunning,
        _ => ErrorKind::TmuxCommand,
    };
    let detail = match &e {
        TmuxError::Command(msg) | TmuxError::NoServer(msg) => msg.clone(),
        other => other.to_string(),
    };
    ToolError::new(kind, format!("{what} for channel '{channel}': {detail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_follow_the_reference_pattern() {
        for ok in ["a", "build_done", "x.y:z-1", "-S", &"a".repeat(128)] {
            assert!(check_channel(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a b", "a;b", "é", "a/b", "a\nb", &"a".repeat(129)] {
            assert!(check_channel(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seconds_print_like_python_floats() {
        assert_eq!(secs(Duration::from_secs(30)), "30.0");
        assert_eq!(secs(Duration::from_secs_f64(0.3)), "0.3");
        assert_eq!(secs(Duration::from_secs_f64(2.5)), "2.5");
    }
}
