//! Finding the bell in a pane's output stream, sans-IO.
//!
//! BEL (`0x07`) rings the bell only outside a control string: it is also
//! how xterm-style OSC sequences end (`ESC ] 0;title BEL`, which every
//! prompt that sets the window title sends), and inside DCS, APC, PM, SOS
//! and tmux's `ESC k` title it is part of the string (tmux ends APC and
//! `ESC k` with BEL too; either way nothing rings). Everywhere else a BEL
//! rings, inside a CSI sequence too (C0 controls are executed there).
//!
//! Why the stream and not tmux's window bell flag: the flag is per window,
//! not per pane; tmux sets it only for a window that is not the current one
//! of an attached session (our own control client is attached); and it
//! depends on `monitor-bell`. The stream is the pane's own bytes, in order.

/// Where the scanner is in the escape grammar, across chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum BellState {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside a control string (OSC, DCS, APC, PM, SOS, `ESC k`).
    String,
    /// ESC inside a control string: `\` ends it (ST).
    StringEscape,
}

/// Counts the bells in a byte stream fed in pieces.
#[derive(Clone, Debug, Default)]
pub struct BellScanner {
    state: BellState,
}

impl BellScanner {
    pub fn new() -> BellScanner {
        BellScanner::default()
    }

    /// Forgets a sequence cut by a gap in the stream.
    pub fn reset(&mut self) {
        self.state = BellState::Ground;
    }

    /// Scans the next piece of the stream; returns how many bells rang in it.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        let mut rang = 0;
        let mut rest = bytes;
        loop {
            if self.state == BellState::Ground {
                // Plain text is the bulk of any stream: skip it quickly.
                match memchr::memchr2(0x07, 0x1b, rest) {
                    None => return rang,
                    Some(at) => rest = &rest[at..],
                }
            }
            let Some((&byte, tail)) = rest.split_first() else {
                return rang;
            };
            rest = tail;
            self.state = match (self.state, byte) {
                (BellState::Ground | BellState::Escape, 0x07) => {
                    rang += 1;
                    BellState::Ground
                }
                (BellState::Ground, 0x1b) => BellState::Escape,
                (BellState::Ground, _) => BellState::Ground,
                // OSC, DCS, SOS, PM, APC, and tmux's `ESC k` title.
                (BellState::Escape, b']' | b'P' | b'X' | b'^' | b'_' | b'k') => BellState::String,
                (BellState::Escape, 0x1b) => BellState::Escape,
                // Any other escape (CSI and its parameters included) is
                // over as far as BEL is concerned.
                (BellState::Escape, _) => BellState::Ground,
                (BellState::String, 0x07) => BellState::Ground,
                (BellState::String, 0x1b) => BellState::StringEscape,
                (BellState::String, _) => BellState::String,
                (BellState::StringEscape, b'\\') => BellState::Ground,
                (BellState::StringEscape, 0x1b) => BellState::StringEscape,
                // ESC and something else: the string was cancelled and a
                // new escape began (vte and tmux read it so).
                (BellState::StringEscape, b']' | b'P' | b'X' | b'^' | b'_' | b'k') => {
                    BellState::String
                }
                (BellState::StringEscape, 0x07) => BellState::Ground,
                (BellState::StringEscape, _) => BellState::Ground,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bells(chunks: &[&[u8]]) -> usize {
        let mut s = BellScanner::new();
        chunks.iter().map(|c| s.feed(c)).sum()
    }

    #[test]
    fn a_bare_bel_rings() {
        assert_eq!(bells(&[b"\x07"]), 1);
        assert_eq!(bells(&[b"done\x07 and again\x07\n"]), 2);
        // printf '\a' inside a CSI sequence is executed: it rings.
        assert_eq!(bells(&[b"\x1b[1\x07m"]), 1);
    }

    #[test]
    fn bel_ending_a_title_does_not_ring() {
        // What bash prompts send to set the window title.
        assert_eq!(bells(&[b"\x1b]0;user@host: ~\x07$ "]), 0);
        assert_eq!(bells(&[b"\x1b]0;a\x1b\\$ \x07"]), 1);
        assert_eq!(bells(&[b"\x1bkname\x07"]), 0);
    }

    #[test]
    fn bel_inside_dcs_apc_pm_sos_does_not_ring() {
        for intro in [&b"P"[..], b"_", b"^", b"X"] {
            let seq = [b"\x1b", intro, b"data\x07more\x1b\\".as_slice()].concat();
            assert_eq!(bells(&[&seq]), 0, "{intro:?}");
            let after = [seq.as_slice(), b"\x07"].concat();
            assert_eq!(bells(&[&after]), 1, "{intro:?}");
        }
    }

    #[test]
    fn sequences_cut_across_chunks() {
        assert_eq!(bells(&[b"\x1b", b"]0;t", b"itle", b"\x07"]), 0);
        assert_eq!(bells(&[b"\x1b]0;t\x1b", b"\\", b"\x07"]), 1);
        assert_eq!(bells(&[b"x\x1b", b"[", b"0m\x07"]), 1);
    }

    #[test]
    fn a_reset_forgets_a_cut_sequence() {
        let mut s = BellScanner::new();
        s.feed(b"\x1b]0;lost title");
        s.reset();
        assert_eq!(s.feed(b"\x07"), 1);
    }
}
