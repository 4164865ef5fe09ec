//! The tool table: one [`ToolDef`] per tool drives both `tools/list` and
//! `tools/call`, so the catalog and the dispatch cannot disagree.
//!
//! A tool is a typed async function `(App, Args, CallContext) ->
//! Result<Out, ToolError>`. Its input schema is derived from `Args` (serde
//! and schemars read the same struct, so schema and parsing cannot drift)
//! and its output schema from `Out`. A non-object `Out` (a string, a list)
//! is wrapped as `{"result": …}` the way the reference does it.

mod audit;
mod batch;
mod bounded;
mod buffers;
mod channel;
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
mod server;
mod spawn;
mod target;
pub mod toolsets;
mod wait;
mod window;

use std::sync::Arc;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::mcp::{
    BoxFuture, CallContext, CallToolResult, CompletionRequest, Features, Implementation, Service,
    ServiceError,
};
use crate::tmux::hub::{Hub, Hubs};
use crate::tmux::socket::SocketSpec;
use crate::tmux::{Command, TmuxError};
use server::Sock;
use toolsets::{Selection, Toolset};

/// Shared state every tool call sees.
pub struct App {
    pub config: Config,
    pub hubs: Hubs,
    /// What `call_read_tools_batch` may call: set once the server is built.
    nested: std::sync::OnceLock<Nested>,
}

/// The tools a batch can reach (every tool, hidden ones included, minus
/// the `LIBTMUX_EXCLUDE_TOOLS` names, as in the reference).
pub struct Nested {
    pub tools: Vec<ToolDef>,
    pub exclude: std::collections::BTreeSet<String>,
}

impl App {
    pub fn new(config: Config) -> Arc<App> {
        let hubs = Hubs::new(config.tmux_bin.clone(), config.limits.clone());
        Arc::new(App {
            config,
            hubs,
            nested: std::sync::OnceLock::new(),
        })
    }

    /// The socket a call targets: `LIBTMUX_SOCKET_PATH` if set (as in the
    /// reference), else the call's `socket_name`, else the default.
    pub fn socket(&self, socket_name: Option<&str>) -> Result<Target, ToolError> {
        let spec = match (&self.config.forced_socket_path, socket_name) {
            (Some(path), _) => SocketSpec::Path(path.clone()),
            (None, Some(name)) => {
                SocketSpec::name(name).map_err(|e| ToolError::invalid(e.to_string()))?
            }
            (None, None) => self.config.default_socket.clone(),
        };
        let path = spec.resolve(
            &self.config.tmux_tmpdir,
            self.config.caller.socket_path.as_deref(),
        );
        Ok(Target {
            hub: self.hubs.get(&path),
            spec,
        })
    }

    /// The tools a batch may call, once the server is built.
    pub fn nested(&self) -> Option<&Nested> {
        self.nested.get()
    }

    /// Deletes the paste buffers `load_buffer` created that are still
    /// there (best effort, bounded), then detaches from every tmux server
    /// (sessions are left untouched).
    pub async fn shutdown(&self) {
        let cleanup = async {
            for hub in self.hubs.all() {
                for name in hub.take_buffers() {
                    let _ = hub
                        .run(&Command::new("delete-buffer").opt("-b", name))
                        .await;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), cleanup).await;
        self.hubs.shutdown().await;
    }
}

/// The tmux server a call talks to.
pub struct Target {
    pub hub: Arc<Hub>,
    pub spec: SocketSpec,
}

impl Target {
    pub async fn run(&self, command: Command) -> Result<Vec<Vec<u8>>, ToolError> {
        self.hub.run(&command).await.map_err(ToolError::from)
    }
}

/// A failure the agent can read and act on (an `isError` result).
#[derive(Debug, Clone)]
pub struct ToolError {
    pub message: String,
    pub suggestion: Option<String>,
    /// Kind of failure, reported in `_meta.error_type`.
    pub kind: &'static str,
    /// False for failures the agent cannot fix by changing its call.
    pub expected: bool,
}

impl ToolError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            suggestion: None,
            kind,
            expected: true,
        }
    }

    /// Bad input, refused before tmux is touched.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("ValidationError", message)
    }

    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    fn into_result(self) -> CallToolResult {
        let text = match &self.suggestion {
            Some(s) => format!("{}\n{s}", self.message),
            None => self.message.clone(),
        };
        let mut result = CallToolResult::error(text);
        let mut meta = json!({ "error_type": self.kind, "expected": self.expected });
        if let Some(s) = self.suggestion {
            meta["suggestion"] = json!(s);
        }
        result.meta = Some(meta);
        result
    }
}

