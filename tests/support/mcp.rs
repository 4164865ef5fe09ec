//! The tests' MCP client: JSON-RPC lines written to a server and the lines
//! it answers, read one at a time with a bound. The server is `serve` on
//! in-memory pipes ([`McpClient::serve`]) or the binary on its stdio
//! ([`McpClient::spawn`]). [`McpClient::in_flight`] turns it into a client
//! whose requests are sent without waiting: a task reads the answers as
//! they come, so calls stay in flight while the test acts.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tmux_mcp::mcp::{Service, serve_with};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::timeout;

type Input = Pin<Box<dyn AsyncWrite + Send>>;
type Output = BufReader<Pin<Box<dyn AsyncRead + Send>>>;

pub struct McpClient {
    input: Option<Input>,
    output: Output,
    /// How long any one answer may take.
    wait: Duration,
    next_id: u64,
}

impl McpClient {
    pub fn new(
        input: impl AsyncWrite + Send + 'static,
        output: impl AsyncRead + Send + 'static,
        wait: Duration,
    ) -> McpClient {
        McpClient {
            input: Some(Box::pin(input)),
            output: BufReader::new(Box::pin(output)),
            wait,
            next_id: 1,
        }
    }

    /// `serve_with(service, max_line, max_queued)` on in-memory pipes, and
    /// its task (which returns when the input closes).
    pub fn serve(
        service: Arc<dyn Service>,
        max_line: usize,
        max_queued: usize,
        wait: Duration,
    ) -> (McpClient, JoinHandle<anyhow::Result<()>>) {
        let (input, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, output) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(serve_with(
            server_input,
            server_output,
            service,
            max_line,
            max_queued,
        ));
        (McpClient::new(input, output, wait), server)
    }

    /// The binary `command` runs, spoken to on its stdin and stdout; the
    /// child is killed when dropped.
    pub fn spawn(
        mut command: tokio::process::Command,
        wait: Duration,
    ) -> (McpClient, tokio::process::Child) {
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the MCP server");
        let input = child.stdin.take().expect("piped stdin");
        let output = child.stdout.take().expect("piped stdout");
        (McpClient::new(input, output, wait), child)
    }

