//! The control-mode parser: bytes from `tmux -C` in, [`Event`]s out.
//!
//! Sans-IO: no tokio, no logging, no allocation per byte. The caller feeds
//! whatever chunks it read ([`Parser::push`]); the parser keeps the half line
//! between calls, so events do not depend on where the stream was cut.
//!
//! Framing rules (see `protocol/tmux-control.md`):
//! - lines end in `\n` only; a `\r` before it is data;
//! - `%begin T N F` opens a block; only `%end`/`%error` with the same time,
//!   number and flags closes it, because command output is not escaped and
//!   can itself read `%end …`;
//! - inside a block every other line is output (before tmux 3.8 a
//!   `refresh-client -A` block also holds the `%pause`/`%continue` it
//!   caused, which the connection reads back with [`flow_notice`]; from 3.8
//!   every notification follows the block);
//! - `%exit` inside a block ends the block (an old tmux bug left blocks open),
//!   but only if nothing follows it: tmux prints `%exit` as the very last
//!   line, while a pane can show a line reading `%exit` that `capture-pane`
//!   then prints inside its block. So such a line is held back; the next line
//!   makes it block output, the end of the stream ([`Parser::finish`]) makes
//!   it [`Event::Exit`];
//! - outside a block a `%` line is a notification, anything else is stray;
//! - `%output` data is decoded to bytes: `\ooo` octal escapes, all other
//!   bytes raw (including invalid UTF-8, which is common mid-character).
//!
//! Bounds: a line longer than `max_line` is dropped up to its newline and
//! reported ([`Event::Overlong`], or `overflowed` on the reply it was in);
//! a block whose output passes `max_block` keeps its framing but drops the
//! rest of its lines and is marked `overflowed` (so a reply holds a prefix
//! of the output, never one with holes; an over-long line inside a block
//! likewise ends what the reply keeps).

use crate::ids::{PaneId, SessionId, WindowId};

/// The guard of a reply block: `%begin <time> <number> <flags>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub time: u64,
    pub number: u64,
    /// 1 for commands this client sent; 0 for the initial command and hooks.
    pub flags: u64,
}

/// One whole `%begin … %end|%error` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub guard: Guard,
    /// `false` when the block closed with `%error`.
    pub ok: bool,
    pub lines: Vec<Vec<u8>>,
    /// Some output was dropped because a line or the block passed its bound.
    pub overflowed: bool,
}

impl Reply {
    /// The output lines joined with `\n`, lossily decoded (for messages).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.lines.join(&b'\n')).into_owned()
    }
}

/// Everything the parser can say about the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `%begin` was read. Every `%output` byte before this point is already in
    /// the grid a command in this block sees; every byte after it is new.
    Begin(Guard),
    /// A whole reply block.
    Reply(Reply),
    /// `%output` or `%extended-output`, decoded to raw pane bytes.
    Output {
        pane: PaneId,
        data: Vec<u8>,
    },
    Pause(PaneId),
    Continue(PaneId),
    WindowAdd(WindowId),
    UnlinkedWindowAdd(WindowId),
    WindowClose(WindowId),
    UnlinkedWindowClose(WindowId),
    WindowRenamed {
        window: WindowId,
        name: Vec<u8>,
    },
    UnlinkedWindowRenamed {
        window: WindowId,
        name: Vec<u8>,
    },
    WindowPaneChanged {
        window: WindowId,
        pane: PaneId,
    },
    /// `%layout-change @W LAYOUT [VISIBLE FLAGS]`; the rest of the line is kept raw.
    LayoutChange {
        window: WindowId,
        layout: Vec<u8>,
    },
    SessionChanged {
        session: SessionId,
        name: Vec<u8>,
    },
    ClientSessionChanged {
        client: Vec<u8>,
        session: SessionId,
        name: Vec<u8>,
    },
    SessionRenamed {
        session: SessionId,
        name: Vec<u8>,
    },
    SessionsChanged,
    SessionWindowChanged {
        session: SessionId,
        window: WindowId,
    },
    PaneModeChanged(PaneId),
    ClientDetached(Vec<u8>),
    /// `%subscription-changed NAME …`; the rest of the line is kept raw.
    SubscriptionChanged {
        name: Vec<u8>,
        rest: Vec<u8>,
    },
    PasteBufferChanged(Vec<u8>),
    PasteBufferDeleted(Vec<u8>),
    Message(Vec<u8>),
    ConfigError(Vec<u8>),
    /// `%exit [reason]`: the client is going away.
    Exit(Option<Vec<u8>>),
    /// A non-`%` line outside any block (async errors of `load-buffer`,
    /// `run-shell` output on tmux 3.5+).
    Stray(Vec<u8>),
    /// A `%` line this parser does not model, or a known one whose fields do
    /// not parse. Never an error: tmux keeps adding notifications.
    Unknown(Vec<u8>),
    /// A line outside any block longer than the bound; `len` bytes were dropped.
    Overlong {
        len: usize,
    },
}

