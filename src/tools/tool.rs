//! [`ToolDef`]: one tool, what `tools/list` says about it and the one
//! call path every tool shares (arguments parsed, the socket resolved and
//! fenced to `TMUX_MCP_SCOPE`, the handler awaited, the call audited, the
//! outcome encoded).

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::schema::{append_args_of, compact, output_schema_of, schema_of};
use super::shared::models::Snapshot;
use super::sock::Sock;
use super::toolsets::Toolset;
use super::{App, Target, ToolError, ToolResult, audit};
use crate::config::Scope;
use crate::mcp::{BoxFuture, CallContext, CallToolResult};

/// MCP tool annotations (hints a client may use to auto-approve).
#[derive(Clone, Copy, Debug)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    /// Every hint false: the tool changes tmux state, destroys nothing,
    /// does something new each time and reaches nothing outside tmux. Each
    /// class below states only where it differs.
    pub const BASE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
}

/// Reads tmux state only.
pub const READ: Hints = Hints {
    read_only: true,
    idempotent: true,
    ..Hints::BASE
};
/// Creates something new; destroys nothing.
pub const CREATE: Hints = Hints::BASE;
/// Delivers input to a program: it may do anything.
pub const INPUT: Hints = Hints {
    open_world: true,
    ..Hints::BASE
};
/// Changes tmux state (names, focus, layout, sizes) without destroying anything.
pub const CHANGE: Hints = Hints::BASE;
/// Destroys tmux objects (and the processes in them).
pub const DESTROY: Hints = Hints {
    destructive: true,
    idempotent: true,
    ..Hints::BASE
};
/// Changes presentation (size, title, mode); repeating it changes nothing more.
pub const ADJUST: Hints = Hints {
    idempotent: true,
    ..Hints::BASE
};

impl Hints {
    /// MCP annotations, stating only what differs from the spec's defaults
    /// (`readOnlyHint: false`, `destructiveHint: true`, `idempotentHint:
    /// false`, `openWorldHint: true`); the destructive and idempotent hints
    /// only mean something for a tool that is not read-only.
    pub fn annotations(&self) -> Value {
        let mut out = Map::new();
        if self.read_only {
            out.insert("readOnlyHint".into(), json!(true));
        } else {
            if !self.destructive {
                out.insert("destructiveHint".into(), json!(false));
            }
            if self.idempotent {
                out.insert("idempotentHint".into(), json!(true));
            }
        }
        if !self.open_world {
            out.insert("openWorldHint".into(), json!(false));
        }
        Value::Object(out)
    }
}

/// What a tool's handler is given besides its arguments, built by the
/// one call path from the call; the handler's first parameter says which:
/// [`Target`] for a tool that only talks to one tmux server, [`Call`] for
/// one that also needs the shared state or the call's context, and
/// [`Untargeted`] for a tool no single server is the target of (it scans
/// them, calls other tools, or touches none).
pub trait Given: Sized + Send + 'static {
    /// Whether the tool takes `socket_name`, resolved for the handler.
    const TARGETED: bool;
    fn given(
        app: Arc<App>,
        catalog: Arc<Catalog>,
        socket_name: Option<&str>,
        ctx: CallContext,
    ) -> ToolResult<Self>;

    /// The server the handler will talk to, for the scope gate.
    fn target_mut(&mut self) -> Option<&mut Target> {
        None
    }
}

/// The arguments of a tool that takes none of its own.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// A targeted tool's shared state, server and call context.
pub struct Call {
    pub app: Arc<App>,
    /// The server the call's `socket_name` names.
    pub target: Target,
    /// Cancellation, progress and log for this call.
    pub ctx: CallContext,
}

/// An untargeted tool's shared state, the catalog and the call context.
pub struct Untargeted {
    pub app: Arc<App>,
    /// Every tool (what a read batch may call).
    pub catalog: Arc<Catalog>,
    pub ctx: CallContext,
}

impl Given for Target {
    const TARGETED: bool = true;
    fn given(
        app: Arc<App>,
        _: Arc<Catalog>,
        socket_name: Option<&str>,
        _: CallContext,
    ) -> ToolResult<Target> {
        app.socket(socket_name)
    }

