//! The tmux side: parsing control mode, building commands, and the tasks
//! that own `tmux -C` children.

pub mod command;
pub mod connection;
pub mod control;
pub mod error;
pub mod hub;
pub mod ids;
pub mod socket;

pub use command::Command;
pub use error::TmuxError;
pub use ids::{PaneId, SessionId, WindowId};
