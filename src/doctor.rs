//! `tmux-mcp doctor`: whether this environment can work, and the fix for
//! each set-up mistake MCP clients are known to cause.
//!
//! Each check prints one line, `ok`, `note` or `FAIL`, with what it saw;
//! the exit status is 1 if any check failed (then no tool call can work).
//! tmux is run with argv only (`-V`, `-S <path> list-sessions`), never
//! through a shell.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;

use crate::config::{Config, Scope};
use crate::process::{self, ProbeKind};
use crate::tmux::version::{Features, Version};
use crate::tools::service::settings;
use crate::tools::toolsets::Toolset;
use crate::tools::{App, TmuxService};

/// Where tmux usually lives when a GUI client's PATH does not reach it.
const USUAL_PLACES: [&str; 4] = [
    "/opt/homebrew/bin/tmux",
    "/usr/local/bin/tmux",
    "/usr/bin/tmux",
    "/run/current-system/sw/bin/tmux",
];

#[derive(Default)]
struct Report {
    failed: bool,
}

impl Report {
    fn ok(&mut self, what: &str, detail: impl AsRef<str>) {
        println!("ok    {what}: {}", detail.as_ref());
    }

    fn note(&mut self, what: &str, detail: impl AsRef<str>) {
        println!("note  {what}: {}", detail.as_ref());
    }

    fn fail(&mut self, what: &str, detail: impl AsRef<str>) {
        self.failed = true;
        println!("FAIL  {what}: {}", detail.as_ref());
    }
}

pub fn run() -> ExitCode {
    let mut report = Report::default();
    println!("tmux-mcp {} doctor", env!("CARGO_PKG_VERSION"));
    let (config, _, selection) = match settings() {
        Ok(settings) => settings,
        Err(e) => {
            report.fail("settings", format!("{e:#}"));
            return ExitCode::FAILURE;
        }
    };
    let tmux = check_tmux(&mut report, &config);
    let app = App::with_selection(config.clone(), selection);
    if let Some(tmux) = &tmux {
        check_socket(&mut report, &app, tmux);
    }
    check_toolsets(&mut report, &app);
    check_caller(&mut report);
    check_scope(&mut report, &config);
    check_probe(&mut report);
    report.note(
        "clients",
        "Claude Code: `claude mcp add --scope user tmux -- tmux-mcp` serves every project \
         (the default scope is one directory); each client's set-up: docs/clients.md",
    );
    if report.failed {
        println!("\nSome checks failed: tool calls cannot work until they pass.");
        ExitCode::FAILURE
    } else {
        println!("\nReady: an MCP client that starts `tmux-mcp` with this environment can work.");
        ExitCode::SUCCESS
    }
}

/// The tmux binary and its version; `None` if it cannot run.
fn check_tmux(report: &mut Report, config: &Config) -> Option<PathBuf> {
    let configured = &config.tmux_bin;
    let found = if configured.components().count() > 1 {
        Some(configured.clone())
    } else {
        on_path(configured)
    };
    let source = if std::env::var_os("LIBTMUX_TMUX_BIN").is_some() {
        "LIBTMUX_TMUX_BIN"
    } else {
        "PATH"
    };
    let Some(path) = found else {
        let elsewhere = USUAL_PLACES.iter().find(|p| Path::new(p).exists());
        let hint = match elsewhere {
            Some(place) => format!("it is at {place}: set LIBTMUX_TMUX_BIN={place}"),
            None => "install tmux, or set LIBTMUX_TMUX_BIN to its full path".into(),
        };
        report.fail(
            "tmux",
            format!("{} is not on this PATH; {hint}", configured.display()),
        );
        return None;
    };
    match Command::new(&path).arg("-V").output() {
        Ok(out) if out.status.success() => {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            report.ok(
                "tmux",
                format!("{} ({version}, from {source})", path.display()),
            );
            let release = Version::parse(version.as_bytes()).unwrap_or(Version::UNKNOWN);
            if !release.is_supported() {
                report.fail(
                    "tmux",
                    format!(
                        "tmux {release} is older than {}, the oldest release tmux-mcp supports: \
                         calls to its servers are refused; upgrade tmux",
                        Version::OLDEST
                    ),
                );
            }
            if let Some(note) = zoom_crash_note(release) {
                report.note("tmux", note);
            }
            if source == "PATH" && !path.starts_with("/usr/bin") && !path.starts_with("/bin") {
                report.note(
                    "tmux",
                    format!(
                        "GUI clients (Claude Desktop on macOS) start servers with a shorter PATH; \
                         if calls fail with \"could not run tmux\", set LIBTMUX_TMUX_BIN={}",
                        path.display()
                    ),
                );
            }
            Some(path)
        }
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            report.fail(
                "tmux",
                format!("{} -V failed: {}", path.display(), stderr.trim()),
            );
            None
        }
        Err(e) => {
            report.fail(
                "tmux",
                format!(
                    "could not run {}: {e}; set LIBTMUX_TMUX_BIN to tmux's full path",
                    path.display()
                ),
            );
            None
        }
    }
}

