//! tmux's layout strings (`#{window_layout}`, `%layout-change`): the one
//! parser, pure. `select_layout` checks a string strictly before tmux
//! sees it (tmux 3.3a crashes on a malformed one); muting reads the panes
//! of a layout tmux wrote.
//!
//! From tmux 3.7 a window can hold floating panes, above the tiled layout
//! and not part of it. tmux (`layout_dump`) writes each as a leaf of the
//! tree's root, beside the tiled cells but outside their size arithmetic,
//! and again after the tree in `<leaf,leaf,…>` (z order). A floating
//! leaf's offsets are signed: a pane moved past the window's left or top
//! edge has a negative one.

use super::version::Version;
use crate::ids::PaneId;

/// Built-in layouts and the tmux version that introduced each
/// (`None`: every supported version).
const NAMES: &[(&str, Option<Version>)] = &[
    ("even-horizontal", None),
    ("even-vertical", None),
    ("main-horizontal", None),
    ("main-horizontal-mirrored", Some(Version::new(3, 5))),
    ("main-vertical", None),
    ("main-vertical-mirrored", Some(Version::new(3, 5))),
    ("tiled", None),
];

/// tmux's `WINDOW_MAXIMUM`, and the longest layout tmux itself writes.
const MAX_CELLS: u32 = 10_000;
const MAX_LEN: usize = 8192;
const MAX_DEPTH: usize = 64;

#[derive(Debug, PartialEq, Eq)]
pub enum Layout {
    Named {
        since: Option<Version>,
    },
    /// `panes`: the tiled panes; `floating`: the panes of the `<…>` part
    /// (not counted in `panes`).
    Custom {
        panes: usize,
        floating: usize,
    },
}

const HELP: &str = "Use even-horizontal, even-vertical, main-horizontal, main-vertical, tiled, or a window_layout value from list_windows.";

/// A known name, or a well-formed layout string with a correct checksum.
pub fn classify(text: &str) -> Result<Layout, String> {
    if let Some((_, since)) = NAMES.iter().find(|(n, _)| *n == text) {
        return Ok(Layout::Named { since: *since });
    }
    let looks_custom = text.len() > 5
        && text.as_bytes()[..4].iter().all(u8::is_ascii_hexdigit)
        && text.as_bytes()[4] == b',';
    if !looks_custom {
        return Err(format!("Unknown layout '{text}'. {HELP}"));
    }
    custom(text)
        .map(|(panes, floating)| Layout::Custom { panes, floating })
        .map_err(|why| format!("Invalid layout string '{text}': {why}. {HELP}"))
}

/// The panes a layout tmux wrote names (`#{window_layout}`, or the layout
/// of a `%layout-change`), each once, in the tree's order (floating panes
/// included). The checksum and the sizes are not checked, and the visible
/// layout and flags after the first space are not read; a string that does
/// not parse names no pane.
pub fn panes(layout: &[u8]) -> Vec<PaneId> {
    let layout = layout.split(|&b| b == b' ').next().unwrap_or_default();
    let Some(body) = layout.get(5..).filter(|_| layout.get(4) == Some(&b',')) else {
        return Vec::new();
    };
    let Ok(mut p) = TreeParser::new(body, Check::Leaves) else {
        return Vec::new();
    };
    if p.cell(0).is_err() || p.i != p.s.len() {
        return Vec::new();
    }
    let mut ids: Vec<PaneId> = Vec::new();
    for id in p.ids.into_iter().chain(p.floating) {
        if !ids.contains(&PaneId(id)) {
            ids.push(PaneId(id));
        }
    }
    ids
}

/// tmux's `layout_checksum` (layout-custom.c): a 16-bit rotate-and-add.
pub fn checksum(body: &[u8]) -> u16 {
    body.iter().fold(0u16, |csum, &b| {
        ((csum >> 1) | ((csum & 1) << 15)).wrapping_add(u16::from(b))
    })
}

