//! Resource templates and completion against a private tmux server, through
//! the `Service` methods, compared with tmux's own view; plus the error
//! codes on the wire with the real service.

use std::sync::Arc;
use std::time::Duration;

use crate::support::PrivateTmux;
use crate::support::mcp::McpClient;
use serde_json::{Map, Value, json};
use tmux_mcp::mcp::server::DEFAULT_MAX_QUEUED;
use tmux_mcp::mcp::{CompletionRef, CompletionRequest, Service, ServiceError};

async fn read(service: &impl Service, uri: &str) -> Result<(String, String), ServiceError> {
    let contents = service.read_resource(uri).await?;
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0]["uri"], uri);
    Ok((
        contents[0]["mimeType"].as_str().unwrap().to_owned(),
        contents[0]["text"].as_str().unwrap().to_owned(),
    ))
}

async fn read_json(service: &impl Service, uri: &str) -> Value {
    let (mime, text) = read(service, uri)
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    assert_eq!(mime, "application/json", "{uri}");
    assert!(text.contains("\n  "), "2-space indent: {text}");
    serde_json::from_str(&text).unwrap()
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[tokio::test]
async fn templates_are_the_references() {
    let tmux = PrivateTmux::start();
    let service = tmux.service();
    let templates = service.resource_templates();
    let rows: Vec<(&str, &str, &str, &str)> = templates
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["uriTemplate"].as_str().unwrap(),
                t["title"].as_str().unwrap(),
                t["mimeType"].as_str().unwrap(),
            )
        })
        .collect();
    let json = "application/json";
    assert_eq!(
        rows,
        vec![
            (
                "get_sessions",
                "tmux://sessions{?socket_name}",
                "All Sessions",
                json
            ),
            (
                "get_session",
                "tmux://sessions/{session_name}{?socket_name}",
                "Session Detail",
                json
            ),
            (
                "get_session_windows",
                "tmux://sessions/{session_name}/windows{?socket_name}",
                "Session Windows",
                json
            ),
            (
                "get_window",
                "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}",
                "Window Detail",
                json
            ),
            (
                "get_pane",
                "tmux://panes/{pane_id}{?socket_name}",
                "Pane Detail",
                json
            ),
            (
                "get_pane_content",
                "tmux://panes/{pane_id}/content{?socket_name}",
                "Pane Content",
                "text/plain"
            ),
        ]
    );
    // Besides the templates, the one URI without a variable is listed (so
    // clients that browse resources show something), and it reads.
    let listed = service.resources();
    let uris: Vec<&str> = listed.iter().filter_map(|r| r["uri"].as_str()).collect();
    assert_eq!(uris, ["tmux://sessions"]);
    assert_eq!(listed[0]["mimeType"], json);
    let sessions = read_json(&service, uris[0]).await;
    assert_eq!(sessions[0]["session_name"], "main");
    let features = service.features();
    assert!(features.resources && features.prompts && features.completions);
}

#[tokio::test]
async fn reads_match_tmux() {
    let tmux = PrivateTmux::start();
    tmux.cmd(&["new-window", "-t", "main:", "-n", "second"]);
    tmux.cmd(&["split-window", "-t", "main:1", "env PS1='$ ' sh"]);
    tmux.cmd(&["new-session", "-d", "-s", "other one"]);
    let service = tmux.service();

    let sessions = read_json(&service, "tmux://sessions").await;
    let names: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        lines(&tmux.cmd(&["list-sessions", "-F", "#{session_name}"]))
    );

    let session = read_json(&service, "tmux://sessions/main").await;
    assert_eq!(
        session["session_id"],
        tmux.cmd(&["display-message", "-p", "-t", "main:", "#{session_id}"])
            .trim()
    );
    let windows: Vec<&str> = session["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["window_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        windows,
        lines(&tmux.cmd(&["list-windows", "-t", "main", "-F", "#{window_id}"]))
    );

    let spaced = read_json(&service, "tmux://sessions/other%20one/windows").await;
    assert_eq!(spaced.as_array().unwrap().len(), 1);
    assert_eq!(spaced[0]["session_name"], "other one");

    let window = read_json(&service, "tmux://sessions/main/windows/1").await;
    assert_eq!(window["window_name"], "second");
    let panes: Vec<&str> = window["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pane_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        panes,
        lines(&tmux.cmd(&["list-panes", "-t", "main:1", "-F", "#{pane_id}"]))
    );

    let pane_id = panes[1].to_owned();
    let encoded = pane_id.replace('%', "%25");
    let pane = read_json(&service, &format!("tmux://panes/{encoded}")).await;
    assert_eq!(pane["pane_id"], pane_id.as_str());
    assert_eq!(
        pane["pane_tty"],
        tmux.cmd(&["display-message", "-p", "-t", &pane_id, "#{pane_tty}"])
            .trim()
    );
    assert_eq!(pane["is_caller"], Value::Null);

    tmux.cmd(&[
        "send-keys",
        "-t",
        &pane_id,
        "printf 'res-%s\\n' ok; tmux wait-for -S res-printed",
        "Enter",
    ]);
    tmux.wait_for("res-printed", Duration::from_secs(10)).await;
    let (mime, text) = read(&service, &format!("tmux://panes/{encoded}/content"))
        .await
        .unwrap();
    assert_eq!(mime, "text/plain");
    assert!(text.lines().any(|l| l == "res-ok"), "{text}");
    assert!(!text.ends_with('\n'), "trailing blank lines trimmed");
    // Read after ours: the shell may have printed its prompt in between.
    let theirs = tmux.cmd(&["capture-pane", "-p", "-t", &pane_id]);
    assert!(theirs.starts_with(&text), "{text:?} vs {theirs:?}");
}

