//! Server, session and window tools against private tmux servers: each test
//! checks the result fields and, independently, tmux's own view; bad
//! arguments must fail clearly and leave tmux as it was (and alive).

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::Command;

use crate::support::{PrivateTmux, err, ok};
use serde_json::{Value, json};

/// A tmux server at an explicit socket path (`tmux -S`), killed on drop.
struct PathTmux {
    path: PathBuf,
}

impl PathTmux {
    fn start(path: PathBuf) -> PathTmux {
        let tmux = PathTmux { path };
        tmux.cmd(&["new-session", "-d", "-s", "s", "-x", "80", "-y", "24"]);
        tmux
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.path)
            .args(["-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux runs");
        assert!(out.status.success(), "tmux {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for PathTmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.path)
            .arg("kill-server")
            .env_remove("TMUX")
            .output();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A scratch directory under /tmp (short: socket paths are limited to 108 bytes).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = PathBuf::from(format!("/tmp/tmuxmcp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn alive(tmux: &PrivateTmux) -> bool {
    tmux.try_cmd(&["list-sessions"]).status.success()
}

fn show(tmux: &PrivateTmux, target: &str, format: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", target, format])
        .trim()
        .to_owned()
}

#[tokio::test]
async fn list_servers_scans_the_socket_dir_and_extra_paths() {
    let scratch = Scratch::new("ls");
    let euid = std::fs::metadata(&scratch.0).unwrap().uid();
    let dir = scratch.0.join(format!("tmux-{euid}"));
    std::fs::create_dir(&dir).unwrap();
    let beta = PathTmux::start(dir.join("beta"));
    let alpha = PathTmux::start(dir.join("alpha"));
    alpha.cmd(&["new-session", "-d", "-s", "two"]);
    // A stale socket (nobody listens) and a plain file are skipped.
    drop(std::os::unix::net::UnixListener::bind(dir.join("stale")).unwrap());
    std::fs::write(dir.join("file"), "x").unwrap();
    let extra = PathTmux::start(scratch.0.join("extra.sock"));

    let tmp = scratch.0.display().to_string();
    let owner = PrivateTmux::named("tmuxmcp-unused".into());
    let svc = owner.service_with(&[("TMUX_TMPDIR", &tmp)]);
    let version = alpha.cmd(&["display-message", "-p", "#{version}"]);

    let servers = ok(&svc, "list_servers", json!({})).await;
    let servers = servers.as_array().unwrap();
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert_eq!(servers[0]["socket_name"], "alpha");
    assert_eq!(servers[0]["socket_path"], Value::Null);
    assert_eq!(servers[0]["session_count"], 2);
    assert_eq!(servers[0]["is_alive"], true);
    assert_eq!(servers[0]["version"], version.trim());
    assert_eq!(servers[1]["socket_name"], "beta");
    assert_eq!(servers[1]["session_count"], 1);

    let extra_path = extra.path.display().to_string();
    let beta_path = dir.join("beta").display().to_string();
    let with_extra = ok(
        &svc,
        "list_servers",
        json!({"extra_socket_paths": [
            extra_path,
            scratch.0.join("missing").display().to_string(),
            dir.join("file").display().to_string(),
            dir.join("stale").display().to_string(),
            // Found by the scan already: listed again, as the path asked about.
            beta_path,
            // Named twice: listed once.
            extra_path,
        ]}),
    )
    .await;
    let with_extra = with_extra.as_array().unwrap();
    assert_eq!(with_extra.len(), 4, "{with_extra:?}");
    assert_eq!(with_extra[2]["socket_name"], Value::Null);
    assert_eq!(with_extra[2]["socket_path"], extra_path.as_str());
    assert_eq!(with_extra[2]["session_count"], 1);
    assert_eq!(with_extra[2]["is_alive"], true);
    assert_eq!(with_extra[3]["socket_name"], Value::Null);
    assert_eq!(with_extra[3]["socket_path"], beta_path.as_str());
    assert_eq!(with_extra[3]["session_count"], 1);
    assert_eq!(with_extra[3]["is_alive"], true);
    assert_eq!(with_extra[3]["version"], version.trim());

    // Discovery attaches no control client to the servers it finds.
    assert_eq!(beta.cmd(&["list-clients"]).trim(), "");

    // No socket directory at all: an empty list.
    let empty = owner.service_with(&[("TMUX_TMPDIR", "/nonexistent-tmuxmcp")]);
    assert_eq!(ok(&empty, "list_servers", json!({})).await, json!([]));
    assert!(
        err(&svc, "list_servers", json!({"socket_name": "x"}))
            .await
            .contains("unknown argument")
    );
}

#[tokio::test]
async fn kill_server_kills_and_the_hub_recovers() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    // Attach our control client first, so the kill has one to take down.
    assert_eq!(
        ok(&svc, "get_server_info", json!({})).await["is_alive"],
        true
    );

    let socket = tmux.socket_path().display().to_string();
    let inside = tmux.service_with(&[("TMUX", &format!("{socket},1,$0")), ("TMUX_PANE", "%0")]);
    let refused = err(&inside, "kill_server", json!({})).await;
    assert!(
        refused.starts_with("Refusing to kill the tmux server"),
        "{refused}"
    );
    assert!(alive(&tmux));

    assert_eq!(
        ok(&svc, "kill_server", json!({})).await,
        "Server killed successfully"
    );
    assert!(!alive(&tmux));
    let info = ok(&svc, "get_server_info", json!({})).await;
    assert_eq!(info["is_alive"], false);
    assert_eq!(info["session_count"], 0);

    // The same service starts a new server and works through it.
    ok(&svc, "create_session", json!({"session_name": "again"})).await;
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions[0]["session_name"], "again");
    assert!(
        err(&svc, "kill_server", json!({"socket_name": "a/b"}))
            .await
            .contains("socket_name")
    );
}

#[tokio::test]
async fn rename_session_and_window_store_names_literally() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["new-session", "-d", "-s", "other"]);

