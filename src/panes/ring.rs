//! A pane's output history: a bounded byte ring addressed by absolute offsets.
//!
//! Offsets count every byte the pane ever printed since it was first seen, so
//! a cursor held by a waiter stays meaningful while old bytes are evicted:
//! eviction only raises [`Ring::start`]. A cursor below `start` is clamped on
//! [`Ring::read`] and the loss is reported, never silently skipped.
//!
//! Gaps ([`Ring::mark_gap`]) record that output was missed at an offset (a
//! reconnect, a `%pause`): the bytes either side are not contiguous, so a line
//! view must not join them. A read never crosses a gap; it stops before the
//! next one and says when its own data starts right after one.
//!
//! Memory: the backing storage grows with use up to `capacity` and never past
//! it; the gap list holds at most [`MAX_GAPS`] entries (see there).
//!
//! Sans-IO: the caller owns locking and wake-ups.

use std::collections::VecDeque;

/// Gaps remembered at once. Marking one more evicts the bytes before the
/// oldest gap kept, so every gap inside `start..=end` is always known: a
/// reader either learns of a gap or of evicted bytes, never of neither.
pub const MAX_GAPS: usize = 64;

/// A bounded byte ring with absolute `u64` offsets.
#[derive(Debug)]
pub struct Ring {
    capacity: usize,
    /// The byte at absolute offset `o` (with `start <= o < end`) lives at
    /// `buf[o % capacity]`. `buf` only grows while `end <= capacity`, so the
    /// mapping holds from the first byte on.
    buf: Vec<u8>,
    start: u64,
    end: u64,
    /// Ascending, deduplicated, all within `start..=end`.
    gaps: VecDeque<u64>,
}

/// What [`Ring::read`] returns: at most `max` contiguous bytes from `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read<'a> {
    /// The bytes, in order: `head` then `tail` (two slices because the ring wraps).
    pub head: &'a [u8],
    pub tail: &'a [u8],
    /// Where the data starts: the requested offset, raised to `start` if it
    /// was evicted, or lowered to `end` if it was past it.
    pub from: u64,
    /// Bytes lost between the requested offset and `from`.
    pub evicted: u64,
    /// Output was missed just before `from`: do not join this data to what
    /// was read before it.
    pub after_gap: bool,
}

impl Read<'_> {
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset just past the data: the next read's `from`.
    pub fn end(&self) -> u64 {
        self.from + self.len() as u64
    }

    pub fn to_vec(&self) -> Vec<u8> {
        [self.head, self.tail].concat()
    }
}

