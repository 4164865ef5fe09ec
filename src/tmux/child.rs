//! tmux as a child process: the `tmux -C` child behind a control client
//! ([`LocalTmux`], a [`Transport`]), and the one-shot `tmux` process that
//! runs a single command (here; over ssh in [`super::ssh`]; either, for a
//! hub, in [`super::oneshot`]).
//!
//! Everything here is about processes: spawning with `$TMUX` removed (so
//! our `-S` alone picks the server), reaping so no child lingers, and the
//! child's stderr, which is read and logged (bounded) rather than left to
//! fill its pipe. What is spoken over the pipe is [`super::connection`]'s.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use super::pipe::{Pipe, Transport};
use super::{SessionId, TmuxError};

/// Control clients as `tmux -C` children of this process, on one socket.
///
/// The child is attached with
/// `tmux -u -N -S <path> -C attach-session -t $id -f FLAGS`: `-u` keeps
/// non-ASCII intact in list output, `-N` never starts a server, `-S` pins
/// the socket whatever `$TMUX` says; the flags are the role's
/// ([`super::connection::Role::attach_flags`]).
pub struct LocalTmux {
    pub tmux_bin: PathBuf,
    pub socket: PathBuf,
}

impl Transport for LocalTmux {
    fn open(&self, session: SessionId, flags: &str) -> Result<Pipe, TmuxError> {
        let mut command = tmux(&self.tmux_bin);
        command
            .arg("-S")
            .arg(&self.socket)
            .args(attach_args(session, flags));
        let label = format!("tmux -C {session} on {}", self.socket.display());
        spawn(command, label)
    }
}

impl LocalTmux {
    /// Runs `tmux -u -S <socket> ARGV...` to completion (see [`finish`]).
    pub async fn run(
        &self,
        argv: Vec<OsString>,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Finished, TmuxError> {
        let mut command = tmux(&self.tmux_bin);
        command.arg("-S").arg(&self.socket).args(argv);
        command.stdin(Stdio::null());
        finish(command, timeout, cancel).await
    }
}

/// What follows `tmux -u [socket]` for a control client of `session`:
/// `-N -C attach-session -t $id -f FLAGS` (the role's flags, see
/// `Role::attach_flags`).
pub fn attach_args(session: SessionId, flags: &str) -> Vec<OsString> {
    ["-N", "-C", "attach-session", "-t"]
        .into_iter()
        .map(OsString::from)
        .chain([session.to_string().into()])
        .chain(["-f", flags].map(OsString::from))
        .collect()
}

/// `tmux -u`, with the caller's `$TMUX` and `$TMUX_PANE` removed.
fn tmux(tmux_bin: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(tmux_bin);
    command
        .arg("-u")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .kill_on_drop(true);
    command
}

/// Starts `command` with its stdio piped: its stdout and stdin become the
/// pipe, its stderr is logged under `label`. Any program that speaks control
/// mode on its stdio can be behind a control client this way.
pub fn spawn(mut command: tokio::process::Command, label: String) -> Result<Pipe, TmuxError> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| spawn_error(&command, e))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(TmuxError::Io("child pipes missing".into()));
    };
    tokio::spawn(log_stderr(stderr, label));
    Ok(Pipe {
        reader: Box::new(stdout),
        writer: Box::new(stdin),
        child: Some(child),
    })
}

fn spawn_error(command: &tokio::process::Command, e: std::io::Error) -> TmuxError {
    let program = Path::new(command.as_std().get_program());
    TmuxError::Io(format!("{}: {e}", program.display()))
}

