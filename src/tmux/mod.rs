//! The tmux side: parsing control mode, building commands, speaking control
//! mode over a pipe, and the processes behind the pipes.

pub mod backoff;
pub mod child;
pub mod command;
pub mod connection;
pub mod control;
pub mod door;
pub mod error;
pub mod format;
pub mod history;
pub mod hosts;
pub mod hub;
pub mod hubs;
pub mod layout;
pub mod oneshot;
pub mod output;
pub mod pipe;
#[cfg(test)]
pub mod scripted;
pub mod socket;
pub mod ssh;
pub mod version;

pub use crate::ids::{PaneId, SessionId, WindowId};
pub use command::Command;
pub use connection::quiet;
pub use error::TmuxError;
