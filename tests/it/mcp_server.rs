//! The MCP server over in-memory pipes with a fake service: the wire
//! behaviour of `tmux_mcp::mcp::serve`, line by line.
//!
//! No test sleeps for a condition: every wait is on an event (a line from
//! the server, or a note from the fake tools) bounded by `tokio::time::timeout`.
//! "Nothing was sent" is checked by sending a `ping` and seeing its answer
//! come next (the server answers `ping` inline, in input order).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tmux_mcp::mcp::{
    BoxFuture, CallContext, CallToolResult, Implementation, LogLevel, Service, serve, serve_with,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio::time::timeout;

use crate::support::mcp::{McpClient, error_code, wraps_wire_client};

const WAIT: Duration = Duration::from_secs(5);
const MAX_LINE: usize = 1024;

/// Tools: `echo` (structured), `fail` (isError), `slow` (waits for cancel,
/// or reports `steps` progress steps and returns), `leak` (keeps its
/// progress handle and reports after returning, when told), `log` (one
/// message per level), `panic`.
struct FakeService {
    notes: mpsc::UnboundedSender<String>,
    leak_trigger: Arc<Notify>,
}

impl Service for FakeService {
    fn implementation(&self) -> Implementation {
        Implementation {
            name: "fake".into(),
            title: None,
            version: "9.9.9".into(),
            website_url: None,
        }
    }

    fn instructions(&self) -> String {
        "Use the fake tools.".into()
    }

    fn tools(&self) -> Vec<Value> {
        ["echo", "fail", "slow", "leak", "log", "panic"]
            .iter()
            .map(|name| json!({ "name": name, "description": name, "inputSchema": { "type": "object" } }))
            .collect()
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> Option<BoxFuture<'static, CallToolResult>> {
        let notes = self.notes.clone();
        let leak_trigger = self.leak_trigger.clone();
        Some(match name {
            "echo" => {
                Box::pin(async move { CallToolResult::structured(json!({ "echo": arguments })) })
            }
            "fail" => Box::pin(async { CallToolResult::error("this tool always fails") }),
            "slow" => Box::pin(async move {
                if let Some(steps) = arguments.get("steps").and_then(Value::as_u64) {
                    for step in 1..=steps {
                        ctx.progress.report(
                            step as f64,
                            Some(steps as f64),
                            Some(format!("step {step}/{steps}")),
                        );
                    }
                    return CallToolResult::structured(json!({ "steps": steps }));
                }
                let _ = notes.send("slow started".into());
                ctx.cancel.cancelled().await;
                let _ = notes.send("slow cancelled".into());
                CallToolResult::error("cancelled")
            }),
            "leak" => Box::pin(async move {
                let progress = ctx.progress.clone();
                tokio::spawn(async move {
                    leak_trigger.notified().await;
                    progress.report(99.0, None, Some("too late".into()));
                    let _ = notes.send(format!("leak reported, wanted={}", progress.wanted()));
                });
                ctx.progress.report(1.0, None, None);
                CallToolResult::wrapped_text("done".into())
            }),
            "log" => Box::pin(async move {
                for level in [
                    LogLevel::Debug,
                    LogLevel::Info,
                    LogLevel::Warning,
                    LogLevel::Error,
                ] {
                    ctx.log.log(level, json!(level.as_str()));
                }
                CallToolResult::structured(json!({}))
            }),
            "panic" => Box::pin(async { panic!("the fake tool panics") }),
            "big" => Box::pin(async move {
                let _ = notes.send("big".into());
                let size = arguments.get("size").and_then(Value::as_u64).unwrap_or(0);
                CallToolResult::structured(json!({ "pad": "x".repeat(size as usize) }))
            }),
            _ => return None,
        })
    }
}

/// The shared wire client, with the fake service's notes and its server task.
struct Client {
    wire: McpClient,
    notes: mpsc::UnboundedReceiver<String>,
    leak_trigger: Arc<Notify>,
    server: JoinHandle<anyhow::Result<()>>,
}

