//! The picture of a pane: a [`Screen`] drawn cell by cell with GNU
//! Unifont ([`font`]) and encoded as a PNG. Sans-IO: the screen comes from
//! `capture-pane` (read by [`crate::panes::screen`]), the bytes go to an
//! MCP `image` content item.
//!
//! A cell is [`CELL_W`] x [`CELL_H`] pixels (a wide character's two cells
//! hold its 16x16 glyph). Colours: the 16 named ones as xterm draws them,
//! the 6x6x6 cube and the grey ramp of the 256, 24-bit as given; the
//! terminal's defaults are [`DEFAULT_FG`] on [`DEFAULT_BG`]. Bold is drawn
//! twice a pixel apart, dim halfway to the background, italic slanted,
//! underline, strikethrough and overline as lines, reverse swaps the cell's
//! colours, hidden draws no glyph. The cursor is a block: its cell with its
//! colours swapped. A character Unifont lacks is an empty box.
//!
//! The image is indexed (a palette of at most 256 colours, 4 bits a pixel
//! for 16 or fewer) when the screen has few enough colours, as text almost
//! always does; else 24-bit.

pub mod font;

use std::collections::HashMap;

use crate::panes::screen::{Cell, Colour, Screen, Style, attr};
use font::{Font, Glyph};

pub const CELL_W: usize = 8;
pub const CELL_H: usize = 16;

/// The largest screen drawn, in cells (300x200): its picture's buffers
/// stay under 32 MB.
pub const MAX_CELLS: usize = 60_000;

pub const DEFAULT_FG: [u8; 3] = [0xd8, 0xd8, 0xd8];
pub const DEFAULT_BG: [u8; 3] = [0x16, 0x16, 0x16];

/// The 16 named colours, as xterm draws them.
const NAMED: [[u8; 3]; 16] = [
    [0x00, 0x00, 0x00],
    [0xcd, 0x00, 0x00],
    [0x00, 0xcd, 0x00],
    [0xcd, 0xcd, 0x00],
    [0x00, 0x00, 0xee],
    [0xcd, 0x00, 0xcd],
    [0x00, 0xcd, 0xcd],
    [0xe5, 0xe5, 0xe5],
    [0x7f, 0x7f, 0x7f],
    [0xff, 0x00, 0x00],
    [0x00, 0xff, 0x00],
    [0xff, 0xff, 0x00],
    [0x5c, 0x5c, 0xff],
    [0xff, 0x00, 0xff],
    [0x00, 0xff, 0xff],
    [0xff, 0xff, 0xff],
];

/// `colour` as red, green, blue; `default` for [`Colour::Default`].
pub fn rgb(colour: Colour, default: [u8; 3]) -> [u8; 3] {
    match colour {
        Colour::Default => default,
        Colour::Rgb(r, g, b) => [r, g, b],
        Colour::Indexed(n @ 0..16) => NAMED[usize::from(n)],
        Colour::Indexed(n @ 16..232) => {
            let level = |i: u8| if i == 0 { 0 } else { 55 + 40 * i };
            let i = n - 16;
            [level(i / 36), level(i / 6 % 6), level(i % 6)]
        }
        Colour::Indexed(n) => [8 + 10 * (n - 232); 3],
    }
}

/// The colours a cell is drawn in: its glyph's and its background's,
/// after reverse and dim (the cursor swaps them again).
pub fn colours(style: Style) -> ([u8; 3], [u8; 3]) {
    let (mut fg, mut bg) = (rgb(style.fg, DEFAULT_FG), rgb(style.bg, DEFAULT_BG));
    if style.attrs & attr::REVERSE != 0 {
        std::mem::swap(&mut fg, &mut bg);
    }
    if style.attrs & attr::DIM != 0 {
        fg = [0, 1, 2].map(|i| ((u16::from(fg[i]) + u16::from(bg[i])) / 2) as u8);
    }
    (fg, bg)
}

/// A drawn screen: each pixel a colour of `palette`.
pub struct Picture {
    pub width: usize,
    pub height: usize,
    palette: Vec<[u8; 3]>,
    pixels: Vec<u32>,
}

/// Draws `screen` with the block cursor at `cursor` (column, row; `None`:
/// hidden). The screen is at most [`MAX_CELLS`] cells.
pub fn draw(screen: &Screen, cursor: Option<(usize, usize)>) -> Picture {
    assert!(
        screen.width * screen.height <= MAX_CELLS,
        "screen too large"
    );
    let font = Font::get();
    let mut canvas = Canvas {
        width: screen.width * CELL_W,
        palette: Vec::new(),
        known: HashMap::new(),
        pixels: vec![0; screen.width * CELL_W * screen.height * CELL_H],
    };
    for y in 0..screen.height {
        for x in 0..screen.width {
            canvas.cell(font, screen.cell(x, y), x, y);
        }
    }
    if let Some((mut x, y)) = cursor.filter(|&(x, y)| x < screen.width && y < screen.height) {
        if screen.cell(x, y).width == 0 && x > 0 {
            x -= 1;
        }
        canvas.invert(screen.cell(x, y), x, y);
    }
    Picture {
        width: canvas.width,
        height: screen.height * CELL_H,
        palette: canvas.palette,
        pixels: canvas.pixels,
    }
}

