//! The tool table: one [`ToolDef`] per tool drives both `tools/list` and
//! `tools/call`, so the catalog and the dispatch cannot disagree.
//!
//! A tool is a typed async function `(given, Args) -> Result<Out,
//! ToolError>`, where `given` is what it needs besides its arguments: its
//! server ([`Target`]), that and the shared state ([`Call`]), or, for the
//! few tools no single tmux server is the target of, [`Untargeted`]. Its
//! input schema is derived from `Args` (serde and schemars read the same
//! struct, so schema and parsing cannot drift) and its output schema from
//! `Out`. A non-object `Out` (a string, a list)
//! is wrapped as `{"result": …}` the way the reference does it.
//!
//! - [`app`]: [`App`], the shared state, and [`Target`], one call's server;
//! - `sock`: which tmux server a call targets (`socket_name`);
//! - [`tool`]: [`ToolDef`] and the one call path every tool shares;
//! - `schema`: the schemas, compacted for the catalog;
//! - [`catalog`]: every tool, built once; a new tool goes in its group's
//!   `register` (one file per group: `server`, `window`, `pane`, …);
//! - [`error`]: [`ToolError`], what a failed call tells the agent;
//! - [`service`]: [`TmuxService`], the [`crate::mcp::Service`] over it all.

pub mod app;
mod audit;
mod batch;
mod bounded;
mod buffers;
pub mod catalog;
mod channel;
pub mod error;
mod filters;
pub mod models;
mod observe;
mod options;
mod pane;
mod pane_io;
mod pane_layout;
pub mod prompts;
pub mod resources;
mod rows;
mod run;
mod schema;
mod server;
pub mod service;
mod sock;
mod spawn;
mod target;
pub mod tool;
pub mod toolsets;
mod wait;
mod window;

pub use app::{App, Target};
pub use catalog::Catalog;
pub use error::{ErrorKind, ToolError, ToolResult};
pub use service::TmuxService;
pub use tool::{
    ADJUST, CHANGE, CREATE, Call, DESTROY, Hints, INPUT, NoArgs, READ, ToolDef, Untargeted,
};
