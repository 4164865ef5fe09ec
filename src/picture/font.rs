//! GNU Unifont, embedded: a glyph for every visible character of
//! Unicode's first plane, 8x16 pixels (16x16 for wide ones), one bit a
//! pixel. Packed by `scripts/unifont.py` (its layout is described there),
//! deflated in the binary (815 KB) and inflated once, on the first
//! picture. Licence: `assets/fonts/LICENSE-unifont.txt` (SIL OFL 1.1).

use std::sync::OnceLock;

static PACKED: &[u8] = include_bytes!("../../assets/fonts/unifont.bin.z");

/// A glyph's rows, top down, most significant bit leftmost.
#[derive(Clone, Copy, Debug)]
pub enum Glyph<'a> {
    /// 16 rows of 8 pixels.
    Narrow(&'a [u8]),
    /// 16 rows of 16 pixels, two bytes a row.
    Wide(&'a [u8]),
}

pub struct Font {
    bitmaps: Vec<u8>,
    /// Per code point of the first plane: where its bitmap starts in
    /// `bitmaps`, the top bit set for a wide one; `u32::MAX`: none.
    index: Vec<u32>,
}

const NONE: u32 = u32::MAX;
const WIDE: u32 = 1 << 31;

impl Font {
    /// The embedded font (inflated on the first call).
    pub fn get() -> &'static Font {
        static FONT: OnceLock<Font> = OnceLock::new();
        FONT.get_or_init(|| {
            let raw = miniz_oxide::inflate::decompress_to_vec_zlib(PACKED)
                .expect("the embedded font inflates");
            Font::parse(&raw).expect("the embedded font is well formed")
        })
    }

    fn parse(raw: &[u8]) -> Option<Font> {
        let count = |at: usize| -> Option<usize> {
            Some(u32::from_le_bytes(raw.get(at..at + 4)?.try_into().ok()?) as usize)
        };
        let (narrow, wide) = (count(0)?, count(4)?);
        let mut index = vec![NONE; 0x10000];
        let mut bitmaps = Vec::with_capacity(narrow * 16 + wide * 32);
        let mut at = 8;
        for (n, size, flag) in [(narrow, 16, 0), (wide, 32, WIDE)] {
            let codes = raw.get(at..at + 2 * n)?;
            let glyphs = raw.get(at + 2 * n..at + 2 * n + size * n)?;
            for (i, code) in codes.chunks_exact(2).enumerate() {
                let code = u16::from_le_bytes([code[0], code[1]]);
                index[usize::from(code)] = bitmaps.len() as u32 | flag;
                bitmaps.extend_from_slice(&glyphs[i * size..(i + 1) * size]);
            }
            at += n * (2 + size);
        }
        Some(Font { bitmaps, index })
    }

    /// `c`'s glyph; `None` when Unifont has none (beyond the first plane,
    /// unassigned, private use).
    pub fn glyph(&self, c: char) -> Option<Glyph<'_>> {
        let entry = *self.index.get(c as usize)?;
        if entry == NONE {
            return None;
        }
        let start = (entry & !WIDE) as usize;
        Some(if entry & WIDE != 0 {
            Glyph::Wide(&self.bitmaps[start..start + 32])
        } else {
            Glyph::Narrow(&self.bitmaps[start..start + 16])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_is_narrow_cjk_is_wide_and_the_rest_is_none() {
        let font = Font::get();
        assert!(
            matches!(font.glyph('A'), Some(Glyph::Narrow(rows)) if rows.iter().any(|&r| r != 0))
        );
        assert!(matches!(font.glyph('─'), Some(Glyph::Narrow(_))));
        assert!(matches!(font.glyph('漢'), Some(Glyph::Wide(_))));
        assert!(matches!(font.glyph('한'), Some(Glyph::Wide(_))));
        assert!(font.glyph('\u{1F600}').is_none());
        assert!(font.glyph('\u{E000}').is_none());
    }
}
