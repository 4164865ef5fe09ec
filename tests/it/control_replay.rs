//! Replays every recorded control-mode stream in `fixtures/tmux/*.cc`
//! through the parser: in one chunk, at every two-chunk split point and byte
//! by byte. The events must be identical each time, and equal to the golden
//! dump `fixtures/tmux/<name>.events`.
//!
//! `BLESS=1 cargo test --test it control_replay` rewrites the golden files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tmux_mcp::tmux::control::{Event, Parser};

const MAX_LINE: usize = 1 << 20;
const MAX_BLOCK: usize = 1 << 24;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tmux");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cc"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 7,
        "expected the recorded fixtures in {}",
        dir.display()
    );
    files
}

/// Parses `chunks` in order, then finishes the stream.
fn parse_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    max_line: usize,
    max_block: usize,
) -> (Vec<Event>, bool) {
    let mut parser = Parser::new(max_line, max_block);
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut out);
    }
    let clean = parser.finish(&mut out);
    (out, clean)
}

/// Asserts chunking invariance for one stream and bounds; returns the events.
fn check_chunking(
    name: &str,
    data: &[u8],
    max_line: usize,
    max_block: usize,
) -> (Vec<Event>, bool) {
    let whole = parse_chunks([data], max_line, max_block);
    for i in 0..=data.len() {
        let split = parse_chunks([&data[..i], &data[i..]], max_line, max_block);
        assert!(
            split == whole,
            "{name}: events differ when split at byte {i}"
        );
    }
    let bytewise = parse_chunks(data.chunks(1), max_line, max_block);
    assert!(
        bytewise == whole,
        "{name}: events differ when fed byte by byte"
    );
    whole
}

#[test]
fn fixtures_replay_identically_at_every_split_and_match_goldens() {
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let mut mismatched = Vec::new();
    for path in fixtures() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let (events, clean) = check_chunking(&name, &data, MAX_LINE, MAX_BLOCK);
        let rendered = render(&events, clean);
        let golden = path.with_extension("events");
        if bless {
            std::fs::write(&golden, &rendered).unwrap();
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == rendered => {}
            Ok(want) => {
                eprintln!(
                    "--- {} (want)\n{want}--- {name} (got)\n{rendered}",
                    golden.display()
                );
                mismatched.push(name);
            }
            Err(e) => {
                eprintln!(
                    "{}: {e}; run BLESS=1 cargo test --test it control_replay",
                    golden.display()
                );
                mismatched.push(name);
            }
        }
    }
    assert!(mismatched.is_empty(), "golden mismatch: {mismatched:?}");
}

/// The same streams with bounds so tight that lines and blocks overflow:
/// the bounded paths must not depend on chunking either, and never panic.
#[test]
fn fixtures_replay_identically_under_tight_bounds() {
    for path in fixtures() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        for (max_line, max_block) in [(64, 0), (80, 40), (200, 1000)] {
            let (events, _) = check_chunking(&name, &data, max_line, max_block);
            assert!(!events.is_empty(), "{name}");
        }
    }
}

/// The parser's reading of the fixtures, checked by hand against tmux's
/// documented behaviour (the goldens pin the rest).
#[test]
fn fixtures_show_the_quirks_we_rely_on() {
    let events = |name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/tmux")
            .join(format!("{name}.cc"));
        parse_chunks([&std::fs::read(path).unwrap()[..]], MAX_LINE, MAX_BLOCK)
    };
    // 03: the stray load-buffer error line after its %end.
    let (e03, clean) = events("03-errors-and-framing");
    assert!(clean);
    assert!(e03.contains(&Event::Stray(
        b"/nonexistent/file: No such file or directory".to_vec()
    )));
    // 04: %pause/%continue inside refresh-client -A blocks stay block output.
    let (e04, _) = events("04-notifications-and-flow");
    let replies: Vec<_> = e04
        .iter()
        .filter_map(|e| {
            if let Event::Reply(r) = e {
                Some(r)
            } else {
                None
            }
        })
        .collect();
    assert!(replies.iter().any(|r| r.lines == [b"%pause %0".to_vec()]));
    assert!(
        replies
            .iter()
            .any(|r| r.lines == [b"%continue %0".to_vec()])
    );
    // 06: the decoded output of pane %0, joined, is valid UTF-8 though many
    // single lines are not.
    let (e06, _) = events("06-output-flood-utf8");
    let mut joined = Vec::new();
    let mut split_lines = 0;
    for event in &e06 {
        if let Event::Output { data, .. } = event {
            split_lines += usize::from(std::str::from_utf8(data).is_err());
            joined.extend_from_slice(data);
        }
    }
    assert!(
        split_lines > 0,
        "fixture 06 should split characters across lines"
    );
    let text = std::str::from_utf8(&joined).expect("joined output is UTF-8");
    // 250 printed by the loop, one in the echo of the typed command.
    assert_eq!(text.matches("é€😀é€😀").count(), 251);
    assert!(text.contains("\u{1b}[31mcol\u{1b}[0m"));
    // 07: the capture reply keeps lines reading `%end 1 2 1`, `%exit` and
    // `%begin 1 2 1`; the stream still ends with a real Exit.
    let (e07, clean) = events("07-attach-capture-error-exit");
    assert!(clean);
    let capture = e07
        .iter()
        .find_map(|e| match e {
            Event::Reply(r) if r.lines.iter().any(|l| l == b"%exit") => Some(r),
            _ => None,
        })
        .expect("capture reply");
    assert!(capture.ok);
    let wanted: [&[u8]; 3] = [b"%end 1 2 1", b"%exit", b"%begin 1 2 1"];
    assert_eq!(capture.lines[1..4], wanted);
    assert!(
        e07.iter().any(
            |e| matches!(e, Event::Reply(r) if !r.ok && r.text() == "can't find window: @999")
        )
    );
    assert_eq!(e07.last(), Some(&Event::Exit(None)));
}

