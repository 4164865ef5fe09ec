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
//!   [`keys`]: typing into a pane; [`person`]: what the person at the
//!   terminal is owed first (passwords, the floor);
//! - following a pane's output: [`observe`] (`Watch`), [`pace`] (how a
//!   wait sleeps and reports progress), [`cursor`], [`tail`], [`since`]
//!   (where a wait starts), [`linger`] (panes kept recorded between calls);
//! - [`bounded`] and [`capture`]: every result's bounds;
//! - [`shell`]: typing a command into a shell and reading its output and
//!   status back (run_command's machinery, and the last command of a pane).

pub mod args;
pub mod attach;
pub mod bounded;
pub mod caller;
pub mod capture;
pub mod confirm;
pub mod cursor;
pub mod filters;
pub mod guard;
pub mod keys;
pub mod linger;
pub mod lookup;
pub mod marks;
pub mod models;
pub mod observe;
pub mod pace;
pub mod person;
pub mod probe;
pub mod rows;
pub mod scope;
pub mod shell;
pub mod since;
pub mod spawn;
pub mod tail;
pub mod zoom;
