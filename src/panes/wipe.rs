//! Whether a stretch of a pane's stream rewrote what the normal screen
//! already showed, sans-IO: a `clear`, a cursor-home or cursor-up redraw.
//!
//! tmux's history and screen are the record a cursor is read back from
//! ([`crate::tmux::history`]); after such a sequence that record may no longer
//! hold what was printed (`clear` sends `ESC [ 3 J`, which drops the
//! history, and a redraw overwrites rows in place), and a line proved by
//! its text (a prompt) may be an equal line printed later. The stream
//! still has every byte, so a reader reads it instead.
//!
//! Counted: `ESC c` (reset), and CSI `H`/`f` (to a position: a home
//! redraw), `d` (to a row), `r` (a scroll region: rows scrolled out of it
//! skip the history), `J` with 1, 2 or 3 (erase above, the screen, the
//! history). Not counted: moves relative to the cursor and erasing below
//! it or within a line (a shell's line editing, the erasing of
//! run_command's own typed line: tmux's record keeps what matters there),
//! anything on the alternate screen (tmux keeps the normal one apart),
//! and what came before leaving an alternate screen entered before the
//! stretch began.

const ESC: u8 = 0x1b;
/// Digits of a CSI's first parameter kept (larger values read as more).
const MAX_DIGITS: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WipeState {
    Ground,
    Esc,
    Csi,
}

/// Scans a stream in chunks, in order; the state carries across chunks.
#[derive(Clone, Debug)]
pub struct WipeScanner {
    state: WipeState,
    /// The CSI has a private marker (`?`).
    private: bool,
    /// The CSI's first parameter (`None`: none yet), and whether a `;`
    /// ended it.
    first: Option<u32>,
    more: bool,
    alternate: bool,
    wiped: bool,
}

impl Default for WipeScanner {
    fn default() -> Self {
        WipeScanner {
            state: WipeState::Ground,
            private: false,
            first: None,
            more: false,
            alternate: false,
            wiped: false,
        }
    }
}

impl WipeScanner {
    /// A sequence that rewrote the normal screen was seen.
    pub fn wiped(&self) -> bool {
        self.wiped
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        match self.state {
            WipeState::Ground => {
                if b == ESC {
                    self.state = WipeState::Esc;
                }
            }
            WipeState::Esc => {
                self.state = WipeState::Ground;
                match b {
                    b'[' => {
                        self.state = WipeState::Csi;
                        self.private = false;
                        self.first = None;
                        self.more = false;
                    }
                    b'c' => self.rewrote(),
                    ESC => self.state = WipeState::Esc,
                    _ => {}
                }
            }
            WipeState::Csi => match b {
                b'0'..=b'9' if !self.more => {
                    let digit = u32::from(b - b'0');
                    let value = self.first.unwrap_or(0);
                    if value < 10u32.pow(MAX_DIGITS) {
                        self.first = Some(value * 10 + digit);
                    }
                }
                b'0'..=b'9' | b':' => {}
                b';' => self.more = true,
                b'<'..=b'?' => self.private = true,
                // Intermediate bytes: a sequence of another kind.
                0x20..=0x2f => self.private = true,
                0x40..=0x7e => {
                    self.state = WipeState::Ground;
                    self.csi(b);
                }
                ESC => self.state = WipeState::Esc,
                // A control inside a CSI is executed; the CSI goes on.
                _ => {}
            },
        }
    }

    fn csi(&mut self, last: u8) {
        let first = self.first.unwrap_or(0);
        if self.private {
            // The alternate screen (1049, 1047, 47): entered, or left.
            if matches!(first, 1049 | 1047 | 47) && !self.more {
                match last {
                    b'h' => self.alternate = true,
                    b'l' if self.alternate => self.alternate = false,
                    // Left one entered before the stretch: what came
                    // before was drawn there.
                    b'l' => self.wiped = false,
                    _ => {}
                }
            }
            return;
        }
        match last {
            b'H' | b'f' | b'd' | b'r' => self.rewrote(),
            b'J' if (1..=3).contains(&first) => self.rewrote(),
            _ => {}
        }
    }

    fn rewrote(&mut self) {
        if !self.alternate {
            self.wiped = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wiped(chunks: &[&[u8]]) -> bool {
        let mut s = WipeScanner::default();
        for c in chunks {
            s.feed(c);
        }
        s.wiped()
    }

    #[test]
    fn a_clear_or_a_redraw_is_a_wipe_at_any_chunk_split() {
        let clear = b"IMPORTANT\r\n\x1b[H\x1b[2J\x1b[3J$ ";
        for cut in 0..=clear.len() {
            assert!(wiped(&[&clear[..cut], &clear[cut..]]), "cut at {cut}");
        }
        assert!(wiped(&[b"\x1b[3;1H redrawn"]));
        assert!(wiped(&[b"\x1b[5;20r\x1b[20;1Hscrolled"]));
        assert!(wiped(&[b"\x1bc"]));
    }

    #[test]
    fn line_edits_colours_and_the_alternate_screen_are_no_wipe() {
        assert!(!wiped(&[b"10%\r\x1b[K20%\n\x1b[1;31mred\x1b[0m\n"]));
        assert!(!wiped(&[b"erase below \x1b[J and \x1b[0J"]));
        // run_command erasing the line it typed; line editing.
        assert!(!wiped(&[b"\r\x1b[4A\x1b[1G\x1b[Jtrue\n\x1b[C\x1b[2D"]));
        assert!(!wiped(&[b"\x1b[?1049h\x1b[H\x1b[2Jvim\x1b[?1049l$ "]));
        // Left an alternate screen entered before the stretch.
        assert!(!wiped(&[b"\x1b[5;1Hvim\x1b[?1049l$ "]));
        // Then a clear on the normal screen counts.
        assert!(wiped(&[b"\x1b[?1049l$ clear\r\n\x1b[H\x1b[2J"]));
        // A private sequence with other parameters is none of these.
        assert!(!wiped(&[b"\x1b[?25h\x1b[?2004l\x1b[>1A"]));
    }
}
