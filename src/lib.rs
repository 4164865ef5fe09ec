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
//!   [`tmux::connection`] speaks control mode over one client's pipe;
//!   [`tmux::hub`] keeps the control clients of one tmux server (one that
//!   runs commands and is sent no output, and a bounded set that stream the
//!   watched panes of their session) and the registry of servers by
//!   [`tmux::socket::Address`]: a local socket, or a server on a configured
//!   host, whose processes [`tmux::ssh`] runs over one shared ssh
//!   connection. [`tmux::quiet`] pauses every pane nothing watches;
//!   [`tmux::version`] is the one place behaviour differs by tmux release;
//!   [`tmux::history`] models tmux's record of a pane's history (how it
//!   numbers and trims rows), where a cursor's anchor is found again.
//! - [`panes`]: sans-IO per-pane state, knowing nothing of tmux: the
//!   output ring (absolute offsets, bounded), the line view (escapes
//!   stripped, `\r` applied) waiters match, a waiter's [`panes::Follower`],
//!   and the OSC sequences found in a stream ([`panes::osc`]): a shell's
//!   OSC 133 marks ([`panes::marks`]) and run_command's markers.
//! - [`ids`]: the pane, window and session ids both sides name.
//! - [`process`]: what a pane's process is doing, from the OS (`/proc`, or
//!   `ps` on any unix):
//!   at its prompt, waiting for input, running, exited. Knows nothing of tmux.
//! - [`drive`]: what the tools do to a pane, below them and above
//!   `tmux`, `panes` and `process`: the watch and the read-back from tmux
//!   history, cursors and `since`, the activity probe, input and the
//!   person's floor, pacing and bounds, and run_command's machinery and
//!   command handles (`drive/shell/`). It never imports `tools`.
//! - [`tools`]: the tool table that drives both `tools/list` and
//!   `tools/call`, on three floors, imports pointing down: the call path
//!   (`tools/*.rs`), the vocabulary the groups share (`tools/shared/`:
//!   selectors and lookups, scopes, the guard, result models), and one
//!   file per tool group (`tools/cmd/`).
//! - [`cli`]: the command line (`serve`, `call`, `tools`, `doctor`, `demo`);
//!   [`doctor`] checks an environment, [`demo`] drives the real server over
//!   stdio on a private tmux server and narrates each step.
//!
//! # A byte's two paths, from tmux to a waiting call
//!
//! Live, as tmux prints it:
//!
//! 1. tmux writes `%output %3 …` on the stdout of the streaming client of
//!    `%3`'s session (a lease, taken by the waiting call's `Watch`, keeps
//!    `%3` unpaused there); the connection's `Reader::run`
//!    (`tmux/connection.rs`) reads it.
//! 2. [`tmux::control::Parser::push`] decodes it into an `Event::Output`.
//! 3. The reader hands it to its `Observer`: the `impl Observer for Panes`
//!    in `tmux/output.rs` calls [`panes::registry::Panes::output`].
//! 4. [`panes::Ring::append`] records it under the pane's short lock.
//! 5. The pane's change signal is bumped (`Pane::bump`).
//! 6. The waiter, asleep in `Pace::sleep` on `Watch::changed`
//!    (`drive/pace.rs`, `drive/watch.rs`), wakes; it reads from its
//!    cursor through its [`panes::Follower`] (`read_screens` for
//!    `wait_for_text`, `Follower::read` for the byte-exact readers) and a
//!    [`panes::LineView`].
//! 7. The tool matches the lines and returns its result model; `mcp`
//!    writes the answer on stdout.
//!
//! Read back, when the ring no longer holds it (a gap, a cursor from an
//! earlier call, a pane watched late): the byte is in tmux's history;
//! [`drive::read_back`] asks tmux for the pane's rows and history size,
//! captures the rows between the cursor's anchor and now
//! (`capture-pane -p -S -E` on the command client), and
//! [`drive::cursor`] turns them into the lines a cursor missed; every
//! cursor, `since` and command handle reads this way.
//!
//! # Where a new tool goes
//!
//! One file in `tools/cmd/`, one row in its `register`: a `ToolDef` naming
//! the toolset, and its
//! handler, an `async fn(target: Target, args: Args)` (`tools::tool::Given`
//! names the other shapes). Then `BLESS=1 cargo test --test it
//! tools_catalog` and the README's table; tmux fields it reads get a
//! `Schema` table (`tmux::format`).
//!
//! # Where a new way of handling a pane goes
//!
//! In `drive/`: a new kind of watch, read, input or probe, which every
//! tool can then use; it may import `tmux`, `panes` and `process`, never
//! `tools`.

pub mod cli;
pub mod config;
pub mod demo;
pub mod doctor;
pub mod drive;
pub mod ids;
pub mod mcp;
pub mod panes;
pub mod picture;
pub mod process;
pub mod tmux;
pub mod tools;
