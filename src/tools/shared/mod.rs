//! The middle floor: the vocabulary the tool groups of [`super::cmd`]
//! share. Nothing here imports a group.
//!
//! - [`lookup`]: selectors (`PaneSel`, `SessionSel`, `WindowTarget`) and
//!   the lookups that resolve them; [`caller`]: who this MCP server is in
//!   tmux; [`guard`]: the self-harm guard of destructive tools; [`scope`]:
//!   what `TMUX_MCP_SCOPE` leaves out, fenced once per call;
//!   [`confirm`]: asking the person before a teardown; [`zoom`]: unzooming
//!   first where tmux crashes on a zoomed window;
//! - [`models`] and [`rows`]: the result models and their tmux fields;
//!   [`filters`]: the reference's list filters;
//! - [`args`]: argument values several tools check the same way;
//!   [`spawn`]: what creating a session, window or pane shares; [`marks`]:
//!   who made it; [`attach`]: how a person watches it;
//! - [`capture`]: the bound of a call that reads text.
//!
//! What the tools do to a pane (watching it, reading it back, typing into
//! it, run_command's machinery) is the floor below: [`crate::drive`].

pub mod args;
pub mod attach;
pub mod caller;
pub mod capture;
pub mod confirm;
pub mod filters;
pub mod guard;
pub mod lookup;
pub mod marks;
pub mod models;
pub mod rows;
pub mod scope;
pub mod spawn;
pub mod zoom;
