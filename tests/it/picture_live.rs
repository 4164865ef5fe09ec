//! snapshot_pane(format="png") against real programs on a live private
//! tmux server: the PNG is decoded and each cell checked against tmux's
//! own cells (`capture-pane -e -p -N`, read here by a parser of the test's
//! own): its background at a corner the glyph never reaches (its centre
//! for a blank cell), a glyph in every non-blank cell, and the cursor.

use std::time::Duration;

use serde_json::json;
use tmux_mcp::panes::screen::Colour;
use tmux_mcp::picture::{CELL_H, CELL_W, DEFAULT_BG, DEFAULT_FG, rgb};
use unicode_width::UnicodeWidthChar;

use crate::support::{PrivateTmux, call, err};

struct Image {
    width: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

/// One of tmux's cells as the test reads it.
#[derive(Clone, Copy)]
struct TmuxCell {
    ch: char,
    fg: [u8; 3],
    bg: [u8; 3],
}

/// The picture and its caption, with the result's shape checked.
async fn picture(tmux: &PrivateTmux, pane: &str) -> (Image, String) {
    let svc = tmux.service();
    let result = call(
        &svc,
        "snapshot_pane",
        json!({"pane_id": pane, "format": "png"}),
    )
    .await;
    assert!(!result.is_error, "{:?}", result.content);
    assert!(result.structured_content.is_none());
    assert_eq!(result.content.len(), 2);
    assert_eq!(result.content[0]["type"], "image");
    assert_eq!(result.content[0]["mimeType"], "image/png");
    let caption = result.content[1]["text"].as_str().unwrap().to_owned();
    assert!(!caption.contains('\n'));
    let data = result.content[0]["data"].as_str().unwrap();
    let png = tmux_mcp::mcp::unbase64(data).expect("base64");
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let image = Image {
        width: info.width as usize,
        rgb: buf,
    };
    (image, caption)
}

/// tmux's cells: `capture-pane -e -p -N`, its SGR read by this test alone
/// (colours and reverse: what decides a cell's two colours).
fn tmux_cells(tmux: &PrivateTmux, pane: &str, width: usize) -> Vec<Vec<TmuxCell>> {
    let text = tmux.cmd(&["capture-pane", "-e", "-p", "-N", "-t", pane]);
    let (mut fg, mut bg, mut reverse) = (Colour::Default, Colour::Default, false);
    let mut rows = Vec::new();
    for line in text.trim_end_matches('\n').split('\n') {
        let mut row = Vec::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                let mut seq = String::new();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '\\' {
                        seq.push(c);
                        break;
                    }
                    seq.push(c);
                }
                let Some(params) = seq.strip_prefix('[').and_then(|s| s.strip_suffix('m')) else {
                    continue;
                };
                let p: Vec<u16> = params
                    .split([';', ':'])
                    .map(|n| n.parse().unwrap_or(0))
                    .collect();
                let mut i = 0;
                while i < p.len() {
                    match p[i] {
                        0 => (fg, bg, reverse) = (Colour::Default, Colour::Default, false),
                        7 => reverse = true,
                        27 => reverse = false,
                        n @ 30..=37 => fg = Colour::Indexed((n - 30) as u8),
                        n @ 90..=97 => fg = Colour::Indexed((n - 82) as u8),
                        n @ 40..=47 => bg = Colour::Indexed((n - 40) as u8),
                        n @ 100..=107 => bg = Colour::Indexed((n - 92) as u8),
                        39 => fg = Colour::Default,
                        49 => bg = Colour::Default,
                        n @ (38 | 48) => {
                            let colour = match p.get(i + 1) {
                                Some(5) => {
                                    i += 2;
                                    Colour::Indexed(p[i] as u8)
                                }
                                Some(2) => {
                                    // tmux writes `38;2;r;g;b`.
                                    i += 4;
                                    Colour::Rgb(p[i - 2] as u8, p[i - 1] as u8, p[i] as u8)
                                }
                                _ => Colour::Default,
                            };
                            if n == 38 { fg = colour } else { bg = colour }
                        }
                        4 if params.contains("4:") => i += 1,
                        _ => {}
                    }
                    i += 1;
                }
                continue;
            }
            let (mut f, mut b) = (rgb(fg, DEFAULT_FG), rgb(bg, DEFAULT_BG));
            if reverse {
                std::mem::swap(&mut f, &mut b);
            }
            let cell = TmuxCell {
                ch: c,
                fg: f,
                bg: b,
            };
            for _ in 0..c.width().unwrap_or(0) {
                row.push(cell);
            }
        }
        row.truncate(width);
        rows.push(row);
    }
    rows
}

/// (width, height, cursor x, y, cursor shown).
fn geometry(tmux: &PrivateTmux, pane: &str) -> (usize, usize, usize, usize, bool) {
    let out = tmux.cmd(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{cursor_flag}",
    ]);
    let v: Vec<usize> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    (v[0], v[1], v[2], v[3], v[4] == 1)
}

