//! The catalog: every tool, built once per configuration (by [`App`]),
//! in the order `tools/list` shows them. A new tool goes in its group's
//! `register`; the group goes here.
//!
//! [`App`]: super::App

use serde_json::{Value, json};

use super::{ToolDef, batch, buffers, channel, options, pane, pane_io, pane_layout, prompts};
use super::{server, wait, window};
use crate::config::Config;

/// Every tool of one configuration.
pub struct Catalog {
    /// The tools, in catalog order (what a read batch may reach).
    pub tools: Vec<ToolDef>,
    /// `list_prompts` and `get_prompt`, served after the others with
    /// `LIBTMUX_MCP_PROMPTS_AS_TOOLS=1`.
    pub prompt_tools: Vec<ToolDef>,
}

impl Catalog {
    pub fn new(config: &Config) -> Catalog {
        let mut tools = Vec::new();
        batch::register(&mut tools, config);
        server::register(&mut tools, config);
        window::register(&mut tools, config);
        pane::register(&mut tools, config);
        pane_layout::register(&mut tools, config);
        pane_io::register(&mut tools, config);
        wait::register(&mut tools, config);
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

    /// Every tool, prompt tools last.
    pub fn all(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.iter().chain(&self.prompt_tools)
    }

    /// Every tool name (what `LIBTMUX_TOOLS` may name).
    pub fn names(&self) -> Vec<&'static str> {
        self.all().map(|t| t.name).collect()
    }

    pub fn find(&self, name: &str) -> Option<&ToolDef> {
        self.all().find(|t| t.name == name)
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
