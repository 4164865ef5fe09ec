//! The reader's state and the method table: the lifecycle, the methods
//! answered at once, and the hand-off of those that wait to a task.

mod in_flight;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use self::in_flight::{InFlightMap, lock};
use super::modern::Era;
use super::params::{
    CallToolParams, CancelledParams, GetPromptParams, InitializeParams, InitializeResult,
    ListParams, ReadResourceParams, ServerCapabilities, SetLevelParams, call_arguments,
    client_name, completion_request,
};
use super::{MAX_COMPLETIONS, Queued, RESOURCE_NOT_FOUND, SUPPORTED_VERSIONS, negotiate};
use crate::mcp::ask::{Asker, Requests, declares_form};
use crate::mcp::jsonrpc::{self, ErrorCode, Id, Incoming, Response, RpcError};
use crate::mcp::{
    BoxFuture, CallContext, CallToolResult, LogLevel, Logger, Outbox, Progress, RequestGate,
    Service, ServiceError,
};

/// Why a call cannot ask the person of a session whose `initialize`
/// declared no form elicitation.
const NOT_DECLARED: &str =
    "the MCP client did not declare the elicitation capability (form mode) in initialize";

/// The reader's state: lifecycle, log level, in-flight calls and their tasks.
pub(super) struct Dispatcher {
    pub(super) service: Arc<dyn Service>,
    pub(super) outbox: Outbox,
    /// The negotiated revision; `None` until `initialize` succeeded.
    pub(super) version: Option<&'static str>,
    /// `clientInfo.name` of `initialize`.
    pub(super) client: Option<Arc<str>>,
    pub(super) log_level: Arc<AtomicU8>,
    pub(super) logger: Logger,
    pub(super) in_flight: InFlightMap,
    pub(super) tasks: JoinSet<()>,
    /// Parent of every call's cancellation token.
    pub(super) shutdown: CancellationToken,
    /// Output room: a request's work starts only when its answer fits.
    pub(super) queued: Arc<Queued>,
    /// Our requests to the client that wait for its answer.
    pub(super) requests: Arc<Requests>,
    /// How calls ask the person: able once `initialize` declared form
    /// elicitation (revision 2025-06-18 or later).
    pub(super) asker: Asker,
}

impl Dispatcher {
    pub(super) fn new(service: Arc<dyn Service>, outbox: Outbox, queued: Arc<Queued>) -> Self {
        let log_level = Arc::new(AtomicU8::new(Logger::OFF));
        let logger = Logger::new(
            log_level.clone(),
            outbox.clone(),
            &service.implementation().name,
        );
        Dispatcher {
            service,
            outbox,
            version: None,
            client: None,
            log_level,
            logger,
            in_flight: Arc::default(),
            tasks: JoinSet::new(),
            shutdown: CancellationToken::new(),
            queued,
            requests: Arc::default(),
            asker: Asker::unable(NOT_DECLARED),
        }
    }