/// Checks every cell of `pane`'s picture against tmux; returns how many
/// cells had a glyph and the distinct backgrounds seen.
async fn compare(tmux: &PrivateTmux, pane: &str) -> (usize, Vec<[u8; 3]>) {
    let (image, caption) = picture(tmux, pane).await;
    let (width, height, cx, cy, shown) = geometry(tmux, pane);
    assert_eq!(image.width, width * CELL_W);
    assert!(
        caption.starts_with(&format!("{pane} {width}x{height}, ")),
        "{caption}"
    );
    let cells = tmux_cells(tmux, pane, width);
    let mut glyphs = 0;
    let mut backgrounds = Vec::new();
    for (y, row) in cells.iter().enumerate().take(height) {
        for (x, cell) in row.iter().enumerate() {
            if shown && (x, y) == (cx, cy) {
                continue;
            }
            let (px, py) = (x * CELL_W, y * CELL_H);
            let centre = image.at(px + CELL_W / 2, py + CELL_H / 2);
            if !backgrounds.contains(&cell.bg) {
                backgrounds.push(cell.bg);
            }
            if cell.ch == ' ' {
                assert_eq!(centre, cell.bg, "{pane}: blank cell {x},{y}");
                continue;
            }
            // A box-drawing or block character reaches the cell's corners.
            if !('\u{2500}'..='\u{259f}').contains(&cell.ch) {
                assert_eq!(
                    image.at(px, py + 1),
                    cell.bg,
                    "{pane}: cell {x},{y} {:?}",
                    cell.ch
                );
            }
            let inked = (0..CELL_H)
                .flat_map(|dy| (0..CELL_W).map(move |dx| (px + dx, py + dy)))
                .any(|(x, y)| image.at(x, y) != cell.bg);
            assert!(inked, "{pane}: no glyph in cell {x},{y} {:?}", cell.ch);
            glyphs += 1;
        }
    }
    if shown {
        assert!(caption.contains(&format!("cursor {cx},{cy}")), "{caption}");
        let cell = cells[cy].get(cx).copied().unwrap_or(TmuxCell {
            ch: ' ',
            fg: DEFAULT_FG,
            bg: DEFAULT_BG,
        });
        // A block: the cell's colours swapped.
        assert_eq!(
            image.at(cx * CELL_W, cy * CELL_H + 1),
            cell.fg,
            "{pane}: cursor"
        );
    } else {
        assert!(caption.contains("cursor hidden"), "{caption}");
    }
    (glyphs, backgrounds)
}

/// A window running `script`; its pane id.
fn window(tmux: &PrivateTmux, script: &str) -> String {
    let pane = tmux.cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}", script]);
    pane.trim().to_owned()
}

#[tokio::test]
async fn colour_patterns_printed_by_printf() {
    let tmux = PrivateTmux::start();
    let script = r#"i=0; while [ $i -lt 256 ]; do printf '\033[48;5;%dm  ' $i; i=$((i+1)); [ $((i%32)) = 0 ] && printf '\033[0m\n'; done; i=0; while [ $i -lt 64 ]; do printf '\033[48;2;%d;%d;0m ' $((i*4)) $((255-i*4)); i=$((i+1)); done; printf '\033[0m\n\033[1;31mbold red\033[0m \033[2mdim\033[0m \033[3mitalic\033[0m \033[4munder\033[0m \033[7mreverse\033[0m \033[9mstrike\033[0m \033[38;2;255;128;0mrgb\033[0m\n漢字かなカナ한국어 CJK\n'; printf done-printing; exec sleep 1000"#;
    let pane = window(&tmux, script);
    tmux.until_text(&pane, |t| t.contains("done-printing"))
        .await;
    tmux.until_foreground(&pane, "sleep").await;
    let (glyphs, backgrounds) = compare(&tmux, &pane).await;
    assert!(glyphs > 40, "{glyphs}");
    // Every one of the 256 colours, the 64 24-bit steps and the default.
    let mut want: Vec<[u8; 3]> = (0..=255)
        .map(|n| rgb(Colour::Indexed(n), DEFAULT_BG))
        .collect();
    want.extend((0..64).map(|i| [i * 4, 255 - i * 4, 0]));
    want.push(DEFAULT_BG);
    want.sort();
    want.dedup();
    for colour in &want {
        assert!(backgrounds.contains(colour), "{colour:?}");
    }
    let cube = rgb(Colour::Indexed(196), DEFAULT_BG);
    assert!(backgrounds.contains(&cube));
}