/// Parses `cccc,<cell>` or `cccc,<cell><<leaf>,…>` strictly; returns the
/// number of tiled and of floating panes.
fn custom(text: &str) -> Result<(usize, usize), String> {
    if text.len() > MAX_LEN {
        return Err(format!("longer than {MAX_LEN} characters"));
    }
    if !text.is_ascii() {
        return Err("not ASCII".into());
    }
    let want = u16::from_str_radix(&text[..4], 16).map_err(|e| e.to_string())?;
    let body = &text.as_bytes()[5..];
    let got = checksum(body);
    if got != want {
        return Err(format!(
            "checksum {:04x} does not match the layout (which sums to {got:04x})",
            want
        ));
    }
    let mut p = TreeParser::new(body, Check::Strict)?;
    let cell = p.cell(0)?;
    if p.i != p.s.len() {
        return Err(format!("unexpected '{}' at {}", p.s[p.i] as char, p.i + 5));
    }
    if cell.floating {
        return Err("the layout has no tiled pane".into());
    }
    Ok((cell.panes, p.floating.len()))
}

struct LayoutCell {
    w: u32,
    h: u32,
    /// Tiled panes.
    panes: usize,
    /// A leaf that names a floating pane.
    floating: bool,
}

/// How closely a layout is checked: a string for `select-layout` must be
/// one tmux would accept; one tmux wrote is read for its panes only.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Strict,
    Leaves,
}

/// Reads the tree (`s`: the body up to any `<`); the floating part is
/// read first, by [`TreeParser::new`].
struct TreeParser<'a> {
    s: &'a [u8],
    i: usize,
    check: Check,
    /// The pane ids of the tree's leaves, in order.
    ids: Vec<u32>,
    /// The floating panes' ids, from the `<…>` part, in its order.
    floating: Vec<u32>,
}

impl<'a> TreeParser<'a> {
    /// Reads `body`'s floating part, if any (the tree never holds a '<'),
    /// and returns a parser for the tree before it.
    fn new(body: &'a [u8], check: Check) -> Result<Self, String> {
        let tiled_end = memchr::memchr(b'<', body).unwrap_or(body.len());
        let mut p = TreeParser {
            s: body,
            i: tiled_end,
            check,
            ids: Vec::new(),
            floating: Vec::new(),
        };
        if tiled_end < body.len() {
            loop {
                p.i += 1;
                let id = p.floating_leaf()?;
                p.floating.push(id);
                if p.peek() != Some(b',') {
                    break;
                }
            }
            p.expect(b'>')?;
            if p.i != body.len() {
                return Err(format!("unexpected '{}' at {}", p.s[p.i] as char, p.i + 5));
            }
        }
        p.s = &body[..tiled_end];
        p.i = 0;
        Ok(p)
    }

