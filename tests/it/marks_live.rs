//! Agents' own panes on a private tmux server: programs started without
//! typing (`shell` on create_session and create_window), maker marks on
//! what this server creates (`created_by`), and `attach`, the command a
//! person runs to watch a new pane, run for real in a pseudo-terminal.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tmux_mcp::tools::TmuxService;
use tokio::io::AsyncReadExt;

use crate::support::mcp::McpClient;
use crate::support::{BOUND, PrivateTmux};

const WIRE_WAIT: Duration = Duration::from_secs(15);

/// A service that believes it runs in `tmux`'s pane `pane` (as an agent in
/// tmux does: `TMUX` and `TMUX_PANE` inherited).
fn service_in(tmux: &PrivateTmux, pane: &str) -> TmuxService {
    let socket = tmux.socket_path();
    let tmux_var = format!("{},1,0", socket.display());
    tmux.service_with(&[("TMUX", &tmux_var), ("TMUX_PANE", pane)])
}

/// An MCP session over the wire, initialized with `clientInfo.name`.
async fn client(service: TmuxService, name: &str) -> McpClient {
    let (mut wire, _) = McpClient::serve(Arc::new(service), 1 << 20, 64, WIRE_WAIT);
    let params = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": { "name": name, "version": "0" }
    });
    let r = wire.request(0, "initialize", params).await;
    assert!(r.get("result").is_some(), "{r}");
    wire.notify("notifications/initialized", json!({})).await;
    wire
}

/// A tool call that must succeed: its structured content (unwrapped from
/// `{"result": …}`).
async fn ok(wire: &mut McpClient, name: &str, args: Value) -> Value {
    let r = wire.call(name, args).await;
    assert_ne!(r["isError"], json!(true), "{name}: {r}");
    let value = r["structuredContent"].clone();
    match value.get("result") {
        Some(inner) => inner.clone(),
        None => value,
    }
}

fn ids(listed: &Value, key: &str) -> Vec<String> {
    let mut ids: Vec<String> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|row| row[key].as_str().expect("an id").to_owned())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn what_the_server_creates_names_its_maker_and_me_finds_it_after_a_restart() {
    let tmux = PrivateTmux::start();
    let home = tmux.first_pane();
    let mut wire = client(service_in(&tmux, &home), "agent-a").await;
    let me = format!("agent-a@{home}");

    let session = ok(
        &mut wire,
        "create_session",
        json!({ "session_name": "work" }),
    )
    .await;
    assert_eq!(session["created_by"], json!(me), "{session}");
    let first = session["active_pane_id"].as_str().unwrap().to_owned();
    let window = ok(
        &mut wire,
        "create_window",
        json!({ "session_name": "work" }),
    )
    .await;
    assert_eq!(window["created_by"], json!(me), "{window}");
    let second = window["active_pane_id"].as_str().unwrap().to_owned();
    let split = ok(&mut wire, "split_window", json!({ "pane_id": first })).await;
    assert_eq!(split["created_by"], json!(me), "{split}");
    let third = split["pane_id"].as_str().unwrap().to_owned();

    // tmux's own view: a user option on each object, the client's name and pane.
    let sid = session["session_id"].as_str().unwrap();
    let wid = window["window_id"].as_str().unwrap();
    let show = |args: &[&str]| tmux.cmd(args).trim().to_owned();
    assert_eq!(
        show(&["show-options", "-v", "-t", sid, "@tmux_mcp_session_by"]),
        me
    );
    assert_eq!(
        show(&["show-options", "-w", "-v", "-t", wid, "@tmux_mcp_window_by"]),
        me
    );
    for pane in [&first, &second, &third] {
        assert_eq!(
            show(&["show-options", "-p", "-v", "-t", pane, "@tmux_mcp_pane_by"]),
            me
        );
    }

    // A pane a person splits in the agent's window is not the agent's,
    // although tmux formats would inherit the window's option.
    let person = show(&[
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        &second,
    ]);

    let all = ok(&mut wire, "list_panes", json!({})).await;
    for row in all.as_array().unwrap() {
        let id = row["pane_id"].as_str().unwrap();
        if id == home || id == person {
            assert!(row.get("created_by").is_none(), "unmarked: {row}");
        } else {
            assert_eq!(row["created_by"], json!(me), "{row}");
        }
    }
    let mine = ok(&mut wire, "list_panes", json!({ "created_by": "me" })).await;
    assert_eq!(
        ids(&mine, "pane_id"),
        sorted(vec![first.clone(), second.clone(), third.clone()])
    );
    let mine = ok(&mut wire, "list_windows", json!({ "created_by": "me" })).await;
    // The session's first window (made with it) and the new one.
    assert_eq!(mine.as_array().unwrap().len(), 2, "{mine}");
    let mine = ok(&mut wire, "list_sessions", json!({ "created_by": "me" })).await;
    assert_eq!(ids(&mine, "session_id"), [sid.to_owned()]);
    let unmarked = ok(&mut wire, "list_sessions", json!({})).await;
    let main = unmarked
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_name"] == "main")
        .expect("main");
    assert!(main.get("created_by").is_none(), "{main}");
    drop(wire);

    // A restart of the MCP server: the same client in the same pane finds
    // its panes; another client finds none as its own, but can ask by name.
    let mut again = client(service_in(&tmux, &home), "agent-a").await;
    let mine = ok(&mut again, "list_panes", json!({ "created_by": "me" })).await;
    assert_eq!(ids(&mine, "pane_id").len(), 3, "{mine}");
    let mut other = client(service_in(&tmux, &home), "agent-b").await;
    let theirs = ok(&mut other, "list_panes", json!({ "created_by": "me" })).await;
    assert_eq!(theirs, json!([]));
    let named = ok(&mut other, "list_panes", json!({ "created_by": me })).await;
    assert_eq!(ids(&named, "pane_id").len(), 3, "{named}");
}

