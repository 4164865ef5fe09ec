//! Backpressure: the bound on output queued for a client that does not
//! read, and on the answers still to come.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Requests read but not started (their task waits for output room) at
/// which the reader stops reading.
const MAX_WAITING: usize = 1024;

/// The least answer size assumed for a started request.
const ANSWER_FLOOR: usize = 16 << 10;

/// Requests that may always run at once while the queue is under its
/// bound, whatever their answers' size: waits that sit for seconds must
/// not hold back other calls' start (a wait started late misses output).
const ALWAYS_STARTED: usize = 32;

/// Backpressure: output bytes serialized and not yet written, and the
/// requests whose answers are still to come, against one bound.
///
/// A request's task starts its work only while the queue is under the
/// bound and either fewer than [`ALWAYS_STARTED`] requests run or their
/// answers (each counted at the running average line size) fit under it
/// too. So a client that stops reading costs about the bound plus
/// [`ALWAYS_STARTED`] answers, not one answer per request it sent. The
/// reader stops reading while the queue is over the bound or
/// [`MAX_WAITING`] requests wait to start; otherwise it keeps reading, so
/// `ping` and cancellations are handled while calls wait to start.
pub(super) struct Queued {
    bytes: AtomicUsize,
    bound: usize,
    /// Requests started and not answered yet.
    started: AtomicUsize,
    /// Requests read and not started yet.
    waiting: AtomicUsize,
    /// A running average of the lines written.
    typical: AtomicUsize,
    /// Woken when a line is written or a request is answered.
    drained: tokio::sync::Notify,
}

impl Queued {
    pub(super) fn new(bound: usize) -> Self {
        Queued {
            bytes: AtomicUsize::new(0),
            bound,
            started: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            typical: AtomicUsize::new(ANSWER_FLOOR),
            drained: tokio::sync::Notify::new(),
        }
    }

    pub(super) fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
        let typical = self.typical.load(Ordering::Relaxed);
        self.typical.store((typical * 7 + n) / 8, Ordering::Relaxed);
    }

    pub(super) fn written(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    /// Waits until `ready` holds, rechecking each time output drains.
    pub(super) async fn until(&self, ready: impl Fn() -> bool) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if ready() {
                return;
            }
            drained.await;
        }
    }

    /// Resolves once the reader may read another request.
    pub(super) async fn room(&self) {
        self.until(|| {
            self.bytes.load(Ordering::Acquire) < self.bound
                && self.waiting.load(Ordering::Acquire) < MAX_WAITING
        })
        .await
    }

    /// A request was read; its task will [`start`](Self::start).
    pub(super) fn read(&self) {
        self.waiting.fetch_add(1, Ordering::AcqRel);
    }

    /// Resolves when a request's work may start: the queue is under its
    /// bound, and fewer than [`ALWAYS_STARTED`] requests run or the answers
    /// of those already started fit too.
    pub(super) async fn start(&self) {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            let started = self.started.load(Ordering::Acquire);
            let typical = self.typical.load(Ordering::Relaxed).max(ANSWER_FLOOR);
            let bytes = self.bytes.load(Ordering::Acquire);
            let fits = bytes < self.bound
                && (started < ALWAYS_STARTED
                    || bytes + started.saturating_mul(typical) < self.bound);
            if !fits {
                drained.await;
                continue;
            }
            let next = started + 1;
            if self
                .started
                .compare_exchange(started, next, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                self.not_waiting();
                return;
            }
        }
    }

    /// A request that waited to start was cancelled.
    pub(super) fn not_waiting(&self) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    /// A started request has queued its answer (or was cancelled).
    pub(super) fn answered(&self) {
        self.started.fetch_sub(1, Ordering::AcqRel);
        self.drained.notify_waiters();
    }
}
