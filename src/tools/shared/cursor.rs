//! The cursor a read hands back: where the next read of a pane's
//! recorded output starts (`capture_since`, `run_command`).

use crate::tmux::PaneId;
use crate::tools::{ToolError, ToolResult};

const CURSOR_PREFIX: &str = "tmux-mcp-cursor-v2";

/// Where a previous call stopped: the pane, its recording, the pane's
/// process (a respawn keeps the pane id, not the process), a ring offset,
/// and (for a command's output) the offset where reading stops.
pub struct Cursor {
    pub pane: PaneId,
    pub epoch: u64,
    pub pid: u32,
    pub offset: u64,
    pub stop: Option<u64>,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let mut text = format!(
            "{CURSOR_PREFIX}.{}.{}.{}.{}",
            self.pane, self.epoch, self.pid, self.offset
        );
        if let Some(stop) = self.stop {
            text.push_str(&format!(".{stop}"));
        }
        text
    }

    pub fn decode(text: &str) -> ToolResult<Cursor> {
        let bad = |why: &str| ToolError::invalid(format!("invalid capture_since cursor: {why}"));
        let mut parts = text.split('.');
        if parts.next() != Some(CURSOR_PREFIX) {
            return Err(bad("unsupported cursor format"));
        }
        let pane = parts
            .next()
            .and_then(|p| PaneId::parse(p.as_bytes()))
            .ok_or_else(|| bad("missing or invalid pane"))?;
        let mut number = |what: &str| {
            parts
                .next()
                .and_then(|p| p.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("missing or invalid {what}")))
        };
        let epoch = number("epoch")?;
        let pid = u32::try_from(number("process")?).map_err(|_| bad("invalid process"))?;
        let offset = number("offset")?;
        let stop = match parts.next() {
            None => None,
            Some(p) => Some(p.parse().map_err(|_| bad("invalid stop"))?),
        };
        if parts.next().is_some() {
            return Err(bad("unsupported cursor format"));
        }
        Ok(Cursor {
            pane,
            epoch,
            pid,
            offset,
            stop,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        for stop in [None, Some(120)] {
            let c = Cursor {
                pane: PaneId(3),
                epoch: 7,
                pid: 4242,
                offset: 99,
                stop,
            };
            let back = Cursor::decode(&c.encode()).unwrap();
            let got = (back.pane, back.epoch, back.pid, back.offset, back.stop);
            assert_eq!(got, (PaneId(3), 7, 4242, 99, stop));
        }
        for bad in [
            "",
            "x",
            "tmux-mcp-cursor-v1.%3.7.9",
            "tmux-mcp-cursor-v2.%3.7.9",
            "tmux-mcp-cursor-v2.3.7.1.9",
            "tmux-mcp-cursor-v2.%3.7.x.9",
            "tmux-mcp-cursor-v2.%3.7.1.9.x",
            "tmux-mcp-cursor-v2.%3.7.1.9.1.2",
        ] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
