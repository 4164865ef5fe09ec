//! The line view: a pane's raw byte stream turned into text lines to match.
//!
//! What a matcher wants is roughly what the screen shows, line by line, not
//! the bytes that drew it. So, byte by byte:
//! - escape sequences are removed: CSI (`ESC [ … final`), OSC
//!   (`ESC ] … BEL|ESC \`), DCS/SOS/PM/APC (`ESC P|X|^|_ … ESC \`), charset
//!   selection and other `ESC <intermediate…> final`, and two-byte `ESC x`;
//!   `CSI K` and `CSI 2 K` (erase line) are applied, since progress output
//!   uses them to redraw a line in place;
//! - `\r` returns to column 0 and following text overwrites the line, one
//!   character for one character (so `10%\r20%\n` is `20%`); backspace moves
//!   left one character; `\n` ends the line (so `\r\n` does too);
//! - `\t` is kept; every other C0 control and DEL is dropped;
//! - every other byte is text and kept as is: output is UTF-8 in practice but
//!   not always, so lines are bytes, and a character split across two
//!   [`LineView::feed`] calls simply arrives whole.
//!
//! Columns are counted in characters (a UTF-8 lead byte and its continuation
//! bytes), not terminal cells: wide characters and cursor movement are not
//! modelled. Redraw-heavy programs need a fresh capture, not this view.
//!
//! The same reading serves the picture of a pane ([`super::screen`]): a
//! [`Sink`] is also told each SGR sequence (`CSI … m`) with its parameters
//! and where in the current line it came, so there is one escape parser.
//!
//! All parser state lives in the struct and every rule looks at one byte and
//! the state, so the lines never depend on how the stream was chunked.
//!
//! Bounds: the current line holds at most `max_line` bytes (plus up to three
//! continuation bytes, so a character at the limit stays whole); a text byte
//! past that ends the line as if a `\n` came first. A string sequence (OSC,
//! DCS, …) longer than [`MAX_STRING`] ends there and what follows is text, so
//! a stray `ESC ]` cannot hide the rest of a pane's output.

/// Longest escape string swallowed before giving up on its terminator.
pub const MAX_STRING: usize = 1 << 16;

/// Bytes a character may spill past `max_line`: a UTF-8 character has at
/// most three continuation bytes.
const MAX_SPILL: usize = 3;

/// Parameters a CSI sequence keeps; later ones are dropped. SGR with
/// 24-bit colours for the foreground, background and underline needs 18.
pub const MAX_PARAMS: usize = 32;

const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const BEL: u8 = 0x07;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EscState {
    Ground,
    /// After `ESC`.
    Esc,
    /// After `ESC` and intermediate bytes (`ESC ( B` and the like).
    EscInter,
    /// Inside `ESC [`; the parameters go to [`LineView::params`].
    /// `plain` is false once a private marker or intermediate byte shows up.
    Csi {
        plain: bool,
    },
    /// Inside OSC, DCS, SOS, PM or APC; `len` bytes swallowed so far.
    Str {
        len: usize,
    },
    /// An `ESC` inside a string: `\` ends it, anything else starts a new escape.
    StrEsc,
}

/// What a byte inside an escape sequence did.
enum Step {
    Next,
    /// The sequence was cut short; the byte is processed again in the new state.
    Again,
}

/// A CSI sequence's parameters: numbers (an empty one is 0) and, for each,
/// whether a `:` came before it (a sub-parameter, as in `38:2::r:g:b`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    values: [u16; MAX_PARAMS],
    /// Bit `i`: parameter `i` followed a `:`.
    sub: u32,
    len: usize,
}

impl Params {
    fn new() -> Params {
        Params {
            values: [0; MAX_PARAMS],
            sub: 0,
            len: 1,
        }
    }

    fn digit(&mut self, d: u8) {
        let v = &mut self.values[self.len - 1];
        *v = v.saturating_mul(10).saturating_add(u16::from(d));
    }

    fn separator(&mut self, colon: bool) {
        if self.len < MAX_PARAMS {
            self.values[self.len] = 0;
            if colon {
                self.sub |= 1 << self.len;
            } else {
                self.sub &= !(1 << self.len);
            }
            self.len += 1;
        }
    }

    /// Each parameter and whether it is a sub-parameter (after a `:`).
    pub fn iter(&self) -> impl Iterator<Item = (u16, bool)> + '_ {
        (0..self.len).map(|i| (self.values[i], self.sub & (1 << i) != 0))
    }

    pub fn first(&self) -> u16 {
        self.values[0]
    }
}

