//! kill_session, kill_window, kill_pane and kill_server of a zoomed window
//! against a live private tmux server. tmux 3.4 and 3.8-dev abort on a
//! double free when a zoomed window is destroyed (`Features::
//! unzoom_before_teardown`, protocol/tmux-control.md §7e): whether our
//! `resize_pane` or a person's `resize-pane -Z` zoomed the window, every
//! release must come out of each teardown with the same server, answering.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{BOUND, PrivateTmux, call, ok};
use serde_json::json;
use tmux_mcp::tools::TmuxService;

/// Who zoomed the window.
#[derive(Clone, Copy, Debug)]
enum Zoom {
    /// `resize_pane` with `zoom: true`.
    Tool,
    /// `resize-pane -Z`, as a person's key binding does.
    Cli,
}

const BOTH: [Zoom; 2] = [Zoom::Tool, Zoom::Cli];

/// `display-message -p -t <target> <format>`, trimmed.
fn show(tmux: &PrivateTmux, target: &str, format: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", target, format])
        .trim()
        .to_owned()
}

/// A new session `name` of one window with two panes; returns the window
/// and its panes, the second active.
fn two_pane_session(tmux: &PrivateTmux, name: &str) -> (String, [String; 2]) {
    let new = ["new-session", "-d", "-s", name, "-x", "120", "-y", "40"];
    let first = tmux.cmd(&[&new[..], &["-P", "-F", "#{pane_id}"]].concat());
    let first = first.trim().to_owned();
    let second = tmux.cmd(&["split-window", "-t", &first, "-P", "-F", "#{pane_id}"]);
    let window = show(tmux, &first, "#{window_id}");
    (window, [first, second.trim().to_owned()])
}

/// [`two_pane_session`] with its second pane zoomed `how`.
async fn zoomed_session(
    tmux: &PrivateTmux,
    svc: &TmuxService,
    name: &str,
    how: Zoom,
) -> (String, [String; 2]) {
    let (window, panes) = two_pane_session(tmux, name);
    match how {
        Zoom::Tool => {
            ok(
                svc,
                "resize_pane",
                json!({"pane_id": panes[1], "zoom": true}),
            )
            .await;
        }
        Zoom::Cli => {
            tmux.cmd(&["resize-pane", "-Z", "-t", &panes[1]]);
        }
    }
    assert_eq!(show(tmux, &window, "#{window_zoomed_flag}"), "1", "{how:?}");
    (window, panes)
}

/// The server answers, and is process `pid`. A notification the kill
/// queued has run by then: tmux runs it before a later client's command.
fn assert_same_server(tmux: &PrivateTmux, pid: &str, what: &str) {
    let out = tmux.try_cmd(&["display-message", "-p", "#{pid}"]);
    assert!(
        out.status.success(),
        "{what}: tmux died: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), pid, "{what}");
}

fn sessions(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["list-sessions", "-F", "#{session_name}"])
}

#[tokio::test]
async fn kill_session_of_a_zoomed_window_leaves_tmux_running() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main", "#{pid}");
    for how in BOTH {
        let name = format!("zoomed-{how:?}");
        zoomed_session(&tmux, &svc, &name, how).await;
        ok(&svc, "kill_session", json!({"session_name": name})).await;
        assert_same_server(&tmux, &pid, &format!("kill_session after a {how:?} zoom"));
        assert!(!sessions(&tmux).contains(&name), "{how:?}");
    }
}

/// A zoomed window that lives on in another session is left zoomed: the
/// person there still sees it as they left it.
#[tokio::test]
async fn kill_session_leaves_a_shared_window_zoomed() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main", "#{pid}");
    let (window, _) = zoomed_session(&tmux, &svc, "shared", Zoom::Cli).await;
    tmux.cmd(&["link-window", "-d", "-s", &window, "-t", "main:"]);
    ok(&svc, "kill_session", json!({"session_name": "shared"})).await;
    assert_same_server(&tmux, &pid, "kill_session of a shared window");
    assert_eq!(show(&tmux, &window, "#{window_zoomed_flag}"), "1");
}

