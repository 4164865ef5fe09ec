//! resize_pane, set_pane_title, find_pane_by_position, select_pane,
//! swap_pane, enter_copy_mode and exit_copy_mode against a live private tmux
//! server: each result is checked against tmux's own view, and bad
//! arguments must leave tmux as it was.

use std::time::Duration;

use crate::support::{PrivateTmux, err, ok};
use serde_json::{Value, json};

/// `display-message -p -t <target> <format>`, trimmed.
fn show(tmux: &PrivateTmux, target: &str, format: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", target, format])
        .trim()
        .to_owned()
}

fn split(tmux: &PrivateTmux, target: &str, how: &str) -> String {
    tmux.cmd(&["split-window", how, "-t", target, "-P", "-F", "#{pane_id}"])
        .trim()
        .to_owned()
}

/// The window's panes as `id:active:left,top` in tmux's order.
fn layout(tmux: &PrivateTmux, window: &str) -> String {
    tmux.cmd(&[
        "list-panes",
        "-t",
        window,
        "-F",
        "#{pane_id}:#{pane_active}:#{pane_left},#{pane_top}:#{pane_width}x#{pane_height}",
    ])
}

/// A 2x2 grid in window `main:0`: returns [top-left, top-right,
/// bottom-left, bottom-right]. The active pane is the last one created.
fn grid(tmux: &PrivateTmux) -> [String; 4] {
    let tl = show(tmux, "main:0", "#{pane_id}");
    let tr = split(tmux, &tl, "-h");
    let bl = split(tmux, &tl, "-v");
    let br = split(tmux, &tr, "-v");
    [tl, tr, bl, br]
}

fn active(tmux: &PrivateTmux, window: &str) -> String {
    show(tmux, window, "#{pane_id}")
}