/// Where a [`LineView`] sends what it reads.
pub trait Sink {
    /// A completed line, without its newline.
    fn line(&mut self, line: &[u8]);
    /// The first `max_line` bytes of a longer line, cut there: its next
    /// part follows (as another part, or as the line's end).
    fn part(&mut self, part: &[u8]) {
        self.line(part)
    }
    /// An SGR sequence (`CSI … m`, no private marker), read when the
    /// current line held `at` bytes before the cursor.
    fn sgr(&mut self, _at: usize, _params: &Params) {}
}

/// A closure that takes lines, as a [`Sink`] that ignores SGR.
struct LineSink<'a, F>(&'a mut F);

impl<F: FnMut(&[u8])> Sink for LineSink<'_, F> {
    fn line(&mut self, line: &[u8]) {
        (self.0)(line)
    }
}

/// A closure that takes a line's parts and whether each ends its line.
struct PartSink<'a, F>(&'a mut F);

impl<F: FnMut(&[u8], bool)> Sink for PartSink<'_, F> {
    fn line(&mut self, line: &[u8]) {
        (self.0)(line, true)
    }

    fn part(&mut self, part: &[u8]) {
        (self.0)(part, false)
    }
}

/// Incremental line view of one pane's output. See the module docs.
#[derive(Clone, Debug)]
pub struct LineView {
    max_line: usize,
    /// The parameters of the CSI sequence being read.
    params: Params,
    line: Vec<u8>,
    /// Byte index into `line` of the cursor; always `<= line.len()` and on a
    /// character start unless the input itself was not UTF-8.
    col: usize,
    state: EscState,
}

impl LineView {
    /// `max_line` bounds the current line (see the module docs); at least 1.
    pub fn new(max_line: usize) -> Self {
        LineView {
            max_line: max_line.max(1),
            params: Params::new(),
            line: Vec::new(),
            col: 0,
            state: EscState::Ground,
        }
    }

    /// The current line, not yet ended: matchers look at it too (a prompt
    /// never ends with a newline).
    pub fn partial(&self) -> &[u8] {
        &self.line
    }

    /// The current line up to the cursor (`\r` and backspace move it):
    /// where the next text goes, as far as this view models it.
    pub fn before_cursor(&self) -> &[u8] {
        &self.line[..self.col]
    }

    /// Forgets the current line and any half-read escape sequence: output was
    /// missed (a ring gap), so what follows must not be joined to it.
    pub fn reset(&mut self) {
        self.line.clear();
        self.col = 0;
        self.state = EscState::Ground;
    }

    /// Feeds the next bytes of the stream; `out` gets each completed line,
    /// without its newline.
    pub fn feed(&mut self, bytes: &[u8], out: &mut impl FnMut(&[u8])) {
        self.feed_to(bytes, &mut LineSink(out));
    }

    /// [`LineView::feed`], telling a line cut at the bound from one that
    /// ended: `out(part, ends)`, where the parts of one long line all but
    /// the last come with `ends` false.
    pub fn feed_parts(&mut self, bytes: &[u8], out: &mut impl FnMut(&[u8], bool)) {
        self.feed_to(bytes, &mut PartSink(out));
    }

