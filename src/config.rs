//! Environment and flags turned into one validated [`Config`].
//!
//! The environment variables are the reference server's (libtmux-mcp), so a
//! user switching servers keeps their settings. Every bound the server
//! enforces lives here too, so there is one place to read them.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::process::ProbeKind;
pub use crate::tmux::hosts::{Host, Hosts};
use crate::tmux::socket::SocketSpec;

/// Validated settings. Nothing downstream re-validates these.
#[derive(Clone, Debug)]
pub struct Config {
    /// Socket used when a call names none (`LIBTMUX_SOCKET`, `LIBTMUX_SOCKET_PATH`).
    pub default_socket: SocketSpec,
    /// `LIBTMUX_SOCKET_PATH`: when set it wins over a per-call `socket_name`,
    /// exactly as in the reference (`-S` beats `-L` in tmux).
    pub forced_socket_path: Option<PathBuf>,
    /// `LIBTMUX_TMUX_BIN`, default `tmux`.
    pub tmux_bin: PathBuf,
    /// `TMUX_TMPDIR` (default `/tmp`): where tmux keeps `tmux-<uid>/<name>`.
    pub tmux_tmpdir: PathBuf,
    /// Ceiling for every wait (`LIBTMUX_MCP_WAIT_MAX_SECONDS`, 1–120, default 30).
    pub wait_max: Duration,
    /// Default of `run_command.suppress_history` (`LIBTMUX_SUPPRESS_HISTORY`).
    pub suppress_history: bool,
    /// Who we are, if this server runs inside tmux (`TMUX`, `TMUX_PANE`).
    pub caller: Caller,
    /// `LIBTMUX_MCP_PROMPTS_AS_TOOLS=1`: also serve the prompts as tools.
    pub prompts_as_tools: bool,
    /// Write the audit line of every tool call to stderr (an INFO record in
    /// the reference: `FASTMCP_LOG_LEVEL` set to WARNING or above turns it off).
    pub audit: bool,
    /// The remote hosts a call may reach (`TMUX_MCP_HOSTS`, `TMUX_MCP_SSH`).
    pub hosts: Hosts,
    /// What the tools may reach on a tmux server (`TMUX_MCP_SCOPE`).
    pub scope: Scope,
    /// `TMUX_MCP_CONFIRM=teardown`: kill_server, kill_session and
    /// kill_window ask the person first (MCP elicitation), and fail closed.
    pub confirm_teardown: bool,
    /// The pane user options `wait_for_attention` follows
    /// (`TMUX_MCP_ATTENTION_OPTIONS`, comma-separated).
    pub attention_options: Vec<String>,
    pub limits: Limits,
}

/// Every buffer bound in one place.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Output bytes queued for a client that does not read before stdin is
    /// no longer read (backpressure).
    pub stdout_queue: usize,
    /// Longest JSON-RPC line accepted on stdin.
    pub stdin_line: usize,
    /// Longest line accepted from a control client.
    pub tmux_line: usize,
    /// Most output bytes kept from one command reply.
    pub tmux_reply: usize,
    /// How long one tmux command may take before the call fails.
    pub tmux_command_timeout: Duration,
    /// How long attaching a control client may take (user configs can be slow).
    pub attach_timeout: Duration,
    /// Most bytes of text a tool returns (tail kept, truncation stated).
    pub tool_result: usize,
    /// Output history kept per watched pane.
    pub pane_ring: usize,
    /// Panes whose output is recorded at once, per tmux server.
    pub watched_panes: usize,
    /// A control client with nothing watched detaches after this long
    /// (`TMUX_MCP_IDLE_DETACH_SECONDS`, default 30; `0` keeps clients:
    /// `None`).
    pub idle_detach: Option<Duration>,
    /// Streaming clients attached at once per tmux server
    /// (`TMUX_MCP_STREAMING_CLIENTS`, default 16): each costs tmux work on
    /// every command, the user's too.
    pub streaming_clients: usize,
    /// Input into a pane that asks for a password is typed anyway
    /// (`TMUX_MCP_SECRET_INPUT=allow`, for test passwords); by default it
    /// is refused and the person is told.
    pub secret_input: bool,
    /// A person's client that sent keys this recently, looking at the
    /// target pane, has the floor: agent input waits
    /// (`TMUX_MCP_HUMAN_QUIET_MS`, default 1500; `0`: never waits, `None`).
    pub human_quiet: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stdout_queue: crate::mcp::server::DEFAULT_MAX_QUEUED,
            stdin_line: 64 << 20,
            tmux_line: 64 << 20,
            tmux_reply: 256 << 20,
            tmux_command_timeout: Duration::from_secs(10),
            attach_timeout: Duration::from_secs(15),
            tool_result: 1_000_000,
            pane_ring: 4 << 20,
            watched_panes: 64,
            idle_detach: Some(Duration::from_secs(30)),
            streaming_clients: 16,
            secret_input: false,
            human_quiet: Some(Duration::from_millis(1500)),
        }
    }
}

