//! `list-*` formats and their parsing into the result models.
//!
//! Each record is its fields joined by U+241E and ended by U+241F. Paths,
//! commands and titles can hold tabs and even newlines, so neither makes a
//! safe separator; these two code points are printed raw by every tmux
//! version (clients run with `-u`) and never appear in ids or numbers.
//!
//! Free text is not ours, though: any program can set its pane's title (an
//! OSC 2 sequence) to a string holding the separators, which would forge
//! whole records (a pane id pointing somewhere else). So every free-text
//! field is asked for through tmux's `s/…/…/` modifier, which replaces the
//! two separators with U+FFFD before the text reaches us.

use super::models::{PaneInfo, PaneSnapshot, SessionInfo, WindowInfo};

const FIELD: &str = "\u{241E}";
const RECORD: &str = "\u{241F}";

/// Fields whose text comes from users or programs, not from tmux's counters.
const FREE_TEXT: &[&str] = &[
    "session_name",
    "window_name",
    "pane_title",
    "pane_current_command",
    "pane_current_path",
    "pane_start_command",
    "pane_mode",
    "buffer_name",
];

/// The tmux format for a record of `fields`.
pub fn format(fields: &[&str]) -> String {
    let mut out = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(FIELD);
        }
        if FREE_TEXT.contains(field) {
            out.push_str(&format!("#{{s/{FIELD}|{RECORD}/\u{FFFD}/:{field}}}"));
        } else {
            out.push_str("#{");
            out.push_str(field);
            out.push('}');
        }
    }
    out.push_str(RECORD);
    out
}

/// Splits a reply into records of exactly `n` fields; malformed ones are skipped.
pub fn records(lines: &[Vec<u8>], n: usize) -> Vec<Vec<String>> {
    let text = String::from_utf8_lossy(&lines.join(&b'\n')).into_owned();
    text.split(RECORD)
        .map(|r| r.strip_prefix('\n').unwrap_or(r))
        .filter(|r| !r.is_empty())
        .filter_map(|r| {
            let fields: Vec<String> = r.split(FIELD).map(str::to_owned).collect();
            (fields.len() == n).then_some(fields)
        })
        .collect()
}