struct Canvas {
    width: usize,
    palette: Vec<[u8; 3]>,
    known: HashMap<[u8; 3], u32>,
    pixels: Vec<u32>,
}

impl Canvas {
    fn id(&mut self, colour: [u8; 3]) -> u32 {
        *self.known.entry(colour).or_insert_with(|| {
            self.palette.push(colour);
            (self.palette.len() - 1) as u32
        })
    }

    /// The pixel rows of the cell at `x`, `y`, `w` pixels wide.
    fn rows(&mut self, x: usize, y: usize, w: usize) -> impl Iterator<Item = &mut [u32]> {
        let width = self.width;
        self.pixels[y * CELL_H * width..(y + 1) * CELL_H * width]
            .chunks_exact_mut(width)
            .map(move |row| &mut row[x * CELL_W..x * CELL_W + w])
    }

    fn cell(&mut self, font: &Font, cell: &Cell, x: usize, y: usize) {
        if cell.width == 0 {
            return; // the second half of a wide character, drawn with it
        }
        let w = CELL_W * usize::from(cell.width);
        let (fg, bg) = colours(cell.style);
        let (fg, bg) = (self.id(fg), self.id(bg));
        let attrs = cell.style.attrs;
        let glyph = if attrs & attr::HIDDEN != 0 || cell.ch == ' ' {
            [0; CELL_H]
        } else {
            shape(font.glyph(cell.ch), w, attrs)
        };
        for (r, row) in self.rows(x, y, w).enumerate() {
            let line = (r == CELL_H - 1 && attrs & attr::UNDERLINE != 0)
                || (r == CELL_H / 2 && attrs & attr::STRIKE != 0)
                || (r == 0 && attrs & attr::OVERLINE != 0);
            let bits = if line { u16::MAX } else { glyph[r] };
            for (i, px) in row.iter_mut().enumerate() {
                *px = if bits & (0x8000 >> i) != 0 { fg } else { bg };
            }
        }
    }

    /// The block cursor: the cell's colours swapped.
    fn invert(&mut self, cell: &Cell, x: usize, y: usize) {
        let w = CELL_W * usize::from(cell.width.max(1));
        let (fg, bg) = colours(cell.style);
        let (fg, bg) = (self.id(fg), self.id(bg));
        for row in self.rows(x, y, w) {
            for px in row {
                *px = if *px == bg { fg } else { bg };
            }
        }
    }
}

/// A glyph's rows fitted to a cell `w` pixels wide (16-bit rows, leftmost
/// pixel in the top bit), bold and italic applied; no glyph is a box.
fn shape(glyph: Option<Glyph<'_>>, w: usize, attrs: u8) -> [u16; CELL_H] {
    let mut rows = [0u16; CELL_H];
    match glyph {
        Some(Glyph::Narrow(bits)) => {
            // Centred in a wide cell.
            let shift = if w > CELL_W { 12 } else { 8 };
            for (row, b) in rows.iter_mut().zip(bits) {
                *row = u16::from(*b) << shift;
            }
        }
        Some(Glyph::Wide(bits)) => {
            for (row, b) in rows.iter_mut().zip(bits.chunks_exact(2)) {
                let full = u16::from_be_bytes([b[0], b[1]]);
                *row = if w > CELL_W { full } else { squeeze(full) };
            }
        }
        None => {
            let right = 0x8000u16 >> (w - 2);
            let edge = (0xffffu16 << (16 - w)) & !(0x8000 | (right >> 1));
            for (r, row) in rows.iter_mut().enumerate().take(CELL_H - 1).skip(1) {
                *row = if r == 1 || r == CELL_H - 2 {
                    edge
                } else {
                    0x4000 | right
                };
            }
        }
    }
    let mask = 0xffffu16 << (16 - w);
    for (r, row) in rows.iter_mut().enumerate() {
        if attrs & attr::BOLD != 0 {
            *row |= *row >> 1;
        }
        if attrs & attr::ITALIC != 0 {
            *row = match r {
                0..6 => *row >> 1,
                11.. => *row << 1,
                _ => *row,
            };
        }
        *row &= mask;
    }
    rows
}

/// A 16-pixel row in 8: each pair of pixels is one, set if either is.
fn squeeze(row: u16) -> u16 {
    (0..8).fold(0, |out, i| {
        let pair = (row >> (14 - 2 * i)) & 3;
        out | (u16::from(pair != 0) << (15 - i))
    })
}

impl Picture {
    /// The colour of the pixel at `x`, `y`.
    pub fn at(&self, x: usize, y: usize) -> [u8; 3] {
        self.palette[self.pixels[y * self.width + x] as usize]
    }