struct Block {
    guard: Guard,
    lines: Vec<Vec<u8>>,
    bytes: usize,
    overflowed: bool,
}

/// The control-mode stream parser. See the module docs for the rules.
pub struct Parser {
    max_line: usize,
    max_block: usize,
    /// The current line so far (without its `\n`).
    partial: Vec<u8>,
    /// Set while dropping an over-long line; counts the bytes dropped.
    discarding: Option<usize>,
    block: Option<Block>,
    /// A `%exit…` line read inside a block, not yet known to be the end.
    pending_exit: Option<Vec<u8>>,
}

impl Parser {
    /// `max_line` bounds one line, `max_block` the output of one reply block.
    pub fn new(max_line: usize, max_block: usize) -> Self {
        Parser {
            max_line: max_line.max(64),
            max_block,
            partial: Vec::new(),
            discarding: None,
            block: None,
            pending_exit: None,
        }
    }

    /// Feeds the next chunk of the stream; complete lines become events in `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Event>) {
        while !bytes.is_empty() {
            let (chunk, complete) = match memchr::memchr(b'\n', bytes) {
                Some(i) => (&bytes[..i], Some(i + 1)),
                None => (bytes, None),
            };
            if let Some(dropped) = self.discarding.as_mut() {
                *dropped += chunk.len();
            } else if self.partial.len() + chunk.len() > self.max_line {
                self.discarding = Some(self.partial.len() + chunk.len());
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(chunk);
            }
            match complete {
                Some(n) => {
                    bytes = &bytes[n..];
                    if let Some(len) = self.discarding.take() {
                        self.overlong(len, out);
                    } else {
                        let line = std::mem::take(&mut self.partial);
                        self.line(line, out);
                    }
                }
                None => break,
            }
        }
    }

    /// The stream ended. A half line is dropped (tmux always ends lines with
    /// `\n`); an open block is abandoned, which the caller sees as no reply.
    /// A `%exit` read inside that block was the real one: it is emitted now.
    /// Returns `true` when nothing was dropped or abandoned.
    pub fn finish(&mut self, out: &mut Vec<Event>) -> bool {
        let clean = self.partial.is_empty() && self.discarding.is_none() && self.block.is_none();
        if let Some(line) = self.pending_exit.take() {
            out.push(exit(&line));
        }
        self.partial.clear();
        self.discarding = None;
        self.block = None;
        clean
    }

    fn overlong(&mut self, len: usize, out: &mut Vec<Event>) {
        self.settle_pending_exit();
        match self.block.as_mut() {
            Some(block) => block.overflowed = true,
            None => out.push(Event::Overlong { len }),
        }
    }

    /// Another line followed a `%exit` inside a block: it was block output.
    fn settle_pending_exit(&mut self) {
        if let Some(line) = self.pending_exit.take() {
            self.block_output(line);
        }
    }

    /// Keeps an output line of the open block, unless the block is past its
    /// bound (then it and every later line are dropped).
    fn block_output(&mut self, line: Vec<u8>) {
        let Some(block) = self.block.as_mut() else {
            return;
        };
        if block.overflowed || block.bytes + line.len() > self.max_block {
            block.overflowed = true;
        } else {
            block.bytes += line.len() + 1;
            block.lines.push(line);
        }
    }

    fn line(&mut self, line: Vec<u8>, out: &mut Vec<Event>) {
        self.settle_pending_exit();
        if let Some(block) = self.block.as_ref() {
            if let Some((word, guard)) = parse_guard(&line)
                && guard == block.guard
                && (word == b"%end" || word == b"%error")
            {
                let block = self.block.take().expect("checked above");
                out.push(Event::Reply(Reply {
                    guard: block.guard,
                    ok: word == b"%end",
                    lines: block.lines,
                    overflowed: block.overflowed,
                }));
                return;
            }
            if line == b"%exit" || line.starts_with(b"%exit ") {
                self.pending_exit = Some(line);
                return;
            }
            self.block_output(line);
            return;
        }
        if line.first() != Some(&b'%') {
            out.push(Event::Stray(line));
            return;
        }
        if let Some((word, guard)) = parse_guard(&line)
            && word == b"%begin"
        {
            self.block = Some(Block {
                guard,
                lines: Vec::new(),
                bytes: 0,
                overflowed: false,
            });
            out.push(Event::Begin(guard));
            return;
        }
        out.push(notification(&line).unwrap_or(Event::Unknown(line)));
    }
}