pub(super) fn opt(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

pub(super) fn int(s: &str) -> Option<i64> {
    s.parse().ok()
}

pub(super) fn flag(s: &str) -> Option<bool> {
    match s {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

pub const SESSION_FIELDS: &[&str] = &[
    "session_id",
    "session_name",
    "session_windows",
    "session_attached",
    "session_created",
    "pane_id",
];

pub fn session(f: &[String]) -> SessionInfo {
    SessionInfo {
        session_id: f[0].clone(),
        session_name: Some(f[1].clone()),
        window_count: int(&f[2]).unwrap_or(0),
        session_attached: opt(&f[3]),
        session_created: opt(&f[4]),
        active_pane_id: opt(&f[5]),
    }
}

pub const WINDOW_FIELDS: &[&str] = &[
    "window_id",
    "window_index",
    "session_id",
    "window_panes",
    "window_active",
    "window_width",
    "window_height",
    "pane_id",
    "window_layout",
    "session_name",
    "window_name",
];

pub fn window(f: &[String]) -> WindowInfo {
    WindowInfo {
        window_id: f[0].clone(),
        window_index: opt(&f[1]),
        session_id: opt(&f[2]),
        pane_count: int(&f[3]).unwrap_or(0),
        window_active: opt(&f[4]),
        window_width: opt(&f[5]),
        window_height: opt(&f[6]),
        active_pane_id: opt(&f[7]),
        window_layout: opt(&f[8]),
        session_name: Some(f[9].clone()),
        window_name: Some(f[10].clone()),
    }
}

/// Pane fields, free text last.
pub const PANE_FIELDS: &[&str] = &[
    "pane_id",
    "pane_index",
    "pane_width",
    "pane_height",
    "pane_left",
    "pane_top",
    "pane_right",
    "pane_bottom",
    "pane_at_left",
    "pane_at_right",
    "pane_at_top",
    "pane_at_bottom",
    "pane_tty",
    "pane_pid",
    "pane_active",
    "window_id",
    "session_id",
    "pane_current_command",
    "pane_current_path",
    "pane_title",
];

/// A pane row: the model plus where the pane sits.
#[derive(Clone, Debug)]
pub struct PaneRow {
    pub info: PaneInfo,
}

pub fn pane(f: &[String]) -> PaneRow {
    let info = PaneInfo {
        pane_id: f[0].clone(),
        pane_index: opt(&f[1]),
        pane_width: opt(&f[2]),
        pane_height: opt(&f[3]),
        pane_left: int(&f[4]),
        pane_top: int(&f[5]),
        pane_right: int(&f[6]),
        pane_bottom: int(&f[7]),
        pane_at_left: flag(&f[8]),
        pane_at_right: flag(&f[9]),
        pane_at_top: flag(&f[10]),
        pane_at_bottom: flag(&f[11]),
        pane_tty: opt(&f[12]),
        pane_pid: opt(&f[13]),
        pane_active: opt(&f[14]),
        window_id: opt(&f[15]),
        session_id: opt(&f[16]),
        pane_current_command: opt(&f[17]),
        pane_current_path: opt(&f[18]),
        pane_title: Some(f[19].clone()),
        is_caller: None,
    };
    PaneRow { info }
}

/// `snapshot_pane`'s fields: the pane id (empty when there is no such
/// pane), then the reference's 23 variables with the free text last.
pub const SNAPSHOT_FIELDS: &[&str] = &[
    "pane_id",
    "cursor_x",
    "cursor_y",
    "pane_width",
    "pane_height",
    "pane_in_mode",
    "pane_mode",
    "scroll_position",
    "history_size",
    "pane_left",
    "pane_top",
    "pane_right",
    "pane_bottom",
    "pane_at_left",
    "pane_at_right",
    "pane_at_top",
    "pane_at_bottom",
    "pane_tty",
    "pane_pid",
    "pane_dead",
    "alternate_on",
    "pane_current_command",
    "pane_current_path",
    "pane_title",
];

/// A snapshot without content (`content` empty, nothing truncated).
pub fn snapshot(f: &[String]) -> PaneSnapshot {
    PaneSnapshot {
        pane_id: f[0].clone(),
        content: String::new(),
        cursor_x: int(&f[1]).unwrap_or(0),
        cursor_y: int(&f[2]).unwrap_or(0),
        pane_width: int(&f[3]).unwrap_or(0),
        pane_height: int(&f[4]).unwrap_or(0),
        // A count of stacked modes (copy mode over clock mode is 2).
        pane_in_mode: int(&f[5]).is_some_and(|n| n > 0),
        pane_mode: opt(&f[6]),
        scroll_position: int(&f[7]),
        history_size: int(&f[8]).unwrap_or(0),
        pane_left: int(&f[9]),
        pane_top: int(&f[10]),
        pane_right: int(&f[11]),
        pane_bottom: int(&f[12]),
        pane_at_left: flag(&f[13]),
        pane_at_right: flag(&f[14]),
        pane_at_top: flag(&f[15]),
        pane_at_bottom: flag(&f[16]),
        pane_tty: opt(&f[17]),
        pane_pid: opt(&f[18]),
        pane_dead: flag(&f[19]),
        alternate_on: flag(&f[20]),
        pane_current_command: opt(&f[21]),
        pane_current_path: opt(&f[22]),
        title: opt(&f[23]),
        is_caller: None,
        content_truncated: false,
        content_truncated_lines: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_newlines_and_tabs_in_free_text() {
        let reply = vec![
            "%1\u{241E}a\tb\u{241F}".as_bytes().to_vec(),
            "%2\u{241E}multi".as_bytes().to_vec(),
            "line\u{241F}".as_bytes().to_vec(),
            "junk".as_bytes().to_vec(),
        ];
        let recs = records(&reply, 2);
        assert_eq!(
            recs,
            vec![
                vec!["%1".to_string(), "a\tb".into()],
                vec!["%2".into(), "multi\nline".into()]
            ]
        );
        assert_eq!(format(&["a", "b"]), "#{a}\u{241E}#{b}\u{241F}");
        assert_eq!(
            format(&["pane_title"]),
            "#{s/\u{241E}|\u{241F}/\u{FFFD}/:pane_title}\u{241F}"
        );
    }
}