#[tokio::test]
async fn socket_name_selects_the_server() {
    let tmux = PrivateTmux::start();
    let other = PrivateTmux::start();
    other.cmd(&["rename-session", "-t", "main", "elsewhere"]);
    let service = tmux.service();
    let sessions = read_json(
        &service,
        &format!("tmux://sessions?socket_name={}", other.name),
    )
    .await;
    assert_eq!(sessions[0]["session_name"], "elsewhere");
    // A server that does not exist has no sessions.
    let (_, text) = read(&service, "tmux://sessions?socket_name=tmuxmcp-test-none")
        .await
        .unwrap();
    assert_eq!(text, "[]");
}

#[tokio::test]
async fn read_errors() {
    let tmux = PrivateTmux::start();
    let service = tmux.service();
    let before = tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"]);
    for (uri, message) in [
        ("tmux://sessions/nope", "Session not found: nope"),
        ("tmux://sessions/nope/windows", "Session not found: nope"),
        (
            "tmux://sessions/main/windows/7",
            "Window not found: index 7",
        ),
        ("tmux://panes/%2599", "Pane not found: %99"),
        ("tmux://panes/%2599/content", "Pane not found: %99"),
        ("tmux://panes/bogus", "Pane not found: bogus"),
    ] {
        assert_eq!(
            read(&service, uri).await,
            Err(ServiceError::Internal(message.into())),
            "{uri}"
        );
    }
    for uri in [
        "tmux://sessions/..",
        "tmux://sessions/%2e%2e/windows",
        "tmux://sessions?socket_name=../../x",
        "tmux://sessions/ma%00in",
        "tmux://windows",
        "tmux://panes/%251/nope",
    ] {
        assert_eq!(
            read(&service, uri).await,
            Err(ServiceError::unknown_resource(uri)),
            "{uri}"
        );
    }
    assert_eq!(tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"]), before);
}

pub(crate) fn completion(
    uri: &str,
    argument: &str,
    value: &str,
    context: Value,
) -> CompletionRequest {
    CompletionRequest {
        reference: CompletionRef::Resource(uri.into()),
        argument: argument.into(),
        value: value.into(),
        context: context.as_object().cloned().unwrap_or_else(Map::new),
    }
}

#[tokio::test]
async fn completion_from_live_tmux() {
    let tmux = PrivateTmux::start();
    tmux.cmd(&["new-session", "-d", "-s", "mainframe"]);
    tmux.cmd(&["new-session", "-d", "-s", "zeta"]);
    tmux.cmd(&["new-window", "-t", "zeta:", "-d"]);
    tmux.cmd(&["new-window", "-t", "zeta:7", "-d"]);
    let service = tmux.service();
    let session_uri = "tmux://sessions/{session_name}{?socket_name}";
    let window_uri = "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}";
    let pane_uri = "tmux://panes/{pane_id}{?socket_name}";

    let values = service
        .complete(completion(session_uri, "session_name", "ma", json!({})))
        .await;
    assert_eq!(values, vec!["main", "mainframe"]);
    // The same templates without their query part, as clients send them.
    let values = service
        .complete(completion(
            "tmux://sessions/{session_name}",
            "session_name",
            "ma",
            json!({}),
        ))
        .await;
    assert_eq!(values, vec!["main", "mainframe"]);
    let values = service
        .complete(completion(
            "tmux://sessions/{session_name}/windows/{window_index}",
            "window_index",
            "",
            json!({ "session_name": "zeta" }),
        ))
        .await;
    assert_eq!(values, vec!["0", "1", "7"]);
    let bare_panes = service
        .complete(completion(
            "tmux://panes/{pane_id}/content",
            "pane_id",
            "%",
            json!({}),
        ))
        .await;
    assert!(
        !bare_panes.is_empty(),
        "pane ids complete without the query part"
    );

    let values = service
        .complete(completion(pane_uri, "pane_id", "", json!({})))
        .await;
    let mut theirs: Vec<String> = lines(&tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"]))
        .into_iter()
        .map(str::to_owned)
        .collect();
    theirs.dedup();
    assert_eq!(values, theirs);

    let values = service
        .complete(completion(
            window_uri,
            "window_index",
            "",
            json!({ "session_name": "zeta" }),
        ))
        .await;
    assert_eq!(values, vec!["0", "1", "7"]);
    let values = service
        .complete(completion(window_uri, "window_index", "", json!({})))
        .await;
    assert_eq!(
        values,
        vec!["0", "1", "7"],
        "every window, without duplicates"
    );

    let other = PrivateTmux::start();
    other.cmd(&["rename-session", "-t", "main", "faraway"]);
    let values = service
        .complete(completion(
            session_uri,
            "session_name",
            "",
            json!({ "socket_name": other.name }),
        ))
        .await;
    assert_eq!(values, vec!["faraway"]);

    for request in [
        completion(session_uri, "socket_name", "", json!({})),
        completion(pane_uri, "session_name", "", json!({})),
        completion("tmux://nope/{session_name}", "session_name", "", json!({})),
        completion(
            "tmux://sessions/{session_name}{?other}",
            "session_name",
            "",
            json!({}),
        ),
        completion(
            "tmux://sessions/{session_name}?",
            "session_name",
            "",
            json!({}),
        ),
        completion(
            session_uri,
            "session_name",
            "",
            json!({ "socket_name": "tmuxmcp-test-none" }),
        ),
        completion(
            session_uri,
            "session_name",
            "",
            json!({ "socket_name": "../bad" }),
        ),
        CompletionRequest {
            reference: CompletionRef::Prompt("run_and_wait".into()),
            argument: "pane_id".into(),
            value: String::new(),
            context: Map::new(),
        },
    ] {
        assert!(
            service.complete(request.clone()).await.is_empty(),
            "{request:?}"
        );
    }
}

/// The real service on the wire: the codes and messages clients see.
#[tokio::test]
async fn wire_errors_with_the_real_service() {
    let tmux = PrivateTmux::start();
    let service = Arc::new(tmux.service());
    let (mut wire, _) = McpClient::serve(
        service,
        1 << 20,
        DEFAULT_MAX_QUEUED,
        Duration::from_secs(10),
    );
    let r = wire
        .request(0, "initialize", json!({ "protocolVersion": "2025-06-18" }))
        .await;
    assert_eq!(
        r["result"]["capabilities"]["resources"],
        json!({ "subscribe": false, "listChanged": false })
    );
    assert_eq!(r["result"]["capabilities"]["completions"], json!({}));

    let r = wire
        .request(1, "resources/read", json!({ "uri": "tmux://sessions/.." }))
        .await;
    assert_eq!(
        r["error"],
        json!({ "code": -32002, "message": "Resource not found: Unknown resource: 'tmux://sessions/..'" })
    );
    let r = wire
        .request(
            2,
            "resources/read",
            json!({ "uri": "tmux://sessions/nope" }),
        )
        .await;
    assert_eq!(
        r["error"],
        json!({ "code": -32603, "message": "Internal error: Session not found: nope" })
    );
    let r = wire
        .request(
            3,
            "resources/read",
            json!({ "uri": "tmux://sessions/main" }),
        )
        .await;
    assert_eq!(
        r["result"]["contents"][0]["mimeType"], "application/json",
        "{r}"
    );
    let r = wire
        .request(4, "prompts/get", json!({ "name": "no_such" }))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = wire
        .request(5, "prompts/get", json!({ "name": "run_and_wait" }))
        .await;
    assert_eq!(
        r["error"],
        json!({ "code": -32602, "message": "Invalid params: Missing required arguments: {'command', 'pane_id'}" })
    );
    let r = wire.request(
        6,
        "completion/complete",
        json!({ "ref": { "type": "ref/resource", "uri": "tmux://sessions/{session_name}{?socket_name}" },
                "argument": { "name": "session_name", "value": "m" } }),
    )
    .await;
    assert_eq!(r["result"], json!({ "completion": { "values": ["main"] } }));
    let r = wire
        .request(
            7,
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "run_and_wait" },
                "argument": { "name": "pane_id", "value": "" } }),
        )
        .await;
    assert_eq!(r["result"], json!({ "completion": { "values": [] } }));
}