/// A terminal a person attaches with: `script` gives the command a
/// pseudo-terminal; its output is what the person's screen was sent.
struct Terminal {
    child: tokio::process::Child,
    seen: Vec<u8>,
}

impl Terminal {
    fn open(command: &str) -> Terminal {
        let child = tokio::process::Command::new("script")
            .args(["-qfc", command, "/dev/null"])
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env("TERM", "xterm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("script runs");
        Terminal {
            child,
            seen: Vec::new(),
        }
    }

    /// Reads the screen's bytes until `text` was sent, failing after [`BOUND`].
    async fn until(&mut self, text: &str) {
        let out = self.child.stdout.as_mut().expect("piped");
        let read = async {
            let mut buf = [0u8; 4096];
            while !self.seen.windows(text.len()).any(|w| w == text.as_bytes()) {
                let n = out.read(&mut buf).await.expect("read the terminal");
                assert!(n > 0, "the terminal closed before showing {text:?}");
                self.seen.extend_from_slice(&buf[..n]);
            }
        };
        let shown = tokio::time::timeout(BOUND, read).await;
        assert!(shown.is_ok(), "{text:?} never reached the terminal");
    }

    /// Waits for the client to end (it was detached), within [`BOUND`].
    async fn closed(mut self) {
        let status = tokio::time::timeout(BOUND, self.child.wait()).await;
        assert!(status.is_ok(), "the terminal did not end after its detach");
    }
}

/// The one client (not control mode) attached to `session`, as
/// `name readonly session window pane`, once it is attached.
async fn person_client(tmux: &PrivateTmux, session: &str) -> Vec<String> {
    let started = std::time::Instant::now();
    loop {
        let listed = tmux.cmd(&[
            "list-clients",
            "-t",
            session,
            "-F",
            "#{client_control_mode} #{client_name} #{client_readonly} #{session_id} #{window_id} #{pane_id}",
        ]);
        let person: Vec<&str> = listed.lines().filter(|l| l.starts_with("0 ")).collect();
        if let [one] = person[..] {
            return one.split(' ').skip(1).map(str::to_owned).collect();
        }
        assert!(started.elapsed() < BOUND, "no client attached to {session}");
        // tmux sends no event to a non-client: look again shortly.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn new_programs_start_without_typing_keep_focus_and_a_person_can_watch_them() {
    let tmux = PrivateTmux::start();
    let mut wire = client(tmux.service(), "agent").await;
    let name = &tmux.name;

    // A person looks at session main.
    let person = Terminal::open(&format!("tmux -L {name} attach -t main"));
    let before = person_client(&tmux, "main").await;

    // Each program prints a line the pane can only show if it ran (the
    // sum is computed, so typed text would not match), then signals.
    let program = |tag: &str| {
        format!("printf '{tag}-%s\\n' $((6*7)); tmux wait-for -S {tag}-{name}; exec cat")
    };
    let session = ok(
        &mut wire,
        "create_session",
        json!({ "session_name": "bg", "shell": program("s"), "x": 80, "y": 24 }),
    )
    .await;
    let window = ok(
        &mut wire,
        "create_window",
        json!({ "session_name": "main", "shell": program("w") }),
    )
    .await;
    let split = ok(
        &mut wire,
        "split_window",
        json!({ "pane_id": tmux.first_pane(), "shell": program("p") }),
    )
    .await;
    for tag in ["s", "w", "p"] {
        tmux.wait_for(&format!("{tag}-{name}"), BOUND).await;
    }
    let panes = [
        ("s", session["active_pane_id"].as_str().unwrap()),
        ("w", window["active_pane_id"].as_str().unwrap()),
        ("p", split["pane_id"].as_str().unwrap()),
    ];
    for (tag, pane) in panes {
        let start = tmux.cmd(&["display-message", "-p", "-t", pane, "#{pane_start_command}"]);
        assert!(start.contains("printf"), "{pane} runs the program: {start}");
        let screen = tmux.cmd(&["capture-pane", "-p", "-t", pane]);
        assert!(screen.contains(&format!("{tag}-42")), "{pane}: {screen}");
        assert!(
            !screen.contains("printf"),
            "nothing typed into {pane}: {screen}"
        );
    }
    // The person's session, window and pane are where they were.
    assert_eq!(person_client(&tmux, "main").await, before);

    // Each result says how to watch its pane; run the session's for real.
    let expected = |pane: &str| format!("tmux -L {name} attach -r -t {pane}");
    assert_eq!(session["attach"], json!(expected(panes[0].1)));
    assert_eq!(window["attach"], json!(expected(panes[1].1)));
    assert_eq!(split["attach"], json!(expected(panes[2].1)));
    let info = ok(&mut wire, "get_pane_info", json!({ "pane_id": panes[0].1 })).await;
    assert_eq!(info["attach"], session["attach"]);

    let mut watcher = Terminal::open(session["attach"].as_str().unwrap());
    watcher.until("s-42").await;
    let watching = person_client(&tmux, "bg").await;
    assert_eq!(watching[1], "1", "attached read-only: {watching:?}");
    assert_eq!(watching[4], panes[0].1, "{watching:?}");
    // The marks are not on the person's screen (the status line).
    assert!(
        !String::from_utf8_lossy(&watcher.seen).contains("agent"),
        "a maker mark was drawn"
    );
    tmux.cmd(&["detach-client", "-t", &watching[0]]);
    watcher.closed().await;
    tmux.cmd(&["detach-client", "-t", &before[0]]);
    person.closed().await;
}
