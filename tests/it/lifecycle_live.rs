//! The life of sessions, windows and panes (create, list, info, kill), the
//! server's info, and send_keys/capture, against a live private tmux server.
//! Each test checks the tool's result fields and, independently, tmux's own
//! view of the state.

use crate::support::pty::PtyClient;
use crate::support::{BOUND, PrivateTmux, err, ok};
use serde_json::json;

#[tokio::test]
async fn sessions_list_create_info_kill() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();

    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["session_name"], "main");
    assert_eq!(sessions[0]["window_count"], 1);

    let created = ok(
        &svc,
        "create_session",
        json!({"session_name": "work", "window_name": "w#{x}", "x": 90, "y": 20}),
    )
    .await;
    assert_eq!(created["session_name"], "work");
    assert!(created["active_pane_id"].as_str().unwrap().starts_with('%'));
    let listed = tmux.cmd(&["list-sessions", "-F", "#{session_name} #{window_name}"]);
    assert!(listed.contains("work w#{x}"), "{listed}");

    let info = ok(&svc, "get_session_info", json!({"session_name": "work"})).await;
    assert_eq!(info["session_id"], created["session_id"]);
    let first = ok(&svc, "get_session_info", json!({})).await;
    assert_eq!(first["session_name"], "main");

    let filtered = ok(
        &svc,
        "list_sessions",
        json!({"filters": {"session_name__startswith": "wo"}}),
    )
    .await;
    assert_eq!(filtered.as_array().unwrap().len(), 1);

    assert!(
        err(&svc, "create_session", json!({"session_name": "work"}))
            .await
            .contains("exists")
    );
    assert!(
        err(&svc, "create_session", json!({"session_name": "a.b"}))
            .await
            .contains("Bad session name")
    );
    assert!(
        err(&svc, "kill_session", json!({}))
            .await
            .contains("explicit target")
    );
    assert!(
        err(&svc, "get_session_info", json!({"session_name": "nope"}))
            .await
            .contains("not found")
    );

    let killed = ok(&svc, "kill_session", json!({"session_name": "work"})).await;
    assert_eq!(killed, "Session killed: work");
    assert!(
        !tmux
            .cmd(&["list-sessions", "-F", "#{session_name}"])
            .contains("work")
    );
}

#[tokio::test]
async fn server_info_alive_and_dead() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let info = ok(&svc, "get_server_info", json!({})).await;
    assert_eq!(info["is_alive"], true);
    assert_eq!(info["session_count"], 1);
    assert_eq!(
        info["version"],
        tmux.cmd(&["-V"]).trim().trim_start_matches("tmux ")
    );
    let dead = ok(
        &svc,
        "get_server_info",
        json!({"socket_name": format!("{}-none", tmux.name)}),
    )
    .await;
    assert_eq!(dead["is_alive"], false);
    assert_eq!(dead["session_count"], 0);
    let empty = ok(
        &svc,
        "list_sessions",
        json!({"socket_name": format!("{}-none", tmux.name)}),
    )
    .await;
    assert_eq!(empty, json!([]));
}

#[tokio::test]
async fn create_session_on_a_fresh_socket_starts_the_server() {
    let tmux = PrivateTmux::named(format!("tmuxmcp-test-{}-fresh", std::process::id()));
    let svc = tmux.service();
    let created = ok(&svc, "create_session", json!({"session_name": "first"})).await;
    assert_eq!(created["session_name"], "first");
    assert!(
        tmux.cmd(&["list-sessions", "-F", "#{session_name}"])
            .contains("first")
    );
}

