//! The 2026-07-28 ("modern", stateless) revision, served beside the four
//! `initialize` revisions by the same reader.
//!
//! A request belongs to this era when it is `server/discover` or its
//! `params._meta` names `io.modelcontextprotocol/protocolVersion`. Such a
//! request needs no `initialize` and leaves the legacy session untouched:
//! everything it needs travels in its own `_meta` (version, client
//! capabilities, log level, progress token). Its answers differ from the
//! legacy ones only at the edges, all of them here: the `_meta` checks
//! (`-32602`, `-32022`), the removed methods (`-32601`), resource not
//! found as `-32602`, and the fields every result carries (`resultType`,
//! the server's identity, and `ttlMs`/`cacheScope` on cacheable results).

use std::sync::Arc;
use std::sync::atomic::AtomicU8;

use serde_json::{Map, Value, json};

use super::{
    Dispatcher, ErrorCode, Id, LATEST_VERSION, RESOURCE_NOT_FOUND, RpcError, SUPPORTED_VERSIONS,
    ServerCapabilities,
};
use crate::mcp::{Asker, BoxFuture, LogLevel, Logger, Outbox, Service};

/// The stateless revision we serve.
pub const MODERN_VERSION: &str = "2026-07-28";

/// `-32022`: the `_meta` names a revision we do not serve.
pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Methods of the handshake revisions that 2026-07-28 removed.
const REMOVED: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Results a client may cache: they carry `ttlMs` and `cacheScope`.
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// How long a cacheable result stays fresh. The lists are fixed for the
/// life of the process, but reads show live tmux state: `0` ("always
/// stale") is the one value true for all of them.
const TTL_MS: u64 = 0;

/// Which era a request belongs to, and what that changes in its answer.
#[derive(Clone, Debug)]
pub enum Era {
    /// After (or while waiting for) `initialize`: the session's rules.
    Legacy,
    /// A self-contained 2026-07-28 request.
    Modern(Modern),
}

/// What a modern request's `_meta` asked for.
#[derive(Clone, Debug)]
pub struct Modern {
    /// `notifications/message` only at or above this level; none without it.
    log_level: Option<LogLevel>,
    /// `serverInfo`, as every result's `_meta` carries it.
    server_info: Value,
    /// The request's `clientInfo.name` (optional in this revision).
    client: Option<Arc<str>>,
}

impl Era {
    /// The era of a request, or the error its `_meta` earns.
    pub fn of(
        method: &str,
        params: Option<&Value>,
        service: &dyn Service,
    ) -> Result<Era, RpcError> {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        let names_version = meta.is_some_and(|m| m.contains_key(PROTOCOL_VERSION));
        if method != "server/discover" && !names_version {
            return Ok(Era::Legacy);
        }
        let meta = meta.ok_or_else(|| missing_meta("params._meta is missing"))?;
        let version = match meta.get(PROTOCOL_VERSION) {
            Some(Value::String(version)) => version,
            Some(_) => return Err(missing_meta(&format!("{PROTOCOL_VERSION} is not a string"))),
            None => return Err(missing_meta(&format!("{PROTOCOL_VERSION} is missing"))),
        };
        if !meta.get(CLIENT_CAPABILITIES).is_some_and(Value::is_object) {
            return Err(missing_meta(&format!(
                "{CLIENT_CAPABILITIES} (an object) is missing"
            )));
        }
        if version != MODERN_VERSION {
            return Err(unsupported_version(version));
        }
        let log_level = match meta.get(LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(level) => Some(level.as_str().and_then(LogLevel::parse).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Invalid params: {LOG_LEVEL} {level} is not a log level"
                ))
            })?),
        };
        let server_info = serde_json::to_value(service.implementation()).unwrap_or(Value::Null);
        Ok(Era::Modern(Modern {
            log_level,
            server_info,
            client: super::params::client_name(meta.get(CLIENT_INFO)),
        }))
    }

    /// The logger a call of this era reports through: the session's level
    /// for legacy calls, the request's own `logLevel` for modern ones.
    pub fn logger(&self, session: &Logger, outbox: &Outbox, name: &str) -> Logger {
        match self {
            Era::Legacy => session.clone(),
            Era::Modern(modern) => {
                let min = modern.log_level.map_or(Logger::OFF, |level| level as u8);
                Logger::new(Arc::new(AtomicU8::new(min)), outbox.clone(), name)
            }
        }
    }

    /// The client's name a call of this era carries: the session's, from
    /// `initialize`, for legacy calls, the request's own for modern ones.
    pub fn client(&self, session: &Option<Arc<str>>) -> Option<Arc<str>> {
        match self {
            Era::Legacy => session.clone(),
            Era::Modern(modern) => modern.client.clone(),
        }
    }

    /// How a call of this era asks the person: as the session's client
    /// declared in `initialize` for legacy calls; a modern request cannot
    /// be asked back on this path.
    pub fn asker(&self, session: &Asker) -> Asker {
        match self {
            Era::Legacy => session.clone(),
            Era::Modern(_) => Asker::unable(
                "a 2026-07-28 request cannot be asked back on stdio (elicitation needs an initialize session that declared it)",
            ),
        }
    }

    /// A result as this era sends it.
    pub fn finish(&self, method: &str, result: Value) -> Value {
        let Era::Modern(modern) = self else {
            return result;
        };
        let mut result = match result {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        result.insert("resultType".into(), json!("complete"));
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(SERVER_INFO.into(), modern.server_info.clone());
        }
        if CACHEABLE.contains(&method) {
            result.insert("ttlMs".into(), json!(TTL_MS));
            result.insert("cacheScope".into(), json!("public"));
        }
        Value::Object(result)
    }

    /// A request answered by a task, answering as this era does.
    pub fn wrap(
        &self,
        method: &'static str,
        future: BoxFuture<'static, Result<Value, RpcError>>,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        match self {
            Era::Legacy => future,
            Era::Modern(_) => {
                let era = self.clone();
                Box::pin(async move {
                    match future.await {
                        Ok(result) => Ok(era.finish(method, result)),
                        Err(error) => Err(era.error(error)),
                    }
                })
            }
        }
    }

    /// An error as this era sends it: 2026-07-28 has no `-32002`.
    pub fn error(&self, error: RpcError) -> RpcError {
        match self {
            Era::Modern(_) if error.code == RESOURCE_NOT_FOUND => RpcError {
                code: ErrorCode::INVALID_PARAMS,
                ..error
            },
            _ => error,
        }
    }
}

