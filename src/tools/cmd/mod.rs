//! The top floor: one file per tool group, each holding only its
//! arguments, results, handlers and `register`, over the shared vocabulary
//! of [`super::shared`]. A group never imports another group
//! (`scripts/imports.py` checks it). A new tool is one row in its group's
//! `register`; a new group is one line in [`catalog`].
//!
//! [`resources`] and [`prompts`] serve the MCP resources and prompts the
//! same way, beside the tools.
//!
//! In an `Args` struct a `///` comment on a field is that argument's
//! description in the schema, which every model reads on every session; a
//! field whose meaning its name and the server's instructions already give
//! has a plain comment instead, marked `// (no schema text)`.

use serde_json::{Value, json};

use crate::config::Config;
use crate::tools::tool::{Catalog, ToolDef};

pub mod attention;
pub mod batch;
pub mod buffers;
pub mod channel;
pub mod commands;
pub mod options;
pub mod pane;
pub mod pane_io;
pub mod pane_layout;
pub mod prompts;
pub mod resources;
pub mod run;
pub mod send_prompt;
pub mod server;
pub mod since;
pub mod wait;
pub mod wait_state;
pub mod window;

/// Every tool of `config`, built once, in the order `tools/list` shows them.
pub fn catalog(config: &Config) -> Catalog {
    let mut tools = Vec::new();
    batch::register(&mut tools, config);
    server::register(&mut tools, config);
    window::register(&mut tools, config);
    pane::register(&mut tools, config);
    pane_layout::register(&mut tools, config);
    pane_io::register(&mut tools, config);
    send_prompt::register(&mut tools, config);
    wait::register(&mut tools, config);
    wait_state::register(&mut tools, config);
    attention::register(&mut tools, config);
    run::register(&mut tools, config);
    commands::register(&mut tools, config);
    since::register(&mut tools, config);
    channel::register(&mut tools, config);
    options::register(&mut tools, config);
    buffers::register(&mut tools, config);
    share_output_schemas(&mut tools);
    let mut prompt_tools = Vec::new();
    if config.prompts_as_tools {
        prompts::register_as_tools(&mut prompt_tools);
    }
    Catalog {
        tools,
        prompt_tools,
    }
}

/// Many tools return the same model (a dozen return a pane's `PaneInfo`).
/// The first tool in the catalog to return it carries the full output
/// schema; the others say which tool that is and keep the type and the
/// required fields, so results are still validated and the catalog stays
/// small.
fn share_output_schemas(tools: &mut [ToolDef]) {
    const WORTH_SHARING: usize = 200;
    let mut first: Vec<(Value, &'static str)> = Vec::new();
    for tool in tools.iter_mut() {
        if tool.output_schema.to_string().len() < WORTH_SHARING {
            continue;
        }
        match first
            .iter()
            .find(|(schema, _)| schema == &tool.output_schema)
        {
            Some((schema, owner)) => {
                let mut brief = json!({
                    "type": "object",
                    "description": format!("Same result as {owner}: see its outputSchema."),
                });
                if let Some(required) = schema.get("required") {
                    brief["required"] = required.clone();
                }
                tool.output_schema = brief;
            }
            None => first.push((tool.output_schema.clone(), tool.name)),
        }
    }
}