    let renamed = ok(
        &svc,
        "rename_session",
        json!({"session_name": "main", "new_name": "r#{pane_id}#S"}),
    )
    .await;
    assert_eq!(renamed["session_name"], "r#{pane_id}#S");
    let names = tmux.cmd(&["list-sessions", "-F", "#{session_name}"]);
    assert!(names.lines().any(|l| l == "r#{pane_id}#S"), "{names}");

    for (args, want) in [
        (json!({"new_name": "a.b"}), "Bad session name"),
        (json!({"new_name": ""}), "Bad session name"),
        (
            json!({"new_name": "other", "session_id": renamed["session_id"]}),
            "exists",
        ),
        (
            json!({"new_name": "x", "session_name": "nope"}),
            "not found",
        ),
        (json!({}), "new_name"),
    ] {
        let text = err(&svc, "rename_session", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(
        tmux.cmd(&["list-sessions", "-F", "#{session_name}"]),
        names,
        "failed renames changed nothing"
    );

    let window = ok(
        &svc,
        "rename_window",
        json!({"session_id": renamed["session_id"], "window_index": "0", "new_name": "w #{x} ##"}),
    )
    .await;
    assert_eq!(window["window_name"], "w #{x} ##");
    assert_eq!(
        show(
            &tmux,
            window["window_id"].as_str().unwrap(),
            "#{window_name}"
        ),
        "w #{x} ##"
    );
    let text = err(
        &svc,
        "rename_window",
        json!({"window_id": "@999", "new_name": "x"}),
    )
    .await;
    assert!(text.contains("not found"), "{text}");
    assert!(
        err(&svc, "rename_window", json!({}))
            .await
            .contains("new_name")
    );
}

#[tokio::test]
async fn select_window_by_id_index_and_direction() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let current = || show(&tmux, "main", "#{window_index}");
    assert!(
        err(&svc, "select_window", json!({"direction": "last"}))
            .await
            .contains("no last window")
    );
    tmux.cmd(&["new-window", "-d", "-t", "main:1"]);
    let w2 = tmux.cmd(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{window_id}",
        "-t",
        "main:2",
    ]);
    let w2 = w2.trim();

    let by_index = ok(&svc, "select_window", json!({"window_index": "1"})).await;
    assert_eq!(by_index["window_index"], "1");
    assert_eq!(by_index["window_active"], "1");
    assert_eq!(current(), "1");

    let by_id = ok(&svc, "select_window", json!({"window_id": w2})).await;
    assert_eq!(by_id["window_id"], w2);
    assert_eq!(current(), "2");