    pub(super) fn handle_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match jsonrpc::decode(line) {
            Err(response) => self.outbox.send(response),
            Ok(Incoming::Notification { method, params }) => {
                self.handle_notification(&method, params)
            }
            Ok(Incoming::Request { id, method, params }) => {
                match self.handle_request(id.clone(), &method, params) {
                    Ok(Some(result)) => self.outbox.send(Response::result(id, result)),
                    Ok(None) => {}
                    Err(error) => self.outbox.send(Response::error(Some(id), error)),
                }
            }
            Ok(Incoming::Response { id, outcome }) => {
                let delivered = match &id {
                    Some(id) => self.requests.resolve(id, outcome),
                    None => false,
                };
                if !delivered {
                    let id = id.map_or_else(|| "null".to_owned(), |id| id.to_string());
                    eprintln!("mcp: ignored a response (id {id}): no request of ours waits for it");
                }
            }
        }
    }

    /// `Ok(Some)` is the result to send now, `Ok(None)` means a task answers
    /// later.
    pub(super) fn handle_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
    ) -> Result<Option<Value>, RpcError> {
        let era = Era::of(method, params.as_ref(), &*self.service)?;
        if let Era::Modern(_) = era {
            return self.handle_modern(id, method, params, era);
        }
        match method {
            "ping" => Ok(Some(json!({}))),
            "initialize" => self.initialize(params).map(Some),
            "tools/list"
            | "tools/call"
            | "logging/setLevel"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
                if self.version.is_none() =>
            {
                Err(RpcError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Server not initialized: send initialize before {method}"),
                ))
            }
            "tools/list" => self.list_tools(params).map(Some),
            "tools/call" => self.call_tool(id, params, &Era::Legacy).map(|()| None),
            "logging/setLevel" => self.set_level(params).map(Some),
            _ => self.handle_feature(id, method, params, &Era::Legacy),
        }
    }

    /// The methods of the optional features; `-32601` for a feature the
    /// service does not serve (it was not declared).
    pub(super) fn handle_feature(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
        era: &Era,
    ) -> Result<Option<Value>, RpcError> {
        let features = self.service.features();
        match method {
            "resources/list" if features.resources => {
                one_page(params)?;
                Ok(Some(json!({ "resources": self.service.resources() })))
            }
            "resources/templates/list" if features.resources => {
                one_page(params)?;
                Ok(Some(
                    json!({ "resourceTemplates": self.service.resource_templates() }),
                ))
            }
            "resources/read" if features.resources => {
                let params: ReadResourceParams = jsonrpc::parse_params(params)?;
                let read = self.service.read_resource(&params.uri);
                let future = Box::pin(async move {
                    read.await
                        .map(|contents| json!({ "contents": contents }))
                        .map_err(rpc_error)
                });
                let future = era.wrap("resources/read", future);
                self.spawn_request(id, "resources/read".into(), future)
                    .map(|()| None)
            }
            "prompts/list" if features.prompts => {
                one_page(params)?;
                Ok(Some(json!({ "prompts": self.service.prompts() })))
            }
            "prompts/get" if features.prompts => {
                let params: GetPromptParams = jsonrpc::parse_params(params)?;
                let service = &self.service;
                let rendered = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    service.get_prompt(&params.name, params.arguments.unwrap_or_default())
                }))
                .map_err(|panic| {
                    internal_error(format!(
                        "prompt {} panicked: {}",
                        params.name,
                        panic_text(&panic)
                    ))
                })?;
                rendered.map(Some).map_err(rpc_error)
            }
            "completion/complete" if features.completions => {
                let request = completion_request(params)?;
                let values = self.service.complete(request);
                let future = Box::pin(async move {
                    let mut values = values.await;
                    let total = values.len();
                    let mut completion = json!({});
                    if total > MAX_COMPLETIONS {
                        values.truncate(MAX_COMPLETIONS);
                        completion["total"] = json!(total);
                        completion["hasMore"] = json!(true);
                    }
                    completion["values"] = json!(values);
                    Ok(json!({ "completion": completion }))
                });
                let future = era.wrap("completion/complete", future);
                self.spawn_request(id, "completion/complete".into(), future)
                    .map(|()| None)
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    pub(super) fn handle_notification(&mut self, method: &str, params: Option<Value>) {
        // Never answered, whatever happens (JSON-RPC: no reply to a
        // notification, not even an error).
        match method {
            "notifications/cancelled" => {
                let Ok(params) = jsonrpc::parse_params::<CancelledParams>(params) else {
                    return;
                };
                let Some(id) = params.request_id.as_ref().and_then(Id::from_value) else {
                    return;
                };
                let Some(call) = lock(&self.in_flight).remove(&id) else {
                    return;
                };
                // Close first: from here on nothing is sent for this id.
                call.gate.finish(&self.outbox, None);
                call.cancel.cancel();
            }
            "notifications/initialized" => {}
            _ => {}
        }
    }

    pub(super) fn initialize(&mut self, params: Option<Value>) -> Result<Value, RpcError> {
        if self.version.is_some() {
            return Err(RpcError::invalid_request("initialize was already received"));
        }
        let params: InitializeParams = jsonrpc::parse_params(params)?;
        let version = negotiate(&params.protocol_version);
        let instructions = self.service.instructions();
        let result = InitializeResult {
            protocol_version: version,
            capabilities: ServerCapabilities::of(self.service.features()),
            server_info: self.service.implementation(),
            instructions: (!instructions.is_empty()).then_some(instructions),
        };
        let result = serde_json::to_value(result).map_err(internal_error)?;
        self.version = Some(version);
        self.client = client_name(params.client_info.as_ref());
        // Elicitation exists from 2025-06-18 on (the third of our revisions).
        let has_elicitation = SUPPORTED_VERSIONS[..2].contains(&version);
        if has_elicitation && declares_form(params.capabilities.as_ref()) {
            self.asker = Asker::new(self.requests.clone(), self.outbox.clone());
        }
        Ok(result)
    }

    pub(super) fn list_tools(&self, params: Option<Value>) -> Result<Value, RpcError> {
        one_page(params)?;
        Ok(json!({ "tools": self.service.tools() }))
    }

    pub(super) fn set_level(&self, params: Option<Value>) -> Result<Value, RpcError> {
        let params: SetLevelParams = jsonrpc::parse_params(params)?;
        let level = LogLevel::parse(&params.level).ok_or_else(|| {
            let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
            RpcError::invalid_params(format!(
                "Invalid log level {:?}: expected one of {}",
                params.level,
                names.join(", ")
            ))
        })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        Ok(json!({}))
    }

    pub(super) fn call_tool(
        &mut self,
        id: Id,
        params: Option<Value>,
        era: &Era,
    ) -> Result<(), RpcError> {
        let params: CallToolParams = jsonrpc::parse_params(params)?;
        let arguments = call_arguments(params.arguments)?;
        self.id_free(&id)?;
        let token = params
            .meta
            .and_then(|meta| meta.progress_token)
            .filter(|t| Id::from_value(t).is_some());
        let gate = RequestGate::new();
        let cancel = self.shutdown.child_token();
        let ctx = CallContext {
            cancel: cancel.clone(),
            progress: Progress::new(token, self.outbox.clone(), gate.clone()),
            log: era.logger(
                &self.logger,
                &self.outbox,
                &self.service.implementation().name,
            ),
            client: era.client(&self.client),
            ask: era.asker(&self.asker),
        };
        let service = &self.service;
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
            service.call_tool(&params.name, arguments, ctx)
        }));
        let future = match started {
            Ok(Some(future)) => era.wrap("tools/call", wrap_call(future)),
            Ok(None) => {
                return Err(RpcError::invalid_params(
                    self.service.unknown_tool(&params.name),
                ));
            }
            Err(panic) => {
                return Err(internal_error(format!(
                    "tool {} panicked: {}",
                    params.name,
                    panic_text(&panic)
                )));
            }
        };
        let name = format!("tool {}", params.name);
        self.spawn_answer(id, name, cancel, gate, future);
        Ok(())
    }
}

