//! `tmux-mcp demo`. (In progress.)
