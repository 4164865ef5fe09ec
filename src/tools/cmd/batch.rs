//! `call_read_tools_batch`: several `inspect` tools in one call, serially,
//! each through the same pipeline as a direct call (argument checks, errors
//! as rows), with the reference's refusals and caps.

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::mcp::CallContext;
use crate::tools::shared::args::OnError;
use crate::tools::toolsets::Toolset;
use crate::tools::{App, Catalog, READ, ToolDef, ToolError, ToolResult, Untargeted};

pub const NAME: &str = "call_read_tools_batch";
const MAX_OPERATIONS: usize = 1000;
/// The bound of a batch's whole result, both copies counted.
const MAX_RESPONSE: usize = 60 * 1024;

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        NAME,
        Toolset::Inspect,
        "Call Read Tools Batch",
        "Run inspect tools in order, a result row each (socket_name in each operation's arguments); no tool that changes state or waits. 60 KB cap (oldest rows elided).",
        READ,
        call_read_tools_batch,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallOperation {
    // (no schema text) Name of the tool to call.
    tool: String,
    // (no schema text) Its arguments.
    #[serde(default)]
    arguments: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BatchArgs {
    /// At most 1000, run in order.
    operations: Vec<ToolCallOperation>,
    /// Stop at the first failed row, or continue.
    #[serde(default)]
    on_error: OnError,
}

/// One row of the batch.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolCallOperationResult {
    pub index: i64,
    pub tool: String,
    pub success: bool,
    pub error: Option<String>,
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    pub meta: Option<Value>,
    pub elapsed_seconds: f64,
}

/// The whole batch.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolCallBatchResult {
    pub results: Vec<ToolCallOperationResult>,
    pub succeeded: i64,
    pub failed: i64,
    pub stopped_at: Option<i64>,
    pub response_truncated: bool,
    pub response_truncated_bytes: i64,
}

/// A nested result's content without the text that repeats its
/// structured content (every text block of a success with structured
/// content is its mirror) or its error: the row says each thing once.
fn unrepeated(content: Vec<Value>, mirrored: bool, error: Option<&str>) -> Vec<Value> {
    content
        .into_iter()
        .filter(|block| {
            let text = block.get("type") == Some(&json!("text"));
            !(text && (mirrored || block["text"].as_str() == error))
        })
        .collect()
}

/// The tool a read batch runs for `tool`, or why it cannot: the batch
/// reaches every tool of the catalog, hidden ones included, minus the
/// `LIBTMUX_EXCLUDE_TOOLS` names (as in the reference).
fn nested<'a>(app: &App, catalog: &'a Catalog, tool: &str) -> Result<&'a ToolDef, String> {
    if tool == NAME {
        return Err("Batch tools cannot call batch tools recursively.".into());
    }
    let found = catalog.tools.iter().find(|t| t.name == tool);
    let Some(def) = found.filter(|_| !app.selection.exclude.contains(tool)) else {
        return Err(format!("Unknown tool: '{tool}'"));
    };
    if def.own_wait_ceiling {
        return Err(format!(
            "Tool '{tool}' enforces its own wait ceiling and cannot be batched; batching would multiply that ceiling by the operation count. Call it directly."
        ));
    }
    if def.toolset != Toolset::Inspect {
        return Err(format!(
            "Tool '{tool}' is not an 'inspect' tool, so it cannot run in a read batch. Call it directly."
        ));
    }
    Ok(def)
}

async fn call_read_tools_batch(
    Untargeted { app, catalog, ctx }: Untargeted,
    args: BatchArgs,
) -> ToolResult<ToolCallBatchResult> {
    if args.operations.is_empty() {
        return Err(ToolError::invalid(
            "operations must contain at least one tool call",
        ));
    }
    if args.operations.len() > MAX_OPERATIONS {
        return Err(ToolError::invalid(format!(
            "operations must contain at most {MAX_OPERATIONS} tool calls"
        )));
    }
    let mut rows = BoundedRows::default();
    let mut stopped_at = None;
    for (index, op) in args.operations.into_iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            break;
        }
        let row = run_operation(&app, &catalog, index, op, &ctx).await;
        let failed = !row.success;
        rows.push(row);
        if failed && args.on_error == OnError::Stop {
            stopped_at = Some(index as i64);
            break;
        }
    }
    Ok(rows.finish(stopped_at))
}

/// One operation, through the same pipeline as a direct call; a refusal or
/// a failure is a row.
async fn run_operation(
    app: &Arc<App>,
    catalog: &Arc<Catalog>,
    index: usize,
    op: ToolCallOperation,
    ctx: &CallContext,
) -> ToolCallOperationResult {
    let started = Instant::now();
    let result = match nested(app, catalog, &op.tool) {
        Err(message) => {
            return ToolCallOperationResult {
                index: index as i64,
                tool: op.tool,
                success: false,
                error: Some(message),
                content: Vec::new(),
                structured_content: None,
                meta: None,
                elapsed_seconds: started.elapsed().as_secs_f64(),
            };
        }
        Ok(tool) => {
            tool.call(
                app.clone(),
                catalog.clone(),
                Value::Object(op.arguments),
                ctx.clone(),
            )
            .await
        }
    };
    let error = result.is_error.then(|| {
        result
            .content
            .first()
            .and_then(|c| c["text"].as_str())
            .unwrap_or_default()
            .to_owned()
    });
    ToolCallOperationResult {
        index: index as i64,
        tool: op.tool,
        success: !result.is_error,
        content: unrepeated(
            result.content,
            result.structured_content.is_some(),
            error.as_deref(),
        ),
        error,
        structured_content: result.structured_content,
        meta: result.meta,
        elapsed_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The rows of a batch under [`MAX_RESPONSE`]. The response carries every
/// row twice (structured and text). Rows are measured once, as they come;
/// past the bound the oldest rows lose their nested payloads, so memory
/// stays bounded too.
#[derive(Default)]
struct BoundedRows {
    results: Vec<ToolCallOperationResult>,
    /// Each row's size in the response, both copies counted.
    sizes: Vec<usize>,
    total: usize,
    /// Rows before this one have lost their payloads.
    elided: usize,
    truncated_bytes: usize,
}

fn response_size(row: &ToolCallOperationResult) -> usize {
    2 * serde_json::to_string(row).map_or(0, |s| s.len())
}

impl BoundedRows {
    fn push(&mut self, row: ToolCallOperationResult) {
        let size = response_size(&row);
        self.sizes.push(size);
        self.total += size;
        self.results.push(row);
        while self.total > MAX_RESPONSE && self.elided < self.results.len() {
            let i = self.elided;
            let r = &mut self.results[i];
            let text = format!(
                "[... batch truncated nested content: call {} alone for its result ...]",
                r.tool
            );
            r.content = vec![json!({"type": "text", "text": text})];
            r.structured_content = None;
            let now = response_size(r);
            self.truncated_bytes += self.sizes[i].saturating_sub(now) / 2;
            self.total = self.total - self.sizes[i] + now;
            self.sizes[i] = now;
            self.elided += 1;
        }
    }

    fn finish(self, stopped_at: Option<i64>) -> ToolCallBatchResult {
        let succeeded = self.results.iter().filter(|r| r.success).count() as i64;
        let failed = self.results.len() as i64 - succeeded;
        ToolCallBatchResult {
            results: self.results,
            succeeded,
            failed,
            stopped_at,
            response_truncated: self.elided > 0,
            response_truncated_bytes: self.truncated_bytes as i64,
        }
    }
}
