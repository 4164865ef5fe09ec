//! [`TmuxService`]: the MCP-facing server, the tools [`App`] exposes plus
//! its resources, prompts and completions.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::cmd::{self, prompts, resources};
use super::toolsets::{Selection, Toolset};
use super::{App, Catalog, ToolDef};
use crate::config::Config;
use crate::drive::shell::handles;
use crate::mcp::{
    BoxFuture, CallContext, CallToolResult, CompletionRequest, Implementation, McpFeatures,
    Service, ServiceError,
};

/// How long the exit waits on tmux for the commands' ends.
const EXIT_CLEANUP: std::time::Duration = std::time::Duration::from_secs(3);

/// The MCP-facing server: the tools the app's selection exposes.
pub struct TmuxService {
    app: Arc<App>,
    catalog: Arc<Catalog>,
}

impl TmuxService {
    /// The service over every tool of the app's configuration.
    pub fn new(app: Arc<App>) -> Self {
        let catalog = cmd::catalog(&app.config);
        Self::with_catalog(app, catalog)
    }

    /// The service over a catalog already built for the app's
    /// configuration (see [`settings`], which needs its names
    /// to read the selection).
    pub fn with_catalog(app: Arc<App>, catalog: Catalog) -> Self {
        TmuxService {
            app,
            catalog: Arc::new(catalog),
        }
    }

    /// Every tool of the catalog, served or not.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The exposed tools, in catalog order.
    fn exposed(&self) -> impl Iterator<Item = &ToolDef> {
        let selection = &self.app.selection;
        self.catalog
            .all()
            .filter(|t| selection.allows(t.name, t.toolset))
    }

    /// Why a tool of the catalog is not served, and the setting that would
    /// serve it; `None` for a served tool or a name we never had.
    pub fn hidden_because(&self, name: &str) -> Option<String> {
        if self.exposed().any(|t| t.name == name) {
            return None;
        }
        let selection = &self.app.selection;
        if selection.exclude.contains(name) {
            return Some(format!(
                "hidden by LIBTMUX_EXCLUDE_TOOLS; remove {name} from it to serve it"
            ));
        }
        if !self.app.config.prompts_as_tools && prompts::TOOL_NAMES.contains(&name) {
            return Some("served only with LIBTMUX_MCP_PROMPTS_AS_TOOLS=1".into());
        }
        let set = self.catalog.find(name)?.toolset;
        let mut enabled: Vec<&str> = selection.toolsets.iter().map(|t| t.name()).collect();
        enabled.push(set.name());
        Some(format!(
            "it is in the {set} toolset, which this server does not expose; set \
             LIBTMUX_TOOLSETS={} (or LIBTMUX_TOOLS={name} for this tool alone) in the server's env",
            enabled.join(",")
        ))
    }

    /// The tools served, each with its toolset, in catalog order.
    pub fn served(&self) -> Vec<(&'static str, Toolset)> {
        self.exposed().map(|t| (t.name, t.toolset)).collect()
    }

    /// Lets go of the end scripts of commands that no longer run
    /// ([`handles::at_exit`], bounded), then detaches from every tmux
    /// server (see [`App::shutdown`]).
    pub async fn shutdown(&self) {
        let scripts = async {
            for server in self.app.servers.all() {
                handles::at_exit(&server).await;
            }
        };
        let _ = tokio::time::timeout(EXIT_CLEANUP, scripts).await;
        self.app.shutdown().await;
    }
}

/// The configuration, its catalog (built here, once) and the tool
/// selection of this environment; warnings go to stderr.
pub fn settings() -> anyhow::Result<(Config, Catalog, Selection)> {
    let (config, mut warnings) = Config::from_env()?;
    let catalog = cmd::catalog(&config);
    let names = catalog.names();
    let selection = Selection::from_vars(|n| std::env::var(n).ok(), &names, &mut warnings)?;
    for warning in warnings {
        eprintln!("tmux-mcp: warning: {warning}");
    }
    Ok((config, catalog, selection))
}

pub(super) const INSTRUCTIONS: &str = include_str!("instructions.txt");

impl Service for TmuxService {
    fn implementation(&self) -> Implementation {
        Implementation {
            name: "tmux".into(),
            title: Some("tmux-mcp".into()),
            version: env!("CARGO_PKG_VERSION").into(),
            website_url: None,
        }
    }

    fn instructions(&self) -> String {
        let mut text = INSTRUCTIONS.trim_end().to_owned();
        text.push_str(&format!(
            "\n\nToolsets: {} (of inspect, manage, execute, teardown), set by LIBTMUX_TOOLSETS. \
             Hiding one shapes this list, not what a pane can run.\n\n\
             suppress_history={}: run_command inherits it; send_keys and spawned shells do not.",
            self.app.selection.describe(),
            self.app.config.suppress_history
        ));
        if let Some(pane) = &self.app.config.caller.pane_id {
            let extra = format!(
                "\n\nAgent context: this MCP server runs inside tmux pane {pane}; results mark it is_caller=true (filter list_panes for it: which pane am I in?)."
            );
            if text.len() + extra.len() <= 2048 {
                text.push_str(&extra);
            }
        }
        text
    }

    fn tools(&self) -> Vec<Value> {
        self.exposed().map(ToolDef::listing).collect()
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> Option<BoxFuture<'static, CallToolResult>> {
        let tool = self.exposed().find(|t| t.name == name)?;
        Some(tool.call(self.app.clone(), self.catalog.clone(), arguments, ctx))
    }

    fn unknown_tool(&self, name: &str) -> String {
        match self.hidden_because(name) {
            Some(reason) => format!("Unknown tool: {name} ({reason})"),
            None => format!("Unknown tool: {name}"),
        }
    }

    fn features(&self) -> McpFeatures {
        McpFeatures {
            resources: true,
            prompts: true,
            completions: true,
        }
    }

    fn resource_templates(&self) -> Vec<Value> {
        resources::templates()
    }

    fn resources(&self) -> Vec<Value> {
        resources::concrete()
    }

    fn read_resource(&self, uri: &str) -> BoxFuture<'static, Result<Vec<Value>, ServiceError>> {
        Box::pin(resources::read(self.app.clone(), uri.to_owned()))
    }

    fn prompts(&self) -> Vec<Value> {
        prompts::list()
    }

    fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ServiceError> {
        prompts::get(&self.app, name, arguments)
    }

    fn complete(&self, request: CompletionRequest) -> BoxFuture<'static, Vec<String>> {
        Box::pin(resources::complete(self.app.clone(), request))
    }
}