impl From<TmuxError> for ToolError {
    fn from(e: TmuxError) -> Self {
        match &e {
            TmuxError::Command(msg) => target::classify(msg),
            TmuxError::NoServer(_) => ToolError::new("TmuxServerNotRunning", e.to_string())
                .suggest("Check socket_name, or call list_servers to find running tmux servers."),
            TmuxError::Unsendable(_) => ToolError::invalid(e.to_string()),
            TmuxError::NotResponding(_) => ToolError::new("TmuxServerNotResponding", e.to_string())
                .suggest("Check the server with `tmux list-sessions` (a stopped server resumes with SIGCONT), or restart it."),
            _ => ToolError {
                expected: false,
                ..ToolError::new("TmuxError", e.to_string())
            },
        }
    }
}

pub type ToolResult<T> = Result<T, ToolError>;

/// MCP tool annotations (hints a client may use to auto-approve).
#[derive(Clone, Copy, Debug)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Reads tmux state only.
pub const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
/// Creates something new; destroys nothing.
pub const CREATE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};
/// Delivers input to a program: it may do anything.
pub const INPUT: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: true,
};
/// Changes tmux state (names, focus, layout, sizes) without destroying anything.
pub const CHANGE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};
/// Destroys tmux objects (and the processes in them).
pub const DESTROY: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: false,
};

/// Changes presentation (size, title, mode); repeating it changes nothing more.
pub const ADJUST: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: true,
    open_world: false,
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

type Handler =
    Box<dyn Fn(Arc<App>, Value, CallContext) -> BoxFuture<'static, CallToolResult> + Send + Sync>;

/// One tool: what `tools/list` says about it and how to call it.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub input_schema: Value,
    pub output_schema: Value,
    call: Handler,
}

impl ToolDef {
    /// A tool that talks to one tmux server. The wrapper resolves the
    /// call's `socket_name` (see [`App::socket`]) before the handler runs
    /// and hands it the [`Target`]; the arguments must include `socket_name`.
    pub fn new<A, O, F, Fut>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        handler: F,
    ) -> ToolDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(Arc<App>, Target, A, CallContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ToolResult<O>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let run = move |app: Arc<App>, args, socket_name: Option<String>, ctx| {
            let handler = handler.clone();
            let run: BoxFuture<'static, ToolResult<O>> = Box::pin(async move {
                let target = app.socket(socket_name.as_deref())?;
                handler(app, target, args, ctx).await
            });
            run
        };
        Self::build::<A, O, _>(name, title, description, hints, true, run)
    }

    /// A tool that no single tmux server is the target of (it scans them,
    /// calls other tools, or touches none).
    pub fn untargeted<A, O, F, Fut>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        handler: F,
    ) -> ToolDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(Arc<App>, A, CallContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ToolResult<O>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let run = move |app, args, _: Option<String>, ctx| {
            let run: BoxFuture<'static, ToolResult<O>> = Box::pin(handler(app, args, ctx));
            run
        };
        Self::build::<A, O, _>(name, title, description, hints, false, run)
    }

    /// The schemas, and the one call path every tool shares: arguments
    /// parsed, `run` awaited, the call audited, the outcome encoded.
    fn build<A, O, R>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        targeted: bool,
        run: R,
    ) -> ToolDef
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        R: Fn(Arc<App>, A, Option<String>, CallContext) -> BoxFuture<'static, ToolResult<O>>
            + Send
            + Sync
            + 'static,
    {
        let mut input_schema = schema_of::<A>();
        compact(&mut input_schema, false);
        // Unknown arguments are refused, never dropped. serde cannot do it
        // for flattened argument groups, so the schema's own list decides
        // (the catalog does not spell it out: see `compact`).
        let known: Arc<Vec<String>> = Arc::new(
            input_schema["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default(),
        );
        // A targeted tool without `socket_name` would always use the
        // default server; an untargeted one with it would ignore it.
        assert_eq!(
            known.iter().any(|k| k == "socket_name"),
            targeted,
            "{name}: a tool takes socket_name exactly when it is built with ToolDef::new"
        );
        let (output_schema, wrapped) = output_schema_of::<O>();
        let run = Arc::new(run);
        let call: Handler = Box::new(move |app, args, ctx| {
            let run = run.clone();
            let known = known.clone();
            Box::pin(async move {
                let started = std::time::Instant::now();
                let audit = app.config.audit;
                let raw = if audit { args.clone() } else { Value::Null };
                let outcome = match parse_args::<A>(name, &known, args) {
                    Ok((args, socket_name)) => run(app, args, socket_name, ctx).await,
                    Err(e) => Err(e),
                };
                let millis = started.elapsed().as_secs_f64() * 1000.0;
                if audit {
                    audit::record(name, &raw, outcome.as_ref().err().map(|e| e.kind), millis);
                }
                match outcome {
                    Ok(out) => to_result(out, wrapped),
                    Err(e) => e.into_result(),
                }
            })
        });
        ToolDef {
            name,
            title,
            description,
            hints,
            input_schema,
            output_schema,
            call,
        }
    }

    /// Starts a call of this tool.
    pub fn call(
        &self,
        app: Arc<App>,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, CallToolResult> {
        (self.call)(app, arguments, ctx)
    }

    /// The `tools/list` entry.
    pub fn listing(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.hints.annotations(),
        })
    }
}

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
        obj.remove("description");
    }
    schema
}

