//! A pane's screen as cells: what `capture-pane -e -p -N` prints, read
//! with the server's one escape parser ([`LineView`]) into a grid of
//! characters with their colours and attributes, for the picture of a pane
//! ([`crate::picture`]).
//!
//! tmux prints each row padded to the pane's width (`-N`), the style as SGR
//! sequences where it changes (it carries over from one row to the next),
//! and a wide character once, without its padding cell: its second cell is
//! found again here from its width (`unicode-width`, the widths tmux uses).

use unicode_width::UnicodeWidthChar;

use super::lines::{LineView, Params, Sink};

/// A colour as the pane's program set it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Colour {
    /// The terminal's own default (foreground or background).
    #[default]
    Default,
    /// One of the 256 indexed colours (0-15 are the 16 named ones).
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// Attribute bits of a [`Style`].
pub mod attr {
    pub const BOLD: u8 = 1;
    pub const DIM: u8 = 1 << 1;
    pub const ITALIC: u8 = 1 << 2;
    pub const UNDERLINE: u8 = 1 << 3;
    pub const REVERSE: u8 = 1 << 4;
    pub const HIDDEN: u8 = 1 << 5;
    pub const STRIKE: u8 = 1 << 6;
    pub const OVERLINE: u8 = 1 << 7;
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub fg: Colour,
    pub bg: Colour,
    /// [`attr`] bits.
    pub attrs: u8,
}

impl Style {
    /// The style after the SGR sequence `params`.
    pub fn apply(mut self, params: &Params) -> Style {
        let p: Vec<(u16, bool)> = params.iter().collect();
        let mut i = 0;
        while i < p.len() {
            let (n, _) = p[i];
            i += 1;
            // The sub-parameters that follow (`4:3`, `38:2::r:g:b`).
            let subs = p[i..].iter().take_while(|(_, sub)| *sub).count();
            match n {
                0 => self = Style::default(),
                1 => self.attrs |= attr::BOLD,
                2 => self.attrs |= attr::DIM,
                3 => self.attrs |= attr::ITALIC,
                4 if subs > 0 && p[i].0 == 0 => self.attrs &= !attr::UNDERLINE,
                4 | 21 => self.attrs |= attr::UNDERLINE,
                7 => self.attrs |= attr::REVERSE,
                8 => self.attrs |= attr::HIDDEN,
                9 => self.attrs |= attr::STRIKE,
                22 => self.attrs &= !(attr::BOLD | attr::DIM),
                23 => self.attrs &= !attr::ITALIC,
                24 => self.attrs &= !attr::UNDERLINE,
                27 => self.attrs &= !attr::REVERSE,
                28 => self.attrs &= !attr::HIDDEN,
                29 => self.attrs &= !attr::STRIKE,
                53 => self.attrs |= attr::OVERLINE,
                55 => self.attrs &= !attr::OVERLINE,
                30..=37 => self.fg = Colour::Indexed((n - 30) as u8),
                39 => self.fg = Colour::Default,
                40..=47 => self.bg = Colour::Indexed((n - 40) as u8),
                49 => self.bg = Colour::Default,
                90..=97 => self.fg = Colour::Indexed((n - 90 + 8) as u8),
                100..=107 => self.bg = Colour::Indexed((n - 100 + 8) as u8),
                38 | 48 | 58 => {
                    let (colour, used) = if subs > 0 {
                        (extended(&p[i..i + subs], true), subs)
                    } else {
                        let rest: Vec<(u16, bool)> = p[i..].to_vec();
                        let used = match rest.first() {
                            Some((5, _)) => 2,
                            Some((2, _)) => 4,
                            _ => 0,
                        };
                        (extended(&rest[..used.min(rest.len())], false), used)
                    };
                    match (n, colour) {
                        (38, Some(c)) => self.fg = c,
                        (48, Some(c)) => self.bg = c,
                        _ => {}
                    }
                    i += used.min(p.len() - i);
                    continue;
                }
                _ => {}
            }
            i += subs;
        }
        self
    }
}

/// `5;n` or `2;r;g;b` after 38/48/58; with colons, `2` may carry a colour
/// space first (`38:2::r:g:b`).
fn extended(p: &[(u16, bool)], colons: bool) -> Option<Colour> {
    let byte = |i: usize| p.get(i).map(|(v, _)| (*v).min(255) as u8);
    match p.first()?.0 {
        5 => Some(Colour::Indexed(byte(1)?)),
        2 => {
            let at = if colons && p.len() >= 5 { 2 } else { 1 };
            Some(Colour::Rgb(byte(at)?, byte(at + 1)?, byte(at + 2)?))
        }
        _ => None,
    }
}

/// One cell of the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub ch: char,
    /// 1, 2 for a wide character's first cell, 0 for its second.
    pub width: u8,
    pub style: Style,
}

impl Default for Cell {
    fn default() -> Cell {
        Cell {
            ch: ' ',
            width: 1,
            style: Style::default(),
        }
    }
}

/// A pane's visible screen, row by row.
#[derive(Clone, Debug)]
pub struct Screen {
    pub width: usize,
    pub height: usize,
    /// `height` rows of `width` cells.
    pub cells: Vec<Cell>,
}

impl Screen {
    /// The screen of a `width` x `height` pane from its capture's rows
    /// (`capture-pane -e -p -N`, without their newlines); rows past
    /// `height` are left out, missing ones are blank.
    pub fn from_capture<L: AsRef<[u8]>>(rows: &[L], width: usize, height: usize) -> Screen {
        let mut reader = ScreenSink {
            screen: Screen {
                width,
                height,
                cells: vec![Cell::default(); width * height],
            },
            row: 0,
            style: Style::default(),
            changes: Vec::new(),
        };
        let mut view = LineView::new(width.max(1) * 64);
        for row in rows.iter().take(height) {
            view.feed_to(row.as_ref(), &mut reader);
            view.feed_to(b"\n", &mut reader);
        }
        reader.screen
    }

