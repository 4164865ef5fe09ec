//! The tmux side: parsing control mode, building commands, and the tasks
//! that own `tmux -C` children.

pub mod command;
pub mod connection;
pub mod control;
pub mod error;
pub mod hub;
pub mod output;
pub mod socket;

pub use crate::ids::{PaneId, SessionId, WindowId};
pub use command::Command;
pub use error::TmuxError;
