//! JSON-RPC 2.0 envelope types, as MCP uses them over stdio.
//!
//! Pure data: no IO, no MCP semantics. [`decode`] turns one input line into
//! an [`Incoming`] message or the error response that line deserves;
//! [`Message`] is everything the server ever writes.
//!
//! The shapes follow the JSON-RPC 2.0 specification and MCP's
//! `schema.ts`; the layout (a `JsonRpcVersion` unit type, `Id`, named error codes)
//! is modelled on helix-lsp's `jsonrpc.rs` and rmcp's `model.rs`.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The `"jsonrpc": "2.0"` member: serializes as `"2.0"`, and nothing else
/// deserializes into it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "2.0" => Ok(JsonRpcVersion),
            other => Err(de::Error::custom(format!(
                "jsonrpc must be \"2.0\", got {other}"
            ))),
        }
    }
}

/// A request id: a string or an integer, echoed back with the same JSON type
/// and value (`0` included; clients use it for `initialize`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// Always an integer (`is_i64() || is_u64()`); kept as a `Number` so it
    /// is written back exactly as read.
    Number(serde_json::Number),
    String(String),
}

impl Id {
    /// `None` for `null`, objects, arrays, booleans and fractional numbers:
    /// none of them is a valid request id.
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id::String(s.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Id::Number(n.clone())),
            _ => None,
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n.into())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Number(n) => n.serialize(s),
            Id::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Id::from_value(&value).ok_or_else(|| de::Error::custom("id must be a string or an integer"))
    }
}

/// A JSON-RPC error code. The named constants are the only ones we send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
}

/// The `error` member of a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn parse_error(detail: impl fmt::Display) -> Self {
        RpcError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        RpcError::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {detail}"),
        )
    }

    pub fn method_not_found(method: &str) -> Self {
        RpcError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        RpcError::new(ErrorCode::INVALID_PARAMS, detail.to_string())
    }
}

/// The inbound envelope of a request or notification. Unknown members are
/// ignored (never `deny_unknown_fields`: clients add fields over time).
#[derive(Clone, Debug, Deserialize)]
pub struct Envelope {
    pub jsonrpc: JsonRpcVersion,
    /// Absent for a notification. `null` never gets here: [`decode`]
    /// rejects it before this struct is built.
    pub id: Option<Id>,
    pub method: String,
    pub params: Option<Value>,
}

/// One decoded input line.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response (`result` or `error`, no `method`) to a request we sent:
    /// its outcome goes back to the call waiting for it, if any.
    Response {
        id: Option<Id>,
        outcome: Result<Value, RpcError>,
    },
}

/// Decodes one line (without its newline). `Err` is the response to send:
/// `-32700` with id `null` for bytes that are not JSON (invalid UTF-8
/// included), `-32600` for JSON that is not a single valid request, with
/// the request's id when one can be read.
#[allow(clippy::result_large_err)] // the error is a whole response, built once per bad line
pub fn decode(line: &[u8]) -> Result<Incoming, Response> {
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| Response::error(None, RpcError::parse_error(e)))?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Response::error(
                None,
                RpcError::invalid_request("batches are not supported"),
            ));
        }
        _ => {
            return Err(Response::error(
                None,
                RpcError::invalid_request("a message must be a JSON object"),
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => match Id::from_value(raw) {
            Some(id) => Some(id),
            None => {
                return Err(Response::error(
                    None,
                    RpcError::invalid_request("id must be a string or an integer"),
                ));
            }
        },
    };
    if !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        return Ok(Incoming::Response {
            id,
            outcome: response_outcome(object),
        });
    }
    let envelope = Envelope::deserialize(Value::Object(object))
        .map_err(|e| Response::error(id.clone(), RpcError::invalid_request(e)))?;
    Ok(match envelope.id {
        Some(id) => Incoming::Request {
            id,
            method: envelope.method,
            params: envelope.params,
        },
        None => Incoming::Notification {
            method: envelope.method,
            params: envelope.params,
        },
    })
}

/// The outcome a response carries: its `result`, else its `error` (a
/// malformed error object reads as an internal error, never a panic).
fn response_outcome(mut object: Map<String, Value>) -> Result<Value, RpcError> {
    if let Some(result) = object.remove("result") {
        return Ok(result);
    }
    let error = object.remove("error").unwrap_or(Value::Null);
    Err(RpcError::deserialize(&error).unwrap_or_else(|_| {
        RpcError::new(
            ErrorCode::INTERNAL_ERROR,
            "the client answered with a malformed error",
        )
    }))
}

/// A request from the server to the client (`elicitation/create`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    pub jsonrpc: JsonRpcVersion,
    pub id: Id,
    pub method: String,
    pub params: Value,
}

impl Request {
    pub fn new(id: Id, method: impl Into<String>, params: Value) -> Self {
        Request {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params,
        }
    }
}

/// A response: exactly one of `result` and `error`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Response {
    pub jsonrpc: JsonRpcVersion,
    /// `null` only when the request's id could not be read.
    pub id: Option<Id>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Result(Value),
    Error(RpcError),
}

impl Response {
    pub fn result(id: Id, result: Value) -> Self {
        Response {
            jsonrpc: JsonRpcVersion,
            id: Some(id),
            outcome: Outcome::Result(result),
        }
    }