    let next = ok(&svc, "select_window", json!({"direction": "next"})).await;
    assert_eq!(next["window_index"], "0", "next wraps around");
    assert_eq!(current(), "0");
    let prev = ok(&svc, "select_window", json!({"direction": "previous"})).await;
    assert_eq!(prev["window_index"], "2");
    let last = ok(
        &svc,
        "select_window",
        json!({"direction": "last", "session_name": "main"}),
    )
    .await;
    assert_eq!(last["window_index"], "0");
    assert_eq!(current(), "0");

    for (args, want) in [
        (json!({}), "Provide window_id, window_index, or direction."),
        (
            json!({"direction": "up"}),
            "expected one of `next`, `previous`, `last`",
        ),
        (json!({"window_index": "7"}), "not found"),
        (json!({"window_id": "1"}), "not found"),
        (
            json!({"window_index": "1", "session_name": "nope"}),
            "not found",
        ),
    ] {
        let text = err(&svc, "select_window", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(current(), "0", "failed selections changed nothing");
}

#[tokio::test]
async fn select_layout_names_strings_and_crashers() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["split-window", "-t", "main", "-h"]);
    tmux.cmd(&["split-window", "-t", "main", "-v"]);
    let layout = || show(&tmux, "main", "#{window_layout}");

    let vertical = ok(&svc, "select_layout", json!({"layout": "even-vertical"})).await;
    assert_eq!(vertical["window_layout"], layout());
    let tops = tmux.cmd(&[
        "list-panes",
        "-t",
        "main",
        "-F",
        "#{pane_left} #{pane_width}",
    ]);
    assert!(tops.lines().all(|l| l == "0 200"), "{tops}");

    let saved = layout();
    ok(&svc, "select_layout", json!({"layout": "tiled"})).await;
    assert_ne!(layout(), saved);
    let restored = ok(&svc, "select_layout", json!({"layout": saved})).await;
    assert_eq!(restored["window_layout"], saved);
    assert_eq!(layout(), saved);

    // Each of these either crashes tmux 3.3a (unknown names, strings that do
    // not start with a checksum) or is malformed; all are refused up front.
    let one_pane = "ac9d,200x50,0,0,0";
    let before = layout();
    for bad in [
        "no-such-layout",
        "tiledx",
        "t",
        "",
        "ab",
        "abcd,",
        "even",
        "0000,200x50,0,0,0",
        "ac9d,200x50,0,0,0}",
        one_pane,
    ] {
        let text = err(&svc, "select_layout", json!({"layout": bad})).await;
        assert!(text.contains("layout"), "{bad:?}: {text}");
        assert!(alive(&tmux), "tmux died on {bad:?}");
        assert_eq!(layout(), before, "{bad:?} changed the layout");
    }
    let text = err(&svc, "select_layout", json!({"layout": one_pane})).await;
    assert!(text.contains("describes 1 panes but window"), "{text}");
    let version = tmux.cmd(&["display-message", "-p", "#{version}"]);
    let mirrored = call_layout(&svc, "main-vertical-mirrored").await;
    if version.trim() < "3.5" {
        assert!(mirrored.contains("needs tmux 3.5"), "{mirrored}");
    }
    assert!(alive(&tmux));
}

