//! `attach` in results: the shell command a person runs to watch a pane
//! read-only (`tmux -L NAME attach -r -t %3`).

use crate::tmux::PaneId;
use crate::tmux::socket::{SocketSpec, socket_dir};
use crate::tmux::ssh::remote_quote;
use crate::tools::{App, Target};

impl App {
    /// The command a person runs, in a shell on this machine, to watch
    /// `pane` of `target`'s server read-only. Attaching makes the pane
    /// current in its session, as any `attach -t` does.
    pub fn attach_command(&self, target: &Target, pane: PaneId) -> String {
        let pane = pane.to_string();
        let watch = ["attach", "-r", "-t", pane.as_str()];
        let local = |socket: &[&str]| {
            let bin = self.config.tmux_bin.to_string_lossy();
            let words = std::iter::once(bin.as_ref())
                .chain(socket.iter().copied())
                .chain(watch);
            line(words)
        };
        match &target.spec {
            SocketSpec::Name(name) => local(&["-L", name]),
            SocketSpec::Path(path) => local(&["-S", &path.to_string_lossy()]),
            SocketSpec::Default => match target.hub.local_socket() {
                Some(path) if path != socket_dir(&self.config.tmux_tmpdir).join("default") => {
                    local(&["-S", &path.to_string_lossy()])
                }
                _ => local(&[]),
            },
            SocketSpec::Remote(remote) => {
                let destination = self
                    .config
                    .hosts
                    .hosts
                    .iter()
                    .find(|h| h.alias == remote.alias)
                    .map_or(remote.alias.as_str(), |h| h.destination.as_str());
                let mut there = vec!["tmux"];
                if let Some(name) = &remote.name {
                    there.extend(["-L", name]);
                }
                there.extend(watch);
                // ssh hands its words to the remote shell, which reads them
                // again: quoted for it first, then for the local shell.
                let remote_line = line(there);
                line(["ssh", "-t", destination, remote_line.as_str()])
            }
        }
    }
}

/// Words joined into a POSIX shell line, each quoted when it needs it.
fn line<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words.into_iter().map(word).collect::<Vec<_>>().join(" ")
}

fn word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"%@/._,:=+-".contains(&b));
    if plain {
        return text.to_owned();
    }
    let quoted = remote_quote(text.as_bytes()).unwrap_or_else(|_| b"''".to_vec());
    String::from_utf8_lossy(&quoted).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(
            line(["tmux", "-L", "a", "attach", "-r", "-t", "%3"]),
            "tmux -L a attach -r -t %3"
        );
        assert_eq!(line(["tmux", "-S", "/tmp/a b"]), "tmux -S '/tmp/a b'");
        assert_eq!(word(""), "''");
        let remote = line(["tmux", "-L", "x y", "attach"]);
        assert_eq!(remote, "tmux -L 'x y' attach");
        assert_eq!(
            line(["ssh", "-t", "me@h", &remote]),
            r"ssh -t me@h 'tmux -L '\''x y'\'' attach'"
        );
    }
}
