//! Finding OSC sequences of given numbers in a pane's byte stream, sans-IO.
//!
//! `run_command`'s own markers (OSC 6973) and a shell's OSC 133 marks
//! (`ESC ] 133 ; A|B|C|D … BEL` or `… ESC \`) are found by one
//! [`OscScanner`]: the stream is fed chunk by chunk with its ring offsets,
//! and comes back as [`Piece`]s, runs of text and the wanted sequences,
//! each with its exact offset, whatever the chunking. A sequence split
//! across chunks is held back until it completes; a held sequence longer
//! than [`MAX_OSC`] is not one, and goes out as text.

/// Longest wanted sequence held back waiting for its terminator.
pub const MAX_OSC: usize = 4096;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// One wanted OSC sequence, found at ring offsets `at..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Osc<'a> {
    pub at: u64,
    pub end: u64,
    /// The sequence's number, as written (`b"133"`).
    pub number: &'a [u8],
    /// What came between the number's `;` and the terminator.
    pub payload: &'a [u8],
}

/// What a scan hands out, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Bytes that are no wanted sequence, from ring offset `.0` on.
    Text(u64, &'a [u8]),
    Osc(Osc<'a>),
}

/// How the bytes from an `ESC` on read.
enum Parse {
    /// A wanted sequence, this long, its payload at this range.
    Wanted(usize, std::ops::Range<usize>, std::ops::Range<usize>),
    /// Could still become a wanted sequence: more bytes are needed.
    Incomplete,
    /// Not a wanted sequence.
    Not,
}

/// A scanner of one stream for OSC sequences of the given numbers.
pub struct OscScanner {
    numbers: &'static [&'static [u8]],
    /// Bytes held back (a sequence not complete yet) and their offset.
    carry: Vec<u8>,
    carry_at: u64,
}