/// Trims what a schema says twice or need not say, since every agent pays
/// for `tools/list` in tokens (the whole catalog stays under 50 KB):
/// `"default": null` and integer `format`s go everywhere; an optional input
/// is typed without `null` (leaving it out is how to say nothing; the server
/// also accepts null) and the arguments several tools share
/// ([`SHARED_ARGS`], explained once in the instructions) carry no
/// description; in output schemas, descriptions go and a field that may be
/// null accepts any value. An input schema leaves out
/// `additionalProperties` flags (the server refuses unknown arguments by
/// name, with the valid ones) and offers an argument that may also come as
/// a JSON string (`filters`, `environment`) as the object it encodes.
fn compact(schema: &mut Value, output: bool) {
    match schema {
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            map.remove("format");
            if !output {
                if map
                    .get("additionalProperties")
                    .is_some_and(Value::is_boolean)
                {
                    map.remove("additionalProperties");
                }
                prefer_object(map);
            }
            if output {
                map.remove("description");
                if is_nullable(map) {
                    map.clear();
                    return;
                }
            }
            let required: Vec<Value> = map
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (key, value) in map.iter_mut() {
                // Under `properties` the keys are field names, not keywords.
                if key != "properties" {
                    compact(value, output);
                    continue;
                }
                let Value::Object(fields) = value else {
                    continue;
                };
                for (name, field) in fields.iter_mut() {
                    compact(field, output);
                    let optional = !required.contains(&Value::String(name.clone()));
                    if output || !optional {
                        continue;
                    }
                    if let Some(field) = field.as_object_mut() {
                        drop_null_type(field);
                        if SHARED_ARGS.contains(&name.as_str()) {
                            field.remove("description");
                        }
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| compact(v, output)),
        _ => {}
    }
}

/// Arguments several tools share, described once in the instructions:
/// the targets, then those of the tools that start a process, then those
/// of the option and hook tools.
const SHARED_ARGS: &[&str] = &[
    "pane_id",
    "session_name",
    "session_id",
    "window_id",
    "window_index",
    "socket_name",
    "start_directory",
    "environment",
    "suppress_persistent_history",
    "scope",
    "target",
    "global_",
];

/// `anyOf: [object, string]` (an object, or a JSON string of one) becomes
/// the object branch: that is what to send.
fn prefer_object(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return;
    };
    let kinds: Vec<_> = branches.iter().map(|b| b.get("type")).collect();
    if kinds != [Some(&json!("object")), Some(&json!("string"))] {
        return;
    }
    let object = branches[0].clone();
    map.remove("anyOf");
    if let Value::Object(object) = object {
        for (key, value) in object {
            map.entry(key).or_insert(value);
        }
    }
}

fn is_nullable(map: &Map<String, Value>) -> bool {
    map.get("type")
        .and_then(Value::as_array)
        .is_some_and(|t| t.contains(&json!("null")))
}

/// Takes `null` out of an optional field's type: `"type": ["string",
/// "null"]` becomes `"type": "string"`, an `enum` loses its `null`, and an
/// `anyOf` loses its null branch (a single branch left is inlined, keeping
/// the field's own description).
fn drop_null_type(field: &mut Map<String, Value>) {
    let null = json!("null");
    if let Some(Value::Array(types)) = field.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != &null).cloned().collect();
        if rest.len() == 1 {
            field.insert("type".into(), rest[0].clone());
        } else if !rest.is_empty() {
            field.insert("type".into(), Value::Array(rest));
        }
    }
    if let Some(Value::Array(values)) = field.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(branches)) = field.get("anyOf") {
        let rest: Vec<Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&null))
            .cloned()
            .collect();
        field.remove("anyOf");
        match <[Value; 1]>::try_from(rest) {
            Ok([Value::Object(only)]) => {
                for (key, value) in only {
                    if key != "description" || !field.contains_key("description") {
                        field.entry(key).or_insert(value);
                    }
                }
            }
            Ok([other]) => {
                field.insert("anyOf".into(), Value::Array(vec![other]));
            }
            Err(rest) => {
                field.insert("anyOf".into(), Value::Array(rest));
            }
        }
    }
}

