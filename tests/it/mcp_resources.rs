//! Resources, prompts and completion on the wire, with a fake service:
//! capabilities, list methods, error codes and messages, and that slow reads
//! run in their own task (cancellable, never blocking `ping`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tmux_mcp::mcp::server::DEFAULT_MAX_QUEUED;
use tmux_mcp::mcp::{
    BoxFuture, CallContext, CallToolResult, CompletionRef, CompletionRequest, Implementation,
    McpFeatures, Service, ServiceError,
};
use tokio::sync::{Notify, mpsc};
use tokio::time::timeout;

use crate::support::mcp::{McpClient, error_code, wraps_wire_client};

const WAIT: Duration = Duration::from_secs(5);

struct Fake {
    features: McpFeatures,
    /// Released by the test to let `fake://slow` finish.
    release: Arc<Notify>,
    notes: mpsc::UnboundedSender<String>,
}

impl Service for Fake {
    fn implementation(&self) -> Implementation {
        Implementation {
            name: "fake".into(),
            title: None,
            version: "1".into(),
            website_url: None,
        }
    }

    fn instructions(&self) -> String {
        String::new()
    }

    fn tools(&self) -> Vec<Value> {
        Vec::new()
    }

    fn call_tool(
        &self,
        _: &str,
        _: Value,
        _: CallContext,
    ) -> Option<BoxFuture<'static, CallToolResult>> {
        None
    }

    fn features(&self) -> McpFeatures {
        self.features
    }

    fn resource_templates(&self) -> Vec<Value> {
        vec![json!({ "uriTemplate": "fake://{x}", "name": "x" })]
    }

    fn read_resource(&self, uri: &str) -> BoxFuture<'static, Result<Vec<Value>, ServiceError>> {
        let uri = uri.to_owned();
        let release = self.release.clone();
        let notes = self.notes.clone();
        Box::pin(async move {
            match uri.as_str() {
                "fake://ok" => Ok(vec![json!({ "uri": uri, "text": "hello" })]),
                "fake://boom" => Err(ServiceError::Internal("boom".into())),
                "fake://slow" => {
                    let _ = notes.send("slow started".into());
                    release.notified().await;
                    Ok(vec![json!({ "uri": uri, "text": "late" })])
                }
                _ => Err(ServiceError::unknown_resource(&uri)),
            }
        })
    }

    fn prompts(&self) -> Vec<Value> {
        vec![json!({ "name": "greet", "arguments": [{ "name": "who", "required": true }] })]
    }

    fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ServiceError> {
        if name != "greet" {
            return Err(ServiceError::unknown_prompt(name));
        }
        let who = arguments
            .get("who")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ServiceError::InvalidParams("Missing required arguments: {'who'}".into())
            })?;
        Ok(
            json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": format!("hi {who}") } }] }),
        )
    }

    fn complete(&self, request: CompletionRequest) -> BoxFuture<'static, Vec<String>> {
        Box::pin(async move {
            if request.reference != CompletionRef::Resource("fake://{x}".into()) {
                return Vec::new();
            }
            let n = if request.argument == "many" { 150 } else { 3 };
            let suffix = request
                .context
                .get("suffix")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            (0..n)
                .map(|i| format!("v{i}{suffix}"))
                .filter(|v| v.starts_with(&request.value))
                .collect()
        })
    }
}

/// The shared wire client, with the fake's release and notes.
struct Client {
    wire: McpClient,
    release: Arc<Notify>,
    notes: mpsc::UnboundedReceiver<String>,
}

wraps_wire_client!(Client);

impl Client {
    fn start(features: McpFeatures) -> Client {
        let release = Arc::new(Notify::new());
        let (tx, notes) = mpsc::unbounded_channel();
        let service = Arc::new(Fake {
            features,
            release: release.clone(),
            notes: tx,
        });
        let (wire, _) = McpClient::serve(service, 1 << 16, DEFAULT_MAX_QUEUED, WAIT);
        Client {
            wire,
            release,
            notes,
        }
    }

