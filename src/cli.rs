//! The command line: `tmux-mcp [serve | call | tools | doctor | demo]`.
//!
//! Parsing is clap's; every command reads the same environment (the
//! reference's variable names, listed in `--help`) through [`crate::config::Config`] and
//! [`crate::tools::toolsets::Selection`], so `call` and `tools` show exactly what the server serves.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::Value;

use crate::mcp::{self, CallContext, Service};
use crate::tools::service::settings;
use crate::tools::{App, TmuxService};

/// Every environment variable tmux-mcp reads, for `--help`
/// (`tests/it/cli.rs` checks the list against the source).
const ENVIRONMENT: &str = "\
Environment (the names of libtmux-mcp, so settings carry over):
  LIBTMUX_SOCKET                 tmux -L socket name used when a call names none
  LIBTMUX_SOCKET_PATH            tmux -S socket path; wins over every socket_name
  LIBTMUX_TMUX_BIN               the tmux binary (default: tmux on PATH); set it to
                                 the full path when a GUI client's PATH lacks tmux
  TMUX_TMPDIR                    where tmux keeps its sockets (default /tmp)
  TMUX, TMUX_PANE                set by tmux inside a pane: the default server is
                                 then that one, and the caller's pane is marked
                                 is_caller and guarded (some clients drop them)
  LIBTMUX_TOOLSETS               toolsets served (default inspect,manage,execute;
                                 add teardown for kill_*, clear_pane, delete_buffer)
  LIBTMUX_TOOLS                  extra tools served whatever their toolset
  LIBTMUX_EXCLUDE_TOOLS          tools never served
  LIBTMUX_SAFETY                 deprecated: readonly | destructive, mapped to toolsets
  LIBTMUX_MCP_PROMPTS_AS_TOOLS   1: also serve the prompts as list_prompts/get_prompt
  LIBTMUX_MCP_WAIT_MAX_SECONDS   ceiling of every wait (1-120, default 30)
  LIBTMUX_SUPPRESS_HISTORY       0: run_command's commands enter shell history
  TMUX_MCP_IDLE_DETACH_SECONDS   our control clients leave a session after this
                                 long with nothing watched (default 30; 0: stay)
  TMUX_MCP_STREAMING_CLIENTS     sessions streamed at once per server (default 16)
  TMUX_MCP_SECRET_INPUT          allow: type into a pane asking for a password
                                 (default: refused, and the person is told)
  TMUX_MCP_HUMAN_QUIET_MS        agent input waits while a person typed this
                                 recently in the pane's window (default 1500; 0: off)
  TMUX_MCP_SCOPE                 what the tools reach: server (default), session
                                 (the one this server runs in, plus what it made)
                                 or owned (only what it made)
  TMUX_MCP_CONFIRM               teardown: kill_server/_session/_window ask the
                                 person first (MCP elicitation), else refuse
  TMUX_MCP_ATTENTION_OPTIONS     pane user options wait_for_attention reports as
                                 status (default @status,@agent_status,@claude_status)
  TMUX_MCP_PROBE                 how pane states are read: auto (default), linux
                                 (/proc) or portable (ps and the tty, as off Linux)
  FASTMCP_LOG_LEVEL              WARNING or above: no audit line per call on stderr
  TMUX_MCP_HOSTS                 remote hosts a call may reach, ALIAS=DESTINATION,...
                                 (ssh destinations); socket_name ALIAS:NAME is the
                                 tmux server NAME there, ALIAS: its default one
  TMUX_MCP_SSH                   the ssh program for those hosts (default ssh)
  HOME                           the start directory of spawned shells when none is given
  PATH                           where tmux is looked up when LIBTMUX_TMUX_BIN is unset

Logs go to stderr; stdout carries only MCP messages (or a command's output).";

#[derive(Parser)]
#[command(
    name = "tmux-mcp",
    version,
    about = "An MCP server that drives tmux through control mode.",
    long_about = "An MCP server that drives tmux through control mode.\n\n\
                  Without a command it serves MCP (JSON-RPC 2.0, every revision from \
                  2024-11-05 to 2026-07-28) on stdin/stdout, which is how MCP clients start it.",
    after_help = ENVIRONMENT
)]
struct Cli {
    #[command(subcommand)]
    command: Option<CliCommand>,
}

