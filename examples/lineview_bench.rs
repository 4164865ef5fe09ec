//! Throughput of the output path, one core: control-mode parser, then the
//! pane ring, then the line view, then the matcher `wait_for_text` uses
//! (the lines of a read searched as one batch).
//!
//! The input is a synthetic `%output` flood shaped like the recorded one in
//! `fixtures/tmux/06-output-flood-utf8.cc`: octal-escaped controls, SGR
//! colours, raw UTF-8 and `\r\n` line ends, cut into 64 KiB reads.
//!
//! Run: `cargo run --release --example lineview_bench [MB]` (default 50).

use std::hint::black_box;
use std::time::{Duration, Instant};

use tmux_mcp::panes::matcher::{LineBatch, Matcher};
use tmux_mcp::panes::{LineView, Ring};
use tmux_mcp::tmux::control::{Event, Parser};

const READ: usize = 64 << 10;
const RING: usize = 1 << 20;
const MAX_LINE: usize = 1 << 16;
const ROUNDS: usize = 5;

/// About `size` bytes of control-mode stream; the marker ends every 1000th
/// terminal line.
fn flood(size: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(size + 4096);
    let mut n = 0usize;
    let mut markers = 0;
    while out.len() < size {
        out.extend_from_slice(b"%output %3 ");
        for _ in 0..4 {
            n += 1;
            let colour = n % 8;
            out.extend_from_slice(
                format!(
                    "\\033[3{colour}m{n:>8}\\033[0m é€😀 build step {n} compiling crate-{colour} \
                     \\033[1;32mok\\033[0m tab\\011sep back\\134slash"
                )
                .as_bytes(),
            );
            if n.is_multiple_of(1000) {
                out.extend_from_slice(b" __MARK__");
                markers += 1;
            }
            out.extend_from_slice(b"\\015\\012");
        }
        out.push(b'\n');
    }
    (out, markers)
}

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Parser,
    Ring,
    Lines,
    Regex,
}

/// Runs the pipeline up to `stage` over `input`; returns (lines, matches).
fn run(input: &[u8], stage: Stage, matcher: &Matcher) -> (usize, usize) {
    let mut parser = Parser::new(1 << 20, 1 << 24);
    let mut ring = Ring::new(RING);
    let mut view = LineView::new(MAX_LINE);
    let mut events = Vec::new();
    let mut batch = LineBatch::default();
    let (mut lines, mut matches) = (0usize, 0usize);
    for chunk in input.chunks(READ) {
        parser.push(chunk, &mut events);
        for event in events.drain(..) {
            let Event::Output { data, .. } = event else {
                continue;
            };
            if stage == Stage::Parser {
                black_box(&data);
                continue;
            }
            ring.append(&data);
            match stage {
                Stage::Lines => view.feed(&data, &mut |line: &[u8]| {
                    black_box(line);
                    lines += 1;
                }),
                Stage::Regex => {
                    batch.clear();
                    view.feed(&data, &mut |line: &[u8]| batch.push(line));
                    lines += batch.len();
                    let mut next = 0;
                    while let Some((line, _)) = matcher.first_from(&batch, next) {
                        matches += 1;
                        next = line + 1;
                    }
                }
                _ => {}
            }
        }
    }
    black_box(ring.end());
    (lines, matches)
}

fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let (input, markers) = flood(mb << 20);
    let matcher = Matcher::new(&[r"__MARK__$".to_owned()], true, true).unwrap();
    let size = input.len() as f64 / (1 << 20) as f64;
    println!(
        "input: {size:.1} MiB of %output lines, {READ} byte reads, ring {RING} bytes, best of {ROUNDS}"
    );
    for (name, stage) in [
        ("parser", Stage::Parser),
        ("parser + ring", Stage::Ring),
        ("parser + ring + lines", Stage::Lines),
        ("parser + ring + lines + matcher", Stage::Regex),
    ] {
        let mut best = Duration::MAX;
        let mut result = (0, 0);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            result = run(&input, stage, &matcher);
            best = best.min(t.elapsed());
        }
        if stage == Stage::Regex {
            assert_eq!(result.1, markers, "every marker line matches once");
        }
        println!(
            "{name:<32} {:>8.0} MiB/s  ({:.1} ms, {} lines, {} matches)",
            size / best.as_secs_f64(),
            best.as_secs_f64() * 1e3,
            result.0,
            result.1
        );
    }
}
