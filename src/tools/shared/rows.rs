//! The result models as tmux records: each model's one field list, the
//! format variable it asks for beside where its text goes. The encoding of
//! records and the parse loop are [`crate::tmux::format`]'s.

use std::str::FromStr;

use crate::tmux::format::{Schema, flag, int, opt};
use crate::tmux::{PaneId, SessionId, WindowId};
use crate::tools::shared::marks::{PANE_MARK, SESSION_MARK, WINDOW_MARK};
use crate::tools::shared::models::{
    PaneContentMatch, PaneInfo, PaneSnapshot, SessionInfo, WindowInfo,
};
use crate::tools::{ErrorKind, ToolError, ToolResult};

/// A result model's field list, the first field being the model's own id.
/// tmux prints empty fields for an object that is gone (`display-message`
/// about a closed pane), so a record whose own id does not parse is
/// dropped: to the caller, that object is not found.
pub struct Rows<T: 'static> {
    pub fields: Schema<T>,
    /// Does this text parse as the model's own id?
    own_id: fn(&str) -> bool,
}

impl<T: Default> Rows<T> {
    /// The tmux format asking for every field.
    pub fn template(&self) -> String {
        self.fields.template()
    }

    /// The records of a reply to [`template`](Self::template) that name
    /// an object.
    pub fn parse(&self, lines: &[Vec<u8>]) -> Vec<T> {
        self.fields
            .parse_where(lines, |fields| (self.own_id)(&fields[0]))
    }
}

/// Does `text` parse as an `I`? (A model's own id.)
fn parses<I: FromStr>(text: &str) -> bool {
    text.parse::<I>().is_ok()
}

/// The model's own id (a record is kept only when it parsed, see [`Rows`]).
fn own<I: FromStr + Default>(text: &str) -> I {
    text.parse().unwrap_or_default()
}

/// An id field's text: `None` when empty (or not an id).
fn id<I: FromStr>(text: &str) -> Option<I> {
    text.parse().ok()
}

/// The record a `-P -F` command prints for what it created (`what`:
/// "session", "window", "pane").
pub fn created<T: Default>(rows: &Rows<T>, lines: &[Vec<u8>], what: &str) -> ToolResult<T> {
    let described = rows.parse(lines).into_iter().next();
    described.ok_or_else(|| {
        let message = format!("tmux created the {what} but did not describe it");
        ToolError::new(ErrorKind::TmuxCommand, message)
    })
}

pub const SESSION: Rows<SessionInfo> = Rows {
    own_id: parses::<SessionId>,
    fields: Schema(&[
        ("session_id", |m, v| m.session_id = own(v)),
        ("session_name", |m, v| m.session_name = Some(v.into())),
        ("session_windows", |m, v| {
            m.window_count = int(v).unwrap_or(0)
        }),
        ("session_attached", |m, v| m.session_attached = opt(v)),
        ("session_created", |m, v| m.session_created = opt(v)),
        ("pane_id", |m, v| m.active_pane_id = id(v)),
        (SESSION_MARK, |m, v| m.created_by = opt(v)),
    ]),
};

pub const WINDOW: Rows<WindowInfo> = Rows {
    own_id: parses::<WindowId>,
    fields: Schema(&[
        ("window_id", |m, v| m.window_id = own(v)),
        ("window_index", |m, v| m.window_index = opt(v)),
        ("session_id", |m, v| m.session_id = id(v)),
        ("window_panes", |m, v| m.pane_count = int(v).unwrap_or(0)),
        ("window_active", |m, v| m.window_active = opt(v)),
        ("window_width", |m, v| m.window_width = opt(v)),
        ("window_height", |m, v| m.window_height = opt(v)),
        ("pane_id", |m, v| m.active_pane_id = id(v)),
        ("window_layout", |m, v| m.window_layout = opt(v)),
        ("session_name", |m, v| m.session_name = Some(v.into())),
        ("window_name", |m, v| m.window_name = Some(v.into())),
        (WINDOW_MARK, |m, v| m.created_by = opt(v)),
    ]),
};

/// A pane model's field list: its own `pane_id`, the `before` fields, then
/// the [`PaneGeometry`](super::models::PaneGeometry) every pane model shares
/// (written once, here), then the `after` fields.
macro_rules! pane_schema {
    (before: [$($before:expr),* $(,)?], after: [$($after:expr),* $(,)?] $(,)?) => {
        Rows {
            own_id: parses::<PaneId>,
            fields: Schema(&[
                ("pane_id", |m, v| m.pane_id = own(v)),
                $($before,)*
                ("pane_left", |m, v| m.geometry.pane_left = int(v)),
                ("pane_top", |m, v| m.geometry.pane_top = int(v)),
                ("pane_right", |m, v| m.geometry.pane_right = int(v)),
                ("pane_bottom", |m, v| m.geometry.pane_bottom = int(v)),
                ("pane_at_left", |m, v| m.geometry.pane_at_left = flag(v)),
                ("pane_at_right", |m, v| m.geometry.pane_at_right = flag(v)),
                ("pane_at_top", |m, v| m.geometry.pane_at_top = flag(v)),
                ("pane_at_bottom", |m, v| m.geometry.pane_at_bottom = flag(v)),
                $($after,)*
            ]),
        }
    };
}

