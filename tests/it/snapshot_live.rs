//! snapshot_pane against a live private tmux server: its fields are
//! checked against tmux's own `display-message`.

use std::time::Duration;

use crate::support::{PrivateTmux, err, ok};
use serde_json::json;

/// A window running `seq 1 <n>` and then nothing else, so its screen is
/// static; returns its pane id once the output is there.
async fn static_pane(tmux: &PrivateTmux, n: u32) -> String {
    let channel = format!("filled-{n}");
    let script = format!("seq 1 {n}; tmux wait-for -S {channel}; exec sleep 1000");
    let pane = tmux.cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}", &script]);
    tmux.wait_for(&channel, Duration::from_secs(10)).await;
    let pane = pane.trim().to_owned();
    // The shell signals, then execs sleep.
    tmux.until_foreground(&pane, "sleep").await;
    pane
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
