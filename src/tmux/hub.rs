//! The control clients of one tmux server, and the registry of servers. (In progress.)