async fn call_layout(svc: &tmux_mcp::tools::TmuxService, layout: &str) -> String {
    let result = crate::support::call(svc, "select_layout", json!({"layout": layout})).await;
    result.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn resize_window_checks_sizes() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let size = || show(&tmux, "main", "#{window_width}x#{window_height}");

    let resized = ok(
        &svc,
        "resize_window",
        json!({"session_name": "main", "width": 100, "height": 30}),
    )
    .await;
    assert_eq!(resized["window_width"], "100");
    assert_eq!(resized["window_height"], "30");
    assert_eq!(size(), "100x30");
    let narrower = ok(&svc, "resize_window", json!({"width": 90})).await;
    assert_eq!(narrower["window_height"], "30");
    assert_eq!(size(), "90x30");

    for (args, want) in [
        (json!({}), "Provide height, width"),
        (json!({"width": 0}), "between 1 and 10000"),
        (json!({"height": -3}), "between 1 and 10000"),
        (json!({"width": 10001}), "between 1 and 10000"),
        (json!({"width": "50"}), "Invalid arguments"),
        (json!({"width": 50, "window_id": "@99"}), "not found"),
    ] {
        let text = err(&svc, "resize_window", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(size(), "90x30");
    assert!(alive(&tmux));
}

#[tokio::test]
async fn move_window_within_and_across_sessions() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let other = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "other",
        "-P",
        "-F",
        "#{session_id}",
    ]);
    let other = other.trim();
    let w = tmux.cmd(&[
        "new-window",
        "-d",
        "-t",
        "main:1",
        "-P",
        "-F",
        "#{window_id}",
    ]);
    let w = w.trim();
    let place = |id: &str| show(&tmux, id, "#{session_name}:#{window_index}");

    let moved = ok(
        &svc,
        "move_window",
        json!({"window_id": w, "destination_index": "5"}),
    )
    .await;
    assert_eq!(moved["window_index"], "5");
    assert_eq!(place(w), "main:5");

    let across = ok(
        &svc,
        "move_window",
        json!({"window_id": w, "destination_session": "other"}),
    )
    .await;
    assert_eq!(across["session_id"], other);
    assert_eq!(across["session_name"], "other");
    assert_eq!(across["window_index"], "1", "next free index");
    assert_eq!(place(w), "other:1");

    let back = ok(
        &svc,
        "move_window",
        json!({"window_id": w, "destination_session": "$0", "destination_index": "7"}),
    )
    .await;
    assert_eq!(back["session_name"], "main");
    assert_eq!(place(w), "main:7");

    for (args, want) in [
        (
            json!({"window_id": w, "destination_index": "abc"}),
            "destination_index",
        ),
        (
            json!({"window_id": w, "destination_index": "-1"}),
            "destination_index",
        ),
        (
            json!({"window_id": w, "destination_index": "99999999999"}),
            "destination_index",
        ),
        (
            json!({"window_id": w, "destination_index": "0:1"}),
            "destination_index",
        ),
        (
            json!({"window_id": w, "destination_session": "nope"}),
            "not found",
        ),
        (
            json!({"window_id": w, "destination_session": "$99"}),
            "not found",
        ),
        (
            json!({"window_id": w, "destination_index": "0"}),
            "index in use",
        ),
        (json!({"window_id": "@99"}), "not found"),
    ] {
        let text = err(&svc, "move_window", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(place(w), "main:7", "failed moves changed nothing");

    // Moving a session's last window away ends that session; our control
    // client may sit in it, and later calls still work.
    let last = show(&tmux, "other", "#{window_id}");
    let gone = ok(
        &svc,
        "move_window",
        json!({"window_id": last, "destination_session": "main"}),
    )
    .await;
    assert_eq!(gone["session_name"], "main");
    let sessions = tmux.cmd(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(sessions.trim(), "main");
    assert_eq!(
        ok(&svc, "list_sessions", json!({})).await[0]["session_name"],
        "main"
    );
}

#[tokio::test]
async fn moving_away_the_control_clients_session_keeps_working() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["new-session", "-d", "-s", "other"]);
    // Our control client attaches to the first session: main.
    assert_eq!(
        ok(&svc, "list_sessions", json!({})).await[0]["session_name"],
        "main"
    );
    let only = show(&tmux, "main", "#{window_id}");
    let moved = ok(
        &svc,
        "move_window",
        json!({"window_id": only, "destination_session": "other"}),
    )
    .await;
    assert_eq!(moved["session_name"], "other");
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["session_name"], "other");
}

#[tokio::test]
async fn killing_the_control_clients_session_or_last_window_keeps_working() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["new-session", "-d", "-s", "two"]);
    tmux.cmd(&["new-session", "-d", "-s", "three"]);
    // Our control client attaches to the first session: main.
    assert_eq!(
        ok(&svc, "list_sessions", json!({})).await[0]["session_name"],
        "main"
    );
    ok(&svc, "kill_session", json!({"session_name": "main"})).await;
    let left = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(left.as_array().unwrap().len(), 2, "{left}");
    // Now attached to the lowest session id, two ($1); kill its only window.
    let only = show(&tmux, "two", "#{window_id}");
    ok(&svc, "kill_window", json!({"window_id": only})).await;
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["session_name"], "three");
}
