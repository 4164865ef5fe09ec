//! The tmux release a server reports, and the one place where behaviour
//! that differs by release is decided ([`Features`]).
//!
//! A server's version comes from `#{version}` (asked with the first
//! command a hub runs), not from our `tmux` binary: a user may have
//! upgraded tmux while an old server runs on. A release older than
//! [`Version::OLDEST`] is refused ([`Version::is_supported`]); a version
//! that names no tmux number (OpenBSD's `openbsd-7.5`) reads as
//! [`Version::UNKNOWN`] and gets the oldest behaviour.

use std::fmt;

/// A tmux release as `major.minor` plus its letter (`3.5a` is 3, 5, 1;
/// `next-3.6` reads as 3.6). Ordered by release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u16,
    pub minor: u16,
    /// `a` is 1, `b` 2; 0 for none.
    pub patch: u8,
}

impl Version {
    /// What a server that does not say reads as: older than every release
    /// we gate on.
    pub const UNKNOWN: Version = Version::new(0, 0);

    /// The oldest release this server supports: Ubuntu 22.04's 3.2a is
    /// the oldest in the release matrix it is tested on.
    pub const OLDEST: Version = Version::new(3, 2);

    /// Whether a server of this release is served: [`Version::OLDEST`] or
    /// newer, or a version that names no number (not known to be older).
    pub fn is_supported(self) -> bool {
        self == Version::UNKNOWN || self >= Version::OLDEST
    }

    pub const fn new(major: u16, minor: u16) -> Version {
        Version {
            major,
            minor,
            patch: 0,
        }
    }

