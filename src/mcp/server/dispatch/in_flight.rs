//! Requests being answered: the map of those in flight (so a
//! cancellation finds them), the task that answers each, and shutdown.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Dispatcher, internal_error, panic_text};
use crate::mcp::jsonrpc::{Id, Response, RpcError};
use crate::mcp::server::SHUTDOWN_GRACE;
use crate::mcp::{BoxFuture, RequestGate};

/// A call that has not been answered yet.
pub(in crate::mcp::server) struct InFlight {
    pub(in crate::mcp::server) cancel: CancellationToken,
    pub(in crate::mcp::server) gate: Arc<RequestGate>,
}

pub(in crate::mcp::server) type InFlightMap = Arc<Mutex<HashMap<Id, InFlight>>>;

/// Removes a finished request from the map, unless its id was reused.
pub(in crate::mcp::server) fn forget(in_flight: &InFlightMap, id: &Id, gate: &Arc<RequestGate>) {
    let mut map = lock(in_flight);
    if map
        .get(id)
        .is_some_and(|call| Arc::ptr_eq(&call.gate, gate))
    {
        map.remove(id);
    }
}

pub(in crate::mcp::server) fn lock(
    map: &InFlightMap,
) -> std::sync::MutexGuard<'_, HashMap<Id, InFlight>> {
    map.lock().unwrap_or_else(|e| e.into_inner())
}

impl Dispatcher {
    /// Refuses an id that a request still in flight carries: its
    /// cancellation and answer would be ambiguous.
    pub(in crate::mcp::server) fn id_free(&self, id: &Id) -> Result<(), RpcError> {
        if lock(&self.in_flight).contains_key(id) {
            return Err(RpcError::invalid_request(format!(
                "request id {id} is already in use by a running call"
            )));
        }
        Ok(())
    }

    /// Runs a request that is not a tool call (`resources/read`,
    /// `completion/complete`) in its own task, cancellable like a call.
    pub(in crate::mcp::server) fn spawn_request(
        &mut self,
        id: Id,
        name: String,
        future: BoxFuture<'static, Result<Value, RpcError>>,
    ) -> Result<(), RpcError> {
        self.id_free(&id)?;
        let gate = RequestGate::new();
        let cancel = self.shutdown.child_token();
        self.spawn_answer(id, name, cancel, gate, future);
        Ok(())
    }

    /// Registers the request as in flight and spawns the task that answers it.
    pub(in crate::mcp::server) fn spawn_answer(
        &mut self,
        id: Id,
        name: String,
        cancel: CancellationToken,
        gate: Arc<RequestGate>,
        future: BoxFuture<'static, Result<Value, RpcError>>,
    ) {
        lock(&self.in_flight).insert(
            id.clone(),
            InFlight {
                cancel: cancel.clone(),
                gate: gate.clone(),
            },
        );
        let outbox = self.outbox.clone();
        let in_flight = self.in_flight.clone();
        let queued = self.queued.clone();
        queued.read();
        self.tasks.spawn(async move {
            let started = tokio::select! {
                biased;
                _ = cancel.cancelled() => false,
                _ = queued.start() => true,
            };
            if !started {
                // Cancelled (or shutting down) before it began: the
                // cancellation already closed its gate.
                queued.not_waiting();
                forget(&in_flight, &id, &gate);
                return;
            }
            let response = match catch_unwind(future).await {
                Ok(Ok(result)) => Response::result(id.clone(), result),
                Ok(Err(error)) => Response::error(Some(id.clone()), error),
                Err(panic) => {
                    eprintln!("mcp: {name} panicked: {panic}");
                    Response::error(
                        Some(id.clone()),
                        internal_error(format!("{name} panicked: {panic}")),
                    )
                }
            };
            // Does nothing if the call was cancelled (the gate is closed).
            gate.finish(&outbox, Some(response.into()));
            queued.answered();
            forget(&in_flight, &id, &gate);
        });
    }

    /// Forgets finished call tasks so the set does not grow.
    pub(in crate::mcp::server) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Steps (1) to (3) of the shutdown order in the module doc.
    pub(in crate::mcp::server) async fn shut_down(&mut self) {
        self.shutdown.cancel();
        for (_, call) in lock(&self.in_flight).drain() {
            call.gate.finish(&self.outbox, None);
        }
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            eprintln!(
                "mcp: aborting {} call(s) that ignored cancellation",
                self.tasks.len()
            );
            self.tasks.shutdown().await;
        }
    }
}

/// Runs `future`, turning a panic inside it into `Err(message)`: a broken
/// tool gets a `-32603` answer instead of leaving its request unanswered.
pub(in crate::mcp::server) async fn catch_unwind<T>(
    mut future: BoxFuture<'static, T>,
) -> Result<T, String> {
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic_text(&panic))),
        }
    })
    .await
}
