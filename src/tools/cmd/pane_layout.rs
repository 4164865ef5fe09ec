//! Pane layout, focus and mode tools: resize_pane, set_pane_title,
//! find_pane_by_position, select_pane, swap_pane, enter_copy_mode and
//! exit_copy_mode.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::Config;
use crate::drive::pane::pane_record;
use crate::tmux::{Command, PaneId, TmuxError, WindowId};
use crate::tools::shared::args::cells;
use crate::tools::shared::lookup::{self, PaneArgs, PaneSel, WindowTarget};
use crate::tools::shared::models::PaneInfo;
use crate::tools::shared::rows;
use crate::tools::shared::spawn;
use crate::tools::shared::zoom;
use crate::tools::toolsets::Toolset;
use crate::tools::{ADJUST, CHANGE, Call, ErrorKind, READ, Target, ToolDef, ToolError, ToolResult};

pub fn register(tools: &mut Vec<ToolDef>, _: &Config) {
    tools.push(ToolDef::new(
        "resize_pane",
        Toolset::Manage,
        "Resize Pane",
        "Resize a pane, or zoom it (zooming also focuses it).",
        ADJUST,
        resize_pane,
    ));
    tools.push(ToolDef::new(
        "set_pane_title",
        Toolset::Manage,
        "Set Pane Title",
        "Set a pane's title (stored literally); its programs may change it again.",
        ADJUST,
        set_pane_title,
    ));
    tools.push(ToolDef::new(
        "find_pane_by_position",
        Toolset::Inspect,
        "Find Pane By Position",
        "The pane in a corner of a window.",
        READ,
        find_pane_by_position,
    ));
    tools.push(ToolDef::new(
        "select_pane",
        Toolset::Manage,
        "Select Pane",
        "Focus pane_id, or move focus by direction; returns the now-active pane.",
        CHANGE,
        select_pane,
    ));
    tools.push(ToolDef::new(
        "swap_pane",
        Toolset::Manage,
        "Swap Pane",
        "Swap two panes (also across windows); focus stays with the pane that had it.",
        CHANGE,
        swap_pane,
    ));
    tools.push(ToolDef::new(
        "enter_copy_mode",
        Toolset::Manage,
        "Enter Copy Mode",
        "Put a pane in copy mode: keys go to the mode, not the program, until exit_copy_mode.",
        CHANGE,
        enter_copy_mode,
    ));
    tools.push(ToolDef::new(
        "exit_copy_mode",
        Toolset::Manage,
        "Exit Copy Mode",
        "Leave copy mode so keys reach the program again (no-op outside it).",
        ADJUST,
        exit_copy_mode,
    ));
}

/// Reads `fields` of one pane in one `display-message`. The pane's own id
/// comes first, so a pane that does not exist is reported as such.
async fn pane_vars(target: &Target, pane: PaneId, fields: &[&str]) -> ToolResult<Vec<String>> {
    let mut all = vec!["pane_id"];
    all.extend_from_slice(fields);
    let mut record = pane_record(target, pane, &all).await?;
    Ok(record.split_off(1))
}

