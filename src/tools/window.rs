//! Window tools.

use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{self, Filters};
use super::models::WindowInfo;
use super::pane_layout;
use super::rows;
use super::spawn::{self, SpawnArgs};
use super::target::{self, Doomed, SessionSel, WindowSel};
use super::toolsets::Toolset;
use super::{
    CHANGE, CREATE, Call, DESTROY, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult,
};
use crate::config::Config;
use crate::tmux::{Command, WindowId};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "list_windows",
        Toolset::Inspect,
        "List tmux Windows",
        "List a session's windows, or every window when no session is given.",
        READ,
        list_windows,
    ));
    tools.push(ToolDef::new(
        "get_window_info",
        Toolset::Inspect,
        "Get tmux Window Info",
        "One window's metadata.",
        READ,
        get_window_info,
    ));
    tools.push(ToolDef::new(
        "create_window",
        Toolset::Execute,
        "Create tmux Window",
        "Create a window (one pane) in a session; it stays in the background unless attach=true.",
        CREATE,
        create_window,
    ));
    tools.push(ToolDef::new(
        "kill_window",
        Toolset::Teardown,
        "Kill tmux Window",
        "Kill a window and its panes' processes.",
        DESTROY,
        kill_window,
    ));
    tools.push(ToolDef::new(
        "rename_window",
        Toolset::Manage,
        "Rename tmux Window",
        "Rename a window (stored literally); turns off automatic renaming.",
        CHANGE,
        rename_window,
    ));
    tools.push(ToolDef::new(
        "select_window",
        Toolset::Manage,
        "Select tmux Window",
        "Make a window its session's current one, by target or direction.",
        CHANGE,
        select_window,
    ));
    tools.push(ToolDef::new(
        "select_layout",
        Toolset::Manage,
        "Select tmux Layout",
        "Arrange a window's panes: even-horizontal, even-vertical, main-horizontal, main-vertical, tiled (-mirrored: tmux 3.5+), or a window_layout string.",
        CHANGE,
        select_layout,
    ));
    tools.push(ToolDef::new(
        "resize_window",
        Toolset::Manage,
        "Resize tmux Window",
        "Set a window's width and/or height (1-10000 cells); it then stops following client sizes.",
        CHANGE,
        resize_window,
    ));
    tools.push(ToolDef::new(
        "move_window",
        Toolset::Manage,
        "Move tmux Window",
        "Move a window to another index and/or session; moving a session's last window away ends that session.",
        CHANGE,
        move_window,
    ));
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListWindowsArgs {
    #[serde(flatten)]
    session: SessionSel,
    /// Filters, as in list_sessions.
    filters: Option<Filters>,
}

async fn list_windows(target: Target, args: ListWindowsArgs) -> ToolResult<Vec<WindowInfo>> {
    let mut windows = target::windows(&target).await?;
    if args.session.is_given() {
        let session = target::session(&target, &args.session).await?;
        windows.retain(|w| w.session_id.as_deref() == Some(session.session_id.as_str()));
    }
    filters::apply(windows, args.filters)
}

/// `window_id`, `window_index` and the session they are in.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowTarget {
    /// Window ID (e.g. '@1'). Wins over the other fields.
    pub window_id: Option<String>,
    /// Window index within the session.
    pub window_index: Option<String>,
    #[serde(flatten)]
    pub session: SessionSel,
}

impl WindowTarget {
    /// The lookup these arguments ask for (a `window_id` that is not
    /// `@N` names no window).
    fn sel(&self) -> ToolResult<WindowSel<'_>> {
        Ok(WindowSel {
            window_id: self
                .window_id
                .as_deref()
                .map(target::window_id)
                .transpose()?,
            window_index: self.window_index.as_deref(),
            session: &self.session,
        })
    }

    /// The window these arguments name (see [`target::window`]).
    pub async fn resolve(&self, target: &Target) -> ToolResult<WindowInfo> {
        target::window(target, &self.sel()?).await
    }

    /// The id of the window these arguments name.
    pub async fn id(&self, target: &Target) -> ToolResult<WindowId> {
        target::window_id(&self.resolve(target).await?.window_id)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
}

