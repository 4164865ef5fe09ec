//! The wire shapes: params as they arrive, results as they leave.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::jsonrpc::{self, RpcError};
use crate::mcp::{CompletionRef, CompletionRequest, Implementation, McpFeatures};

/// The `arguments` of a `tools/call`: an object, absent (`{}`), or a JSON
/// string holding an object, which some models send; that string is decoded
/// once (a string inside it is not decoded again).
pub(super) fn call_arguments(arguments: Option<Value>) -> Result<Value, RpcError> {
    let refused = || RpcError::invalid_params("Invalid params: arguments must be an object");
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(arguments @ Value::Object(_)) => Ok(arguments),
        Some(Value::String(text)) => match serde_json::from_str(&text) {
            Ok(arguments @ Value::Object(_)) => Ok(arguments),
            _ => Err(refused()),
        },
        Some(_) => Err(refused()),
    }
}

/// `completion/complete` params. `argument` is required; a `ref` of an
/// unknown type or shape completes to nothing rather than failing.
pub(super) fn completion_request(params: Option<Value>) -> Result<CompletionRequest, RpcError> {
    let params: CompleteParams = jsonrpc::parse_params(params)?;
    let reference = match params.reference {
        Some(r) => {
            let field = |key: &str| r.get(key).and_then(Value::as_str).map(str::to_owned);
            match (
                r.get("type").and_then(Value::as_str),
                field("name"),
                field("uri"),
            ) {
                (Some("ref/prompt"), Some(name), _) => CompletionRef::Prompt(name),
                (Some("ref/resource"), _, Some(uri)) => CompletionRef::Resource(uri),
                _ => CompletionRef::Other,
            }
        }
        None => CompletionRef::Other,
    };
    let context = params
        .context
        .and_then(|c| c.arguments)
        .map(|args| {
            args.into_iter()
                .filter(|(_, v)| v.is_string())
                .collect::<Map<String, Value>>()
        })
        .unwrap_or_default();
    Ok(CompletionRequest {
        reference,
        argument: params.argument.name,
        value: params.argument.value,
        context,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InitializeParams {
    /// Required, and must be a string: anything else is `-32602`.
    pub(super) protocol_version: String,
    /// Optional; only its `name` is kept, when it is a string.
    #[serde(default)]
    pub(super) client_info: Option<Value>,
    /// Optional; only `elicitation` is read.
    #[serde(default)]
    pub(super) capabilities: Option<Value>,
}

/// `clientInfo.name`, when it is a string.
pub(super) fn client_name(client_info: Option<&Value>) -> Option<std::sync::Arc<str>> {
    let name = client_info?.get("name")?.as_str()?;
    Some(name.into())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InitializeResult {
    pub(super) protocol_version: &'static str,
    pub(super) capabilities: ServerCapabilities,
    pub(super) server_info: Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) instructions: Option<String>,
}

/// Only what is served: tools (a fixed list), logging, and the optional
/// features the service serves (fixed lists, no subscriptions).
#[derive(Serialize)]
pub(super) struct ServerCapabilities {
    pub(super) tools: ListChanged,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) resources: Option<ResourcesCapability>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) prompts: Option<ListChanged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) completions: Option<Map<String, Value>>,
    pub(super) logging: Map<String, Value>,
}

impl ServerCapabilities {
    pub(super) fn of(features: McpFeatures) -> Self {
        let fixed = ListChanged {
            list_changed: false,
        };
        ServerCapabilities {
            tools: fixed,
            resources: features.resources.then_some(ResourcesCapability {
                subscribe: false,
                list_changed: false,
            }),
            prompts: features.prompts.then_some(fixed),
            completions: features.completions.then(Map::new),
            logging: Map::new(),
        }
    }
}

#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ListChanged {
    pub(super) list_changed: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ResourcesCapability {
    pub(super) subscribe: bool,
    pub(super) list_changed: bool,
}

#[derive(Deserialize)]
pub(super) struct ListParams {
    /// Any JSON value: a non-string cursor is just as invalid.
    pub(super) cursor: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct ReadResourceParams {
    pub(super) uri: String,
}

#[derive(Deserialize)]
pub(super) struct GetPromptParams {
    pub(super) name: String,
    /// MCP sends strings; other JSON values are passed on for the service to judge.
    pub(super) arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
pub(super) struct CompleteParams {
    #[serde(rename = "ref")]
    pub(super) reference: Option<Value>,
    pub(super) argument: CompleteArgument,
    pub(super) context: Option<CompleteContext>,
}

#[derive(Deserialize)]
pub(super) struct CompleteArgument {
    pub(super) name: String,
    pub(super) value: String,
}

#[derive(Deserialize)]
pub(super) struct CompleteContext {
    pub(super) arguments: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
pub(super) struct CallToolParams {
    pub(super) name: String,
    pub(super) arguments: Option<Value>,
    #[serde(rename = "_meta")]
    pub(super) meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RequestMeta {
    pub(super) progress_token: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct SetLevelParams {
    pub(super) level: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CancelledParams {
    pub(super) request_id: Option<Value>,
}