/// The caller's identity, parsed from `TMUX=socket_path,pid,session` and `TMUX_PANE`.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    pub socket_path: Option<PathBuf>,
    pub pane_id: Option<String>,
}

/// A warning to print once logging is up (bad but non-fatal settings).
pub type Warnings = Vec<String>;

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> anyhow::Result<(Config, Warnings)> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads settings through `var`, so tests need not touch the real environment.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<(Config, Warnings)> {
        let mut warnings = Vec::new();
        let suppress_history = match var("LIBTMUX_SUPPRESS_HISTORY").as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(_) => bail!("LIBTMUX_SUPPRESS_HISTORY must be unset, '0', or '1'"),
        };
        let wait_max = wait_ceiling(var("LIBTMUX_MCP_WAIT_MAX_SECONDS"), &mut warnings);
        // Refused here, at start; the probe reads it from the process
        // environment itself (one per machine, see ProbeKind::chosen).
        ProbeKind::parse(var("TMUX_MCP_PROBE").as_deref()).map_err(anyhow::Error::msg)?;
        let non_empty = |name: &str| var(name).filter(|v| !v.is_empty());
        let hosts = Hosts::parse(
            var("TMUX_MCP_HOSTS").as_deref(),
            var("TMUX_MCP_SSH").as_deref(),
        )?;
        let forced_socket_path = non_empty("LIBTMUX_SOCKET_PATH").map(PathBuf::from);
        let default_socket = match (&forced_socket_path, non_empty("LIBTMUX_SOCKET")) {
            (Some(path), _) => SocketSpec::Path(path.clone()),
            (None, Some(name)) => SocketSpec::parse(&name, &hosts).context("LIBTMUX_SOCKET")?,
            (None, None) => SocketSpec::Default,
        };
        let caller = Caller {
            socket_path: var("TMUX")
                .and_then(|t| t.split(',').next().map(str::to_owned))
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            pane_id: non_empty("TMUX_PANE"),
        };
        let config = Config {
            default_socket,
            forced_socket_path,
            tmux_bin: non_empty("LIBTMUX_TMUX_BIN")
                .unwrap_or_else(|| "tmux".into())
                .into(),
            tmux_tmpdir: non_empty("TMUX_TMPDIR")
                .unwrap_or_else(|| "/tmp".into())
                .into(),
            wait_max,
            suppress_history,
            caller,
            prompts_as_tools: var("LIBTMUX_MCP_PROMPTS_AS_TOOLS").as_deref() == Some("1"),
            audit: !var("FASTMCP_LOG_LEVEL").is_some_and(|l| {
                ["WARNING", "ERROR", "CRITICAL"].contains(&l.trim().to_uppercase().as_str())
            }),
            hosts,
            scope: Scope::parse(var("TMUX_MCP_SCOPE"))?,
            confirm_teardown: confirm(var("TMUX_MCP_CONFIRM"))?,
            attention_options: attention_options(var("TMUX_MCP_ATTENTION_OPTIONS"))?,
            limits: Limits {
                idle_detach: idle_detach(var("TMUX_MCP_IDLE_DETACH_SECONDS"))?,
                streaming_clients: streaming_clients(var("TMUX_MCP_STREAMING_CLIENTS"))?,
                secret_input: secret_input(var("TMUX_MCP_SECRET_INPUT"))?,
                human_quiet: human_quiet(var("TMUX_MCP_HUMAN_QUIET_MS"))?,
                ..Limits::default()
            },
        };
        Ok((config, warnings))
    }
}

