//! Result models, field for field the reference's (libtmux-mcp 0.1.0a22),
//! including its typing quirks (sizes of panes and windows are strings).
//! Ids are typed; they serialize, and are described, as the strings tmux
//! prints.

use schemars::JsonSchema;
use serde::Serialize;

use crate::tmux::{PaneId, SessionId, WindowId};

/// A tmux session.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct SessionInfo {
    /// Session id (e.g. '$1').
    pub session_id: SessionId,
    pub session_name: Option<String>,
    pub window_count: i64,
    /// Number of attached clients, as a string (e.g. "0").
    pub session_attached: Option<String>,
    /// Creation time, epoch seconds as a string.
    pub session_created: Option<String>,
    /// Active pane of the session's current window.
    pub active_pane_id: Option<PaneId>,
    /// Who created it through tmux-mcp (client name, @%pane when in tmux); absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Shell command a person runs to watch this pane read-only (create and info results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach: Option<String>,
}

impl SessionInfo {
    /// What a listing's text leaves out (`structuredContent` has it).
    pub const LEFT_OUT_OF_TEXT: &[&str] = &["session_created"];
}

/// A tmux window.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct WindowInfo {
    pub window_id: WindowId,
    pub window_name: Option<String>,
    pub window_index: Option<String>,
    pub session_id: Option<SessionId>,
    pub session_name: Option<String>,
    pub pane_count: i64,
    pub window_layout: Option<String>,
    /// "1" when this is its session's current window.
    pub window_active: Option<String>,
    pub window_width: Option<String>,
    pub window_height: Option<String>,
    pub active_pane_id: Option<PaneId>,
    /// Who created it through tmux-mcp (client name, @%pane when in tmux); absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Shell command a person runs to watch this pane read-only (create and info results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach: Option<String>,
}

// Where a pane sits in its window, as every pane model reports it. Plain
// comments on this struct and on `PaneContentMatch`: a doc comment becomes a
// schema description where they are inlined, and compacting it away
// reorders that schema's keys in the catalog.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct PaneGeometry {
    /// Window-relative cell coordinates; right and bottom are inclusive.
    pub pane_left: Option<i64>,
    pub pane_top: Option<i64>,
    pub pane_right: Option<i64>,
    pub pane_bottom: Option<i64>,
    pub pane_at_left: Option<bool>,
    pub pane_at_right: Option<bool>,
    pub pane_at_top: Option<bool>,
    pub pane_at_bottom: Option<bool>,
}

/// A tmux pane (metadata, no content).
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct PaneInfo {
    pub pane_id: PaneId,
    pub pane_index: Option<String>,
    pub pane_width: Option<String>,
    pub pane_height: Option<String>,
    #[serde(flatten)]
    pub geometry: PaneGeometry,
    pub pane_tty: Option<String>,
    pub pane_current_command: Option<String>,
    pub pane_current_path: Option<String>,
    pub pane_pid: Option<String>,
    pub pane_title: Option<String>,
    /// "1" when this is its window's active pane.
    pub pane_active: Option<String>,
    pub window_id: Option<WindowId>,
    pub session_id: Option<SessionId>,
    /// True when this is the pane this MCP server runs in; null when unknown.
    pub is_caller: Option<bool>,
    /// True for a floating pane (tmux 3.7+: above the tiled layout, not part of it); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pane_floating: bool,
    /// Who created it through tmux-mcp (client name, @%pane when in tmux); absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Shell command a person runs to watch this pane read-only (create and info results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach: Option<String>,
    /// prompt, input, secret, running or exited (list_panes with states=true only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane_state: Option<&'static str>,
    /// True in a mode (copy mode: keys drive it; run_command and send_prompt refuse); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pane_in_mode: bool,
}

impl PaneInfo {
    /// What a listing's text leaves out (`structuredContent`,
    /// `get_pane_info` and `snapshot_pane` have it): where a pane sits,
    /// its tty, pid and title. An agent orients itself by ids, sizes,
    /// command, path and the active flag.
    pub const LEFT_OUT_OF_TEXT: &[&str] = &[
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
        "pane_title",
    ];
}

/// What `snapshot_pane` returns: the pane's fields, or its picture (an
/// MCP image with a line of text, no `structuredContent`: see
/// [`crate::tools::tool`]'s `to_result`). Its schema is the fields'.
#[derive(Debug)]
pub enum Snapshot {
    Fields(Box<PaneSnapshot>),
    Picture { png: Vec<u8>, caption: String },
}

impl Serialize for Snapshot {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Snapshot::Fields(fields) => fields.serialize(s),
            Snapshot::Picture { caption, .. } => caption.serialize(s),
        }
    }
}

impl JsonSchema for Snapshot {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        PaneSnapshot::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        PaneSnapshot::json_schema(generator)
    }
}

/// One pane in one call: what it shows plus cursor, mode and geometry.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct PaneSnapshot {
    pub pane_id: PaneId,
    /// The visible screen, trailing blank rows trimmed, at most max_lines lines (the last ones; no header).
    pub content: String,
    pub cursor_x: i64,
    pub cursor_y: i64,
    pub pane_width: i64,
    pub pane_height: i64,
    #[serde(flatten)]
    pub geometry: PaneGeometry,
    pub pane_tty: Option<String>,
    pub pane_pid: Option<String>,
    /// True when the pane's process has exited (remain-on-exit).
    pub pane_dead: Option<bool>,
    /// True while the alternate screen is on (full-screen programs).
    pub alternate_on: Option<bool>,
    /// True in copy mode or another pane mode.
    pub pane_in_mode: bool,
    /// The mode's name (e.g. 'copy-mode'), null outside a mode.
    pub pane_mode: Option<String>,
    /// Lines scrolled back in copy mode; null outside it.
    pub scroll_position: Option<i64>,
    pub history_size: i64,
    pub title: Option<String>,
    pub pane_current_command: Option<String>,
    pub pane_current_path: Option<String>,
    /// True when this is the pane this MCP server runs in; null when unknown.
    pub is_caller: Option<bool>,
    /// True when lines were cut from the top to honour max_lines.
    pub content_truncated: bool,
    /// How many lines were cut.
    pub content_truncated_lines: i64,
}

// A pane whose text matched (search_panes), with the matching lines.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct PaneContentMatch {
    pub pane_id: PaneId,
    #[serde(flatten)]
    pub geometry: PaneGeometry,
    pub pane_tty: Option<String>,
    pub pane_current_command: Option<String>,
    pub pane_current_path: Option<String>,
    pub window_id: Option<WindowId>,
    pub window_name: Option<String>,
    pub session_id: Option<SessionId>,
    pub session_name: Option<String>,
    /// Matching lines (wrapped lines joined; the last ones when capped).
    pub matched_lines: Vec<String>,
    /// True for this MCP server's own pane; null when unknown.
    pub is_caller: Option<bool>,
}

/// A tmux server.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ServerInfo {
    pub is_alive: bool,
    pub socket_name: Option<String>,
    pub socket_path: Option<String>,
    pub session_count: i64,
    /// tmux version (e.g. '3.3a'), when the server answered.
    pub version: Option<String>,
}