    /// The PNG file.
    pub fn png(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width as u32, self.height as u32);
        // zlib level 3 (flate2, miniz_oxide): a dense 200x50 screen of
        // coloured text in about 125 KB; fdeflate's fast mode is quicker
        // but 4 times larger here (BENCHMARKS.md).
        encoder.set_deflate_compression(png::DeflateCompression::Level(3));
        let data = if self.palette.len() <= 256 {
            let depth = if self.palette.len() <= 16 { 4 } else { 8 };
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_depth(if depth == 4 {
                png::BitDepth::Four
            } else {
                png::BitDepth::Eight
            });
            encoder.set_palette(self.palette.concat());
            encoder.set_filter(png::Filter::NoFilter);
            self.indexed(depth)
        } else {
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            self.pixels
                .iter()
                .flat_map(|&id| self.palette[id as usize])
                .collect()
        };
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&data)?;
        writer.finish()?;
        Ok(out)
    }

    /// The pixels as palette indices, `depth` (4 or 8) bits each, rows
    /// padded to whole bytes.
    fn indexed(&self, depth: usize) -> Vec<u8> {
        if depth == 8 {
            return self.pixels.iter().map(|&id| id as u8).collect();
        }
        self.pixels
            .chunks_exact(self.width)
            .flat_map(|row| {
                row.chunks(2).map(|pair| {
                    let hi = (pair[0] as u8) << 4;
                    hi | pair.get(1).map_or(0, |&lo| lo as u8)
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        (info, buf)
    }

    #[test]
    fn the_256_colours() {
        assert_eq!(rgb(Colour::Indexed(1), DEFAULT_FG), [0xcd, 0, 0]);
        assert_eq!(rgb(Colour::Indexed(16), DEFAULT_FG), [0, 0, 0]);
        assert_eq!(rgb(Colour::Indexed(196), DEFAULT_FG), [255, 0, 0]);
        assert_eq!(rgb(Colour::Indexed(110), DEFAULT_FG), [135, 175, 215]);
        assert_eq!(rgb(Colour::Indexed(232), DEFAULT_FG), [8, 8, 8]);
        assert_eq!(rgb(Colour::Indexed(255), DEFAULT_FG), [238, 238, 238]);
        assert_eq!(rgb(Colour::Default, DEFAULT_BG), DEFAULT_BG);
    }

    #[test]
    fn cells_backgrounds_glyphs_and_the_cursor_read_back() {
        let rows = [
            "\x1b[41mA\x1b[7m漢\x1b[m \u{1F600}",
            "\x1b[1;4;3;9;2mB\x1b[8mC",
        ];
        let screen = Screen::from_capture(&rows, 6, 2);
        let picture = draw(&screen, Some((4, 1)));
        let png = picture.png().unwrap();
        let (info, px) = decode(&png);
        assert_eq!((info.width, info.height), (48, 32));
        let at = |x: usize, y: usize| {
            let i = (y * 48 + x) * 3;
            [px[i], px[i + 1], px[i + 2]]
        };
        // A's cell: red background at the corner, some white glyph pixels.
        assert_eq!(at(0, 0), NAMED[1]);
        let glyph = |cx: usize, cy: usize, w: usize, colour: [u8; 3]| {
            (0..CELL_H)
                .flat_map(|y| (0..w).map(move |x| (cx * CELL_W + x, cy * CELL_H + y)))
                .filter(|&(x, y)| at(x, y) == colour)
                .count()
        };
        assert!(glyph(0, 0, 8, DEFAULT_FG) > 10);
        // The reversed wide character: red on the default foreground.
        assert_eq!(at(8, 0), DEFAULT_FG);
        assert!(glyph(1, 0, 16, NAMED[1]) > 20);
        // The emoji Unifont lacks: a box.
        assert!(glyph(4, 0, 8, DEFAULT_FG) > 10);
        // Underline, strike, bold, dim on B; hidden C has no glyph.
        let dim = colours(screen.cell(0, 1).style).0;
        assert_ne!(dim, DEFAULT_FG);
        assert_eq!(at(3, 16 + 15), dim);
        assert_eq!(at(3, 16 + 8), dim);
        assert_eq!(glyph(1, 1, 8, DEFAULT_FG), 0);
        // The cursor at (4, 1): a block in the default foreground.
        assert_eq!(at(4 * 8, 16), DEFAULT_FG);
        assert_eq!(glyph(4, 1, 8, DEFAULT_FG), 8 * 16);
    }

    #[test]
    fn many_colours_go_24_bit() {
        let row: String = (0..300)
            .map(|i| format!("\x1b[48;2;{};{};0m ", i % 256, i / 256))
            .collect();
        let screen = Screen::from_capture(&[row], 300, 1);
        let picture = draw(&screen, None);
        let (info, px) = decode(&picture.png().unwrap());
        assert_eq!(info.color_type, png::ColorType::Rgb);
        let i = (299 * CELL_W) * 3;
        assert_eq!(&px[i..i + 3], &[43, 1, 0]);
    }
}