/// `%begin|%end|%error <time> <number> <flags>`, exactly three decimal fields.
fn parse_guard(line: &[u8]) -> Option<(&[u8], Guard)> {
    let mut words = line.split(|&b| b == b' ');
    let word = words.next()?;
    if !matches!(word, b"%begin" | b"%end" | b"%error") {
        return None;
    }
    let time = decimal(words.next()?)?;
    let number = decimal(words.next()?)?;
    let flags = decimal(words.next()?)?;
    if words.next().is_some() {
        return None;
    }
    Some((
        word,
        Guard {
            time,
            number,
            flags,
        },
    ))
}

fn decimal(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 19 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        bytes
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')),
    )
}

fn exit(line: &[u8]) -> Event {
    Event::Exit(line.strip_prefix(b"%exit ").map(<[u8]>::to_vec))
}

/// Splits off the first space-separated word; the rest keeps its spaces.
fn word(bytes: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b' ', bytes) {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &[]),
    }
}

/// A notification line outside a block; `None` when the fields do not parse
/// or the kind is not one this parser models.
fn notification(line: &[u8]) -> Option<Event> {
    let (kind, rest) = word(line);
    if kind == b"%exit" {
        return Some(exit(line));
    }
    pane_notification(kind, rest)
        .or_else(|| window_notification(kind, rest))
        .or_else(|| session_notification(kind, rest))
        .or_else(|| other_notification(kind, rest))
}

/// A `%pause %N` or `%continue %N` line. `refresh-client -A` writes these
/// while it runs, so they arrive inside its reply block, as reply lines.
pub fn flow_notice(line: &[u8]) -> Option<Event> {
    let (kind, rest) = word(line);
    match kind {
        b"%pause" | b"%continue" => pane_notification(kind, rest),
        _ => None,
    }
}

/// Notifications about one pane: its output, flow control and mode.
fn pane_notification(kind: &[u8], rest: &[u8]) -> Option<Event> {
    let event = match kind {
        b"%output" => {
            let (pane, data) = word(rest);
            Event::Output {
                pane: PaneId::parse(pane)?,
                data: unescape(data)?,
            }
        }
        b"%extended-output" => {
            let (pane, rest) = word(rest);
            let colon = memchr::memmem::find(rest, b" : ")?;
            Event::Output {
                pane: PaneId::parse(pane)?,
                data: unescape(&rest[colon + 3..])?,
            }
        }
        b"%pause" => Event::Pause(PaneId::parse(rest)?),
        b"%continue" => Event::Continue(PaneId::parse(rest)?),
        b"%pane-mode-changed" => Event::PaneModeChanged(PaneId::parse(rest)?),
        _ => return None,
    };
    Some(event)
}

