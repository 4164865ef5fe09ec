//! tmux-mcp: an MCP server that gives an agent hands inside tmux.
//!
//! # Layout
//!
//! The modules follow the data flow, from the agent to tmux and back:
//!
//! - [`config`]: environment and flags turned into a validated [`config::Config`];
//!   every bound (line lengths, timeouts) lives there.
//! - [`mcp`]: JSON-RPC 2.0 over stdio, written by hand: the envelope, the
//!   lifecycle, one task per request, cancellation, progress, and the single
//!   stdout writer. It knows nothing about tmux; it serves any [`mcp::Service`].
//! - [`tmux`]: the tmux side. [`tmux::control`] is the sans-IO control-mode
//!   parser (bytes in, events out); [`tmux::command`] builds command lines
//!   from typed arguments through the one quoting function;
//!   [`tmux::connection`] is the task that owns one `tmux -C` child;
//!   [`tmux::hub`] keeps the control clients of one tmux server and the
//!   registry of servers by socket.
//! - [`panes`]: sans-IO per-pane state: the output ring (absolute offsets,
//!   bounded) and the line view (escapes stripped, `\r` applied) waiters match.
//! - [`tools`]: the tool table (one file per group) that drives both
//!   `tools/list` and `tools/call`, plus the result models.
//! - [`cli`]: the command line (`serve`, `call`, `tools`, `doctor`, `demo`);
//!   [`doctor`] checks an environment, [`demo`] drives the real server over
//!   stdio on a private tmux server and narrates each step.

pub mod cli;
pub mod config;
pub mod demo;
pub mod doctor;
pub mod ids;
pub mod mcp;
pub mod panes;
pub mod tmux;
pub mod tools;
