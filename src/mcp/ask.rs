//! Requests this server sends to the client: asking the person through
//! MCP elicitation (`elicitation/create`, form mode).
//!
//! Our requests have an id space of their own (`tmux-mcp-N` strings). A
//! call that asks registers a one-shot channel under a fresh id, queues the
//! request in the [`Outbox`] (the one writer still writes everything) and
//! waits on the channel, its cancellation and a bound; the reader hands
//! each response to [`Requests::resolve`], which finds the channel under a
//! lock held for the map operation only. A response nobody waits for is
//! logged by the reader, never fatal. A call that stops waiting (answered,
//! cancelled, out of time, dropped) removes its id; when it gives up
//! before the answer it tells the client with `notifications/cancelled`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::Outbox;
use super::jsonrpc::{Id, Request, RpcError};

/// At most this many of our requests wait at once; more are refused
/// rather than growing the map (each waits for a person).
const MAX_WAITING: usize = 64;

type ReplyTo = oneshot::Sender<Result<Value, RpcError>>;

/// The requests we sent and still wait for, shared by the reader (which
/// resolves them) and the calls (which send them).
#[derive(Default)]
pub struct Requests {
    next: AtomicU64,
    waiting: Mutex<HashMap<Id, ReplyTo>>,
}

impl Requests {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Id, ReplyTo>> {
        // A panic under this lock cannot leave the map half-changed.
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id for `reply`, or `None` when too many wait already.
    fn register(&self, reply: ReplyTo) -> Option<Id> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = Id::String(format!("tmux-mcp-{n}"));
        let mut waiting = self.lock();
        if waiting.len() >= MAX_WAITING {
            return None;
        }
        waiting.insert(id.clone(), reply);
        Some(id)
    }

    fn forget(&self, id: &Id) -> bool {
        self.lock().remove(id).is_some()
    }

    /// Hands the client's answer to the call waiting for `id`; `false`
    /// when none waits (unknown id, or the call gave up).
    pub fn resolve(&self, id: &Id, outcome: Result<Value, RpcError>) -> bool {
        let reply = self.lock().remove(id);
        match reply {
            Some(reply) => reply.send(outcome).is_ok(),
            None => false,
        }
    }

    /// How many of our requests wait for an answer.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }
}

/// Removes a request from the map however its wait ends.
struct Pending<'a> {
    requests: &'a Requests,
    id: Id,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.requests.forget(&self.id);
    }
}

/// What the person answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// `accept`, with the form's content (`{}` when it sent none).
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// Why no answer came.
#[derive(Clone, Debug, PartialEq)]
pub enum AskError {
    /// The client cannot be asked; the text says why.
    Unsupported(&'static str),
    /// Nobody answered within the bound.
    Unanswered(Duration),
    /// The call was cancelled (or the server is shutting down).
    Cancelled,
    /// The client answered with an error or something unreadable.
    Failed(String),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Unsupported(why) => f.write_str(why),
            AskError::Unanswered(within) => {
                write!(f, "nobody answered within {} s", within.as_secs())
            }
            AskError::Cancelled => f.write_str("the call was cancelled while asking"),
            AskError::Failed(why) => f.write_str(why),
        }
    }
}

/// How a call asks the person through the client, if it can.
#[derive(Clone)]
pub struct Asker {
    route: Result<Route, &'static str>,
}

#[derive(Clone)]
struct Route {
    requests: Arc<Requests>,
    outbox: Outbox,
}

impl Asker {
    /// An asker that cannot ask; `why` is what the refusal says.
    pub fn unable(why: &'static str) -> Self {
        Asker { route: Err(why) }
    }

    /// For calls made outside a session (tests, the demo).
    pub fn none() -> Self {
        Self::unable("this call has no MCP client to ask")
    }

    /// An asker for a client that declared form elicitation.
    pub fn new(requests: Arc<Requests>, outbox: Outbox) -> Self {
        Asker {
            route: Ok(Route { requests, outbox }),
        }
    }

