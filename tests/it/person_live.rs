//! Sharing tmux with a person (issue 22, points 2 and 3), on a private
//! tmux with the person's client attached through a pseudo-terminal: the
//! agent does not type into a password prompt, the person is told and
//! types it, and nothing of it reaches anything the server writes; a
//! person typing in the pane's window has the floor.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::mcp::McpClient;
use crate::support::pty::{PtyClient, type_on_schedule};
use crate::support::{BOUND, PrivateTmux, err, finish, ok, shared, start_armed};
use tmux_mcp::tmux::version::Features;
use tokio_util::sync::CancellationToken;

const PASSWORD_PROGRAM: &str =
    "bash --norc -c 'read -r -s -p Password: x; echo; echo \"len ${#x}\"'";

/// Every byte written on one of the server's outputs.
type Kept = Arc<Mutex<Vec<u8>>>;

/// The binary on its stdio against `tmux`; every byte it writes on stdout
/// and stderr is kept in the two buffers.
fn spawn_server(tmux: &PrivateTmux) -> (McpClient, tokio::process::Child, Kept, Kept) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tmux-mcp"));
    command
        .env("LIBTMUX_SOCKET", &tmux.name)
        .env_remove("LIBTMUX_SOCKET_PATH")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env_remove("FASTMCP_LOG_LEVEL")
        .env_remove("TMUX_MCP_SECRET_INPUT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn the server");
    let (stdout_kept, stderr_kept) = (
        Arc::new(Mutex::new(Vec::new())),
        Arc::new(Mutex::new(Vec::new())),
    );
    // stdout is copied into the client's pipe as it is kept.
    let (mut to_client, from_server) = tokio::io::duplex(1 << 16);
    let mut stdout = child.stdout.take().expect("stdout");
    let kept = stdout_kept.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = stdout.read(&mut buf).await {
            kept.lock().unwrap().extend_from_slice(&buf[..n]);
            if to_client.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let kept = stderr_kept.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = stderr.read(&mut buf).await {
            kept.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let input = child.stdin.take().expect("stdin");
    let client = McpClient::new(input, from_server, BOUND);
    (client, child, stdout_kept, stderr_kept)
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "should have failed: {result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn a_password_prompt_is_left_to_the_person_who_is_told_and_nothing_of_it_leaks() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let person = PtyClient::attach(&tmux, "main").await;
    let (mut wire, mut child, stdout, stderr) = spawn_server(&tmux);
    wire.initialize("2025-06-18").await;
    let drawn_before = person.drawn_len();

    tmux.cmd(&["send-keys", "-t", &pane, PASSWORD_PROGRAM, "Enter"]);
    let state = wire
        .call(
            "wait_for_state",
            json!({"pane_id": pane, "states": ["secret"], "timeout": 10}),
        )
        .await;
    assert_eq!(state["structuredContent"]["state"], "secret", "{state}");

    // Every input tool is refused, with what the agent needs to go on.
    let refused = error_text(
        &wire
            .call("send_keys", json!({"pane_id": pane, "keys": "guess"}))
            .await,
    );
    for needed in [
        pane.as_str(),
        "password",
        "attach -t",
        "wait_for_state",
        "'prompt', 'running'",
    ] {
        assert!(
            refused.contains(needed),
            "{needed:?} missing from {refused}"
        );
    }
    error_text(
        &wire
            .call("paste_text", json!({"pane_id": pane, "text": "guess"}))
            .await,
    );
    let buffer = wire.call("load_buffer", json!({"content": "guess"})).await;
    let name = buffer["structuredContent"]["buffer_name"]
        .as_str()
        .expect("a buffer")
        .to_owned();
    error_text(
        &wire
            .call(
                "paste_buffer",
                json!({"pane_id": pane, "buffer_name": name}),
            )
            .await,
    );
    let batch = wire
        .call(
            "send_keys_batch",
            json!({"operations": [{"pane_id": pane, "keys": "guess"}]}),
        )
        .await;
    let row = &batch["structuredContent"]["results"][0];
    assert_eq!(row["success"], false, "{batch}");
    assert!(
        row["error"]
            .as_str()
            .unwrap_or_default()
            .contains("password"),
        "{batch}"
    );

    // The person was told, on their own client: a message where tmux can
    // show one on a given client, else the pane's bell.
    if Features::of(tmux.version()).message_to_client {
        person
            .until_drawn(|s| PtyClient::shows(s, "asks for a password"))
            .await;
    } else {
        person
            .until_drawn(|s| s[drawn_before..].contains(&0x07))
            .await;
    }

    // The agent waits for the person, who types the password.
    const SECRET: &str = "Tr0ub4dor-and-3";
    wire.send_request(
        900,
        "tools/call",
        json!({"name": "wait_for_state", "arguments": {"pane_id": pane, "states": ["prompt", "running"], "timeout": 10}}),
    )
    .await;
    person.type_bytes(format!("{SECRET}\r").as_bytes());
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 900, "{answer}");
    // The program may still run at the wait's look; then it ends.
    let state = &answer["result"]["structuredContent"]["state"];
    assert!(state == "prompt" || state == "running", "{answer}");
    let back = json!({"pane_id": pane, "states": ["prompt"], "timeout": 10});
    let back = wire.call("wait_for_state", back).await;
    assert_eq!(back["structuredContent"]["state"], "prompt", "{back}");

    // The program got it (it printed its length once the shell was back);
    // the agent reads that, and nothing of the secret.
    let capture = wire.call("capture_pane", json!({"pane_id": pane})).await;
    assert!(capture.to_string().contains("len 15"), "{capture}");
    wire.call("snapshot_pane", json!({"pane_id": pane})).await;
    wire.call("search_panes", json!({"pattern": "Tr0ub"})).await;
    drop(wire);
    tokio::time::timeout(BOUND, child.wait())
        .await
        .expect("the server ends")
        .expect("wait");
    // Its writers finish with it.
    let (out, errs) = (
        stdout.lock().unwrap().clone(),
        stderr.lock().unwrap().clone(),
    );
    assert!(contains(&out, "len 15"), "the pane was read");
    assert!(contains(&errs, "send_keys"), "the audit lines were written");
    for (what, bytes) in [("stdout", &out), ("stderr", &errs)] {
        assert!(
            !contains(bytes, SECRET),
            "the secret is in the server's {what}"
        );
        assert!(
            !contains(bytes, "r0ub4dor"),
            "part of the secret is in the server's {what}"
        );
    }
}