    /// The largest width, height or offset this check accepts.
    fn max(&self) -> u32 {
        match self.check {
            Check::Strict => MAX_CELLS,
            Check::Leaves => u32::MAX,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.i + 5))
        }
    }

    fn number(&mut self, what: &str, max: u32) -> Result<u32, String> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if digits.is_empty() {
            return Err(format!("expected {what} at {}", start + 5));
        }
        match digits.parse::<u32>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!("{what} {digits} is out of range (at most {max})")),
        }
    }

    /// `WxH,X,Y`, where X and Y may have a '-' (which only a floating
    /// pane's leaf may have); returns the size and whether it had one.
    fn geometry(&mut self) -> Result<(u32, u32, bool), String> {
        let max = self.max();
        let w = self.number("width", max)?;
        self.expect(b'x')?;
        let h = self.number("height", max)?;
        if w == 0 || h == 0 {
            return Err("a cell has zero size".into());
        }
        let mut signed = false;
        for what in ["x offset", "y offset"] {
            self.expect(b',')?;
            if self.peek() == Some(b'-') {
                self.i += 1;
                signed = true;
            }
            self.number(what, max)?;
        }
        Ok((w, h, signed))
    }

    /// A leaf of the floating part: `WxH,X,Y,ID` with signed offsets.
    fn floating_leaf(&mut self) -> Result<u32, String> {
        self.geometry()?;
        self.expect(b',')?;
        self.number("pane id", u32::MAX)
    }

    /// `WxH,X,Y,ID` (a pane) or `WxH,X,Y{…}` / `WxH,X,Y[…]` (a split).
    fn cell(&mut self, depth: usize) -> Result<LayoutCell, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let (w, h, signed) = self.geometry()?;
        let (close, side_by_side) = match self.peek() {
            Some(b',') => {
                self.i += 1;
                let id = self.number("pane id", u32::MAX)?;
                self.ids.push(id);
                let floating = self.floating.contains(&id);
                if signed && !floating {
                    return Err("a tiled cell has a negative offset".into());
                }
                return Ok(LayoutCell {
                    w,
                    h,
                    panes: usize::from(!floating),
                    floating,
                });
            }
            _ if signed => return Err("a split has a negative offset".into()),
            Some(b'{') => (b'}', true),
            Some(b'[') => (b']', false),
            _ => {
                return Err(format!(
                    "expected ',<pane id>', '{{' or '[' at {}",
                    self.i + 5
                ));
            }
        };
        self.i += 1;
        let mut children = vec![self.cell(depth + 1)?];
        while self.peek() == Some(b',') {
            self.i += 1;
            children.push(self.cell(depth + 1)?);
        }
        self.expect(close)?;
        // Floating panes' leaves sit in the root beside the tiled cells,
        // outside its arithmetic.
        let floating = children.iter().filter(|c| c.floating).count();
        children.retain(|c| !c.floating);
        if children.is_empty() || children.len() + floating < 2 {
            return Err("a split holds fewer than two cells".into());
        }
        // layout_check: children share the split's other dimension, and
        // their sizes plus one border each add up to its own.
        let (along, across, total) = if side_by_side {
            (
                children.iter().map(|c| c.w).collect::<Vec<_>>(),
                children.iter().all(|c| c.h == h),
                w,
            )
        } else {
            (
                children.iter().map(|c| c.h).collect::<Vec<_>>(),
                children.iter().all(|c| c.w == w),
                h,
            )
        };
        let sum: u64 = along.iter().map(|&n| u64::from(n) + 1).sum::<u64>() - 1;
        if self.check == Check::Strict && (!across || sum != u64::from(total)) {
            return Err(format!("cell sizes do not add up to {w}x{h}"));
        }
        Ok(LayoutCell {
            w,
            h,
            panes: children.iter().map(|c| c.panes).sum(),
            floating: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_sum(body: &str) -> String {
        format!("{:04x},{body}", checksum(body.as_bytes()))
    }

    #[test]
    fn names_are_exact() {
        assert_eq!(classify("tiled"), Ok(Layout::Named { since: None }));
        assert_eq!(
            classify("main-vertical-mirrored"),
            Ok(Layout::Named {
                since: Some(Version::new(3, 5))
            })
        );
        for bad in [
            "",
            "t",
            "tiledx",
            "no-such-layout",
            "even",
            "TILED",
            "ab",
            "abcd,",
        ] {
            assert!(classify(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_layout_names_its_panes() {
        assert_eq!(panes(b"b25d,80x24,0,0,2"), [PaneId(2)]);
        let split = b"21be,200x50,0,0{100x50,0,0,0,99x50,101,0[99x25,101,0,1,99x24,101,26,2]} *";
        assert_eq!(panes(split), [PaneId(0), PaneId(1), PaneId(2)]);
        assert!(panes(b"").is_empty() && panes(b"b25d,80x24").is_empty());
        assert!(panes(b"junk,\xff{").is_empty());
    }

    #[test]
    fn a_layout_names_its_floating_panes() {
        // tmux 3.8-dev: one tiled pane, two floating ones.
        let floating: &[u8] = b"71fc,80x24,0,0[80x24,0,0,0,40x6,4,2,1,18x4,71,21,2]<18x4,71,21,2,40x6,4,2,1> 71fc,80x24,0,0[80x24,0,0,0,40x6,4,2,1,18x4,71,21,2]<18x4,71,21,2,40x6,4,2,1> *";
        assert_eq!(panes(floating), [PaneId(0), PaneId(1), PaneId(2)]);
        // One moved past the window's left and top edges.
        let off: &[u8] = b"aaaa,80x24,0,0[80x24,0,0,0,20x6,-3,-1,7]<20x6,-3,-1,7>";
        assert_eq!(panes(off), [PaneId(0), PaneId(7)]);
        // Only a floating pane may sit past an edge; a broken floating
        // part names nothing.
        assert!(panes(b"aaaa,80x24,0,0[80x24,-1,0,0,20x6,-3,-1,7]<20x6,-3,-1,7>").is_empty());
        assert!(panes(b"aaaa,80x24,0,0[80x24,0,0,0,20x6,3,1,7]<20x6,3,1>").is_empty());
    }

    #[test]
    fn checksum_matches_tmux() {
        // Printed by tmux 3.3a (#{window_layout}).
        assert_eq!(checksum(b"200x50,0,0,0"), 0xac9d);
        let split = "21be,200x50,0,0{100x50,0,0,0,99x50,101,0[99x25,101,0,1,99x24,101,26,2]}";
        assert_eq!(
            classify(split),
            Ok(Layout::Custom {
                panes: 3,
                floating: 0
            })
        );
    }

    #[test]
    fn layout_strings_are_parsed_strictly() {
        let one = with_sum("200x50,0,0,0");
        let tiled = |panes| Ok(Layout::Custom { panes, floating: 0 });
        assert_eq!(classify(&one), tiled(1));
        let two = with_sum("200x50,0,0{100x50,0,0,1,99x50,101,0,2}");
        assert_eq!(classify(&two), tiled(2));
        let nested = with_sum("80x24,0,0[80x12,0,0,1,80x11,0,13{40x11,0,13,2,39x11,41,13,3}]");
        assert_eq!(classify(&nested), tiled(3));
        for body in [
            "200x50,0,0",                             // pane id missing
            "200x50,0,0{100x50,0,0,1}",               // a split of one
            "200x50,0,0{100x50,0,0,1,98x50,101,0,2}", // sizes do not add up
            "200x50,0,0{100x50,0,0,1,99x49,101,0,2}", // heights differ
            "0x50,0,0,1",
            "20000x50,0,0,1",
            "200x50,0,0,1x",
            "200x50,0,0{100x50,0,0,1,99x50,101,0,2",
            "200x50,0,-1,1",
            "",
        ] {
            let text = with_sum(body);
            assert!(classify(&text).is_err(), "{text}");
        }
        assert!(classify("0000,200x50,0,0,0").is_err(), "bad checksum");
    }

    #[test]
    fn floating_panes_follow_the_tiled_layout() {
        // As tmux writes them (#{window_layout}): the floating panes'
        // leaves are children of the root too, and again in `<…>`.
        let floating = |tiled, floating| {
            Ok(Layout::Custom {
                panes: tiled,
                floating,
            })
        };
        // 3.7c: two tiled panes side by side, two floating.
        let split = "3e10,80x24,0,0{40x24,0,0,0,39x24,41,0,1,40x6,4,2,2,20x6,70,20,3}<20x6,70,20,3,40x6,4,2,2>";
        assert_eq!(classify(split), floating(2, 2));
        // 3.8-dev: one tiled pane, two floating; then after `tiled`.
        let alone = "71fc,80x24,0,0[80x24,0,0,0,40x6,4,2,1,18x4,71,21,2]<18x4,71,21,2,40x6,4,2,1>";
        assert_eq!(classify(alone), floating(1, 2));
        let tiled = "ac7e,80x24,0,0[80x11,0,0,0,80x12,0,12,1,40x6,4,2,2,18x4,71,21,3]<18x4,71,21,3,40x6,4,2,2>";
        assert_eq!(classify(tiled), floating(2, 2));
        // A floating pane past the window's left and top edges.
        let off = with_sum("80x24,0,0[80x24,0,0,0,20x6,-3,-1,7]<20x6,-3,-1,7>");
        assert_eq!(classify(&off), floating(1, 1));
        for body in [
            "80x24,0,0,0<>",                                // no floating pane
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<40x6,4,2,1", // unclosed
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<40x6,4,2>",  // pane id missing
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<40x6,4,2,1>x",
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<40x6,4,2,1,>",
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<40x6,--4,2,1>",
            "80x24,0,0[80x24,0,0,0,40x6,4,2,1]<0x6,4,2,1>",
            "80x24,0,0[80x23,0,0,0,40x6,4,2,1]<40x6,4,2,1>", // tiled sizes still add up
            "80x24,0,0[80x24,-1,0,0,40x6,4,2,1]<40x6,4,2,1>", // only floating leaves are signed
            "80x24,0,0[40x6,4,2,1]<40x6,4,2,1>",             // no tiled pane
            "40x6,4,2,1<40x6,4,2,1>",
            "80x24,-1,0[80x24,0,0,0,40x6,4,2,1]<40x6,4,2,1>",
        ] {
            let text = with_sum(body);
            assert!(classify(&text).is_err(), "{text}");
        }
    }
}
