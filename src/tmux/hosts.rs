//! The remote hosts of `TMUX_MCP_HOSTS` (read into [`crate::config`]), by
//! alias: what `socket_name: "ALIAS:NAME"` may reach over ssh.

use std::path::PathBuf;

use anyhow::{Context, bail};

/// The remote hosts a call may reach, configured by the user only: a call
/// names an alias, never a destination, so an agent cannot pick a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    /// In the order `TMUX_MCP_HOSTS` lists them.
    pub hosts: Vec<Host>,
    /// `TMUX_MCP_SSH`, default `ssh`: the program run as ssh.
    pub ssh: PathBuf,
}

/// One `ALIAS=DESTINATION` of `TMUX_MCP_HOSTS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// What a call writes before the `:` of `socket_name`.
    pub alias: String,
    /// What ssh is given: `[user@]host`, or a `Host` of the user's ssh config.
    pub destination: String,
}

impl Default for Hosts {
    fn default() -> Self {
        Hosts {
            hosts: Vec::new(),
            ssh: "ssh".into(),
        }
    }
}

impl Hosts {
    /// Parses `TMUX_MCP_HOSTS` (`ALIAS=DESTINATION,...`) and `TMUX_MCP_SSH`.
    pub fn parse(hosts: Option<&str>, ssh: Option<&str>) -> anyhow::Result<Hosts> {
        let mut parsed = Hosts::default();
        if let Some(ssh) = ssh.filter(|s| !s.is_empty()) {
            parsed.ssh = ssh.into();
        }
        let list = hosts.unwrap_or("").trim();
        if list.is_empty() {
            return Ok(parsed);
        }
        for entry in list.split(',').map(str::trim) {
            let host = Host::parse(entry).with_context(|| {
                format!(
                    "TMUX_MCP_HOSTS entry {entry:?}: expected ALIAS=DESTINATION, comma-separated"
                )
            })?;
            if parsed.get(&host.alias).is_some() {
                bail!("TMUX_MCP_HOSTS names the alias {:?} twice", host.alias);
            }
            parsed.hosts.push(host);
        }
        Ok(parsed)
    }

    /// The host configured under `alias`.
    pub fn get(&self, alias: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.alias == alias)
    }

    /// The configured aliases, for messages: `a, b` or `none`.
    pub fn aliases(&self) -> String {
        if self.hosts.is_empty() {
            return "none (set TMUX_MCP_HOSTS=ALIAS=DESTINATION to allow one)".into();
        }
        let names: Vec<&str> = self.hosts.iter().map(|h| h.alias.as_str()).collect();
        names.join(", ")
    }
}

impl Host {
    fn parse(entry: &str) -> anyhow::Result<Host> {
        let Some((alias, destination)) = entry.split_once('=') else {
            bail!("no '='");
        };
        let (alias, destination) = (alias.trim(), destination.trim());
        let alias_ok = !alias.is_empty()
            && alias != "."
            && alias != ".."
            && alias
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !alias_ok {
            bail!("the alias {alias:?} must be letters, digits, '.', '_' or '-'");
        }
        // ssh gets the destination as one word after `--`; a leading '-'
        // or a space would still read as something else to a person.
        let destination_ok = !destination.is_empty()
            && !destination.starts_with('-')
            && destination
                .bytes()
                .all(|b| b.is_ascii_graphic() || b >= 0x80);
        if !destination_ok {
            bail!(
                "the destination {destination:?} must be what ssh accepts: [user@]host or a Host of your ssh config (no spaces, not starting with '-')"
            );
        }
        Ok(Host {
            alias: alias.to_owned(),
            destination: destination.to_owned(),
        })
    }
}
