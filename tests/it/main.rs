//! The integration tests: one crate, so the library is linked once, not
//! once per file. Each module names what it tests; run one with
//! `cargo test --test it MODULE::` (for example `cargo test --test it wait_live::`).
//!
//! - the control-mode parser: `control_replay` (recorded fixtures),
//!   `control_fuzz` (properties), `quoting_live` (bytes through a real tmux);
//! - the MCP layer with a fake service: `mcp_server` (the wire),
//!   `mcp_resources` (resources, prompts, completion);
//! - the binary: `startup`, `cli`, `demo`, `fake_tmux` (a scripted tmux);
//! - the tools on a private tmux server (`*_live`), the catalog
//!   (`tools_catalog`) and the prompts (`prompts`).
//!
//! Shared support (`tests/support/`): `PrivateTmux`, a tmux server of the
//! test's own that is always killed, the tool-call helpers, and `mcp`, the
//! one MCP client on the wire (to `serve` in memory or the binary's stdio).

#[path = "../support/mod.rs"]
mod support;

mod attention_live;
mod batch_live;
mod bounds_live;
mod channels_live;
mod cli;
mod commands_live;
mod confirm_live;
mod control_fuzz;
mod control_replay;
mod demo;
mod end_scripts_live;
mod fake_tmux;
mod faults_live;
mod flag_values_live;
mod floating_live;
mod gaps_live;
mod guards_live;
mod lifecycle_live;
mod marks_live;
mod mcp_resources;
mod mcp_server;
mod options_buffers_live;
mod pane_clean_live;
mod pane_io_live;
mod pane_layout_live;
mod pane_states_live;
mod person_line_live;
mod person_live;
mod person_soak_live;
mod picture_live;
mod prompts;
mod quiet_live;
mod quoting_live;
mod resources_live;
mod run_live;
mod run_marks_live;
mod scope_live;
mod send_prompt_live;
mod since_live;
mod snapshot_live;
mod soak_live;
mod ssh_faults_live;
mod ssh_live;
mod startup;
mod teardown_live;
mod tools_catalog;
mod wait_live;
mod wait_state;
mod watch_gone_live;
mod windows_live;
