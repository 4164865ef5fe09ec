//! Ask before teardown (issue 22, point 6): with `TMUX_MCP_CONFIRM=teardown`
//! the binary, on its stdio, asks a scripted client through MCP
//! elicitation before `kill_window`, `kill_session` and `kill_server`, and
//! kills only on a yes; a decline or a client that cannot be asked leaves
//! everything standing. Each test runs its own private tmux.

use serde_json::{Value, json};

use crate::support::mcp::McpClient;
use crate::support::{BOUND, PrivateTmux};

const TEARDOWN: [&str; 3] = ["kill_server", "kill_session", "kill_window"];

/// The binary against `tmux`, with `TMUX_MCP_CONFIRM=teardown` (and the
/// teardown toolset, off by default, served), initialized
/// as a client that declares `capabilities`.
async fn server(tmux: &PrivateTmux, capabilities: Value) -> (McpClient, tokio::process::Child) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tmux-mcp"));
    command
        .env("LIBTMUX_SOCKET", &tmux.name)
        .env("TMUX_MCP_CONFIRM", "teardown")
        .env("LIBTMUX_TOOLSETS", "inspect,manage,execute,teardown")
        .env_remove("LIBTMUX_TOOLS")
        .env_remove("LIBTMUX_EXCLUDE_TOOLS")
        .env_remove("LIBTMUX_SOCKET_PATH")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stderr(std::process::Stdio::null());
    let (mut wire, child) = McpClient::spawn(command, BOUND);
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "confirm tests", "version": "0"}
    });
    let r = wire.request(0, "initialize", params).await;
    assert!(r.get("result").is_some(), "{r}");
    wire.notify("notifications/initialized", json!({})).await;
    (wire, child)
}

/// A second window in session `main`: its id.
fn new_window(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["new-window", "-d", "-t", "main", "-P", "-F", "#{window_id}"])
        .trim()
        .to_owned()
}

fn windows(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["list-windows", "-a", "-F", "#{window_id}"])
}

/// Starts `kill_window` of `window` as request `id`; the server's next
/// message must be its question, which is returned.
async fn ask_kill_window(wire: &mut McpClient, id: i64, window: &str) -> Value {
    let params = json!({"name": "kill_window", "arguments": {"window_id": window}});
    wire.send_request(id, "tools/call", params).await;
    let question = wire.recv().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(window), "names the window: {message}");
    let schema = &question["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["confirm"]["type"], "boolean",
        "{schema}"
    );
    question
}

async fn result_of(wire: &mut McpClient, id: i64) -> Value {
    let r = wire.recv().await;
    assert_eq!(r["id"], id, "{r}");
    r["result"].clone()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn teardown_tools_carry_the_approval_no_client_mode_skips() {
    let tmux = PrivateTmux::start();
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {}})).await;
    let tools = wire.answer("tools/list", json!({})).await;
    let tools = tools["result"]["tools"].as_array().expect("tools").clone();
    for tool in &tools {
        let marked = tool["_meta"]["anthropic/requiresUserInteraction"] == true;
        let name = tool["name"].as_str().unwrap_or_default();
        assert_eq!(marked, TEARDOWN.contains(&name), "{tool}");
    }
    assert_eq!(tools.iter().filter(|t| t.get("_meta").is_some()).count(), 3);
}

#[tokio::test]
async fn an_accepted_question_kills_the_window() {
    let tmux = PrivateTmux::start();
    let window = new_window(&tmux);
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {"form": {}}})).await;

    // A response nobody waits for is logged, not fatal.
    wire.send(json!({"jsonrpc": "2.0", "id": "nobody", "result": {}}))
        .await;
    wire.assert_quiet().await;

    let question = ask_kill_window(&mut wire, 7, &window).await;
    assert!(
        windows(&tmux).contains(&window),
        "not killed before the answer"
    );
    // The server keeps serving while the person thinks.
    wire.assert_quiet().await;
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    wire.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": answer}))
        .await;
    let result = result_of(&mut wire, 7).await;
    assert!(result.get("isError").is_none(), "{result}");
    assert!(!windows(&tmux).contains(&window), "the window is gone");
}