/// Notifications about windows: added, closed, renamed, relaid out.
fn window_notification(kind: &[u8], rest: &[u8]) -> Option<Event> {
    let event = match kind {
        b"%window-add" => Event::WindowAdd(WindowId::parse(rest)?),
        b"%unlinked-window-add" => Event::UnlinkedWindowAdd(WindowId::parse(rest)?),
        b"%window-close" => Event::WindowClose(WindowId::parse(rest)?),
        b"%unlinked-window-close" => Event::UnlinkedWindowClose(WindowId::parse(rest)?),
        b"%window-renamed" | b"%unlinked-window-renamed" => {
            let (window, name) = word(rest);
            let (window, name) = (WindowId::parse(window)?, name.to_vec());
            if kind == b"%window-renamed" {
                Event::WindowRenamed { window, name }
            } else {
                Event::UnlinkedWindowRenamed { window, name }
            }
        }
        b"%window-pane-changed" => {
            let (window, pane) = word(rest);
            Event::WindowPaneChanged {
                window: WindowId::parse(window)?,
                pane: PaneId::parse(pane)?,
            }
        }
        b"%layout-change" => {
            let (window, layout) = word(rest);
            Event::LayoutChange {
                window: WindowId::parse(window)?,
                layout: layout.to_vec(),
            }
        }
        _ => return None,
    };
    Some(event)
}

/// Notifications about sessions and which session a client shows.
fn session_notification(kind: &[u8], rest: &[u8]) -> Option<Event> {
    let event = match kind {
        b"%session-changed" | b"%session-renamed" => {
            let (session, name) = word(rest);
            let (session, name) = (SessionId::parse(session)?, name.to_vec());
            if kind == b"%session-changed" {
                Event::SessionChanged { session, name }
            } else {
                Event::SessionRenamed { session, name }
            }
        }
        b"%client-session-changed" => {
            let (client, rest) = word(rest);
            let (session, name) = word(rest);
            Event::ClientSessionChanged {
                client: client.to_vec(),
                session: SessionId::parse(session)?,
                name: name.to_vec(),
            }
        }
        b"%sessions-changed" if rest.is_empty() => Event::SessionsChanged,
        b"%session-window-changed" => {
            let (session, window) = word(rest);
            Event::SessionWindowChanged {
                session: SessionId::parse(session)?,
                window: WindowId::parse(window)?,
            }
        }
        _ => return None,
    };
    Some(event)
}

/// Everything else: clients, subscriptions, paste buffers, messages.
fn other_notification(kind: &[u8], rest: &[u8]) -> Option<Event> {
    let event = match kind {
        b"%client-detached" => Event::ClientDetached(rest.to_vec()),
        b"%subscription-changed" => {
            let (name, rest) = word(rest);
            Event::SubscriptionChanged {
                name: name.to_vec(),
                rest: rest.to_vec(),
            }
        }
        b"%paste-buffer-changed" => Event::PasteBufferChanged(rest.to_vec()),
        b"%paste-buffer-deleted" => Event::PasteBufferDeleted(rest.to_vec()),
        b"%message" => Event::Message(rest.to_vec()),
        b"%config-error" => Event::ConfigError(rest.to_vec()),
        _ => return None,
    };
    Some(event)
}

