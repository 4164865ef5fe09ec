//! Typing into a pane the way `send_keys` does.

use crate::tmux::{Command, PaneId};
use crate::tools::{Target, ToolResult};

/// How [`type_keys`] delivers text.
#[derive(Clone, Copy, Debug)]
pub struct KeyOptions {
    pub enter: bool,
    pub literal: bool,
    pub suppress_history: bool,
}

/// Types `keys` into `pane` (send_keys and send_keys_batch): `send-keys
/// [-l]` with a leading space when suppressing history, then a separate
/// Enter when asked.
pub async fn type_keys(
    target: &Target,
    pane: PaneId,
    keys: &str,
    how: KeyOptions,
) -> ToolResult<()> {
    let text = if how.suppress_history {
        format!(" {keys}")
    } else {
        keys.to_owned()
    };
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
    Ok(())
}