async fn get_window_info(target: Target, args: WindowArgs) -> ToolResult<WindowInfo> {
    args.window.resolve(&target).await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    Before,
    After,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateWindowArgs {
    #[serde(flatten)]
    session: SessionSel,
    /// Name of the new window.
    window_name: Option<String>,
    /// Make it the session's current window.
    #[serde(default)]
    attach: bool,
    /// Before or after the current window (default: next free index).
    direction: Option<Placement>,
    #[serde(flatten)]
    spawn: SpawnArgs,
}

async fn create_window(target: Target, args: CreateWindowArgs) -> ToolResult<WindowInfo> {
    let spawn = args.spawn.check(&target)?;
    let session = target::session(&target, &args.session).await?;
    let mut cmd = Command::new("new-window")
        .flag("-P")
        .opt("-F", rows::WINDOW.template());
    if !args.attach {
        cmd = cmd.flag("-d");
    }
    cmd = match args.direction {
        Some(Placement::Before) => cmd.flag("-b"),
        Some(Placement::After) => cmd.flag("-a"),
        None => cmd,
    };
    cmd = cmd.target(format!("{}:", target::session_id(&session.session_id)?));
    cmd = cmd.opt_if("-n", args.window_name.as_deref().map(spawn::literal));
    cmd = spawn.apply(cmd);
    let lines = target.run(cmd).await?;
    rows::created(&rows::WINDOW, &lines, "window")
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillWindowArgs {
    /// Window ID (e.g. '@1').
    window_id: String,
}

async fn kill_window(Call { app, target, .. }: Call, args: KillWindowArgs) -> ToolResult<String> {
    let id = target::window_id(&args.window_id)?;
    target::window_by_id(&target, id).await?;
    app.refuse_self_harm(&target, Doomed::Window(id)).await?;
    // The hub runs the kill in a process of its own and forgets a client of
    // ours whose session went with the window.
    target.run(Command::new("kill-window").target(id)).await?;
    Ok(format!("Window killed: {id}"))
}

/// `$S:@W`: the window in the session it was found in (a window linked
/// into several sessions is otherwise ambiguous).
fn window_in_session(window: &WindowInfo) -> ToolResult<String> {
    let id = target::window_id(&window.window_id)?;
    match window.session_id.as_deref() {
        Some(s) => Ok(format!("{}:{id}", target::session_id(s)?)),
        None => Ok(id.to_string()),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameWindowArgs {
    /// New window name.
    new_name: String,
    #[serde(flatten)]
    window: WindowTarget,
}

async fn rename_window(target: Target, args: RenameWindowArgs) -> ToolResult<WindowInfo> {
    let id = args.window.id(&target).await?;
    target
        .run(
            Command::new("rename-window")
                .target(id)
                .flag("--")
                .arg(spawn::literal(&args.new_name)),
        )
        .await?;
    target::window_by_id(&target, id).await
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowDirection {
    Next,
    Previous,
    Last,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectWindowArgs {
    /// Window ID (e.g. '@1'). Wins over window_index and direction.
    window_id: Option<String>,
    /// Window index within the session.
    window_index: Option<String>,
    /// last: the previously current window.
    direction: Option<WindowDirection>,
    #[serde(flatten)]
    session: SessionSel,
}

async fn select_window(target: Target, args: SelectWindowArgs) -> ToolResult<WindowInfo> {
    if args.window_id.is_none() && args.window_index.is_none() && args.direction.is_none() {
        return Err(ToolError::invalid(
            "Provide window_id, window_index, or direction.",
        ));
    }
    let Some(direction) = args
        .direction
        .filter(|_| args.window_id.is_none() && args.window_index.is_none())
    else {
        let window = target::window(
            &target,
            &WindowSel {
                window_id: args
                    .window_id
                    .as_deref()
                    .map(target::window_id)
                    .transpose()?,
                window_index: args.window_index.as_deref(),
                session: &args.session,
            },
        )
        .await?;
        target
            .run(Command::new("select-window").target(window_in_session(&window)?))
            .await?;
        return target::window_by_id(&target, target::window_id(&window.window_id)?).await;
    };
    let sid = target::session_id_of(&target, &args.session).await?;
    let name = match direction {
        WindowDirection::Next => "next-window",
        WindowDirection::Previous => "previous-window",
        WindowDirection::Last => "last-window",
    };
    target.run(Command::new(name).target(sid)).await?;
    target::windows(&target)
        .await?
        .into_iter()
        .find(|w| {
            w.session_id.as_deref().and_then(|s| s.parse().ok()) == Some(sid)
                && w.window_active.as_deref() == Some("1")
        })
        .ok_or_else(|| {
            ToolError::new(
                ErrorKind::NoWindowsExist,
                "The session has no current window.",
            )
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectLayoutArgs {
    /// A name or a layout string.
    layout: String,
    #[serde(flatten)]
    window: WindowTarget,
}

async fn select_layout(target: Target, args: SelectLayoutArgs) -> ToolResult<WindowInfo> {
    // tmux 3.3a crashes on a name it does not know and on a malformed
    // layout string, so nothing but a known name or a checked string goes.
    let kind = layout::classify(&args.layout).map_err(ToolError::invalid)?;
    let window = args.window.resolve(&target).await?;
    match kind {
        layout::Layout::Named { since: Some(since) } => {
            let version = target::tmux_version(&target).await?;
            if !layout::version_at_least(&version, since) {
                return Err(ToolError::invalid(format!(
                    "Layout '{}' needs tmux {}.{} or newer; this server runs tmux {version}. Use main-horizontal or main-vertical.",
                    args.layout, since.0, since.1
                )));
            }
        }
        layout::Layout::Named { since: None } => {}
        layout::Layout::Custom { panes } => {
            if panes as i64 != window.pane_count {
                return Err(ToolError::invalid(format!(
                    "The layout string describes {panes} panes but window {} has {}; copy window_layout from a window with the same number of panes.",
                    window.window_id, window.pane_count
                )));
            }
        }
    }
    let id = target::window_id(&window.window_id)?;
    target
        .run(Command::new("select-layout").target(id).arg(&args.layout))
        .await?;
    target::window_by_id(&target, id).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResizeWindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
    /// New height in cells.
    height: Option<i64>,
    /// New width in cells.
    width: Option<i64>,
}

async fn resize_window(target: Target, args: ResizeWindowArgs) -> ToolResult<WindowInfo> {
    let width = pane_layout::cells("width", args.width)?;
    let height = pane_layout::cells("height", args.height)?;
    if width.is_none() && height.is_none() {
        return Err(ToolError::invalid("Provide height, width, or both."));
    }
    let id = args.window.id(&target).await?;
    target
        .run(
            Command::new("resize-window")
                .target(id)
                .opt_if("-x", width)
                .opt_if("-y", height),
        )
        .await?;
    target::window_by_id(&target, id).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveWindowArgs {
    #[serde(flatten)]
    window: WindowTarget,
    /// Digits; empty: the next free index.
    #[serde(default)]
    destination_index: String,
    /// Name or $id; default: the window's own.
    destination_session: Option<String>,
}

async fn move_window(target: Target, args: MoveWindowArgs) -> ToolResult<WindowInfo> {
    let index = &args.destination_index;
    if !index.is_empty()
        && (!index.bytes().all(|b| b.is_ascii_digit()) || index.parse::<i32>().is_err())
    {
        return Err(ToolError::invalid(format!(
            "destination_index must be empty (next free index) or a window index of digits, got '{index}'"
        )));
    }
    let window = args.window.resolve(&target).await?;
    let source = window.session_id.clone().unwrap_or_default();
    let dest = match &args.destination_session {
        None => source.clone(),
        Some(want) => {
            let sel = if want.starts_with('$') {
                SessionSel {
                    session_name: None,
                    session_id: Some(want.clone()),
                }
            } else {
                SessionSel {
                    session_name: Some(want.clone()),
                    session_id: None,
                }
            };
            target::session(&target, &sel).await?.session_id
        }
    };
    let cmd = Command::new("move-window")
        .opt("-s", window_in_session(&window)?)
        .target(format!("{}:{index}", target::session_id(&dest)?));
    // Moving a session's last window away ends that session: the hub runs
    // the move in a process of its own and forgets a client of ours that
    // was attached there before the window is read back.
    target.run(cmd).await?;
    target::window_by_id(&target, target::window_id(&window.window_id)?).await
}

/// Layout names and strings, checked before `select-layout` sees them.
pub(super) mod layout {
    /// Built-in layouts and the tmux version that introduced each
    /// (`None`: every supported version).
    const NAMES: &[(&str, Option<(u32, u32)>)] = &[
        ("even-horizontal", None),
        ("even-vertical", None),
        ("main-horizontal", None),
        ("main-horizontal-mirrored", Some((3, 5))),
        ("main-vertical", None),
        ("main-vertical-mirrored", Some((3, 5))),
        ("tiled", None),
    ];

    /// tmux's `WINDOW_MAXIMUM`, and the longest layout tmux itself writes.
    const MAX_CELLS: u32 = 10_000;
    const MAX_LEN: usize = 8192;
    const MAX_DEPTH: usize = 64;

    #[derive(Debug, PartialEq, Eq)]
    pub enum Layout {
        Named { since: Option<(u32, u32)> },
        Custom { panes: usize },
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
            .map(|panes| Layout::Custom { panes })
            .map_err(|why| format!("Invalid layout string '{text}': {why}. {HELP}"))
    }

    /// tmux's `layout_checksum` (layout-custom.c): a 16-bit rotate-and-add.
    pub fn checksum(body: &[u8]) -> u16 {
        body.iter().fold(0u16, |csum, &b| {
            ((csum >> 1) | ((csum & 1) << 15)).wrapping_add(u16::from(b))
        })
    }

    /// Parses `cccc,<cell>` strictly; returns the number of panes.
    fn custom(text: &str) -> Result<usize, String> {
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
        let mut p = Parser { s: body, i: 0 };
        let cell = p.cell(0)?;
        if p.i != body.len() {
            return Err(format!("unexpected '{}' at {}", p.s[p.i] as char, p.i + 5));
        }
        Ok(cell.panes)
    }

    struct Cell {
        w: u32,
        h: u32,
        panes: usize,
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
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

        /// `WxH,X,Y,ID` (a pane) or `WxH,X,Y{…}` / `WxH,X,Y[…]` (a split).
        fn cell(&mut self, depth: usize) -> Result<Cell, String> {
            if depth > MAX_DEPTH {
                return Err("nested too deeply".into());
            }
            let w = self.number("width", MAX_CELLS)?;
            self.expect(b'x')?;
            let h = self.number("height", MAX_CELLS)?;
            if w == 0 || h == 0 {
                return Err("a cell has zero size".into());
            }
            self.expect(b',')?;
            self.number("x offset", MAX_CELLS)?;
            self.expect(b',')?;
            self.number("y offset", MAX_CELLS)?;
            let (close, side_by_side) = match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.number("pane id", u32::MAX)?;
                    return Ok(Cell { w, h, panes: 1 });
                }
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
            if children.len() < 2 {
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
            if !across || sum != u64::from(total) {
                return Err(format!("cell sizes do not add up to {w}x{h}"));
            }
            Ok(Cell {
                w,
                h,
                panes: children.iter().map(|c| c.panes).sum(),
            })
        }
    }

    /// Is tmux `version` (e.g. `3.3a`, `next-3.6`) at least `want`?
    pub fn version_at_least(version: &str, want: (u32, u32)) -> bool {
        let digits = version.trim_start_matches(|c: char| !c.is_ascii_digit());
        let mut parts = digits.split('.');
        let major = parts.next().and_then(|p| p.parse::<u32>().ok());
        let minor = parts.next().map(|p| {
            p.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse::<u32>()
                .unwrap_or(0)
        });
        match (major, minor) {
            (Some(major), minor) => (major, minor.unwrap_or(0)) >= want,
            _ => false,
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
                    since: Some((3, 5))
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
        fn checksum_matches_tmux() {
            // Printed by tmux 3.3a (#{window_layout}).
            assert_eq!(checksum(b"200x50,0,0,0"), 0xac9d);
            let split = "21be,200x50,0,0{100x50,0,0,0,99x50,101,0[99x25,101,0,1,99x24,101,26,2]}";
            assert_eq!(classify(split), Ok(Layout::Custom { panes: 3 }));
        }

        #[test]
        fn layout_strings_are_parsed_strictly() {
            let one = with_sum("200x50,0,0,0");
            assert_eq!(classify(&one), Ok(Layout::Custom { panes: 1 }));
            let two = with_sum("200x50,0,0{100x50,0,0,1,99x50,101,0,2}");
            assert_eq!(classify(&two), Ok(Layout::Custom { panes: 2 }));
            let nested = with_sum("80x24,0,0[80x12,0,0,1,80x11,0,13{40x11,0,13,2,39x11,41,13,3}]");
            assert_eq!(classify(&nested), Ok(Layout::Custom { panes: 3 }));
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
        fn versions_compare() {
            assert!(!version_at_least("3.3a", (3, 5)));
            assert!(version_at_least("3.5", (3, 5)));
            assert!(version_at_least("3.5a", (3, 5)));
            assert!(version_at_least("next-3.6", (3, 5)));
            assert!(version_at_least("4.0", (3, 5)));
            assert!(!version_at_least("master", (3, 5)));
        }
    }
}
