//! The picture of a 200x50 pane of coloured text: how long drawing and
//! encoding take, and how large the PNG is (issue 32's bounds: 20 ms,
//! 150 KB).
//!
//! The screen is what `capture-pane -e -p -N` prints for a full screen of
//! `ls --color`/compiler-like output: every row full, every word in its own
//! style, 16 and 256 colours, some with backgrounds, bold and underline;
//! then the same with a 24-bit foreground every seventh word (hundreds of
//! colours: a 24-bit picture).
//!
//! Run: `cargo run --release --example picture_bench [ROUNDS]` (default 50);
//! `--out FILE` also writes the picture.

use std::time::Instant;

use tmux_mcp::panes::screen::Screen;
use tmux_mcp::picture;

const WIDTH: usize = 200;
const HEIGHT: usize = 50;

fn capture(truecolour: bool) -> Vec<String> {
    let words = [
        "error[E0308]:",
        "mismatched",
        "types",
        "src/main.rs:42:17",
        "expected",
        "`u32`,",
        "found",
        "`i64`",
        "drwxr-xr-x",
        "target/",
        "Cargo.toml",
        "README.md",
        "fn",
        "main()",
        "{",
        "}",
        "let",
        "mut",
        "x",
        "=",
        "0;",
        "test",
        "ok",
        "FAILED",
        "warning:",
        "unused",
    ];
    let mut n = 0usize;
    (0..HEIGHT)
        .map(|y| {
            let mut row = String::new();
            let mut cells = 0;
            while cells < WIDTH {
                let word = words[n % words.len()];
                let sgr = match n % 7 {
                    0 => format!("\x1b[{}m", 31 + n % 7),
                    1 => format!("\x1b[1;{}m", 91 + n % 6),
                    2 => format!("\x1b[38;5;{}m", 16 + (n * 7 + y) % 216),
                    3 if truecolour => {
                        format!("\x1b[38;2;{};{};{}m", 100 + n % 150, 200 - n % 100, 50 + y)
                    }
                    3 => format!("\x1b[38;5;{}m", 232 + n % 24),
                    4 => "\x1b[4;36m".to_owned(),
                    5 => format!("\x1b[30;{}m", 41 + n % 6),
                    _ => "\x1b[0m".to_owned(),
                };
                let take = word.len().min(WIDTH - cells);
                row += &sgr;
                row += &word[..take];
                cells += take;
                if cells < WIDTH {
                    row += "\x1b[0m ";
                    cells += 1;
                }
                n += 1;
            }
            row
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args
        .iter()
        .position(|a| a == "--out")
        .map(|i| args[i + 1].clone());
    let rounds: usize = args
        .first()
        .filter(|a| *a != "--out")
        .map_or(50, |a| a.parse().expect("ROUNDS"));
    for truecolour in [false, true] {
        run(rounds, truecolour, out.as_deref());
    }
}

fn run(rounds: usize, truecolour: bool, out: Option<&str>) {
    let rows = capture(truecolour);
    // The font is inflated once per process, on the first picture.
    let start = Instant::now();
    let first = picture::draw(&Screen::from_capture(&rows, WIDTH, HEIGHT), Some((3, 49)));
    let first_ms = start.elapsed().as_secs_f64() * 1000.0;
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let screen = Screen::from_capture(&rows, WIDTH, HEIGHT);
        let png = picture::draw(&screen, Some((3, 49))).png().expect("png");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        size = png.len();
        std::hint::black_box(png);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let worst = times[times.len() - 1];
    let best = times[0];
    println!(
        "{} {WIDTH}x{HEIGHT} cells ({}x{} px): parse+draw+encode best {best:.1} ms, median {median:.1} ms, worst {worst:.1} ms over {rounds}; PNG {size} bytes ({:.1} KB); first picture (font inflate + draw) {first_ms:.1} ms",
        if truecolour {
            "24-bit colour words:"
        } else {
            "16/256-colour words:"
        },
        first.width,
        first.height,
        size as f64 / 1024.0
    );
    if let Some(path) = out.filter(|_| !truecolour) {
        std::fs::write(path, first.png().expect("png")).expect("write");
    }
}
