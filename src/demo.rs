//! `tmux-mcp demo`: the server's job, end to end, on a private tmux server.
//!
//! Starts a tmux server of its own (`tmux -L tmuxmcp-demo-<pid> -f
//! /dev/null`), runs this very binary as an MCP server over stdio pointed at
//! it, with the user's own toolset settings, and walks through what an agent
//! does: handshake, tool list, a session and a split, a command with its
//! output and exit status, a wait woken by output, the screen, the layout.
//! Each step is one narrated line with its figure; `--json` prints the raw
//! JSON-RPC lines instead. The tmux server is killed at the end whatever
//! happens; the user's own tmux is never touched.

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The tools the conversation calls; all in the default toolsets.
const NEEDED: [&str; 8] = [
    "create_session",
    "split_window",
    "run_command",
    "send_keys",
    "wait_for_text",
    "snapshot_pane",
    "list_panes",
    "display_message",
];

pub fn run(json: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut server = PrivateServer::new(format!("tmuxmcp-demo-{}", std::process::id()));
    let stats = runtime.block_on(conversation(&server.name, json))?;
    let cleaned = server.kill();
    if !json {
        stats.summarize(&server.name, &cleaned);
    }
    Ok(())
}

/// The demo's tmux server, killed when dropped: also when the demo fails or
/// panics (printing to a closed pipe, say `tmux-mcp demo | head`).
struct PrivateServer {
    name: String,
    killed: bool,
}

impl PrivateServer {
    fn new(name: String) -> Self {
        PrivateServer {
            name,
            killed: false,
        }
    }

    fn tmux(&self, args: &[&str]) -> std::io::Result<std::process::Output> {
        std::process::Command::new("tmux")
            .args(["-L", &self.name])
            .args(args)
            .env_remove("TMUX")
            .stderr(Stdio::null())
            .output()
    }

