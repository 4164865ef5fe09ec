//! The floor between the tools and tmux: what the tools do to a pane.
//! Nothing here imports [`crate::tools`]; [`crate::tmux`] and
//! [`crate::panes`] import nothing of it.
//!
//! - [`server`]: what this process keeps of one tmux server between calls
//!   (typed, one field per kind, and the tasks it started);
//!   [`target`]: the server a call talks to, and what it may not reach;
//!   [`error`]: how a call fails; [`pane`]: what tmux says of one pane;
//! - following a pane's output: [`watch`] (`Watch`: the pane streamed and
//!   followed from a cursor), [`read_back`] (what tmux still holds: the
//!   screen, the rows a cursor missed), [`cursor`] and [`since`] (where a
//!   read or wait starts), [`pace`] (how a wait sleeps and reports
//!   progress), [`linger`] (panes kept recorded between calls), [`tail`]
//!   and [`bounded`] (every result's bounds);
//! - [`probe`]: what the pane's process is doing, at the settle points of
//!   a quiet spell; [`attention`]: the sentry `wait_for_attention` arms on
//!   a pane, and the panes kept armed between calls;
//! - [`input`]: typing into a pane; [`person`]: what the person at the
//!   terminal is owed first (passwords, the floor);
//! - [`shell`]: typing a command into a shell and reading its output and
//!   status back (run_command's machinery, command handles, and the last
//!   command of a pane).

pub mod attention;
pub mod bounded;
pub mod cursor;
pub mod error;
pub mod input;
pub mod linger;
pub mod pace;
pub mod pane;
pub mod person;
pub mod probe;
pub mod read_back;
pub mod server;
pub mod shell;
pub mod since;
pub mod tail;
pub mod target;
pub mod watch;

pub use error::{ErrorKind, ToolError, ToolResult};
pub use target::{Fence, Target};