    /// Parses what `#{version}` or `tmux -V` prints: `3.5a`, `tmux 3.3a`,
    /// `next-3.6`, `3.4-rc`, `openbsd-7.5` (no tmux number: `None`).
    pub fn parse(text: &[u8]) -> Option<Version> {
        let text = std::str::from_utf8(text).ok()?.trim();
        let text = text.strip_prefix("tmux ").unwrap_or(text);
        let text = text.strip_prefix("next-").unwrap_or(text);
        let (major, rest) = text.split_once('.')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (minor, suffix) = rest.split_at(digits);
        let patch = match suffix.as_bytes().first() {
            Some(&c @ b'a'..=b'z') => c - b'a' + 1,
            _ => 0,
        };
        Some(Version {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
            patch,
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Version::UNKNOWN {
            return f.write_str("unknown (before 3.2)");
        }
        write!(f, "{}.{}", self.major, self.minor)?;
        if self.patch > 0 {
            write!(f, "{}", char::from(b'a' + self.patch - 1))?;
        }
        Ok(())
    }
}

/// What a server of a given release can do, decided once per server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// `refresh-client -A '%N:pause'` / `'%N:continue'` and `attach -f
    /// no-output` (3.2 on): unwatched panes can be muted, and commands can
    /// run on a client that is sent no output at all.
    ///
    /// `'%N:off'` is never used, on any release: before 3.7 it can crash
    /// the server when the pane has output queued, and when every attached
    /// client is a control client with the pane off, tmux stops reading the
    /// pane and its program blocks on write (measured: `seq 1 2000000` never
    /// finished on 3.5a and 3.7b; 3.3a kept reading). A paused pane is still
    /// read, so its program never waits for us.
    pub mute: bool,
    /// A notification to every control client reaches one still attaching
    /// (before 3.7), and crashes the server: our attaches and detaches are
    /// kept apart ([`super::door`]). A detach of ours while another of ours
    /// attached crashed 3.3a and 3.5a (SIGSEGV in `control_write`, from
    /// `control_notify_client_detached`), in 20 sessions' waits over 4
    /// streaming slots and 200 waits over 16; 3.7b did not.
    pub attach_alone: bool,
    /// `show-buffer` prints the buffer as it is (3.4 on); before, it
    /// escapes non-printable bytes the way `vis(3)` does.
    pub raw_show_buffer: bool,
    /// The `main-horizontal-mirrored` and `main-vertical-mirrored`
    /// layouts (3.5 on).
    pub mirrored_layouts: bool,
    /// tmux keeps a shell's OSC 133 marks per line (3.7 on), so the last
    /// command's output of a pane nobody watched can be read back.
    pub line_marks: bool,
    /// `respawn-pane` keeps the pane's output offsets, and every control
    /// client's offset for the pane, while it replaces the pane's input
    /// buffer with an empty one (before 3.8; tmux master resets them, tmux
    /// GitHub issue 5498). A control client whose offset for the pane lags
    /// (the pane was swapped out of its session while it streamed it, or
    /// its output is queued) holds the buffer undrained; after the respawn
    /// tmux reads the new output from that stale position and its escape
    /// parser runs off the buffer (SIGSEGV in `input_parse`). So the pane
    /// is paused on every streaming client of ours (which takes its offset
    /// out of the count) before a respawn, and streamed again after
    /// ([`super::hub::Hub::respawn`]). Needs [`Features::mute`].
    pub pause_before_respawn: bool,
    /// A notification a command causes is written inside its reply block
    /// (before 3.8): `refresh-client -A` prints its `%pause`/`%continue`
    /// between `%begin` and `%end`, so they are read from the reply
    /// ([`super::control::flow_notice`]). From 3.8 tmux defers every
    /// notification until the block closes: they come after `%end`, as
    /// notifications, and a reply line is only ever output.
    pub notices_in_reply: bool,
    /// `resize-pane -x`/`-y` of a pane of a zoomed window crashes tmux
    /// master (3.8-dev at c1f947a3c; SIGSEGV in `cmd_resize_pane_exec`):
    /// it reads the pane's layout cell before it unzooms the window, and
    /// while zoomed every pane but the zoomed one has none (a NULL
    /// `lc->parent` after the resize; for the zoomed pane itself, the cell
    /// the unzoom freed). So the window is unzoomed (`resize-pane -Z`)
    /// first, as tmux itself would before resizing.
    pub unzoom_before_resize: bool,
    /// Destroying a zoomed window crashes tmux 3.4 (not 3.3a, not 3.5a to
    /// 3.7c) and tmux master (3.8-dev at c1f947a3c): `kill-session` of its
    /// last session, or `kill-server`, aborts on a double free. On 3.4
    /// `window_destroy` unzooms the window, the unzoom queues a
    /// `window-layout-changed` notification holding a reference to the
    /// window being freed, and when it runs `window_remove_ref` (from
    /// `notify_callback`) frees the window again; 3.5 unzooms there without
    /// notifying. Master frees twice in `window_destroy` itself
    /// (`window.c:457`). `kill-window`, and `kill-pane` of a pane of a
    /// zoomed window, are safe: tmux unzooms the window before it unlinks
    /// it. So our `kill_session` and `kill_server` first unzoom
    /// (`resize-pane -Z`) the zoomed windows they destroy
    /// ([`crate::tools::shared::zoom::unzoom_doomed`]).
    pub unzoom_before_teardown: bool,
    /// Pane options, `set-option -p` (3.0 on): a pane's maker mark is a
    /// pane option; before, panes are left unmarked.
    pub pane_options: bool,
    /// `capture-pane -M` captures what a pane's mode shows (3.6 on): copy
    /// mode's view with its selection; before, the lines copy mode is
    /// scrolled to are captured from the pane's history.
    pub mode_capture: bool,
    /// A window made by `new-session` or `new-window` takes the size of
    /// the client that ran the command (before 3.3): 80x24 for a control
    /// client (80x23 for a detached CLI's `new-session`), not the asked
    /// `-x`/`-y` nor the size of the session's clients. 3.3 on leave a
    /// control client out of a new window's size (tmux CHANGES, 3.3). So
    /// a window we make is resized as 3.3 would have sized it
    /// ([`crate::tools::shared::spawn::fit_new_window`]).
    pub sized_by_own_client: bool,
    /// `delete-buffer -b NAME` of a buffer that is gone deletes the newest
    /// buffer instead, whoever's it is (the person's last copy), and
    /// succeeds (before 3.3; 3.3 fails with `unknown buffer`). So there a
    /// buffer is deleted only after a check that fails on a missing name,
    /// in the same command list ([`crate::drive::input::delete_buffer`]).
    pub delete_takes_newest: bool,
    /// `display-message -c CLIENT` shows a message on that client (3.3
    /// on). 3.2a declares `-c` without its argument, so every such call
    /// fails with a usage error: there a person is told by the bell alone
    /// ([`crate::drive::person`]).
    pub message_to_client: bool,
}

impl Features {
    pub fn of(version: Version) -> Features {
        Features {
            mute: version >= Version::new(3, 2),
            attach_alone: version < Version::new(3, 7),
            raw_show_buffer: version >= Version::new(3, 4),
            mirrored_layouts: version >= Version::new(3, 5),
            line_marks: version >= Version::new(3, 7),
            pause_before_respawn: version >= Version::new(3, 2) && version < Version::new(3, 8),
            notices_in_reply: version < Version::new(3, 8),
            unzoom_before_resize: version >= Version::new(3, 8),
            unzoom_before_teardown: (version >= Version::new(3, 4) && version < Version::new(3, 5))
                || version >= Version::new(3, 8),
            pane_options: version >= Version::new(3, 0),
            mode_capture: version >= Version::new(3, 6),
            sized_by_own_client: version < Version::new(3, 3),
            delete_takes_newest: version < Version::new(3, 3),
            message_to_client: version >= Version::new(3, 3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_order() {
        let v = |s: &str| Version::parse(s.as_bytes()).unwrap();
        assert_eq!(
            v("3.5a"),
            Version {
                major: 3,
                minor: 5,
                patch: 1
            }
        );
        assert_eq!(v("tmux 3.3a\n"), v("3.3a"));
        assert_eq!(v("next-3.6"), Version::new(3, 6));
        assert_eq!(v("3.4-rc"), Version::new(3, 4));
        assert!(v("3.3a") < v("3.3b") && v("3.3b") < v("3.4"));
        assert!(v("3.10") > v("3.9"));
        for bad in ["", "openbsd-7.5", "3", "x.y", "\u{ff}"] {
            assert_eq!(Version::parse(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(v("3.7b").to_string(), "3.7b");
        assert!(
            v("3.2").is_supported() && v("3.2a").is_supported() && v("next-3.8").is_supported()
        );
        assert!(!v("3.1c").is_supported() && !v("2.9a").is_supported());
        assert!(Version::UNKNOWN.is_supported());
    }

    #[test]
    fn features_follow_the_release_on_both_sides_of_each_gate() {
        let f = |s: &str| Features::of(Version::parse(s.as_bytes()).unwrap());
        assert!(!Features::of(Version::UNKNOWN).mute);
        assert!(!f("3.1c").mute && f("3.2").mute && f("3.3a").mute);
        assert!(f("3.3a").attach_alone && f("3.6b").attach_alone && !f("3.7").attach_alone);
        assert!(!f("3.3a").raw_show_buffer && f("3.4").raw_show_buffer);
        assert!(!f("3.4").mirrored_layouts && f("3.5").mirrored_layouts);
        assert!(!f("2.9a").pane_options && f("3.0").pane_options);
        assert!(!f("3.5a").mode_capture && f("3.6").mode_capture);
        assert!(f("3.2a").sized_by_own_client && !f("3.3").sized_by_own_client);
        assert!(f("3.2a").delete_takes_newest && !f("3.3a").delete_takes_newest);
        assert!(!f("3.2a").message_to_client && f("3.3a").message_to_client);
        assert!(!f("3.6a").line_marks && f("3.7").line_marks && f("next-3.8").line_marks);
        assert!(!Features::of(Version::UNKNOWN).pause_before_respawn);
        assert!(f("3.2").pause_before_respawn && f("3.3a").pause_before_respawn);
        assert!(f("3.7c").pause_before_respawn && !f("next-3.8").pause_before_respawn);
        assert!(!f("3.8").pause_before_respawn && !f("3.9").pause_before_respawn);
        assert!(f("3.3a").notices_in_reply && f("3.7c").notices_in_reply);
        assert!(!f("next-3.8").notices_in_reply && !f("3.8").notices_in_reply);
        assert!(!f("3.3a").unzoom_before_resize && !f("3.7c").unzoom_before_resize);
        assert!(f("next-3.8").unzoom_before_resize && f("3.9").unzoom_before_resize);
        assert!(!f("3.3a").unzoom_before_teardown && f("3.4").unzoom_before_teardown);
        assert!(f("3.4-rc").unzoom_before_teardown && !f("3.5").unzoom_before_teardown);
        assert!(!f("3.5a").unzoom_before_teardown && !f("3.7c").unzoom_before_teardown);
        assert!(f("next-3.8").unzoom_before_teardown && f("3.9").unzoom_before_teardown);
        assert!(!Features::of(Version::UNKNOWN).unzoom_before_teardown);
    }
}