    pub fn error(id: Option<Id>, error: RpcError) -> Self {
        Response {
            jsonrpc: JsonRpcVersion,
            id,
            outcome: Outcome::Error(error),
        }
    }
}

/// A notification from the server.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Notification {
    pub jsonrpc: JsonRpcVersion,
    pub method: String,
    pub params: Value,
}

impl Notification {
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Notification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params,
        }
    }
}

/// Everything the server writes to stdout.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Message {
    Response(Response),
    Notification(Notification),
    Request(Request),
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

/// Decodes `params` into `T` in one place: absent params read as `{}`, params
/// that are not an object and every serde complaint become `-32602`.
pub fn parse_params<T: de::DeserializeOwned>(params: Option<Value>) -> Result<T, RpcError> {
    let params = match params {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: params must be an object",
            ));
        }
    };
    serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(line: &str) -> Response {
        decode(line.as_bytes()).expect_err(line)
    }

    fn code(r: &Response) -> ErrorCode {
        match &r.outcome {
            Outcome::Error(e) => e.code,
            Outcome::Result(_) => panic!("not an error: {r:?}"),
        }
    }

    #[test]
    fn ids_round_trip_exactly() {
        for raw in [
            json!(0),
            json!(-7),
            json!(u64::MAX),
            json!(""),
            json!("abc"),
        ] {
            let id = Id::from_value(&raw).unwrap();
            assert_eq!(serde_json::to_value(&id).unwrap(), raw);
        }
        for bad in [
            json!(null),
            json!(1.5),
            json!({"a": 1}),
            json!([1]),
            json!(true),
        ] {
            assert_eq!(Id::from_value(&bad), None, "{bad}");
        }
    }

    #[test]
    fn requests_and_notifications() {
        let r = decode(br#"{"jsonrpc":"2.0","id":0,"method":"ping","extra":1}"#).unwrap();
        assert_eq!(
            r,
            Incoming::Request {
                id: 0.into(),
                method: "ping".into(),
                params: None
            }
        );
        let n = decode(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#)
            .unwrap();
        assert_eq!(
            n,
            Incoming::Notification {
                method: "notifications/initialized".into(),
                params: Some(json!({}))
            }
        );
        let resp = decode(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#).unwrap();
        assert_eq!(
            resp,
            Incoming::Response {
                id: Some("x".into()),
                outcome: Ok(json!({}))
            }
        );
        let failed =
            decode(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#).unwrap();
        assert_eq!(
            failed,
            Incoming::Response {
                id: Some(3.into()),
                outcome: Err(RpcError::new(ErrorCode(-1), "no"))
            }
        );
        let Incoming::Response { outcome, .. } =
            decode(br#"{"jsonrpc":"2.0","id":3,"error":7}"#).unwrap()
        else {
            panic!("a response");
        };
        assert_eq!(outcome.unwrap_err().code, ErrorCode::INTERNAL_ERROR);
    }

    #[test]
    fn malformed_lines() {
        let r = err(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#);
        assert_eq!((code(&r), r.id.clone()), (ErrorCode::PARSE_ERROR, None));
        let r = decode(b"\xff\xfe{}").unwrap_err();
        assert_eq!((code(&r), r.id.clone()), (ErrorCode::PARSE_ERROR, None));
        for (line, id) in [
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, None),
            (r#"{"jsonrpc":"2.0","id":104}"#, Some(Id::from(104))),
            (
                r#"{"jsonrpc":"1.0","id":105,"method":"ping"}"#,
                Some(Id::from(105)),
            ),
            (r#"{"id":"s","method":"ping"}"#, Some(Id::from("s"))),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None),
            (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, None),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, Some(Id::from(1))),
            ("42", None),
        ] {
            let r = err(line);
            assert_eq!(
                (code(&r), r.id.clone()),
                (ErrorCode::INVALID_REQUEST, id),
                "{line}"
            );
        }
    }

    #[test]
    fn responses_serialize_compactly() {
        let ok = Message::from(Response::result(0.into(), json!({})));
        assert_eq!(
            serde_json::to_string(&ok).unwrap(),
            r#"{"jsonrpc":"2.0","id":0,"result":{}}"#
        );
        let e = Message::from(Response::error(
            None,
            RpcError::new(ErrorCode::PARSE_ERROR, "x\ny"),
        ));
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x\ny"}}"#
        );
        let n = Message::from(Notification::new(
            "notifications/progress",
            json!({"progress": 1}),
        ));
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#
        );
    }

    #[test]
    fn params_decode_in_one_place() {
        #[derive(Deserialize, Debug)]
        struct P {
            #[allow(dead_code)]
            cursor: Option<String>,
        }
        assert!(parse_params::<P>(None).is_ok());
        assert!(parse_params::<P>(Some(json!({"cursor": null, "x": 1}))).is_ok());
        assert_eq!(
            parse_params::<P>(Some(json!([1]))).unwrap_err().code,
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            parse_params::<P>(Some(json!({"cursor": 3})))
                .unwrap_err()
                .code,
            ErrorCode::INVALID_PARAMS
        );
    }
}