/// A stable, readable dump: one event per line, byte strings quoted with
/// valid UTF-8 shown as text and everything else escaped.
fn render(events: &[Event], clean: bool) -> String {
    let mut s = String::new();
    for event in events {
        let line = match event {
            Event::Begin(g) => format!("Begin {} {} {}", g.time, g.number, g.flags),
            Event::Reply(r) => {
                let g = r.guard;
                let mut head = format!(
                    "Reply {} {} {} {}{} lines={}",
                    g.time,
                    g.number,
                    g.flags,
                    if r.ok { "end" } else { "error" },
                    if r.overflowed { " overflowed" } else { "" },
                    r.lines.len()
                );
                for l in &r.lines {
                    write!(head, "\n  | {}", quoted(l)).unwrap();
                }
                head
            }
            Event::Output { pane, data } => format!("Output {pane} {}", quoted(data)),
            Event::Pause(p) => format!("Pause {p}"),
            Event::Continue(p) => format!("Continue {p}"),
            Event::WindowAdd(w) => format!("WindowAdd {w}"),
            Event::UnlinkedWindowAdd(w) => format!("UnlinkedWindowAdd {w}"),
            Event::WindowClose(w) => format!("WindowClose {w}"),
            Event::UnlinkedWindowClose(w) => format!("UnlinkedWindowClose {w}"),
            Event::WindowRenamed { window, name } => {
                format!("WindowRenamed {window} {}", quoted(name))
            }
            Event::UnlinkedWindowRenamed { window, name } => {
                format!("UnlinkedWindowRenamed {window} {}", quoted(name))
            }
            Event::WindowPaneChanged { window, pane } => {
                format!("WindowPaneChanged {window} {pane}")
            }
            Event::LayoutChange { window, layout } => {
                format!("LayoutChange {window} {}", quoted(layout))
            }
            Event::SessionChanged { session, name } => {
                format!("SessionChanged {session} {}", quoted(name))
            }
            Event::ClientSessionChanged {
                client,
                session,
                name,
            } => {
                format!(
                    "ClientSessionChanged {} {session} {}",
                    quoted(client),
                    quoted(name)
                )
            }
            Event::SessionRenamed { session, name } => {
                format!("SessionRenamed {session} {}", quoted(name))
            }
            Event::SessionsChanged => "SessionsChanged".to_owned(),
            Event::SessionWindowChanged { session, window } => {
                format!("SessionWindowChanged {session} {window}")
            }
            Event::PaneModeChanged(p) => format!("PaneModeChanged {p}"),
            Event::ClientDetached(c) => format!("ClientDetached {}", quoted(c)),
            Event::SubscriptionChanged { name, rest } => {
                format!("SubscriptionChanged {} {}", quoted(name), quoted(rest))
            }
            Event::PasteBufferChanged(b) => format!("PasteBufferChanged {}", quoted(b)),
            Event::PasteBufferDeleted(b) => format!("PasteBufferDeleted {}", quoted(b)),
            Event::Message(m) => format!("Message {}", quoted(m)),
            Event::ConfigError(m) => format!("ConfigError {}", quoted(m)),
            Event::Exit(None) => "Exit".to_owned(),
            Event::Exit(Some(reason)) => format!("Exit {}", quoted(reason)),
            Event::Stray(l) => format!("Stray {}", quoted(l)),
            Event::Unknown(l) => format!("Unknown {}", quoted(l)),
            Event::Overlong { len } => format!("Overlong {len}"),
        };
        s.push_str(&line);
        s.push('\n');
    }
    writeln!(s, "-- finish clean={clean}").unwrap();
    s
}

/// `"…"` with `\\`, `\"`, `\n`, `\r`, `\t`, `\e` and `\xNN` escapes; other
/// valid UTF-8 as is.
fn quoted(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '"' => s.push_str("\\\""),
                '\n' => s.push_str("\\n"),
                '\r' => s.push_str("\\r"),
                '\t' => s.push_str("\\t"),
                '\u{1b}' => s.push_str("\\e"),
                c if c.is_control() => {
                    for b in c.to_string().bytes() {
                        write!(s, "\\x{b:02x}").unwrap();
                    }
                }
                c => s.push(c),
            }
        }
        for b in chunk.invalid() {
            write!(s, "\\x{b:02x}").unwrap();
        }
    }
    s.push('"');
    s
}
