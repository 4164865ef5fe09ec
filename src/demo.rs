//! `tmux-mcp demo`: the server's main job, end to end, on a private tmux.
//!
//! Starts a tmux server of its own (`tmux -L tmuxmcp-demo-<pid> -f
//! /dev/null`), runs this very binary as an MCP server over stdio pointed at
//! it, and walks through a short agent-like conversation: handshake, tool
//! list, create a session, split it, type a command, wait for it, read the
//! screen. Each request and result is printed. The tmux server is killed at
//! the end whatever happens; the user's own tmux is never touched.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub fn run(_json: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let server = PrivateServer(format!("tmuxmcp-demo-{}", std::process::id()));
    runtime.block_on(conversation(&server.0))
}

/// The demo's tmux server, killed when dropped: also when the demo fails or
/// panics (printing to a closed pipe, say `tmux-mcp demo | head`).
struct PrivateServer(String);

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let tmux = |args: &[&str]| {
            std::process::Command::new("tmux")
                .args(["-L", &self.0])
                .args(args)
                .env_remove("TMUX")
                .stderr(Stdio::null())
                .output()
        };
        let socket = tmux(&["display-message", "-p", "#{socket_path}"]);
        let _ = tmux(&["kill-server"]);
        // tmux 3.3a leaves its socket file behind after kill-server.
        if let Ok(out) = socket {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if !path.is_empty() {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<(Value, Duration)> {
        self.next_id += 1;
        let id = self.next_id;
        let line =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let start = Instant::now();
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        self.stdin.flush().await?;
        loop {
            let mut reply = String::new();
            let read =
                tokio::time::timeout(Duration::from_secs(20), self.stdout.read_line(&mut reply))
                    .await;
            if read.context("the server did not answer in 20 s")?? == 0 {
                bail!("the server closed stdout");
            }
            let message: Value = serde_json::from_str(&reply)?;
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok((message["result"].clone(), start.elapsed()));
            }
        }
    }

    /// Calls a tool, prints the call and its result, returns the result value.
    async fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<Value> {
        println!("\n> {tool} {args}");
        let (result, took) = self
            .request("tools/call", json!({ "name": tool, "arguments": args }))
            .await?;
        let value = result["structuredContent"]
            .get("result")
            .cloned()
            .unwrap_or(result["structuredContent"].clone());
        let shown = match &value {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other)?,
        };
        let marker = if result["isError"] == json!(true) {
            "! error"
        } else {
            "<"
        };
        println!(
            "{marker} ({:.2} ms)\n{}",
            took.as_secs_f64() * 1000.0,
            indent(&shown)
        );
        if result["isError"] == json!(true) {
            bail!("{tool} returned an error: {}", result["content"][0]["text"]);
        }
        Ok(value)
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .take(40)
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn tmux(socket: &str, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("tmux")
        .args(["-L", socket, "-f", "/dev/null"])
        .args(args)
        .env_remove("TMUX")
        .status();
    let status = status.await.context("running tmux (is it installed?)")?;
    if !status.success() {
        bail!("tmux {args:?} failed");
    }
    Ok(())
}

async fn conversation(socket: &str) -> anyhow::Result<()> {
    tmux(
        socket,
        &["new-session", "-d", "-s", "demo", "-x", "120", "-y", "30"],
    )
    .await?;
    // Panes run a plain sh: the demo shows tmux-mcp, not your shell's
    // start-up files.
    tmux(
        socket,
        &["set-option", "-g", "default-command", "env PS1='$ ' sh"],
    )
    .await?;
    println!("private tmux server: tmux -L {socket}");

    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .env("LIBTMUX_SOCKET", socket)
        // All four toolsets: the demo ends by killing the session it made.
        .env("LIBTMUX_TOOLSETS", "inspect,manage,execute,teardown")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut client = Client {
        child,
        stdin,
        stdout,
        next_id: 0,
    };

    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": { "name": "tmux-mcp-demo", "version": env!("CARGO_PKG_VERSION") },
    });
    let (result, took) = client.request("initialize", init).await?;
    println!(
        "> initialize\n< {} {} ({:.2} ms)",
        result["serverInfo"]["name"],
        result["protocolVersion"],
        took.as_secs_f64() * 1000.0
    );
    client
        .stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await?;
    let (tools, took) = client.request("tools/list", json!({})).await?;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    println!(
        "> tools/list\n< {} tools ({:.2} ms): {}",
        names.len(),
        took.as_secs_f64() * 1000.0,
        names.join(", ")
    );

    client.call("list_sessions", json!({})).await?;
    let session = client
        .call(
            "create_session",
            json!({ "session_name": "agent", "x": 100, "y": 25 }),
        )
        .await?;
    let pane = session["active_pane_id"]
        .as_str()
        .context("active_pane_id")?
        .to_owned();
    client
        .call(
            "split_window",
            json!({ "pane_id": pane, "direction": "right" }),
        )
        .await?;
    // A command the agent types: exact output and exit status, no polling.
    let run = client
        .call(
            "run_command",
            json!({ "pane_id": pane, "command": "printf 'hello from %s\\n' tmux-mcp; exit 3", "timeout": 10 }),
        )
        .await?;
    if run["output"] != json!(["hello from tmux-mcp"]) || run["exit_status"] != json!(3) {
        bail!("run_command did not return the command's own output and status");
    }
    // Output the agent did not author: the wait is armed at once and woken
    // by the pane's output the moment READY-42 is printed.
    let keys = "sleep 1; echo READY-$((40+2))";
    client
        .call("send_keys", json!({ "pane_id": pane, "keys": keys }))
        .await?;
    let waited = client
        .call(
            "wait_for_text",
            json!({ "pane_id": pane, "patterns": ["READY-42"], "timeout": 10 }),
        )
        .await?;
    if waited["found"] != json!(true) {
        bail!("wait_for_text did not see READY-42");
    }
    let screen = client
        .call("snapshot_pane", json!({ "pane_id": pane, "max_lines": 8 }))
        .await?;
    if !screen["content"]
        .as_str()
        .unwrap_or_default()
        .contains("READY-42")
    {
        bail!("the pane does not show the command's output");
    }
    client
        .call("list_panes", json!({ "session_name": "agent" }))
        .await?;
    client.call("display_message", json!({ "pane_id": pane, "format_string": "#{pane_current_command} in #{pane_current_path}" })).await?;
    client
        .call("kill_session", json!({ "session_name": "agent" }))
        .await?;

    drop(client.stdin);
    let status = tokio::time::timeout(Duration::from_secs(5), client.child.wait()).await??;
    println!(
        "\nserver exited with {status} after stdin closed; the demo tmux server is killed next."
    );
    if !status.success() {
        bail!("the server did not exit cleanly");
    }
    Ok(())
}