impl Ring {
    /// An empty ring keeping the last `capacity` bytes. Allocates nothing yet.
    pub fn new(capacity: usize) -> Self {
        Ring {
            capacity,
            buf: Vec::new(),
            start: 0,
            end: 0,
            gaps: VecDeque::new(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The oldest offset still held.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Total bytes ever appended: the offset the next byte will get.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Bytes currently held.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Bytes of backing storage allocated; never more than `capacity`.
    pub fn storage_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Appends `data`, evicting the oldest bytes past capacity.
    pub fn append(&mut self, data: &[u8]) {
        let new_end = self.end + data.len() as u64;
        let cap = self.capacity;
        // Only the last `capacity` bytes can survive.
        let keep = &data[data.len().saturating_sub(cap)..];
        if cap == 0 {
            self.end = new_end;
            self.start = new_end;
            self.prune_gaps();
            return;
        }
        if new_end <= cap as u64 {
            // Still filling: offsets equal indices.
            self.grow_to(new_end as usize);
            self.buf.extend_from_slice(data);
        } else {
            if self.buf.len() < cap {
                // Every index not rewritten below holds a live old byte:
                // the new data covers offsets `end..new_end`, which includes
                // all of the indices `end..cap` being zero-filled here.
                self.grow_to(cap);
                self.buf.resize(cap, 0);
            }
            let first = new_end - keep.len() as u64;
            let at = (first % cap as u64) as usize;
            let split = keep.len().min(cap - at);
            self.buf[at..at + split].copy_from_slice(&keep[..split]);
            self.buf[..keep.len() - split].copy_from_slice(&keep[split..]);
        }
        self.end = new_end;
        self.start = self.start.max(new_end.saturating_sub(cap as u64));
        self.prune_gaps();
    }

    /// Records that output was missed at the current end. The next bytes
    /// appended are not a continuation of the ones before.
    pub fn mark_gap(&mut self) {
        if self.gaps.back() == Some(&self.end) {
            return;
        }
        if self.gaps.len() == MAX_GAPS {
            // See MAX_GAPS: evict up to the oldest gap kept.
            self.gaps.pop_front();
            let oldest = self.gaps.front().copied().unwrap_or(self.end);
            self.start = self.start.max(oldest);
        }
        self.gaps.push_back(self.end);
    }

    /// Gap offsets `g` with `from <= g < to`: the data starting at each
    /// such `g` follows missed output.
    pub fn gaps_between(&self, from: u64, to: u64) -> impl Iterator<Item = u64> + '_ {
        self.gaps
            .iter()
            .copied()
            .skip_while(move |&g| g < from)
            .take_while(move |&g| g < to)
    }

    /// At most `max` bytes from `from`, stopping before the next gap.
    /// Never panics: a cursor before `start` or past `end` is clamped.
    pub fn read(&self, from: u64, max: usize) -> Read<'_> {
        let clamped = from.clamp(self.start, self.end);
        let evicted = clamped.saturating_sub(from);
        let mut to = self.end.min(clamped.saturating_add(max as u64));
        let after_gap = self.gaps.contains(&clamped);
        if let Some(next) = self.gaps_between(clamped + 1, to).next() {
            to = next;
        }
        let len = (to - clamped) as usize;
        let (head, tail): (&[u8], &[u8]) = if len == 0 {
            (&[], &[])
        } else {
            let cap = self.capacity as u64;
            let at = (clamped % cap) as usize;
            let split = len.min(self.capacity - at);
            (&self.buf[at..at + split], &self.buf[..len - split])
        };
        Read {
            head,
            tail,
            from: clamped,
            evicted,
            after_gap,
        }
    }

    fn prune_gaps(&mut self) {
        while self.gaps.front().is_some_and(|&g| g < self.start) {
            self.gaps.pop_front();
        }
    }

    /// Grows storage to hold `needed` bytes, doubling but never past capacity.
    fn grow_to(&mut self, needed: usize) {
        if needed > self.buf.capacity() {
            let target = (self.buf.capacity() * 2)
                .max(needed)
                .max(4096)
                .min(self.capacity);
            self.buf.reserve_exact(target - self.buf.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model: every byte ever appended, by offset.
    fn check(ring: &Ring, all: &[u8]) {
        assert_eq!(ring.end(), all.len() as u64);
        let start = ring.start();
        assert_eq!(ring.len() as u64, ring.end() - start);
        assert!(ring.len() <= ring.capacity());
        let read = ring.read(0, usize::MAX);
        assert_eq!(read.from, start);
        assert_eq!(read.evicted, start);
        assert_eq!(read.to_vec(), &all[start as usize..]);
    }

    #[test]
    fn fills_then_wraps_with_absolute_offsets() {
        let mut ring = Ring::new(8);
        let mut all = Vec::new();
        for chunk in [&b"abc"[..], b"defgh", b"ij", b"klmnopqrstu", b"", b"v"] {
            ring.append(chunk);
            all.extend_from_slice(chunk);
            check(&ring, &all);
        }
        assert_eq!(ring.start(), 14);
        assert_eq!(ring.end(), 22);
        let read = ring.read(16, 3);
        assert_eq!(
            (read.from, read.evicted, read.to_vec()),
            (16, 0, b"qrs".to_vec())
        );
        let read = ring.read(20, 100);
        assert_eq!(read.to_vec(), b"uv");
        assert_eq!(read.end(), 22);
    }

    #[test]
    fn evicted_cursor_is_clamped_and_reported() {
        let mut ring = Ring::new(4);
        ring.append(b"0123456789");
        let read = ring.read(2, 2);
        assert_eq!((read.from, read.evicted), (6, 4));
        assert_eq!(read.to_vec(), b"67");
    }

    #[test]
    fn cursor_past_end_reads_nothing() {
        let mut ring = Ring::new(4);
        ring.append(b"ab");
        let read = ring.read(99, 10);
        assert_eq!((read.from, read.evicted, read.len()), (2, 0, 0));
        assert!(read.is_empty());
    }

    #[test]
    fn every_chunking_matches_the_model() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7 % 251) as u8).collect();
        for cap in [1, 2, 5, 16, 64, 199, 200, 300] {
            for step in 1..20 {
                let mut ring = Ring::new(cap);
                for chunk in data.chunks(step) {
                    ring.append(chunk);
                }
                check(&ring, &data);
                assert_eq!(ring.start(), 200u64.saturating_sub(cap as u64));
                assert!(ring.storage_capacity() <= cap);
                for from in 0..=200u64 {
                    let read = ring.read(from, 7);
                    let lo = from.max(ring.start()) as usize;
                    let hi = (lo + 7).min(200);
                    assert_eq!(read.to_vec(), &data[lo..hi]);
                }
            }
        }
    }

    #[test]
    fn zero_capacity_keeps_counting() {
        let mut ring = Ring::new(0);
        ring.append(b"hello");
        ring.mark_gap();
        ring.append(b"x");
        assert_eq!((ring.start(), ring.end()), (6, 6));
        let read = ring.read(0, 10);
        assert_eq!((read.from, read.evicted, read.len()), (6, 6, 0));
        assert_eq!(ring.storage_capacity(), 0);
    }

    #[test]
    fn hundred_megabytes_through_one_megabyte() {
        const CAP: usize = 1 << 20;
        let mut ring = Ring::new(CAP);
        let chunk: Vec<u8> = (0..65_521u32).map(|i| i as u8).collect();
        let mut total = 0u64;
        while total < 100 << 20 {
            ring.append(&chunk);
            total += chunk.len() as u64;
            assert!(ring.storage_capacity() <= CAP);
        }
        assert_eq!(ring.end(), total);
        assert_eq!(ring.len(), CAP);
        let read = ring.read(total - 3, 10);
        assert_eq!(read.to_vec(), &chunk[chunk.len() - 3..]);
        // One append larger than the ring keeps only its tail.
        let big = vec![7u8; 3 * CAP + 5];
        ring.append(&big);
        assert!(ring.storage_capacity() <= CAP);
        assert_eq!(ring.read(0, usize::MAX).to_vec(), vec![7u8; CAP]);
    }

    #[test]
    fn reads_stop_at_gaps_and_flag_them() {
        let mut ring = Ring::new(64);
        ring.append(b"before");
        ring.mark_gap();
        ring.mark_gap(); // twice at one offset is one gap
        ring.append(b"after");
        assert_eq!(ring.gaps_between(0, 100).collect::<Vec<_>>(), vec![6]);
        let read = ring.read(0, 100);
        assert_eq!((read.to_vec(), read.after_gap), (b"before".to_vec(), false));
        let read = ring.read(read.end(), 100);
        assert_eq!((read.to_vec(), read.after_gap), (b"after".to_vec(), true));
        let read = ring.read(8, 100);
        assert_eq!((read.to_vec(), read.after_gap), (b"ter".to_vec(), false));
        // A gap at the end is reported once data follows it.
        ring.mark_gap();
        assert!(ring.read(11, 100).after_gap);
        assert!(ring.read(11, 100).is_empty());
        assert_eq!(ring.gaps_between(6, 12).collect::<Vec<_>>(), vec![6, 11]);
        assert_eq!(ring.gaps_between(7, 11).count(), 0);
    }

    #[test]
    fn gaps_are_dropped_with_evicted_bytes() {
        let mut ring = Ring::new(4);
        ring.append(b"ab");
        ring.mark_gap();
        ring.append(b"cdefg");
        assert_eq!(ring.gaps_between(0, u64::MAX).count(), 0);
        assert!(!ring.read(0, 10).after_gap);
    }

    #[test]
    fn gap_list_is_bounded_by_evicting() {
        let mut ring = Ring::new(1 << 16);
        for i in 0..(MAX_GAPS as u64 * 3) {
            ring.append(b"xy");
            ring.mark_gap();
            assert!(ring.gaps_between(0, u64::MAX).count() <= MAX_GAPS);
            // Every gap at or after start is still known.
            let first = ring.gaps_between(0, u64::MAX).next().unwrap();
            assert!(first >= ring.start());
            assert_eq!(ring.end(), 2 * (i + 1));
        }
        // The start was raised to the oldest kept gap.
        let start = ring.start();
        assert_eq!(ring.gaps_between(0, u64::MAX).next(), Some(start));
        assert!(ring.read(0, 10).after_gap);
        assert_eq!(ring.read(0, 10).evicted, start);
    }
}