wraps_wire_client!(Client);

impl Client {
    fn start() -> Client {
        Client::start_with(tmux_mcp::mcp::server::DEFAULT_MAX_QUEUED)
    }

    /// A server whose output queue is bounded at `max_queued` bytes.
    fn start_with(max_queued: usize) -> Client {
        let (notes_tx, notes) = mpsc::unbounded_channel();
        let leak_trigger = Arc::new(Notify::new());
        let service = Arc::new(FakeService {
            notes: notes_tx,
            leak_trigger: leak_trigger.clone(),
        });
        let (wire, server) = McpClient::serve(service, MAX_LINE, max_queued, WAIT);
        Client {
            wire,
            notes,
            leak_trigger,
            server,
        }
    }

    async fn started() -> Client {
        Client::started_with(tmux_mcp::mcp::server::DEFAULT_MAX_QUEUED).await
    }

    async fn started_with(max_queued: usize) -> Client {
        let mut client = Client::start_with(max_queued);
        client.initialize("2025-11-25").await;
        client
    }

    async fn note(&mut self) -> String {
        timeout(WAIT, self.notes.recv())
            .await
            .expect("note in time")
            .expect("notes open")
    }

    /// Closes the input and waits for `serve` to return.
    async fn finish(&mut self) -> Vec<Value> {
        let rest = self.close().await;
        let result = timeout(WAIT, &mut self.server)
            .await
            .expect("serve returned promptly after EOF");
        result.unwrap().expect("serve returned Ok");
        rest
    }
}

fn init_params(version: Value) -> Value {
    json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } })
}

// ---- lifecycle --------------------------------------------------------

#[tokio::test]
async fn initialize_echoes_each_supported_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = Client::start();
        let r = c
            .request(0, "initialize", init_params(json!(version)))
            .await;
        assert_eq!(
            r,
            json!({ "jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": version,
                "capabilities": { "tools": { "listChanged": false }, "logging": {} },
                "serverInfo": { "name": "fake", "version": "9.9.9" },
                "instructions": "Use the fake tools.",
            }})
        );
        assert!(c.finish().await.is_empty());
    }
}

#[tokio::test]
async fn initialize_answers_latest_for_unknown_versions() {
    for version in ["1999-01-01", "2026-07-28", ""] {
        let mut c = Client::start();
        let r = c
            .request(1, "initialize", init_params(json!(version)))
            .await;
        assert_eq!(
            r["result"]["protocolVersion"], "2025-11-25",
            "offered {version:?}"
        );
    }
}

#[tokio::test]
async fn initialize_rejects_missing_or_non_string_version_and_can_retry() {
    let mut c = Client::start();
    let r = c
        .request(1, "initialize", json!({ "capabilities": {} }))
        .await;
    assert_eq!(error_code(&r), -32602);
    let r = c
        .request(2, "initialize", init_params(json!(20251125)))
        .await;
    assert_eq!(error_code(&r), -32602);
    let r = c.request(3, "initialize", json!([1])).await;
    assert_eq!(error_code(&r), -32602);
    let r = c
        .request(4, "initialize", init_params(json!("2025-06-18")))
        .await;
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    let r = c
        .request(5, "initialize", init_params(json!("2025-06-18")))
        .await;
    assert_eq!(error_code(&r), -32600, "a second initialize is refused");
}

#[tokio::test]
async fn ping_is_answered_before_initialize() {
    let mut c = Client::start();
    let r = c.request("early-ping", "ping", json!({})).await;
    assert_eq!(
        r,
        json!({ "jsonrpc": "2.0", "id": "early-ping", "result": {} })
    );
    // Without params at all, too.
    c.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }))
        .await;
    assert_eq!(c.recv().await["result"], json!({}));
}

