#!/usr/bin/env python3
"""Packs GNU Unifont's glyphs into assets/fonts/unifont.bin.z, the font
that src/picture/font.rs embeds: every glyph of Unicode's first plane,
8x16 (narrow) or 16x16 (wide) pixels, one bit a pixel, rows top down,
most significant bit leftmost.

    apt-get install -y unifont
    scripts/unifont.py [/usr/share/unifont/unifont.hex]

Layout before zlib: u32 LE count of narrow glyphs N, u32 LE count of wide
glyphs W, N u16 LE code points, the N 16-byte bitmaps, W u16 LE code
points, the W 32-byte bitmaps; code points ascending. Unifont is under the
SIL OFL 1.1 (and GPL-2+ with the font embedding exception); see
assets/fonts/LICENSE-unifont.txt.
"""
import sys
import zlib

source = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unifont/unifont.hex"
narrow, wide = [], []
for line in open(source):
    code, bits = line.strip().split(":")
    code = int(code, 16)
    if code > 0xFFFF:
        continue
    (narrow if len(bits) == 32 else wide).append((code, bytes.fromhex(bits)))
narrow.sort()
wide.sort()
out = len(narrow).to_bytes(4, "little") + len(wide).to_bytes(4, "little")
for glyphs in (narrow, wide):
    out += b"".join(c.to_bytes(2, "little") for c, _ in glyphs)
    out += b"".join(b for _, b in glyphs)
packed = zlib.compress(out, 9)
with open("assets/fonts/unifont.bin.z", "wb") as f:
    f.write(packed)
print(f"{len(narrow)} narrow, {len(wide)} wide glyphs; {len(out)} bytes, {len(packed)} packed")
