//! Floating panes (tmux 3.7 on, `new-pane`) on a live private tmux: they
//! are listed and marked `pane_floating`, the layouts that hold them parse,
//! named layouts still apply, the guards still hold, and a floating pane is
//! paused like any other until something watches it. On older releases
//! each test says `SKIPPED` and why.

use serde_json::{Value, json};
use tmux_mcp::tmux::PaneId;
use tmux_mcp::tmux::child::LocalTmux;
use tmux_mcp::tmux::connection::Role;
use tmux_mcp::tmux::version::{Features, Version};

use crate::quiet_live::{client_over, only_the_leased_pane_streams};
use tokio_util::sync::CancellationToken;

use crate::support::{PrivateTmux, err, finish, ok, shared, start_armed};

/// A private tmux that has floating panes, or `None` (said as a skip).
fn floating_tmux(what: &str) -> Option<PrivateTmux> {
    let tmux = PrivateTmux::start();
    // Older releases list every command for `list-commands new-pane`.
    if tmux.version() < Version::new(3, 7) {
        eprintln!(
            "SKIPPED {what}: tmux {} has no floating panes (new-pane is 3.7 on)",
            tmux.version()
        );
        return None;
    }
    Some(tmux)
}

/// A floating pane in session `main`'s window, `at` its top left corner
/// (which may be past the window's top or left edge), leaving the active
/// pane as it was.
fn float(tmux: &PrivateTmux, at: (i32, i32)) -> String {
    let (x, y) = (at.0.to_string(), at.1.to_string());
    tmux.cmd(&[
        "new-pane",
        "-d",
        "-t",
        "main",
        "-x",
        "30",
        "-y",
        "8",
        "-X",
        &x,
        "-Y",
        &y,
        "-P",
        "-F",
        "#{pane_id}",
    ])
    .trim()
    .to_owned()
}

/// tmux's own view: `id floating-flag` per pane of `main`.
fn flags(tmux: &PrivateTmux) -> Vec<(String, bool)> {
    tmux.cmd(&[
        "list-panes",
        "-t",
        "main",
        "-F",
        "#{pane_id} #{pane_floating_flag}",
    ])
    .lines()
    .map(|l| {
        let (id, flag) = l.split_once(' ').expect("id and flag");
        (id.to_owned(), flag == "1")
    })
    .collect()
}

fn window_layout(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["display-message", "-p", "-t", "main", "#{window_layout}"])
        .trim()
        .to_owned()
}

/// What list_panes says of each pane: `pane_floating` is `true` or absent.
fn listed(panes: &Value) -> Vec<(String, bool)> {
    panes
        .as_array()
        .expect("a pane list")
        .iter()
        .map(|p| {
            let floating = match p.get("pane_floating") {
                None => false,
                Some(Value::Bool(true)) => true,
                Some(other) => panic!("pane_floating is true or absent, not {other}: {p}"),
            };
            (p["pane_id"].as_str().expect("an id").to_owned(), floating)
        })
        .collect()
}

