//! The result models as tmux records: each model's one field list, the
//! format variable it asks for beside where its text goes. The encoding of
//! records and the parse loop are [`crate::tmux::format`]'s.

use crate::tmux::format::{Schema, flag, int, opt};
use crate::tools::shared::models::{
    PaneContentMatch, PaneInfo, PaneSnapshot, SessionInfo, WindowInfo,
};
use crate::tools::{ErrorKind, ToolError, ToolResult};

/// The record a `-P -F` command prints for what it created (`what`:
/// "session", "window", "pane").
pub fn created<T: Default>(schema: &Schema<T>, lines: &[Vec<u8>], what: &str) -> ToolResult<T> {
    let described = schema.parse(lines).into_iter().next();
    described.ok_or_else(|| {
        let message = format!("tmux created the {what} but did not describe it");
        ToolError::new(ErrorKind::TmuxCommand, message)
    })
}

pub const SESSION: Schema<SessionInfo> = Schema(&[
    ("session_id", |m, v| m.session_id = v.into()),
    ("session_name", |m, v| m.session_name = Some(v.into())),
    ("session_windows", |m, v| {
        m.window_count = int(v).unwrap_or(0)
    }),
    ("session_attached", |m, v| m.session_attached = opt(v)),
    ("session_created", |m, v| m.session_created = opt(v)),
    ("pane_id", |m, v| m.active_pane_id = opt(v)),
]);

pub const WINDOW: Schema<WindowInfo> = Schema(&[
    ("window_id", |m, v| m.window_id = v.into()),
    ("window_index", |m, v| m.window_index = opt(v)),
    ("session_id", |m, v| m.session_id = opt(v)),
    ("window_panes", |m, v| m.pane_count = int(v).unwrap_or(0)),
    ("window_active", |m, v| m.window_active = opt(v)),
    ("window_width", |m, v| m.window_width = opt(v)),
    ("window_height", |m, v| m.window_height = opt(v)),
    ("pane_id", |m, v| m.active_pane_id = opt(v)),
    ("window_layout", |m, v| m.window_layout = opt(v)),
    ("session_name", |m, v| m.session_name = Some(v.into())),
    ("window_name", |m, v| m.window_name = Some(v.into())),
]);

/// A pane model's field list: the `before` fields, then the
/// [`PaneGeometry`](super::models::PaneGeometry) every pane model shares
/// (written once, here), then the `after` fields.
macro_rules! pane_schema {
    (before: [$($before:expr),* $(,)?], after: [$($after:expr),* $(,)?] $(,)?) => {
        Schema(&[
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
        ])
    };
}

/// A pane's metadata (`is_caller` is the tools' to fill in).
pub const PANE: Schema<PaneInfo> = pane_schema! {
    before: [
        ("pane_id", |m, v| m.pane_id = v.into()),
        ("pane_index", |m, v| m.pane_index = opt(v)),
        ("pane_width", |m, v| m.pane_width = opt(v)),
        ("pane_height", |m, v| m.pane_height = opt(v)),
    ],
    after: [
        ("pane_tty", |m, v| m.pane_tty = opt(v)),
        ("pane_pid", |m, v| m.pane_pid = opt(v)),
        ("pane_active", |m, v| m.pane_active = opt(v)),
        ("window_id", |m, v| m.window_id = opt(v)),
        ("session_id", |m, v| m.session_id = opt(v)),
        ("pane_current_command", |m, v| m.pane_current_command = opt(v)),
        ("pane_current_path", |m, v| m.pane_current_path = opt(v)),
        ("pane_title", |m, v| m.pane_title = Some(v.into())),
    ],
};

/// `snapshot_pane` without its content: the pane id (empty when there is
/// no such pane), then the reference's 23 variables.
pub const SNAPSHOT: Schema<PaneSnapshot> = pane_schema! {
    before: [
        ("pane_id", |m, v| m.pane_id = v.into()),
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
pub const SEARCH: Schema<PaneContentMatch> = pane_schema! {
    before: [("pane_id", |m, v| m.pane_id = v.into())],
    after: [
        ("pane_tty", |m, v| m.pane_tty = opt(v)),
        ("window_id", |m, v| m.window_id = opt(v)),
        ("session_id", |m, v| m.session_id = opt(v)),
        ("session_name", |m, v| m.session_name = Some(v.into())),
        ("window_name", |m, v| m.window_name = Some(v.into())),
        ("pane_current_command", |m, v| m.pane_current_command = opt(v)),
        ("pane_current_path", |m, v| m.pane_current_path = opt(v)),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Each format variable lands in a field of its own: a record where
    /// only field `i` holds text changes exactly one field of the model,
    /// and no two variables change the same one.
    #[test]
    fn each_variable_lands_in_its_own_field() {
        fn check<T: Default + serde::Serialize>(schema: &Schema<T>) {
            let n = schema.0.len();
            let parse = |only: Option<usize>| {
                let fields: Vec<&str> = (0..n)
                    .map(|i| if Some(i) == only { "1" } else { "" })
                    .collect();
                let line = format!("{}\u{241F}", fields.join("\u{241E}"));
                let record = schema.parse(&[line.into_bytes()]).pop().expect("a record");
                serde_json::to_value(record).expect("serializable")
            };
            let empty = parse(None);
            let mut landed = Vec::new();
            for i in 0..n {
                let one = parse(Some(i));
                let changed: Vec<&String> = one
                    .as_object()
                    .expect("an object")
                    .iter()
                    .filter(|(k, v)| empty.get(k.as_str()) != Some(*v))
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(changed.len(), 1, "{}: {changed:?}", schema.0[i].0);
                assert!(!landed.contains(changed[0]), "{}", schema.0[i].0);
                landed.push(changed[0].clone());
            }
        }
        check(&SESSION);
        check(&WINDOW);
        check(&PANE);
        check(&SNAPSHOT);
        check(&SEARCH);
    }
}
