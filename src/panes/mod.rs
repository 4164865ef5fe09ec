//! Per-pane output state, sans-IO: the watched panes of a server
//! ([`registry`]), each one's byte history ([`ring`]), the escape-stripped
//! line view that matchers read ([`lines`]), and a waiter's reading of one
//! pane with its change signal ([`follow`]). Nothing here knows tmux.

pub mod follow;
pub mod lines;
pub mod matcher;
pub mod registry;
pub mod ring;

pub use follow::{Follower, ReadInfo};
pub use lines::LineView;
pub use ring::{Read, Ring};