/// What a finished one-shot process printed.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `command` (its stdin already chosen) to completion and reads what
/// it printed. When `timeout` passes ([`TmuxError::Timeout`]) or `cancel`
/// fires ([`TmuxError::Cancelled`]) the process is killed and reaped before
/// this returns.
pub async fn finish(
    mut command: tokio::process::Command,
    timeout: Duration,
    cancel: Option<&CancellationToken>,
) -> Result<Finished, TmuxError> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(&command, e))?;
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(TmuxError::Io("child output pipes missing".into()));
    };
    let finished = async {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        tokio::try_join!(out.read_to_end(&mut stdout), err.read_to_end(&mut stderr))?;
        let status = child.wait().await?;
        Ok::<_, std::io::Error>(Finished {
            status,
            stdout,
            stderr,
        })
    };
    let cancelled = async {
        match cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        done = finished => Ok(done),
        _ = tokio::time::sleep(timeout) => Err(TmuxError::Timeout(timeout)),
        _ = cancelled => Err(TmuxError::Cancelled),
    };
    match outcome {
        Ok(done) => done.map_err(|e| TmuxError::Io(e.to_string())),
        Err(e) => {
            // SIGKILL and reap: no tmux client outlives the call.
            let _ = child.kill().await;
            Err(e)
        }
    }
}

/// The most of one stderr line that is logged; the rest is cut.
const STDERR_LINE: usize = 512;
/// The most stderr lines logged per child; later ones are only counted.
const STDERR_LINES: usize = 20;

/// Logs a child's stderr line by line until it closes. A chatty or hostile
/// child costs a bounded amount of memory and of our own stderr.
async fn log_stderr(mut stderr: impl AsyncRead + Unpin, label: String) {
    let mut lines = StderrLines::default();
    let mut buf = [0u8; 4096];
    let mut done = Vec::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        lines.push(&buf[..n], &mut done);
        for line in done.drain(..) {
            eprintln!("tmux-mcp: {label}: {line}");
        }
    }
    lines.finish(&mut done);
    for line in done {
        eprintln!("tmux-mcp: {label}: {line}");
    }
}

/// Splits stderr bytes into bounded lines to log: each at most
/// [`STDERR_LINE`] bytes, at most [`STDERR_LINES`] of them, then a count.
#[derive(Default)]
struct StderrLines {
    line: Vec<u8>,
    cut: bool,
    logged: usize,
    dropped: usize,
}

impl StderrLines {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        for &b in bytes {
            if b == b'\n' {
                self.end_line(out);
            } else if self.line.len() < STDERR_LINE {
                self.line.push(b);
            } else {
                self.cut = true;
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<String>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        if self.dropped > 0 {
            out.push(format!("({} more stderr lines not shown)", self.dropped));
        }
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = std::mem::take(&mut self.line);
        let cut = std::mem::take(&mut self.cut);
        if self.logged == STDERR_LINES {
            self.dropped += 1;
            return;
        }
        self.logged += 1;
        let mut text = String::from_utf8_lossy(&line).into_owned();
        if cut {
            text.push_str(" [cut]");
        }
        out.push(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_lines_are_bounded_in_length_and_number() {
        let mut lines = StderrLines::default();
        let mut out = Vec::new();
        lines.push(b"open terminal failed\npart", &mut out);
        assert_eq!(out, ["open terminal failed"]);
        lines.push(b"ial\n", &mut out);
        assert_eq!(out[1], "partial");
        lines.push(&vec![b'x'; STDERR_LINE + 10], &mut out);
        lines.push(b"\n", &mut out);
        assert_eq!(out[2], format!("{} [cut]", "x".repeat(STDERR_LINE)));
        for _ in 0..STDERR_LINES + 5 {
            lines.push(b"again\n", &mut out);
        }
        lines.push(b"no newline", &mut out);
        lines.finish(&mut out);
        assert_eq!(out.len(), STDERR_LINES + 1);
        assert_eq!(out.last().unwrap(), "(9 more stderr lines not shown)");
    }

    #[tokio::test]
    async fn a_missing_tmux_is_an_io_error_naming_it() {
        let tmux = LocalTmux {
            tmux_bin: "/nonexistent/tmux".into(),
            socket: "/nonexistent/socket".into(),
        };
        match tmux.open(SessionId(0), "ignore-size") {
            Err(TmuxError::Io(msg)) => assert!(msg.starts_with("/nonexistent/tmux: "), "{msg}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("spawned a missing binary"),
        }
    }
}