fn missing_meta(detail: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "Invalid params: {detail} (a {MODERN_VERSION} request carries {PROTOCOL_VERSION} and \
         {CLIENT_CAPABILITIES} in params._meta)"
    ))
}

/// Every revision we serve, newest first.
fn supported_versions() -> Vec<&'static str> {
    std::iter::once(MODERN_VERSION)
        .chain(SUPPORTED_VERSIONS)
        .collect()
}

fn unsupported_version(requested: &str) -> RpcError {
    RpcError {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: format!(
            "Unsupported protocol version {requested:?}: this server speaks {MODERN_VERSION} \
             per request, or {LATEST_VERSION} and older after initialize"
        ),
        data: Some(json!({ "supported": supported_versions(), "requested": requested })),
    }
}

impl Dispatcher {
    /// Answers a modern request: `Ok(Some)` now, `Ok(None)` from a task.
    pub(super) fn handle_modern(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
        era: Era,
    ) -> Result<Option<Value>, RpcError> {
        let answer = match method {
            "server/discover" => Ok(Some(self.discover())),
            _ if REMOVED.contains(&method) => Err(RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method} (removed in {MODERN_VERSION})"),
            )),
            "tools/list" => self.list_tools(params).map(Some),
            "tools/call" => self.call_tool(id, params, &era).map(|()| None),
            _ => self.handle_feature(id, method, params, &era),
        };
        match answer {
            Ok(result) => Ok(result.map(|result| era.finish(method, result))),
            Err(error) => Err(era.error(error)),
        }
    }

    fn discover(&self) -> Value {
        let instructions = self.service.instructions();
        let mut result = json!({
            "supportedVersions": supported_versions(),
            "capabilities": ServerCapabilities::of(self.service.features()),
        });
        if !instructions.is_empty() {
            result["instructions"] = json!(instructions);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modern() -> Era {
        Era::Modern(Modern {
            log_level: None,
            server_info: json!({ "name": "t", "version": "1" }),
            client: None,
        })
    }

    #[test]
    fn modern_results_carry_the_fields_of_the_revision() {
        let listed = modern().finish("tools/list", json!({ "tools": [] }));
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(listed["ttlMs"], 0);
        assert_eq!(listed["cacheScope"], "public");
        assert_eq!(listed["_meta"][SERVER_INFO]["name"], "t");
        let called = modern().finish("tools/call", json!({ "content": [], "_meta": { "k": 1 } }));
        assert_eq!(called["_meta"]["k"], 1, "a result's own _meta is kept");
        assert!(
            called.get("ttlMs").is_none(),
            "a call result is not cacheable"
        );
        let legacy = Era::Legacy.finish("tools/list", json!({ "tools": [] }));
        assert_eq!(legacy, json!({ "tools": [] }));
    }

    #[test]
    fn resource_not_found_is_invalid_params_only_in_the_modern_era() {
        let missing = || RpcError::new(RESOURCE_NOT_FOUND, "Resource not found: x");
        assert_eq!(modern().error(missing()).code, ErrorCode::INVALID_PARAMS);
        assert_eq!(Era::Legacy.error(missing()).code, RESOURCE_NOT_FOUND);
    }

    #[test]
    fn the_unsupported_version_error_lists_every_served_revision() {
        let error = unsupported_version("1900-01-01");
        assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
        let data = error.data.unwrap();
        assert_eq!(data["requested"], "1900-01-01");
        assert_eq!(
            data["supported"],
            json!([
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ])
        );
    }
}
