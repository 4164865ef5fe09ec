//! tmux on another machine, over ssh: each control client is one
//! `ssh -T DEST tmux -u -C attach-session …` process, and one-shot commands
//! are `ssh DEST tmux …` processes that ride the host's shared connection.
//!
//! Every ssh we start shares one `ControlMaster` per host (`ControlPath` in a
//! private directory of ours, `ControlPersist` so it outlives a detach), so
//! only the first process pays the handshake. ssh runs with
//! `BatchMode=yes` and a stdin of its own: our stdin is the MCP channel, and
//! nothing may ever prompt on it. `-C` (not `-CC`, which needs a terminal)
//! speaks the same control mode as a local client.
//!
//! The remote side runs our command through the remote user's shell, so
//! every word of it goes through [`remote_quote`], tested on every byte
//! value in sh, dash, bash, zsh and fish.
//!
//! A host that failed to connect is not asked again at once: until its
//! backoff passes, calls fail fast with the last error (ssh's own words).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::backoff::Backoff;
use super::child::{self, Finished};
use super::command::UnsendableArg;
use super::hosts::Host;
use super::pipe::{Pipe, Transport};
use super::{SessionId, TmuxError};
use crate::process::{TermMode, parse_stty};

/// How long an idle master connection outlives its last client.
const CONTROL_PERSIST: Duration = Duration::from_secs(300);
/// ssh's keepalive: a connection that stops answering is dropped after
/// `SERVER_ALIVE × SERVER_ALIVE_COUNT`.
const SERVER_ALIVE: Duration = Duration::from_secs(5);
const SERVER_ALIVE_COUNT: u32 = 3;
/// Failed connections back off from this, doubling up to the most.
const BACKOFF_START: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(8);
/// ssh's exit status for its own failures (the remote command's otherwise).
const SSH_FAILED: i32 = 255;

/// What every ssh we start shares: the program and the private directory
/// that holds the master connections' sockets.
pub struct Ssh {
    program: PathBuf,
    /// Created (mode 0700) on first use, removed at shutdown.
    control_dir: PathBuf,
    created: Mutex<bool>,
    connect_timeout: Duration,
}

impl Ssh {
    /// `program` is `TMUX_MCP_SSH`; ssh gives up connecting after
    /// `connect_timeout`, so a host that does not answer fails within a
    /// command's time.
    pub fn new(program: PathBuf, connect_timeout: Duration) -> Arc<Ssh> {
        // Short, so `<dir>/%C` (40 hex digits) fits a socket path.
        let control_dir = std::env::temp_dir().join(format!(
            "tmux-mcp-ssh-{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ));
        Arc::new(Ssh {
            program,
            control_dir,
            created: Mutex::new(false),
            connect_timeout,
        })
    }

    /// The private directory of master sockets, created if need be.
    fn control_dir(&self) -> Result<&Path, TmuxError> {
        let mut created = self.created.lock().expect("control dir lock");
        if !*created {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&self.control_dir)
                .map_err(|e| TmuxError::Ssh(format!("{}: {e}", self.control_dir.display())))?;
            *created = true;
        }
        Ok(&self.control_dir)
    }

    /// Removes the private directory (its masters have been told to exit).
    pub fn remove_dir(&self) {
        if std::mem::take(&mut *self.created.lock().expect("control dir lock")) {
            let _ = std::fs::remove_dir_all(&self.control_dir);
        }
    }
}

impl Drop for Ssh {
    fn drop(&mut self) {
        self.remove_dir();
    }
}

/// One configured host: its destination, and whether it is backing off.
pub struct SshHost {
    ssh: Arc<Ssh>,
    pub host: Host,
    /// Failed connections, and what ssh said of the last.
    backoff: Mutex<(Backoff, String)>,
}

impl SshHost {
    pub fn new(ssh: Arc<Ssh>, host: Host) -> Arc<SshHost> {
        Arc::new(SshHost {
            ssh,
            host,
            backoff: Mutex::new((Backoff::new(BACKOFF_START, BACKOFF_MAX), String::new())),
        })
    }