/// What a person should know about a release that crashes when a zoomed
/// window is destroyed ([`Features::unzoom_before_teardown`]): our kill
/// tools unzoom first, a kill typed by hand does not.
fn zoom_crash_note(version: Version) -> Option<String> {
    Features::of(version).unzoom_before_teardown.then(|| {
        format!(
            "tmux {version} crashes when a person zooms a window (prefix z) and then kills \
             its session or the server by hand; unzoom first (our kill tools do; \
             protocol/tmux-control.md §7e)"
        )
    })
}

fn on_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The socket calls use by default, and whether a server answers there.
fn check_socket(report: &mut Report, app: &App, tmux: &Path) {
    let config = &app.config;
    let Ok(target) = app.socket(None) else {
        report.fail("socket", "the configured socket is invalid");
        return;
    };
    let Some(socket) = target.hub.local_socket().map(Path::to_path_buf) else {
        report.ok(
            "socket",
            format!("{} (a remote host, over ssh)", target.hub.address()),
        );
        return;
    };
    let chosen_by = if config.forced_socket_path.is_some() {
        "LIBTMUX_SOCKET_PATH"
    } else if std::env::var_os("LIBTMUX_SOCKET").is_some() {
        "LIBTMUX_SOCKET"
    } else if config.caller.socket_path.is_some() {
        "$TMUX: the server this process runs inside"
    } else {
        "tmux's default"
    };
    report.ok("socket", format!("{} ({chosen_by})", socket.display()));
    let listed = Command::new(tmux)
        .arg("-S")
        .arg(&socket)
        .args(["list-sessions", "-F", "#{version} #{session_name}"])
        .env_remove("TMUX")
        .output();
    match listed {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let rows: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(' ')).collect();
            let names: Vec<&str> = rows.iter().map(|&(_, name)| name).collect();
            let release = rows
                .first()
                .and_then(|&(v, _)| Version::parse(v.as_bytes()));
            if let Some(release) = release.filter(|r| !r.is_supported()) {
                report.fail(
                    "server",
                    format!(
                        "it runs tmux {release}, older than {}, the oldest release tmux-mcp \
                         supports: calls to it are refused; upgrade tmux and restart the server",
                        Version::OLDEST
                    ),
                );
            }
            let shown: Vec<&str> = names.iter().take(5).copied().collect();
            let more = names.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            report.ok(
                "server",
                format!(
                    "answers, {} session(s): {}{more}",
                    names.len(),
                    shown.join(", ")
                ),
            );
        }
        _ => report.note(
            "server",
            "no tmux server answers there yet; create_session starts one",
        ),
    }
}

fn check_toolsets(report: &mut Report, app: &Arc<App>) {
    let selection = &app.selection;
    let count = TmuxService::new(app.clone()).served().len();
    report.ok(
        "toolsets",
        format!("{} ({count} tools)", selection.describe()),
    );
    if !selection.toolsets.contains(&Toolset::Teardown) {
        report.note(
            "toolsets",
            "teardown (kill_*, clear_pane, delete_buffer) is off; \
             LIBTMUX_TOOLSETS=inspect,manage,execute,teardown serves it",
        );
    }
}

