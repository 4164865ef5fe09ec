//! The wait-for channel tools against a live private tmux server: waits
//! are checked for their bounds and for the tmux processes they leave
//! behind (none).

use std::time::{Duration, Instant};

use crate::support::{BOUND, PrivateTmux, call, err, next_report, ok, shared, start_with_progress};
use serde_json::json;
use tmux_mcp::mcp::{CallContext, Service};
use tokio_util::sync::CancellationToken;

/// Live `tmux ... wait-for <channel>` processes (any socket), by pid.
/// Channel names carry the test's pid, so other tests do not interfere.
fn waiters(channel: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        // `... wait-for [--] <channel>`, not `wait-for -S ...`.
        let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let Some(at) = argv.iter().position(|a| *a == b"wait-for") else {
            continue;
        };
        let rest: Vec<&[u8]> = argv[at + 1..]
            .iter()
            .copied()
            .filter(|a| *a != b"--" && !a.is_empty())
            .collect();
        if rest == [channel.as_bytes()] {
            pids.push(pid);
        }
    }
    pids
}

/// Polls `cond` until it holds, failing after `within`.
async fn until(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn wait_and_signal_round_trip() {
    let tmux = PrivateTmux::start();
    let svc = shared(tmux.service());
    let channel = format!("rt-{}", std::process::id());

    let waiting = {
        let svc = svc.clone();
        let channel = channel.clone();
        tokio::spawn(async move {
            ok(
                &svc,
                "wait_for_channel",
                json!({"channel": channel, "timeout": 10}),
            )
            .await
        })
    };
    // Signal only once the waiter is armed, so this is not the pending path.
    until(Duration::from_secs(5), "the waiter", || {
        !waiters(&channel).is_empty()
    })
    .await;
    let signalled = ok(&svc, "signal_channel", json!({"channel": channel})).await;
    assert_eq!(signalled, format!("Channel '{channel}' signalled"));
    let woke = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the wait returns once signalled")
        .unwrap();
    assert_eq!(
        woke,
        format!("Channel '{channel}' was signalled (timeout 10.0s)")
    );
    assert!(waiters(&channel).is_empty());

    // A channel name that looks like a flag is still a channel name.
    ok(&svc, "signal_channel", json!({"channel": "-S"})).await;
    ok(
        &svc,
        "wait_for_channel",
        json!({"channel": "-S", "timeout": 5}),
    )
    .await;
}

#[tokio::test]
async fn pending_signal_is_consumed_by_the_next_wait() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let channel = format!("pending-{}", std::process::id());
    ok(&svc, "signal_channel", json!({"channel": channel})).await;
    let started = Instant::now();
    ok(
        &svc,
        "wait_for_channel",
        json!({"channel": channel, "timeout": 10}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    // Consumed: the next wait times out.
    let msg = err(
        &svc,
        "wait_for_channel",
        json!({"channel": channel, "timeout": 0.3}),
    )
    .await;
    assert!(msg.contains("was not signalled within 0.3s"), "{msg}");
}

#[tokio::test]
async fn wait_times_out_and_kills_its_waiter() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let channel = format!("timeout-{}", std::process::id());

    let started = Instant::now();
    let result = call(
        &svc,
        "wait_for_channel",
        json!({"channel": channel, "timeout": 0.3}),
    )
    .await;
    let elapsed = started.elapsed();
    assert!(result.is_error);
    let text = result.content[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "wait-for timeout: channel '{channel}' was not signalled within 0.3s"
        )),
        "{text}"
    );
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    // The child was killed and reaped before the call returned.
    assert_eq!(waiters(&channel), Vec::<u32>::new());

    // tmux (3.3a) itself keeps the killed client's waiter on the channel
    // until the next signal, which wakes it: a signal with no live waiter
    // after a timeout is absorbed instead of being kept pending.
    ok(&svc, "signal_channel", json!({"channel": channel})).await;
    let msg = err(
        &svc,
        "wait_for_channel",
        json!({"channel": channel, "timeout": 0.3}),
    )
    .await;
    assert!(msg.contains("was not signalled within 0.3s"), "{msg}");
    // A re-armed wait is woken normally (a signal wakes every waiter,
    // stale or live).
    let svc = shared(svc);
    let waiting = {
        let (svc, channel) = (svc.clone(), channel.clone());
        tokio::spawn(async move {
            ok(
                &svc,
                "wait_for_channel",
                json!({"channel": channel, "timeout": 10}),
            )
            .await
        })
    };
    until(Duration::from_secs(5), "the waiter", || {
        !waiters(&channel).is_empty()
    })
    .await;
    ok(&svc, "signal_channel", json!({"channel": channel})).await;
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the re-armed wait is woken")
        .unwrap();
    assert_eq!(waiters(&channel), Vec::<u32>::new());
}