impl OscScanner {
    pub fn new(numbers: &'static [&'static [u8]]) -> Self {
        OscScanner {
            numbers,
            carry: Vec::new(),
            carry_at: 0,
        }
    }

    /// Forgets what was held back: output was lost before the next chunk.
    pub fn reset(&mut self) {
        self.carry.clear();
    }

    /// Scans `chunk`, recorded at ring offset `at` right after the previous
    /// chunk (or after a [`reset`](Self::reset)).
    pub fn scan(&mut self, at: u64, chunk: &[u8], on: &mut impl FnMut(Piece<'_>)) {
        let held = std::mem::take(&mut self.carry);
        let (hay_at, hay) = if held.is_empty() {
            (at, std::borrow::Cow::Borrowed(chunk))
        } else {
            let mut joined = held;
            joined.extend_from_slice(chunk);
            (self.carry_at, std::borrow::Cow::Owned(joined))
        };
        let hay = &hay[..];
        let (mut from, mut i) = (0, 0);
        while let Some(p) = memchr::memchr(ESC, &hay[i..]).map(|p| p + i) {
            match self.parse(&hay[p..]) {
                Parse::Wanted(len, number, payload) => {
                    if from < p {
                        on(Piece::Text(hay_at + from as u64, &hay[from..p]));
                    }
                    let (at, end) = (hay_at + p as u64, hay_at + (p + len) as u64);
                    on(Piece::Osc(Osc {
                        at,
                        end,
                        number: &hay[p + number.start..p + number.end],
                        payload: &hay[p + payload.start..p + payload.end],
                    }));
                    from = p + len;
                    i = from;
                }
                Parse::Incomplete => {
                    if from < p {
                        on(Piece::Text(hay_at + from as u64, &hay[from..p]));
                    }
                    self.carry = hay[p..].to_vec();
                    self.carry_at = hay_at + p as u64;
                    return;
                }
                Parse::Not => i = p + 1,
            }
        }
        if from < hay.len() {
            on(Piece::Text(hay_at + from as u64, &hay[from..]));
        }
    }

    /// Reads `bytes`, which start with `ESC`.
    fn parse(&self, bytes: &[u8]) -> Parse {
        let incomplete = || {
            if bytes.len() < MAX_OSC {
                Parse::Incomplete
            } else {
                Parse::Not
            }
        };
        match bytes.get(1) {
            None => return incomplete(),
            Some(b']') => {}
            Some(_) => return Parse::Not,
        }
        let digits = bytes[2..].iter().take_while(|b| b.is_ascii_digit()).count();
        let number = 2..2 + digits;
        let Some(&after) = bytes.get(number.end) else {
            let partial = &bytes[number.clone()];
            return if self.numbers.iter().any(|n| n.starts_with(partial)) {
                incomplete()
            } else {
                Parse::Not
            };
        };
        if after != b';' || !self.numbers.contains(&&bytes[number.clone()]) {
            return Parse::Not;
        }
        let start = number.end + 1;
        for (k, &b) in bytes[start..].iter().enumerate() {
            let stop = start + k;
            match b {
                BEL => return Parse::Wanted(stop + 1, number, start..stop),
                ESC => {
                    return match bytes.get(stop + 1) {
                        Some(b'\\') => Parse::Wanted(stop + 2, number, start..stop),
                        Some(_) => Parse::Not,
                        None => incomplete(),
                    };
                }
                _ if stop >= MAX_OSC => return Parse::Not,
                _ => {}
            }
        }
        incomplete()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBERS: &[&[u8]] = &[b"133", b"6973"];

    /// A sequence found: (at, end, number, payload).
    type Found = (u64, u64, String, String);

    /// (text, [(at, end, number, payload)]) of a stream fed in `parts`;
    /// every piece starts where the one before ended.
    fn scan(parts: &[&[u8]]) -> (Vec<u8>, Vec<Found>) {
        let mut scanner = OscScanner::new(NUMBERS);
        let (mut text, mut found) = (Vec::new(), Vec::new());
        let (mut at, mut next) = (0, 0);
        for part in parts {
            scanner.scan(at, part, &mut |piece| match piece {
                Piece::Text(from, bytes) => {
                    assert_eq!(from, next);
                    next += bytes.len() as u64;
                    text.extend_from_slice(bytes)
                }
                Piece::Osc(o) => {
                    assert_eq!(o.at, next);
                    next = o.end;
                    let utf8 = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                    found.push((o.at, o.end, utf8(o.number), utf8(o.payload)));
                }
            });
            at += part.len() as u64;
        }
        (text, found)
    }

    #[test]
    fn wanted_sequences_are_found_at_every_split_point() {
        let stream: &[u8] =
            b"\x1b]0;title\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x1b\\\x1b[31ma\x1b]13;x\x07\x1b]133;D;2;aid=1\x07";
        let (text, found) = scan(&[stream]);
        assert_eq!(text, b"\x1b]0;title\x07$ ls\r\n\x1b[31ma\x1b]13;x\x07");
        let marks: Vec<_> = found.iter().map(|f| f.3.as_str()).collect();
        assert_eq!(marks, ["B", "C", "D;2;aid=1"]);
        assert_eq!((found[0].0, found[0].1), (12, 20));
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                scan(&[a, b]),
                (text.clone(), found.clone()),
                "split {split}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(scan(&bytes), (text, found));
    }

    #[test]
    fn a_sequence_that_never_ends_is_text() {
        let mut long = b"\x1b]133;C;".to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_OSC + 10));
        let (text, found) = scan(&[&long, b"\x07ok"]);
        assert!(found.is_empty());
        assert!(text.ends_with(b"\x07ok") && text.len() == long.len() + 3);
        // An ESC inside aborts it; the next one is still found.
        let (text, found) = scan(&[b"\x1b]133;A\x1b[m\x1b]6973;n;S\x07"]);
        assert_eq!(text, b"\x1b]133;A\x1b[m");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].2, "6973");
    }
}
