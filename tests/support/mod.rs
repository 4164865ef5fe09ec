//! Shared test support: a private tmux server that is always killed.

pub mod mcp;
pub mod pty;
pub mod soak;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};
use tmux_mcp::config::Config;
use tmux_mcp::mcp::{CallContext, CallToolResult, Logger, Outbox, Progress, RequestGate, Service};
use tmux_mcp::tools::{App, TmuxService};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a live test waits for an event before it fails.
pub const BOUND: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a tmux command of a test may take before its server counts as
/// hung.
pub const CMD_BOUND: std::time::Duration = std::time::Duration::from_secs(20);

/// A tmux server on its own socket (`-L tmuxmcp-test-<pid>-<n>`, no config
/// file), killed when dropped, even when the test panics.
pub struct PrivateTmux {
    pub name: String,
    /// The server's process, as started (killed at drop if `kill-server`
    /// did not end it).
    first_pid: Option<u32>,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl PrivateTmux {
    /// Starts a server with one session `main` (200x50, a plain `sh`).
    pub fn start() -> PrivateTmux {
        PrivateTmux::start_in(&std::env::current_dir().expect("a working directory"))
    }

    /// [`PrivateTmux::start`], with the server working in `dir`: where
    /// `pipe-pane` commands and new panes start.
    pub fn start_in(dir: &Path) -> PrivateTmux {
        let name = format!(
            "tmuxmcp-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut tmux = PrivateTmux {
            name,
            first_pid: None,
        };
        let started = tmux
            .command()
            .current_dir(dir)
            .args(sized_as_asked(&[
                "new-session",
                "-d",
                "-s",
                "main",
                "-x",
                "200",
                "-y",
                "50",
                "env PS1='$ ' sh",
            ]))
            .output()
            .expect("tmux runs");
        assert!(
            started.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        // New windows and panes run a plain sh too: the machine's own shell
        // start-up files (pyenv, conda...) can take seconds and are not ours
        // to test.
        tmux.cmd(&["set-option", "-g", "default-command", "env PS1='$ ' sh"]);
        tmux.first_pid = tmux.server_pid();
        tmux
    }

    /// A name for a server this does not start (a test starts it, or
    /// none); a server found under it is killed at drop all the same.
    pub fn named(name: String) -> PrivateTmux {
        PrivateTmux {
            name,
            first_pid: None,
        }
    }

    /// The release the server reports.
    pub fn version(&self) -> tmux_mcp::tmux::version::Version {
        let reported = self.cmd(&["display-message", "-p", "#{version}"]);
        tmux_mcp::tmux::version::Version::parse(reported.as_bytes())
            .unwrap_or(tmux_mcp::tmux::version::Version::UNKNOWN)
    }

    /// The live server's process id, if it answers.
    fn server_pid(&self) -> Option<u32> {
        let out = self.try_cmd(&["display-message", "-p", "#{pid}"]);
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// Runs `tmux -L <name> -f /dev/null <args>` and returns stdout; panics on failure.
    pub fn cmd(&self, args: &[&str]) -> String {
        let out = self.try_cmd(args);
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `tmux -L <name> -f /dev/null <args>`; a server that does not
    /// answer within [`CMD_BOUND`] (hung, not dead) is a failed command
    /// that says so, not a test that never ends. Output goes to files, not
    /// pipes: tmux hands a client's descriptors to its server, so a pipe
    /// stays open while a stopped server holds it, after the client is
    /// killed.
    pub fn try_cmd(&self, args: &[&str]) -> std::process::Output {
        static N: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir().join(format!(
            "tmuxmcp-cmd-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let paths = [base.with_extension("out"), base.with_extension("err")];
        let [out, err] = paths
            .each_ref()
            .map(|p| std::fs::File::create(p).expect("a temp file"));
        let mut child = self
            .command()
            .args(sized_as_asked(args))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("tmux runs");
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let (status, answered) = match rx.recv_timeout(CMD_BOUND) {
            Ok(status) => (status.expect("tmux runs"), true),
            Err(_) => {
                // SAFETY: kill(2) on the client we spawned, not yet reaped
                // (its waiting thread reaps it once it has died).
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                (
                    rx.recv().expect("the waiting thread").expect("tmux runs"),
                    false,
                )
            }
        };
        let [stdout, mut stderr] = paths.map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            let _ = std::fs::remove_file(&p);
            bytes
        });
        if !answered {
            stderr = format!("tmux {args:?} did not answer within {CMD_BOUND:?}").into_bytes();
        }
        std::process::Output {
            status,
            stdout,
            stderr,
        }
    }

    /// `tmux -L <name> -f /dev/null`, outside any tmux session.
    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.name, "-f", "/dev/null"])
            .env_remove("TMUX");
        command
    }

    /// A tmux-mcp service pointed at this server through `LIBTMUX_SOCKET`.
    pub fn service(&self) -> TmuxService {
        self.service_with(&[])
    }

    pub fn service_with(&self, extra: &[(&str, &str)]) -> TmuxService {
        let name = self.name.clone();
        let extra: Vec<(String, String)> = extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (config, _) = Config::from_vars(|var| {
            if let Some((_, v)) = extra.iter().find(|(k, _)| k == var) {
                return Some(v.clone());
            }
            match var {
                "LIBTMUX_SOCKET" => Some(name.clone()),
                "TMUX_TMPDIR" => std::env::var("TMUX_TMPDIR").ok(),
                _ => None,
            }
        })
        .expect("config");
        TmuxService::new(App::new(config))
    }

    /// The id of the first pane of session `main`.
    pub fn first_pane(&self) -> String {
        self.cmd(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .trim()
            .to_owned()
    }

    /// Whether `tmux wait-for -S <channel>` runs on this server (the event)
    /// within `timeout`.
    pub async fn signalled(&self, channel: &str, timeout: std::time::Duration) -> bool {
        let mut child = tokio::process::Command::new("tmux")
            .args(["-L", &self.name, "wait-for", channel])
            .env_remove("TMUX")
            .kill_on_drop(true)
            .spawn()
            .expect("tmux wait-for");
        match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => status.expect("wait").success(),
            Err(_) => false,
        }
    }

    /// Blocks until `channel` is signalled, or fails after `timeout`.
    pub async fn wait_for(&self, channel: &str, timeout: std::time::Duration) {
        assert!(
            self.signalled(channel, timeout).await,
            "channel {channel} was not signalled within {timeout:?}"
        );
    }

    /// Waits until `pane`'s foreground command is `command` (a shell that
    /// execs, or a program typed at a prompt), failing after [`BOUND`].
    pub async fn until_foreground(&self, pane: &str, command: &str) {
        let started = std::time::Instant::now();
        let format = "#{pane_current_command}";
        while self
            .cmd(&["display-message", "-p", "-t", pane, format])
            .trim()
            != command
        {
            assert!(started.elapsed() < BOUND, "{pane} never ran {command}");
            // tmux has no event for it: re-read, leaving the 2 cores to the
            // shell being waited for.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Re-reads `pane`'s text (scrollback and screen, wrapped rows joined,
    /// each row without trailing spaces) until `cond` holds, and returns
    /// it; fails after [`BOUND`] showing the last text read. tmux has no
    /// event for what a pane shows.
    pub async fn until_text(&self, pane: &str, cond: impl Fn(&str) -> bool) -> String {
        let started = std::time::Instant::now();
        loop {
            let captured = self.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", pane]);
            // tmux 3.2a's `-J` keeps the blank cells a row was cleared to;
            // later releases leave them out.
            let text: String = captured
                .lines()
                .map(|row| format!("{}\n", row.trim_end_matches(' ')))
                .collect();
            if cond(&text) {
                return text;
            }
            assert!(started.elapsed() < BOUND, "{pane} never showed it:\n{text}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The socket name (`tmux -L`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn socket_path(&self) -> PathBuf {
        PathBuf::from(
            self.cmd(&["display-message", "-p", "#{socket_path}"])
                .trim(),
        )
    }
}

impl Drop for PrivateTmux {
    fn drop(&mut self) {
        let current = self.server_pid();
        let _ = self.try_cmd(&["kill-server"]);
        // A server that did not take the kill-server (seen once, its socket
        // then removed below and the server left running) is killed by pid,
        // if that pid is still a tmux of this test's name.
        for pid in [self.first_pid, current].into_iter().flatten() {
            // One argument is the name itself (`-L NAME`), not a longer one.
            let ours = std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == self.name.as_bytes()));
            if ours {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
        // tmux 3.3a leaves its socket file behind after kill-server (and a
        // test may have killed the server already, so the path is computed).
        let tmpdir = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
        let dir = tmux_mcp::tmux::socket::socket_dir(std::path::Path::new(&tmpdir));
        let _ = std::fs::remove_file(dir.join(&self.name));
    }
}

/// Calls a tool and returns its result.
pub async fn call(service: &TmuxService, name: &str, args: Value) -> CallToolResult {
    let fut = service
        .call_tool(name, args, CallContext::detached())
        .unwrap_or_else(|| panic!("no tool {name}"));
    fut.await
}

/// Calls a tool that must succeed and returns its structured content
/// (unwrapped from `{"result": …}` for string and list results).
pub async fn ok(service: &TmuxService, name: &str, args: Value) -> Value {
    let result = call(service, name, args).await;
    assert!(!result.is_error, "{name} failed: {:?}", result.content);
    let value = result.structured_content.expect("structured content");
    let value = match value.get("result") {
        Some(inner) if value.as_object().is_some_and(|o| o.len() == 1) => inner.clone(),
        _ => value,
    };
    assert_text_mirrors(name, &result.content, &value);
    value
}

/// The text a model reads is the structured value once, as compact JSON
/// (a string result as the bare string, an empty list as no block); a
/// listing's text leaves out null fields and those its model names.
fn assert_text_mirrors(name: &str, content: &[Value], value: &Value) {
    let texts: Vec<&str> = content.iter().filter_map(|b| b["text"].as_str()).collect();
    if value.as_array().is_some_and(Vec::is_empty) && texts.is_empty() {
        return;
    }
    use tmux_mcp::tools::shared::models::{PaneInfo, SessionInfo};
    let left_out = match name {
        "list_panes" => Some(PaneInfo::LEFT_OUT_OF_TEXT),
        "list_sessions" => Some(SessionInfo::LEFT_OUT_OF_TEXT),
        _ => None,
    };
    if let Some(left_out) = left_out {
        let lean = |v: &Value| -> Value {
            let mut v = v.clone();
            if let Some(map) = v.as_object_mut() {
                map.retain(|k, f| !f.is_null() && !left_out.contains(&k.as_str()));
            }
            v
        };
        let expected: Vec<Value> = value.as_array().expect("a list").iter().map(lean).collect();
        assert_eq!(texts.len(), 1, "{name}: one text block");
        let text: Value = serde_json::from_str(texts[0]).expect("the text is JSON");
        assert_eq!(text, Value::Array(expected), "{name}: the lean text copy");
        return;
    }
    let expected = match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap(),
    };
    assert_eq!(texts, [expected.as_str()], "{name}: the text copy");
}

/// Calls a tool that must fail and returns its error text.
pub async fn err(service: &TmuxService, name: &str, args: Value) -> String {
    let result = call(service, name, args).await;
    assert!(
        result.is_error,
        "{name} should have failed: {:?}",
        result.structured_content
    );
    result.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub fn shared(service: TmuxService) -> Arc<TmuxService> {
    Arc::new(service)
}

/// The most bytes a result may take on the wire when the caller did not
/// ask for more.
pub const RESULT_BOUND: usize = 64 * 1024;

/// Calls a tool that must succeed and returns its structured content (as
/// [`ok`]) and the size of the whole result as JSON, both copies included.
pub async fn ok_sized(service: &TmuxService, name: &str, args: Value) -> (Value, usize) {
    let result = call(service, name, args.clone()).await;
    let size = serde_json::to_string(&result).expect("encodes").len();
    assert!(!result.is_error, "{name} failed: {:?}", result.content);
    let value = result.structured_content.expect("structured content");
    match value.get("result") {
        Some(inner) if value.as_object().is_some_and(|o| o.len() == 1) => (inner.clone(), size),
        _ => (value, size),
    }
}

/// Starts a tool call with a progress token; returns once the call has sent
/// its first progress notification (for wait_for_text: armed).
pub async fn start_armed(
    svc: &TmuxService,
    tool: &str,
    args: Value,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<CallToolResult> {
    let (handle, mut progress) = start_with_progress(svc, tool, args, cancel);
    let armed = tokio::time::timeout(BOUND, progress.recv())
        .await
        .expect("armed in time");
    assert!(armed.is_some(), "the call ended before it was armed");
    handle
}

/// Starts a tool call with a progress token; the receiver gets the params
/// of each progress notification it sends.
pub fn start_with_progress(
    svc: &TmuxService,
    tool: &str,
    args: Value,
    cancel: CancellationToken,
) -> (
    tokio::task::JoinHandle<CallToolResult>,
    mpsc::UnboundedReceiver<Value>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = CallContext {
        cancel,
        progress: Progress::new(Some(json!("t")), Outbox(tx), RequestGate::new()),
        log: Logger::none(),
        client: None,
        ask: tmux_mcp::mcp::Asker::none(),
    };
    let call = svc.call_tool(tool, args, ctx).expect("tool exists");
    let handle = tokio::spawn(call);
    let (params_tx, params) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let value = serde_json::to_value(message).expect("serializes");
            assert_eq!(value["method"], "notifications/progress", "{value}");
            if params_tx.send(value["params"].clone()).is_err() {
                break;
            }
        }
    });
    (handle, params)
}

/// The next progress report, within the bound.
pub async fn next_report(progress: &mut mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(BOUND, progress.recv())
        .await
        .expect("a progress report in time")
        .expect("the call still runs")
}

pub async fn finish(handle: tokio::task::JoinHandle<CallToolResult>) -> Value {
    let result = tokio::time::timeout(BOUND, handle)
        .await
        .expect("finished in time")
        .expect("no panic");
    assert!(!result.is_error, "{:?}", result.content);
    result.structured_content.expect("structured")
}

/// Whether `shell` is installed for a test of `what` in it. A missing shell
/// is a failure in CI (`.ci/run` installs it); elsewhere the test says
/// `SKIPPED` straight to stderr (the harness captures `eprintln!` of a
/// passing test, and a skip must be seen).
pub fn shell_installed(shell: &str, what: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {shell}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{shell} is not installed, and CI must test it (.ci/run installs it)"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {what} in {shell}: {shell} is not installed (apt-get install {shell})"
        );
    }
    found
}

/// `args`, and when they make a session, the commands that size its window
/// as tmux 3.3 on does. tmux 3.2a sizes the first window of a detached
/// `new-session` by the CLI client itself (80x23), not by its `-x`/`-y`;
/// `resize-window -a` sizes it by the session's `default-size` (which `-x`
/// and `-y` set) and unsetting `window-size` lets it follow clients again.
/// On other releases the window already has that size.
fn sized_as_asked<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut argv = args.to_vec();
    if args.first() == Some(&"new-session") {
        argv.extend([
            ";",
            "resize-window",
            "-a",
            ";",
            "set-option",
            "-wu",
            "window-size",
        ]);
    }
    argv
}