    /// [`LineView::feed`], telling `out` the SGR sequences too.
    pub fn feed_to(&mut self, bytes: &[u8], out: &mut impl Sink) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == EscState::Ground {
                let rest = &bytes[i..];
                let n = text_run(rest);
                if n > 0 {
                    self.text(&rest[..n], out);
                    i += n;
                } else {
                    self.control(rest[0], out);
                    i += 1;
                }
                continue;
            }
            match self.escape(bytes[i], out) {
                Step::Next => i += 1,
                Step::Again => {}
            }
        }
    }

    /// A C0 control or DEL, in the ground state or inside an escape (where
    /// terminals execute them too).
    fn control(&mut self, b: u8, out: &mut impl Sink) {
        match b {
            b'\n' => self.end_line(out),
            b'\r' => self.col = 0,
            0x08 if self.col > 0 => {
                self.col -= 1;
                while self.col > 0 && is_continuation(self.line[self.col]) {
                    self.col -= 1;
                }
            }
            b'\t' => self.text(b"\t", out),
            ESC => self.state = EscState::Esc,
            _ => {}
        }
    }

    /// One byte in any state but ground.
    fn escape(&mut self, b: u8, out: &mut impl Sink) -> Step {
        match self.state {
            EscState::Ground => unreachable!("ground bytes are handled by feed"),
            EscState::Str { len } => {
                self.state = match b {
                    BEL | CAN | SUB => EscState::Ground,
                    ESC => EscState::StrEsc,
                    _ if len >= MAX_STRING => return self.abort(),
                    _ => EscState::Str { len: len + 1 },
                };
                Step::Next
            }
            EscState::StrEsc => {
                if b == b'\\' {
                    self.state = EscState::Ground;
                    Step::Next
                } else {
                    self.state = EscState::Esc;
                    Step::Again
                }
            }
            EscState::Esc => {
                self.state = match b {
                    b'[' => {
                        self.params = Params::new();
                        EscState::Csi { plain: true }
                    }
                    b']' | b'P' | b'X' | b'^' | b'_' => EscState::Str { len: 0 },
                    0x20..=0x2f => EscState::EscInter,
                    0x30..=0x7e => EscState::Ground,
                    _ => return self.in_sequence(b, out),
                };
                Step::Next
            }
            EscState::EscInter => {
                self.state = match b {
                    0x20..=0x2f => EscState::EscInter,
                    0x30..=0x7e => EscState::Ground,
                    _ => return self.in_sequence(b, out),
                };
                Step::Next
            }
            EscState::Csi { plain } => {
                self.state = match b {
                    b'0'..=b'9' => {
                        self.params.digit(b - b'0');
                        self.state
                    }
                    b';' | b':' => {
                        self.params.separator(b == b':');
                        self.state
                    }
                    0x3c..=0x3f | 0x20..=0x2f => EscState::Csi { plain: false },
                    0x40..=0x7e => {
                        match b {
                            b'K' if plain => self.erase_line(self.params.first()),
                            b'm' if plain => out.sgr(self.col, &self.params),
                            _ => {}
                        }
                        EscState::Ground
                    }
                    _ => return self.in_sequence(b, out),
                };
                Step::Next
            }
        }
    }

    /// Bytes every non-string escape state treats alike.
    fn in_sequence(&mut self, b: u8, out: &mut impl Sink) -> Step {
        match b {
            CAN | SUB => self.state = EscState::Ground,
            0x7f => {}
            // C0 controls run mid-sequence; ESC restarts one.
            0x00..=0x1f => self.control(b, out),
            // Not part of any sequence: the sequence was broken, this is text.
            _ => return self.abort(),
        }
        Step::Next
    }

    fn abort(&mut self) -> Step {
        self.state = EscState::Ground;
        Step::Again
    }

    /// `CSI K` / `CSI 0 K` erase to the end of the line; `CSI 2 K` the whole
    /// line (the cursor goes to column 0: columns are not modelled).
    /// `CSI 1 K` would blank the start; it is ignored.
    fn erase_line(&mut self, param: u16) {
        match param {
            0 => self.line.truncate(self.col),
            2 => {
                self.line.clear();
                self.col = 0;
            }
            _ => {}
        }
    }

    fn end_line(&mut self, out: &mut impl Sink) {
        out.line(&self.line);
        self.line.clear();
        self.col = 0;
    }

    /// Ends the current line at the bound: a part of a longer line.
    fn cut_line(&mut self, out: &mut impl Sink) {
        out.part(&self.line);
        self.line.clear();
        self.col = 0;
    }

    /// A run of text bytes (no C0 controls but `\t`, no DEL).
    fn text(&mut self, mut run: &[u8], out: &mut impl Sink) {
        let max = self.max_line;
        while !run.is_empty() {
            let len = self.line.len();
            if self.col < len {
                self.overwrite(run[0], out);
                run = &run[1..];
                continue;
            }
            // Appending. Per byte: past `max` only continuation bytes, up to
            // MAX_SPILL, still fit; anything else ends the line first.
            let mut n = max.saturating_sub(len).min(run.len());
            while n < run.len() && len + n < max + MAX_SPILL && is_continuation(run[n]) {
                n += 1;
            }
            self.line.extend_from_slice(&run[..n]);
            self.col = self.line.len();
            run = &run[n..];
            if !run.is_empty() {
                self.cut_line(out);
            }
        }
    }

    /// Writes one byte at the cursor, inside the line. A character start
    /// replaces the whole character under the cursor; a continuation byte is
    /// inserted, completing the character just written.
    fn overwrite(&mut self, b: u8, out: &mut impl Sink) {
        let col = self.col;
        if is_continuation(b) {
            if self.line.len() >= self.max_line + MAX_SPILL {
                self.cut_line(out);
                self.line.push(b);
                self.col = 1;
                return;
            }
            self.line.insert(col, b);
        } else {
            let old = 1 + self.line[col + 1..]
                .iter()
                .take_while(|&&c| is_continuation(c))
                .count();
            self.line[col] = b;
            if old > 1 {
                self.line.drain(col + 1..col + old);
            }
        }
        self.col += 1;
    }
}