/// Our zoom and our kill of the same session, sent together: the zoom
/// must not land between the kill's unzoom and the kill.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zoom_sent_with_the_kill_leaves_tmux_running() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main", "#{pid}");
    for round in 0..10 {
        let name = format!("race-{round}");
        let (_, panes) = two_pane_session(&tmux, &name);
        let zoom = json!({"pane_id": panes[0], "zoom": true});
        // The zoom may come after the kill and find no pane: either is fine.
        let zoom = call(&svc, "resize_pane", zoom);
        let kill = ok(&svc, "kill_session", json!({"session_name": name}));
        tokio::join!(zoom, kill);
        assert_same_server(&tmux, &pid, &format!("round {round}"));
    }
}

#[tokio::test]
async fn kill_window_of_a_zoomed_window_leaves_tmux_running() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main", "#{pid}");
    for how in BOTH {
        let name = format!("zoomed-{how:?}");
        let (window, _) = zoomed_session(&tmux, &svc, &name, how).await;
        ok(&svc, "kill_window", json!({"window_id": window})).await;
        assert_same_server(&tmux, &pid, &format!("kill_window after a {how:?} zoom"));
        assert!(!sessions(&tmux).contains(&name), "{how:?}");
    }
}

/// A pane of a zoomed window is killed in a window tmux unzooms first
/// (one pane is never zoomed): then the last pane takes the window and its
/// session with it.
#[tokio::test]
async fn kill_pane_down_to_the_last_of_a_zoomed_window_leaves_tmux_running() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pid = show(&tmux, "main", "#{pid}");
    // The zoomed pane goes first after our zoom, the other after the CLI's.
    for (how, first_killed) in [(Zoom::Tool, 1), (Zoom::Cli, 0)] {
        let name = format!("zoomed-{how:?}");
        let (window, panes) = zoomed_session(&tmux, &svc, &name, how).await;
        let last = &panes[1 - first_killed];
        ok(&svc, "kill_pane", json!({"pane_id": panes[first_killed]})).await;
        let what = format!("kill_pane after a {how:?} zoom");
        assert_same_server(&tmux, &pid, &what);
        assert_eq!(show(&tmux, &window, "#{window_zoomed_flag}"), "0", "{what}");
        ok(&svc, "kill_pane", json!({"pane_id": last})).await;
        assert_same_server(&tmux, &pid, &format!("{what}, the last pane"));
        assert!(!sessions(&tmux).contains(&name), "{how:?}");
    }
}

/// A tmux server run in the foreground (`-D`) as this test's child, so
/// how it ends is seen; answering, with no session yet.
async fn foreground_server(name: String) -> (PrivateTmux, tokio::process::Child) {
    let tmux = PrivateTmux::named(name);
    let server = tokio::process::Command::new("tmux")
        .args(["-L", tmux.name(), "-f", "/dev/null", "-D"])
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("tmux -D");
    // Only once it listens: a command sent earlier would start a server
    // of its own.
    let tmpdir = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
    let socket =
        tmux_mcp::tmux::socket::socket_dir(std::path::Path::new(&tmpdir)).join(tmux.name());
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(started.elapsed() < BOUND, "tmux -D never listened");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tmux.cmd(&["set-option", "-g", "default-command", "env PS1='$ ' sh"]);
    (tmux, server)
}

/// The server is the one being killed here: it must exit, not abort.
#[tokio::test]
async fn kill_server_with_a_zoomed_window_exits_cleanly() {
    for how in BOTH {
        let name = format!("tmuxmcp-test-{}-teardown-{how:?}", std::process::id());
        let (tmux, mut server) = foreground_server(name).await;
        let svc = tmux.service();
        zoomed_session(&tmux, &svc, "zoomed", how).await;
        ok(&svc, "kill_server", json!({})).await;
        let status = tokio::time::timeout(BOUND, server.wait())
            .await
            .expect("the server exits")
            .expect("its status");
        assert!(
            status.success(),
            "kill_server after a {how:?} zoom: tmux ended with {status}"
        );
    }
}