/// A session or window we make has the asked size (else the session's)
/// on every release, and still follows the person's client when they
/// attach (tmux 3.2a sized them by our own client: 80x24, whatever was
/// asked; Features::sized_by_own_client).
#[tokio::test]
async fn sessions_and_windows_have_the_asked_size_and_follow_the_person() {
    let tmux = PrivateTmux::named(format!("tmuxmcp-test-{}-sized", std::process::id()));
    let svc = tmux.service();
    let size = |target: &str| {
        tmux.cmd(&[
            "display-message",
            "-p",
            "-t",
            target,
            "#{window_width}x#{window_height}",
        ])
        .trim()
        .to_owned()
    };
    // The first starts the server (a one-shot tmux), the next go through
    // our control client.
    ok(
        &svc,
        "create_session",
        json!({"session_name": "a", "x": 100, "y": 30}),
    )
    .await;
    ok(
        &svc,
        "create_session",
        json!({"session_name": "b", "x": 120, "y": 40}),
    )
    .await;
    ok(&svc, "create_session", json!({"session_name": "c"})).await;
    let win = ok(&svc, "create_window", json!({"session_name": "b"})).await;
    let id = win["window_id"].as_str().unwrap();
    assert_eq!(
        (size("a:"), size("b:0"), size(id), size("c:")),
        (
            "100x30".into(),
            "120x40".into(),
            "120x40".into(),
            "80x24".into()
        )
    );
    assert_eq!(
        (&win["window_width"], &win["window_height"]),
        (&json!("120"), &json!("40"))
    );
    // No size pinned on the window: it follows the person's 80x24 client.
    assert_eq!(
        tmux.cmd(&["show-options", "-w", "-t", id, "window-size"]),
        ""
    );
    let _person = PtyClient::attach(&tmux, "b").await;
    let started = std::time::Instant::now();
    while size("b:0") != "80x23" {
        assert!(started.elapsed() < BOUND, "b:0 stayed {}", size("b:0"));
        // tmux has no event for a window's size: re-read.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A name is stored as tmux's own CLI stores the same name, on every
/// release: 3.3a escapes `$` and `\\` in a renamed window's name and a
/// session's, 3.4 in every name (twice in those), 3.5 on keep them as
/// given; ours differs from the CLI's in none.
#[tokio::test]
async fn names_are_stored_as_tmux_own_cli_stores_them() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let name_of = |target: &str, format: &str| {
        let row = tmux.cmd(&["display-message", "-p", "-t", target, format]);
        row.trim_end_matches('\n').to_owned()
    };
    let window = "#{window_name}";
    for (i, name) in [
        "w$z", "$HOME", "${HOME}", "a\\b", "a\"b", "a#b", "~x", "é;'",
    ]
    .iter()
    .enumerate()
    {
        let ours = ok(
            &svc,
            "create_window",
            json!({"session_name": "main", "window_name": name}),
        )
        .await;
        let ours_id = ours["window_id"].as_str().unwrap().to_owned();
        let cli = tmux.cmd(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{window_id}",
            "-t",
            "main:",
            "-n",
            name,
        ]);
        let cli_id = cli.trim();
        assert_eq!(
            name_of(&ours_id, window),
            name_of(cli_id, window),
            "new-window {name:?}"
        );
        assert_eq!(ours["window_name"], name_of(&ours_id, window), "{name:?}");

        let renamed = format!("{name}!");
        ok(
            &svc,
            "rename_window",
            json!({"window_id": ours_id, "new_name": renamed}),
        )
        .await;
        tmux.cmd(&["rename-window", "-t", cli_id, &renamed]);
        assert_eq!(
            name_of(&ours_id, window),
            name_of(cli_id, window),
            "rename-window {name:?}"
        );

        let session = "#{session_name}";
        let made = ok(
            &svc,
            "create_session",
            json!({"session_name": format!("o{i}{name}")}),
        )
        .await;
        let ours_id = made["session_id"].as_str().unwrap().to_owned();
        let cli = tmux.cmd(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{session_id}",
            "-s",
            &format!("c{i}{name}"),
        ]);
        let cli_id = cli.trim();
        let (ours_name, cli_name) = (name_of(&ours_id, session), name_of(cli_id, session));
        assert_eq!(ours_name[1..], cli_name[1..], "new-session {name:?}");
        assert_eq!(made["session_name"], ours_name, "{name:?}");
        let renamed = json!({"session_id": ours_id, "new_name": format!("p{i}{name}")});
        ok(&svc, "rename_session", renamed).await;
        tmux.cmd(&["rename-session", "-t", cli_id, &format!("q{i}{name}")]);
        let (ours_name, cli_name) = (name_of(&ours_id, session), name_of(cli_id, session));
        assert_eq!(ours_name[1..], cli_name[1..], "rename-session {name:?}");
    }
}