#[tokio::test]
async fn a_password_prompt_nobody_looks_at_rings_its_bell_and_allow_lifts_the_refusal() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let log = tempfile_path(&tmux, "bell");
    tmux.cmd(&[
        "pipe-pane",
        "-O",
        "-t",
        &pane,
        &format!("cat > {}", log.display()),
    ]);
    tmux.cmd(&["send-keys", "-t", &pane, PASSWORD_PROGRAM, "Enter"]);
    let svc = shared(tmux.service());
    let state = ok(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["secret"], "timeout": 10}),
    )
    .await;
    assert_eq!(state["state"], "secret");
    let refused = err(&svc, "send_keys", json!({"pane_id": pane, "keys": "guess"})).await;
    assert!(refused.contains("password"), "{refused}");
    // A lone key that gives up on the prompt is not a secret: it goes.
    // (Not sent here: the prompt stays for the next call.)
    let started = Instant::now();
    while !std::fs::read(&log).unwrap_or_default().contains(&7) {
        assert!(started.elapsed() < BOUND, "no bell in the pane's output");
        // The pipe's file has no event to wait on: re-read it.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let allowed = shared(tmux.service_with(&[("TMUX_MCP_SECRET_INPUT", "allow")]));
    let printed = json!({"pane_id": pane, "patterns": ["len 9"], "timeout": 10});
    let printed = start_armed(&allowed, "wait_for_text", printed, CancellationToken::new()).await;
    ok(
        &allowed,
        "send_keys",
        json!({"pane_id": pane, "keys": "test-pass"}),
    )
    .await;
    assert_eq!(finish(printed).await["found"], true);
    let _ = std::fs::remove_file(&log);
}

fn tempfile_path(tmux: &PrivateTmux, what: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{}-{what}", tmux.name))
}

#[tokio::test]
async fn a_key_that_gives_up_reaches_a_password_prompt() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    tmux.cmd(&["send-keys", "-t", &pane, PASSWORD_PROGRAM, "Enter"]);
    let svc = shared(tmux.service());
    ok(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["secret"], "timeout": 10}),
    )
    .await;
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "C-c", "enter": false}),
    )
    .await;
    let state = ok(
        &svc,
        "wait_for_state",
        json!({"pane_id": pane, "states": ["prompt"], "timeout": 10}),
    )
    .await;
    assert_eq!(state["state"], "prompt");
}

/// A wait_for_text for `text` in `pane`, armed.
async fn armed(
    svc: &tmux_mcp::tools::TmuxService,
    pane: &str,
    text: &str,
) -> tokio::task::JoinHandle<tmux_mcp::mcp::CallToolResult> {
    let args = json!({"pane_id": pane, "patterns": [text], "timeout": 15});
    start_armed(svc, "wait_for_text", args, CancellationToken::new()).await
}