#[tokio::test]
async fn a_declined_or_unticked_question_leaves_the_window() {
    let tmux = PrivateTmux::start();
    let window = new_window(&tmux);
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {}})).await;
    let answers = [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        json!({"action": "accept", "content": {"confirm": false}}),
    ];
    for (n, answer) in answers.into_iter().enumerate() {
        let id = 10 + n as i64;
        let question = ask_kill_window(&mut wire, id, &window).await;
        wire.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": answer}))
            .await;
        let result = result_of(&mut wire, id).await;
        assert_eq!(result["isError"], true, "{result}");
        assert!(text(&result).contains("declined"), "{result}");
        assert!(
            windows(&tmux).contains(&window),
            "still there after {answer}"
        );
    }
    // A client that answers the question with an error: refused as well.
    let question = ask_kill_window(&mut wire, 20, &window).await;
    let error = json!({"code": -32601, "message": "Method not found"});
    wire.send(json!({"jsonrpc": "2.0", "id": question["id"], "error": error}))
        .await;
    let result = result_of(&mut wire, 20).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("cannot ask"), "{result}");
    assert!(windows(&tmux).contains(&window));
}

#[tokio::test]
async fn a_cancelled_call_withdraws_its_question_and_kills_nothing() {
    let tmux = PrivateTmux::start();
    let window = new_window(&tmux);
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {}})).await;
    let question = ask_kill_window(&mut wire, 30, &window).await;
    wire.notify("notifications/cancelled", json!({"requestId": 30}))
        .await;
    let withdrawn = wire.recv().await;
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], question["id"]);
    // A late yes finds nobody waiting: nothing is killed, nothing is sent.
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    wire.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": answer}))
        .await;
    wire.assert_quiet().await;
    assert!(windows(&tmux).contains(&window));
}

#[tokio::test]
async fn a_client_without_elicitation_is_refused_and_nothing_is_killed() {
    let tmux = PrivateTmux::start();
    let window = new_window(&tmux);
    // Only URL mode: a form cannot be shown either.
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {"url": {}}})).await;
    let calls = [
        ("kill_window", json!({"window_id": window})),
        ("kill_session", json!({"session_name": "main"})),
        ("kill_server", json!({})),
    ];
    for (n, (name, arguments)) in calls.into_iter().enumerate() {
        // The answer is the next message: no question was sent.
        let params = json!({"name": name, "arguments": arguments});
        let r = wire.request(40 + n as i64, "tools/call", params).await;
        let result = &r["result"];
        assert_eq!(result["isError"], true, "{name}: {r}");
        let said = text(result);
        assert!(said.contains("cannot ask"), "{name}: {said}");
        assert!(said.contains("elicitation"), "{name}: {said}");
    }
    assert!(windows(&tmux).contains(&window), "nothing was killed");
    assert!(
        tmux.try_cmd(&["has-session", "-t", "main"])
            .status
            .success()
    );
}

/// kill_pane of a window's last pane is a kill_window (or, for a session's
/// last window, a kill_session): asked the same; a pane with siblings is
/// killed without a question.
#[tokio::test]
async fn killing_a_windows_last_pane_is_asked_too() {
    let tmux = PrivateTmux::start();
    let window = new_window(&tmux);
    let last = tmux
        .cmd(&["display-message", "-p", "-t", &window, "#{pane_id}"])
        .trim()
        .to_owned();
    let sibling = tmux
        .cmd(&[
            "split-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            &window,
        ])
        .trim()
        .to_owned();
    let (mut wire, _child) = server(&tmux, json!({"elicitation": {"form": {}}})).await;
    let params = json!({"name": "kill_pane", "arguments": {"pane_id": sibling}});
    wire.send_request(40, "tools/call", params).await;
    let result = result_of(&mut wire, 40).await;
    assert!(result.get("isError").is_none(), "{result}");

    let params = json!({"name": "kill_pane", "arguments": {"pane_id": last}});
    wire.send_request(41, "tools/call", params).await;
    let question = wire.recv().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&window) && message.contains(&last),
        "{message}"
    );
    let answer = json!({"action": "decline"});
    wire.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": answer}))
        .await;
    let result = result_of(&mut wire, 41).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(windows(&tmux).contains(&window), "the window stays");
}