#[tokio::test]
async fn windows_create_list_info_kill() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let active_before = tmux.cmd(&["display-message", "-p", "-t", "main", "#{window_id}"]);

    let win = ok(
        &svc,
        "create_window",
        json!({"session_name": "main", "window_name": "logs"}),
    )
    .await;
    assert_eq!(win["window_name"], "logs");
    assert_eq!(win["pane_count"], 1);
    let id = win["window_id"].as_str().unwrap().to_owned();
    // Background window: the user's current window did not change.
    assert_eq!(
        tmux.cmd(&["display-message", "-p", "-t", "main", "#{window_id}"]),
        active_before
    );

    let windows = ok(&svc, "list_windows", json!({"session_name": "main"})).await;
    assert_eq!(windows.as_array().unwrap().len(), 2);
    let info = ok(&svc, "get_window_info", json!({"window_id": id})).await;
    assert_eq!(info["window_name"], "logs");
    let by_index = ok(
        &svc,
        "get_window_info",
        json!({"session_name": "main", "window_index": win["window_index"]}),
    )
    .await;
    assert_eq!(by_index["window_id"], id);

    assert!(
        err(&svc, "get_window_info", json!({"window_id": "@999"}))
            .await
            .contains("not found")
    );
    assert_eq!(
        ok(&svc, "kill_window", json!({"window_id": id})).await,
        format!("Window killed: {id}")
    );
    assert!(
        !tmux
            .cmd(&["list-windows", "-a", "-F", "#{window_id}"])
            .contains(&id)
    );
    assert!(
        err(&svc, "kill_window", json!({"window_id": id}))
            .await
            .contains("not found")
    );
}

#[tokio::test]
async fn panes_split_list_info_kill() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let first = tmux.first_pane();

    let pane = ok(
        &svc,
        "split_window",
        json!({"pane_id": first, "direction": "right", "size": "30%"}),
    )
    .await;
    let new = pane["pane_id"].as_str().unwrap().to_owned();
    assert_ne!(new, first);
    assert_eq!(pane["pane_at_right"], true);
    // Focus did not move.
    assert_eq!(
        tmux.cmd(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .trim(),
        first
    );

    let panes = ok(&svc, "list_panes", json!({"session_name": "main"})).await;
    assert_eq!(panes.as_array().unwrap().len(), 2);
    let info = ok(&svc, "get_pane_info", json!({"pane_id": new})).await;
    assert_eq!(info["pane_id"], new);
    assert!(info["pane_width"].is_string());
    assert!(info["is_caller"].is_null());

    assert!(
        err(
            &svc,
            "split_window",
            json!({"pane_id": first, "size": "1;kill-server"})
        )
        .await
        .contains("size")
    );
    assert!(
        err(&svc, "get_pane_info", json!({"pane_id": "%999"}))
            .await
            .contains("Pane not found")
    );
    assert!(
        err(&svc, "get_pane_info", json!({"pane_id": "main"}))
            .await
            .contains("Pane not found")
    );
    assert!(
        err(&svc, "get_pane_info", json!({"bogus": 1}))
            .await
            .contains("unknown argument")
    );

    assert_eq!(
        ok(&svc, "kill_pane", json!({"pane_id": new})).await,
        format!("Pane killed: {new}")
    );
    assert!(
        !tmux
            .cmd(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&new)
    );
}

