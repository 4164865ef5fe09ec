//! A command is a handle: run_command's `command_id` when it outlives its
//! call, `background`, `wait_for_command`, `list_commands`,
//! `stop_command`; and the pane names the command that runs.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::pane_clean_live::shell_pane;
use crate::support::mcp::McpClient;
use crate::support::{BOUND, PrivateTmux, ok, shell_installed};

pub(crate) const BASH: &str = "env PS1='$ ' bash --norc --noprofile";
const FISH: &str = "fish --no-config -C 'function fish_prompt; echo -n \"\\$ \"; end'";

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

/// stop_command waits for the end as long as its `timeout` says: a
/// command that ignores the signal is still running when it answers,
/// and a stronger signal then ends it (issue 33).
#[tokio::test]
async fn stop_command_waits_as_long_as_its_timeout() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    // Ignored in the pane's shell, SIGINT is ignored in what it runs.
    let ignore = json!({"pane_id": pane, "command": "trap '' INT", "in_subshell": false});
    ok(&svc, "run_command", ignore).await;
    let r = json!({"pane_id": pane, "command": "sleep 30", "background": true});
    let handle = id(&ok(&svc, "run_command", r).await);
    tmux.until_foreground(&pane, "sleep").await;
    let bad = json!({"command_id": handle, "timeout": "soon"});
    let bad = crate::support::err(&svc, "stop_command", bad).await;
    assert!(bad.contains("timeout"), "{bad}");
    let stop = json!({"command_id": handle, "timeout": 0.5});
    let s = ok(&svc, "stop_command", stop).await;
    assert_eq!(s["running"], true, "{s}");
    let waited = s["elapsed_seconds"].as_f64().unwrap_or(f64::MAX);
    assert!((0.5..5.0).contains(&waited), "{s}");
    let kill = json!({"command_id": handle, "signal": "KILL"});
    let s = ok(&svc, "stop_command", kill).await;
    assert_eq!(
        (s["running"].clone(), s["exit_status"].clone()),
        (json!(false), json!(137)),
        "{s}"
    );
}

/// The binary on its stdio against `tmux`, initialized.
pub(crate) async fn server(tmux: &PrivateTmux) -> (McpClient, tokio::process::Child) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tmux-mcp"));
    command
        .env("LIBTMUX_SOCKET", &tmux.name)
        .env_remove("LIBTMUX_SOCKET_PATH")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE");
    let (mut client, child) = McpClient::spawn(command, BOUND);
    client.initialize("2025-06-18").await;
    (client, child)
}

pub(crate) async fn call(client: &mut McpClient, name: &str, arguments: Value) -> Value {
    let r = client.call(name, arguments).await;
    assert_ne!(r["isError"], true, "{name}: {r}");
    r["structuredContent"].clone()
}

/// Takes tmux's lock `lock`, which `command` waits for, and runs it in the
/// background in `pane`: its command id.
async fn held_in_background(
    tmux: &PrivateTmux,
    client: &mut McpClient,
    pane: &str,
    lock: &str,
    command: &str,
) -> String {
    tmux.cmd(&["wait-for", "-L", lock]);
    let run = json!({"pane_id": pane, "command": command, "background": true});
    id(&call(client, "run_command", run).await)
}

