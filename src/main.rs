//! `tmux-mcp`: serve MCP on stdio (no command), or one of the commands of
//! [`tmux_mcp::cli`].

fn main() -> std::process::ExitCode {
    tmux_mcp::cli::main()
}
