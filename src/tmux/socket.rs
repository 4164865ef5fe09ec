//! Which tmux server a call talks to, resolved to a socket path.
//!
//! Every tmux process we start gets `-S <path>`, never `-L`: a `$TMUX` in our
//! environment must not pick the server for us, and the control clients and
//! one-shot processes of one server must agree on the same path.

use std::path::{Path, PathBuf};

use anyhow::bail;

/// A tmux server as the user named it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SocketSpec {
    /// No name given: `$TMUX`'s server when inside tmux, else `default`.
    Default,
    /// `tmux -L <name>`.
    Name(String),
    /// `tmux -S <path>`.
    Path(PathBuf),
}

impl SocketSpec {
    /// A `-L` socket name; it names a file in tmux's socket directory.
    pub fn name(name: &str) -> anyhow::Result<SocketSpec> {
        if name.is_empty()
            || name.contains('/')
            || name.contains('\0')
            || name == "."
            || name == ".."
        {
            bail!("invalid socket_name {name:?}: it must be a plain file name (no '/')");
        }
        Ok(SocketSpec::Name(name.to_owned()))
    }

    /// The socket name as reported in results (`None` for a path).
    pub fn socket_name(&self) -> Option<&str> {
        match self {
            SocketSpec::Default => Some("default"),
            SocketSpec::Name(name) => Some(name),
            SocketSpec::Path(_) => None,
        }
    }

    /// The socket path tmux itself would use for this spec.
    pub fn resolve(&self, tmpdir: &Path, caller_socket: Option<&Path>) -> PathBuf {
        match self {
            SocketSpec::Path(path) => path.clone(),
            SocketSpec::Name(name) => socket_dir(tmpdir).join(name),
            SocketSpec::Default => match caller_socket {
                Some(path) => path.to_path_buf(),
                None => socket_dir(tmpdir).join("default"),
            },
        }
    }
}

/// `$TMUX_TMPDIR/tmux-<euid>`, as tmux computes it.
pub fn socket_dir(tmpdir: &Path) -> PathBuf {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    tmpdir.join(format!("tmux-{uid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        assert!(SocketSpec::name("work").is_ok());
        for bad in ["", "a/b", "..", "x\0"] {
            assert!(SocketSpec::name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn resolution_follows_tmux() {
        let tmp = Path::new("/tmp");
        let dir = socket_dir(tmp);
        assert_eq!(
            SocketSpec::name("w").unwrap().resolve(tmp, None),
            dir.join("w")
        );
        assert_eq!(SocketSpec::Default.resolve(tmp, None), dir.join("default"));
        assert_eq!(
            SocketSpec::Default.resolve(tmp, Some(Path::new("/s"))),
            PathBuf::from("/s")
        );
    }
}