#[tokio::test]
async fn wait_timeout_is_clamped_to_the_ceiling() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service_with(&[("LIBTMUX_MCP_WAIT_MAX_SECONDS", "1")]);
    let started = Instant::now();
    let msg = err(
        &svc,
        "wait_for_channel",
        json!({"channel": "clamped", "timeout": 500}),
    )
    .await;
    assert!(msg.contains("was not signalled within 1.0s"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn channel_arguments_are_validated() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let long = "a".repeat(129);
    for bad in ["", "a b", "x;y", "a/b", "é", long.as_str()] {
        for tool in ["wait_for_channel", "signal_channel"] {
            let msg = err(&svc, tool, json!({"channel": bad})).await;
            assert!(
                msg.starts_with("Invalid channel name"),
                "{tool} {bad}: {msg}"
            );
        }
        assert!(waiters(bad).is_empty());
    }
    for bad in [0.0, -1.0] {
        let msg = err(
            &svc,
            "wait_for_channel",
            json!({"channel": "ok", "timeout": bad}),
        )
        .await;
        assert!(msg.contains("timeout must be a positive"), "{msg}");
    }
    let msg = err(&svc, "wait_for_channel", json!({})).await;
    assert!(msg.contains("channel"), "{msg}");
    let msg = err(
        &svc,
        "signal_channel",
        json!({"channel": "x", "timeout": 1}),
    )
    .await;
    assert!(msg.contains("unknown argument"), "{msg}");
}

#[tokio::test]
async fn cancelled_wait_returns_promptly_and_kills_its_child() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let channel = format!("cancel-{}", std::process::id());
    let ctx = CallContext::detached();
    let cancel = ctx.cancel.clone();
    let fut = svc
        .call_tool(
            "wait_for_channel",
            json!({"channel": channel, "timeout": 30}),
            ctx,
        )
        .unwrap();
    let task = tokio::spawn(fut);
    until(Duration::from_secs(5), "the waiter", || {
        !waiters(&channel).is_empty()
    })
    .await;

    let started = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("a cancelled wait returns promptly")
        .unwrap();
    assert!(result.is_error);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(waiters(&channel), Vec::<u32>::new());
}

#[tokio::test]
async fn wait_ends_when_the_server_goes_away() {
    let tmux = PrivateTmux::start();
    let svc = shared(tmux.service());
    let channel = format!("gone-{}", std::process::id());
    let waiting = {
        let (svc, channel) = (svc.clone(), channel.clone());
        tokio::spawn(async move {
            err(
                &svc,
                "wait_for_channel",
                json!({"channel": channel, "timeout": 10}),
            )
            .await
        })
    };
    until(Duration::from_secs(5), "the waiter", || {
        !waiters(&channel).is_empty()
    })
    .await;
    // PrivateTmux's drop cannot ask a dead server where its socket is.
    let socket = tmux.socket_path();
    // A clean shutdown makes `tmux wait-for` exit 0, like a signal would.
    tmux.cmd(&["kill-server"]);
    let _ = std::fs::remove_file(socket);
    let msg = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the wait ends with the server")
        .unwrap();
    assert!(
        msg.contains("the tmux server is no longer running"),
        "{msg}"
    );
}

#[tokio::test]
async fn wait_for_channel_reports_progress_while_it_blocks() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let channel = format!("paced-{}", std::process::id());
    let args = json!({"channel": channel, "timeout": 30});
    let (call, mut progress) =
        start_with_progress(&svc, "wait_for_channel", args, CancellationToken::new());
    // Reports come on their interval while the wait-for process blocks.
    let mut last = 0.0;
    for _ in 0..2 {
        let tick = next_report(&mut progress).await;
        let elapsed = tick["progress"].as_f64().unwrap();
        assert!(elapsed > last, "progress grows: {tick}");
        last = elapsed;
        assert_eq!(tick["total"], 30.0, "{tick}");
        let message = tick["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("Waiting on channel '{channel}': "))
                && message.ends_with("s left"),
            "{tick}"
        );
    }
    ok(&svc, "signal_channel", json!({"channel": channel})).await;
    let result = tokio::time::timeout(BOUND, call)
        .await
        .expect("finished in time")
        .expect("no panic");
    assert!(!result.is_error, "{:?}", result.content);
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(
        text.contains(&format!("Channel '{channel}' was signalled")),
        "{text}"
    );
}
