//! `mcp-server-tmux`: the name the packages carry (crates.io, PyPI, npm);
//! the same program as `tmux-mcp`.

fn main() -> std::process::ExitCode {
    tmux_mcp::cli::main()
}