    /// Whether the client can be asked at all.
    pub fn can_ask(&self) -> bool {
        self.route.is_ok()
    }

    /// Asks the person `message` with a form of `schema` (flat properties,
    /// as elicitation allows) and waits up to `within` for the answer.
    pub async fn form(
        &self,
        message: &str,
        schema: Value,
        within: Duration,
        cancel: &CancellationToken,
    ) -> Result<Answer, AskError> {
        let route = self
            .route
            .as_ref()
            .map_err(|why| AskError::Unsupported(why))?;
        if cancel.is_cancelled() {
            return Err(AskError::Cancelled);
        }
        let (reply, answer) = oneshot::channel();
        let id = route.requests.register(reply).ok_or_else(|| {
            AskError::Failed(format!(
                "{MAX_WAITING} questions already wait for the person"
            ))
        })?;
        let pending = Pending {
            requests: &route.requests,
            id: id.clone(),
        };
        let params = json!({ "message": message, "requestedSchema": schema });
        route
            .outbox
            .send(Request::new(id.clone(), "elicitation/create", params));
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            answer = tokio::time::timeout(within, answer) => Some(answer),
        };
        let gave_up = |reason: &str| {
            // Only if the answer had not come meanwhile.
            if route.requests.forget(&pending.id) {
                route.outbox.notify(
                    "notifications/cancelled",
                    json!({ "requestId": &pending.id, "reason": reason }),
                );
            }
        };
        match outcome {
            None => {
                gave_up("the tool call was cancelled");
                Err(AskError::Cancelled)
            }
            Some(Err(_)) => {
                gave_up("no answer in time");
                Err(AskError::Unanswered(within))
            }
            Some(Ok(Err(_))) => Err(AskError::Cancelled),
            Some(Ok(Ok(Err(error)))) => Err(AskError::Failed(format!(
                "the client could not ask: {}",
                error.message
            ))),
            Some(Ok(Ok(Ok(result)))) => answer_of(&result),
        }
    }
}

/// The `ElicitResult` the client sent, read without trusting its shape.
fn answer_of(result: &Value) -> Result<Answer, AskError> {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(Answer::Accept(
            result
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        )),
        Some("decline") => Ok(Answer::Decline),
        Some("cancel") => Ok(Answer::Cancel),
        _ => Err(AskError::Failed(
            "the client's answer has no known action".to_owned(),
        )),
    }
}