    /// `initialize` at `version`, then `notifications/initialized`; the
    /// result.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "tmux-mcp tests", "version": "0"}
        });
        let r = self.request(0, "initialize", params).await;
        let result = r.get("result").unwrap_or_else(|| panic!("{r}")).clone();
        self.notify("notifications/initialized", json!({})).await;
        result
    }

    /// Writes `bytes` and a newline.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input open");
        input.write_all(bytes).await.unwrap();
        input.write_all(b"\n").await.unwrap();
        input.flush().await.unwrap();
    }

    pub async fn send(&mut self, message: Value) {
        self.send_raw(serde_json::to_string(&message).unwrap().as_bytes())
            .await;
    }

    pub async fn send_request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id.into(), "method": method, "params": params }))
            .await;
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// The next line the server writes, parsed; `None` at EOF.
    pub async fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = timeout(self.wait, self.output.read_line(&mut line))
            .await
            .expect("server answered in time")
            .unwrap();
        if n == 0 {
            return None;
        }
        assert!(
            line.ends_with('\n') && !line[..line.len() - 1].contains('\n'),
            "one message per line: {line:?}"
        );
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}")),
        )
    }

    pub async fn recv(&mut self) -> Value {
        self.next().await.expect("a message, not EOF")
    }

    /// Sends a request whose answer must be the next message.
    pub async fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send_request(id.clone(), method, params).await;
        let r = self.recv().await;
        assert_eq!(r["id"], id, "answer to {method}: {r}");
        r
    }

    /// Sends a request with the next numeric id and returns its answer,
    /// skipping the notifications before it.
    pub async fn answer(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_request(id, method, params).await;
        loop {
            let message = self.next().await.unwrap_or_else(|| {
                panic!("the server closed its output before answering {method} #{id}")
            });
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call` answered without a protocol error: the CallToolResult.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let params = json!({ "name": name, "arguments": arguments });
        let response = self.answer("tools/call", params).await;
        assert!(response.get("error").is_none(), "{name}: {response}");
        response["result"].clone()
    }

    /// Proves the server sent nothing since the last message read: a ping's
    /// answer must be the very next line.
    pub async fn assert_quiet(&mut self) {
        self.send_request("quiet?", "ping", json!({})).await;
        let r = self.recv().await;
        assert_eq!(
            r,
            json!({ "jsonrpc": "2.0", "id": "quiet?", "result": {} }),
            "expected only the ping answer"
        );
    }

    /// Closes the input and reads what the server writes until EOF.
    pub async fn close(&mut self) -> Vec<Value> {
        drop(self.input.take());
        let mut rest = Vec::new();
        while let Some(message) = self.next().await {
            rest.push(message);
        }
        rest
    }

    /// The input, for writes that are not whole lines.
    pub fn input(&mut self) -> &mut Input {
        self.input.as_mut().expect("input open")
    }

    /// This client with its answers read by a task of its own, as they
    /// come: requests are sent without waiting (the ids go on from this
    /// client's).
    pub fn in_flight(self) -> InFlight {
        let McpClient {
            input,
            mut output,
            next_id,
            ..
        } = self;
        let (tx, answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut line = Vec::new();
            while output
                .read_until(b'\n', &mut line)
                .await
                .is_ok_and(|n| n > 0)
            {
                let message = serde_json::from_slice(&line).unwrap_or_else(|e| {
                    json!({ "unparsed": String::from_utf8_lossy(&line), "error": e.to_string() })
                });
                line.clear();
                if tx.send((Instant::now(), message)).is_err() {
                    break;
                }
            }
        });
        InFlight {
            input: input.expect("input open"),
            answers,
            arrived: HashMap::new(),
            malformed: Vec::new(),
            next_id,
        }
    }
}

/// An MCP client whose requests stay in flight: [`InFlight::send`]
/// returns the request's id at once; a task reads every line the server
/// writes and keeps each answer with the moment it was read, for
/// [`InFlight::take`] or [`InFlight::answer_by`] (messages without an id,
/// notifications, are skipped).
pub struct InFlight {
    input: Input,
    answers: mpsc::UnboundedReceiver<(Instant, Value)>,
    /// Answers read and not yet taken, by id.
    arrived: HashMap<u64, (Instant, Value)>,
    /// Lines the server wrote that are not JSON.
    malformed: Vec<String>,
    next_id: u64,
}

impl InFlight {
    /// Sends a request with the next id and returns the id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.input.write_all(&line).await.unwrap();
        self.input.flush().await.unwrap();
        id
    }

    /// Sends `tools/call` of `name` and returns its id.
    pub async fn send_call(&mut self, name: &str, arguments: Value) -> u64 {
        self.send(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// Keeps what the reader has read so far.
    fn collect(&mut self) {
        while let Ok((at, message)) = self.answers.try_recv() {
            self.keep(at, message);
        }
    }

    fn keep(&mut self, at: Instant, message: Value) {
        if let Some(line) = message["unparsed"].as_str() {
            self.malformed.push(line.to_owned());
        }
        // A request of the server's own (it has a method) is no answer.
        if let (Some(id), None) = (message["id"].as_u64(), message.get("method")) {
            self.arrived.insert(id, (at, message));
        }
    }

    /// The lines read so far that were not JSON (none, from a server that
    /// keeps to the protocol).
    pub fn malformed(&mut self) -> &[String] {
        self.collect();
        &self.malformed
    }

    /// The answer to `id` with when it was read, if it has come.
    pub fn take(&mut self, id: u64) -> Option<(Instant, Value)> {
        self.collect();
        self.arrived.remove(&id)
    }

    /// The answer to `id`, waiting for it until `deadline`; `None` if it
    /// has not come by then (or the server closed its output).
    pub async fn answer_by(&mut self, id: u64, deadline: Instant) -> Option<(Instant, Value)> {
        loop {
            if let Some(answer) = self.take(id) {
                return Some(answer);
            }
            let next = tokio::time::timeout_at(deadline.into(), self.answers.recv());
            match next.await {
                Ok(Some((at, message))) => self.keep(at, message),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Closes the input (the server's end of input: it shuts down) and
    /// waits up to `within` for it to close its output; whether it did.
    pub async fn close(mut self, within: Duration) -> bool {
        let _ = self.input.shutdown().await;
        drop(self.input);
        let drained = async { while self.answers.recv().await.is_some() {} };
        timeout(within, drained).await.is_ok()
    }
}

/// A test's own client around an [`McpClient`] in its field `wire`
/// (beside what its fake service tells the test) is used as the wire client.
macro_rules! wraps_wire_client {
    ($client:ty) => {
        impl std::ops::Deref for $client {
            type Target = $crate::support::mcp::McpClient;
            fn deref(&self) -> &Self::Target {
                &self.wire
            }
        }

        impl std::ops::DerefMut for $client {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.wire
            }
        }
    };
}
pub(crate) use wraps_wire_client;

/// The code of an error answer.
pub fn error_code(r: &Value) -> i64 {
    r["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {r}"))
}
