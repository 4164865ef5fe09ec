//! One look at many panes (issue 21, point 4): `list_panes(states=true)`
//! reports each pane's state from the process probe, in the same call.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{PrivateTmux, ok};

/// A detached window running `command`: its pane id.
fn window(tmux: &PrivateTmux, command: &str) -> String {
    tmux.cmd(&[
        "new-window",
        "-d",
        "-t",
        "main",
        "-P",
        "-F",
        "#{pane_id}",
        command,
    ])
    .trim()
    .to_owned()
}

fn states_of(listed: &Value) -> Vec<(String, Value)> {
    listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| {
            (
                p["pane_id"].as_str().unwrap_or("").to_owned(),
                p["pane_state"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn list_panes_reports_each_panes_state_in_one_call() {
    if !cfg!(target_os = "linux") {
        return; // input and secret come from /proc and the pane's tty
    }
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let prompt = window(&tmux, "bash --norc --noprofile");
    let input = window(&tmux, "bash --norc -c 'read -r x; sleep 100'");
    let secret = window(&tmux, "bash --norc -c 'read -r -s x; sleep 100'");
    let running = window(&tmux, "sleep 100");
    for (pane, state) in [
        (&prompt, "prompt"),
        (&input, "input"),
        (&secret, "secret"),
        (&running, "running"),
    ] {
        // The condition, with a bound: the programs above take a moment.
        let waited = ok(
            &svc,
            "wait_for_state",
            json!({"pane_id": pane, "states": [state], "timeout": 10}),
        )
        .await;
        assert_eq!(waited["state"], state, "{pane}: {waited}");
    }

    let listed = ok(&svc, "list_panes", json!({"states": true})).await;
    let states = states_of(&listed);
    for (pane, state) in [
        (&prompt, "prompt"),
        (&input, "input"),
        (&secret, "secret"),
        (&running, "running"),
    ] {
        let got = states.iter().find(|(id, _)| id == pane);
        assert_eq!(
            got.map(|(_, s)| s.clone()),
            Some(json!(state)),
            "{pane}: {listed}"
        );
    }
    // Without the argument, the reference's result: no pane_state at all.
    let plain = ok(&svc, "list_panes", json!({})).await;
    assert!(
        states_of(&plain).iter().all(|(_, s)| s.is_null()),
        "{plain}"
    );
}

/// The cost per pane: `cargo test --release --test it
/// pane_states_live::cost -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement: run it by name"]
async fn cost_of_states_per_pane() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let kinds = [
        "bash --norc --noprofile",
        "bash --norc -c 'read -r x'",
        "bash --norc -c 'read -r -s x'",
        "sleep 1000",
    ];
    for n in 0..19 {
        window(&tmux, kinds[n % kinds.len()]);
    }
    let panes = states_of(&ok(&svc, "list_panes", json!({})).await).len();
    let rounds = 50;
    let time = |states: bool| {
        let svc = &svc;
        async move {
            let started = Instant::now();
            for _ in 0..rounds {
                ok(svc, "list_panes", json!({"states": states})).await;
            }
            started.elapsed() / rounds
        }
    };
    let _warm = time(true).await;
    let plain = time(false).await;
    let with = time(true).await;
    let per_pane = with.saturating_sub(plain).as_secs_f64() * 1000.0 / panes as f64;
    println!(
        "{panes} panes: list_panes {:.3} ms, with states {:.3} ms: {per_pane:.3} ms per pane",
        plain.as_secs_f64() * 1000.0,
        with.as_secs_f64() * 1000.0
    );
    assert!(with > Duration::ZERO);
}