#[tokio::test]
async fn requests_before_initialize_fail_then_initialize_works() {
    let mut c = Client::start();
    for (id, method) in [
        (1, "tools/list"),
        (2, "tools/call"),
        (3, "logging/setLevel"),
    ] {
        let r = c
            .request(id, method, json!({ "name": "echo", "level": "info" }))
            .await;
        assert_eq!(error_code(&r), -32600, "{method}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize"),
            "{r}"
        );
    }
    let r = c
        .request(4, "initialize", init_params(json!("2025-11-25")))
        .await;
    assert!(r.get("result").is_some());
    let r = c.request(5, "tools/list", json!({})).await;
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 6);
}

// ---- the 2026-07-28 era ---------------------------------------------------

const MODERN: &str = "2026-07-28";

/// The `_meta` of a 2026-07-28 request, plus `extra` members.
fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    meta
}

fn modern_params(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = modern_meta(json!({}));
    params
}

#[tokio::test]
async fn server_discover_answers_without_initialize() {
    let mut c = Client::start();
    let r = c
        .request("d", "server/discover", modern_params(json!({})))
        .await;
    let result = &r["result"];
    assert_eq!(
        result["supportedVersions"],
        json!([
            MODERN,
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(
        result["capabilities"]["tools"],
        json!({ "listChanged": false })
    );
    assert_eq!(result["instructions"], "Use the fake tools.");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({ "name": "fake", "version": "9.9.9" })
    );
}

#[tokio::test]
async fn modern_requests_are_served_beside_a_legacy_session() {
    let mut c = Client::start();
    // Before any initialize: served, with the revision's fields.
    let r = c.request(1, "tools/list", modern_params(json!({}))).await;
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 6);
    assert_eq!(r["result"]["resultType"], "complete");
    let args = modern_params(json!({ "name": "echo", "arguments": { "a": 1 } }));
    let r = c.request(2, "tools/call", args).await;
    assert_eq!(r["result"]["structuredContent"]["echo"], json!({ "a": 1 }));
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(r["result"].get("ttlMs").is_none(), "{r}");
    // The legacy session is still uninitialized, then works as before.
    let r = c.request(3, "tools/list", json!({})).await;
    assert_eq!(error_code(&r), -32600);
    let r = c
        .request(4, "initialize", init_params(json!("2025-11-25")))
        .await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = c.request(5, "tools/list", json!({})).await;
    assert!(r["result"].get("resultType").is_none(), "{r}");
    let r = c.request(6, "tools/list", modern_params(json!({}))).await;
    assert_eq!(r["result"]["resultType"], "complete");
}

#[tokio::test]
async fn modern_meta_is_checked() {
    let mut c = Client::start();
    let pv = "io.modelcontextprotocol/protocolVersion";
    let caps = "io.modelcontextprotocol/clientCapabilities";
    let r = c.request(1, "server/discover", json!({})).await;
    assert_eq!(error_code(&r), -32602, "no _meta at all: {r}");
    let r = c
        .request(2, "server/discover", json!({ "_meta": { caps: {} } }))
        .await;
    assert_eq!(error_code(&r), -32602, "no version: {r}");
    let r = c
        .request(3, "tools/list", json!({ "_meta": { pv: MODERN } }))
        .await;
    assert_eq!(error_code(&r), -32602, "no client capabilities: {r}");
    let meta = json!({ pv: "1900-01-01", caps: {} });
    let r = c.request(4, "tools/list", json!({ "_meta": meta })).await;
    assert_eq!(error_code(&r), -32022);
    assert_eq!(r["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(r["error"]["data"]["supported"][0], MODERN);
    let meta = modern_meta(json!({ "io.modelcontextprotocol/logLevel": "loud" }));
    let r = c.request(5, "tools/list", json!({ "_meta": meta })).await;
    assert_eq!(error_code(&r), -32602, "bad log level: {r}");
}

#[tokio::test]
async fn methods_removed_in_2026_are_method_not_found() {
    let mut c = Client::start();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
    ] {
        let r = c.request(method, method, modern_params(json!({}))).await;
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
    }
    // A plain ping still works: the legacy era is untouched.
    c.assert_quiet().await;
}

#[tokio::test]
async fn modern_logging_follows_the_request_log_level() {
    let mut c = Client::started().await;
    // A session level does not apply to a modern request, which set none.
    let r = c
        .request(1, "logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert_eq!(r["result"], json!({}));
    let r = c
        .request(2, "tools/call", modern_params(json!({ "name": "log" })))
        .await;
    assert_eq!(
        r["result"]["resultType"], "complete",
        "no message first: {r}"
    );
    let mut params = json!({ "name": "log" });
    params["_meta"] = modern_meta(json!({ "io.modelcontextprotocol/logLevel": "error" }));
    c.send_request(3, "tools/call", params).await;
    let m = c.recv().await;
    assert_eq!(m["method"], "notifications/message");
    assert_eq!(m["params"]["level"], "error");
    assert_eq!(c.recv().await["id"], 3);
}

#[tokio::test]
async fn modern_progress_and_cancel_work_as_in_the_legacy_era() {
    let mut c = Client::start();
    let mut params = json!({ "name": "slow", "arguments": { "steps": 1 } });
    params["_meta"] = modern_meta(json!({ "progressToken": "p" }));
    c.send_request(1, "tools/call", params).await;
    let m = c.recv().await;
    assert_eq!(m["params"]["progressToken"], "p");
    assert_eq!(c.recv().await["result"]["resultType"], "complete");
    c.send_request(2, "tools/call", modern_params(json!({ "name": "slow" })))
        .await;
    assert_eq!(c.note().await, "slow started");
    c.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": { "requestId": 2 } }),
    )
    .await;
    assert_eq!(c.note().await, "slow cancelled");
    c.assert_quiet().await;
}

// ---- ids and framing ----------------------------------------------------

#[tokio::test]
async fn ids_are_echoed_exactly() {
    let mut c = Client::start();
    for id in [
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!("0"),
        json!(""),
        json!("a b\nc"),
    ] {
        let r = c.request(id.clone(), "ping", json!({})).await;
        assert_eq!(r["id"], id);
        assert!(r["id"].is_string() == id.is_string());
    }
}

#[tokio::test]
async fn parse_errors_and_invalid_utf8_are_answered_and_survived() {
    let mut c = Client::started().await;
    c.send_raw(br#"{"jsonrpc":"2.0","id":102,"method":"ping""#)
        .await;
    let r = c.recv().await;
    assert_eq!((error_code(&r), &r["id"]), (-32700, &Value::Null));
    c.send_raw(b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":109,\"method\":\"ping\"}")
        .await;
    let r = c.recv().await;
    assert_eq!((error_code(&r), &r["id"]), (-32700, &Value::Null));
    // Blank lines are not messages.
    c.send_raw(b"  \r").await;
    c.assert_quiet().await;
}

#[tokio::test]
async fn an_overlong_line_is_discarded_and_answered() {
    let mut c = Client::started().await;
    let padding = "x".repeat(4 * MAX_LINE);
    let long = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": { "name": "echo", "arguments": { "pad": padding } } });
    c.send(long).await;
    let r = c.recv().await;
    assert_eq!((error_code(&r), &r["id"]), (-32600, &Value::Null), "{r}");
    // The tail of the long line was skipped, not read as a new message.
    c.assert_quiet().await;
    // A line just under the bound is fine.
    let pad = "y".repeat(MAX_LINE - 200);
    let r = c
        .request(
            8,
            "tools/call",
            json!({ "name": "echo", "arguments": { "pad": pad } }),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"]["echo"]["pad"]
            .as_str()
            .unwrap()
            .len(),
        MAX_LINE - 200
    );
}

#[tokio::test]
async fn non_requests_get_invalid_request() {
    let mut c = Client::started().await;
    for (raw, id) in [
        (r#"{"jsonrpc":"2.0","id":104}"#, json!(104)),
        (r#"{"jsonrpc":"1.0","id":105,"method":"ping"}"#, json!(105)),
        (
            r#"{"id":"no-version","method":"ping"}"#,
            json!("no-version"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        ("\"just a string\"", Value::Null),
    ] {
        c.send_raw(raw.as_bytes()).await;
        let r = c.recv().await;
        assert_eq!((error_code(&r), &r["id"]), (-32600, &id), "{raw} -> {r}");
    }
}

#[tokio::test]
async fn a_batch_is_rejected_whole() {
    let mut c = Client::started().await;
    c.send_raw(br#"[{"jsonrpc":"2.0","id":106,"method":"ping"},{"jsonrpc":"2.0","id":107,"method":"ping"}]"#)
        .await;
    let r = c.recv().await;
    assert_eq!((error_code(&r), &r["id"]), (-32600, &Value::Null), "{r}");
    c.assert_quiet().await;
}

#[tokio::test]
async fn notifications_get_no_reply() {
    let mut c = Client::start();
    for method in [
        "notifications/initialized",
        "notifications/no_such_notification",
        "notifications/roots/list_changed",
        "tools/list",
        "nonsense",
    ] {
        c.send(json!({ "jsonrpc": "2.0", "method": method, "params": { "x": 1 } }))
            .await;
    }
    c.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": { "requestId": "never-sent", "reason": "probe" } }),
    )
    .await;
    c.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": 3 }))
        .await;
    // A response from the client (we never ask anything) is ignored too.
    c.send(json!({ "jsonrpc": "2.0", "id": 1, "result": {} }))
        .await;
    c.assert_quiet().await;
}

#[tokio::test]
async fn unknown_methods_are_method_not_found() {
    let mut c = Client::start();
    let r = c.request(1, "no/such/method", json!({})).await;
    assert_eq!(error_code(&r), -32601);
    let mut c = Client::started().await;
    for (id, method) in [
        (2, "no/such/method"),
        (3, "prompts/list"),
        (4, "resources/list"),
    ] {
        let r = c.request(id, method, json!({})).await;
        assert_eq!(error_code(&r), -32601, "{method}");
    }
}

// ---- tools --------------------------------------------------------------

#[tokio::test]
async fn tools_list_serves_one_page_and_rejects_cursors() {
    let mut c = Client::started().await;
    c.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .await;
    let r = c.recv().await;
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "fail", "slow", "leak", "log", "panic"]);
    assert!(r["result"].get("nextCursor").is_none());
    let r = c
        .request(
            2,
            "tools/list",
            json!({ "cursor": "%%probe-invalid-cursor%%" }),
        )
        .await;
    assert_eq!(error_code(&r), -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("cursor"));
    let r = c.request(3, "tools/list", json!({ "cursor": 5 })).await;
    assert_eq!(error_code(&r), -32602);
    let r = c.request(4, "tools/list", json!({ "cursor": null })).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn tools_call_results_and_errors() {
    let mut c = Client::started().await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "hi" } }),
        )
        .await;
    assert_eq!(
        r["result"],
        json!({ "content": [{ "type": "text", "text": r#"{"echo":{"text":"hi"}}"# }],
                "structuredContent": { "echo": { "text": "hi" } } })
    );
    // Missing arguments read as {}.
    let r = c.request(2, "tools/call", json!({ "name": "echo" })).await;
    assert_eq!(r["result"]["structuredContent"], json!({ "echo": {} }));
    // Arguments sent as a JSON string holding an object are decoded once.
    let r = c
        .request(
            14,
            "tools/call",
            json!({ "name": "echo", "arguments": r#"{"text":"-u"}"# }),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({ "echo": { "text": "-u" } })
    );
    let r = c.request(3, "tools/call", json!({ "name": "fail" })).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["content"][0]["text"], "this tool always fails");

    let r = c
        .request(
            4,
            "tools/call",
            json!({ "name": "__no_such_tool__", "arguments": {} }),
        )
        .await;
    assert_eq!(
        (error_code(&r), r["error"]["message"].as_str().unwrap()),
        (-32602, "Unknown tool: __no_such_tool__")
    );
    for (id, params) in [
        (5, json!({ "arguments": {} })),
        (6, json!({ "name": 3 })),
        (7, json!(["echo"])),
        (8, json!("echo")),
        (9, json!({ "name": "echo", "arguments": [1] })),
        (11, json!({ "name": "echo", "arguments": "[1]" })),
        (12, json!({ "name": "echo", "arguments": "{\"text\"" })),
        (
            13,
            json!({ "name": "echo", "arguments": r#""{\"text\":\"hi\"}""# }),
        ),
    ] {
        let r = c.request(id, "tools/call", params.clone()).await;
        assert_eq!(error_code(&r), -32602, "{params}");
    }
    let r = c
        .request(10, "tools/call", json!({ "name": "panic" }))
        .await;
    assert_eq!(error_code(&r), -32603);
    c.assert_quiet().await;
}

#[tokio::test]
async fn a_slow_call_does_not_block_other_requests() {
    let mut c = Client::started().await;
    c.send_request("slow-1", "tools/call", json!({ "name": "slow" }))
        .await;
    assert_eq!(c.note().await, "slow started");
    let r = c.request(7, "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    let r = c
        .request(
            8,
            "tools/call",
            json!({ "name": "echo", "arguments": { "n": 8 } }),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"]["echo"]["n"], 8);
    // A second call may not reuse an id that is still running.
    let r = c
        .request("slow-1", "tools/call", json!({ "name": "echo" }))
        .await;
    assert_eq!(error_code(&r), -32600);
    let rest = c.finish().await;
    assert!(rest.iter().all(|m| m["id"] != "slow-1"), "{rest:?}");
}

/// With a small output bound, 32 long calls always run at once; one more
/// waits to start, and meanwhile pings are answered and a cancellation of
/// the waiting call is taken.
#[tokio::test]
async fn long_calls_waiting_to_start_leave_pings_and_cancellation_working() {
    let mut c = Client::started_with(64 << 10).await;
    for id in 0..32 {
        c.send_request(id, "tools/call", json!({ "name": "slow" }))
            .await;
        assert_eq!(c.note().await, "slow started");
    }
    c.send_request("late", "tools/call", json!({ "name": "slow" }))
        .await;
    c.send_request("gone", "tools/call", json!({ "name": "slow" }))
        .await;
    let r = c.request("p", "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    c.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": { "requestId": "gone" } }),
    )
    .await;
    // The answer to the ping above was the only message: "late" has not
    // started. Ending one running call makes room for it.
    c.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": { "requestId": 0 } }),
    )
    .await;
    assert_eq!(c.note().await, "slow cancelled");
    assert_eq!(c.note().await, "slow started");
    c.assert_quiet().await;
    assert!(
        c.notes.try_recv().is_err(),
        "the cancelled waiting call never started"
    );
    let rest = c.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test]
async fn cancel_stops_the_call_and_suppresses_its_response() {
    let mut c = Client::started().await;
    c.send_request(
        5,
        "tools/call",
        json!({ "name": "slow", "_meta": { "progressToken": "p" } }),
    )
    .await;
    assert_eq!(c.note().await, "slow started");
    c.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": { "requestId": 5, "reason": "caller cancelled" } }),
    )
    .await;
    assert_eq!(c.note().await, "slow cancelled");
    // The tool has returned its result by now (it did so right after the
    // note); it must not reach the client.
    c.assert_quiet().await;
    // The id is free again.
    let r = c.request(5, "tools/call", json!({ "name": "echo" })).await;
    assert!(r.get("result").is_some());
    // Cancelling it again (finished) is ignored.
    c.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 5 } })).await;
    c.assert_quiet().await;
    assert!(c.finish().await.is_empty());
}

#[tokio::test]
async fn progress_only_with_a_token() {
    let mut c = Client::started().await;
    let r = c
        .request(
            1,
            "tools/call",
            json!({ "name": "slow", "arguments": { "steps": 3 } }),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({ "steps": 3 }),
        "no progress without a token: {r}"
    );

    for token in [json!("tok"), json!(0)] {
        c.send_request(
            2,
            "tools/call",
            json!({ "name": "slow", "arguments": { "steps": 3 }, "_meta": { "progressToken": token } }),
        )
        .await;
        for step in 1..=3 {
            let n = c.recv().await;
            assert_eq!(
                n,
                json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": step as f64, "total": 3.0,
                    "message": format!("step {step}/3") } })
            );
        }
        let r = c.recv().await;
        assert_eq!(r["id"], 2);
        c.assert_quiet().await;
    }
}