pub(super) fn internal_error(detail: impl std::fmt::Display) -> RpcError {
    RpcError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("Internal error: {detail}"),
    )
}

pub(super) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// A tool call's future as a request answer: the result, serialized.
pub(super) fn wrap_call(
    future: BoxFuture<'static, CallToolResult>,
) -> BoxFuture<'static, Result<Value, RpcError>> {
    Box::pin(async move { serde_json::to_value(future.await).map_err(internal_error) })
}

/// Rejects a `cursor`: every list is one page, so no cursor is one we issued.
pub(super) fn one_page(params: Option<Value>) -> Result<(), RpcError> {
    let params: ListParams = jsonrpc::parse_params(params)?;
    match params.cursor {
        Some(cursor) => Err(RpcError::invalid_params(format!(
            "Invalid params: invalid cursor {cursor:?}"
        ))),
        None => Ok(()),
    }
}

/// The JSON-RPC error a failed read or prompt becomes.
pub(super) fn rpc_error(error: ServiceError) -> RpcError {
    match error {
        ServiceError::ResourceNotFound(_) => RpcError::new(RESOURCE_NOT_FOUND, error.to_string()),
        ServiceError::InvalidParams(_) => RpcError::invalid_params(error.to_string()),
        ServiceError::Internal(detail) => internal_error(detail),
    }
}
