//! Arguments shared by the tools that start a process (create_session,
//! create_window, split_window): environment, start directory, history
//! suppression, and escaping names for tmux's format expansion.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::tmux::Command;
use crate::tools::{ErrorKind, Target, ToolError, ToolResult};

/// `environment`: an object of strings, or a JSON string of one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Environment {
    Map(BTreeMap<String, String>),
    Json(String),
}

/// The arguments every tool that starts a process shares.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SpawnArgs {
    /// Existing directory to start in (~ expands).
    pub start_directory: Option<String>,
    /// Variables for the new process (create_session: the session): object or JSON string.
    pub environment: Option<Environment>,
    /// Keep shells from writing history files.
    #[serde(default)]
    pub suppress_persistent_history: bool,
}

/// [`SpawnArgs`], checked: ready to add to a command.
pub struct Spawn {
    vars: BTreeMap<String, String>,
    dir: Option<PathBuf>,
}

impl SpawnArgs {
    /// Validates everything before `target`'s tmux is touched. On a remote
    /// server the directory is on its host: it must be absolute, and only
    /// the remote tmux can check it.
    pub fn check(self, target: &Target) -> ToolResult<Spawn> {
        let vars = environment(self.environment, self.suppress_persistent_history)?;
        let dir = match target.hub.local_socket() {
            Some(_) => start_directory(self.start_directory.as_deref())?,
            None => remote_directory(self.start_directory.as_deref())?,
        };
        Ok(Spawn { vars, dir })
    }
}

impl Spawn {
    /// Adds `-c <dir>` and `-e K=V` for each variable.
    pub fn apply(&self, mut cmd: Command) -> Command {
        cmd = cmd.opt_if(
            "-c",
            self.dir.as_ref().map(|d| literal(&d.to_string_lossy())),
        );
        for (k, v) in &self.vars {
            cmd = cmd.opt("-e", format!("{k}={v}"));
        }
        cmd
    }
}

/// On a release where a new window takes the size of the client that
/// made it ([`Features::sized_by_own_client`]: 80x24 for our control
/// client), gives the window `window` (a target such as `@3` or `$1:`) the
/// size tmux 3.3 on would have: the session's clients', else its
/// `default-size` (which `new-session -x`/`-y` set). `resize-window -a`
/// computes it without counting the calling client, and pins the window's
/// `window-size` to `manual`; unsetting it again lets the window follow
/// the person's clients as on other releases. Returns whether it resized,
/// so a caller that reported the size reads it again.
///
/// [`Features::sized_by_own_client`]: crate::tmux::version::Features::sized_by_own_client
pub async fn fit_new_window(target: &Target, window: &str) -> ToolResult<bool> {
    if !target.hub.features().await.sized_by_own_client {
        return Ok(false);
    }
    let fit = Command::new("resize-window").flag("-a").target(window);
    let follow = Command::new("set-option")
        .flag("-w")
        .flag("-u")
        .target(window)
        .arg("window-size");
    // Sent together: the control client runs them in order, one round trip.
    let (fit, follow) = tokio::join!(target.run(fit), target.run(follow));
    fit.and(follow)?;
    Ok(true)
}

/// The environment to pass as `-e K=V`, with `suppress_persistent_history`
/// merged in: shells keep no history file for the new process.
fn environment(
    env: Option<Environment>,
    suppress_history: bool,
) -> ToolResult<BTreeMap<String, String>> {
    let mut vars = match env {
        None => BTreeMap::new(),
        Some(Environment::Map(map)) => map,
        Some(Environment::Json(text)) => match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => return Err(ToolError::invalid(format!("Invalid environment JSON: {e}"))),
            Ok(serde_json::Value::Object(obj)) => obj
                .into_iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => Ok((k, s)),
                    _ => Err(ToolError::invalid(
                        "environment keys and values must be strings",
                    )),
                })
                .collect::<ToolResult<_>>()?,
            Ok(_) => return Err(ToolError::invalid("environment must be a JSON object")),
        },
    };
    for key in vars.keys() {
        env_name(key)?;
    }
    if suppress_history {
        for (name, want) in [
            ("HISTFILE", ""),
            ("fish_history", ""),
            ("fish_private_mode", "1"),
        ] {
            match vars.get(name) {
                Some(v) if v != want => {
                    let fix = if want.is_empty() {
                        "set it to an empty string"
                    } else {
                        "set it to '1'"
                    };
                    return Err(ToolError::invalid(format!(
                        "environment variable {name} conflicts with suppress_persistent_history=True; omit it or {fix}"
                    )));
                }
                _ => {
                    vars.insert(name.to_owned(), want.to_owned());
                }
            }
        }
        let control = vars.get("HISTCONTROL").cloned().unwrap_or_default();
        if !control
            .split(':')
            .any(|c| c == "ignorespace" || c == "ignoreboth")
        {
            let merged = if control.is_empty() {
                "ignorespace".to_owned()
            } else {
                format!("{control}:ignorespace")
            };
            vars.insert("HISTCONTROL".into(), merged);
        }
    }
    Ok(vars)
}

