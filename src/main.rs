//! `tmux-mcp`: serve MCP on stdio (no arguments), or run the demo.

use std::process::ExitCode;
use std::sync::Arc;

use tmux_mcp::config::Config;
use tmux_mcp::mcp;
use tmux_mcp::tools::toolsets::Selection;
use tmux_mcp::tools::{App, TmuxService, tool_names};

const USAGE: &str = "\
usage: tmux-mcp [--help | --version | demo]

An MCP server that drives tmux through control mode.

  (no arguments)  serve MCP (JSON-RPC 2.0) on stdin/stdout; logs go to stderr
  demo            start a private tmux server, drive this server over stdio
                  through a short agent-like conversation, print each call
  --help          print this help
  --version       print the version

Environment (same names as libtmux-mcp): LIBTMUX_SOCKET, LIBTMUX_SOCKET_PATH,
LIBTMUX_TMUX_BIN, LIBTMUX_MCP_WAIT_MAX_SECONDS, LIBTMUX_SUPPRESS_HISTORY,
TMUX_TMPDIR, LIBTMUX_TOOLSETS (default inspect,manage,execute; add teardown
for kill_*), LIBTMUX_TOOLS, LIBTMUX_EXCLUDE_TOOLS.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => serve(),
        ["--help" | "-h"] => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        ["--version" | "-V"] => {
            println!("tmux-mcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ["demo"] => report(tmux_mcp::demo::run()),
        other => {
            eprintln!("tmux-mcp: unexpected arguments {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tmux-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve() -> ExitCode {
    let (config, mut warnings) = match Config::from_env() {
        Ok(c) => c,
        Err(e) => return report(Err(e)),
    };
    let names = tool_names(config.prompts_as_tools);
    let selection = match Selection::from_vars(|n| std::env::var(n).ok(), &names, &mut warnings) {
        Ok(s) => s,
        Err(e) => return report(Err(e)),
    };
    for warning in warnings {
        eprintln!("tmux-mcp: warning: {warning}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return report(Err(e.into())),
    };
    report(runtime.block_on(async move {
        let (max_line, max_queued) = (config.limits.stdin_line, config.limits.stdout_queue);
        let app = App::new(config);
        let service = Arc::new(TmuxService::with_selection(app.clone(), selection));
        let (stdin, stdout) = (tokio::io::stdin(), tokio::io::stdout());
        let result = mcp::serve_with(stdin, stdout, service, max_line, max_queued).await;
        app.shutdown().await;
        result
    }))
}