#[tokio::test]
async fn send_keys_capture_and_display() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let keys = "printf 'a%sb\\n' '#{x};$HOME'; tmux wait-for -S printed";
    ok(&svc, "send_keys", json!({"pane_id": pane, "keys": keys})).await;
    tmux.wait_for("printed", std::time::Duration::from_secs(10))
        .await;
    let text = ok(&svc, "capture_pane", json!({"pane_id": pane})).await;
    let text = text.as_str().unwrap();
    assert!(text.lines().any(|l| l == "a#{x};$HOMEb"), "{text}");

    let capped = ok(
        &svc,
        "capture_pane",
        json!({"pane_id": pane, "max_lines": 1}),
    )
    .await;
    assert!(
        capped.as_str().unwrap().starts_with("[... truncated"),
        "{capped}"
    );
    assert!(
        err(
            &svc,
            "capture_pane",
            json!({"pane_id": pane, "max_lines": 0})
        )
        .await
        .contains("positive")
    );

    let shown = ok(
        &svc,
        "display_message",
        json!({"pane_id": pane, "format_string": "id=#{pane_id}"}),
    )
    .await;
    assert_eq!(shown, format!("id={pane}"));
    let refused = err(
        &svc,
        "display_message",
        json!({"pane_id": pane, "format_string": "#(id)"}),
    )
    .await;
    assert!(refused.contains("format_string accepts"), "{refused}");

    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "C-c", "enter": false}),
    )
    .await;
    assert!(
        err(&svc, "send_keys", json!({"pane_id": "%999", "keys": "x"}))
            .await
            .contains("Pane not found")
    );
    let missing = json!({"pane_id": "%999", "format_string": "#{pane_id}"});
    assert!(
        err(&svc, "display_message", missing)
            .await
            .contains("Pane not found")
    );
}

/// `wait-for` blocks a control client's whole command queue until it is
/// signalled; the hub must run it elsewhere so other calls go on meanwhile.
#[tokio::test]
async fn queue_blocking_commands_never_stall_the_shared_client() {
    use tmux_mcp::tmux::Command;
    use tmux_mcp::tmux::hub::Hub;

    let tmux = PrivateTmux::start();
    let limits = tmux_mcp::config::Limits::default();
    let hub = std::sync::Arc::new(Hub::new(tmux.socket_path(), "tmux".into(), limits));
    // Attach the shared client first.
    hub.run(&Command::new("list-sessions")).await.unwrap();
    let waiter = {
        let hub = hub.clone();
        tokio::spawn(async move { hub.run(&Command::new("wait-for").arg("tmuxmcp-chan")).await })
    };
    // While the waiter blocks, the shared client still answers.
    let reply = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        hub.run(&Command::new("display-message").flag("-p").arg("alive")),
    )
    .await
    .expect("the shared client is not stalled")
    .unwrap();
    assert_eq!(reply, vec![b"alive".to_vec()]);
    hub.run(&Command::new("wait-for").flag("-S").arg("tmuxmcp-chan"))
        .await
        .unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    hub.shutdown().await;
}

/// The user's tmux looks the same after a working session with the server:
/// no window resized, no current window or pane changed, no session left
/// behind, and no client left attached once the server shuts down.
#[tokio::test]
async fn no_surprises_in_the_users_tmux() {
    let tmux = PrivateTmux::start();
    let state = || {
        (
            tmux.cmd(&[
                "list-windows",
                "-a",
                "-F",
                "#{window_id} #{window_width}x#{window_height} #{window_active}",
            ]),
            tmux.cmd(&[
                "list-panes",
                "-a",
                "-F",
                "#{pane_id} #{pane_width}x#{pane_height} #{pane_active}",
            ]),
            tmux.cmd(&["list-sessions", "-F", "#{session_id} #{session_name}"]),
        )
    };
    let before = state();
    let app = {
        let svc = tmux.service();
        let pane = tmux.first_pane();
        ok(&svc, "list_panes", json!({})).await;
        ok(&svc, "capture_pane", json!({"pane_id": pane})).await;
        let win = ok(&svc, "create_window", json!({"session_name": "main"})).await;
        let split = ok(&svc, "split_window", json!({"pane_id": pane})).await;
        ok(&svc, "kill_pane", json!({"pane_id": split["pane_id"]})).await;
        ok(&svc, "kill_window", json!({"window_id": win["window_id"]})).await;
        ok(
            &svc,
            "send_keys",
            json!({"pane_id": pane, "keys": "", "enter": false}),
        )
        .await;
        assert!(
            tmux.cmd(&["list-clients", "-F", "#{client_flags}"])
                .contains("control-mode")
        );
        svc
    };
    app.shutdown().await;
    assert_eq!(state(), before);
    assert_eq!(
        tmux.cmd(&["list-clients"]),
        "",
        "a control client was left attached"
    );
}