    fn target_mut(&mut self) -> Option<&mut Target> {
        Some(self)
    }
}

impl Given for Call {
    const TARGETED: bool = true;
    fn given(
        app: Arc<App>,
        _: Arc<Catalog>,
        socket_name: Option<&str>,
        ctx: CallContext,
    ) -> ToolResult<Call> {
        let target = app.socket(socket_name)?;
        Ok(Call { app, target, ctx })
    }

    fn target_mut(&mut self) -> Option<&mut Target> {
        Some(&mut self.target)
    }
}

impl Given for Untargeted {
    const TARGETED: bool = false;
    fn given(
        app: Arc<App>,
        catalog: Arc<Catalog>,
        _: Option<&str>,
        ctx: CallContext,
    ) -> ToolResult<Untargeted> {
        Ok(Untargeted { app, catalog, ctx })
    }
}

type Invoke = Box<
    dyn Fn(Arc<App>, Arc<Catalog>, Value, CallContext) -> BoxFuture<'static, CallToolResult>
        + Send
        + Sync,
>;

/// One tool: what `tools/list` says about it and how to call it. Nothing
/// else in the server is keyed by a tool's name.
pub struct ToolDef {
    pub name: &'static str,
    /// Which toolset exposes it (`LIBTMUX_TOOLSETS`).
    pub toolset: Toolset,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub input_schema: Value,
    pub output_schema: Value,
    /// It enforces its own wait ceiling, so a read batch refuses it.
    pub own_wait_ceiling: bool,
    /// The `_meta` of its `tools/list` entry, if any.
    pub meta: Option<Value>,
    call: Invoke,
}

impl ToolDef {
    /// Builds a tool from a typed handler (see [`Given`] for its shapes).
    pub fn new<A, O, G, H, Fut>(
        name: &'static str,
        toolset: Toolset,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        handler: H,
    ) -> ToolDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        G: Given,
        H: Fn(G, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult<O>> + Send + 'static,
    {
        let mut input_schema = schema_of::<A>();
        // The call path reads `socket_name` and resolves it for a targeted
        // tool, so it also declares it, after the tool's own arguments.
        assert!(
            input_schema["properties"].get("socket_name").is_none(),
            "{name}: socket_name is the call path's argument, not the tool's"
        );
        if G::TARGETED {
            append_args_of::<Sock>(&mut input_schema);
        }
        compact(&mut input_schema, false);
        // Unknown arguments are refused, never dropped. serde cannot do it
        // for flattened argument groups, so the schema's own list decides
        // (the catalog does not spell it out: see `compact`).
        let known: Arc<Value> = Arc::new(input_schema["properties"].clone());
        let (output_schema, wrapped) = output_schema_of::<O>();
        let handler = Arc::new(handler);
        let call: Invoke = Box::new(move |app, catalog, args, ctx| {
            let handler = handler.clone();
            let known = known.clone();
            Box::pin(async move {
                let started = std::time::Instant::now();
                let audit = app.config.audit;
                let raw = if audit { args.clone() } else { Value::Null };
                let outcome = async {
                    let scoped = app.config.scope != Scope::Server;
                    let named = if scoped { args.clone() } else { Value::Null };
                    let client = ctx.client.clone();
                    if client.is_some() {
                        *app.client.lock().unwrap_or_else(|e| e.into_inner()) = client.clone();
                    }
                    let (args, socket_name) = parse_args::<A>(name, &known, args)?;
                    let gate = app.clone();
                    let mut given = G::given(app, catalog, socket_name.as_deref(), ctx)?;
                    // The scope gate: one place, before any handler runs.
                    if let Some(target) = given.target_mut() {
                        gate.enter_scope(target, &named, client.as_deref()).await?;
                    }
                    handler(given, args).await
                }
                .await;
                let millis = started.elapsed().as_secs_f64() * 1000.0;
                if audit {
                    audit::record(name, &raw, outcome.as_ref().err(), millis);
                }
                match outcome {
                    Ok(out) => to_result(out, wrapped),
                    Err(e) => e.into_result(),
                }
            })
        });
        ToolDef {
            name,
            toolset,
            title,
            description,
            hints,
            input_schema,
            output_schema,
            own_wait_ceiling: false,
            meta: None,
            call,
        }
    }

    /// The text copy the model reads leaves out `left_out` and every null
    /// field of the result's objects; `structuredContent` keeps them all,
    /// for clients that read fields.
    pub fn with_lean_text(mut self, left_out: &'static [&'static str]) -> ToolDef {
        let call = self.call;
        self.call = Box::new(move |app, catalog, args, ctx| {
            let result = call(app, catalog, args, ctx);
            Box::pin(async move {
                let mut result = result.await;
                lean_text(&mut result, left_out);
                result
            })
        });
        self
    }