#[tokio::test]
async fn progress_never_follows_the_response() {
    let mut c = Client::started().await;
    c.send_request(
        1,
        "tools/call",
        json!({ "name": "leak", "_meta": { "progressToken": 42 } }),
    )
    .await;
    let n = c.recv().await;
    assert_eq!(
        (n["method"].as_str(), &n["params"]["progressToken"]),
        (Some("notifications/progress"), &json!(42))
    );
    let r = c.recv().await;
    assert_eq!(r["id"], 1);
    c.leak_trigger.notify_one();
    assert_eq!(c.note().await, "leak reported, wanted=false");
    c.assert_quiet().await;
}

// ---- logging --------------------------------------------------------------

#[tokio::test]
async fn logging_set_level_filters_messages() {
    let mut c = Client::started().await;
    // Nothing is sent before the client picks a level.
    let r = c.request(1, "tools/call", json!({ "name": "log" })).await;
    assert!(r.get("result").is_some(), "{r}");

    let r = c
        .request(2, "logging/setLevel", json!({ "level": "loud" }))
        .await;
    assert_eq!(error_code(&r), -32602);
    let r = c.request(3, "logging/setLevel", json!({})).await;
    assert_eq!(error_code(&r), -32602);
    let r = c
        .request(4, "logging/setLevel", json!({ "level": "warning" }))
        .await;
    assert_eq!(r["result"], json!({}));

    c.send_request(5, "tools/call", json!({ "name": "log" }))
        .await;
    for level in ["warning", "error"] {
        let m = c.recv().await;
        assert_eq!(
            m,
            json!({ "jsonrpc": "2.0", "method": "notifications/message",
                    "params": { "level": level, "logger": "fake", "data": level } })
        );
    }
    assert_eq!(c.recv().await["id"], 5);

    let r = c
        .request(6, "logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert_eq!(r["result"], json!({}));
    c.send_request(7, "tools/call", json!({ "name": "log" }))
        .await;
    let levels: Vec<Value> = [
        c.recv().await,
        c.recv().await,
        c.recv().await,
        c.recv().await,
    ]
    .iter()
    .map(|m| m["params"]["level"].clone())
    .collect();
    assert_eq!(
        levels,
        [
            json!("debug"),
            json!("info"),
            json!("warning"),
            json!("error")
        ]
    );
    assert_eq!(c.recv().await["id"], 7);
}

// ---- shutdown ---------------------------------------------------------------

#[tokio::test]
async fn eof_ends_serve_promptly_while_a_call_is_in_flight() {
    let mut c = Client::started().await;
    c.send_request("slow-eof", "tools/call", json!({ "name": "slow" }))
        .await;
    assert_eq!(c.note().await, "slow started");
    let rest = c.finish().await;
    assert_eq!(c.note().await, "slow cancelled");
    assert!(
        rest.is_empty(),
        "nothing is sent for a call cut short by EOF: {rest:?}"
    );
}

#[tokio::test]
async fn eof_flushes_answers_already_queued() {
    let mut c = Client::started().await;
    // Written back to back, then EOF: every answer still arrives.
    for id in 100..110 {
        c.send_request(id, "ping", json!({})).await;
    }
    let rest = c.finish().await;
    let ids: Vec<i64> = rest.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, (100..110).collect::<Vec<_>>());
}

