//! snapshot_pane and the wait-for channel tools against a live private tmux
//! server. Snapshot fields are checked against tmux's own `display-message`;
//! channel waits are checked for their bounds and for the tmux processes
//! they leave behind (none).

use std::time::{Duration, Instant};

use crate::support::{PrivateTmux, call, err, ok, shared};
use serde_json::json;
use tmux_mcp::mcp::{CallContext, Service};

/// A window running `seq 1 <n>` and then nothing else, so its screen is
/// static; returns its pane id once the output is there.
async fn static_pane(tmux: &PrivateTmux, n: u32) -> String {
    let channel = format!("filled-{n}");
    let script = format!("seq 1 {n}; tmux wait-for -S {channel}; exec sleep 1000");
    let pane = tmux.cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}", &script]);
    tmux.wait_for(&channel, Duration::from_secs(10)).await;
    pane.trim().to_owned()
}

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
async fn snapshot_matches_tmux_own_view() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = static_pane(&tmux, 30).await;
    tmux.cmd(&["select-pane", "-t", &pane, "-T", "my title"]);

    let snap = ok(&svc, "snapshot_pane", json!({"pane_id": pane})).await;
    let lines: Vec<String> = (1..=30).map(|i| i.to_string()).collect();
    assert_eq!(snap["content"], lines.join("\n"));
    assert_eq!(snap["content_truncated"], false);
    assert_eq!(snap["content_truncated_lines"], 0);
    assert_eq!(snap["pane_id"], pane.as_str());
    assert_eq!(snap["title"], "my title");
    assert_eq!(snap["pane_current_command"], "sleep");
    assert_eq!(snap["pane_in_mode"], false);
    assert_eq!(snap["pane_mode"], serde_json::Value::Null);
    assert_eq!(snap["pane_dead"], false);
    assert_eq!(snap["alternate_on"], false);
    assert_eq!(snap["is_caller"], serde_json::Value::Null);

    let ints = [
        "cursor_x",
        "cursor_y",
        "pane_width",
        "pane_height",
        "history_size",
        "pane_left",
        "pane_top",
        "pane_right",
        "pane_bottom",
    ];
    let flags = [
        "pane_at_left",
        "pane_at_right",
        "pane_at_top",
        "pane_at_bottom",
    ];
    let strs = ["pane_tty", "pane_pid", "pane_current_path"];
    let all: Vec<&str> = ints.iter().chain(&flags).chain(&strs).copied().collect();
    let format = all
        .iter()
        .map(|f| format!("#{{{f}}}"))
        .collect::<Vec<_>>()
        .join("|");
    let theirs = tmux.cmd(&["display-message", "-p", "-t", &pane, &format]);
    let theirs: Vec<&str> = theirs.trim_end_matches('\n').split('|').collect();
    for (field, want) in all.iter().zip(&theirs) {
        let got = &snap[*field];
        if ints.contains(field) {
            assert_eq!(got, &json!(want.parse::<i64>().unwrap()), "{field}");
        } else if flags.contains(field) {
            assert_eq!(got, &json!(*want == "1"), "{field}");
        } else {
            assert_eq!(got, &json!(want), "{field}");
        }
    }
    assert_eq!(snap["cursor_y"], 30);
    assert_eq!(snap["pane_width"], 200);

    // Without pane_id: the first session's first window's first pane.
    let first = tmux.cmd(&["display-message", "-p", "-t", "main:0.0", "#{pane_id}"]);
    let snap = ok(&svc, "snapshot_pane", json!({})).await;
    assert_eq!(snap["pane_id"], first.trim());
}

#[tokio::test]
async fn snapshot_in_copy_mode() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = static_pane(&tmux, 5).await;
    tmux.cmd(&["copy-mode", "-t", &pane]);
    let snap = ok(&svc, "snapshot_pane", json!({"pane_id": pane})).await;
    assert_eq!(snap["pane_in_mode"], true);
    assert_eq!(snap["pane_mode"], "copy-mode");
    assert_eq!(snap["scroll_position"], 0);
    assert_eq!(snap["content"], "1\n2\n3\n4\n5");
}

#[tokio::test]
async fn snapshot_truncates_and_refuses() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = static_pane(&tmux, 30).await;

    let snap = ok(
        &svc,
        "snapshot_pane",
        json!({"pane_id": pane, "max_lines": 5}),
    )
    .await;
    assert_eq!(snap["content"], "26\n27\n28\n29\n30");
    assert_eq!(snap["content_truncated"], true);
    assert_eq!(snap["content_truncated_lines"], 25);

    let snap = ok(
        &svc,
        "snapshot_pane",
        json!({"pane_id": pane, "max_lines": null}),
    )
    .await;
    assert_eq!(snap["content"].as_str().unwrap().lines().count(), 30);
    assert_eq!(snap["content_truncated"], false);

    for bad in [0, -3] {
        let msg = err(
            &svc,
            "snapshot_pane",
            json!({"pane_id": pane, "max_lines": bad}),
        )
        .await;
        assert!(msg.contains("max_lines must be positive or null"), "{msg}");
    }
    let msg = err(&svc, "snapshot_pane", json!({"pane_id": "%999"})).await;
    assert!(msg.starts_with("Pane not found: %999"), "{msg}");
    let msg = err(&svc, "snapshot_pane", json!({"pane_id": "nope"})).await;
    assert!(msg.starts_with("Pane not found"), "{msg}");
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
