//! Typing into a pane the way `send_keys` does.

use crate::drive::person::{self, Waited};
use crate::drive::{Target, ToolResult};
use crate::tmux::{Command, PaneId};

/// How [`type_keys`] delivers text.
#[derive(Clone, Copy, Debug)]
pub struct KeyOptions {
    pub enter: bool,
    pub literal: bool,
    pub suppress_history: bool,
}

/// Keys that give up on a prompt rather than answer it: they may go to a
/// pane that asks for a password (nothing secret in them).
const GIVE_UP: &[&str] = &["C-c", "C-d", "C-z", "C-\\", "Escape"];

/// Types `keys` into `pane` (send_keys and send_keys_batch): `send-keys
/// [-l]` with a leading space when suppressing history, then a separate
/// Enter when asked. First what the person is owed
/// ([`person::before_typing`]), except that a lone key that gives up
/// ([`GIVE_UP`]) may go to a password prompt; how long that waited.
pub async fn type_keys(
    target: &Target,
    pane: PaneId,
    keys: &str,
    how: KeyOptions,
) -> ToolResult<Waited> {
    let text = if how.suppress_history {
        format!(" {keys}")
    } else {
        keys.to_owned()
    };
    if text.is_empty() && !how.enter {
        // Nothing to type: nothing anyone is owed.
        return Ok(Waited::default());
    }
    let gives_up = !how.literal && !how.enter && !how.suppress_history && GIVE_UP.contains(&keys);
    let waited = person::before_typing(target, pane, gives_up).await?;
    if !text.is_empty() {
        let mut cmd = Command::new("send-keys").target(pane);
        if how.literal {
            cmd = cmd.flag("-l");
        }
        target.run(cmd.flag("--").arg(text)).await?;
    }
    if how.enter {
        target
            .run(Command::new("send-keys").target(pane).arg("Enter"))
            .await?;
    }
    Ok(waited)
}
