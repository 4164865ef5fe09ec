//! `run_command`: type a command at a shell prompt, wait for it to end, and
//! return its exit status and its own output, bounded.
//!
//! The shell prints two markers around the command: OSC sequences with a
//! number no terminal knows (`ESC ] 6973 ; <nonce> ; S BEL` before, `…;E;
//! <status> BEL` after). tmux's screen drops them, so the pane never shows
//! them, while `%output` carries them byte for byte: they are found in the
//! raw recording, which also gives the exact offset of the command's first
//! output byte (the cursor a result carries for `capture_since`). The typed
//! text spells ESC and BEL as `\033` and `\007`, so its echo can never
//! contain a marker.

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounded::{self, HeadTail, MaxLines};
use super::observe::{Geometry, MAX_LINE, Watch, watch_pane};
use super::sock::Sock;
use super::target::PaneSel;
use super::toolsets::Toolset;
use super::wait::{Cursor, Pace, Woke, seconds};
use super::{App, ErrorKind, INPUT, Target, ToolDef, ToolError, ToolResult};
use crate::config::Config;
use crate::mcp::CallContext;
use crate::panes::LineView;
use crate::tmux::Command;

/// `suppress_history` defaults to `LIBTMUX_SUPPRESS_HISTORY`, so the
/// catalog advertises the configured default.
pub fn register(tools: &mut Vec<ToolDef>, config: &Config) {
    let tool = ToolDef::new(
        "run_command",
        Toolset::Execute,
        "Run Command",
        "Run a command in a subshell at a pane's shell prompt (bash, sh, zsh, fish), wait, and return its exit status and own output. On timeout it keeps running (timed_out). Output: a screenful (at most 100 lines, 8 KB; head and tail); capture_since(cursor) pages the rest.",
        INPUT,
        run_command,
    );
    tools.push(
        tool.with_own_wait_ceiling()
            .with_boolean_default("suppress_history", config.suppress_history),
    );
}

/// The OSC number of the markers: tmux knows none such, so its screen
/// drops the sequence.
const OSC: &str = "6973";
/// How long to wait for a prompt not drawn yet before typing.
const PROMPT_WAIT: Duration = Duration::from_millis(200);
/// A pause in output this long ends the wait for a prompt.
const QUIET: Duration = Duration::from_millis(3);
/// Most lines returned by default (fewer on a shorter pane).
const DEFAULT_LINES: usize = 100;
/// Most bytes of output returned by default.
const DEFAULT_OUTPUT_BYTES: usize = 8 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunCommandArgs {
    /// The shell command to run.
    command: String,
    #[serde(flatten)]
    pane: PaneSel,
    /// Seconds to wait (capped by the server).
    #[serde(default = "default_run_timeout")]
    timeout: f64,
    /// Return at most this many output lines (head and tail); null: all. Default: a screenful.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>")]
    max_lines: MaxLines,
    /// Prefix a space to keep the command out of shell history.
    #[serde(default)]
    suppress_history: Option<bool>,
    #[serde(flatten)]
    _sock: Sock,
}

fn default_run_timeout() -> f64 {
    30.0
}

/// The outcome of `run_command`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunCommandResult {
    pub pane_id: String,
    /// The command's exit status; null when it timed out.
    pub exit_status: Option<i64>,
    pub timed_out: bool,
    pub elapsed_seconds: f64,
    /// The command's own output lines (escape sequences removed); a line
    /// `[... N lines left out ...]` stands where the middle was cut.
    pub output: Vec<String>,
    pub output_truncated: bool,
    /// Lines left out of `output`.
    pub output_truncated_lines: i64,
    pub effective_timeout: f64,
    /// A capture_since cursor at the command's first output byte, ending at
    /// its last: pages exactly this command's output.
    pub cursor: Option<String>,
}