/// Waits until `pane`'s option `@tmux_mcp_end` names `id`: the wrapper
/// recorded the end (tmux has no event for an option set).
pub(crate) async fn until_end_recorded(tmux: &PrivateTmux, pane: &str, id: &str) {
    let started = std::time::Instant::now();
    let format = "#{@tmux_mcp_end}";
    while !tmux
        .cmd(&["display-message", "-p", "-t", pane, format])
        .split(';')
        .any(|end| end.starts_with(&format!("{id} ")))
    {
        assert!(
            started.elapsed() < BOUND,
            "{pane}: {id}'s end never recorded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A second server process on the same tmux finds the commands the first
/// one started: one that ended while no server ran, with its status from
/// tmux, and one still running, followed to its status.
#[tokio::test]
async fn a_restarted_server_takes_the_commands_over_from_tmux() {
    let tmux = PrivateTmux::start();
    // The first in fish, whose wrapper spells the record its own way.
    let fish = shell_installed("fish", "a fish wrapper's end record");
    let ended_pane = match fish {
        true => shell_pane(&tmux, "ended", FISH).await,
        false => shell_pane(&tmux, "ended", BASH).await,
    };
    let running_pane = shell_pane(&tmux, "running", BASH).await;
    let socket = tmux.socket_path().display().to_string();
    let (mut a, mut first) = server(&tmux).await;
    let flag = |pane: &str| {
        let socket = tmux.cmd(&["display-message", "-p", "#{socket_path}"]);
        PathBuf::from(format!("{}.tmux-mcp-end-{}", socket.trim(), &pane[1..]))
    };
    let quick = json!({"pane_id": ended_pane, "command": "exit 4"});
    assert_eq!(call(&mut a, "run_command", quick).await["exit_status"], 4);
    assert!(!flag(&ended_pane).exists());
    let mut ids = Vec::new();
    for (pane, lock, status) in [(&ended_pane, "one", 7), (&running_pane, "two", 9)] {
        let command = format!("echo {lock}; tmux -S {socket} wait-for -L {lock}; exit {status}");
        ids.push(held_in_background(&tmux, &mut a, pane, lock, &command).await);
    }
    // Each pane's flag file asks its wrapper to record the end; a command
    // that ended within its call left none.
    assert!(flag(&ended_pane).exists() && flag(&running_pane).exists());
    first.kill().await.expect("kill the first server");
    // The first command ends while no server runs.
    tmux.cmd(&["wait-for", "-U", "one"]);
    until_end_recorded(&tmux, &ended_pane, &ids[0]).await;
    // The wrapper removes the flag after recording.
    let started = std::time::Instant::now();
    while flag(&ended_pane).exists() {
        assert!(started.elapsed() < BOUND, "the flag stayed");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    let (mut b, _second) = server(&tmux).await;
    let listed = call(&mut b, "list_commands", json!({})).await;
    let entry = |id: &str| {
        listed["commands"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["command_id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed: {listed}"))
            .clone()
    };
    let (one, two) = (entry(&ids[0]), entry(&ids[1]));
    assert_eq!(
        (one["running"].clone(), one["exit_status"].clone()),
        (json!(false), json!(7)),
        "{one}"
    );
    assert_eq!(one["pane_id"], ended_pane.as_str());
    assert!(
        one["command"]
            .as_str()
            .unwrap()
            .starts_with("echo one; tmux")
    );
    assert_eq!(
        (two["running"].clone(), two["exit_status"].clone()),
        (json!(true), Value::Null),
        "{two}"
    );
    let w = call(&mut b, "wait_for_command", json!({"command_id": ids[0]})).await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(7)),
        "{w}"
    );
    // The second ends while the new server waits on it.
    tmux.cmd(&["wait-for", "-U", "two"]);
    let w = call(
        &mut b,
        "wait_for_command",
        json!({"command_id": ids[1], "timeout": 10}),
    )
    .await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(9)),
        "{w}"
    );
    // What the first server returned is not known here: said so.
    assert_eq!(w["lines_missed"], true, "{w}");
}

/// A restarted server takes over every recent handle of a pane, not only
/// the last: one that ended under the first server, with its status, and
/// the one still running after it (issue 29).
#[tokio::test]
async fn a_restarted_server_takes_over_each_handle_of_a_pane() {
    let tmux = PrivateTmux::start();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    let socket = tmux.socket_path().display().to_string();
    let (mut a, mut first) = server(&tmux).await;
    let mut ids = Vec::new();
    for (lock, status) in [("one", 5), ("two", 6)] {
        let command = format!("tmux -S {socket} wait-for -L {lock}; exit {status}");
        ids.push(held_in_background(&tmux, &mut a, &pane, lock, &command).await);
        if lock == "one" {
            tmux.cmd(&["wait-for", "-U", lock]);
            let w = json!({"command_id": ids[0], "timeout": 10});
            let w = call(&mut a, "wait_for_command", w).await;
            assert_eq!(w["exit_status"], status, "{w}");
        }
    }
    first.kill().await.expect("kill the first server");

    let (mut b, _second) = server(&tmux).await;
    let listed = call(&mut b, "list_commands", json!({})).await;
    let listed = listed["commands"].as_array().expect("commands").clone();
    let found = |id: &str| listed.iter().find(|c| c["command_id"] == id).cloned();
    let (one, two) = (found(&ids[0]), found(&ids[1]));
    let state = |c: Option<Value>| c.map(|c| (c["running"].clone(), c["exit_status"].clone()));
    assert_eq!(state(one), Some((json!(false), json!(5))), "{listed:?}");
    assert_eq!(state(two), Some((json!(true), Value::Null)), "{listed:?}");
    tmux.cmd(&["wait-for", "-U", "two"]);
    let w = json!({"command_id": ids[1], "timeout": 10});
    let w = call(&mut b, "wait_for_command", w).await;
    assert_eq!(w["exit_status"], 6, "{w}");
}