#[tokio::test]
async fn resize_pane_sizes_and_zoom() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let top = active(&tmux, "main:0");
    let bottom = split(&tmux, &top, "-v");

    let resized = ok(&svc, "resize_pane", json!({"pane_id": top, "height": 10})).await;
    assert_eq!(resized["pane_id"], top.as_str());
    assert_eq!(resized["pane_height"], "10");
    assert_eq!(show(&tmux, &top, "#{pane_height}"), "10");

    let right = split(&tmux, &bottom, "-h");
    let resized = ok(&svc, "resize_pane", json!({"pane_id": right, "width": 40})).await;
    assert_eq!(resized["pane_width"], "40");
    assert_eq!(show(&tmux, &right, "#{pane_width}"), "40");

    // zoom=true zooms once; again changes nothing.
    for _ in 0..2 {
        let zoomed = ok(&svc, "resize_pane", json!({"pane_id": top, "zoom": true})).await;
        assert_eq!(zoomed["pane_id"], top.as_str());
        assert_eq!(zoomed["pane_active"], "1");
        assert_eq!(show(&tmux, &top, "#{window_zoomed_flag}"), "1");
        assert_eq!(active(&tmux, "main:0"), top);
    }
    // Zooming another pane of a zoomed window zooms that one.
    ok(
        &svc,
        "resize_pane",
        json!({"pane_id": bottom, "zoom": true}),
    )
    .await;
    assert_eq!(show(&tmux, &bottom, "#{window_zoomed_flag}"), "1");
    assert_eq!(active(&tmux, "main:0"), bottom);
    // zoom=false unzooms once; again changes nothing.
    for _ in 0..2 {
        ok(&svc, "resize_pane", json!({"pane_id": top, "zoom": false})).await;
        assert_eq!(show(&tmux, &top, "#{window_zoomed_flag}"), "0");
    }
    assert_eq!(active(&tmux, "main:0"), bottom);

    // Without pane_id: the first pane of the session's first window.
    let first = ok(
        &svc,
        "resize_pane",
        json!({"session_name": "main", "height": 12}),
    )
    .await;
    assert_eq!(first["pane_id"], top.as_str());
    assert_eq!(show(&tmux, &top, "#{pane_height}"), "12");

    let before = layout(&tmux, "main:0");
    for (args, want) in [
        (
            json!({"pane_id": top, "zoom": true, "height": 5}),
            "Cannot combine zoom with height/width",
        ),
        (
            json!({"pane_id": top, "height": 0}),
            "height must be between",
        ),
        (
            json!({"pane_id": top, "width": -3}),
            "width must be between",
        ),
        (
            json!({"pane_id": top, "width": 100000}),
            "width must be between",
        ),
        (json!({"pane_id": top}), "Provide height, width or zoom"),
        (
            json!({"pane_id": "%99", "height": 5}),
            "Pane not found: %99",
        ),
        (json!({"pane_id": "nope", "zoom": true}), "Pane not found"),
        (json!({"pane_id": top, "height": "5"}), "Invalid arguments"),
    ] {
        let text = err(&svc, "resize_pane", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(layout(&tmux, "main:0"), before);
    assert_eq!(show(&tmux, &top, "#{window_zoomed_flag}"), "0");
}

/// tmux master (3.8-dev) crashed on `resize-pane -y` of a pane of a
/// zoomed window that is not the zoomed pane (`Features::
/// unzoom_before_resize`): every release must come out of these unzoomed,
/// resized, and with the same server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_a_pane_of_a_zoomed_window_unzooms_it_and_tmux_lives() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main:0", "#{pid}");
    let top = active(&tmux, "main:0");
    let bottom = split(&tmux, &top, "-v");
    let right = split(&tmux, &bottom, "-h");

    // Another pane than the zoomed one (the crash), then the zoomed one.
    let cases = [
        (&bottom, "height", 7, "#{pane_height}"),
        (&right, "width", 30, "#{pane_width}"),
        (&top, "height", 9, "#{pane_height}"),
    ];
    for (pane, field, size, format) in cases {
        ok(&svc, "resize_pane", json!({"pane_id": top, "zoom": true})).await;
        assert_eq!(show(&tmux, &top, "#{window_zoomed_flag}"), "1");
        let resized = ok(&svc, "resize_pane", json!({"pane_id": pane, field: size})).await;
        assert_eq!(
            show(&tmux, "main:0", "#{pid}"),
            pid,
            "resizing {pane} ({field})"
        );
        assert_eq!(show(&tmux, pane, "#{window_zoomed_flag}"), "0");
        assert_eq!(show(&tmux, pane, format), size.to_string());
        assert_eq!(resized[format!("pane_{field}")], size.to_string());
    }

    // Zooms and resizes of one window sent together.
    for round in 0..10 {
        let zoom = ok(&svc, "resize_pane", json!({"pane_id": top, "zoom": true}));
        let resize = ok(
            &svc,
            "resize_pane",
            json!({"pane_id": bottom, "height": 5 + round}),
        );
        tokio::join!(zoom, resize);
        assert_eq!(show(&tmux, "main:0", "#{pid}"), pid, "round {round}");
    }
}

