//! What can go wrong talking to tmux, in the few kinds callers branch on.

use std::fmt;
use std::time::Duration;

use super::command::UnsendableArg;
use super::version::Version;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmuxError {
    /// tmux ran the command and refused it: the `%error` block's text, or a
    /// one-shot process's stderr.
    Command(String),
    /// No tmux server answers on this socket.
    NoServer(String),
    /// The control client went away before it replied.
    Disconnected,
    /// The control client went away before the command was written to it:
    /// tmux never saw the command.
    NotSent,
    /// tmux did not reply in time (a command allowed to wait, such as
    /// `wait-for`).
    Timeout(Duration),
    /// The server did not answer an ordinary command within the command
    /// timeout: its socket accepts, but it is stopped or stuck.
    NotResponding(Duration),
    /// An argument cannot be expressed as a tmux command.
    Unsendable(UnsendableArg),
    /// The reply was larger than the configured bound.
    Overflow,
    /// Starting or talking to a tmux process failed.
    Io(String),
    /// The caller gave up (the request was cancelled) before tmux finished.
    Cancelled,
    /// ssh could not reach a remote host, in ssh's words.
    Ssh(String),
    /// The server's release is older than the oldest supported; nothing
    /// was sent to it.
    Unsupported(Version),
}

impl fmt::Display for TmuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmuxError::Command(msg) => write!(f, "tmux error: {msg}"),
            TmuxError::NoServer(msg) => {
                write!(f, "no tmux server is running on this socket ({msg})")
            }
            TmuxError::Disconnected => {
                f.write_str("the tmux control connection closed before tmux replied")
            }
            TmuxError::NotSent => {
                f.write_str("the tmux control connection closed before the command was sent")
            }
            TmuxError::Timeout(d) => write!(f, "tmux did not reply within {:.1}s", d.as_secs_f64()),
            TmuxError::NotResponding(d) => write!(
                f,
                "tmux server is not responding: no reply within {:.1}s (it accepts connections but answers nothing; it may be stopped or stuck)",
                d.as_secs_f64()
            ),
            TmuxError::Unsendable(e) => e.fmt(f),
            TmuxError::Overflow => {
                f.write_str("the tmux reply was larger than the configured bound")
            }
            // Most often a GUI client started us with a PATH that lacks
            // tmux (Homebrew's /opt/homebrew/bin on macOS).
            TmuxError::Io(msg) => write!(
                f,
                "could not run tmux: {msg} (if tmux is installed, set LIBTMUX_TMUX_BIN to its \
                 full path in the MCP client's env for this server; `command -v tmux` prints it)"
            ),
            TmuxError::Cancelled => f.write_str("the request was cancelled"),
            TmuxError::Ssh(msg) => f.write_str(msg),
            TmuxError::Unsupported(version) => write!(
                f,
                "this tmux server is tmux {version}, older than {}, the oldest release \
                 tmux-mcp supports; nothing was sent to it (upgrade tmux and restart the server)",
                Version::OLDEST
            ),
        }
    }
}

impl std::error::Error for TmuxError {}

impl From<UnsendableArg> for TmuxError {
    fn from(e: UnsendableArg) -> Self {
        TmuxError::Unsendable(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tmux_that_cannot_start_names_the_variable_that_fixes_it() {
        let text = TmuxError::Io("tmux: No such file or directory".into()).to_string();
        assert!(
            text.starts_with("could not run tmux: tmux: No such file"),
            "{text}"
        );
        assert!(text.contains("LIBTMUX_TMUX_BIN"), "{text}");
    }
}
