//! On-demand streaming on a real tmux (`tmux::quiet`): a streaming client
//! sends only the output of panes a lease wants; every other pane of its
//! session is paused, new panes too; a command client is sent no output;
//! idle clients detach; the counts an agent reads leave our clients out.
//!
//! "No output arrived" is proved, not slept on: once a capture on the same
//! client shows a pane's text, tmux has already sent (or skipped) the
//! `%output` for it, because a client's stream is in order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tmux_mcp::config::Limits;
use tmux_mcp::tmux::child::LocalTmux;
use tmux_mcp::tmux::connection::{Connection, Observer, Role, Setup};
use tmux_mcp::tmux::control::Event;
use tmux_mcp::tmux::pipe::Transport;
use tmux_mcp::tmux::quiet::Lease;
use tmux_mcp::tmux::version::Features;
use tmux_mcp::tmux::{Command, PaneId, SessionId};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::support::{BOUND, PrivateTmux, finish, ok, shared, start_armed};

/// What a client was sent, per pane.
#[derive(Default)]
pub struct Seen {
    bytes: Mutex<HashMap<PaneId, usize>>,
    /// `%pause` notices per pane.
    paused: Mutex<HashMap<PaneId, usize>>,
    changed: Notify,
}

impl Observer for Seen {
    fn event(&self, _: SessionId, event: &Event) {
        match event {
            Event::Output { pane, data } => {
                *self.bytes.lock().unwrap().entry(*pane).or_default() += data.len();
            }
            Event::Pause(pane) => {
                *self.paused.lock().unwrap().entry(*pane).or_default() += 1;
            }
            _ => {}
        }
        self.changed.notify_waiters();
    }
}

impl Seen {
    pub fn bytes(&self, pane: PaneId) -> usize {
        self.bytes.lock().unwrap().get(&pane).copied().unwrap_or(0)
    }

    pub fn pauses(&self, pane: PaneId) -> usize {
        self.paused.lock().unwrap().get(&pane).copied().unwrap_or(0)
    }