#[tokio::test]
async fn set_pane_title_is_literal_and_keeps_focus() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let first = active(&tmux, "main:0");
    let second = split(&tmux, &first, "-v");
    let third = split(&tmux, &second, "-h");
    // Active: third; last: second.
    let focus = || {
        tmux.cmd(&[
            "list-panes",
            "-t",
            "main:0",
            "-F",
            "#{pane_id}:#{pane_active}:#{pane_last}",
        ])
    };
    let before = focus();
    assert!(before.contains(&format!("{third}:1:0")), "{before}");
    assert!(before.contains(&format!("{second}:0:1")), "{before}");

    let title = "t#{pane_id}#S ##(id) 'q' \"d\" ;";
    let info = ok(
        &svc,
        "set_pane_title",
        json!({"pane_id": first, "title": title}),
    )
    .await;
    assert_eq!(info["pane_id"], first.as_str());
    assert_eq!(info["pane_title"], title);
    assert_eq!(info["pane_active"], "0");
    assert_eq!(show(&tmux, &first, "#{pane_title}"), title);
    assert_eq!(focus(), before, "set_pane_title moved the focus");

    // Resolution without pane_id: the first pane of the first window.
    let info = ok(&svc, "set_pane_title", json!({"title": "plain"})).await;
    assert_eq!(info["pane_id"], first.as_str());
    assert_eq!(show(&tmux, &first, "#{pane_title}"), "plain");
    assert_eq!(focus(), before);

    for (args, want) in [
        (
            json!({"pane_id": "%99", "title": "x"}),
            "Pane not found: %99",
        ),
        (json!({"pane_id": first, "title": "a\u{0}b"}), "NUL"),
        (json!({"pane_id": first}), "Invalid arguments"),
        (
            json!({"session_name": "nope", "title": "x"}),
            "Object not found",
        ),
    ] {
        let text = err(&svc, "set_pane_title", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(show(&tmux, &first, "#{pane_title}"), "plain");
    assert_eq!(focus(), before);
}

#[tokio::test]
async fn find_pane_by_position_on_a_grid_and_a_single_pane() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let panes = grid(&tmux);
    let corners = ["top-left", "top-right", "bottom-left", "bottom-right"];
    for (corner, want) in corners.iter().zip(&panes) {
        let found = ok(&svc, "find_pane_by_position", json!({"corner": corner})).await;
        assert_eq!(&found["pane_id"], want.as_str(), "{corner}");
        // tmux agrees that the pane touches both edges of that corner.
        let (v, h) = corner.split_once('-').unwrap();
        let flags = show(&tmux, want, &format!("#{{pane_at_{v}}}#{{pane_at_{h}}}"));
        assert_eq!(flags, "11", "{corner}");
        assert_eq!(found[format!("pane_at_{v}")], true);
        assert_eq!(found[format!("pane_at_{h}")], true);
    }

    let window = tmux
        .cmd(&["new-window", "-d", "-P", "-F", "#{window_id}"])
        .trim()
        .to_owned();
    let only = active(&tmux, &window);
    for corner in corners {
        let found = ok(
            &svc,
            "find_pane_by_position",
            json!({"corner": corner, "window_id": window}),
        )
        .await;
        assert_eq!(found["pane_id"], only.as_str());
    }
    let by_index = ok(
        &svc,
        "find_pane_by_position",
        json!({"corner": "top-left", "session_name": "main", "window_index": "1"}),
    )
    .await;
    assert_eq!(by_index["pane_id"], only.as_str());

    for (args, want) in [
        (json!({"corner": "middle"}), "Invalid arguments"),
        (json!({}), "Invalid arguments"),
        (
            json!({"corner": "top-left", "window_id": "@99"}),
            "Object not found",
        ),
        (
            json!({"corner": "top-left", "window_index": "7"}),
            "Object not found",
        ),
    ] {
        let text = err(&svc, "find_pane_by_position", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
}

#[tokio::test]
async fn select_pane_by_id_and_direction() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let [tl, tr, bl, br] = grid(&tmux);
    assert_eq!(active(&tmux, "main:0"), br);

    let selected = ok(&svc, "select_pane", json!({"pane_id": tl})).await;
    assert_eq!(selected["pane_id"], tl.as_str());
    assert_eq!(selected["pane_active"], "1");
    assert_eq!(active(&tmux, "main:0"), tl);

    for (direction, want) in [("right", &tr), ("down", &br), ("left", &bl), ("up", &tl)] {
        let selected = ok(&svc, "select_pane", json!({"direction": direction})).await;
        assert_eq!(&selected["pane_id"], want.as_str(), "{direction}");
        assert_eq!(&active(&tmux, "main:0"), want, "{direction}");
    }
    let last = ok(&svc, "select_pane", json!({"direction": "last"})).await;
    assert_eq!(last["pane_id"], bl.as_str());
    assert_eq!(active(&tmux, "main:0"), bl);

    // next/previous follow tmux's pane order and wrap around.
    let order: Vec<String> = tmux
        .cmd(&["list-panes", "-t", "main:0", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_owned)
        .collect();
    let at = |id: &str| order.iter().position(|p| p == id).unwrap();
    let mut current = bl.clone();
    for _ in 0..order.len() + 1 {
        let next = ok(&svc, "select_pane", json!({"direction": "next"})).await;
        let want = &order[(at(&current) + 1) % order.len()];
        assert_eq!(&next["pane_id"], want.as_str());
        assert_eq!(&active(&tmux, "main:0"), want);
        current = want.clone();
    }
    for _ in 0..order.len() + 1 {
        let previous = ok(&svc, "select_pane", json!({"direction": "previous"})).await;
        let want = &order[(at(&current) + order.len() - 1) % order.len()];
        assert_eq!(&previous["pane_id"], want.as_str());
        current = want.clone();
    }
    assert_eq!(active(&tmux, "main:0"), current);

    // Directions act on the named window, not the first one.
    let window = tmux
        .cmd(&["new-window", "-d", "-P", "-F", "#{window_id}"])
        .trim()
        .to_owned();
    let w_first = active(&tmux, &window);
    let w_second = split(&tmux, &w_first, "-h");
    let next = ok(
        &svc,
        "select_pane",
        json!({"direction": "next", "window_id": window}),
    )
    .await;
    assert_eq!(next["pane_id"], w_first.as_str());
    assert_eq!(active(&tmux, &window), w_first);
    assert_ne!(w_second, w_first);
    assert_eq!(active(&tmux, "main:0"), current, "the first window moved");

    let focus = layout(&tmux, "main:0");
    let single = tmux
        .cmd(&["new-window", "-d", "-P", "-F", "#{window_id}"])
        .trim()
        .to_owned();
    for (args, want) in [
        (json!({}), "Provide either pane_id or direction."),
        (json!({"pane_id": tl, "direction": "up"}), "not both"),
        (json!({"pane_id": "%99"}), "Pane not found: %99"),
        (json!({"direction": "sideways"}), "Invalid arguments"),
        (
            json!({"direction": "up", "window_id": "@99"}),
            "Object not found",
        ),
        (
            json!({"direction": "last", "window_id": single}),
            "no last pane",
        ),
    ] {
        let text = err(&svc, "select_pane", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(layout(&tmux, "main:0"), focus);
}

fn position(pane: &Value) -> (i64, i64) {
    (
        pane["pane_left"].as_i64().unwrap(),
        pane["pane_top"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn swap_pane_keeps_focus_with_its_pane() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let left = active(&tmux, "main:0");
    let right = split(&tmux, &left, "-h");
    let below = split(&tmux, &right, "-v");
    let pos = |id: &str| show(&tmux, id, "#{pane_left},#{pane_top}");
    let (left_at, right_at) = (pos(&left), pos(&right));
    assert_eq!(active(&tmux, "main:0"), below);

    let swapped = ok(
        &svc,
        "swap_pane",
        json!({"source_pane_id": left, "target_pane_id": right}),
    )
    .await;
    assert_eq!(swapped["pane_id"], left.as_str());
    let (l, t) = position(&swapped);
    assert_eq!(format!("{l},{t}"), right_at);
    assert_eq!(pos(&left), right_at);
    assert_eq!(pos(&right), left_at);
    assert_eq!(active(&tmux, "main:0"), below, "focus moved");

    // Swapping the active pane: it stays active, in its new place.
    let below_at = pos(&below);
    let swapped = ok(
        &svc,
        "swap_pane",
        json!({"source_pane_id": below, "target_pane_id": right}),
    )
    .await;
    assert_eq!(swapped["pane_active"], "1");
    assert_eq!(pos(&below), left_at);
    assert_eq!(pos(&right), below_at);
    assert_eq!(active(&tmux, "main:0"), below);

    // Across windows.
    let other = tmux
        .cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}"])
        .trim()
        .to_owned();
    let moved = ok(
        &svc,
        "swap_pane",
        json!({"source_pane_id": other, "target_pane_id": left}),
    )
    .await;
    assert_eq!(
        moved["window_id"],
        show(&tmux, "main:0", "#{window_id}").as_str()
    );
    assert_eq!(show(&tmux, &left, "#{window_index}"), "1");

    let before = layout(&tmux, "main:0");
    for (args, want) in [
        (
            json!({"source_pane_id": other, "target_pane_id": "%99"}),
            "Pane not found: %99",
        ),
        (
            json!({"source_pane_id": "%98", "target_pane_id": other}),
            "Pane not found: %98",
        ),
        (
            json!({"source_pane_id": "x", "target_pane_id": other}),
            "Pane not found: x",
        ),
        (json!({"source_pane_id": other}), "Invalid arguments"),
    ] {
        let text = err(&svc, "swap_pane", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    assert_eq!(layout(&tmux, "main:0"), before);
}

#[tokio::test]
async fn copy_mode_enter_scroll_and_exit() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let script = "seq 1 300; tmux wait-for -S scrolled; exec sleep 1000";
    let pane = tmux
        .cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}", script])
        .trim()
        .to_owned();
    tmux.wait_for("scrolled", Duration::from_secs(10)).await;
    let mode = |p: &str| show(&tmux, p, "#{pane_in_mode}:#{pane_mode}:#{scroll_position}");

    let info = ok(&svc, "enter_copy_mode", json!({"pane_id": pane})).await;
    assert_eq!(info["pane_id"], pane.as_str());
    assert_eq!(mode(&pane), "1:copy-mode:0");

    ok(
        &svc,
        "enter_copy_mode",
        json!({"pane_id": pane, "scroll_up": 5}),
    )
    .await;
    assert_eq!(mode(&pane), "1:copy-mode:5");

    // A count past the scrollback stops at its top, without looping long.
    let history = show(&tmux, &pane, "#{history_size}");
    ok(
        &svc,
        "enter_copy_mode",
        json!({"pane_id": pane, "scroll_up": 1_000_000_000_000i64}),
    )
    .await;
    assert_eq!(mode(&pane), format!("1:copy-mode:{history}"));

    for _ in 0..2 {
        let info = ok(&svc, "exit_copy_mode", json!({"pane_id": pane})).await;
        assert_eq!(info["pane_id"], pane.as_str());
        assert_eq!(mode(&pane), "0::");
    }

    // Other modes are left alone, without an error.
    tmux.cmd(&["clock-mode", "-t", &pane]);
    ok(&svc, "exit_copy_mode", json!({"pane_id": pane})).await;
    assert_eq!(mode(&pane), "1:clock-mode:");
    tmux.cmd(&["send-keys", "-t", &pane, "q"]);
    assert_eq!(mode(&pane), "0::");

    // Resolution without pane_id: the first pane of the first window.
    let first = active(&tmux, "main:0");
    let info = ok(&svc, "enter_copy_mode", json!({"session_name": "main"})).await;
    assert_eq!(info["pane_id"], first.as_str());
    assert_eq!(mode(&first), "1:copy-mode:0");
    ok(&svc, "exit_copy_mode", json!({"session_name": "main"})).await;
    assert_eq!(mode(&first), "0::");

    for (tool, args, want) in [
        (
            "enter_copy_mode",
            json!({"pane_id": pane, "scroll_up": -1}),
            "scroll_up must be zero or positive",
        ),
        (
            "enter_copy_mode",
            json!({"pane_id": "%99"}),
            "Pane not found: %99",
        ),
        (
            "exit_copy_mode",
            json!({"pane_id": "%99"}),
            "Pane not found: %99",
        ),
        (
            "exit_copy_mode",
            json!({"pane_id": pane, "scroll_up": 1}),
            "Invalid arguments",
        ),
    ] {
        let text = err(&svc, tool, args.clone()).await;
        assert!(text.contains(want), "{tool} {args}: {text}");
    }
    assert_eq!(mode(&pane), "0::");
}