#[tokio::test]
async fn vim_with_syntax_colours_and_a_visual_selection() {
    if std::process::Command::new("vim")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("SKIPPED vim_with_syntax_colours: no vim");
        assert!(std::env::var_os("CI").is_none(), "CI installs vim");
        return;
    }
    let tmux = PrivateTmux::start();
    let dir = std::env::temp_dir().join(format!("picture-vim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("demo.sh");
    std::fs::write(
        &file,
        "#!/bin/sh\n# a comment\nfor i in 1 2 3; do\n  echo \"hello $i\"\ndone\nexit 0\n",
    )
    .unwrap();
    let script = format!(
        "TERM=tmux-256color vim -u NONE -N -c 'syntax on' -c 'set t_Co=256' {}",
        file.display()
    );
    let pane = window(&tmux, &script);
    tmux.until_text(&pane, |t| t.contains("a comment")).await;
    tmux.cmd(&["send-keys", "-t", &pane, "3G", "V", "j"]);
    tmux.until_text(&pane, |t| t.contains("VISUAL LINE")).await;
    let (glyphs, backgrounds) = compare(&tmux, &pane).await;
    assert!(glyphs > 30);
    // The selection has a background of its own.
    assert!(backgrounds.len() >= 2, "{backgrounds:?}");
    let (_, caption) = picture(&tmux, &pane).await;
    assert!(caption.contains("alternate screen"), "{caption}");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn less_with_a_highlighted_match_and_top() {
    let tmux = PrivateTmux::start();
    // tmux 3.3 on's default terminal: for 3.2a's `screen`, less's standout
    // is italics, not reverse video.
    let pane = window(&tmux, "seq 1 200 | TERM=tmux-256color less");
    tmux.until_text(&pane, |t| t.lines().any(|l| l == "10"))
        .await;
    tmux.cmd(&["send-keys", "-t", &pane, "/", "42", "Enter"]);
    tmux.until_text(&pane, |t| t.lines().next() == Some("42"))
        .await;
    let raw = tmux.cmd(&["capture-pane", "-e", "-p", "-t", &pane]);
    assert!(
        raw.contains("\x1b[7m"),
        "less highlights the match: {raw:?}"
    );
    let (_, backgrounds) = compare(&tmux, &pane).await;
    assert!(backgrounds.contains(&DEFAULT_FG), "the reversed match");

    // top, stopped once it drew so tmux and the picture see one screen.
    let top = window(&tmux, "exec top -d 1");
    tmux.until_text(&top, |t| t.contains("PID")).await;
    let pid = tmux.cmd(&["display-message", "-p", "-t", &top, "#{pane_pid}"]);
    let stop = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, pid.trim()])
            .status()
            .unwrap()
    };
    stop("-STOP");
    // Whatever top was writing when it stopped has reached the screen when
    // two captures agree.
    let mut last = String::new();
    let started = std::time::Instant::now();
    loop {
        let now = tmux.cmd(&["capture-pane", "-e", "-p", "-t", &top]);
        if now == last {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        last = now;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (glyphs, _) = compare(&tmux, &top).await;
    assert!(glyphs > 100);
    stop("-CONT");
}

#[tokio::test]
async fn copy_mode_a_hidden_cursor_and_a_pane_that_is_gone() {
    let tmux = PrivateTmux::start();
    let pane = window(&tmux, "seq 1 100; printf '\\033[?25l'; exec sleep 1000");
    tmux.until_text(&pane, |t| t.contains("\n100\n")).await;
    tmux.until_foreground(&pane, "sleep").await;
    assert!(!geometry(&tmux, &pane).4, "the cursor is hidden");
    compare(&tmux, &pane).await;

    tmux.cmd(&["copy-mode", "-t", &pane]);
    tmux.cmd(&["send-keys", "-t", &pane, "-X", "-N", "10", "scroll-up"]);
    let (image, caption) = picture(&tmux, &pane).await;
    let at = tmux.cmd(&[
        "display-message",
        "-p",
        "-t",
        &pane,
        "#{copy_cursor_x},#{copy_cursor_y}",
    ]);
    assert!(
        caption.contains(&format!("cursor {}", at.trim())),
        "{caption}"
    );
    assert!(caption.ends_with("copy mode"), "{caption}");
    // The view scrolled 10 lines up: the bottom row is what was 10 rows up.
    let (_, height, ..) = geometry(&tmux, &pane);
    let inked_row = |y: usize| {
        (0..CELL_W * 3)
            .flat_map(|x| (0..CELL_H).map(move |dy| (x, y * CELL_H + dy)))
            .any(|(x, y)| image.at(x, y) != DEFAULT_BG)
    };
    assert!(inked_row(height - 1));

    tmux.cmd(&["kill-pane", "-t", &pane]);
    let svc = tmux.service();
    let msg = err(
        &svc,
        "snapshot_pane",
        json!({"pane_id": pane, "format": "png"}),
    )
    .await;
    assert!(msg.contains("Pane not found"), "{msg}");
}