    /// Kills the server and removes its socket; returns the sessions it had.
    fn kill(&mut self) -> Vec<String> {
        self.killed = true;
        let sessions = self
            .tmux(&["list-sessions", "-F", "#{session_name}"])
            .map(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let socket = self.tmux(&["display-message", "-p", "#{socket_path}"]);
        let _ = self.tmux(&["kill-server"]);
        // tmux 3.3a leaves its socket file behind after kill-server.
        if let Ok(out) = socket {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if !path.is_empty() {
                let _ = std::fs::remove_file(path);
            }
        }
        sessions
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        if !self.killed {
            self.kill();
        }
    }
}

/// What the closing summary reports.
#[derive(Default)]
struct Stats {
    /// Round trip of every request, in order.
    round_trips: Vec<(String, Duration)>,
    server_exit: String,
}

impl Stats {
    fn summarize(&self, socket: &str, sessions: &[String]) {
        let mut times: Vec<Duration> = self.round_trips.iter().map(|(_, d)| *d).collect();
        times.sort();
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        let (slowest, slowest_took) = self
            .round_trips
            .iter()
            .max_by_key(|(_, d)| *d)
            .cloned()
            .unwrap_or_default();
        let why = if slowest == "wait_for_text" {
            ", waited for the command's 1 s sleep"
        } else {
            ""
        };
        println!(
            "\n{} requests, median round trip {}; the slowest, {slowest} ({}){why}.",
            self.round_trips.len(),
            ms(median),
            ms(slowest_took)
        );
        println!(
            "Cleaned up: the MCP server {} when its stdin closed; the private tmux server \
             (tmux -L {socket}, sessions {}) is killed and its socket removed.",
            self.server_exit,
            sessions.join(", ")
        );
        println!(
            "Next: `tmux-mcp demo --json` shows the raw exchange; docs/clients.md connects your client."
        );
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    json: bool,
    stats: Stats,
}

impl Client {
    async fn send_line(&mut self, line: String) -> anyhow::Result<()> {
        if self.json {
            println!("> {line}");
        }
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        Ok(self.stdin.flush().await?)
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let line =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let start = Instant::now();
        self.send_line(line).await?;
        loop {
            let mut reply = String::new();
            let read =
                tokio::time::timeout(Duration::from_secs(20), self.stdout.read_line(&mut reply))
                    .await;
            if read.context("the server did not answer in 20 s")?? == 0 {
                bail!("the server closed stdout");
            }
            if self.json {
                print!("< {reply}");
            }
            let message: Value = serde_json::from_str(&reply)?;
            if message["id"] == json!(id) {
                let label = params["name"].as_str().unwrap_or(method).to_owned();
                self.stats.round_trips.push((label, start.elapsed()));
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// Calls a tool; returns its value (`structuredContent`, unwrapped from
    /// `{"result": …}`) and its round trip. An `isError` result ends the demo.
    async fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<(Value, Duration)> {
        let result = self
            .request("tools/call", json!({ "name": tool, "arguments": args }))
            .await?;
        let took = self.stats.round_trips.last().map(|(_, d)| *d);
        if result["isError"] == json!(true) {
            bail!("{tool} returned an error: {}", result["content"][0]["text"]);
        }
        let structured = &result["structuredContent"];
        let value = match structured.get("result") {
            Some(inner) if structured.as_object().is_some_and(|o| o.len() == 1) => inner.clone(),
            _ => structured.clone(),
        };
        Ok((value, took.unwrap_or_default()))
    }

    /// One narrated step: number, what was done, what came back, how long.
    fn step(&self, what: &str, detail: &str, took: Duration) {
        if !self.json {
            let n = self.stats.round_trips.len();
            println!("{n:>2}. {what:<16} {detail}  [{}]", ms(took));
        }
    }
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

/// The private server, and this binary serving MCP against it.
async fn start(socket: &str) -> anyhow::Result<Child> {
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
    let exe = std::env::current_exe()?;
    Ok(Command::new(exe)
        .arg("serve")
        .env("LIBTMUX_SOCKET", socket)
        .env_remove("LIBTMUX_SOCKET_PATH")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("FASTMCP_LOG_LEVEL", "WARNING")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?)
}

async fn conversation(socket: &str, json: bool) -> anyhow::Result<Stats> {
    let mut child = start(socket).await?;
    let stdin = child.stdin.take().context("piped stdin")?;
    let stdout = BufReader::new(child.stdout.take().context("piped stdout")?);
    let mut client = Client {
        child,
        stdin,
        stdout,
        next_id: 0,
        json,
        stats: Stats::default(),
    };
    if !json {
        println!(
            "tmux-mcp demo: this binary serves MCP over stdio to a scripted client, on a private \
             tmux server (tmux -L {socket}); your own tmux is not touched.\n"
        );
    }
    handshake(&mut client).await?;
    let (first, second) = layout(&mut client).await?;
    commands(&mut client, &first).await?;
    screen(&mut client, &first, &second).await?;

    drop(client.stdin);
    let status = tokio::time::timeout(Duration::from_secs(5), client.child.wait()).await??;
    if !status.success() {
        bail!("the server did not exit cleanly ({status})");
    }
    client.stats.server_exit = format!("exited with status {}", status.code().unwrap_or(0));
    Ok(client.stats)
}

async fn handshake(client: &mut Client) -> anyhow::Result<()> {
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": { "name": "tmux-mcp-demo", "version": env!("CARGO_PKG_VERSION") },
    });
    let result = client.request("initialize", init).await?;
    let took = client.stats.round_trips[0].1;
    let info = &result["serverInfo"];
    let detail = format!(
        "{} {} answers, protocol {}",
        info["title"]
            .as_str()
            .or(info["name"].as_str())
            .unwrap_or("?"),
        info["version"].as_str().unwrap_or("?"),
        result["protocolVersion"].as_str().unwrap_or("?")
    );
    client.step("initialize", &detail, took);
    let line = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    client.send_line(line.into()).await?;

    let tools = client.request("tools/list", json!({})).await?;
    let took = client.stats.round_trips[1].1;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let missing: Vec<&str> = NEEDED.into_iter().filter(|n| !names.contains(n)).collect();
    if !missing.is_empty() {
        bail!(
            "the demo calls {}, which your LIBTMUX_TOOLSETS / LIBTMUX_TOOLS / LIBTMUX_EXCLUDE_TOOLS hide",
            missing.join(", ")
        );
    }
    let sets = std::env::var("LIBTMUX_TOOLSETS")
        .map(|s| format!("LIBTMUX_TOOLSETS={s}"))
        .unwrap_or_else(|_| "the default toolsets inspect, manage, execute".into());
    let detail = format!("{} tools, from {sets}", names.len());
    client.step("tools/list", &detail, took);
    Ok(())
}

/// A session and a split; returns the two pane ids.
async fn layout(client: &mut Client) -> anyhow::Result<(String, String)> {
    let args = json!({ "session_name": "agent", "x": 100, "y": 25 });
    let (session, took) = client.call("create_session", args).await?;
    let first = session["active_pane_id"]
        .as_str()
        .context("active_pane_id")?
        .to_owned();
    let detail = format!("session agent (100x25) with pane {first}");
    client.step("create_session", &detail, took);

    let args = json!({ "pane_id": first, "direction": "right" });
    let (pane, took) = client.call("split_window", args).await?;
    let second = pane["pane_id"].as_str().context("pane_id")?.to_owned();
    client.step(
        "split_window",
        &format!("pane {second} to the right of {first}"),
        took,
    );
    Ok((first, second))
}

/// A command the agent runs, then output it did not author.
async fn commands(client: &mut Client, pane: &str) -> anyhow::Result<()> {
    let command = "printf 'hello from %s\\n' tmux-mcp; exit 3";
    let args = json!({ "pane_id": pane, "command": command, "timeout": 10 });
    let (run, took) = client.call("run_command", args).await?;
    if run["output"] != json!(["hello from tmux-mcp"]) || run["exit_status"] != json!(3) {
        bail!("run_command did not return the command's own output and status: {run}");
    }
    let detail = format!("`{command}` printed \"hello from tmux-mcp\", exit status 3");
    client.step("run_command", &detail, took);

    // The line is stamped by bash's $EPOCHREALTIME as echo (a builtin)
    // prints it, so the wait's answer is timed against the moment the pane
    // printed it. Without bash 5 the stamp is empty and no lag is shown.
    let keys = "sleep 1; bash -c 'echo READY-$((40+2)) $EPOCHREALTIME'";
    let args = json!({ "pane_id": pane, "keys": keys });
    let (_, took) = client.call("send_keys", args).await?;
    client.step(
        "send_keys",
        &format!("typed `{keys}`; nothing waits on it yet"),
        took,
    );

    let args = json!({ "pane_id": pane, "patterns": ["READY-42"], "timeout": 10 });
    let (waited, took) = client.call("wait_for_text", args).await?;
    let answered = SystemTime::now();
    if waited["found"] != json!(true) {
        bail!("wait_for_text did not see READY-42: {waited}");
    }
    let line = waited["matched_lines"][0].as_str().unwrap_or_default();
    let detail = match printed_at(line) {
        Some(printed) => {
            let lag = answered.duration_since(printed).unwrap_or_default();
            format!(
                "woken by the output: answered {} after the pane printed READY-42",
                ms(lag)
            )
        }
        None => format!("woken by the output: {line}"),
    };
    client.step("wait_for_text", &detail, took);
    Ok(())
}

/// The `$EPOCHREALTIME` stamp (seconds, a `.` or `,` and microseconds) at
/// the end of `READY-42 <stamp>`.
fn printed_at(line: &str) -> Option<SystemTime> {
    let stamp = line.split_whitespace().nth(1)?.replace(',', ".");
    let seconds: f64 = stamp
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0)?;
    Some(UNIX_EPOCH + Duration::from_secs_f64(seconds))
}

async fn screen(client: &mut Client, first: &str, second: &str) -> anyhow::Result<()> {
    let args = json!({ "pane_id": first, "max_lines": 8 });
    let (snapshot, took) = client.call("snapshot_pane", args).await?;
    let content = snapshot["content"].as_str().unwrap_or_default();
    let lines: Vec<&str> = content.lines().filter(|l| !l.trim().is_empty()).collect();
    let Some(ready) = lines.iter().find(|l| l.starts_with("READY-42")) else {
        bail!("the pane does not show the command's output: {content:?}");
    };
    let detail = format!(
        "{first}'s last {} non-empty lines (max_lines=8) include {ready:?}",
        lines.len()
    );
    client.step("snapshot_pane", &detail, took);

    let (panes, took) = client
        .call("list_panes", json!({ "session_name": "agent" }))
        .await?;
    let sizes: Vec<String> = panes
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let id = p["pane_id"].as_str().unwrap_or("?");
            let w = p["pane_width"].as_str().unwrap_or("?");
            let h = p["pane_height"].as_str().unwrap_or("?");
            format!("{id} {w}x{h}")
        })
        .collect();
    let detail = format!("{} panes in agent: {}", sizes.len(), sizes.join(", "));
    client.step("list_panes", &detail, took);

    let format = "#{pane_current_command} in #{pane_current_path}";
    let args = json!({ "pane_id": second, "format_string": format });
    let (shown, took) = client.call("display_message", args).await?;
    let detail = format!("{second} runs {}", shown.as_str().unwrap_or("?"));
    client.step("display_message", &detail, took);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_is_read_in_either_decimal_mark_and_refused_when_absent() {
        let at = |line| printed_at(line).map(|t| t.duration_since(UNIX_EPOCH).unwrap());
        assert_eq!(
            at("READY-42 12.500000"),
            Some(Duration::from_millis(12_500))
        );
        assert_eq!(
            at("READY-42 12,250000"),
            Some(Duration::from_millis(12_250))
        );
        assert_eq!(at("READY-42 "), None, "bash without EPOCHREALTIME");
        assert_eq!(at("READY-42 NaN"), None);
    }
}