/// Whether `capabilities` (of `initialize`) declare form elicitation:
/// `elicitation: {}` (form only, as 2025-06-18 has it) or with `form`.
pub fn declares_form(capabilities: Option<&Value>) -> bool {
    match capabilities.and_then(|c| c.get("elicitation")) {
        Some(Value::Object(modes)) => modes.is_empty() || modes.contains_key("form"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Outbound;
    use tokio::sync::mpsc;

    fn asker() -> (Asker, Arc<Requests>, mpsc::UnboundedReceiver<Outbound>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let requests = Arc::new(Requests::default());
        (Asker::new(requests.clone(), Outbox(tx)), requests, rx)
    }

    fn sent(rx: &mut mpsc::UnboundedReceiver<Outbound>) -> Value {
        serde_json::to_value(rx.try_recv().expect("a message was queued")).unwrap()
    }

    #[test]
    fn form_capability_is_read_as_the_revisions_write_it() {
        let caps = |v: Value| declares_form(Some(&v));
        assert!(caps(json!({"elicitation": {}})));
        assert!(caps(json!({"elicitation": {"form": {}}})));
        assert!(caps(json!({"elicitation": {"form": {}, "url": {}}})));
        assert!(!caps(json!({"elicitation": {"url": {}}})));
        assert!(!caps(json!({"elicitation": true})));
        assert!(!caps(json!({"sampling": {}})));
        assert!(!declares_form(None));
    }

    #[tokio::test]
    async fn an_answer_reaches_the_call_that_asked() {
        let (asker, requests, mut rx) = asker();
        let cancel = CancellationToken::new();
        let ask = asker.form(
            "Kill?",
            json!({"type": "object"}),
            Duration::from_secs(5),
            &cancel,
        );
        let answer_it = async {
            while requests.waiting() == 0 {
                tokio::task::yield_now().await;
            }
            let request = sent(&mut rx);
            assert_eq!(request["method"], "elicitation/create");
            assert_eq!(request["params"]["message"], "Kill?");
            let id = Id::from_value(&request["id"]).unwrap();
            assert!(!requests.resolve(&Id::from("other"), Ok(json!({}))));
            let accept = json!({"action": "accept", "content": {"confirm": true}});
            assert!(requests.resolve(&id, Ok(accept)));
        };
        let (answer, ()) = tokio::join!(ask, answer_it);
        let mut content = Map::new();
        content.insert("confirm".into(), json!(true));
        assert_eq!(answer, Ok(Answer::Accept(content)));
        assert_eq!(requests.waiting(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_in_time_cancels_the_request() {
        let (asker, requests, mut rx) = asker();
        let cancel = CancellationToken::new();
        let within = Duration::from_secs(30);
        let answer = asker.form("Kill?", json!({}), within, &cancel).await;
        assert_eq!(answer, Err(AskError::Unanswered(within)));
        let request = sent(&mut rx);
        let cancelled = sent(&mut rx);
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], request["id"]);
        assert_eq!(requests.waiting(), 0);
        // A late answer finds nobody waiting.
        let id = Id::from_value(&request["id"]).unwrap();
        assert!(!requests.resolve(&id, Ok(json!({"action": "accept"}))));
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_asking() {
        let (asker, requests, mut rx) = asker();
        let cancel = CancellationToken::new();
        let ask = asker.form("Kill?", json!({}), Duration::from_secs(60), &cancel);
        let cancel_it = async {
            while requests.waiting() == 0 {
                tokio::task::yield_now().await;
            }
            cancel.cancel();
        };
        let (answer, ()) = tokio::join!(ask, cancel_it);
        assert_eq!(answer, Err(AskError::Cancelled));
        sent(&mut rx);
        assert_eq!(sent(&mut rx)["method"], "notifications/cancelled");
        assert_eq!(requests.waiting(), 0);
    }

    #[tokio::test]
    async fn errors_and_odd_answers_fail_closed() {
        let (asker, requests, _rx) = asker();
        let cancel = CancellationToken::new();
        for (outcome, expected) in [
            (Ok(json!({"action": "decline"})), Ok(Answer::Decline)),
            (Ok(json!({"action": "cancel"})), Ok(Answer::Cancel)),
            (
                Ok(json!({"action": "maybe"})),
                Err(AskError::Failed(
                    "the client's answer has no known action".into(),
                )),
            ),
            (
                Err(RpcError::new(super::super::jsonrpc::ErrorCode(-1), "nope")),
                Err(AskError::Failed("the client could not ask: nope".into())),
            ),
        ] {
            let ask = asker.form("Kill?", json!({}), Duration::from_secs(5), &cancel);
            let answer_it = async {
                loop {
                    let id = requests.lock().keys().next().cloned();
                    if let Some(id) = id {
                        assert!(requests.resolve(&id, outcome.clone()));
                        break;
                    }
                    tokio::task::yield_now().await;
                }
            };
            let (answer, ()) = tokio::join!(ask, answer_it);
            assert_eq!(answer, expected);
        }
        let unable = Asker::none();
        assert!(!unable.can_ask());
        assert!(matches!(
            unable
                .form("x", json!({}), Duration::from_secs(1), &cancel)
                .await,
            Err(AskError::Unsupported(_))
        ));
    }
}
