//! Typing a command into a shell and reading its output and exit status
//! back: `run_command`'s machinery, and the last command of a pane.
//!
//! The command's output is found in the pane's raw recording between two
//! delimiters ([`span`]): the shell's own OSC 133 marks when it emits them
//! and the command runs in the live shell (then the command is typed as
//! is), else the markers of the wrapper line run_command types
//! ([`typed`]). tmux's screen drops both, so the pane shows what a person
//! would have typed and seen. Before typing, the pane's foreground must be
//! a shell ([`state`]); the prompt is awaited before and after
//! ([`prompt`]), and what a person left on its line refuses the input
//! ([`line`]). [`last`] reads the last command of a pane nobody drove;
//! [`handles`] keeps the commands that outlive their call, and
//! [`end_scripts`] the scripts their wrappers run beside the tmux socket.

pub mod end_scripts;
pub mod handles;
pub mod last;
pub mod line;
pub mod prompt;
pub mod span;
pub mod state;
pub mod typed;