    async fn started(features: McpFeatures) -> (Client, Value) {
        let mut client = Client::start(features);
        let r = client
            .request(0, "initialize", json!({ "protocolVersion": "2025-11-25" }))
            .await;
        (client, r["result"].clone())
    }

    async fn error(&mut self, method: &str, params: Value) -> (i64, String) {
        let r = self.request("e", method, params).await;
        (
            error_code(&r),
            r["error"]["message"].as_str().unwrap().to_owned(),
        )
    }
}

const ALL: McpFeatures = McpFeatures {
    resources: true,
    prompts: true,
    completions: true,
};

#[tokio::test]
async fn served_features_are_declared_and_others_are_not() {
    let (_, result) = Client::started(ALL).await;
    assert_eq!(
        result["capabilities"],
        json!({
            "tools": { "listChanged": false },
            "resources": { "subscribe": false, "listChanged": false },
            "prompts": { "listChanged": false },
            "completions": {},
            "logging": {},
        })
    );

    let (mut client, result) = Client::started(McpFeatures::default()).await;
    assert_eq!(
        result["capabilities"],
        json!({ "tools": { "listChanged": false }, "logging": {} })
    );
    for method in [
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    ] {
        let (code, message) = client.error(method, json!({})).await;
        assert_eq!(code, -32601, "{method}: {message}");
    }
}

#[tokio::test]
async fn feature_methods_wait_for_initialize() {
    let mut client = Client::start(ALL);
    for method in ["resources/templates/list", "resources/read", "prompts/get"] {
        let (code, _) = client.error(method, json!({})).await;
        assert_eq!(code, -32600, "{method}");
    }
}

#[tokio::test]
async fn lists_are_one_page_and_refuse_cursors() {
    let (mut client, _) = Client::started(ALL).await;
    let r = client.request(1, "resources/list", json!({})).await;
    assert_eq!(r["result"], json!({ "resources": [] }));
    let r = client
        .request(2, "resources/templates/list", json!({}))
        .await;
    assert_eq!(r["result"]["resourceTemplates"][0]["name"], "x");
    assert!(r["result"].get("nextCursor").is_none());
    let r = client.request(3, "prompts/list", json!({})).await;
    assert_eq!(r["result"]["prompts"][0]["name"], "greet");
    for method in [
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/list",
    ] {
        for cursor in [json!("abc"), json!(7)] {
            let (code, message) = client.error(method, json!({ "cursor": cursor })).await;
            assert_eq!(code, -32602, "{method}");
            assert!(message.contains("cursor"), "{message}");
        }
    }
}

#[tokio::test]
async fn read_errors_map_to_their_codes() {
    let (mut client, _) = Client::started(ALL).await;
    let r = client
        .request(1, "resources/read", json!({ "uri": "fake://ok" }))
        .await;
    assert_eq!(
        r["result"],
        json!({ "contents": [{ "uri": "fake://ok", "text": "hello" }] })
    );
    assert_eq!(
        client
            .error("resources/read", json!({ "uri": "fake://nope" }))
            .await,
        (
            -32002,
            "Resource not found: Unknown resource: 'fake://nope'".into()
        )
    );
    assert_eq!(
        client
            .error("resources/read", json!({ "uri": "fake://boom" }))
            .await,
        (-32603, "Internal error: boom".into())
    );
    let (code, _) = client.error("resources/read", json!({})).await;
    assert_eq!(code, -32602, "uri is required");
    let (code, _) = client.error("resources/read", json!({ "uri": 5 })).await;
    assert_eq!(code, -32602);
}

#[tokio::test]
async fn a_2026_read_answers_not_found_as_invalid_params_and_is_cacheable() {
    let mut client = Client::start(ALL);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let r = client
        .request(
            1,
            "resources/read",
            json!({ "uri": "fake://ok", "_meta": meta }),
        )
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "hello");
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["ttlMs"], 0);
    let (code, message) = client
        .error(
            "resources/read",
            json!({ "uri": "fake://nope", "_meta": meta }),
        )
        .await;
    assert_eq!(code, -32602, "2026-07-28 has no -32002: {message}");
    let r = client
        .request(
            2,
            "prompts/get",
            json!({ "name": "greet", "arguments": { "who": "x" }, "_meta": meta }),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(r["result"].get("ttlMs").is_none(), "{r}");
}