/// The panes of one window, in tmux's order (by index).
async fn window_panes(target: &Target, window: WindowId) -> ToolResult<Vec<PaneInfo>> {
    let cmd = Command::new("list-panes")
        .target(window)
        .opt("-F", rows::PANE.template());
    let lines = target.run(cmd).await?;
    Ok(rows::PANE.parse(&lines))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResizePaneArgs {
    #[serde(flatten)]
    pane: PaneSel,
    // (no schema text) New height in lines.
    height: Option<i64>,
    // (no schema text) New width in columns.
    width: Option<i64>,
    /// true: this pane fills its window; false: unzoom. Not with height/width.
    zoom: Option<bool>,
}

async fn resize_pane(Call { app, target, .. }: Call, args: ResizePaneArgs) -> ToolResult<PaneInfo> {
    if args.zoom.is_some() && (args.height.is_some() || args.width.is_some()) {
        return Err(ToolError::invalid("Cannot combine zoom with height/width"));
    }
    let height = cells("height", args.height)?;
    let width = cells("width", args.width)?;
    if args.zoom.is_none() && height.is_none() && width.is_none() {
        return Err(ToolError::invalid("Provide height, width or zoom."));
    }
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let toggle = || Command::new("resize-pane").flag("-Z").target(pane);
    // Where resizing a pane of a zoomed window crashes tmux, the window is
    // unzoomed first, and our zooms, resizes and teardowns take turns:
    // another call cannot zoom it between the unzoom and the resize (nor
    // between a teardown's unzoom and its kill).
    let unzoom_first = target.hub.features().await.unzoom_before_resize;
    let _turn = zoom::turn(&target).await;
    match args.zoom {
        Some(zoom) => {
            let vars = pane_vars(&target, pane, &["window_zoomed_flag", "pane_active"]).await?;
            let zoomed = vars[0] == "1";
            // A zoomed window shows its active pane; zooming another pane
            // means unzooming first.
            let this_one = zoomed && vars[1] == "1";
            if zoom && !this_one {
                if zoomed {
                    target.run(toggle()).await?;
                }
                target.run(toggle()).await?;
            } else if !zoom && zoomed {
                target.run(toggle()).await?;
            }
        }
        None => {
            if unzoom_first && pane_vars(&target, pane, &["window_zoomed_flag"]).await?[0] == "1" {
                target.run(toggle()).await?;
            }
            let cmd = Command::new("resize-pane")
                .target(pane)
                .opt_if("-y", height)
                .opt_if("-x", width);
            target.run(cmd).await?;
        }
    }
    app.pane_info(&target, pane).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetPaneTitleArgs {
    // (no schema text) The new title (stored literally).
    title: String,
    #[serde(flatten)]
    pane: PaneSel,
}

async fn set_pane_title(
    Call { app, target, .. }: Call,
    args: SetPaneTitleArgs,
) -> ToolResult<PaneInfo> {
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    // With -T, select-pane sets the title and returns before it would
    // select anything: the active and last panes are left alone.
    let cmd = Command::new("select-pane")
        .target(pane)
        .opt("-T", spawn::literal(&args.title));
    target.run(cmd).await?;
    app.pane_info(&target, pane).await
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Corner {
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

impl Corner {
    fn name(self) -> &'static str {
        match self {
            Corner::TopLeft => "top-left",
            Corner::TopRight => "top-right",
            Corner::BottomLeft => "bottom-left",
            Corner::BottomRight => "bottom-right",
        }
    }

    fn holds(self, p: &PaneInfo) -> bool {
        let (top, left) = match self {
            Corner::TopLeft => (true, true),
            Corner::TopRight => (true, false),
            Corner::BottomLeft => (false, true),
            Corner::BottomRight => (false, false),
        };
        let vertical = if top {
            p.geometry.pane_at_top
        } else {
            p.geometry.pane_at_bottom
        };
        let horizontal = if left {
            p.geometry.pane_at_left
        } else {
            p.geometry.pane_at_right
        };
        vertical == Some(true) && horizontal == Some(true)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FindPaneArgs {
    // (no schema text) Which corner of the window.
    corner: Corner,
    #[serde(flatten)]
    window: WindowTarget,
}

/// The pane in `corner`; of several, the one furthest right and down.
fn pane_at(panes: Vec<PaneInfo>, corner: Corner) -> Option<PaneInfo> {
    panes
        .into_iter()
        .filter(|p| corner.holds(p))
        .max_by_key(|p| p.geometry.pane_left.unwrap_or(0) + p.geometry.pane_top.unwrap_or(0))
}

async fn find_pane_by_position(
    Call { app, target, .. }: Call,
    args: FindPaneArgs,
) -> ToolResult<PaneInfo> {
    let id = args.window.id(&target).await?;
    let mut info = pane_at(window_panes(&target, id).await?, args.corner).ok_or_else(|| {
        ToolError::new(
            ErrorKind::Refused,
            format!(
                "No pane found at corner '{}' in window {id}. This is unusual — built-in layouts always have a pane at every corner.",
                args.corner.name()
            ),
        )
    })?;
    app.mark_caller(&target, &mut info);
    Ok(info)
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PaneDirection {
    Up,
    Down,
    Left,
    Right,
    Last,
    Next,
    Previous,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SelectPaneArgs {
    /// Pane ID (e.g. '%1') to focus.
    pane_id: Option<String>,
    /// last: the previously active pane; next/previous wrap.
    direction: Option<PaneDirection>,
    #[serde(flatten)]
    window: WindowTarget,
}

/// The pane after (or before) the active one, wrapping around.
fn neighbour(panes: &[PaneInfo], forward: bool) -> Option<&PaneInfo> {
    let n = panes.len();
    let active = panes
        .iter()
        .position(|p| p.pane_active.as_deref() == Some("1"))
        .unwrap_or(0);
    let index = if forward {
        (active + 1) % n.max(1)
    } else {
        (active + n.max(1) - 1) % n.max(1)
    };
    panes.get(index)
}

async fn select_pane(Call { app, target, .. }: Call, args: SelectPaneArgs) -> ToolResult<PaneInfo> {
    let direction = match (&args.pane_id, args.direction) {
        (None, None) => return Err(ToolError::invalid("Provide either pane_id or direction.")),
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid(
                "Provide either pane_id or direction, not both.",
            ));
        }
        (Some(id), None) => {
            let pane = lookup::pane_id(id)?;
            target.run(Command::new("select-pane").target(pane)).await?;
            return app.pane_info(&target, pane).await;
        }
        (None, Some(direction)) => direction,
    };
    let id = args.window.id(&target).await?;
    let flag = match direction {
        PaneDirection::Up => "-U",
        PaneDirection::Down => "-D",
        PaneDirection::Left => "-L",
        PaneDirection::Right => "-R",
        PaneDirection::Last => "-l",
        PaneDirection::Next | PaneDirection::Previous => {
            // By absolute id: tmux's relative targets (`+`, `@1.+`) resolve
            // against a client's current window on older tmux.
            let panes = window_panes(&target, id).await?;
            let forward = matches!(direction, PaneDirection::Next);
            let next = neighbour(&panes, forward).ok_or_else(|| {
                ToolError::new(ErrorKind::NoPanesExist, "The window has no panes.")
            })?;
            let pane = next.pane_id;
            target.run(Command::new("select-pane").target(pane)).await?;
            return app.pane_info(&target, pane).await;
        }
    };
    target
        .run(Command::new("select-pane").target(id).flag(flag))
        .await?;
    let mut active = window_panes(&target, id)
        .await?
        .into_iter()
        .find(|p| p.pane_active.as_deref() == Some("1"))
        .ok_or_else(|| ToolError::new(ErrorKind::NoPanesExist, "The window has no active pane."))?;
    app.mark_caller(&target, &mut active);
    Ok(active)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SwapPaneArgs {
    /// Pane to move; returned in its new place.
    source_pane_id: String,
    // (no schema text) Pane ID (e.g. '%2') it trades places with.
    target_pane_id: String,
}

async fn swap_pane(Call { app, target, .. }: Call, args: SwapPaneArgs) -> ToolResult<PaneInfo> {
    let source = lookup::pane_id(&args.source_pane_id)?;
    let other = lookup::pane_id(&args.target_pane_id)?;
    tokio::try_join!(
        lookup::pane_row(&target, source),
        lookup::pane_row(&target, other)
    )?;
    // -d: the active pane stays the active pane (it moves with its process).
    let cmd = Command::new("swap-pane")
        .flag("-d")
        .opt("-s", source.to_string())
        .target(other);
    target.run(cmd).await?;
    app.pane_info(&target, source).await
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EnterCopyModeArgs {
    #[serde(flatten)]
    pane: PaneSel,
    /// Lines to scroll back.
    scroll_up: Option<i64>,
}

async fn enter_copy_mode(
    Call { app, target, .. }: Call,
    args: EnterCopyModeArgs,
) -> ToolResult<PaneInfo> {
    let scroll_up = args.scroll_up.unwrap_or(0);
    if scroll_up < 0 {
        return Err(ToolError::invalid(format!(
            "scroll_up must be zero or positive (received {scroll_up})"
        )));
    }
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    target.run(Command::new("copy-mode").target(pane)).await?;
    if scroll_up > 0 {
        // tmux repeats the command count times, so the count is capped at
        // the scrollback: further lines would scroll nothing.
        let history: i64 = pane_vars(&target, pane, &["history_size"]).await?[0]
            .parse()
            .unwrap_or(0);
        let count = scroll_up.min(history);
        if count > 0 {
            let cmd = Command::new("send-keys")
                .flag("-X")
                .opt("-N", count.to_string())
                .target(pane)
                .arg("scroll-up");
            target.run(cmd).await?;
        }
    }
    app.pane_info(&target, pane).await
}

async fn exit_copy_mode(Call { app, target, .. }: Call, args: PaneArgs) -> ToolResult<PaneInfo> {
    let pane = lookup::resolve_pane(&target, &args.pane).await?;
    let mode = pane_vars(&target, pane, &["pane_mode"]).await?.remove(0);
    // Only copy mode (and its read-only variant) takes `cancel`; other
    // modes (clock, tree) are left as they are.
    if mode == "copy-mode" || mode == "view-mode" {
        let cmd = Command::new("send-keys")
            .flag("-X")
            .target(pane)
            .arg("cancel");
        match target.hub.run(&cmd).await {
            // The user left the mode between the read and the cancel.
            Err(TmuxError::Command(msg)) if msg.contains("not in a mode") => {}
            other => {
                other?;
            }
        }
    }
    app.pane_info(&target, pane).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::shared::models::PaneGeometry;

    fn pane(id: &str, active: bool, at: [bool; 4], left: i64, top: i64) -> PaneInfo {
        PaneInfo {
            pane_id: id.parse().expect("a pane id"),
            geometry: PaneGeometry {
                pane_left: Some(left),
                pane_top: Some(top),
                pane_at_left: Some(at[0]),
                pane_at_right: Some(at[1]),
                pane_at_top: Some(at[2]),
                pane_at_bottom: Some(at[3]),
                ..PaneGeometry::default()
            },
            pane_active: Some(if active { "1" } else { "0" }.into()),
            ..PaneInfo::default()
        }
    }

    #[test]
    fn next_and_previous_wrap() {
        let panes = vec![
            pane("%1", false, [true; 4], 0, 0),
            pane("%2", false, [true; 4], 0, 0),
            pane("%3", true, [true; 4], 0, 0),
        ];
        assert_eq!(neighbour(&panes, true).unwrap().pane_id, PaneId(1));
        assert_eq!(neighbour(&panes, false).unwrap().pane_id, PaneId(2));
        assert!(neighbour(&[], true).is_none());
    }

    #[test]
    fn corners_prefer_the_pane_furthest_right_and_down() {
        let single = vec![pane("%1", true, [true; 4], 0, 0)];
        for corner in [Corner::TopLeft, Corner::BottomRight] {
            assert_eq!(pane_at(single.clone(), corner).unwrap().pane_id, PaneId(1));
        }
        let split = vec![
            pane("%1", true, [true, false, true, true], 0, 0),
            pane("%2", false, [false, true, true, true], 50, 0),
        ];
        assert_eq!(
            pane_at(split.clone(), Corner::TopRight).unwrap().pane_id,
            PaneId(2)
        );
        assert_eq!(
            pane_at(split, Corner::BottomLeft).unwrap().pane_id,
            PaneId(1)
        );
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(cells("height", Some(5)).unwrap().as_deref(), Some("5"));
        assert!(cells("height", Some(0)).is_err());
        assert!(cells("width", Some(10_001)).is_err());
        assert_eq!(cells("width", None).unwrap(), None);
    }
}
