//! Backing off after failures: the hub's attaches and an ssh host's
//! connections fail fast for a while after a failure instead of starting a
//! process on every call. Each failure in a row doubles the wait, up to a
//! ceiling; a success forgets them.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    first: Duration,
    ceiling: Duration,
    /// After a failure: until when calls fail fast, and that delay.
    waiting: Option<(Instant, Duration)>,
}

impl Backoff {
    pub const fn new(first: Duration, ceiling: Duration) -> Backoff {
        Backoff {
            first,
            ceiling,
            waiting: None,
        }
    }

    /// How long calls should still fail fast (`None`: try now).
    pub fn remaining(&self) -> Option<Duration> {
        let (until, _) = self.waiting?;
        until
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }

    pub fn failed(&mut self) {
        let delay = self
            .waiting
            .map_or(self.first, |(_, last)| (last * 2).min(self.ceiling));
        self.waiting = Some((Instant::now() + delay, delay));
    }

    pub fn succeeded(&mut self) {
        self.waiting = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_double_the_wait_up_to_the_ceiling_and_a_success_forgets_them() {
        let first = Duration::from_secs(10);
        let mut backoff = Backoff::new(first, Duration::from_secs(25));
        assert_eq!(backoff.remaining(), None);
        backoff.failed();
        let once = backoff.remaining().expect("waits after a failure");
        assert!(once <= first && once > first / 2, "{once:?}");
        backoff.failed();
        let twice = backoff.remaining().expect("waits after two");
        assert!(twice > first && twice <= first * 2, "{twice:?}");
        backoff.failed();
        let capped = backoff.remaining().expect("waits after three");
        assert!(
            capped > first * 2 && capped <= Duration::from_secs(25),
            "{capped:?}"
        );
        backoff.succeeded();
        assert_eq!(backoff.remaining(), None);
        backoff.failed();
        assert!(backoff.remaining().is_some_and(|d| d <= first));
    }

    #[test]
    fn a_passed_wait_is_no_wait() {
        let mut backoff = Backoff::new(Duration::ZERO, Duration::ZERO);
        backoff.failed();
        assert_eq!(backoff.remaining(), None);
    }
}