/// Resolves `start_directory` as the reference does: `~` expanded, relative
/// paths against our working directory, symlinks resolved; it must exist.
fn start_directory(raw: Option<&str>) -> ToolResult<Option<PathBuf>> {
    let Some(raw) = raw else { return Ok(None) };
    let expanded = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/"));
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(expanded)
    };
    match std::fs::canonicalize(&absolute) {
        Ok(path) if path.is_dir() => Ok(Some(path)),
        Ok(path) => Err(not_a_dir(&path)),
        Err(_) => Err(not_a_dir(&absolute)),
    }
}

/// `start_directory` on a remote host: an absolute path there, unchecked here.
fn remote_directory(raw: Option<&str>) -> ToolResult<Option<PathBuf>> {
    match raw {
        None => Ok(None),
        Some(path) if path.starts_with('/') => Ok(Some(PathBuf::from(path))),
        Some(path) => Err(ToolError::invalid(format!(
            "start_directory on a remote server must be an absolute path on its host: '{path}'"
        ))),
    }
}

fn not_a_dir(path: &Path) -> ToolError {
    ToolError::invalid(format!(
        "start_directory is not an existing directory: '{}'",
        path.display()
    ))
}

/// Escapes text that tmux expands as a format (names, titles, directories)
/// so that it is stored literally: each run of `#` is doubled, except a run
/// followed by `[`, which tmux copies unchanged (`##[` stays `##[`).
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(start) = rest.find('#') {
        out.push_str(&rest[..start]);
        let run = rest[start..].bytes().take_while(|&b| b == b'#').count();
        let after = &rest[start + run..];
        let hashes = &rest[start..start + run];
        out.push_str(hashes);
        if !after.starts_with('[') {
            out.push_str(hashes);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Checks an environment variable name: a POSIX name
/// (`[A-Za-z_][A-Za-z0-9_]*`). Anything else (`-u`, `A=B`, a space) would be
/// read by tmux as a flag or stored as a variable no shell can read.
pub fn env_name(name: &str) -> ToolResult<()> {
    let mut bytes = name.bytes();
    let posix = bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric());
    if posix {
        return Ok(());
    }
    Err(ToolError::invalid(format!(
        "Invalid environment variable name: {name:?} (a POSIX name is a letter or '_' followed by letters, digits or '_')"
    )))
}

/// Checks a session name before tmux sees it.
pub fn session_name(name: &str) -> ToolResult<()> {
    let reason = if name.is_empty() {
        "empty"
    } else if name.contains('.') {
        "contains periods"
    } else if name.contains(':') {
        "contains colons"
    } else {
        return Ok(());
    };
    Err(ToolError::new(
        ErrorKind::BadSessionName,
        format!("Bad session name: {reason} (session name: {name})"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_suppression_merges_and_refuses_conflicts() {
        let vars = environment(None, true).unwrap();
        assert_eq!(vars["HISTFILE"], "");
        assert_eq!(vars["HISTCONTROL"], "ignorespace");
        let given = Environment::Map([("HISTCONTROL".into(), "ignoredups".into())].into());
        assert_eq!(
            environment(Some(given), true).unwrap()["HISTCONTROL"],
            "ignoredups:ignorespace"
        );
        let bad = Environment::Map([("HISTFILE".into(), "/x".into())].into());
        assert!(
            environment(Some(bad), true)
                .unwrap_err()
                .message
                .contains("conflicts")
        );
        assert!(environment(Some(Environment::Json("[]".into())), false).is_err());
    }

    #[test]
    fn names_and_directories_are_checked() {
        assert!(session_name("a.b").is_err());
        assert!(session_name("a:b").is_err());
        assert!(session_name("").is_err());
        assert!(session_name("ok").is_ok());
        assert_eq!(literal("a#{b}#S"), "a##{b}##S");
        assert_eq!(literal("#[x] ##[y] ##{z}#"), "#[x] ##[y] ####{z}##");
        assert!(
            start_directory(Some("/nonexistent/dir"))
                .unwrap_err()
                .message
                .contains("not an existing")
        );
        assert_eq!(
            start_directory(Some("/")).unwrap(),
            Some(PathBuf::from("/"))
        );
    }
}
