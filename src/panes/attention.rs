//! What needs attention across the panes of one server, sans-IO: the
//! server's feed of attention events, and what a pane's own byte stream
//! says (the bell, desktop notifications).
//!
//! The [`Feed`] is a bounded ring of [`FeedEvent`]s numbered from a per-feed
//! epoch; a token (`epoch:seq`) names a point in it, so a waiter that
//! comes back with the token of its last answer reads every event since,
//! and learns how many were dropped when the ring overflowed (or the token
//! is from another process). The feed lives with the pane recordings
//! ([`super::registry::Panes`]), so events found while no call waits are
//! kept for the next one.
//!
//! Notifications (OSC 9, OSC 99, OSC 777) are not drawn by tmux, so only
//! the stream has them; [`Listen`] finds them and the bell in one pass,
//! across chunks, holding at most [`super::osc::MAX_OSC`] bytes of a cut
//! sequence.

use std::collections::VecDeque;

use tokio::sync::watch;

use super::bell::BellScanner;
use super::osc::{OscScanner, Piece};
use crate::ids::PaneId;

/// Events the feed keeps; older ones are dropped (and counted).
pub const FEED_EVENTS: usize = 1024;
/// Longest `detail` kept (a notification's text), in bytes.
pub const MAX_DETAIL: usize = 512;

// Why a pane needs attention. No doc comments: the tools' schema shows
// it as a bare string enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Input,
    Secret,
    Prompt,
    Exited,
    Bell,
    Notify,
    Status,
    Idle,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Input => "input",
            Reason::Secret => "secret",
            Reason::Prompt => "prompt",
            Reason::Exited => "exited",
            Reason::Bell => "bell",
            Reason::Notify => "notify",
            Reason::Status => "status",
            Reason::Idle => "idle",
        }
    }
}

/// One thing a pane did that needs attention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedEvent {
    pub seq: u64,
    pub pane: PaneId,
    pub reason: Reason,
    pub detail: String,
    /// Milliseconds since 1970 when it was seen.
    pub at_ms: u64,
}

/// A `since` token this feed did not hand out.
#[derive(Debug, PartialEq, Eq)]
pub struct BadToken;

/// What [`Feed::read`] hands back.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<FeedEvent>,
    /// Events after the token that the ring no longer holds.
    pub dropped: u64,
    /// The token for the next read.
    pub token: String,
}

/// The server's attention events, bounded.
pub struct Feed {
    epoch: u64,
    state: std::sync::Mutex<EventRing>,
    /// Bumped on every event and on anything a waiter must look at (a
    /// structural change, a new quiet spell).
    signal: watch::Sender<u64>,
}

struct EventRing {
    events: VecDeque<FeedEvent>,
    /// The number the next event gets; events are `next - len .. next`.
    next: u64,
    capacity: usize,
}

impl Feed {
    pub fn new(epoch: u64, capacity: usize) -> Feed {
        Feed {
            epoch,
            state: std::sync::Mutex::new(EventRing {
                events: VecDeque::new(),
                next: 1,
                capacity: capacity.max(1),
            }),
            signal: watch::channel(0).0,
        }
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, EventRing> {
        self.state.lock().expect("feed lock")
    }

    /// A receiver woken by the next event or nudge.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.signal.subscribe()
    }