    /// Marks a tool that enforces its own wait ceiling: a read batch
    /// refuses it (batching would multiply that ceiling).
    pub fn with_own_wait_ceiling(mut self) -> ToolDef {
        self.own_wait_ceiling = true;
        self
    }

    /// Lists the tool without an `outputSchema`: clients refuse a result
    /// without `structuredContent` from a tool that declares one (both
    /// SDKs do), and an image result has none (issue 32).
    pub fn without_output_schema(mut self) -> ToolDef {
        self.output_schema = Value::Null;
        self
    }

    /// Lists the tool with `meta` as its `_meta` when `on` (else as it was).
    pub fn with_meta_if(mut self, on: bool, meta: impl FnOnce() -> Value) -> ToolDef {
        if on {
            self.meta = Some(meta());
        }
        self
    }

    /// Advertises `value` as the default of the optional boolean argument
    /// `arg` (for a default the configuration sets).
    pub fn with_boolean_default(mut self, arg: &str, value: bool) -> ToolDef {
        let name = self.name;
        let property = self.input_schema["properties"]
            .get_mut(arg)
            .unwrap_or_else(|| panic!("{name} has no argument {arg}"));
        property["type"] = json!("boolean");
        property["default"] = json!(value);
        self
    }

    /// Starts a call of this tool.
    pub fn call(
        &self,
        app: Arc<App>,
        catalog: Arc<Catalog>,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, CallToolResult> {
        (self.call)(app, catalog, arguments, ctx)
    }

    /// The `tools/list` entry.
    pub fn listing(&self) -> Value {
        let mut listing = json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.hints.annotations(),
        });
        if self.output_schema.is_null() {
            listing.as_object_mut().map(|o| o.remove("outputSchema"));
        }
        if let Some(meta) = &self.meta {
            listing["_meta"] = meta.clone();
        }
        listing
    }
}

/// Every tool of one configuration, in the order `tools/list` shows them
/// (built by [`super::cmd::catalog`]).
pub struct Catalog {
    /// The tools, in catalog order (what a read batch may reach).
    pub tools: Vec<ToolDef>,
    /// `list_prompts` and `get_prompt`, served after the others with
    /// `LIBTMUX_MCP_PROMPTS_AS_TOOLS=1`.
    pub prompt_tools: Vec<ToolDef>,
}