/// `TMUX_MCP_SCOPE`: what the tools reach.
fn check_scope(report: &mut Report, config: &Config) {
    let reach = match config.scope {
        Scope::Server => {
            "every session, window and pane of the server (TMUX_MCP_SCOPE=session or owned narrows it)"
        }
        Scope::Session => "the session this server runs in (TMUX_PANE) and what it creates",
        Scope::Owned => "only the sessions, windows and panes this server creates",
    };
    report.ok("scope", format!("{}: {reach}", config.scope.as_str()));
    if config.scope == Scope::Session && config.caller.pane_id.is_none() {
        report.note(
            "scope",
            "TMUX_PANE is not set: scope session reaches only what this server creates",
        );
    }
}

/// Which process probe tells pane states (`TMUX_MCP_PROBE`), and whether
/// what it reads is there.
fn check_probe(report: &mut Report) {
    let kind = ProbeKind::chosen();
    let from = match std::env::var("TMUX_MCP_PROBE") {
        Ok(v) if !v.trim().is_empty() => format!("TMUX_MCP_PROBE={}", v.trim()),
        _ => "auto".into(),
    };
    let sees = kind.best().join(", ");
    let works = match kind {
        ProbeKind::Linux => std::fs::metadata("/proc/self/stat").is_ok(),
        ProbeKind::Portable => process::ps::groups_of(std::process::id()).is_some(),
    };
    let how = match kind {
        ProbeKind::Linux => "/proc, tcgetattr, pidfd exit events",
        ProbeKind::Portable => "ps, tcgetattr, kill(pid, 0); no exit events",
    };
    if works {
        report.ok(
            "probe",
            format!("{} ({from}; {how}): sees {sees}", kind.name()),
        );
    } else {
        report.note(
            "probe",
            format!(
                "{} ({from}) cannot read processes here; pane states come from tmux \
                 (prompt, running, exited), and a password prompt is told by its terminal only",
                kind.name()
            ),
        );
    }
}

/// `TMUX`/`TMUX_PANE`: some clients pass only a fixed list of variables.
fn check_caller(report: &mut Report) {
    let tmux = std::env::var("TMUX").ok().filter(|v| !v.is_empty());
    let pane = std::env::var("TMUX_PANE").ok().filter(|v| !v.is_empty());
    match (tmux, pane) {
        (Some(tmux), Some(pane)) => report.ok(
            "caller",
            format!(
                "inside tmux: TMUX={tmux}, TMUX_PANE={pane}; calls default to that server \
                 and pane {pane} is marked is_caller and guarded"
            ),
        ),
        (Some(_), None) => report.note(
            "caller",
            "TMUX arrived but TMUX_PANE did not: the caller's own pane is not guarded; \
             pass TMUX_PANE too (Codex CLI: env_vars = [\"TMUX\", \"TMUX_PANE\", \"TMUX_TMPDIR\"])",
        ),
        (None, _) => report.note(
            "caller",
            "TMUX and TMUX_PANE are not set: right outside tmux. If the MCP client runs \
             inside tmux, it did not pass them (Codex CLI needs env_vars = [\"TMUX\", \
             \"TMUX_PANE\", \"TMUX_TMPDIR\"]; see docs/clients.md)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zoom_crash_is_noted_only_for_the_releases_that_have_it() {
        let note = |v: &str| zoom_crash_note(Version::parse(v.as_bytes()).unwrap());
        for safe in ["tmux 3.3a", "tmux 3.5a", "tmux 3.7c"] {
            assert_eq!(note(safe), None, "{safe}");
        }
        let text = note("tmux 3.4").expect("3.4 crashes");
        assert!(text.starts_with("tmux 3.4 crashes"), "{text}");
        assert!(text.contains("§7e") && !text.contains('\n'), "{text}");
        assert!(
            note("tmux next-3.8")
                .unwrap()
                .starts_with("tmux 3.8 crashes")
        );
    }
}