#[tokio::test]
async fn eof_without_trailing_newline_still_serves_the_last_line() {
    let mut c = Client::start();
    c.input()
        .write_all(br#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#)
        .await
        .unwrap();
    let rest = c.finish().await;
    assert_eq!(
        rest,
        [json!({ "jsonrpc": "2.0", "id": "last", "result": {} })]
    );
}

#[tokio::test]
async fn a_closed_output_ends_serve_with_an_error() {
    let (mut input, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, output) = tokio::io::duplex(1 << 16);
    let (notes, _notes) = mpsc::unbounded_channel();
    let service = Arc::new(FakeService {
        notes,
        leak_trigger: Arc::new(Notify::new()),
    });
    let server = tokio::spawn(serve(server_input, server_output, service, MAX_LINE));
    drop(output);
    input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let result = timeout(WAIT, server)
        .await
        .expect("serve returned promptly")
        .unwrap();
    assert!(result.is_err(), "a write to a closed output is an error");
}

/// A client that stops reading: while the output queue is over its bound
/// the server reads no more input (so the client's writes block), and when
/// the client reads again every request is answered once. ("big" is a tool
/// the fake serves without listing it.)
#[tokio::test]
async fn a_client_that_stops_reading_gets_backpressure_and_every_answer() {
    const QUEUED: usize = 64 << 10;
    const REQUESTS: u64 = 200;
    let (mut input, server_input) = tokio::io::duplex(1 << 12);
    let (server_output, output) = tokio::io::duplex(1 << 12);
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let service = Arc::new(FakeService {
        notes: notes_tx,
        leak_trigger: Arc::new(Notify::new()),
    });
    let server = tokio::spawn(serve_with(
        server_input,
        server_output,
        service,
        MAX_LINE,
        QUEUED,
    ));
    let mut output = BufReader::new(output);
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {} } });
    input
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    output.read_line(&mut line).await.unwrap();
    assert!(line.contains("\"result\""), "{line}");

    // Each answer is about 16 KB (text and structured copies of 8 KB).
    let sender = tokio::spawn(async move {
        for id in 1..=REQUESTS {
            let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "big", "arguments": { "size": 8000 } } });
            input
                .write_all(format!("{call}\n").as_bytes())
                .await
                .unwrap();
        }
        input
    });
    // Without backpressure the server would read all 200 requests (and
    // queue 3 MB of answers) at once; with it, the sender stays blocked.
    let mut sender = sender;
    assert!(
        timeout(Duration::from_millis(500), &mut sender)
            .await
            .is_err(),
        "the server kept reading a client that does not read"
    );
    let mut taken = 0;
    while notes.try_recv().is_ok() {
        taken += 1;
    }
    // Calls read before the first answers were counted still answer; the
    // rest wait in the pipe.
    assert!(
        taken < REQUESTS as usize / 2,
        "{taken} of {REQUESTS} calls were taken in while nothing was read"
    );

    // Reading again: every request is answered exactly once.
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < REQUESTS as usize {
        line.clear();
        let n = timeout(WAIT, output.read_line(&mut line))
            .await
            .expect("answers keep coming")
            .unwrap();
        assert!(n > 0, "EOF before every answer");
        let r: Value = serde_json::from_str(&line).unwrap();
        let id = r["id"].as_u64().expect("an answer");
        assert!(r["result"]["structuredContent"]["pad"].is_string(), "{id}");
        assert!(seen.insert(id), "answered twice: {id}");
    }
    let input = timeout(WAIT, sender).await.expect("sender done").unwrap();
    drop(input);
    line.clear();
    let n = timeout(WAIT, output.read_line(&mut line))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(n, 0, "nothing more after the answers: {line}");
    timeout(WAIT, server).await.unwrap().unwrap().unwrap();
}
