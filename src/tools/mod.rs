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
//! Three floors, imports pointing down only (`scripts/imports.py`):
//!
//! 1. here, the call path: [`app`] ([`App`], the shared state), `sock`
//!    (which server `socket_name` names: a [`Target`]), [`tool`]
//!    ([`ToolDef`], the [`Catalog`] and the one call path every tool
//!    shares), `schema`, [`toolsets`], `audit`, and [`service`]
//!    ([`TmuxService`], the [`crate::mcp::Service`] over it all);
//! 2. [`shared`]: the vocabulary the groups share (selectors and lookups,
//!    scopes, the guard, result models, arguments);
//! 3. [`cmd`]: one file per tool group, plus the resources and prompts.
//!
//! Below them all, [`crate::drive`]: what the tools do to a pane (and
//! [`Target`] and [`ToolError`], which it defines).

pub mod app;
mod audit;
pub mod cmd;
mod schema;
pub mod service;
pub mod shared;
mod sock;
pub mod tool;
pub mod toolsets;

pub use crate::drive::error;
pub use crate::drive::{ErrorKind, Fence, Target, ToolError, ToolResult};
pub use app::App;
pub use service::TmuxService;
pub use tool::{
    ADJUST, CHANGE, CREATE, Call, Catalog, DESTROY, Hints, INPUT, NoArgs, READ, ToolDef, Untargeted,
};
