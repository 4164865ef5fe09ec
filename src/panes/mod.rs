//! Per-pane output state, sans-IO: the watched panes of a server
//! ([`registry`]), each one's byte history ([`ring`]), the escape-stripped
//! line view that matchers read ([`lines`]), and a waiter's reading of one
//! pane with its change signal ([`follow`]), the OSC sequences found in
//! a stream ([`osc`]): a shell's marks ([`marks`]), run_command's markers,
//! and where the bell rang ([`bell`]); a captured screen as styled cells
//! ([`screen`]); whether a stretch of stream rewrote the screen ([`wipe`]). Nothing here knows tmux.

pub mod attention;
pub mod bell;
pub mod follow;
pub mod lines;
pub mod marks;
pub mod matcher;
pub mod osc;
pub mod registry;
pub mod ring;
pub mod screen;
pub mod wipe;

pub use bell::BellScanner;
pub use follow::{Follower, ReadInfo};
pub use lines::LineView;
pub use ring::{Read, Ring};