    /// `ssh -T -o …`: what every ssh to this host is started with.
    fn ssh(&self) -> Result<tokio::process::Command, TmuxError> {
        let dir = self.ssh.control_dir()?;
        let mut command = tokio::process::Command::new(&self.ssh.program);
        command.arg("-T");
        for option in [
            "BatchMode=yes".to_owned(),
            "ControlMaster=auto".to_owned(),
            format!("ControlPath={}/%C", dir.display()),
            format!("ControlPersist={}", CONTROL_PERSIST.as_secs()),
            format!("ServerAliveInterval={}", SERVER_ALIVE.as_secs()),
            format!("ServerAliveCountMax={SERVER_ALIVE_COUNT}"),
            format!(
                "ConnectTimeout={}",
                self.ssh.connect_timeout.as_secs().max(1)
            ),
            "LogLevel=ERROR".to_owned(),
        ] {
            command.arg("-o").arg(option);
        }
        command.kill_on_drop(true);
        Ok(command)
    }

    /// `ssh <options> -- DEST <remote line>`, stdio not yet chosen.
    fn command(&self, remote: &[&OsStr]) -> Result<tokio::process::Command, TmuxError> {
        let mut command = self.ssh()?;
        command
            .arg("--")
            .arg(&self.host.destination)
            .arg(OsStr::from_bytes(&remote_line(remote)?));
        Ok(command)
    }

    /// Fails fast while a failed connection backs off.
    fn check_backoff(&self) -> Result<(), TmuxError> {
        let (backoff, error) = &*self.backoff.lock().expect("backoff lock");
        match backoff.remaining() {
            Some(left) => Err(TmuxError::Ssh(format!(
                "{error} (tried again in {:.1}s)",
                left.as_secs_f64()
            ))),
            None => Ok(()),
        }
    }

    fn record(&self, failure: Option<String>) {
        let (backoff, error) = &mut *self.backoff.lock().expect("backoff lock");
        match failure {
            Some(said) => {
                backoff.failed();
                *error = said;
            }
            None => backoff.succeeded(),
        }
    }