#[tokio::test]
async fn floating_panes_are_marked_and_layouts_still_work() {
    let Some(tmux) = floating_tmux("floating panes in list_panes") else {
        return;
    };
    let svc = tmux.service();
    let tiled = tmux.first_pane();
    tmux.cmd(&["split-window", "-h", "-d", "-t", &tiled]);
    let high = float(&tmux, (5, 3));
    // Past the window's top left corner: its offsets in the layout are
    // negative.
    let low = float(&tmux, (-5, -3));

    // list_panes marks exactly the panes tmux calls floating.
    let expected = flags(&tmux);
    assert_eq!(
        expected.iter().filter(|(_, f)| *f).count(),
        2,
        "{expected:?}"
    );
    let panes = ok(&svc, "list_panes", json!({"session_name": "main"})).await;
    assert_eq!(listed(&panes), expected);
    let info = ok(&svc, "get_pane_info", json!({"pane_id": high})).await;
    assert_eq!(info["pane_floating"], true, "{info}");
    let info = ok(&svc, "get_pane_info", json!({"pane_id": tiled})).await;
    assert!(info.get("pane_floating").is_none(), "{info}");

    // The window's layout, with its floating part, is read back whole.
    let layout = window_layout(&tmux);
    assert!(
        layout.contains('<') && layout.contains(",-"),
        "no floating part past the edge in {layout}"
    );
    let windows = ok(&svc, "list_windows", json!({"session_name": "main"})).await;
    assert_eq!(windows[0]["window_layout"], layout.as_str());
    assert_eq!(windows[0]["pane_count"], 4);

    // tmux cannot restore it: refused with the reason, nothing changes.
    let refused = err(
        &svc,
        "select_layout",
        json!({"session_name": "main", "layout": layout}),
    )
    .await;
    assert!(refused.contains("floating panes"), "{refused}");
    assert_eq!(window_layout(&tmux), layout);

    // A named layout applies (3.8 arranges the tiled panes and keeps the
    // floating ones; 3.7 tiles them all), and list_panes follows tmux.
    let arranged = ok(
        &svc,
        "select_layout",
        json!({"session_name": "main", "layout": "even-vertical"}),
    )
    .await;
    assert_eq!(arranged["pane_count"], 4, "{arranged}");
    let panes = ok(&svc, "list_panes", json!({"session_name": "main"})).await;
    assert_eq!(listed(&panes), flags(&tmux));
    // The corners are the tiled layout's.
    let top = ok(
        &svc,
        "find_pane_by_position",
        json!({"session_name": "main", "corner": "top-left"}),
    )
    .await;
    assert_eq!(top["pane_id"], tiled.as_str(), "{top}");
    let bottom = ok(
        &svc,
        "find_pane_by_position",
        json!({"session_name": "main", "corner": "bottom-right"}),
    )
    .await;
    let corner = tmux.cmd(&[
        "list-panes",
        "-t",
        "main",
        "-F",
        "#{pane_id} #{pane_at_bottom}#{pane_at_right}",
    ]);
    let corner = corner.lines().find_map(|l| l.strip_suffix(" 11"));
    assert_eq!(bottom["pane_id"].as_str(), corner, "{bottom}");

    // A floating pane is waited on like any other.
    let svc = shared(svc);
    let args = json!({"pane_id": low, "patterns": ["float"], "timeout": 10});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": low, "keys": "echo fl''oat"}),
    )
    .await;
    let found = finish(wait).await;
    assert_eq!(found["outcome"], "matched", "{found}");
}

#[tokio::test]
async fn the_guards_hold_for_a_floating_caller() {
    let Some(tmux) = floating_tmux("guards in a floating pane") else {
        return;
    };
    let caller = float(&tmux, (2, 2));
    let window = tmux
        .cmd(&["display-message", "-p", "-t", "main", "#{window_id}"])
        .trim()
        .to_owned();
    let identity = format!("{},1,$0", tmux.socket_path().display());
    let svc = tmux.service_with(&[("TMUX", identity.as_str()), ("TMUX_PANE", caller.as_str())]);
    let before = flags(&tmux);
    for (tool, args) in [
        ("kill_pane", json!({"pane_id": caller})),
        ("respawn_pane", json!({"pane_id": caller})),
        ("kill_window", json!({"window_id": window})),
        ("kill_session", json!({"session_name": "main"})),
    ] {
        let refused = err(&svc, tool, args).await;
        assert!(refused.starts_with("Refusing to"), "{tool}: {refused}");
    }
    assert_eq!(flags(&tmux), before);
    let panes = ok(&svc, "list_panes", json!({"session_name": "main"})).await;
    for p in panes.as_array().unwrap() {
        assert_eq!(p["is_caller"], p["pane_id"] == json!(caller), "{p}");
    }
}

#[tokio::test]
async fn a_floating_pane_is_paused_until_watched() {
    let Some(tmux) = floating_tmux("paused floating panes") else {
        return;
    };
    let features = Features::of(tmux.version());
    let tiled = PaneId::parse(tmux.first_pane().as_bytes()).expect("a pane id");
    let transport = LocalTmux {
        tmux_bin: "tmux".into(),
        socket: tmux.socket_path(),
    };
    let (client, seen) = client_over(&transport, &tmux, Role::Streaming, features).await;
    // Created while the client is attached: paused as it appears.
    let floating = PaneId::parse(float(&tmux, (-4, -2)).as_bytes()).expect("a pane id");
    seen.until_paused(floating, 0).await;
    let lease = only_the_leased_pane_streams(&tmux, &client, &seen, tiled, floating).await;
    let pauses = seen.pauses(tiled);
    drop(lease);
    seen.until_paused(tiled, pauses).await;
    // And streamed while leased, the tiled pane paused.
    let lease = only_the_leased_pane_streams(&tmux, &client, &seen, floating, tiled).await;
    drop(lease);
    client.leave().await;
}
