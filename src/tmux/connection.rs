//! One control client: the task that owns a `tmux -C` child. (In progress.)