    /// Runs `remote` (words, each quoted for the remote shell) to completion
    /// over the host's shared connection. ssh's own failures are
    /// [`TmuxError::Ssh`], in ssh's words, and start the host's backoff.
    pub async fn run(
        &self,
        remote: &[&OsStr],
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Finished, TmuxError> {
        self.check_backoff()?;
        let mut command = self.command(remote)?;
        command.stdin(Stdio::null());
        let done = child::finish(command, timeout, cancel)
            .await
            .map_err(not_started)?;
        if done.status.code() == Some(SSH_FAILED) {
            let said = String::from_utf8_lossy(&done.stderr).trim().to_owned();
            let error = format!(
                "ssh to {} ({}) failed: {}",
                self.host.alias,
                self.host.destination,
                if said.is_empty() { "no message" } else { &said }
            );
            self.record(Some(error.clone()));
            return Err(TmuxError::Ssh(error));
        }
        self.record(None);
        Ok(done)
    }

    /// The names of the sockets in the remote user's tmux socket directory
    /// (live servers or stale files: callers ask each).
    pub async fn socket_names(&self, timeout: Duration) -> Result<Vec<String>, TmuxError> {
        let done = self
            .run(
                &[OsStr::new("sh"), OsStr::new("-c"), OsStr::new(LIST_SOCKETS)],
                timeout,
                None,
            )
            .await?;
        Ok(String::from_utf8_lossy(&done.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// The settings (`ICANON`, `ECHO`) of the terminal `tty` on the host
    /// (tmux's `pane_tty` there), read by `stty -a` over the host's shared
    /// connection: the terminal is opened as stty's input, read-only, and
    /// only its settings are read, never its data. `None` when stty could
    /// not tell (no such terminal, or another user's).
    pub async fn terminal_mode(
        &self,
        tty: &str,
        timeout: Duration,
    ) -> Result<Option<TermMode>, TmuxError> {
        let done = self
            .run(
                &[
                    OsStr::new("sh"),
                    OsStr::new("-c"),
                    OsStr::new(STTY),
                    OsStr::new("sh"),
                    OsStr::new(tty),
                ],
                timeout,
                None,
            )
            .await?;
        Ok(done
            .status
            .success()
            .then(|| parse_stty(&done.stdout))
            .flatten())
    }

    /// Asks the host's master connection to exit (bounded), if one was
    /// ever started.
    pub async fn close(&self) {
        if !*self.ssh.created.lock().expect("control dir lock") {
            return;
        }
        let Ok(mut exit) = self.ssh() else { return };
        exit.args(["-O", "exit", "--"])
            .arg(&self.host.destination)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let _ = tokio::time::timeout(Duration::from_secs(2), exit.status()).await;
    }
}

/// `stty -a` on the terminal named by `$1` (`-F` is GNU's alone; a
/// redirection works with every stty).
const STTY: &str = r#"exec stty -a < "$1""#;

/// Lists the sockets where tmux keeps them, as tmux computes the directory.
const LIST_SOCKETS: &str = r#"d="${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)"; for s in "$d"/*; do [ -S "$s" ] && printf '%s\n' "${s##*/}"; done; true"#;

/// The control clients and one-shot commands of one tmux server on a host:
/// `tmux -u [-L NAME] …` run there.
pub struct SshTransport {
    pub host: Arc<SshHost>,
    /// The remote `-L` name; `None`: the remote user's default server.
    pub socket: Option<String>,
}

impl SshTransport {
    /// `tmux -u [-L NAME]`, the start of every remote tmux command line.
    fn tmux(&self) -> Vec<&OsStr> {
        let mut words = vec![OsStr::new("tmux"), OsStr::new("-u")];
        if let Some(name) = &self.socket {
            words.extend([OsStr::new("-L"), OsStr::new(name)]);
        }
        words
    }

    /// Runs `tmux -u [-L NAME] ARGV…` on the host, like
    /// [`LocalTmux::run`](child::LocalTmux::run) does here.
    pub async fn run(
        &self,
        argv: &[OsString],
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Finished, TmuxError> {
        let mut words = self.tmux();
        words.extend(argv.iter().map(OsString::as_os_str));
        self.host.run(&words, timeout, cancel).await
    }
}

impl Transport for SshTransport {
    fn open(&self, session: SessionId, flags: &str) -> Result<Pipe, TmuxError> {
        self.host.check_backoff()?;
        let attach = child::attach_args(session, flags);
        let mut words = self.tmux();
        words.extend(attach.iter().map(OsString::as_os_str));
        let command = self.host.command(&words)?;
        let label = format!(
            "ssh {} tmux -C {session} on {}",
            self.host.host.alias,
            self.socket.as_deref().unwrap_or("default")
        );
        child::spawn(command, label).map_err(not_started)
    }
}

/// A missing ssh program is the user's setting to fix, not tmux's.
fn not_started(e: TmuxError) -> TmuxError {
    match e {
        TmuxError::Io(msg) => TmuxError::Ssh(format!(
            "could not run ssh: {msg} (TMUX_MCP_SSH names the ssh program; set it to ssh's full path)"
        )),
        other => other,
    }
}

/// The remote command line: each word quoted, joined by spaces.
fn remote_line(words: &[&OsStr]) -> Result<Vec<u8>, TmuxError> {
    let mut line = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(&remote_quote(word.as_bytes())?);
    }
    Ok(line)
}

/// Quotes one word for the remote user's shell: sh, dash, bash, ksh, zsh
/// or fish (csh is not supported).
///
/// Runs of bytes are single-quoted, where POSIX shells take every byte
/// literally; `'` and `\` are written outside the quotes as `\'` and `\\`,
/// because fish reads those two escapes even inside single quotes. NUL
/// cannot be carried in a command line at all.
pub fn remote_quote(word: &[u8]) -> Result<Vec<u8>, UnsendableArg> {
    if word.contains(&0) {
        return Err(UnsendableArg);
    }
    if word.is_empty() {
        return Ok(b"''".to_vec());
    }
    let mut out = Vec::with_capacity(word.len() + 2);
    let mut open = false;
    for &b in word {
        let outside = b == b'\'' || b == b'\\';
        if outside == open {
            out.push(b'\'');
            open = !open;
        }
        if outside {
            out.push(b'\\');
        }
        out.push(b);
    }
    if open {
        out.push(b'\'');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn quoting_shape() {
        assert_eq!(remote_quote(b"").unwrap(), b"''");
        assert_eq!(remote_quote(b"a b").unwrap(), b"'a b'");
        assert_eq!(remote_quote(b"it's").unwrap(), b"'it'\\''s'");
        assert_eq!(remote_quote(b"\\").unwrap(), b"\\\\");
        assert_eq!(remote_quote(b"a\\'b").unwrap(), b"'a'\\\\\\''b'");
        assert_eq!(remote_quote(b"x\0"), Err(UnsendableArg));
    }

    /// Every byte value but NUL, alone, in pairs with the specials, and all
    /// together, survives each shell installed here as one word.
    #[test]
    fn every_byte_survives_every_shell() {
        let mut words: Vec<Vec<u8>> = (1..=255u8).map(|b| vec![b]).collect();
        for special in [b'\'', b'\\', b'"', b'$', b'\n', b'!'] {
            words.push(vec![special, special]);
            words.push(vec![b'a', special, b'\\', b'b', special]);
        }
        words.push((1..=255u8).collect());
        words.push(b"".to_vec());
        words.push("é€😀 {a,b} *".as_bytes().to_vec());
        let mut tested = 0;
        for shell in ["sh", "dash", "bash", "zsh", "fish"] {
            if Command::new(shell).arg("-c").arg("true").output().is_err() {
                eprintln!("SKIPPED on {shell}: not installed");
                continue;
            }
            // printf is the external one: fish and zsh builtins differ.
            let mut line = b"/usr/bin/printf '%s\\000'".to_vec();
            for word in &words {
                line.push(b' ');
                line.extend(remote_quote(word).unwrap());
            }
            let out = Command::new(shell)
                .arg("-c")
                .arg(OsStr::from_bytes(&line))
                .output()
                .unwrap();
            assert!(out.status.success(), "{shell}: {:?}", out);
            let got: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
            assert_eq!(got.len(), words.len() + 1, "{shell}");
            for (word, got) in words.iter().zip(got) {
                assert_eq!(got, word.as_slice(), "{shell}: {word:?}");
            }
            tested += 1;
        }
        assert!(tested >= 3, "fewer than three shells to test with");
    }

    #[test]
    fn the_remote_line_is_one_quoted_word_each() {
        let line = remote_line(&[OsStr::new("tmux"), OsStr::new("-L"), OsStr::new("a b")]);
        assert_eq!(line.unwrap(), b"'tmux' '-L' 'a b'");
    }

    /// A pty of our own (master kept open, never read or written): the
    /// slave, and its path.
    fn pty() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd, String) {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let (mut master, mut slave) = (-1, -1);
        // SAFETY: openpty writes two descriptors; the rest may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty");
        // SAFETY: both were just opened for us.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        // SAFETY: a zeroed buffer of the right size for ttyname_r.
        let mut name = [0u8; 128];
        let rc =
            unsafe { libc::ttyname_r(slave.as_raw_fd(), name.as_mut_ptr().cast(), name.len()) };
        assert_eq!(rc, 0, "ttyname_r");
        let end = name.iter().position(|b| *b == 0).unwrap();
        (
            master,
            slave,
            String::from_utf8(name[..end].to_vec()).unwrap(),
        )
    }

    /// The remote terminal's settings, through a stand-in ssh that runs the
    /// remote line with `sh` here (what sshd does there): the line is
    /// quoted, stty reads the pty, and echo off with icanon on is secret.
    #[tokio::test]
    async fn a_remote_terminal_mode_is_read_with_stty() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tmuxmcp-fake-ssh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("ssh");
        std::fs::write(
            &program,
            "#!/bin/sh\neval \"line=\\${$#}\"\nexec sh -c \"$line\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ssh = Ssh::new(program, Duration::from_secs(5));
        let host = SshHost::new(
            ssh,
            Host {
                alias: "here".into(),
                destination: "localhost".into(),
            },
        );
        let (_master, slave, path) = pty();
        let read = || host.terminal_mode(&path, Duration::from_secs(10));
        let mode = read().await.expect("ran").expect("stty told");
        assert!(mode.canonical && mode.echo && !mode.is_secret(), "{mode:?}");
        // SAFETY: termios is plain data, filled by tcgetattr on an open fd.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(slave.as_raw_fd(), &mut t) }, 0);
        t.c_lflag &= !libc::ECHO;
        assert_eq!(
            unsafe { libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t) },
            0
        );
        let mode = read().await.expect("ran").expect("stty told");
        assert!(mode.is_secret(), "{mode:?}");
        let none = host.terminal_mode("/nonexistent/pts/9", Duration::from_secs(10));
        assert_eq!(none.await.expect("ran"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