/// Decodes `%output` data: `\` and three octal digits is one byte, every
/// other byte is itself. Anything else after `\` is a protocol error.
pub fn unescape(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(i) = memchr::memchr(b'\\', rest) {
        out.extend_from_slice(&rest[..i]);
        let digits = rest.get(i + 1..i + 4)?;
        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) || digits[0] > b'3' {
            return None;
        }
        out.push((digits[0] - b'0') << 6 | (digits[1] - b'0') << 3 | (digits[2] - b'0'));
        rest = &rest[i + 4..];
    }
    out.extend_from_slice(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &[u8]) -> Vec<Event> {
        let mut parser = Parser::new(1 << 20, 1 << 20);
        let mut out = Vec::new();
        parser.push(input, &mut out);
        out
    }

    #[test]
    fn block_closes_only_on_matching_guard() {
        let events = parse(b"%begin 1 2 1\n%end 1 3 1\n%end 9 2 1\nx\n%end 1 2 1\n");
        assert_eq!(events.len(), 2);
        let Event::Reply(reply) = &events[1] else {
            panic!("{events:?}")
        };
        assert!(reply.ok);
        assert_eq!(
            reply.lines,
            vec![
                b"%end 1 3 1".to_vec(),
                b"%end 9 2 1".to_vec(),
                b"x".to_vec()
            ]
        );
    }

    #[test]
    fn output_is_decoded_to_bytes() {
        let events = parse(b"%output %3 a\\134b\\015\\012\xc3\n");
        assert_eq!(
            events,
            vec![Event::Output {
                pane: PaneId(3),
                data: b"a\\b\r\n\xc3".to_vec()
            }]
        );
        assert_eq!(
            parse(b"%output %3 bad\\9\n"),
            vec![Event::Unknown(b"%output %3 bad\\9".to_vec())]
        );
    }

    #[test]
    fn extended_output_skips_to_colon() {
        let events = parse(b"%extended-output %1 0 x y : hi \\040\n");
        assert_eq!(
            events,
            vec![Event::Output {
                pane: PaneId(1),
                data: b"hi  ".to_vec()
            }]
        );
    }

    #[test]
    fn overlong_lines_are_dropped_not_fatal() {
        let mut parser = Parser::new(64, 1 << 20);
        let mut out = Vec::new();
        parser.push(&[b'x'; 100], &mut out);
        parser.push(b"\n%sessions-changed\n", &mut out);
        assert_eq!(
            out,
            vec![Event::Overlong { len: 100 }, Event::SessionsChanged]
        );
    }

    #[test]
    fn exit_inside_block_ends_it_at_end_of_stream() {
        let mut parser = Parser::new(1 << 20, 1 << 20);
        let mut out = Vec::new();
        parser.push(b"%begin 1 2 1\nout\n%exit too far behind\n", &mut out);
        assert_eq!(
            out,
            vec![Event::Begin(Guard {
                time: 1,
                number: 2,
                flags: 1
            })]
        );
        assert!(!parser.finish(&mut out), "the block was abandoned");
        assert_eq!(out[1..], [Event::Exit(Some(b"too far behind".to_vec()))]);
    }

    /// Regression: a pane showing a line `%exit` used to end the
    /// `capture-pane` block early, turning the real `%end` into `Unknown`
    /// and the rest of the capture into stray lines (fixture 07).
    #[test]
    fn exit_line_inside_block_followed_by_more_is_output() {
        let events =
            parse(b"%begin 1 2 1\n%exit\n%exit\nx\n%exit\n%end 1 2 1\n%sessions-changed\n");
        let Event::Reply(reply) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(reply.lines, [&b"%exit"[..], b"%exit", b"x", b"%exit"]);
        assert_eq!(events[2..], [Event::SessionsChanged]);
    }

    /// Regression: a line past `max_block` was dropped but shorter lines
    /// after it were kept, leaving a hole in the middle of the reply.
    #[test]
    fn block_past_its_bound_keeps_a_prefix() {
        let mut parser = Parser::new(64, 8);
        let mut out = Vec::new();
        parser.push(b"%begin 1 2 1\nabc\nlong-line\nx\n%end 1 2 1\n", &mut out);
        let Event::Reply(reply) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(
            (reply.lines.clone(), reply.overflowed),
            (vec![b"abc".to_vec()], true)
        );
    }
}