    /// Wakes the waiters without an event (something to look at).
    pub fn nudge(&self) {
        self.signal.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Records an event; `detail` is cut to [`MAX_DETAIL`] bytes.
    pub fn push(&self, pane: PaneId, reason: Reason, detail: &str, at_ms: u64) {
        let mut cut = detail.len().min(MAX_DETAIL);
        while !detail.is_char_boundary(cut) {
            cut -= 1;
        }
        {
            let mut ring = self.ring();
            let seq = ring.next;
            ring.next += 1;
            if ring.events.len() == ring.capacity {
                ring.events.pop_front();
            }
            ring.events.push_back(FeedEvent {
                seq,
                pane,
                reason,
                detail: detail[..cut].to_owned(),
                at_ms,
            });
        }
        self.nudge();
    }

    /// The token naming the feed's end now: a read with it returns only
    /// events recorded after this call.
    pub fn token(&self) -> String {
        format!("{}:{}", self.epoch, self.ring().next - 1)
    }

    /// Every event after `token` (`None`: after nothing, i.e. all held)
    /// that `keep` accepts. A token of another feed (another process)
    /// reads everything held, counting the start as dropped when unknown.
    /// `Err` when the token is not one this server hands out.
    pub fn read(
        &self,
        token: Option<&str>,
        keep: impl Fn(&FeedEvent) -> bool,
    ) -> Result<Batch, BadToken> {
        let after = match token {
            None => None,
            Some(t) => {
                let (epoch, seq) = t.split_once(':').ok_or(BadToken)?;
                let epoch: u64 = epoch.parse().map_err(|_| BadToken)?;
                let seq: u64 = seq.parse().map_err(|_| BadToken)?;
                Some((epoch == self.epoch).then_some(seq))
            }
        };
        let ring = self.ring();
        let first = ring.next - ring.events.len() as u64;
        let (from, dropped) = match after {
            None => (first, 0),
            // Another process's token: what it had not seen is unknown.
            Some(None) => (first, 1),
            Some(Some(seq)) => {
                let from = seq.saturating_add(1).min(ring.next);
                (from.max(first), first.saturating_sub(from))
            }
        };
        let events = ring
            .events
            .iter()
            .filter(|e| e.seq >= from && keep(e))
            .cloned()
            .collect();
        Ok(Batch {
            events,
            dropped,
            token: format!("{}:{}", self.epoch, ring.next - 1),
        })
    }
}

/// Notification numbers: iTerm2's OSC 9, kitty's OSC 99, urxvt's OSC 777.
const NOTIFY: &[&[u8]] = &[b"9", b"99", b"777"];

/// What one piece of a pane's stream said.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    Bell,
    /// A notification's text (`title: body`, or the one that was given).
    Notify(String),
}

/// The bell and notifications in one pane's stream, across chunks.
pub struct Listen {
    bell: BellScanner,
    osc: OscScanner,
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            bell: BellScanner::new(),
            osc: OscScanner::new(NOTIFY),
        }
    }
}

impl Listen {
    /// Forgets a cut sequence: output was lost.
    pub fn reset(&mut self) {
        self.bell.reset();
        self.osc.reset();
    }

    /// Scans the chunk recorded at ring offset `at`; what it heard comes
    /// in stream order.
    pub fn feed(&mut self, at: u64, chunk: &[u8], heard: &mut Vec<Heard>) {
        let bell = &mut self.bell;
        self.osc.scan(at, chunk, &mut |piece| match piece {
            // Every byte comes once, in order, as text or as a whole
            // notification; the bell scanner tells a BEL that ends another
            // control string (a title) from one that rings.
            Piece::Text(_, text) => {
                for _ in 0..bell.feed(text) {
                    heard.push(Heard::Bell);
                }
            }
            Piece::Osc(osc) => {
                // A whole sequence: its terminator was no bell.
                bell.reset();
                if let Some(text) = notification(osc.number, osc.payload) {
                    heard.push(Heard::Notify(text));
                }
            }
        });
    }
}

/// The text of a notification, or `None` for a sequence of those numbers
/// that notifies nothing (ConEmu's `9;4` progress and its other `9;N`).
fn notification(number: &[u8], payload: &[u8]) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match number {
        b"9" => {
            // ConEmu/Windows Terminal reuse OSC 9 for `9;N;…` commands.
            let digits = payload.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 0 && (digits == payload.len() || payload[digits] == b';') {
                return None;
            }
            Some(text(payload))
        }
        b"777" => {
            // `notify;TITLE;BODY`.
            let mut parts = payload.splitn(3, |b| *b == b';');
            if parts.next() != Some(b"notify") {
                return None;
            }
            let title = parts.next().unwrap_or_default();
            let body = parts.next().unwrap_or_default();
            Some(join(&text(title), &text(body)))
        }
        b"99" => {
            // `METADATA;PAYLOAD`; `p=body` in the metadata says which part.
            let (meta, body) = payload
                .iter()
                .position(|b| *b == b';')
                .map_or((payload, &b""[..]), |i| (&payload[..i], &payload[i + 1..]));
            let part = meta
                .split(|b| *b == b':')
                .find_map(|kv| kv.strip_prefix(b"p="))
                .unwrap_or(b"title");
            match part {
                b"title" | b"body" => Some(text(body)),
                // Icons, buttons, queries: nothing to read.
                _ => None,
            }
        }
        _ => None,
    }
}

