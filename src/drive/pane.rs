//! What tmux says of one pane, by id, in one `display-message -p`.

use crate::drive::Target;
use crate::drive::ToolResult;
use crate::drive::error::pane_not_found;
use crate::tmux::{Command, PaneId, format};

/// `fields` of one pane, by id, in one `display-message -p`; the first
/// field must be `pane_id`.
pub async fn pane_record(
    target: &Target,
    pane: PaneId,
    fields: &[&str],
) -> ToolResult<Vec<String>> {
    debug_assert_eq!(fields.first(), Some(&"pane_id"));
    let lines = display_pane(target, pane, format::template(fields)).await?;
    own_record(pane, format::records(&lines, fields.len()), |r| {
        PaneId::parse(r[0].as_bytes())
    })
}

/// The reply to `display-message -p format` about `pane`.
pub async fn display_pane(
    target: &Target,
    pane: PaneId,
    format: String,
) -> ToolResult<Vec<Vec<u8>>> {
    let cmd = Command::new("display-message")
        .flag("-p")
        .target(pane)
        .arg(format);
    target.run(cmd).await
}

/// What tmux says a pane runs, for where the process probe cannot say.
#[derive(Default)]
pub struct PaneNow {
    /// The foreground command (`pane_current_command`).
    pub command: String,
    /// The pane's shell as configured (`default-shell`): a shell at its
    /// prompt runs this.
    pub shell: String,
    /// The pane's process ended and remain-on-exit keeps it (`pane_dead`):
    /// its pid may belong to another process by now.
    pub dead: bool,
    /// The pane's terminal (`pane_tty`), on the server's host.
    pub tty: String,
}

const NOW: format::Schema<PaneNow> = format::Schema(&[
    ("pane_current_command", |n, v| n.command = v.into()),
    ("default-shell", |n, v| n.shell = v.into()),
    ("pane_dead", |n, v| n.dead = v == "1"),
    ("pane_tty", |n, v| n.tty = v.into()),
]);

/// [`PaneNow`] of `pane`, in one `display-message -p` (`None`: tmux
/// printed nothing).
pub async fn pane_now(target: &Target, pane: PaneId) -> ToolResult<Option<PaneNow>> {
    let lines = display_pane(target, pane, NOW.template()).await?;
    Ok(NOW.parse(&lines).into_iter().next())
}

/// `pane`'s record, the first of a `display-message` reply. display-message
/// does not fail on a missing pane, it prints empty fields: the pane's own
/// id (`id` of the record) tells.
pub fn own_record<T>(
    pane: PaneId,
    records: Vec<T>,
    id: impl Fn(&T) -> Option<PaneId>,
) -> ToolResult<T> {
    records
        .into_iter()
        .next()
        .filter(|r| id(r) == Some(pane))
        .ok_or_else(|| pane_not_found(&pane.to_string()))
}
