//! A command is a handle: run_command's `command_id` when it outlives its
//! call, `background`, `wait_for_command`, `list_commands`,
//! `stop_command`; and the pane names the command that runs.

use serde_json::{Value, json};

use crate::pane_clean_live::shell_pane;
use crate::support::{PrivateTmux, ok, shell_installed};

const BASH: &str = "env PS1='$ ' bash --norc --noprofile";

fn id(r: &Value) -> String {
    r["command_id"].as_str().expect("a command_id").to_owned()
}

/// A timed-out command goes on; wait_for_command returns what the first
/// call did not, no line twice, and its exit status.
#[tokio::test]
async fn a_timed_out_command_is_waited_for_to_its_exit_status() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    let command = "for i in 1 2 3; do echo line$i; sleep 1; done; exit 7";
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": command, "timeout": 1}),
    )
    .await;
    assert_eq!(r["timed_out"], true, "{r}");
    assert!(
        r["note"]
            .as_str()
            .unwrap()
            .contains("wait_for_command(command_id)"),
        "{r}"
    );
    let handle = id(&r);
    let mut lines: Vec<Value> = r["output"].as_array().unwrap().clone();
    let w = ok(
        &svc,
        "wait_for_command",
        json!({"command_id": handle, "timeout": 10}),
    )
    .await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(7)),
        "{w}"
    );
    lines.extend(w["output"].as_array().unwrap().iter().cloned());
    assert_eq!(
        lines,
        vec![json!("line1"), json!("line2"), json!("line3")],
        "{r} {w}"
    );
    // Nothing is returned twice.
    let again = ok(
        &svc,
        "wait_for_command",
        json!({"command_id": handle, "timeout": 1}),
    )
    .await;
    assert_eq!(
        (again["exit_status"].clone(), again["output"].clone()),
        (json!(7), json!([]))
    );
}

/// A background command returns once started; its status is kept while
/// nobody waits, and list_commands finds it.
#[tokio::test]
async fn a_background_command_is_listed_and_its_end_kept() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    tmux.cmd(&["wait-for", "-L", "go"]);
    let command = format!(
        "echo started; tmux -S {} wait-for -L go; echo done; exit 3",
        tmux.socket_path().display()
    );
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": command, "timeout": 10, "background": true}),
    )
    .await;
    assert_eq!(
        (r["timed_out"].clone(), r["exit_status"].clone()),
        (json!(false), Value::Null),
        "{r}"
    );
    let handle = id(&r);
    let listed = ok(&svc, "list_commands", json!({"running": true})).await;
    let entry = &listed["commands"][0];
    assert_eq!(
        (entry["command_id"].as_str(), entry["running"].clone()),
        (Some(handle.as_str()), json!(true)),
        "{listed}"
    );
    assert_eq!(entry["command"], command);
    // It ends while no call waits; the follower keeps its status.
    tmux.cmd(&["wait-for", "-U", "go"]);
    let w = ok(
        &svc,
        "wait_for_command",
        json!({"command_id": handle, "timeout": 10}),
    )
    .await;
    assert_eq!(w["exit_status"], 3, "{w}");
    let finished = ok(
        &svc,
        "list_commands",
        json!({"pane_id": pane, "running": false}),
    )
    .await;
    assert_eq!(finished["commands"][0]["exit_status"], 3, "{finished}");
    assert!(finished["commands"][0]["ended_at"].is_number());
}

/// stop_command interrupts the command's own processes, not the shell;
/// meanwhile the pane names the command (`sleep`), not a shell.
#[tokio::test]
async fn stop_command_signals_the_command_and_the_pane_names_it() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    for (shell, start) in [
        ("bash", BASH),
        (
            "fish",
            "fish --no-config -C 'function fish_prompt; echo -n \"\\$ \"; end'",
        ),
    ] {
        if !shell_installed(shell, "the subshell's exec") {
            continue;
        }
        let pane = shell_pane(&tmux, shell, start).await;
        for subshell in [true, false] {
            let r = ok(
                &svc,
                "run_command",
                json!({"pane_id": pane, "command": "sleep 30", "background": true, "in_subshell": subshell}),
            )
            .await;
            let handle = id(&r);
            tmux.until_foreground(&pane, "sleep").await;
            let s = ok(&svc, "stop_command", json!({"command_id": handle})).await;
            assert_eq!(s["running"], false, "{shell} {subshell}: {s}");
            let status = s["exit_status"].as_i64();
            assert!(status.is_some_and(|s| s != 0), "{shell} {subshell}: {s}");
            // The pane's shell lives on.
            let r = ok(
                &svc,
                "run_command",
                json!({"pane_id": pane, "command": "echo alive", "timeout": 10}),
            )
            .await;
            assert_eq!(r["output"], json!(["alive"]), "{shell}");
        }
    }
}