/// The text typed into the shell. The command is spelt once to be shown
/// and once to be run, each time escaped so that the typed line is one
/// line of ASCII. When the shell has read it, the first `printf` erases
/// its echo (cursor up over the rows it took, to the prompt's end, clear
/// to the end of the screen) and shows the command as a person would have
/// typed it; then come the start marker, the command in a subshell (POSIX
/// shells) or a `fish -c` child (fish), so `exit 3` reports 3 without
/// ending the pane's shell, and the end marker with the status. The
/// markers' escapes are spelt out (`\033`), so only the shell running the
/// command prints them.
fn payload(
    command: &str,
    nonce: &str,
    suppress_history: bool,
    shell: &str,
    at: Geometry,
) -> String {
    let space = if suppress_history { " " } else { "" };
    let fish = shell == "fish";
    let quoted = if fish {
        fish_quote(command)
    } else {
        format!("'{}'", printf_b_escape(command))
    };
    let (shown, run, status) = if fish {
        ("%s", format!("fish -c {quoted}"), "$status")
    } else {
        ("%b", format!("(eval \"$(printf %b {quoted})\")"), "\"$?\"")
    };
    let end = format!("printf '\\033]{OSC};{nonce};E;%d\\007' {status}");
    let line = |rows: usize| {
        format!(
            "{space}printf '\\r\\033[{rows}A\\033[{col}G\\033[J{shown}\\n\\033]{OSC};{nonce};S\\007' {quoted}; {run}; {end}",
            col = at.cursor_x + 1
        )
    };
    // The rows the echo takes depend on the line's length, which holds
    // the row count: settle it (a digit more at most, twice).
    let width = at.width.max(1);
    let mut rows = 1;
    let mut typed = line(rows);
    for _ in 0..3 {
        let cells = at.cursor_x + typed.chars().count();
        // A line ending exactly at the margin leaves the cursor there,
        // pending a wrap; a space more makes the wrap happen.
        let cells = cells + usize::from(cells.is_multiple_of(width));
        let needed = cells.div_ceil(width).max(1);
        if needed == rows {
            break;
        }
        rows = needed;
        typed = line(rows);
    }
    let cells = at.cursor_x + typed.chars().count();
    if cells.is_multiple_of(width) {
        typed.push(' ');
    }
    typed
}

/// `text` for a single-quoted `printf %b` argument in a POSIX shell,
/// ASCII only: newlines, tabs, other controls and non-ASCII bytes as `\n`,
/// `\t` and `\0NNN`, so the typed line is one line of known width.
fn printf_b_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for &b in text.as_bytes() {
        match b {
            b'\'' => out.push_str("'\\''"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\0{b:03o}")),
        }
    }
    out
}

/// `text` as one fish word of ASCII: quoted runs, with newlines, tabs,
/// other controls and non-ASCII characters as unquoted escapes (inside fish single quotes only `\\` and
/// `\'` are escapes).
fn fish_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut open = false;
    for c in text.chars() {
        if c.is_control() || !c.is_ascii() {
            if open {
                out.push('\'');
                open = false;
            }
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                _ if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
                _ => out.push_str(&format!("\\U{:08x}", c as u32)),
            }
            continue;
        }
        if !open {
            out.push('\'');
            open = true;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            _ => out.push(c),
        }
    }
    if open {
        out.push('\'');
    }
    if out.is_empty() {
        out.push_str("''");
    }
    out
}

/// What every typed line holds, spelt out (`\033]6973;`): its echo
/// reaches `%output` before the shell erases it from the screen.
const ECHO_SIGNATURE: &[u8] = b"\\033]6973;";

/// Is `line` the echo of a line run_command typed? Waits leave it out.
pub fn is_plumbing(line: &[u8]) -> bool {
    memchr::memmem::find(line, ECHO_SIGNATURE).is_some()
}

/// Where the markers are in the raw recording, found chunk by chunk.
struct Markers {
    start: Vec<u8>,
    end: Vec<u8>,
    /// The last bytes of the previous chunk: a marker may be split.
    carry: Vec<u8>,
    /// Ring offset of the command's first output byte.
    output_from: Option<u64>,
    /// Ring offset of the end marker, and the status it carried.
    ended: Option<(u64, i64)>,
    /// Ring offset just past the end marker.
    after_end: u64,
}

/// What an end-marker search found.
enum EndSearch {
    Found {
        at: usize,
        len: usize,
        status: i64,
    },
    /// A marker starts here but is not complete yet.
    Partial(usize),
    None,
}

impl Markers {
    fn new(nonce: &str) -> Self {
        Markers {
            start: format!("\x1b]{OSC};{nonce};S\x07").into_bytes(),
            end: format!("\x1b]{OSC};{nonce};E;").into_bytes(),
            carry: Vec::new(),
            output_from: None,
            ended: None,
            after_end: 0,
        }
    }