/// The lines of the pane's screen.
fn screen(tmux: &PrivateTmux, pane: &str) -> Vec<String> {
    tmux.cmd(&["capture-pane", "-p", "-t", pane])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_person_typing_in_the_window_has_the_floor_and_their_line_stays_whole() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let person = Arc::new(PtyClient::attach(&tmux, "main").await);
    let svc = shared(tmux.service());
    // The person types a line, a key every 100 ms.
    let started_typing = armed(&svc, &pane, "echo PE").await;
    let typing = type_on_schedule(&person, "echo PERSON-LINE\r", Duration::from_millis(100));
    finish(started_typing).await;
    let shown = json!({"pane_id": pane, "patterns": ["^AGENT-LINE"], "regex": true, "timeout": 15});
    let agent_output = start_armed(&svc, "wait_for_text", shown, CancellationToken::new()).await;
    let started = Instant::now();
    let sent = ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo AGENT-LINE"}),
    )
    .await;
    let waited = started.elapsed();
    typing.join().expect("the person typed");
    let sent = sent.as_str().expect("text").to_owned();
    assert!(sent.contains("waited"), "{sent}");
    // It waited for the person's pause: past their last key.
    assert!(waited >= Duration::from_millis(1500), "{waited:?}");
    finish(agent_output).await;
    let lines = screen(&tmux, &pane);
    assert!(
        lines.iter().any(|l| l == "$ echo PERSON-LINE"),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l == "PERSON-LINE"), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.ends_with("echo AGENT-LINE")),
        "{lines:#?}"
    );
}

#[tokio::test]
async fn a_person_who_does_not_pause_keeps_the_floor_and_the_agent_fails_naming_them() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let person = Arc::new(PtyClient::attach(&tmux, "main").await);
    let svc = shared(tmux.service());
    let long = format!("echo {}\r", "x".repeat(75));
    let started_typing = armed(&svc, &pane, "echo xx").await;
    let echoed = json!({"pane_id": pane, "patterns": ["^x{75}$"], "regex": true, "timeout": 15});
    let echoed = start_armed(&svc, "wait_for_text", echoed, CancellationToken::new()).await;
    let typing = type_on_schedule(&person, &long, Duration::from_millis(100));
    finish(started_typing).await;
    let started = Instant::now();
    let refused = err(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "echo AGENT"}),
    )
    .await;
    let waited = started.elapsed();
    assert!(refused.contains("human_active"), "{refused}");
    assert!(
        refused.contains(&person.tty.display().to_string()),
        "{refused}"
    );
    assert!(
        (Duration::from_secs(5)..BOUND).contains(&waited),
        "{waited:?}"
    );
    typing.join().expect("the person typed");
    finish(echoed).await;
    let lines = screen(&tmux, &pane);
    assert!(!lines.iter().any(|l| l.contains("AGENT")), "{lines:#?}");

    // Turned off, the agent types at once.
    let off = shared(tmux.service_with(&[("TMUX_MCP_HUMAN_QUIET_MS", "0")]));
    person.type_bytes(b"# still here");
    let sent = ok(
        &off,
        "send_keys",
        json!({"pane_id": pane, "keys": "C-u", "enter": false}),
    )
    .await;
    assert!(
        !sent.as_str().unwrap_or_default().contains("waited"),
        "{sent}"
    );
}

#[tokio::test]
async fn a_person_typing_in_another_window_does_not_hold_the_agent() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let other = tmux
        .cmd(&["new-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}"])
        .trim()
        .to_owned();
    let person = Arc::new(PtyClient::attach(&tmux, "main").await);
    let svc = shared(tmux.service());
    let started_typing = armed(&svc, &pane, "echo PE").await;
    let typing = type_on_schedule(&person, "echo PERSON\r", Duration::from_millis(100));
    finish(started_typing).await;
    let sent = ok(
        &svc,
        "send_keys",
        json!({"pane_id": other, "keys": "echo AGENT"}),
    )
    .await;
    assert!(
        !sent.as_str().unwrap_or_default().contains("waited"),
        "{sent}"
    );
    typing.join().expect("the person typed");
}

#[tokio::test]
async fn run_command_also_lets_the_person_finish_their_line() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let person = Arc::new(PtyClient::attach(&tmux, "main").await);
    let svc = shared(tmux.service());
    let started_typing = armed(&svc, &pane, "echo PE").await;
    let typing = type_on_schedule(&person, "echo PERSON-LINE\r", Duration::from_millis(100));
    finish(started_typing).await;
    let ran = ok(
        &svc,
        "run_command",
        json!({"pane_id": pane, "command": "echo AGENT-LINE", "timeout": 15}),
    )
    .await;
    typing.join().expect("the person typed");
    assert_eq!(ran["exit_status"], 0, "{ran}");
    let lines = screen(&tmux, &pane);
    assert!(
        lines.iter().any(|l| l == "$ echo PERSON-LINE"),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l == "PERSON-LINE"), "{lines:#?}");
}