/// A pane's metadata (`is_caller` is the tools' to fill in).
pub const PANE: Rows<PaneInfo> = pane_schema! {
    before: [
        ("pane_index", |m, v| m.pane_index = opt(v)),
        ("pane_width", |m, v| m.pane_width = opt(v)),
        ("pane_height", |m, v| m.pane_height = opt(v)),
    ],
    after: [
        ("pane_tty", |m, v| m.pane_tty = opt(v)),
        ("pane_pid", |m, v| m.pane_pid = opt(v)),
        ("pane_active", |m, v| m.pane_active = opt(v)),
        ("window_id", |m, v| m.window_id = id(v)),
        ("session_id", |m, v| m.session_id = id(v)),
        ("pane_current_command", |m, v| m.pane_current_command = opt(v)),
        ("pane_current_path", |m, v| m.pane_current_path = opt(v)),
        ("pane_title", |m, v| m.pane_title = Some(v.into())),
        // Empty before tmux 3.7, which has no floating panes.
        ("pane_floating_flag", |m, v| m.pane_floating = flag(v) == Some(true)),
        (PANE_MARK, |m, v| m.created_by = opt(v)),
        ("pane_in_mode", |m, v| m.pane_in_mode = int(v).is_some_and(|n| n > 0)),
    ],
};

/// `snapshot_pane` without its content: the pane id (empty when there is
/// no such pane), then the reference's 23 variables.
pub const SNAPSHOT: Rows<PaneSnapshot> = pane_schema! {
    before: [
        ("cursor_x", |m, v| m.cursor_x = int(v).unwrap_or(0)),
        ("cursor_y", |m, v| m.cursor_y = int(v).unwrap_or(0)),
        ("pane_width", |m, v| m.pane_width = int(v).unwrap_or(0)),
        ("pane_height", |m, v| m.pane_height = int(v).unwrap_or(0)),
        // A count of stacked modes (copy mode over clock mode is 2).
        ("pane_in_mode", |m, v| m.pane_in_mode = int(v).is_some_and(|n| n > 0)),
        ("pane_mode", |m, v| m.pane_mode = opt(v)),
        ("scroll_position", |m, v| m.scroll_position = int(v)),
        ("history_size", |m, v| m.history_size = int(v).unwrap_or(0)),
    ],
    after: [
        ("pane_tty", |m, v| m.pane_tty = opt(v)),
        ("pane_pid", |m, v| m.pane_pid = opt(v)),
        ("pane_dead", |m, v| m.pane_dead = flag(v)),
        ("alternate_on", |m, v| m.alternate_on = flag(v)),
        ("pane_current_command", |m, v| m.pane_current_command = opt(v)),
        ("pane_current_path", |m, v| m.pane_current_path = opt(v)),
        ("pane_title", |m, v| m.title = opt(v)),
    ],
};

/// A `search_panes` candidate (`matched_lines` and `is_caller` come later).
pub const SEARCH: Rows<PaneContentMatch> = pane_schema! {
    before: [],
    after: [
        ("pane_tty", |m, v| m.pane_tty = opt(v)),
        ("window_id", |m, v| m.window_id = id(v)),
        ("session_id", |m, v| m.session_id = id(v)),
        ("session_name", |m, v| m.session_name = Some(v.into())),
        ("window_name", |m, v| m.window_name = Some(v.into())),
        ("pane_current_command", |m, v| m.pane_current_command = opt(v)),
        ("pane_current_path", |m, v| m.pane_current_path = opt(v)),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Each format variable lands in a field of its own: a record that
    /// names its object and holds text in field `i` only changes exactly
    /// one field of the model, and no two variables change the same one.
    #[test]
    fn each_variable_lands_in_its_own_field() {
        fn check<T: Default + serde::Serialize>(rows: &Rows<T>) {
            let n = rows.fields.0.len();
            let own = ["%1", "@1", "$1"].into_iter().find(|id| (rows.own_id)(id));
            let own = own.expect("an own id");
            let parse = |i: usize, text: &str| {
                let fields: Vec<&str> = (0..n)
                    .map(|j| {
                        if j == i {
                            text
                        } else if j == 0 {
                            own
                        } else {
                            ""
                        }
                    })
                    .collect();
                let line = format!("{}\u{241F}", fields.join("\u{241E}"));
                let record = rows.parse(&[line.into_bytes()]).pop()?;
                Some(serde_json::to_value(record).expect("serializable"))
            };
            let base = parse(0, own).expect("a record");
            let mut landed = Vec::new();
            for i in 0..n {
                // Text that field `i` takes: a number, a flag or an id.
                let changed = ["1", "%2", "@2", "$2"].into_iter().find_map(|text| {
                    let one = parse(i, text)?;
                    let changed: Vec<String> = one
                        .as_object()
                        .expect("an object")
                        .iter()
                        .filter(|(k, v)| base.get(k.as_str()) != Some(*v))
                        .map(|(k, _)| k.clone())
                        .collect();
                    (!changed.is_empty()).then_some(changed)
                });
                let changed = changed.unwrap_or_default();
                let name = rows.fields.0[i].0;
                assert_eq!(changed.len(), 1, "{name}: {changed:?}");
                assert!(!landed.contains(&changed[0]), "{name}");
                landed.push(changed[0].clone());
            }
        }
        check(&SESSION);
        check(&WINDOW);
        check(&PANE);
        check(&SNAPSHOT);
        check(&SEARCH);
    }

    /// tmux prints empty fields about a pane that is gone: no record, so
    /// the lookup says "not found".
    #[test]
    fn a_record_without_its_own_id_is_dropped() {
        let n = PANE.fields.0.len();
        let empty = format!("{}\u{241F}", vec![""; n].join("\u{241E}"));
        assert!(PANE.parse(&[empty.into_bytes()]).is_empty());
        let junk = format!("%05{}\u{241F}", "\u{241E}".repeat(n - 1));
        assert!(PANE.parse(&[junk.into_bytes()]).is_empty());
        let pane = format!("%5{}\u{241F}", "\u{241E}".repeat(n - 1));
        let parsed = PANE.parse(&[pane.into_bytes()]);
        assert_eq!(
            parsed.iter().map(|p| p.pane_id).collect::<Vec<_>>(),
            [PaneId(5)]
        );
    }
}