    fn find_end(&self, hay: &[u8]) -> EndSearch {
        let Some(at) = memchr::memmem::find(hay, &self.end) else {
            return EndSearch::None;
        };
        let digits = &hay[at + self.end.len()..];
        let Some(stop) = digits.iter().position(|&b| b == 0x07) else {
            // A status has at most a few digits; anything longer is not ours.
            return if digits.len() < 12 {
                EndSearch::Partial(at)
            } else {
                EndSearch::None
            };
        };
        let status = std::str::from_utf8(&digits[..stop])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(-1);
        EndSearch::Found {
            at,
            len: self.end.len() + stop + 1,
            status,
        }
    }

    /// Scans the chunk recorded at ring offset `at`; the command's output
    /// in it goes to `feed`.
    fn scan(&mut self, at: u64, chunk: &[u8], feed: &mut impl FnMut(&[u8])) {
        if self.ended.is_some() {
            return;
        }
        let mut hay = std::mem::take(&mut self.carry);
        let hay_at = at - hay.len() as u64;
        hay.extend_from_slice(chunk);
        // The carry is never fed: before the output it is not output, and
        // in the output it may be the start of the end marker.
        let mut fed = 0;
        if self.output_from.is_none() {
            match memchr::memmem::find(&hay, &self.start) {
                Some(p) => {
                    fed = p + self.start.len();
                    self.output_from = Some(hay_at + fed as u64);
                }
                None => {
                    let keep = hay.len().min(self.start.len() - 1);
                    self.carry = hay[hay.len() - keep..].to_vec();
                    return;
                }
            }
        }
        // The end marker may begin in the carry (the echo before the start
        // marker holds no ESC, so it cannot match there).
        match self.find_end(&hay) {
            EndSearch::Found { at: p, len, status } => {
                feed(&hay[fed.min(p)..p]);
                self.ended = Some((hay_at + p as u64, status));
                self.after_end = hay_at + (p + len) as u64;
            }
            EndSearch::Partial(p) => {
                feed(&hay[fed.min(p)..p]);
                self.carry = hay[p..].to_vec();
            }
            EndSearch::None => {
                // Hold back a tail that may begin the end marker.
                let held = (1..self.end.len())
                    .rev()
                    .find(|&k| hay.ends_with(&self.end[..k]))
                    .unwrap_or(0)
                    .min(hay.len() - fed);
                feed(&hay[fed..hay.len() - held]);
                self.carry = hay[hay.len() - held..].to_vec();
            }
        }
    }
}

/// The output bound of a call: a screenful by default.
fn output_bound(max_lines: MaxLines, height: usize, backstop: usize) -> ToolResult<(usize, usize)> {
    let screenful = (height.clamp(1, DEFAULT_LINES), DEFAULT_OUTPUT_BYTES);
    bounded::bound(max_lines, screenful, backstop)
}

/// Waits until the shell has drawn its prompt, when it seems not to have
/// (the cursor at column 0, a command just ended): the echo of the typed
/// line starts where the prompt ends. Waits for the output to pause, at
/// most [`PROMPT_WAIT`].
async fn prompt_drawn(watch: &mut Watch, target: &Target) -> ToolResult<()> {
    if watch.geometry.cursor_x > 0 {
        return Ok(());
    }
    let started = Instant::now();
    watch.mark_seen();
    while started.elapsed() < PROMPT_WAIT && watch.changed(QUIET).await {
        watch.mark_seen();
    }
    watch.refresh_geometry(target).await
}

/// After the end marker, waits for the shell's prompt: text after the
/// marker, then a pause of [`QUIET`] (at most [`PROMPT_WAIT`] in all), so
/// that the next call finds the prompt drawn and types after it.
async fn await_prompt(watch: &mut Watch, after_end: u64) {
    let started = Instant::now();
    let mut cursor = after_end;
    let mut view = LineView::new(MAX_LINE);
    let mut text = false;
    loop {
        watch.mark_seen();
        watch.read(&mut cursor, &mut view, &mut |_| text = true);
        text |= !view.partial().is_empty();
        let Some(left) = PROMPT_WAIT.checked_sub(started.elapsed()) else {
            return;
        };
        let limit = if text { QUIET.min(left) } else { left };
        if !watch.changed(limit).await {
            return;
        }
    }
}