#[derive(Subcommand)]
enum CliCommand {
    /// Serve MCP on stdin/stdout (what happens without a command)
    Serve,
    /// Call one tool against the configured tmux and print the result's text
    /// (exit status 1 when the result is an error)
    Call {
        /// The tool's name, as `tmux-mcp tools` lists it
        tool: String,
        /// The arguments, one JSON object
        #[arg(default_value = "{}")]
        arguments: String,
        /// Write the result's image (snapshot_pane with format "png") to this file
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// List every tool with its toolset and whether this environment serves it
    Tools,
    /// Check tmux, the socket, the toolsets and what the MCP client passed us
    Doctor,
    /// Drive this server through a short narrated session on a private tmux
    Demo {
        /// Print the raw JSON-RPC exchange instead of the narration
        #[arg(long)]
        json: bool,
    },
}

/// The names this program is installed under: `tmux-mcp`, and
/// `mcp-server-tmux`, the name of its packages.
const NAMES: [&str; 2] = ["tmux-mcp", "mcp-server-tmux"];

pub fn main() -> ExitCode {
    // `--version` and `--help` say the name it was started by.
    let started_as = std::env::args_os()
        .next()
        .and_then(|arg0| {
            let stem = std::path::Path::new(&arg0).file_stem()?.to_owned();
            NAMES.into_iter().find(|name| stem == **name)
        })
        .unwrap_or(NAMES[0]);
    let matches = Cli::command().name(started_as).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command.unwrap_or(CliCommand::Serve) {
        CliCommand::Serve => report(serve()),
        CliCommand::Call {
            tool,
            arguments,
            out,
        } => call(&tool, &arguments, out.as_deref()),
        CliCommand::Tools => report(tools()),
        CliCommand::Doctor => crate::doctor::run(),
        CliCommand::Demo { json } => report(crate::demo::run(json)),
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn serve() -> anyhow::Result<()> {
    let (config, catalog, selection) = settings()?;
    runtime()?.block_on(async move {
        let (max_line, max_queued) = (config.limits.stdin_line, config.limits.stdout_queue);
        let app = App::with_selection(config, selection);
        let service = Arc::new(TmuxService::with_catalog(app, catalog));
        let (stdin, stdout) = stdio();
        let result = mcp::serve_with(stdin, stdout, service.clone(), max_line, max_queued).await;
        service.shutdown().await;
        result
    })
}

type ServeInput = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
type Output = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// stdin and stdout, read and written by the event loop itself when they
/// are pipes (as an MCP client starts us): tokio's own stdin and stdout
/// hand every read and write to a blocking thread and back. Anything else
/// (a terminal, a file) goes through tokio's.
fn stdio() -> (ServeInput, Output) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let input = std::io::stdin().as_fd().try_clone_to_owned();
    let input: ServeInput = match input.map(pipe::Receiver::from_owned_fd) {
        Ok(Ok(pipe)) => Box::new(pipe),
        _ => Box::new(tokio::io::stdin()),
    };
    let output = std::io::stdout().as_fd().try_clone_to_owned();
    let output: Output = match output.map(pipe::Sender::from_owned_fd) {
        Ok(Ok(pipe)) => Box::new(pipe),
        _ => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

fn call(tool: &str, arguments: &str, out: Option<&std::path::Path>) -> ExitCode {
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) | Err(_) => {
            eprintln!("tmux-mcp: the arguments must be one JSON object, such as '{{}}'");
            return ExitCode::from(2);
        }
    };
    let outcome = settings().and_then(|(mut config, catalog, selection)| {
        // The result is printed; a second line per call on stderr is noise.
        config.audit = false;
        runtime()?.block_on(async move {
            let app = App::with_selection(config, selection);
            let service = TmuxService::with_catalog(app, catalog);
            let started = service.call_tool(tool, arguments, CallContext::detached());
            let result = match started {
                Some(future) => Ok(future.await),
                None => Err(service.unknown_tool(tool)),
            };
            service.shutdown().await;
            Ok(result)
        })
    });
    match outcome {
        Ok(Ok(result)) => {
            let texts: Vec<&str> = result
                .content
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect();
            match (&result.structured_content, texts.is_empty()) {
                // An empty list has no content block: show the value itself.
                (Some(value), true) => {
                    println!("{}", value.get("result").unwrap_or(value));
                }
                _ => texts.iter().for_each(|text| println!("{text}")),
            }
            let image = result
                .content
                .iter()
                .find(|block| block["type"] == "image")
                .and_then(|block| block["data"].as_str());
            match (image, out) {
                (Some(data), Some(path)) => {
                    let written = crate::mcp::unbase64(data)
                        .ok_or_else(|| anyhow::anyhow!("the image is not base64"))
                        .and_then(|png| Ok(std::fs::write(path, png)?));
                    if let Err(e) = written {
                        eprintln!("tmux-mcp: {}: {e:#}", path.display());
                        return ExitCode::FAILURE;
                    }
                }
                (Some(_), None) => {
                    eprintln!("tmux-mcp: the result is an image: --out FILE writes it")
                }
                (None, Some(_)) if !result.is_error => {
                    eprintln!("tmux-mcp: the result has no image to write");
                    return ExitCode::FAILURE;
                }
                (None, _) => {}
            }
            if result.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Ok(Err(unknown)) => {
            eprintln!("tmux-mcp: {unknown}");
            ExitCode::FAILURE
        }
        Err(e) => report(Err(e)),
    }
}

fn tools() -> anyhow::Result<()> {
    let (config, catalog, selection) = settings()?;
    let app = App::with_selection(config, selection);
    let served = TmuxService::with_catalog(app.clone(), catalog);
    let (mut on, mut every) = (0, 0);
    for tool in served.catalog().all() {
        every += 1;
        let (name, set) = (tool.name, tool.toolset.name());
        let state = if served.hidden_because(name).is_none() {
            on += 1;
            "on "
        } else {
            "off"
        };
        println!("{name:<24} {set:<9} {state}  {}", tool.title);
    }
    println!(
        "\n{on} of {} tools served (toolsets: {}). LIBTMUX_TOOLSETS, LIBTMUX_TOOLS and \
         LIBTMUX_EXCLUDE_TOOLS choose them; see tmux-mcp --help.",
        every,
        app.selection.describe()
    );
    Ok(())
}