fn join(title: &str, body: &str) -> String {
    match (title.is_empty(), body.is_empty()) {
        (false, false) => format!("{title}: {body}"),
        (false, true) => title.to_owned(),
        _ => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heard(chunks: &[&[u8]]) -> Vec<Heard> {
        let mut l = Listen::default();
        let (mut at, mut out) = (0, Vec::new());
        for c in chunks {
            l.feed(at, c, &mut out);
            at += c.len() as u64;
        }
        out
    }

    #[test]
    fn notifications_and_bells_are_heard_across_chunks() {
        assert_eq!(
            heard(&[b"a\x1b]9;build do", b"ne\x07b\x07"]),
            [Heard::Notify("build done".into()), Heard::Bell]
        );
        assert_eq!(
            heard(&[b"\x1b]777;notify;Claude;needs you\x1b", b"\\"]),
            [Heard::Notify("Claude: needs you".into())]
        );
        assert_eq!(
            heard(&[b"\x1b]99;i=1:d=0;Title\x1b\\\x1b]99;i=1:p=body;Body\x07"]),
            [Heard::Notify("Title".into()), Heard::Notify("Body".into())]
        );
        // A title's BEL ends an OSC: no bell, no notification.
        assert!(heard(&[b"\x1b]0;user@host\x07$ "]).is_empty());
        // ConEmu's progress report is not a notification.
        assert!(heard(&[b"\x1b]9;4;1;50\x07"]).is_empty());
        assert!(heard(&[b"\x1b]777;preexec\x07"]).is_empty());
    }

    #[test]
    fn a_cut_sequence_is_bounded_and_forgotten_on_reset() {
        let mut l = Listen::default();
        let mut out = Vec::new();
        let long = vec![b'x'; 10 * super::super::osc::MAX_OSC];
        l.feed(0, b"\x1b]9;", &mut out);
        l.feed(4, &long, &mut out);
        l.feed(4 + long.len() as u64, b"\x07", &mut out);
        assert!(!out.contains(&Heard::Notify(String::new())));
        l.feed(0, b"\x1b]9;lost", &mut out);
        l.reset();
        out.clear();
        l.feed(0, b"\x07", &mut out);
        assert_eq!(out, [Heard::Bell]);
    }

    #[test]
    fn the_feed_hands_out_every_event_after_a_token_and_counts_drops() {
        let feed = Feed::new(7, 3);
        let start = feed.token();
        assert_eq!(start, "7:0");
        feed.push(PaneId(1), Reason::Bell, "", 1);
        let b = feed.read(Some(&start), |_| true).unwrap();
        assert_eq!(b.events.len(), 1);
        assert_eq!((b.dropped, b.token.as_str()), (0, "7:1"));
        let mid = b.token;
        for _ in 0..4 {
            feed.push(PaneId(2), Reason::Notify, &"é".repeat(MAX_DETAIL), 2);
        }
        let b = feed.read(Some(&mid), |_| true).unwrap();
        assert_eq!(b.events.len(), 3);
        assert_eq!(b.dropped, 1, "the ring holds 3");
        assert!(b.events[0].detail.len() <= MAX_DETAIL);
        let b = feed.read(Some(&b.token), |_| true).unwrap();
        assert!(b.events.is_empty() && b.dropped == 0);
        let b = feed
            .read(Some("8:1"), |e| e.reason == Reason::Notify)
            .unwrap();
        assert_eq!((b.events.len(), b.dropped), (3, 1), "another process");
        assert!(feed.read(Some("nonsense"), |_| true).is_err());
    }
}
