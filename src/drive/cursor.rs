//! The cursor a read hands back: where the next read of a pane starts
//! (`capture_since`, `run_command`), in tmux's own terms (an anchored line,
//! see [`crate::tmux::history`]) and, for a command's output not yet paged,
//! as a span of this process's recording.

use crate::drive::{ToolError, ToolResult};
use crate::tmux::PaneId;
use crate::tmux::history::Anchor;

const CURSOR_PREFIX: &str = "tmux-mcp-cursor-v3";
/// The format before anchors: still parsed, read as a cursor whose lines
/// tmux may no longer prove (the screen, with lines_missed).
const CURSOR_PREFIX_V2: &str = "tmux-mcp-cursor-v2";

/// Where a previous call stopped, in tmux's own terms so that any later
/// server process can read on: the pane, the tmux server (its pid), the
/// pane's process (a respawn keeps the pane id, not the process) and the
/// anchored line (see [`crate::tmux::history`]). A command's output not
/// yet paged is also named by its span in this process's recording.
pub struct Cursor {
    pub pane: PaneId,
    pub server: u32,
    pub pid: u32,
    pub anchor: Anchor,
    pub output: Option<OutputSpan>,
}

/// A command's output in a recording: `epoch` names the recording (unique
/// across server processes), `offset..stop` what is left to page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputSpan {
    pub epoch: u64,
    pub offset: u64,
    pub stop: u64,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let a = &self.anchor;
        let mut text = format!(
            "{CURSOR_PREFIX}.{}.{}.{}.{}.{}.{:016x}",
            self.pane, self.server, self.pid, a.row, a.len, a.hash
        );
        if let Some(o) = self.output {
            text.push_str(&format!(".{}.{}.{}", o.epoch, o.offset, o.stop));
        }
        text
    }

    pub fn decode(text: &str) -> ToolResult<Cursor> {
        let bad = |why: &str| ToolError::invalid(format!("invalid capture_since cursor: {why}"));
        let mut parts = text.split('.');
        let v2 = match parts.next() {
            Some(CURSOR_PREFIX) => false,
            Some(CURSOR_PREFIX_V2) => true,
            _ => return Err(bad("unsupported cursor format")),
        };
        let pane = parts
            .next()
            .and_then(|p| PaneId::parse(p.as_bytes()))
            .ok_or_else(|| bad("missing or invalid pane"))?;
        let fields: Vec<&str> = parts.collect();
        let number = |i: usize, what: &str| {
            fields
                .get(i)
                .and_then(|p| p.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("missing or invalid {what}")))
        };
        if v2 {
            // epoch.pid.offset[.stop]: no anchor, and server 0 is no server.
            if !(3..=4).contains(&fields.len()) {
                return Err(bad("unsupported cursor format"));
            }
            for (i, what) in ["epoch", "process", "offset", "stop"].iter().enumerate() {
                if i < fields.len() {
                    number(i, what)?;
                }
            }
            return Ok(Cursor {
                pane,
                server: 0,
                pid: 0,
                anchor: Anchor::new(0, ""),
                output: None,
            });
        }
        if fields.len() != 5 && fields.len() != 8 {
            return Err(bad("unsupported cursor format"));
        }
        let small = |i: usize, what: &str| {
            u32::try_from(number(i, what)?).map_err(|_| bad(&format!("invalid {what}")))
        };
        let hash = u64::from_str_radix(fields[4], 16).map_err(|_| bad("invalid anchor"))?;
        let output = if fields.len() == 8 {
            Some(OutputSpan {
                epoch: number(5, "epoch")?,
                offset: number(6, "offset")?,
                stop: number(7, "stop")?,
            })
        } else {
            None
        };
        Ok(Cursor {
            pane,
            server: small(0, "server")?,
            pid: small(1, "process")?,
            anchor: Anchor {
                row: number(2, "row")?,
                len: small(3, "anchor")?,
                hash,
            },
            output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        let span = OutputSpan {
            epoch: 7,
            offset: 99,
            stop: 120,
        };
        for output in [None, Some(span)] {
            let c = Cursor {
                pane: PaneId(3),
                server: 4242,
                pid: 77,
                anchor: Anchor::new(12, "$ "),
                output,
            };
            let back = Cursor::decode(&c.encode()).unwrap();
            let got = (back.pane, back.server, back.pid, back.anchor, back.output);
            assert_eq!(got, (PaneId(3), 4242, 77, c.anchor, output));
        }
        // A cursor of the previous format parses, as one no server proves.
        let old = Cursor::decode("tmux-mcp-cursor-v2.%3.7.1.9").unwrap();
        assert_eq!((old.pane, old.server, old.output), (PaneId(3), 0, None));
        for bad in [
            "",
            "x",
            "tmux-mcp-cursor-v1.%3.7.9",
            "tmux-mcp-cursor-v2.%3.7.9",
            "tmux-mcp-cursor-v2.%3.7.x.9",
            "tmux-mcp-cursor-v3.3.1.1.1.1.ff",
            "tmux-mcp-cursor-v3.%3.1.1.1.1",
            "tmux-mcp-cursor-v3.%3.1.1.1.1.zz",
            "tmux-mcp-cursor-v3.%3.1.1.1.1.ff.1",
            "tmux-mcp-cursor-v3.%3.1.1.1.1.ff.1.2.x",
            "tmux-mcp-cursor-v3.%3.1.99999999999.1.1.ff",
        ] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