/// The output schema, and whether results are wrapped as `{"result": …}`.
fn output_schema_of<T: JsonSchema>() -> (Value, bool) {
    let mut schema = schema_of::<T>();
    compact(&mut schema, true);
    if schema.get("type") == Some(&json!("object")) {
        return (schema, false);
    }
    let wrapped = json!({
        "type": "object",
        "properties": { "result": schema },
        "required": ["result"],
    });
    (wrapped, true)
}

/// Arguments are decoded in exactly this one place, with the
/// `socket_name` the wrapper resolves (its type is checked as part of `A`).
fn parse_args<A: DeserializeOwned>(
    tool: &str,
    known: &[String],
    args: Value,
) -> Result<(A, Option<String>), ToolError> {
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
            known.join(", ")
        )));
    }
    let invalid =
        |e: serde_json::Error| ToolError::invalid(format!("Invalid arguments for {tool}: {e}"));
    let sock = Sock::deserialize(&args);
    let args = serde_json::from_value(args).map_err(invalid)?;
    Ok((args, sock.map_err(invalid)?.socket_name))
}

fn to_result<O: Serialize>(out: O, wrapped: bool) -> CallToolResult {
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

/// Every tool, in catalog order.
pub fn catalog() -> Vec<ToolDef> {
    let mut tools = Vec::new();
    batch::register(&mut tools);
    server::register(&mut tools);
    window::register(&mut tools);
    pane::register(&mut tools);
    pane_layout::register(&mut tools);
    pane_io::register(&mut tools);
    wait::register(&mut tools);
    channel::register(&mut tools);
    options::register(&mut tools);
    buffers::register(&mut tools);
    share_output_schemas(&mut tools);
    tools
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

/// The MCP-facing server: the tool table plus the shared [`App`].
pub struct TmuxService {
    app: Arc<App>,
    /// The exposed tools, in catalog order.
    tools: Vec<ToolDef>,
    selection: Selection,
}

/// Every tool name of the catalog (what `LIBTMUX_TOOLS` may name).
pub fn tool_names(prompts_as_tools: bool) -> Vec<&'static str> {
    catalog_with(prompts_as_tools)
        .iter()
        .map(|t| t.name)
        .collect()
}

/// The catalog, plus `list_prompts` and `get_prompt` when asked for
/// (`LIBTMUX_MCP_PROMPTS_AS_TOOLS=1`).
pub fn catalog_with(prompts_as_tools: bool) -> Vec<ToolDef> {
    let mut tools = catalog();
    if prompts_as_tools {
        prompts::register_as_tools(&mut tools);
    }
    tools
}

impl TmuxService {
    /// A server exposing every tool (all four toolsets).
    pub fn new(app: Arc<App>) -> Self {
        let all = Selection {
            toolsets: Toolset::ALL.into(),
            ..Selection::default()
        };
        Self::with_selection(app, all)
    }

    /// A server exposing the tools `selection` allows.
    pub fn with_selection(app: Arc<App>, selection: Selection) -> Self {
        let mut tools: Vec<ToolDef> = catalog_with(app.config.prompts_as_tools)
            .into_iter()
            .filter(|t| selection.allows(t.name))
            .collect();
        // run_command's suppress_history defaults to LIBTMUX_SUPPRESS_HISTORY,
        // so its advertised default is the configured one.
        if let Some(tool) = tools.iter_mut().find(|t| t.name == "run_command") {
            let property = &mut tool.input_schema["properties"]["suppress_history"];
            property["type"] = json!("boolean");
            property["default"] = json!(app.config.suppress_history);
        }
        let nested = Nested {
            tools: catalog(),
            exclude: selection.exclude.clone(),
        };
        let _ = app.nested.set(nested);
        TmuxService {
            app,
            tools,
            selection,
        }
    }

    /// Why a tool of the catalog is not served, and the setting that would
    /// serve it; `None` for a served tool or a name we never had.
    pub fn hidden_because(&self, name: &str) -> Option<String> {
        if self.tools.iter().any(|t| t.name == name) {
            return None;
        }
        if self.selection.exclude.contains(name) {
            return Some(format!(
                "hidden by LIBTMUX_EXCLUDE_TOOLS; remove {name} from it to serve it"
            ));
        }
        if !self.app.config.prompts_as_tools && prompts::TOOL_NAMES.contains(&name) {
            return Some("served only with LIBTMUX_MCP_PROMPTS_AS_TOOLS=1".into());
        }
        let set = toolsets::toolset_of(name)?;
        let mut enabled: Vec<&str> = self.selection.toolsets.iter().map(|t| t.name()).collect();
        enabled.push(set.name());
        Some(format!(
            "it is in the {set} toolset, which this server does not expose; set \
             LIBTMUX_TOOLSETS={} (or LIBTMUX_TOOLS={name} for this tool alone) in the server's env",
            enabled.join(",")
        ))
    }

    /// The tools served, each with its toolset, in catalog order.
    pub fn served(&self) -> Vec<(&'static str, Option<Toolset>)> {
        self.tools
            .iter()
            .map(|t| (t.name, toolsets::toolset_of(t.name)))
            .collect()
    }

    /// Detaches from every tmux server (see [`App::shutdown`]).
    pub async fn shutdown(&self) {
        self.app.shutdown().await;
    }
}

const INSTRUCTIONS: &str = include_str!("instructions.txt");

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
            self.selection.describe(),
            self.app.config.suppress_history
        ));
        if let Some(pane) = &self.app.config.caller.pane_id {
            let extra = format!(
                "\n\nAgent context: this MCP server runs inside tmux pane {pane}; results mark it is_caller=true."
            );
            if text.len() + extra.len() <= 2048 {
                text.push_str(&extra);
            }
        }
        text
    }

    fn tools(&self) -> Vec<Value> {
        self.tools.iter().map(ToolDef::listing).collect()
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> Option<BoxFuture<'static, CallToolResult>> {
        let tool = self.tools.iter().find(|t| t.name == name)?;
        Some(tool.call(self.app.clone(), arguments, ctx))
    }

    fn unknown_tool(&self, name: &str) -> String {
        match self.hidden_because(name) {
            Some(reason) => format!("Unknown tool: {name} ({reason})"),
            None => format!("Unknown tool: {name}"),
        }
    }

    fn features(&self) -> Features {
        Features {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalog leaves these arguments undescribed because the
    /// instructions explain them: each must be named there.
    #[test]
    fn shared_args_are_explained_in_the_instructions() {
        for name in SHARED_ARGS {
            assert!(INSTRUCTIONS.contains(name), "{name}");
        }
    }

    #[test]
    fn an_object_or_json_string_is_offered_as_the_object() {
        let mut schema = json!({
            "type": "object",
            "properties": { "env": { "anyOf": [
                { "type": "object", "additionalProperties": { "type": "string" } },
                { "type": "string" },
            ] } },
            "additionalProperties": false,
        });
        compact(&mut schema, false);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": { "env": {
                    "type": "object", "additionalProperties": { "type": "string" },
                } },
            })
        );
    }
}
