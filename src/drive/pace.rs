//! The one way a tool waits: sleep until a change, the deadline or a
//! cancellation, and meanwhile tell a client that listens how the wait
//! goes.
//!
//! Progress notifications are what keeps a long call alive in clients that
//! reset their request timeout on progress (Claude Code also shows the
//! message). A report is due every [`PROGRESS_EVERY`], and only while the
//! client asked for progress: without a progress token a wait wakes for
//! nothing but its change, its deadline or a cancellation. A tick only
//! wakes the waiting task to queue a notification for the client; it sends
//! nothing to tmux, so it is not polling.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::mcp::{CallContext, Progress};

/// How often a wait reports progress to a client that asked for it.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What ended one [`Pace::sleep`].
#[derive(Debug, PartialEq, Eq)]
pub enum Woke<T> {
    /// The awaited change came, with its value.
    Changed(T),
    /// A progress report was due; nothing changed.
    Tick,
    /// The deadline passed.
    Deadline,
    /// The call was cancelled.
    Cancelled,
}

/// One call's wait: its deadline, its cancellation and its progress reports.
pub struct Pace {
    progress: Progress,
    cancel: CancellationToken,
    /// What is waited on, as the messages name it ("pane %3").
    subject: String,
    started: Instant,
    effective: Duration,
    deadline: Instant,
    next_report: Instant,
}

impl Pace {
    /// A wait that began at `started` and may last `effective`.
    pub fn new(
        ctx: &CallContext,
        subject: String,
        started: std::time::Instant,
        effective: Duration,
    ) -> Pace {
        // tokio's clock, so that a test with paused time drives it.
        let started = Instant::from_std(started);
        Pace {
            progress: ctx.progress.clone(),
            cancel: ctx.cancel.clone(),
            subject,
            started,
            effective,
            deadline: started + effective,
            next_report: Instant::now() + PROGRESS_EVERY,
        }
    }

    /// Reports progress 0 with `what` ("armed"): a client learns the wait
    /// has reached a point it can act on (output from here on counts).
    pub fn report_start(&self, what: &str) {
        self.progress.report(
            0.0,
            Some(self.effective.as_secs_f64()),
            Some(format!("Waiting on {}: {what}", self.subject)),
        );
    }

    /// The bound on the wait, as the result reports it.
    pub fn effective(&self) -> Duration {
        self.effective
    }

    /// Seconds since the wait began, as results report them.
    pub fn elapsed_seconds(&self) -> f64 {
        rounded(self.started.elapsed())
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// The time left until the deadline (zero once it passed).
    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Sleeps until `change` resolves, the deadline passes, the call is
    /// cancelled or (only for a client that asked) a progress report is
    /// due; sends the report that is due first. Dropping `change` on any
    /// other outcome must be harmless (pass a pinned `&mut` to keep it).
    pub async fn sleep<F: Future>(&mut self, change: F) -> Woke<F::Output> {
        let now = Instant::now();
        if now >= self.deadline {
            return Woke::Deadline;
        }
        let wanted = self.progress.wanted();
        if wanted && now >= self.next_report {
            self.report_tick(now);
        }
        let wake = if wanted {
            self.deadline.min(self.next_report)
        } else {
            self.deadline
        };
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Woke::Cancelled,
            value = change => Woke::Changed(value),
            _ = tokio::time::sleep_until(wake) => {
                if Instant::now() >= self.deadline {
                    Woke::Deadline
                } else {
                    Woke::Tick
                }
            }
        }
    }

    fn report_tick(&mut self, now: Instant) {
        self.next_report = now + PROGRESS_EVERY;
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let total = self.effective.as_secs_f64();
        let left = (total - elapsed).max(0.0);
        let message = format!(
            "Waiting on {}: {elapsed:.1}s elapsed, {left:.1}s left",
            self.subject
        );
        self.progress.report(elapsed, Some(total), Some(message));
    }
}

/// Seconds since `started`, to the millisecond, as results report them.
pub fn elapsed_seconds(started: std::time::Instant) -> f64 {
    rounded(started.elapsed())
}

fn rounded(elapsed: Duration) -> f64 {
    (elapsed.as_secs_f64() * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::{Logger, Outbox, RequestGate};
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    fn context(
        token: Option<Value>,
    ) -> (CallContext, mpsc::UnboundedReceiver<crate::mcp::Outbound>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let ctx = CallContext {
            cancel: CancellationToken::new(),
            progress: Progress::new(token, Outbox(tx), RequestGate::new()),
            log: Logger::none(),
            client: None,
            ask: crate::mcp::Asker::none(),
        };
        (ctx, rx)
    }

    fn progress_of(message: crate::mcp::Outbound) -> Value {
        let value = serde_json::to_value(message).expect("serializes");
        assert_eq!(value["method"], "notifications/progress", "{value}");
        value["params"].clone()
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_ticks_every_second_until_its_deadline() {
        let (ctx, mut rx) = context(Some(json!("t")));
        let mut pace = Pace::new(
            &ctx,
            "pane %1".into(),
            Instant::now().into_std(),
            Duration::from_millis(2500),
        );
        let never = std::future::pending::<()>();
        tokio::pin!(never);
        let mut woke = Vec::new();
        loop {
            let w = pace.sleep(never.as_mut()).await;
            let end = w == Woke::Deadline;
            woke.push(w);
            if end {
                break;
            }
        }
        assert_eq!(woke, [Woke::Tick, Woke::Tick, Woke::Deadline]);
        let first = progress_of(rx.try_recv().expect("first report"));
        assert_eq!(first["progress"], 1.0);
        assert_eq!(first["total"], 2.5);
        assert_eq!(
            first["message"],
            "Waiting on pane %1: 1.0s elapsed, 1.5s left"
        );
        let second = progress_of(rx.try_recv().expect("second report"));
        assert_eq!(second["progress"], 2.0);
        assert!(rx.try_recv().is_err(), "no report at the deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_token_a_wait_wakes_only_for_its_end() {
        let (ctx, mut rx) = context(None);
        let mut pace = Pace::new(
            &ctx,
            "pane %1".into(),
            Instant::now().into_std(),
            Duration::from_secs(5),
        );
        let woke = pace.sleep(std::future::pending::<()>()).await;
        assert_eq!(woke, Woke::Deadline);
        assert!(Instant::now() >= pace.deadline);
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_or_a_cancellation_ends_the_sleep_at_once() {
        let (ctx, _rx) = context(Some(json!(1)));
        let mut pace = Pace::new(
            &ctx,
            "pane %1".into(),
            Instant::now().into_std(),
            Duration::from_secs(5),
        );
        assert_eq!(pace.sleep(async { 7 }).await, Woke::Changed(7));
        ctx.cancel.cancel();
        let woke = pace.sleep(std::future::pending::<()>()).await;
        assert_eq!(woke, Woke::Cancelled);
    }
}