/// Length of the leading run of text bytes (anything but C0 and DEL).
/// The hot path: checks eight bytes at a time (the SWAR "has less than" and
/// "has zero" tricks, both exact), then finds the byte in the word that stops.
fn text_run(bytes: &[u8]) -> usize {
    const LO: u64 = u64::from_ne_bytes([0x01; 8]);
    const HI: u64 = u64::from_ne_bytes([0x80; 8]);
    let is_text = |b: u8| b >= 0x20 && b != 0x7f;
    let mut i = 0;
    for word in bytes.chunks_exact(8) {
        let x = u64::from_ne_bytes(word.try_into().expect("8 bytes"));
        let below_space = x.wrapping_sub(LO * 0x20) & !x & HI;
        let d = x ^ (LO * 0x7f);
        let del = d.wrapping_sub(LO) & !d & HI;
        if below_space | del != 0 {
            break;
        }
        i += 8;
    }
    i + bytes[i..]
        .iter()
        .position(|&b| !is_text(b))
        .unwrap_or(bytes.len() - i)
}

fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// `line` without the spaces that pad it to the pane's width: tmux fills
/// screen rows with spaces, and programs that redraw (vim, progress bars)
/// print them. What an agent reads of a line ends at its last visible
/// character; matchers still see the line as it came.
pub fn unpadded(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_follows_carriage_returns() {
        let mut view = LineView::new(MAX);
        view.feed(b"%      \r$ ", &mut |_| {});
        assert_eq!(view.before_cursor(), b"$ ");
        assert_eq!(view.partial(), b"$      ", "the rest of the row stays");
        view.feed(b"\x1b[32mx\x1b[0m", &mut |_| {});
        assert_eq!(view.before_cursor(), b"$ x");
    }

    #[test]
    fn padding_is_cut_from_the_end_only() {
        assert_eq!(unpadded(b"  a b   "), b"  a b");
        assert_eq!(unpadded(b"    "), b"");
        assert_eq!(unpadded(b"a\t "), b"a\t");
        assert_eq!(unpadded(b""), b"");
    }

    const MAX: usize = 1 << 16;

    /// Lines out, then the partial line.
    fn run(view: &mut LineView, chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut lines = Vec::new();
        for chunk in chunks {
            view.feed(chunk, &mut |line: &[u8]| lines.push(line.to_vec()));
        }
        (lines, view.partial().to_vec())
    }

    fn lines_of(input: &[u8]) -> (Vec<Vec<u8>>, Vec<u8>) {
        run(&mut LineView::new(MAX), &[input])
    }

    /// Same result at every two-way split and byte by byte.
    fn assert_chunking_independent(input: &[u8], max_line: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
        let whole = run(&mut LineView::new(max_line), &[input]);
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(
                run(&mut LineView::new(max_line), &[a, b]),
                whole,
                "split at {at}"
            );
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&mut LineView::new(max_line), &bytes), whole);
        whole
    }

    fn strs(lines: &[Vec<u8>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    #[test]
    fn carriage_return_overwrites() {
        let (lines, partial) = lines_of(b"progress 10%\rprogress 20%\nabcdef\rxy\nend\r\n$ ");
        assert_eq!(strs(&lines), ["progress 20%", "xycdef", "end"]);
        assert_eq!(partial, b"$ ");
    }

    #[test]
    fn erase_line_clears_redrawn_progress() {
        let (lines, _) = lines_of(b"Downloading 50%\r\x1b[KDone\nabc\x1b[2Kxy\nkeep\x1b[1K\n");
        assert_eq!(strs(&lines), ["Done", "xy", "keep"]);
        // A private or parameterised variant is not an erase.
        let (lines, _) = lines_of(b"ab\r\x1b[?K\x1b[3K\x1b[ K\n");
        assert_eq!(strs(&lines), ["ab"]);
    }

    #[test]
    fn escape_sequences_are_removed() {
        let input = b"\x1b[1;31mred\x1b[0m \x1b]0;title\x07osc \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \
            \x1bPdcs\x1b\\\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\\x1b(Bcs\x1b)0 \x1b=\x1b7two\x1b[?2004h\n";
        let (lines, partial) = assert_chunking_independent(input, MAX);
        assert_eq!(strs(&lines), ["red osc link cs two"]);
        assert!(partial.is_empty());
    }

    #[test]
    fn controls_inside_and_around_sequences() {
        // A newline inside a CSI still ends the line (and `b` then ends the
        // CSI as its final byte); CAN aborts; ESC restarts.
        let (lines, partial) = lines_of(b"a\x1b[1\nb\x1b[12\x18c\x1b[1\x1b[0md\x00\x07\x7fe\tf");
        assert_eq!(strs(&lines), ["a"]);
        assert_eq!(partial, b"cde\tf");
        // A byte that cannot belong to a sequence ends it and is text.
        let (_, partial) = lines_of("x\x1b[1é\x1bé".as_bytes());
        assert_eq!(partial, "xéé".as_bytes());
        // Strings end on ESC followed by something else, which starts anew.
        let (_, partial) = lines_of(b"\x1b]title\x1b[31mt");
        assert_eq!(partial, b"t");
    }

    /// What a sink is told: lines, and SGR sequences with their offsets.
    #[derive(Default)]
    struct Told(Vec<String>);

    impl Sink for Told {
        fn line(&mut self, line: &[u8]) {
            self.0
                .push(format!("line {}", String::from_utf8_lossy(line)));
        }
        fn sgr(&mut self, at: usize, params: &Params) {
            let p: Vec<String> = params
                .iter()
                .map(|(v, sub)| format!("{}{v}", if sub { ":" } else { "" }))
                .collect();
            self.0.push(format!("sgr@{at} {}", p.join(",")));
        }
    }

    #[test]
    fn sgr_sequences_reach_the_sink_with_their_parameters() {
        let input = b"a\x1b[1;38;5;196mb\x1b[38:2::1:2:3m\x1b[mc\x1b[?25l\x1b[>4;1m\x1b[Kd\n";
        let mut told = Told::default();
        LineView::new(100).feed_to(input, &mut told);
        assert_eq!(
            told.0,
            [
                "sgr@1 1,38,5,196",
                "sgr@2 38,:2,:0,:1,:2,:3",
                "sgr@2 0",
                "line abcd"
            ]
        );
        // Split anywhere, the same.
        for cut in 0..input.len() {
            let mut split = Told::default();
            let mut view = LineView::new(100);
            view.feed_to(&input[..cut], &mut split);
            view.feed_to(&input[cut..], &mut split);
            assert_eq!(split.0, told.0, "cut at {cut}");
        }
        // Parameters past MAX_PARAMS are dropped, not a panic.
        let many = format!("\x1b[{}mx\n", vec!["1"; 40].join(";"));
        let mut told = Told::default();
        LineView::new(100).feed_to(many.as_bytes(), &mut told);
        assert_eq!(told.0[0].matches(',').count(), MAX_PARAMS - 1);
    }

    #[test]
    fn backspace_moves_one_character() {
        let (lines, _) = lines_of("abc\x08\x08X\né\x08e\n\x08\x08ok\na😀\x08b\n".as_bytes());
        assert_eq!(strs(&lines), ["aXc", "e", "ok", "ab"]);
    }

    #[test]
    fn overwrite_replaces_whole_characters() {
        let (lines, _) = lines_of("ab\ré\né€\rab\n😀x\r€\n".as_bytes());
        assert_eq!(strs(&lines), ["éb", "ab", "€x"]);
    }

    #[test]
    fn utf8_split_across_feeds_comes_out_whole() {
        let mut view = LineView::new(MAX);
        let (lines, _) = run(&mut view, &[b"caf\xc3", b"\xa9 \xf0\x9f", b"\x98\x80\r\n"]);
        assert_eq!(strs(&lines), ["café 😀"]);
        assert_chunking_independent("é€😀 x\rü\x08😀\n".as_bytes(), MAX);
    }

    #[test]
    fn invalid_utf8_is_kept_as_bytes() {
        let input = b"\xff\xfe ok \x80\x80\xc3\n\xc3\r\x80\x80\x80\x80\x80x\n";
        let (lines, _) = assert_chunking_independent(input, MAX);
        assert_eq!(lines[0], b"\xff\xfe ok \x80\x80\xc3");
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn long_lines_are_cut_at_the_bound_without_splitting_characters() {
        let (lines, partial) =
            assert_chunking_independent("0123456789\n01234567é\n0123456é9".as_bytes(), 8);
        assert_eq!(
            strs(&lines),
            ["01234567", "89", "01234567", "é", "0123456é"]
        );
        assert_eq!(partial, b"9");
        // Continuation bytes alone cannot grow a line past max + 3.
        let mut view = LineView::new(4);
        let (lines, partial) = run(&mut view, &[&[0x80; 20]]);
        assert!(lines.iter().all(|l| l.len() <= 4 + MAX_SPILL));
        assert!(partial.len() <= 4 + MAX_SPILL);
        // Nor can inserting them mid-line after a carriage return.
        let mut view = LineView::new(4);
        let (lines, partial) = run(&mut view, &[b"abcd\ra", &[0x80; 20]]);
        assert!(lines.iter().all(|l| l.len() <= 4 + MAX_SPILL));
        assert!(partial.len() <= 4 + MAX_SPILL);
    }

    #[test]
    fn the_parts_of_a_cut_line_say_so() {
        let mut view = LineView::new(4);
        let mut parts = Vec::new();
        view.feed_parts(b"abcdefghij\nxy\n", &mut |part, ends| {
            parts.push((String::from_utf8_lossy(part).into_owned(), ends))
        });
        let want = [("abcd", false), ("efgh", false), ("ij", true), ("xy", true)];
        let want: Vec<_> = want.iter().map(|&(p, e)| (p.to_owned(), e)).collect();
        assert_eq!(parts, want);
    }

    #[test]
    fn unterminated_string_gives_up() {
        let mut input = b"\x1b]".to_vec();
        input.extend(std::iter::repeat_n(b'z', MAX_STRING + 10));
        input.extend_from_slice(b"\x1b[0mvisible\n");
        let (lines, _) = lines_of(&input);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with(b"zzzvisible"));
        assert_eq!(lines[0].len(), 10 + 7);
    }

    #[test]
    fn reset_drops_the_partial_line_and_state() {
        let mut view = LineView::new(MAX);
        let (_, partial) = run(&mut view, &[b"half\x1b]unterminated"]);
        assert_eq!(partial, b"half");
        view.reset();
        let (lines, _) = run(&mut view, &[b"new\n"]);
        assert_eq!(strs(&lines), ["new"]);
    }

    #[test]
    fn text_run_stops_at_controls_and_del() {
        for len in 0..24 {
            for stop in [0x00, 0x0a, 0x1b, 0x1f, 0x7f] {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    bytes.extend_from_slice(&[0x20, 0x7e, 0x80, 0xff]);
                    bytes.insert(at, stop);
                    assert_eq!(text_run(&bytes), at, "{bytes:?}");
                }
            }
            let bytes: Vec<u8> = (0..len as u8).map(|i| 0x20 + i * 9).collect();
            assert_eq!(text_run(&bytes), len);
        }
    }

    mod proptests {
        use super::*;
        use proptest::prelude::*;

        /// Bytes biased towards the interesting ones.
        fn stream() -> impl Strategy<Value = Vec<u8>> {
            let byte = prop_oneof![
                any::<u8>(),
                prop::sample::select(
                    b"\x1b[]P\\;0123K\r\n\x08\x07\x18\t\xc3\xa9\x80\xf0aZ".to_vec()
                ),
            ];
            prop::collection::vec(byte, 0..300)
        }

        proptest! {
            #[test]
            fn any_input_any_chunking(
                data in stream(),
                cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
                max_line in 1usize..40,
            ) {
                let whole = run(&mut LineView::new(max_line), &[&data]);
                let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
                cuts.sort_unstable();
                let mut chunks: Vec<&[u8]> = Vec::new();
                let mut at = 0;
                for cut in cuts {
                    chunks.push(&data[at..cut]);
                    at = cut;
                }
                chunks.push(&data[at..]);
                let chunked = run(&mut LineView::new(max_line), &chunks);
                prop_assert_eq!(&chunked, &whole);
                for line in whole.0.iter().chain([&whole.1]) {
                    prop_assert!(line.len() <= max_line + MAX_SPILL);
                }
            }
        }
    }
}