/// A shell with no `tmux` on its `PATH` (only `sh`, `rm` and `cat`), and
/// a FIFO in the same directory for a command to wait on with `cat`
/// until the test writes it: the directory, the shell and the FIFO.
pub(crate) fn tmux_less_shell(tag: &str) -> (PathBuf, String, PathBuf) {
    let bin = std::env::temp_dir().join(format!("tmux-mcp-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin).expect("a bin dir");
    for program in ["sh", "rm", "cat"] {
        let linked = std::os::unix::fs::symlink(format!("/bin/{program}"), bin.join(program));
        linked.expect("a link to the program");
    }
    let fifo = bin.join("input");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("mkfifo").success());
    let shell = format!(
        "env PATH={} PS1='$ ' /bin/bash --norc --noprofile",
        bin.display()
    );
    (bin, shell, fifo)
}

/// A handle whose pane's shell has no `tmux` on its `PATH` still records
/// its end for a server started later: the end script names this
/// server's tmux program and socket (issue 29).
#[tokio::test]
async fn a_shell_without_tmux_on_its_path_records_its_end() {
    let tmux = PrivateTmux::start();
    let (bin, shell, fifo) = tmux_less_shell("local");
    let pane = shell_pane(&tmux, "bare", &shell).await;
    let (mut a, mut first) = server(&tmux).await;
    let absent = json!({"pane_id": pane, "command": "command -v tmux"});
    let absent = call(&mut a, "run_command", absent).await;
    assert_eq!(absent["exit_status"], 1, "{absent}");
    let command = format!("cat {}; exit 5", fifo.display());
    let run = json!({"pane_id": pane, "command": command, "background": true});
    let handle = id(&call(&mut a, "run_command", run).await);
    first.kill().await.expect("kill the first server");
    std::fs::write(&fifo, "").expect("the fifo's writer");
    until_end_recorded(&tmux, &pane, &handle).await;
    let (mut b, _second) = server(&tmux).await;
    let w = json!({"command_id": handle, "timeout": 10});
    let w = call(&mut b, "wait_for_command", w).await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(5)),
        "{w}"
    );
    let _ = std::fs::remove_dir_all(&bin);
}

/// A command that floods while no call waits: its exit status is exact,
/// and the lines it printed are all returned (head, tail, and the count
/// left out between) unless the result says lines were missed.
#[tokio::test]
async fn a_flooding_command_keeps_its_exact_status() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    let total = 300_000;
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": format!("seq 1 {total}; exit 3"), "background": true}),
    )
    .await;
    let handle = id(&r);
    let w = ok(
        &svc,
        "wait_for_command",
        json!({"command_id": handle, "timeout": 60}),
    )
    .await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(3)),
        "{w}"
    );
    if w["lines_missed"] == false {
        // run_command returned what it read before it returned; the wait
        // the rest: together, every line once (a line still being written
        // when run_command returned is shown as it stood, then whole).
        let lines = |result: &Value| -> (usize, Vec<String>) {
            let output: Vec<String> = result["output"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_owned())
                .collect();
            let left_out: usize = output
                .iter()
                .find_map(|l| {
                    l.strip_prefix("[... ")?
                        .strip_suffix(" lines left out ...]")?
                        .parse()
                        .ok()
                })
                .unwrap_or(0);
            (output.len() - usize::from(left_out > 0) + left_out, output)
        };
        let ((mut before, mut first), (after, rest)) = (lines(&r), lines(&w));
        // (It may already hold all its characters, its newline not yet.)
        let cut = |l: Option<&String>, whole: Option<&String>| {
            l.zip(whole)
                .is_some_and(|(l, whole)| whole.starts_with(l.as_str()))
        };
        if cut(first.last(), rest.first()) {
            first.pop();
            before -= 1;
        }
        assert_eq!(before + after, total, "{r} {w}");
        let all: Vec<&String> = first.iter().chain(rest.iter()).collect();
        assert_eq!(
            (all[0].as_str(), all[all.len() - 1].as_str()),
            ("1", "300000")
        );
    }
    let listed = ok(&svc, "list_commands", json!({"pane_id": pane})).await;
    assert_eq!(listed["commands"][0]["exit_status"], 3, "{listed}");
}