#[tokio::test]
async fn a_slow_read_runs_apart_and_can_be_cancelled() {
    let (mut client, _) = Client::started(ALL).await;
    client
        .send_request(
            json!("slow"),
            "resources/read",
            json!({ "uri": "fake://slow" }),
        )
        .await;
    assert_eq!(
        timeout(WAIT, client.notes.recv()).await.unwrap().unwrap(),
        "slow started"
    );
    // Not blocked behind the read.
    let r = client.request(1, "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    // Cancelled: its answer never comes, even once it finishes.
    client
        .notify("notifications/cancelled", json!({ "requestId": "slow" }))
        .await;
    client.release.notify_one();
    let r = client.request(2, "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    // A second slow read answers normally when released.
    client
        .send_request(
            json!("slow2"),
            "resources/read",
            json!({ "uri": "fake://slow" }),
        )
        .await;
    timeout(WAIT, client.notes.recv()).await.unwrap().unwrap();
    client.release.notify_one();
    let r = client.recv().await;
    assert_eq!(r["id"], "slow2", "{r}");
    assert_eq!(r["result"]["contents"][0]["text"], "late");
}

#[tokio::test]
async fn prompt_errors_are_invalid_params() {
    let (mut client, _) = Client::started(ALL).await;
    let r = client
        .request(
            1,
            "prompts/get",
            json!({ "name": "greet", "arguments": { "who": "you" } }),
        )
        .await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "hi you");
    assert_eq!(
        client.error("prompts/get", json!({ "name": "nope" })).await,
        (-32602, "Invalid params: Unknown prompt: 'nope'".into())
    );
    assert_eq!(
        client
            .error("prompts/get", json!({ "name": "greet" }))
            .await,
        (
            -32602,
            "Invalid params: Missing required arguments: {'who'}".into()
        )
    );
    let (code, _) = client.error("prompts/get", json!({})).await;
    assert_eq!(code, -32602, "name is required");
    let (code, _) = client
        .error("prompts/get", json!({ "name": "greet", "arguments": "x" }))
        .await;
    assert_eq!(code, -32602, "arguments must be an object");
}

#[tokio::test]
async fn completion_caps_values_and_never_fails_on_unknown_refs() {
    let (mut client, _) = Client::started(ALL).await;
    let resource = json!({ "type": "ref/resource", "uri": "fake://{x}" });
    let r = client
        .request(
            1,
            "completion/complete",
            json!({ "ref": resource, "argument": { "name": "x", "value": "v1" },
                    "context": { "arguments": { "suffix": "!" } } }),
        )
        .await;
    assert_eq!(r["result"], json!({ "completion": { "values": ["v1!"] } }));

    let r = client
        .request(
            2,
            "completion/complete",
            json!({ "ref": resource, "argument": { "name": "many", "value": "" } }),
        )
        .await;
    let completion = &r["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["total"], 150);
    assert_eq!(completion["hasMore"], true);

    for reference in [
        json!({ "type": "ref/prompt", "name": "greet" }),
        json!({ "type": "ref/resource", "uri": "other://{x}" }),
        json!({ "type": "ref/weird" }),
        json!("not an object"),
    ] {
        let r = client
            .request(
                3,
                "completion/complete",
                json!({ "ref": reference, "argument": { "name": "x", "value": "" } }),
            )
            .await;
        assert_eq!(
            r["result"],
            json!({ "completion": { "values": [] } }),
            "{r}"
        );
    }
    let (code, _) = client
        .error("completion/complete", json!({ "ref": resource }))
        .await;
    assert_eq!(code, -32602, "argument is required");
}