impl Catalog {
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

/// Arguments are decoded in exactly this one place: the tool's own as `A`,
/// and the `socket_name` the call path resolves (a [`Sock`], so a
/// non-string is refused like any mistyped argument).
fn parse_args<A: DeserializeOwned>(
    tool: &str,
    properties: &Value,
    args: Value,
) -> Result<(A, Option<String>), ToolError> {
    let known: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args
    };
    let Some(object) = args.as_object() else {
        return Err(ToolError::invalid(format!(
            "Invalid arguments for {tool}: arguments must be an object"
        )));
    };
    let unknown: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|k| !known.iter().any(|n| n == k))
        .collect();
    if !unknown.is_empty() {
        let unknown = unknown.join(", ");
        return Err(ToolError::invalid(format!(
            "Invalid arguments for {tool}: unknown argument(s) {unknown}"
        ))
        .suggest(format!(
            "Remove or correct the unrecognized argument(s): {unknown}. Valid arguments: {}.",
            known
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    // serde names the type it wanted, not the argument: the schema does.
    let wrong_type = mistyped(properties, object);
    let invalid = |e: serde_json::Error| {
        let why = wrong_type.clone().unwrap_or_else(|| e.to_string());
        ToolError::invalid(format!("Invalid arguments for {tool}: {why}"))
    };
    let sock = Sock::deserialize(&args);
    let args = serde_json::from_value(args).map_err(invalid)?;
    Ok((args, sock.map_err(invalid)?.socket_name))
}

/// The first argument whose JSON type is not the one its schema names, as
/// `timeout: expected a number, got "abc"`; `None` when each fits (null
/// is left to the argument's own parse: optional arguments take it).
fn mistyped(properties: &Value, args: &Map<String, Value>) -> Option<String> {
    args.iter().find_map(|(name, value)| {
        let wanted = properties[name]["type"].as_str()?;
        let fits = match wanted {
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        let article = if wanted.starts_with(['a', 'i', 'o']) {
            "an"
        } else {
            "a"
        };
        (!fits && !value.is_null())
            .then(|| format!("{name}: expected {article} {wanted}, got {value}"))
    })
}

/// Rewrites a result's one text block as its value without `left_out`
/// and null fields (a wrapped list is the bare list, as in `to_result`).
fn lean_text(result: &mut CallToolResult, left_out: &[&str]) {
    let Some(structured) = result.structured_content.as_ref() else {
        return;
    };
    if result.is_error || result.content.len() != 1 {
        return;
    }
    let value = match structured.as_object() {
        Some(map) if map.len() == 1 && map.contains_key("result") => &map["result"],
        _ => structured,
    };
    let lean = lean_value(value, left_out);
    if let Ok(text) = serde_json::to_string(&lean) {
        result.content[0] = json!({ "type": "text", "text": text });
    }
}

fn lean_value(value: &Value, left_out: &[&str]) -> Value {
    match value {
        Value::Array(items) => items.iter().map(|v| lean_value(v, left_out)).collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !v.is_null() && !left_out.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn to_result<O: Serialize + 'static>(out: O, wrapped: bool) -> CallToolResult {
    // A picture is content blocks, not a value.
    if let Some(Snapshot::Picture { png, caption }) = (&out as &dyn Any).downcast_ref() {
        return CallToolResult::image(png, caption.clone());
    }
    let value = match serde_json::to_value(&out) {
        Ok(v) => v,
        Err(e) => return CallToolResult::error(format!("could not encode the result: {e}")),
    };
    if !wrapped {
        return CallToolResult::structured(value);
    }
    match value {
        Value::String(text) => CallToolResult::wrapped_text(text),
        other => {
            // The text copy is the bare value; an empty list has no text
            // block at all, as the reference sends it.
            let text = serde_json::to_string(&other).unwrap_or_default();
            let empty = other.as_array().is_some_and(Vec::is_empty);
            let mut result = CallToolResult::structured(json!({ "result": other }));
            result.content = if empty {
                Vec::new()
            } else {
                vec![json!({ "type": "text", "text": text })]
            };
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_argument_is_named_with_the_type_it_wants() {
        let properties = json!({
            "timeout": {"type": "number"},
            "max_lines": {"type": "integer"},
            "pane_id": {"type": "string"},
            "states": {"type": "boolean"},
            "patterns": {"type": "array"},
            "filters": {"type": "object"},
        });
        let said = |args: Value| mistyped(&properties, args.as_object().unwrap());
        assert_eq!(
            said(json!({"pane_id": "%1", "timeout": "abc"})).as_deref(),
            Some(r#"timeout: expected a number, got "abc""#)
        );
        assert_eq!(
            said(json!({"max_lines": 2.5})).as_deref(),
            Some("max_lines: expected an integer, got 2.5")
        );
        assert_eq!(
            said(json!({"pane_id": 5})).as_deref(),
            Some("pane_id: expected a string, got 5")
        );
        assert_eq!(
            said(json!({"patterns": "x"})).as_deref(),
            Some(r#"patterns: expected an array, got "x""#)
        );
        assert_eq!(
            said(json!({"filters": []})).as_deref(),
            Some("filters: expected an object, got []")
        );
        // Null is for the argument's own parse; fitting values say nothing.
        assert_eq!(
            said(json!({"max_lines": null, "timeout": 3, "states": true})),
            None
        );
    }
}