/// Reads the recording from `cursor` until the end marker, the deadline,
/// a cancellation or the pane's end; output goes to `output`. Returns
/// whether output was lost on the way.
async fn collect(
    watch: &mut Watch,
    target: &Target,
    pace: &mut Pace,
    mut cursor: u64,
    markers: &mut Markers,
    output: &mut HeadTail,
) -> ToolResult<bool> {
    let mut view = LineView::new(MAX_LINE);
    let mut missed = false;
    loop {
        watch.mark_seen();
        let info = watch.read_raw(&mut cursor, &mut |at, chunk, gap| {
            if gap && markers.output_from.is_some() {
                view.reset();
            }
            markers.scan(at, chunk, &mut |bytes| {
                view.feed(bytes, &mut |line| output.push(line));
            });
        });
        // Output lost before it could be read (an eviction, a re-attach)
        // is reported as truncation; the end marker may still come.
        missed |= info.missed && markers.output_from.is_some();
        if markers.ended.is_none() {
            watch.check_alive(target).await?;
        }
        if markers.ended.is_some() || pace.expired() {
            if !view.partial().is_empty() {
                // Output without a final newline.
                output.push(view.partial());
            }
            return Ok(missed);
        }
        // Output, a progress tick or the deadline: read again.
        if let Woke::Cancelled = pace.sleep(watch.changed(pace.left())).await {
            return Err(ToolError::new(
                ErrorKind::Cancelled,
                "run_command was cancelled; the command keeps running",
            ));
        }
    }
}

fn left_out_line(n: usize) -> String {
    // Short: the model reads it on every truncated result; the description
    // says how to page the rest (capture_since with the result's cursor).
    format!("[... {n} lines left out ...]")
}

/// A call's checked arguments: the command as typed, and its bounds.
struct Checked<'a> {
    command: &'a str,
    suppress: bool,
    effective: Duration,
}

fn check<'a>(app: &App, args: &'a RunCommandArgs) -> ToolResult<Checked<'a>> {
    let command = args.command.trim_end();
    if command.trim().is_empty() {
        return Err(ToolError::invalid("command must not be empty"));
    }
    let suppress = args.suppress_history.unwrap_or(app.config.suppress_history);
    if suppress && command.contains(['\n', '\r']) {
        return Err(ToolError::invalid(
            "command must be a single line when suppress_history=True",
        ));
    }
    output_bound(args.max_lines, 1, 1)?;
    let effective = seconds(args.timeout, "timeout")?.min(app.config.wait_max);
    Ok(Checked {
        command,
        suppress,
        effective,
    })
}

/// Types the command line and Enter once the prompt is drawn; returns the
/// recording's offset before the typing.
async fn type_command(
    watch: &mut Watch,
    target: &Target,
    run: &Checked<'_>,
    nonce: &str,
) -> ToolResult<u64> {
    prompt_drawn(watch, target).await?;
    let cursor = watch.end();
    let typed = Command::new("send-keys")
        .target(watch.id)
        .flag("-l")
        .flag("--")
        .arg(payload(
            run.command,
            nonce,
            run.suppress,
            &watch.command,
            watch.geometry,
        ));
    target.run(typed).await?;
    target
        .run(Command::new("send-keys").target(watch.id).arg("Enter"))
        .await?;
    Ok(cursor)
}