/// The user options agents announce themselves in, by default.
pub const ATTENTION_OPTIONS: [&str; 3] = ["@status", "@agent_status", "@claude_status"];

/// `TMUX_MCP_ATTENTION_OPTIONS`: pane user options (`@name`, letters,
/// digits, `_` and `-`), comma-separated, at most 16.
fn attention_options(text: Option<String>) -> anyhow::Result<Vec<String>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(ATTENTION_OPTIONS.map(String::from).to_vec());
    };
    let names: Vec<String> = text.split(',').map(|n| n.trim().to_owned()).collect();
    let good = |n: &String| {
        n.len() > 1
            && n.starts_with('@')
            && n[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    if names.len() > 16 || !names.iter().all(good) {
        bail!(
            "TMUX_MCP_ATTENTION_OPTIONS must be up to 16 comma-separated user options such as @status, not {text:?}"
        );
    }
    Ok(names)
}

const WAIT_MAX_DEFAULT: f64 = 30.0;

/// What the tools may reach on a tmux server (`TMUX_MCP_SCOPE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Everything (the reference's behaviour).
    #[default]
    Server,
    /// The session this MCP server runs in (`TMUX_PANE`), plus what it made.
    Session,
    /// Only the sessions, windows and panes this server made (maker marks).
    Owned,
}

impl Scope {
    fn parse(raw: Option<String>) -> anyhow::Result<Scope> {
        match raw.as_deref().map(str::trim) {
            None | Some("") | Some("server") => Ok(Scope::Server),
            Some("session") => Ok(Scope::Session),
            Some("owned") => Ok(Scope::Owned),
            Some(text) => {
                bail!("TMUX_MCP_SCOPE must be unset, 'server', 'session' or 'owned', not {text:?}")
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Server => "server",
            Scope::Session => "session",
            Scope::Owned => "owned",
        }
    }
}

fn idle_detach(raw: Option<String>) -> anyhow::Result<Option<Duration>> {
    let Some(text) = raw.filter(|t| !t.trim().is_empty()) else {
        return Ok(Limits::default().idle_detach);
    };
    match text.trim().parse::<f64>() {
        Ok(0.0) => Ok(None),
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => {
            Ok(Some(Duration::from_secs_f64(secs)))
        }
        _ => bail!(
            "TMUX_MCP_IDLE_DETACH_SECONDS must be a number of seconds from 0 (never detach) to 86400, not {text:?}"
        ),
    }
}

fn streaming_clients(raw: Option<String>) -> anyhow::Result<usize> {
    let Some(text) = raw.filter(|t| !t.trim().is_empty()) else {
        return Ok(Limits::default().streaming_clients);
    };
    match text.trim().parse::<usize>() {
        Ok(n @ 1..=1024) => Ok(n),
        _ => {
            bail!("TMUX_MCP_STREAMING_CLIENTS must be a whole number from 1 to 1024, not {text:?}")
        }
    }
}

fn confirm(raw: Option<String>) -> anyhow::Result<bool> {
    match raw.as_deref().map(str::trim) {
        None | Some("") | Some("none") => Ok(false),
        Some("teardown") => Ok(true),
        Some(text) => bail!("TMUX_MCP_CONFIRM must be unset, 'none' or 'teardown', not {text:?}"),
    }
}

fn secret_input(raw: Option<String>) -> anyhow::Result<bool> {
    match raw.as_deref().map(str::trim) {
        None | Some("") | Some("refuse") => Ok(false),
        Some("allow") => Ok(true),
        Some(text) => {
            bail!("TMUX_MCP_SECRET_INPUT must be unset, 'refuse' or 'allow', not {text:?}")
        }
    }
}

fn human_quiet(raw: Option<String>) -> anyhow::Result<Option<Duration>> {
    let Some(text) = raw.filter(|t| !t.trim().is_empty()) else {
        return Ok(Limits::default().human_quiet);
    };
    match text.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(ms @ 1..=60_000) => Ok(Some(Duration::from_millis(ms))),
        _ => bail!(
            "TMUX_MCP_HUMAN_QUIET_MS must be a whole number of milliseconds from 0 (off) to 60000, not {text:?}"
        ),
    }
}

