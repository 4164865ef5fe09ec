//! Keeps our control clients' attaches and detaches apart, on the tmux
//! releases that need it ([`super::version::Features::attach_alone`]).
//!
//! Before 3.7, tmux writes some notifications to every control client
//! without checking that the client has finished attaching: a client
//! whose identify messages are half read has no control state yet, and
//! the write dereferences it (measured on 3.5a under gdb: `control_write`
//! from `control_notify_client_detached`, SIGSEGV; 3.7 added the check).
//! A detach of ours sends exactly such a notification (`%client-detached`),
//! so while one of ours is attaching, none of ours may be leaving, and
//! the other way round. Attaches may overlap each other and detaches each
//! other: only the two kinds are kept apart.
//!
//! An attach holds its [`Pass`] until tmux has run the attach command
//! (identify done); a detach until the client's stream ended, which tmux
//! does only after it queued the notification, and tmux runs that before
//! it reads from any client again. Leavers go first: once one waits, new
//! attaches wait behind it, so eviction is never starved. The price, on
//! old releases only: a slow attach holds up a detach, and through it the
//! attaches that come after (at most the attach timeout).

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// One door for one tmux server's clients. Cheap to clone.
#[derive(Clone, Default)]
pub struct Door(Arc<Inner>);

#[derive(Default)]
struct Inner {
    counts: Mutex<Counts>,
    changed: Notify,
}

#[derive(Default)]
struct Counts {
    entering: usize,
    leaving: usize,
    /// Leavers waiting for the attaches in progress to finish.
    queued_leavers: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    In,
    Out,
}

/// Held for the length of one attach or one detach.
pub struct Pass {
    door: Arc<Inner>,
    way: Way,
}

impl Door {
    /// Waits until no client of ours is leaving (nor waiting to).
    pub async fn enter(&self) -> Pass {
        self.pass(Way::In).await
    }

    /// Waits until no client of ours is attaching.
    pub async fn leave(&self) -> Pass {
        self.pass(Way::Out).await
    }

    async fn pass(&self, way: Way) -> Pass {
        // Counted among the queued leavers while it waits; uncounted if
        // the wait is dropped, so a leaver that gave up keeps no one out.
        let mut queued = LeaverTurn {
            door: &self.0,
            counted: false,
        };
        loop {
            let changed = self.0.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut counts = self.0.counts.lock().expect("door lock");
                let open = match way {
                    Way::In => counts.leaving == 0 && counts.queued_leavers == 0,
                    Way::Out => counts.entering == 0,
                };
                if open {
                    if queued.counted {
                        queued.counted = false;
                        counts.queued_leavers -= 1;
                    }
                    match way {
                        Way::In => counts.entering += 1,
                        Way::Out => counts.leaving += 1,
                    }
                    return Pass {
                        door: self.0.clone(),
                        way,
                    };
                }
                if way == Way::Out && !queued.counted {
                    queued.counted = true;
                    counts.queued_leavers += 1;
                }
            }
            changed.await;
        }
    }
}

/// A leaver's place in the queue.
struct LeaverTurn<'a> {
    door: &'a Inner,
    counted: bool,
}

impl Drop for LeaverTurn<'_> {
    fn drop(&mut self) {
        if self.counted {
            self.door.counts.lock().expect("door lock").queued_leavers -= 1;
            self.door.changed.notify_waiters();
        }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut counts = self.door.counts.lock().expect("door lock");
        match self.way {
            Way::In => counts.entering -= 1,
            Way::Out => counts.leaving -= 1,
        }
        drop(counts);
        self.door.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn counts(door: &Door) -> (usize, usize, usize) {
        let c = door.0.counts.lock().unwrap();
        (c.entering, c.leaving, c.queued_leavers)
    }

    #[tokio::test]
    async fn attaches_share_the_door_and_a_detach_waits_for_them() {
        let door = Door::default();
        let a = door.enter().await;
        let b = door.enter().await;
        let leaving = tokio::spawn({
            let door = door.clone();
            async move { door.leave().await }
        });
        // The leaver queues behind both attaches, and keeps new ones out.
        while counts(&door).2 == 0 {
            tokio::task::yield_now().await;
        }
        let late = tokio::spawn({
            let door = door.clone();
            async move { door.enter().await }
        });
        drop(a);
        assert!(!leaving.is_finished());
        drop(b);
        let out = leaving.await.unwrap();
        assert_eq!(counts(&door), (0, 1, 0));
        assert!(!late.is_finished());
        drop(out);
        let _in = late.await.unwrap();
        assert_eq!(counts(&door), (1, 0, 0));
    }

    #[tokio::test]
    async fn detaches_share_the_door() {
        let door = Door::default();
        let _a = door.leave().await;
        let _b = door.leave().await;
        assert_eq!(counts(&door), (0, 2, 0));
    }

    #[tokio::test]
    async fn a_leaver_that_gives_up_lets_attaches_in() {
        let door = Door::default();
        let inside = door.enter().await;
        let gave_up = tokio::time::timeout(Duration::from_millis(10), door.leave()).await;
        assert!(gave_up.is_err());
        assert_eq!(counts(&door), (1, 0, 0));
        let _second = door.enter().await;
        drop(inside);
    }
}
