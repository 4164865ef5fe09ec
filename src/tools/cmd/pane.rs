//! Pane tools: listing, splitting, typing, reading.

use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Config;
use crate::drive::bounded::{self, MaxLines};
use crate::drive::input::{KeyOptions, type_keys};
use crate::drive::pane::{display_pane, own_record, pane_record};
use crate::drive::shell::last::last_command;
use crate::drive::shell::state::is_shell;
use crate::drive::tail::trimmed_lines;
use crate::panes::screen::Screen;
use crate::picture;
use crate::process::{self, Activity};
use crate::tmux::format::Schema;
use crate::tmux::version::Features;
use crate::tmux::{Command, PaneId};
use crate::tools::error::pane_not_found;
use crate::tools::shared::args::yes;
use crate::tools::shared::capture::{backstop, capture_bound};
use crate::tools::shared::confirm;
use crate::tools::shared::filters::{self, Filters};
use crate::tools::shared::guard::Doomed;
use crate::tools::shared::lookup::{self, PaneArgs, PaneScope, PaneSel, WindowTarget};
use crate::tools::shared::marks::{self, Made};
use crate::tools::shared::models::{PaneInfo, Snapshot};
use crate::tools::shared::rows;
use crate::tools::shared::spawn::SpawnArgs;
use crate::tools::toolsets::Toolset;
use crate::tools::{
    CREATE, Call, DESTROY, ErrorKind, INPUT, READ, Target, ToolDef, ToolError, ToolResult,
};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(
        ToolDef::new(
            "list_panes",
            Toolset::Inspect,
            "List tmux Panes",
            "List the panes of a window, a session, or the whole server.",
            READ,
            list_panes,
        )
        .with_lean_text(PaneInfo::LEFT_OUT_OF_TEXT),
    );
    tools.push(ToolDef::new(
        "get_pane_info",
        Toolset::Inspect,
        "Get Pane Info",
        "One pane's metadata (size, position, command, path, title), not its text.",
        READ,
        get_pane_info,
    ));
    tools.push(ToolDef::new(
        "split_window",
        Toolset::Execute,
        "Split tmux Window",
        "Split pane_id (or the target window's active pane); returns the new pane.",
        CREATE,
        split_window,
    ));
    tools.push(ToolDef::new(
        "kill_pane",
        Toolset::Teardown,
        "Kill Pane",
        "Kill a pane and its process.",
        DESTROY,
        kill_pane,
    ));
    tools.push(ToolDef::new(
        "send_keys",
        Toolset::Execute,
        "Send Keys",
        "Type into a pane, then Enter unless enter=false; in copy mode keys go to the mode.",
        INPUT,
        send_keys,
    ));
    tools.push(ToolDef::new(
        "capture_pane",
        Toolset::Inspect,
        "Capture Pane",
        "A pane's text: the screen, or lines start..end; the last max_lines lines, with a header when cut. Default cap: 500 lines, 24 KB.",
        READ,
        capture_pane,
    ));
    tools.push(ToolDef::new(
        "snapshot_pane",
        Toolset::Inspect,
        "Snapshot Pane",
        "A pane's screen text (last max_lines), cursor, mode, size and position in one call. Default cap: 500 lines, 24 KB.",
        READ,
        snapshot_pane,
    )
    .without_output_schema());
    tools.push(ToolDef::new(
        "display_message",
        Toolset::Inspect,
        "Evaluate tmux Format String",
        "Read a pane's tmux variables; modifiers and #(...) jobs are refused.",
        READ,
        display_message,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListPanesArgs {
    #[serde(flatten)]
    window: WindowTarget,
    /// Filters, as in list_sessions.
    filters: Option<Filters>,
    // As in list_sessions (no description: the catalog is budgeted).
    created_by: Option<String>,
    /// Add pane_state.
    states: Option<bool>,
}

async fn list_panes(
    Call { app, target, ctx }: Call,
    args: ListPanesArgs,
) -> ToolResult<Vec<PaneInfo>> {
    let session = &args.window.session;
    let mut panes = if args.window.window_id.is_some() || args.window.window_index.is_some() {
        let id = args.window.id(&target).await?;
        lookup::panes_in(&target, PaneScope::Window(id)).await?
    } else if session.is_given() {
        let scope = match (&session.session_id, &session.session_name) {
            (Some(id), _) => lookup::session_id(id)?.to_string(),
            (None, Some(name)) => format!("={name}"),
            (None, None) => unreachable!("is_given"),
        };
        match lookup::panes_in(&target, PaneScope::Session(scope)).await {
            // Report a missing session the way every other lookup does.
            Err(e) if e.kind == ErrorKind::TmuxObjectDoesNotExist => {
                lookup::session(&target, session).await?;
                return Err(e);
            }
            other => other?,
        }
    } else {
        let mut rows = lookup::panes(&target).await?;
        // A window linked into several sessions is listed once per session.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| seen.insert(r.pane_id));
        rows
    };
    for pane in &mut panes {
        app.mark_caller(&target, pane);
    }
    let me = app.maker(&target, &ctx);
    marks::keep_made_by(&mut panes, args.created_by.as_deref(), &me);
    let mut panes = filters::apply(panes, args.filters)?;
    if args.states == Some(true) {
        add_states(&target, &mut panes).await;
    }
    Ok(panes)
}

/// Each pane's state from the process probe `wait_for_state` uses, all
/// panes in one trip off the async threads. Where the probe sees only
/// whether the process lives (a remote server, no `ps`), tmux's view
/// stands in: the foreground command a shell is `prompt`, else `running`.
async fn add_states(target: &Target, panes: &mut [PaneInfo]) {
    let local = target.hub.local_socket().is_some();
    let probers: Vec<Option<process::Prober>> = panes
        .iter()
        .map(|p| {
            let pid: Option<u32> = p.pane_pid.as_deref().and_then(|pid| pid.parse().ok());
            let tty = p.pane_tty.as_deref().unwrap_or("");
            let pid = pid.filter(|pid| local && *pid != 0);
            pid.map(|pid| process::Prober::new(pid).with_tty(tty))
        })
        .collect();
    let probes = tokio::task::spawn_blocking(move || {
        probers
            .into_iter()
            .map(|prober| prober.map(|mut p| p.probe()))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    for (n, pane) in panes.iter_mut().enumerate() {
        let probe = probes.get(n).cloned().flatten();
        let activity = match probe {
            Some(probe) if probe.observable != process::OBSERVE_EXITED => probe.activity,
            Some(probe) if probe.activity == Activity::Exited => Activity::Exited,
            _ => match pane.pane_current_command.as_deref() {
                Some(command) if is_shell(command) => Activity::Prompt,
                _ => Activity::Running,
            },
        };
        pane.pane_state = Some(activity.as_str());
    }
}

async fn get_pane_info(Call { app, target, .. }: Call, args: PaneArgs) -> ToolResult<PaneInfo> {
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let mut info = app.pane_info(&target, pane).await?;
    info.attach = Some(app.attach_command(&target, pane));
    Ok(info)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SplitDirection {
    Above,
    Below,
    Left,
    Right,
}

/// `size`: cells, or a string such as '30%'.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Size {
    Cells(u32),
    Text(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SplitWindowArgs {
    /// Pane to split (e.g. '%1'). Default: the target window's active pane.
    pane_id: Option<String>,
    #[serde(flatten)]
    window: WindowTarget,
    /// Default: below.
    direction: Option<SplitDirection>,
    /// Cells (20) or a percentage ('30%').
    size: Option<Size>,
    /// Command instead of the default shell.
    shell: Option<String>,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

fn size_arg(size: Size) -> ToolResult<String> {
    let text = match size {
        Size::Cells(n) => return Ok(n.to_string()),
        Size::Text(text) => text,
    };
    let digits = text.strip_suffix('%').unwrap_or(&text);
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ToolError::invalid(format!(
            "size must be a number of cells or a percentage such as '30%', got {text:?}"
        )));
    }
    Ok(text)
}

async fn split_window(
    Call { app, target, ctx }: Call,
    args: SplitWindowArgs,
) -> ToolResult<PaneInfo> {
    let spawn = args.spawn.check(&target)?;
    let size = args.size.map(size_arg).transpose()?;
    let split_target = match &args.pane_id {
        Some(id) => lookup::pane_id(id)?.to_string(),
        None => args.window.resolve(&target).await?.window_id.to_string(),
    };
    let mut cmd = Command::new("split-window")
        .flag("-d")
        .flag("-P")
        .opt("-F", rows::PANE.template());
    cmd = cmd.target(split_target);
    cmd = match args.direction.unwrap_or(SplitDirection::Below) {
        SplitDirection::Below => cmd.flag("-v"),
        SplitDirection::Above => cmd.flag("-v").flag("-b"),
        SplitDirection::Right => cmd.flag("-h"),
        SplitDirection::Left => cmd.flag("-h").flag("-b"),
    };
    cmd = cmd.opt_if("-l", size);
    cmd = spawn.apply(cmd);
    if let Some(shell) = &args.shell {
        cmd = cmd.flag("--").arg(shell);
    }
    let lines = target.run(cmd).await?;
    let mut info = rows::created(&rows::PANE, &lines, "pane")?;
    app.mark_caller(&target, &mut info);
    let maker = app.maker(&target, &ctx);
    let made = Made::Pane(info.pane_id);
    info.created_by = marks::mark(&target, made, &maker).await.then_some(maker);
    info.attach = Some(app.attach_command(&target, info.pane_id));
    Ok(info)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillPaneArgs {
    // (no schema text) Pane ID (e.g. '%1').
    pane_id: String,
}

async fn kill_pane(Call { app, target, ctx }: Call, args: KillPaneArgs) -> ToolResult<String> {
    let pane = lookup::pane_id(&args.pane_id)?;
    app.refuse_self_harm(&target, Doomed::Pane(pane)).await?;
    const FIELDS: [&str; 6] = [
        "pane_id",
        "window_panes",
        "session_windows",
        "window_id",
        "window_name",
        "session_name",
    ];
    let at = pane_record(&target, pane, &FIELDS).await?;
    // A window's last pane takes the window with it, and the session when
    // that was its last window: asked as kill_window and kill_session are.
    if app.config.confirm_teardown && at[1] == "1" {
        let server = confirm::server_of(&target);
        let what = if at[2] == "1" {
            format!(
                "session {:?} (with its last pane {pane}) on {server}",
                at[5]
            )
        } else {
            format!(
                "window {:?} ({}, with its last pane {pane}) of session {:?} on {server}",
                at[4], at[3], at[5]
            )
        };
        app.confirm_teardown(&ctx, &what).await?;
    }
    // The hub runs the kill in a process of its own and forgets a client of
    // ours whose session went with the pane.
    target.run(Command::new("kill-pane").target(pane)).await?;
    Ok(format!("Pane killed: {pane}"))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendKeysArgs {
    // (no schema text) Text or key names to send.
    keys: String,
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) Press Enter after the keys.
    #[serde(default = "yes")]
    enter: bool,
    /// Send verbatim; false reads key names such as C-c, Escape.
    #[serde(default)]
    literal: bool,
    /// A leading space keeps it out of shell history.
    #[serde(default)]
    suppress_history: bool,
}

async fn send_keys(target: Target, args: SendKeysArgs) -> ToolResult<String> {
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let how = KeyOptions {
        enter: args.enter,
        literal: args.literal,
        suppress_history: args.suppress_history,
    };
    let waited = type_keys(&target, pane, &args.keys, how).await?;
    Ok(format!("Keys sent to pane {pane}{}", waited.note()))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CapturePaneArgs {
    #[serde(flatten)]
    pane: PaneSel,
    /// First line: 0 is the screen's top, negative scrollback.
    start: Option<i64>,
    // (no schema text) Last line (same numbering as start).
    end: Option<i64>,
    // (no schema text: the instructions) Keep the last N lines; null: all.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>", extend("default" = 500))]
    max_lines: MaxLines,
    /// Only the last command's output (shell OSC 133 marks; start/end ignored).
    #[serde(default)]
    last_command: bool,
}

async fn capture_pane(Call { app, target, .. }: Call, args: CapturePaneArgs) -> ToolResult<String> {
    let bound = capture_bound(&app, args.max_lines)?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    if args.last_command {
        return last_command(&target, pane, bound).await;
    }
    let cmd = Command::new("capture-pane").flag("-p").target(pane);
    let cmd = cmd
        .opt_if("-S", args.start.map(|n| n.to_string()))
        .opt_if("-E", args.end.map(|n| n.to_string()));
    let lines = trimmed_lines(&target.run(cmd).await?);
    let cut = bounded::lines_to_cut(&lines, bound);
    let text = if cut > 0 {
        format!(
            "[... truncated {cut} lines; max_lines=null or start/end read them ...]\n{}",
            lines[cut..].join("\n")
        )
    } else {
        lines.join("\n")
    };
    Ok(backstop(text, bound.1))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SnapshotPaneArgs {
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text: the instructions) Keep the last N lines; null: all.
    #[serde(default, deserialize_with = "bounded::explicit")]
    #[schemars(with = "Option<i64>", extend("default" = 500))]
    max_lines: MaxLines,
    /// png: an image of the screen
    format: Option<Format>,
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Png,
}

async fn snapshot_pane(
    Call { app, target, .. }: Call,
    args: SnapshotPaneArgs,
) -> ToolResult<Snapshot> {
    if args.format == Some(Format::Png) {
        return picture(&target, &args.pane).await;
    }
    let bound = capture_bound(&app, args.max_lines)?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let info = display_pane(&target, pane, rows::SNAPSHOT.template());
    let capture = Command::new("capture-pane").flag("-p").target(pane);
    // Both go out at once on the control client; replies come in order.
    let (info, capture) = tokio::try_join!(info, target.run(capture))?;
    let mut snap = own_record(pane, rows::SNAPSHOT.parse(&info), |s| Some(s.pane_id))?;
    let lines = trimmed_lines(&capture);
    let cut = bounded::lines_to_cut(&lines, bound);
    snap.content = backstop(lines[cut..].join("\n"), bound.1);
    snap.content_truncated = cut > 0;
    snap.content_truncated_lines = cut as i64;
    snap.is_caller = app.is_caller(&target, pane);
    Ok(Snapshot::Fields(Box::new(snap)))
}

/// What the picture needs to know besides the screen.
#[derive(Default)]
struct PictureOf {
    pane: Option<PaneId>,
    width: usize,
    height: usize,
    cursor: (usize, usize),
    cursor_shown: bool,
    copy_mode: bool,
    scrolled: usize,
    copy_cursor: (usize, usize),
    alternate: bool,
}

const PICTURE_OF: Schema<PictureOf> = Schema(&[
    ("pane_id", |p, v| p.pane = PaneId::parse(v.as_bytes())),
    ("pane_width", |p, v| p.width = v.parse().unwrap_or(0)),
    ("pane_height", |p, v| p.height = v.parse().unwrap_or(0)),
    ("cursor_x", |p, v| p.cursor.0 = v.parse().unwrap_or(0)),
    ("cursor_y", |p, v| p.cursor.1 = v.parse().unwrap_or(0)),
    ("cursor_flag", |p, v| p.cursor_shown = v == "1"),
    ("pane_mode", |p, v| p.copy_mode = v == "copy-mode"),
    ("scroll_position", |p, v| {
        p.scrolled = v.parse().unwrap_or(0)
    }),
    ("copy_cursor_x", |p, v| {
        p.copy_cursor.0 = v.parse().unwrap_or(0)
    }),
    ("copy_cursor_y", |p, v| {
        p.copy_cursor.1 = v.parse().unwrap_or(0)
    }),
    ("alternate_on", |p, v| p.alternate = v == "1"),
]);

/// `snapshot_pane(format="png")`: the visible screen from one
/// `capture-pane -e -p -N` (copy mode's view when the pane is in it), drawn
/// by [`picture`], with the cursor where tmux has it.
async fn picture(target: &Target, sel: &PaneSel) -> ToolResult<Snapshot> {
    let pane = lookup::resolve_pane(target, sel).await?;
    let mode_capture = Features::of(target.hub.version().await).mode_capture;
    let info = display_pane(target, pane, PICTURE_OF.template());
    let capture = Command::new("capture-pane")
        .flag("-e")
        .flag("-p")
        .flag("-N");
    let capture = if mode_capture {
        capture.flag("-M")
    } else {
        capture
    };
    let (info, mut rows) = tokio::try_join!(info, target.run(capture.target(pane)))?;
    let of = own_record(pane, PICTURE_OF.parse(&info), |p| p.pane)?;
    let (width, height, copy_mode) = (of.width, of.height, of.copy_mode);
    if width * height > picture::MAX_CELLS {
        return Err(ToolError::invalid(format!(
            "{pane} is {width}x{height}; a picture is at most {} cells",
            picture::MAX_CELLS
        )));
    }
    if copy_mode && !mode_capture && of.scrolled > 0 {
        // The lines copy mode shows, from the history (no selection).
        let top = -(of.scrolled as i64);
        let cmd = Command::new("capture-pane")
            .flag("-e")
            .flag("-p")
            .flag("-N");
        let cmd = cmd
            .opt("-S", top.to_string())
            .opt("-E", (top + height as i64 - 1).to_string());
        rows = target.run(cmd.target(pane)).await?;
    }
    let cursor = if copy_mode {
        Some(of.copy_cursor)
    } else if of.cursor_shown {
        Some(of.cursor)
    } else {
        None
    };
    let screen = Screen::from_capture(&rows, width, height);
    let png = picture::draw(&screen, cursor).png().map_err(|e| {
        ToolError::new(
            ErrorKind::Tmux,
            format!("could not encode the picture: {e}"),
        )
    })?;
    let mut caption = format!("{pane} {width}x{height}, ");
    match cursor {
        Some((x, y)) => caption += &format!("cursor {x},{y}"),
        None => caption += "cursor hidden",
    }
    if copy_mode {
        caption += ", copy mode";
    } else if of.alternate {
        caption += ", alternate screen";
    }
    Ok(Snapshot::Picture { png, caption })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DisplayMessageArgs {
    /// Text with #{variables}, e.g. '#{pane_current_command}'.
    format_string: String,
    #[serde(flatten)]
    pane: PaneSel,
}

const PANE_MARK: char = '\u{241E}';

/// Only `#{name}` references: modifiers expand a value a second time and
/// `#(...)` runs a shell command, so anything else with `#` is refused.
fn check_format(format: &str) -> ToolResult<()> {
    let reference = Regex::new(r"#\{[A-Za-z_@][A-Za-z0-9_-]*\}").expect("valid regex");
    if reference.replace_all(format, "").contains('#') {
        return Err(ToolError::invalid(format!(
            "format_string accepts literal text and '#{{variable}}' references only; {format:?} carries other tmux format syntax. Modifiers such as '#{{E:...}}' expand a variable's value a second time, and a job '#(...)' runs a shell command."
        )));
    }
    Ok(())
}

async fn display_message(target: Target, args: DisplayMessageArgs) -> ToolResult<String> {
    check_format(&args.format_string)?;
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    // display-message does not fail on a missing pane, so the output starts
    // with the pane's own id: empty means there is no such pane.
    // display-message also runs strftime over the text: `%` is doubled so
    // that literal text stays literal ('50%d' is not a date).
    let literal = args.format_string.replace('%', "%%");
    let format = format!("#{{pane_id}}{PANE_MARK}{literal}");
    let cmd = Command::new("display-message")
        .flag("-p")
        .target(pane)
        .flag("--")
        .arg(format);
    let lines = target.run(cmd).await?;
    let text = lines
        .iter()
        .map(|l| String::from_utf8_lossy(l))
        .collect::<Vec<_>>()
        .join("\n");
    match text.split_once(PANE_MARK) {
        Some((id, rest)) if PaneId::parse(id.as_bytes()) == Some(pane) => Ok(rest.to_owned()),
        _ => Err(pane_not_found(&pane.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_formats_are_limited_to_references() {
        assert!(check_format("#{pane_id} at #{cursor_x},#{@user_opt}").is_ok());
        for bad in ["#(id)", "#{E:x}", "#S", "##", "#{?a,b,c}", "#[fg=red]"] {
            assert!(check_format(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_are_cells_or_percentages() {
        assert_eq!(size_arg(Size::Cells(5)).unwrap(), "5");
        assert_eq!(size_arg(Size::Text("30%".into())).unwrap(), "30%");
        assert!(size_arg(Size::Text("1;kill-server".into())).is_err());
    }
}
