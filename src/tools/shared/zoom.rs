//! What our tools do around tmux's zoom bugs: on a release where resizing
//! a pane of a zoomed window crashes tmux, or destroying a zoomed window
//! does, the window is unzoomed first, and our zooms, resizes and
//! teardowns on that server take turns, so no call of ours zooms a window
//! between another's unzoom and what it does next.

use tokio::sync::OwnedMutexGuard;

use crate::tmux::format::Schema;
use crate::tmux::{Command, SessionId, WindowId};
use crate::tools::shared::guard::Doomed;
use crate::tools::{Target, ToolResult};

/// Held while a call unzooms a window and then resizes or destroys it.
pub type Turn = OwnedMutexGuard<()>;

/// This server's turn, on a release with one of the zoom bugs
/// ([`Features::unzoom_before_resize`], [`Features::unzoom_before_teardown`]);
/// `None` elsewhere: those calls need not wait for each other.
///
/// [`Features::unzoom_before_resize`]: crate::tmux::version::Features::unzoom_before_resize
/// [`Features::unzoom_before_teardown`]: crate::tmux::version::Features::unzoom_before_teardown
pub async fn turn(target: &Target) -> Option<Turn> {
    let features = target.hub.features().await;
    if !features.unzoom_before_resize && !features.unzoom_before_teardown {
        return None;
    }
    Some(target.server.resizes.turn().await)
}

/// On a release where destroying a zoomed window crashes tmux
/// ([`Features::unzoom_before_teardown`]), unzooms the zoomed windows that
/// `doomed` (the server, or a session) destroys, right before the kill,
/// and returns this server's [`turn`], to hold until the kill is done (a
/// server that does not answer fails here, before the kill is tried). The zoom of a window that lives on in another
/// session stays as the person sees it. Not covered: a person zooming or
/// unzooming the window between the listing and the kill.
///
/// [`Features::unzoom_before_teardown`]: crate::tmux::version::Features::unzoom_before_teardown
pub async fn unzoom_doomed(target: &Target, doomed: Doomed) -> ToolResult<Option<Turn>> {
    if !target.hub.features_or_err().await?.unzoom_before_teardown {
        return Ok(None);
    }
    let turn = turn(target).await;
    // One row per link of a window into a session, every session's.
    let list = Command::new("list-windows")
        .flag("-a")
        .opt("-F", LINKS.template());
    let links = links(&target.run(list).await?);
    for window in zoomed_and_doomed(&links, doomed) {
        // `-Z` toggles: the window is zoomed, so this unzooms it.
        let unzoom = Command::new("resize-pane").flag("-Z").target(window);
        target.run(unzoom).await?;
    }
    Ok(turn)
}

/// A window's link into a session, as `list-windows -a` lists it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Link {
    session: SessionId,
    window: WindowId,
    zoomed: bool,
}

/// What `list-windows -a` says of a link.
#[derive(Default)]
struct LinkRow {
    session: Option<SessionId>,
    window: Option<WindowId>,
    zoomed: bool,
}

const LINKS: Schema<LinkRow> = Schema(&[
    ("session_id", |l, v| {
        l.session = SessionId::parse(v.as_bytes())
    }),
    ("window_id", |l, v| l.window = WindowId::parse(v.as_bytes())),
    ("window_zoomed_flag", |l, v| l.zoomed = v == "1"),
]);

/// The links of a `list-windows -a` reply; a row that is not one is
/// skipped.
fn links(reply: &[Vec<u8>]) -> Vec<Link> {
    let link = |r: LinkRow| {
        Some(Link {
            session: r.session?,
            window: r.window?,
            zoomed: r.zoomed,
        })
    };
    LINKS.parse(reply).into_iter().filter_map(link).collect()
}

/// The zoomed windows `doomed` destroys, each once: every one for the
/// server; for a session, those linked into no other session (a window
/// also in another session, or in another session of its group, lives on).
/// tmux unzooms a window itself before `kill-window`, or `kill-pane` of
/// its last pane, unlinks it: those need nothing.
fn zoomed_and_doomed(links: &[Link], doomed: Doomed) -> Vec<WindowId> {
    let destroyed = |window: WindowId| match doomed {
        Doomed::Server => true,
        Doomed::Session(session) => links
            .iter()
            .filter(|l| l.window == window)
            .all(|l| l.session == session),
        Doomed::Window(_) | Doomed::Pane(_) | Doomed::Respawned(_) => false,
    };
    let mut windows: Vec<WindowId> = links
        .iter()
        .filter(|l| l.zoomed && destroyed(l.window))
        .map(|l| l.window)
        .collect();
    windows.sort();
    windows.dedup();
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply tmux prints for `text`'s rows (`␞` between fields, `␟`
    /// after each row).
    fn listed(text: &str) -> Vec<Link> {
        let rows = text
            .lines()
            .map(|l| l.replace(' ', "\u{241E}") + "\u{241F}");
        links(&rows.map(String::into_bytes).collect::<Vec<_>>())
    }

    #[test]
    fn a_session_destroys_the_zoomed_windows_no_other_session_holds() {
        // @1 zoomed, only in $0 (twice); @2 zoomed, also in $1; @3 not
        // zoomed; @4 zoomed, only in $1.
        let all = listed("$0 @1 1\n$0 @1 1\n$0 @2 1\n$1 @2 1\n$0 @3 0\n$1 @4 1\n");
        let id = WindowId;
        assert_eq!(
            zoomed_and_doomed(&all, Doomed::Session(SessionId(0))),
            [id(1)]
        );
        assert_eq!(
            zoomed_and_doomed(&all, Doomed::Session(SessionId(1))),
            [id(4)]
        );
        assert_eq!(
            zoomed_and_doomed(&all, Doomed::Server),
            [id(1), id(2), id(4)]
        );
        assert!(zoomed_and_doomed(&all, Doomed::Window(id(1))).is_empty());
    }

    #[test]
    fn lines_that_are_not_links_are_skipped() {
        for bad in ["", "$0 @1", "$x @1 1", "$0 %1 1", "@1 $0 1", "\u{ff}"] {
            assert_eq!(listed(bad), [], "{bad:?}");
        }
        let link = listed("$2 @7 1")[0];
        assert!(link.zoomed && link.window == WindowId(7));
    }
}