    pub fn cell(&self, x: usize, y: usize) -> &Cell {
        &self.cells[y * self.width + x]
    }
}

/// The [`Sink`] that lays rows into a [`Screen`].
struct ScreenSink {
    screen: Screen,
    row: usize,
    /// The style in force (it carries over rows, as tmux prints it).
    style: Style,
    /// Style changes in the current row: byte offset, the style from there.
    changes: Vec<(usize, Style)>,
}

impl Sink for ScreenSink {
    fn sgr(&mut self, at: usize, params: &Params) {
        let from = self.changes.last().map_or(self.style, |c| c.1);
        self.changes.push((at, from.apply(params)));
    }

    fn line(&mut self, line: &[u8]) {
        let (width, y) = (self.screen.width, self.row);
        let mut changes = std::mem::take(&mut self.changes).into_iter().peekable();
        let mut style = self.style;
        let mut x = 0;
        let mut at = 0;
        for chunk in line.utf8_chunks() {
            let valid = chunk.valid();
            let chars = valid
                .char_indices()
                .map(|(i, c)| (at + i, c))
                .chain((!chunk.invalid().is_empty()).then_some((at + valid.len(), '\u{fffd}')));
            for (i, c) in chars {
                while let Some((_, s)) = changes.next_if(|(a, _)| *a <= i) {
                    style = s;
                }
                let w = match c {
                    '\t' => 8 - x % 8,
                    c => c.width().unwrap_or(0),
                };
                if w == 0 || x + w.min(2) > width || y >= self.screen.height {
                    x += w;
                    continue;
                }
                let row = &mut self.screen.cells[y * width..(y + 1) * width];
                if c == '\t' {
                    for cell in &mut row[x..(x + w).min(width)] {
                        *cell = Cell {
                            style,
                            ..Cell::default()
                        };
                    }
                } else {
                    row[x] = Cell {
                        ch: c,
                        width: w as u8,
                        style,
                    };
                    if w == 2 {
                        row[x + 1] = Cell {
                            ch: ' ',
                            width: 0,
                            style,
                        };
                    }
                }
                x += w;
            }
            at += valid.len() + chunk.invalid().len();
        }
        self.style = changes.last().map_or(style, |c| c.1);
        self.row += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(text: &str, w: usize, h: usize) -> Screen {
        let rows: Vec<&str> = text.split('\n').collect();
        Screen::from_capture(&rows, w, h)
    }

    #[test]
    fn colours_in_every_form() {
        let s = screen(
            "\x1b[31;42ma\x1b[38;5;200;48;2;1;2;3mb\x1b[38:2::9:8:7;48:5:17mc\x1b[94;103md\x1b[39;49me",
            5,
            1,
        );
        let st = |x| s.cell(x, 0).style;
        assert_eq!(
            (st(0).fg, st(0).bg),
            (Colour::Indexed(1), Colour::Indexed(2))
        );
        assert_eq!(
            (st(1).fg, st(1).bg),
            (Colour::Indexed(200), Colour::Rgb(1, 2, 3))
        );
        assert_eq!(
            (st(2).fg, st(2).bg),
            (Colour::Rgb(9, 8, 7), Colour::Indexed(17))
        );
        assert_eq!(
            (st(3).fg, st(3).bg),
            (Colour::Indexed(12), Colour::Indexed(11))
        );
        assert_eq!(st(4), Style::default());
    }

    #[test]
    fn attributes_set_and_clear() {
        let s = screen(
            "\x1b[1;2;3;4;7;9ma\x1b[22;23mb\x1b[4:0;27;29mc\x1b[4:3;8md\x1b[0me",
            5,
            1,
        );
        use attr::*;
        let a = |x| s.cell(x, 0).style.attrs;
        assert_eq!(a(0), BOLD | DIM | ITALIC | UNDERLINE | REVERSE | STRIKE);
        assert_eq!(a(1), UNDERLINE | REVERSE | STRIKE);
        assert_eq!(a(2), 0);
        assert_eq!(a(3), UNDERLINE | HIDDEN);
        assert_eq!(a(4), 0);
    }

    #[test]
    fn style_carries_over_rows_and_wide_characters_take_two_cells() {
        let s = screen("\x1b[44mab\n漢x\x1b[m\n", 4, 3);
        assert_eq!(s.cell(3, 0).style.bg, Colour::Default);
        assert_eq!(s.cell(0, 1).style.bg, Colour::Indexed(4));
        assert_eq!((s.cell(0, 1).ch, s.cell(0, 1).width), ('漢', 2));
        assert_eq!(s.cell(1, 1).width, 0);
        assert_eq!(s.cell(2, 1).ch, 'x');
        assert_eq!(s.cell(3, 1).style.bg, Colour::Default);
        assert_eq!(*s.cell(0, 2), Cell::default());
    }

    #[test]
    fn what_does_not_fit_is_dropped_not_a_panic() {
        let rows: [&[u8]; 4] = ["abc漢".as_bytes(), b"\xff\xcc\x81x", b"1", b"2"];
        let s = Screen::from_capture(&rows, 4, 2);
        assert_eq!(s.cell(3, 0).ch, ' ');
        assert_eq!(s.cell(0, 1).ch, '\u{fffd}');
        assert_eq!(s.cell(1, 1).ch, 'x');
        let s = screen("\x1b[38;5m\x1b[38:2m\x1b[48;2;1mz", 1, 1);
        assert_eq!(s.cell(0, 0).ch, 'z');
    }
}