async fn run_command(
    app: Arc<App>,
    target: Target,
    args: RunCommandArgs,
    ctx: CallContext,
) -> ToolResult<RunCommandResult> {
    let started = Instant::now();
    let run = check(&app, &args)?;
    let mut watch = watch_pane(&target, &args.pane).await?;
    let (max_lines, max_bytes) = output_bound(
        args.max_lines,
        watch.geometry.height,
        app.config.limits.tool_result,
    )?;
    let nonce = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
    let cursor = type_command(&mut watch, &target, &run, &nonce).await?;
    let mut pace = Pace::new(&ctx, format!("pane {}", watch.id), started, run.effective);
    pace.report_start("command typed");

    let mut output = HeadTail::new(max_lines, max_bytes);
    let mut markers = Markers::new(&nonce);
    let missed = collect(
        &mut watch,
        &target,
        &mut pace,
        cursor,
        &mut markers,
        &mut output,
    )
    .await?;
    if markers.ended.is_some() {
        await_prompt(&mut watch, markers.after_end).await;
    }
    let exit_status = markers.ended.map(|(_, status)| status);
    let cursor = markers.output_from.map(|from| {
        Cursor {
            pane: watch.id,
            epoch: watch.epoch(),
            pid: watch.pid,
            offset: from,
            stop: markers.ended.map(|(at, _)| at),
        }
        .encode()
    });
    Ok(RunCommandResult {
        pane_id: watch.id.to_string(),
        exit_status,
        timed_out: exit_status.is_none(),
        elapsed_seconds: pace.elapsed_seconds(),
        output_truncated: output.truncated() || missed,
        output_truncated_lines: output.left_out as i64,
        output: output.into_lines(left_out_line),
        effective_timeout: run.effective.as_secs_f64(),
        cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Geometry = Geometry {
        width: 80,
        height: 24,
        cursor_x: 2,
    };

    #[test]
    fn the_typed_line_is_one_line_of_ascii_whose_rows_are_counted() {
        let typed = payload("cat <<'E'\n\té\nE", "abc", false, "sh", AT);
        assert!(typed.bytes().all(|b| (0x20..0x7f).contains(&b)), "{typed}");
        assert!(
            typed.contains(r"'cat <<'\''E'\''\n\t\0303\0251\nE'"),
            "{typed}"
        );
        let cells = 2 + typed.len();
        assert_ne!(cells % 80, 0);
        assert!(
            typed.contains(&format!("\\033[{}A", cells.div_ceil(80))),
            "{typed}"
        );
        let fish = payload("a\nb'cé", "abc", false, "fish", AT);
        assert!(fish.contains(r"'a'\n'b\'c'\U000000e9"), "{fish}");
        assert!(fish.is_ascii());
        // At the margin exactly, a space more makes the wrap happen.
        for len in 100..260 {
            let typed = payload(&"x".repeat(len), "abc", false, "sh", AT);
            assert_ne!((2 + typed.len()) % 80, 0);
        }
    }

    #[test]
    fn markers_never_appear_in_the_typed_text() {
        let m = Markers::new("abc");
        for typed in [
            payload("echo hi", "abc", true, "bash", AT),
            payload("echo 'a' \\x", "abc", false, "fish", AT),
        ] {
            assert!(!typed.contains('\x1b') && !typed.contains('\x07'));
            assert!(memchr::memmem::find(typed.as_bytes(), &m.start).is_none());
        }
        assert!(payload("echo hi", "abc", true, "bash", AT).starts_with(' '));
        assert!(is_plumbing(payload("x", "abc", false, "sh", AT).as_bytes()));
        assert!(!is_plumbing(b"$ echo hi"));
        let fish = payload("echo 'a' \\x", "abc", false, "fish", AT);
        assert!(fish.contains("fish -c 'echo \\'a\\' \\\\x'"), "{fish}");
    }

    /// Feeds `stream` split at `split` and returns (output, output_from, end).
    fn scan_split(stream: &[u8], split: usize) -> (Vec<u8>, Option<u64>, Option<(u64, i64)>) {
        let mut m = Markers::new("n1");
        let mut out = Vec::new();
        let (a, b) = stream.split_at(split);
        m.scan(100, a, &mut |bytes| out.extend_from_slice(bytes));
        m.scan(100 + a.len() as u64, b, &mut |bytes| {
            out.extend_from_slice(bytes)
        });
        (out, m.output_from, m.ended)
    }

    #[test]
    fn markers_are_found_at_every_split_point() {
        let stream = b"echo\r\n\x1b]6973;n1;S\x07hello\r\nno newline\x1b]6973;n1;E;3\x07$ ";
        let start = 6 + 12;
        let end = stream.len() - 2 - 14;
        for split in 0..=stream.len() {
            let (out, from, ended) = scan_split(stream, split);
            assert_eq!(out, b"hello\r\nno newline", "split {split}");
            assert_eq!(from, Some(100 + start as u64), "split {split}");
            assert_eq!(ended, Some((100 + end as u64, 3)), "split {split}");
        }
    }

    #[test]
    fn the_bound_is_a_screenful_unless_asked() {
        assert_eq!(output_bound(None, 40, 1 << 20).unwrap(), (40, 8192));
        assert_eq!(output_bound(None, 500, 1 << 20).unwrap(), (100, 8192));
        assert_eq!(
            output_bound(Some(Some(3)), 40, 1 << 20).unwrap(),
            (3, 1 << 20)
        );
        assert_eq!(output_bound(Some(None), 40, 1 << 20).unwrap().0, usize::MAX);
        assert!(output_bound(Some(Some(0)), 40, 1 << 20).is_err());
    }
}