    /// Waits for a `%pause` of `pane` beyond the first `seen` ones.
    pub async fn until_paused(&self, pane: PaneId, seen: usize) {
        let paused = async {
            loop {
                let changed = self.changed.notified();
                if self.pauses(pane) > seen {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(BOUND, paused)
            .await
            .unwrap_or_else(|_| panic!("{pane} was never paused"));
    }
}

pub fn pane(tmux: &PrivateTmux, target: &str) -> PaneId {
    let id = tmux.cmd(&["display-message", "-p", "-t", target, "#{pane_id}"]);
    PaneId::parse(id.trim().as_bytes()).expect("a pane id")
}

/// Splits session `main`'s window, leaving the active pane as it was.
pub fn split(tmux: &PrivateTmux) -> PaneId {
    let id = tmux.cmd(&["split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}"]);
    PaneId::parse(id.trim().as_bytes()).expect("a pane id")
}

/// A private tmux and its features, or `None` (said as a skip) when that
/// release cannot mute panes, which `what` needs.
fn muting_tmux(what: &str) -> Option<(PrivateTmux, Features)> {
    let tmux = PrivateTmux::start();
    let features = Features::of(tmux.version());
    if !features.mute {
        eprintln!("SKIPPED: tmux {} has no {what}", tmux.version());
        return None;
    }
    Some((tmux, features))
}

/// A control client on session `main` of `tmux`, in `role`, with `features`.
async fn client(tmux: &PrivateTmux, role: Role, features: Features) -> (Connection, Arc<Seen>) {
    let transport = LocalTmux {
        tmux_bin: "tmux".into(),
        socket: tmux.socket_path(),
    };
    client_over(&transport, tmux, role, features).await
}

/// [`client`] through `transport` (ssh, in `ssh_live`).
pub async fn client_over(
    transport: &dyn Transport,
    tmux: &PrivateTmux,
    role: Role,
    features: Features,
) -> (Connection, Arc<Seen>) {
    let session = SessionId::parse(
        tmux.cmd(&["display-message", "-p", "-t", "main", "#{session_id}"])
            .trim()
            .as_bytes(),
    )
    .unwrap();
    let pipe = transport
        .open(session, role.attach_flags(features))
        .unwrap();
    let seen = Arc::new(Seen::default());
    let setup = Setup {
        role,
        features,
        idle_detach: None,
        idle: Arc::new(Notify::new()),
        door: None,
    };
    let observer: Arc<dyn Observer> = seen.clone();
    let client = Connection::start(pipe, session, &Limits::default(), observer, setup)
        .await
        .expect("attached");
    (client, seen)
}

/// Types `text` into `target` and waits until the pane's screen, captured
/// on `client`, shows `marker`: by then tmux has sent `client` every
/// `%output` it will ever send for it.
pub async fn print_and_settle(
    tmux: &PrivateTmux,
    client: &Connection,
    target: PaneId,
    text: &str,
    marker: &str,
) {
    tmux.cmd(&["send-keys", "-t", &target.to_string(), text, "Enter"]);
    settle(client, target, marker).await;
}

/// Waits until `target`'s screen, captured on `client`, has a line that is
/// `marker` (or starts with it, for a prompt).
async fn settle(client: &Connection, target: PaneId, marker: &str) {
    let last = Mutex::new(Vec::new());
    let settled = async {
        loop {
            let capture = Command::new("capture-pane").flag("-p").target(target);
            let reply = client.run(&capture).await.expect("capture");
            // A prompt may be drawn after typed-ahead output, on its line.
            let hit = |l: &Vec<u8>| {
                let l = l.strip_prefix(b"$ ").unwrap_or(l);
                l == marker.as_bytes() || (marker == "$" && l.starts_with(b"$"))
            };
            if reply.lines.iter().any(hit) {
                return;
            }
            *last.lock().unwrap() = reply.lines;
            // Not printed yet: the next check follows tmux's own reply, not
            // a clock.
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(BOUND, settled)
        .await
        .unwrap_or_else(|_| {
            let screen: Vec<String> = last
                .lock()
                .unwrap()
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            panic!("{marker} never showed in {target}: {screen:?}")
        });
}

#[tokio::test]
async fn only_leased_panes_are_streamed_and_new_panes_are_paused() {
    let Some((tmux, features)) = muting_tmux("paused panes") else {
        return;
    };
    let watched = pane(&tmux, "main");
    let other = split(&tmux);
    let (client, seen) = client(&tmux, Role::Streaming, features).await;
    let lease = only_the_leased_pane_streams(&tmux, &client, &seen, watched, other).await;

    // A pane created later is paused as soon as it appears.
    let late = split(&tmux);
    seen.until_paused(late, 0).await;
    assert_muted(&tmux, &client, &seen, late, "echo la''te", "late").await;

    // Once the lease goes, the pane is paused too.
    let pauses = seen.pauses(watched);
    drop(lease);
    seen.until_paused(watched, pauses).await;
    assert_muted(&tmux, &client, &seen, watched, "echo ag''ain", "again").await;
    client.leave().await;
}

/// Leases `watched` on `client` and shows that `other`, of the same
/// session, is paused and sends nothing while `watched` is streamed.
pub async fn only_the_leased_pane_streams(
    tmux: &PrivateTmux,
    client: &Connection,
    seen: &Seen,
    watched: PaneId,
    other: PaneId,
) -> Lease {
    let lease = client.stream(watched);
    seen.until_paused(other, 0).await;
    assert_muted(tmux, client, seen, other, "echo un''watched", "unwatched").await;
    let before = seen.bytes(watched);
    print_and_settle(tmux, client, watched, "echo wat''ched", "watched").await;
    assert!(
        seen.bytes(watched) > before,
        "the leased pane's output was not sent"
    );
    lease
}

/// `pane` prints `marker`; nothing of it reaches `client`. What it printed
/// before its pause (a late prompt) may have been sent.
async fn assert_muted(
    tmux: &PrivateTmux,
    client: &Connection,
    seen: &Seen,
    pane: PaneId,
    text: &str,
    marker: &str,
) {
    let before = seen.bytes(pane);
    print_and_settle(tmux, client, pane, text, marker).await;
    assert_eq!(seen.bytes(pane), before, "a paused pane's output was sent");
}

#[tokio::test]
async fn without_muting_every_pane_is_streamed() {
    // The other side of the gate: a release that cannot mute streams all.
    let tmux = PrivateTmux::start();
    let features = Features {
        mute: false,
        ..Features::of(tmux.version())
    };
    let other = split(&tmux);
    let (client, seen) = client(&tmux, Role::Streaming, features).await;
    print_and_settle(&tmux, &client, other, "echo un''watched", "unwatched").await;
    assert!(seen.bytes(other) > 0);
    client.leave().await;
}

#[tokio::test]
async fn the_command_client_is_sent_no_output() {
    let Some((tmux, features)) = muting_tmux("no-output clients") else {
        return;
    };
    let first = pane(&tmux, "main");
    let (client, seen) = client(&tmux, Role::Commands, features).await;
    print_and_settle(&tmux, &client, first, "seq 1 2000 | tail -n 1", "2000").await;
    assert_eq!(seen.bytes(first), 0);
    client.leave().await;
}

#[tokio::test]
async fn pausing_a_pane_that_floods_does_not_crash_tmux() {
    // tmux before 3.7 crashed when a pane with output queued was turned
    // `off`; `pause` discards the queue. Flip one flooding pane many times.
    let Some((tmux, features)) = muting_tmux("paused panes") else {
        return;
    };
    let flood = pane(&tmux, "main");
    let (client, _seen) = client(&tmux, Role::Streaming, features).await;
    tmux.cmd(&[
        "send-keys",
        "-t",
        &flood.to_string(),
        "yes flood-flood-flood",
        "Enter",
    ]);
    for _ in 0..50 {
        let lease = client.stream(flood);
        let probe = Command::new("display-message").flag("-p").arg("#{pid}");
        client.run(&probe).await.expect("tmux still answers");
        drop(lease);
        client.run(&probe).await.expect("tmux still answers");
    }
    tmux.cmd(&["send-keys", "-t", &flood.to_string(), "C-c", ""]);
    assert!(
        tmux.try_cmd(&["has-session", "-t", "main"])
            .status
            .success()
    );
    client.leave().await;
}

/// Our clients of `tmux`, as `tmux list-clients` shows them.
/// Waits until no client is attached, woken by the `client-detached` hook
/// ringing channel `left` (set by the caller). tmux keeps one ring made
/// with nobody waiting, and a second one then erases it, so the count is
/// checked again at least every second.
async fn until_our_clients_left(tmux: &PrivateTmux) {
    let started = std::time::Instant::now();
    while clients(tmux) > 0 {
        assert!(started.elapsed() < BOUND, "our clients stayed attached");
        tmux.signalled("left", std::time::Duration::from_secs(1))
            .await;
    }
}

fn clients(tmux: &PrivateTmux) -> usize {
    tmux.cmd(&["list-clients", "-F", "#{client_name}"])
        .lines()
        .count()
}

#[tokio::test]
async fn idle_clients_detach_and_attached_counts_leave_ours_out() {
    let tmux = PrivateTmux::start();
    // Every client leaving rings a channel: waited on, never slept on.
    tmux.cmd(&["set-hook", "-g", "client-detached", "wait-for -S left"]);
    let svc = shared(tmux.service_with(&[("TMUX_MCP_IDLE_DETACH_SECONDS", "0.5")]));
    let first = tmux.first_pane();
    // A wait attaches both our clients to `main`...
    let wait = start_armed(
        &svc,
        "wait_for_text",
        json!({"pane_id": first, "patterns": ["ready-now"], "timeout": 10}),
        CancellationToken::new(),
    )
    .await;
    assert!(clients(&tmux) >= 1);
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions[0]["session_attached"], "0", "{sessions}");
    tmux.cmd(&["send-keys", "-t", &first, "echo ready-''now", "Enter"]);
    assert_eq!(finish(wait).await["found"], true);
    // ...and once nothing is watched, both leave on their own.
    until_our_clients_left(&tmux).await;
    // The next call attaches again.
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions[0]["session_attached"], "0");
}

#[tokio::test]
async fn a_wait_beyond_the_streaming_bound_arms_at_once_and_answers_when_a_slot_frees() {
    let tmux = PrivateTmux::start();
    tmux.cmd(&["new-session", "-d", "-s", "other"]);
    let svc = shared(tmux.service_with(&[("TMUX_MCP_STREAMING_CLIENTS", "1")]));
    let first = tmux.first_pane();
    let second = tmux
        .cmd(&["display-message", "-p", "-t", "other", "#{pane_id}"])
        .trim()
        .to_owned();
    let wait =
        |pane: &str, pattern: &str| json!({"pane_id": pane, "patterns": [pattern], "timeout": 20});
    let holder = start_armed(
        &svc,
        "wait_for_text",
        wait(&first, "first-done"),
        CancellationToken::new(),
    )
    .await;
    // Every slot is busy: this wait arms anyway, unstreamed.
    let deferred = start_armed(
        &svc,
        "wait_for_text",
        wait(&second, "second-done"),
        CancellationToken::new(),
    )
    .await;
    tmux.cmd(&["send-keys", "-t", &second, "echo second-''done", "Enter"]);
    tmux.cmd(&["send-keys", "-t", &first, "echo first-''done", "Enter"]);
    assert_eq!(finish(holder).await["found"], true);
    // The slot freed: the deferred wait streams, and what its pane printed
    // meanwhile is on the screen, new since it armed.
    let result = finish(deferred).await;
    assert_eq!(result["found"], true, "{result}");
    assert_eq!(result["matched_at_entry"], false);
}

#[tokio::test]
async fn a_wait_on_a_flooding_pane_finds_what_follows_the_flood() {
    // The flood is paused and resumed (gaps); the marker after it is found
    // on the screen, and not at entry.
    let tmux = PrivateTmux::start();
    let svc = shared(tmux.service());
    let first = tmux.first_pane();
    let args =
        json!({"pane_id": first, "patterns": ["flood-over-\\d+"], "regex": true, "timeout": 20});
    let wait = start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await;
    let flood = "seq 1 400000; echo flood-over-$((6*7))";
    tmux.cmd(&["send-keys", "-t", &first, flood, "Enter"]);
    let result = finish(wait).await;
    assert_eq!(result["found"], true, "{result}");
    assert_eq!(result["matched_lines"], json!(["flood-over-42"]));
}

/// Waits on many sessions through a few streaming slots: idle clients are
/// let go to make room while others attach, which crashed tmux before 3.7
/// until our attaches and detaches took turns (`tmux::door`).
#[tokio::test]
async fn many_sessions_rotate_through_few_streaming_slots_and_tmux_lives() {
    const SESSIONS: usize = 40;
    let tmux = PrivateTmux::start();
    tmux.cmd(&["set-hook", "-g", "client-detached", "wait-for -S left"]);
    let panes: Vec<String> = (0..SESSIONS)
        .map(|i| {
            let name = format!("s{i}");
            tmux.cmd(&["new-session", "-d", "-s", &name, "-P", "-F", "#{pane_id}"])
                .trim()
                .to_owned()
        })
        .collect();
    let svc = shared(tmux.service_with(&[
        ("TMUX_MCP_STREAMING_CLIENTS", "4"),
        ("TMUX_MCP_IDLE_DETACH_SECONDS", "0.2"),
    ]));
    let mut waits = Vec::new();
    for (i, pane) in panes.iter().enumerate() {
        let args = json!({"pane_id": pane, "patterns": [format!("mark-{i}x")], "timeout": 60});
        waits.push(start_armed(&svc, "wait_for_text", args, CancellationToken::new()).await);
    }
    for (i, pane) in panes.iter().enumerate() {
        tmux.cmd(&[
            "send-keys",
            "-t",
            pane,
            &format!("echo mark-{i}''x"),
            "Enter",
        ]);
    }
    for (i, wait) in waits.into_iter().enumerate() {
        let result = finish(wait).await;
        assert_eq!(result["found"], true, "session s{i}: {result}");
    }
    // The server lived through every rotation, and our clients all leave.
    until_our_clients_left(&tmux).await;
    assert_eq!(
        tmux.cmd(&["list-sessions", "-F", "x"]).lines().count(),
        SESSIONS + 1
    );
}

/// A lease's `unpaused` resolves once tmux has run the pane's `continue`,
/// so output that another client makes the pane print right after (a
/// `run_command`'s `send-keys` goes through the command client) is all
/// sent. Here the streaming client's queue in tmux is held up by a
/// `run-shell` (a busy machine did the same to our writer): before, the
/// `continue` ran after the output, which was lost, and `run_command`
/// timed out waiting for its end marker.
#[tokio::test]
async fn a_lease_is_unpaused_before_another_client_makes_the_pane_print() {
    let tmux = PrivateTmux::start();
    let features = Features::of(tmux.version());
    let (client, seen) = client(&tmux, Role::Streaming, features).await;
    let pane = PaneId::parse(tmux.first_pane().as_bytes()).unwrap();
    for round in 0..3 {
        let before = seen.bytes(pane);
        // Queued (polled once) ahead of the lease's `continue`.
        let busy = Command::new("run-shell").arg("sleep 0.2");
        let held_up = client.run(&busy);
        tokio::pin!(held_up);
        tokio::select! {
            biased;
            _ = &mut held_up => panic!("run-shell answered at once"),
            _ = std::future::ready(()) => {}
        }
        let mut lease = client.stream(pane);
        lease.unpaused().await.expect("unpaused");
        let marker = format!("round-{round}-done");
        // Quoted apart so the echo of the typed line is not the marker.
        let text = format!("echo round-{round}''-done");
        print_and_settle(&tmux, &client, pane, &text, &marker).await;
        held_up.await.expect("run-shell");
        let got = seen.bytes(pane) - before;
        assert!(
            got >= text.len() + marker.len(),
            "round {round}: {got} bytes streamed, fewer than the echo and the output"
        );
        drop(lease);
    }
}
