//! Which tmux server a call talks to, resolved to an [`Address`]: a socket
//! path on this machine, or a socket name on a configured remote host.
//!
//! Every local tmux process we start gets `-S <path>`, never `-L`: a `$TMUX`
//! in our environment must not pick the server for us, and the control
//! clients and one-shot processes of one server must agree on the same path.
//! A remote server is named by its host's alias and its `-L` name, which the
//! remote tmux resolves itself.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::bail;

use super::hosts::Hosts;

/// A tmux server as the user named it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SocketSpec {
    /// No name given: `$TMUX`'s server when inside tmux, else `default`.
    Default,
    /// `tmux -L <name>`.
    Name(String),
    /// `tmux -S <path>`.
    Path(PathBuf),
    /// `ALIAS:NAME` (or `ALIAS:`, the host's default socket): a server on a
    /// host of `TMUX_MCP_HOSTS`.
    Remote(Remote),
}

/// A tmux server on a configured remote host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Remote {
    /// The `TMUX_MCP_HOSTS` alias, never a destination of the caller's.
    pub alias: String,
    /// The remote `-L` name; `None` is the remote user's default server.
    pub name: Option<String>,
}

/// Where a tmux server is: what [`super::hubs::Hubs`] is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    Local(PathBuf),
    Remote(Remote),
}

impl fmt::Display for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.alias, self.name.as_deref().unwrap_or(""))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Local(path) => write!(f, "{}", path.display()),
            Address::Remote(remote) => remote.fmt(f),
        }
    }
}

impl SocketSpec {
    /// A `-L` socket name; it names a file in tmux's socket directory.
    pub fn name(name: &str) -> anyhow::Result<SocketSpec> {
        Ok(SocketSpec::Name(plain_name(name)?.to_owned()))
    }

    /// A `socket_name` as a call gives it: `ALIAS:NAME` or `ALIAS:` is a
    /// server on the host `hosts` configures under ALIAS, refused when no
    /// host has that alias (before anything is started); any other name is
    /// a local `-L` name.
    pub fn parse(socket_name: &str, hosts: &Hosts) -> anyhow::Result<SocketSpec> {
        let Some((alias, name)) = socket_name.split_once(':') else {
            return SocketSpec::name(socket_name);
        };
        if hosts.get(alias).is_none() {
            bail!(
                "socket_name {socket_name:?} names the remote host alias {alias:?}, which is not configured; configured aliases: {}",
                hosts.aliases()
            );
        }
        let name = match name {
            "" => None,
            name => Some(plain_name(name)?.to_owned()),
        };
        Ok(SocketSpec::Remote(Remote {
            alias: alias.to_owned(),
            name,
        }))
    }

    /// The socket name as reported in results (`None` for a path):
    /// `ALIAS:NAME` for a remote server.
    pub fn socket_name(&self) -> Option<String> {
        match self {
            SocketSpec::Default => Some("default".into()),
            SocketSpec::Name(name) => Some(name.clone()),
            SocketSpec::Path(_) => None,
            SocketSpec::Remote(remote) => Some(remote.to_string()),
        }
    }

    /// Where the server is: for a local one, the socket path tmux itself
    /// would use for this spec.
    pub fn resolve(&self, tmpdir: &Path, caller_socket: Option<&Path>) -> Address {
        Address::Local(match self {
            SocketSpec::Remote(remote) => return Address::Remote(remote.clone()),
            SocketSpec::Path(path) => path.clone(),
            SocketSpec::Name(name) => socket_dir(tmpdir).join(name),
            SocketSpec::Default => match caller_socket {
                Some(path) => path.to_path_buf(),
                None => socket_dir(tmpdir).join("default"),
            },
        })
    }
}

/// A socket name that is a plain file name, as tmux's `-L` needs.
fn plain_name(name: &str) -> anyhow::Result<&str> {
    if name.is_empty() || name.contains('/') || name.contains('\0') || name == "." || name == ".." {
        bail!("invalid socket_name {name:?}: it must be a plain file name (no '/')");
    }
    Ok(name)
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
        let local = |p: PathBuf| Address::Local(p);
        assert_eq!(
            SocketSpec::name("w").unwrap().resolve(tmp, None),
            local(dir.join("w"))
        );
        assert_eq!(
            SocketSpec::Default.resolve(tmp, None),
            local(dir.join("default"))
        );
        assert_eq!(
            SocketSpec::Default.resolve(tmp, Some(Path::new("/s"))),
            local(PathBuf::from("/s"))
        );
    }

    #[test]
    fn alias_names_select_a_configured_host_only() {
        let hosts = Hosts::parse(Some("gpu=me@gpu,b=b"), None).unwrap();
        let remote = |alias: &str, name: Option<&str>| {
            SocketSpec::Remote(Remote {
                alias: alias.into(),
                name: name.map(str::to_owned),
            })
        };
        assert_eq!(
            SocketSpec::parse("gpu:work", &hosts).unwrap(),
            remote("gpu", Some("work"))
        );
        assert_eq!(
            SocketSpec::parse("gpu:", &hosts).unwrap(),
            remote("gpu", None)
        );
        assert_eq!(
            SocketSpec::parse("work", &hosts).unwrap(),
            SocketSpec::Name("work".into())
        );
        let spec = SocketSpec::parse("b:x", &hosts).unwrap();
        assert_eq!(spec.socket_name().as_deref(), Some("b:x"));
        assert_eq!(spec.resolve(Path::new("/tmp"), None).to_string(), "b:x");
        assert_eq!(
            SocketSpec::parse("gpu:", &hosts)
                .unwrap()
                .socket_name()
                .as_deref(),
            Some("gpu:")
        );
        for bad in ["gpu:a/b", "gpu:.."] {
            assert!(SocketSpec::parse(bad, &hosts).is_err(), "{bad}");
        }
        let refused = SocketSpec::parse("me@evil.example:x", &hosts).unwrap_err();
        assert!(refused.to_string().contains("not configured"), "{refused}");
        assert!(refused.to_string().contains("gpu, b"), "{refused}");
        let none = SocketSpec::parse("gpu:x", &Hosts::default()).unwrap_err();
        assert!(none.to_string().contains("TMUX_MCP_HOSTS"), "{none}");
    }
}