/// The pane paused for our clients while the command ends: the end
/// marker never reaches our stream; the status is read from tmux, and the
/// result says lines were missed.
#[tokio::test]
async fn a_lost_end_marker_is_read_back_from_tmux() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    tmux.cmd(&["wait-for", "-L", "go"]);
    let command = format!(
        "tmux -S {} wait-for -L go; echo unseen; exit 3",
        tmux.socket_path().display()
    );
    let r = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": command, "background": true}),
    )
    .await;
    let handle = id(&r);
    let clients = tmux.cmd(&[
        "list-clients",
        "-F",
        "#{client_name} #{client_control_mode}",
    ]);
    let mut paused = 0;
    for client in clients.lines().filter_map(|l| l.strip_suffix(" 1")) {
        tmux.cmd(&[
            "refresh-client",
            "-t",
            client,
            "-A",
            &format!("{pane}:pause"),
        ]);
        paused += 1;
    }
    assert!(paused > 0, "no control client of ours: {clients}");
    tmux.cmd(&["wait-for", "-U", "go"]);
    until_end_recorded(&tmux, &pane, &handle).await;
    let w = ok(
        &svc,
        "wait_for_command",
        json!({"command_id": handle, "timeout": 5}),
    )
    .await;
    assert_eq!(
        (w["running"].clone(), w["exit_status"].clone()),
        (json!(false), json!(3)),
        "{w}"
    );
    assert_eq!(w["lines_missed"], true, "{w}");
}

/// Commands that finished within their own call are listed too, latest
/// first, with their statuses (the last 20), so an agent that lost its
/// context finds its last commands; one still running stays listed.
#[tokio::test]
async fn every_command_is_listed_latest_first_with_its_status() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = shell_pane(&tmux, "bash", BASH).await;
    let running = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "sleep 60", "background": true}),
    )
    .await;
    let other = shell_pane(&tmux, "bash2", BASH).await;
    for i in 0..30 {
        let command = format!("echo n{i}; (exit {})", i % 4);
        let r = ok(
            &svc,
            "run_command",
            json!({"pane_id": other, "command": command}),
        )
        .await;
        assert_eq!(r["exit_status"], i % 4, "{r}");
        assert_eq!(
            r.get("command_id"),
            None,
            "a finished command gets no id: {r}"
        );
    }
    let listed = ok(&svc, "list_commands", json!({})).await;
    let rows = listed["commands"].as_array().expect("commands");
    let finished: Vec<&Value> = rows.iter().filter(|r| r["running"] == false).collect();
    assert_eq!(finished.len(), 20, "{listed}");
    for (row, i) in finished.iter().zip((10..30).rev()) {
        assert_eq!(
            row["command"],
            format!("echo n{i}; (exit {})", i % 4),
            "{listed}"
        );
        assert_eq!(row["exit_status"], i % 4, "{row}");
        assert_eq!(row["pane_id"], other.as_str(), "{row}");
        assert!(
            row["ended_at"].as_f64() >= row["started_at"].as_f64(),
            "{row}"
        );
    }
    let still = rows
        .iter()
        .find(|r| r["running"] == true)
        .expect("the running one");
    assert_eq!(still["command_id"], running["command_id"], "{listed}");
    let only = ok(
        &svc,
        "list_commands",
        json!({"running": false, "pane_id": other}),
    )
    .await;
    assert_eq!(
        only["commands"].as_array().map(Vec::len),
        Some(20),
        "{only}"
    );
}