fn wait_ceiling(raw: Option<String>, warnings: &mut Warnings) -> Duration {
    let secs = match raw.as_deref().map(str::trim) {
        None | Some("") => WAIT_MAX_DEFAULT,
        Some(text) => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                let clamped = v.clamp(1.0, 120.0);
                if clamped != v {
                    warnings.push(format!(
                        "LIBTMUX_MCP_WAIT_MAX_SECONDS={v} clamped to {clamped}"
                    ));
                }
                clamped
            }
            _ => {
                warnings.push(format!(
                    "LIBTMUX_MCP_WAIT_MAX_SECONDS={text:?} is not a finite number; using {WAIT_MAX_DEFAULT}"
                ));
                WAIT_MAX_DEFAULT
            }
        },
    };
    Duration::from_secs_f64(secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> anyhow::Result<(Config, Warnings)> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_match_the_reference() {
        let (c, w) = config(&[]).unwrap();
        assert!(w.is_empty());
        assert!(c.suppress_history);
        assert_eq!(c.wait_max, Duration::from_secs(30));
        assert_eq!(c.tmux_bin, PathBuf::from("tmux"));
        assert!(matches!(c.default_socket, SocketSpec::Default));
    }

    #[test]
    fn wait_ceiling_is_clamped_with_a_warning() {
        let (c, w) = config(&[("LIBTMUX_MCP_WAIT_MAX_SECONDS", "500")]).unwrap();
        assert_eq!(c.wait_max, Duration::from_secs(120));
        assert_eq!(w.len(), 1);
        let (c, w) = config(&[("LIBTMUX_MCP_WAIT_MAX_SECONDS", "nan")]).unwrap();
        assert_eq!(c.wait_max, Duration::from_secs(30));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn log_level_silences_the_audit_and_prompts_become_tools_on_request() {
        assert!(config(&[]).unwrap().0.audit);
        assert!(!config(&[("FASTMCP_LOG_LEVEL", "warning")]).unwrap().0.audit);
        assert!(config(&[("FASTMCP_LOG_LEVEL", "DEBUG")]).unwrap().0.audit);
        assert!(!config(&[]).unwrap().0.prompts_as_tools);
        assert!(
            config(&[("LIBTMUX_MCP_PROMPTS_AS_TOOLS", "1")])
                .unwrap()
                .0
                .prompts_as_tools
        );
    }

    #[test]
    fn teardown_asks_first_only_when_set() {
        assert!(!config(&[]).unwrap().0.confirm_teardown);
        assert!(
            !config(&[("TMUX_MCP_CONFIRM", "none")])
                .unwrap()
                .0
                .confirm_teardown
        );
        let (c, _) = config(&[("TMUX_MCP_CONFIRM", "teardown")]).unwrap();
        assert!(c.confirm_teardown);
        assert!(config(&[("TMUX_MCP_CONFIRM", "yes")]).is_err());
        assert!(config(&[("TMUX_MCP_PROBE", "portable")]).is_ok());
        assert!(config(&[("TMUX_MCP_PROBE", "auto")]).is_ok());
        let err = config(&[("TMUX_MCP_PROBE", "proc")]).unwrap_err();
        assert!(format!("{err:#}").contains("TMUX_MCP_PROBE"), "{err:#}");
    }

    #[test]
    fn bad_suppress_history_fails_startup() {
        assert!(config(&[("LIBTMUX_SUPPRESS_HISTORY", "yes")]).is_err());
        assert!(
            !config(&[("LIBTMUX_SUPPRESS_HISTORY", "0")])
                .unwrap()
                .0
                .suppress_history
        );
    }

    #[test]
    fn hosts_are_aliases_of_ssh_destinations() {
        let (c, _) = config(&[]).unwrap();
        assert_eq!(c.hosts, Hosts::default());
        assert_eq!(c.hosts.ssh, PathBuf::from("ssh"));
        let (c, _) = config(&[
            (
                "TMUX_MCP_HOSTS",
                " gpu=me@gpu.example , build=buildbox,ip=10.0.0.2",
            ),
            ("TMUX_MCP_SSH", "/opt/ssh"),
        ])
        .unwrap();
        let pairs: Vec<(&str, &str)> = c
            .hosts
            .hosts
            .iter()
            .map(|h| (h.alias.as_str(), h.destination.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("gpu", "me@gpu.example"),
                ("build", "buildbox"),
                ("ip", "10.0.0.2")
            ]
        );
        assert_eq!(c.hosts.ssh, PathBuf::from("/opt/ssh"));
        assert_eq!(c.hosts.get("build").unwrap().destination, "buildbox");
        assert!(c.hosts.get("nope").is_none());
        assert_eq!(c.hosts.aliases(), "gpu, build, ip");
    }

    #[test]
    fn malformed_hosts_fail_startup_naming_the_entry() {
        for (bad, says) in [
            ("gpu", "no '='"),
            ("gpu=", "destination"),
            ("=host", "alias"),
            ("a:b=host", "alias"),
            ("a b=host", "alias"),
            ("gpu=-oProxyCommand=x", "destination"),
            ("gpu=two words", "destination"),
            ("gpu=a,,b=c", "expected ALIAS=DESTINATION"),
            ("gpu=a,gpu=b", "twice"),
        ] {
            let err = config(&[("TMUX_MCP_HOSTS", bad)]).unwrap_err();
            let text = format!("{err:#}");
            assert!(text.contains("TMUX_MCP_HOSTS"), "{bad}: {text}");
            assert!(text.contains(says), "{bad}: {text}");
        }
        assert!(
            config(&[("TMUX_MCP_HOSTS", "  ")])
                .unwrap()
                .0
                .hosts
                .hosts
                .is_empty()
        );
    }

    #[test]
    fn idle_detach_and_streaming_clients_are_validated() {
        let limits = |k, v| config(&[(k, v)]).map(|(c, _)| c.limits);
        assert_eq!(
            limits("TMUX_MCP_IDLE_DETACH_SECONDS", "0")
                .unwrap()
                .idle_detach,
            None
        );
        assert_eq!(
            limits("TMUX_MCP_IDLE_DETACH_SECONDS", "2.5")
                .unwrap()
                .idle_detach,
            Some(Duration::from_millis(2500))
        );
        for bad in ["-1", "soon", "inf", "1e9"] {
            assert!(
                limits("TMUX_MCP_IDLE_DETACH_SECONDS", bad).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            limits("TMUX_MCP_STREAMING_CLIENTS", "4")
                .unwrap()
                .streaming_clients,
            4
        );
        assert!(limits("TMUX_MCP_STREAMING_CLIENTS", "0").is_err());
        let defaults = limits("TMUX_MCP_HUMAN_QUIET_MS", "").unwrap();
        assert_eq!(defaults.human_quiet, Some(Duration::from_millis(1500)));
        assert!(!defaults.secret_input);
        assert_eq!(
            limits("TMUX_MCP_HUMAN_QUIET_MS", "0").unwrap().human_quiet,
            None
        );
        assert_eq!(
            limits("TMUX_MCP_HUMAN_QUIET_MS", "250")
                .unwrap()
                .human_quiet,
            Some(Duration::from_millis(250))
        );
        for bad in ["-1", "1.5", "soon", "60001"] {
            assert!(limits("TMUX_MCP_HUMAN_QUIET_MS", bad).is_err(), "{bad}");
        }
        assert!(
            limits("TMUX_MCP_SECRET_INPUT", "allow")
                .unwrap()
                .secret_input
        );
        assert!(
            !limits("TMUX_MCP_SECRET_INPUT", "refuse")
                .unwrap()
                .secret_input
        );
        assert!(limits("TMUX_MCP_SECRET_INPUT", "yes").is_err());
    }

    #[test]
    fn socket_path_wins_and_caller_is_parsed() {
        let (c, _) = config(&[
            ("LIBTMUX_SOCKET", "a"),
            ("LIBTMUX_SOCKET_PATH", "/tmp/x"),
            ("TMUX", "/tmp/tmux-0/default,12,3"),
            ("TMUX_PANE", "%4"),
        ])
        .unwrap();
        assert!(
            matches!(c.default_socket, SocketSpec::Path(ref p) if p == &PathBuf::from("/tmp/x"))
        );
        assert_eq!(
            c.caller.socket_path,
            Some(PathBuf::from("/tmp/tmux-0/default"))
        );
        assert_eq!(c.caller.pane_id.as_deref(), Some("%4"));
    }
}
