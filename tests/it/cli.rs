//! The command line, run as a user runs it: `--help`, `call`, `tools`,
//! `doctor` and `serve`, against a private tmux server.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::PrivateTmux;

const BIN: &str = env!("CARGO_BIN_EXE_tmux-mcp");

/// The binary with a clean environment pointed at `tmux` (if any).
fn tmux_mcp(tmux: Option<&PrivateTmux>, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args);
    for var in [
        "TMUX",
        "TMUX_PANE",
        "LIBTMUX_SOCKET_PATH",
        "LIBTMUX_TOOLSETS",
        "LIBTMUX_TOOLS",
        "LIBTMUX_EXCLUDE_TOOLS",
        "LIBTMUX_TMUX_BIN",
    ] {
        command.env_remove(var);
    }
    match tmux {
        Some(tmux) => command.env("LIBTMUX_SOCKET", &tmux.name),
        None => command.env("LIBTMUX_SOCKET", "tmuxmcp-cli-test-no-server"),
    };
    command
}

fn run(mut command: Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("tmux-mcp runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// Every `"LIBTMUX_…"`, `"TMUX…"` and `"FASTMCP_…"` string literal in `src/`,
/// plus the variables read through `var_os`: what the binary may read.
fn variables_in_source() -> BTreeSet<String> {
    let pattern = regex::Regex::new(r#""((?:LIBTMUX|TMUX|FASTMCP)[A-Z_]*|HOME|PATH)""#).unwrap();
    let mut found = BTreeSet::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src"
    ))];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for capture in pattern.captures_iter(&text) {
                    found.insert(capture[1].to_owned());
                }
            }
        }
    }
    found
}

#[test]
fn help_lists_every_environment_variable_the_source_reads() {
    let (code, help, _) = run(tmux_mcp(None, &["--help"]));
    assert_eq!(code, 0);
    for command in ["serve", "call", "tools", "doctor", "demo"] {
        assert!(help.contains(&format!("  {command} ")), "{command}: {help}");
    }
    let variables = variables_in_source();
    assert!(variables.contains("LIBTMUX_TMUX_BIN"), "{variables:?}");
    for variable in variables {
        assert!(help.contains(&variable), "--help omits {variable}");
    }
}

#[test]
fn call_prints_the_result_text_and_exits_by_its_outcome() {
    let tmux = PrivateTmux::start();
    let (code, out, _) = run(tmux_mcp(Some(&tmux), &["call", "list_sessions", "{}"]));
    assert_eq!(code, 0, "{out}");
    let sessions: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON text");
    assert_eq!(sessions[0]["session_name"], "main", "{out}");

    let (code, out, _) = run(tmux_mcp(
        Some(&tmux),
        &["call", "get_session_info", r#"{"session_name": "nope"}"#],
    ));
    assert_eq!(code, 1, "an isError result: {out}");
    assert!(out.contains("nope"), "{out}");

    let (code, _, err) = run(tmux_mcp(Some(&tmux), &["call", "kill_pane"]));
    assert_eq!(code, 1);
    assert!(err.contains("teardown toolset"), "{err}");
    assert!(err.contains("LIBTMUX_TOOLSETS="), "{err}");

    let (code, _, err) = run(tmux_mcp(Some(&tmux), &["call", "list_sessions", "[1]"]));
    assert_eq!(code, 2, "arguments must be an object: {err}");
}

#[test]
fn tools_lists_each_tool_with_its_toolset() {
    let mut command = tmux_mcp(None, &["tools"]);
    command.env("LIBTMUX_EXCLUDE_TOOLS", "send_keys");
    let (code, out, _) = run(command);
    assert_eq!(code, 0);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}: {out}"))
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("list_panes"), ["list_panes", "inspect", "on"]);
    assert_eq!(row("kill_pane"), ["kill_pane", "teardown", "off"]);
    assert_eq!(row("send_keys"), ["send_keys", "execute", "off"]);
    assert!(out.contains("53 of 60 tools served"), "{out}");
}

#[test]
fn doctor_passes_with_a_working_tmux_and_fails_without_one() {
    let tmux = PrivateTmux::start();
    let (code, out, _) = run(tmux_mcp(Some(&tmux), &["doctor"]));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok    tmux: "), "{out}");
    assert!(out.contains(&tmux.name), "the socket it uses: {out}");
    assert!(out.contains("answers, 1 session(s): main"), "{out}");
    assert!(out.contains("TMUX_PANE"), "the caller check: {out}");
    assert!(out.contains("ok    scope: server: "), "{out}");

    let mut command = tmux_mcp(Some(&tmux), &["doctor"]);
    command.env("TMUX_MCP_SCOPE", "owned");
    let (code, out, _) = run(command);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ok    scope: owned: only the sessions"),
        "{out}"
    );

    let mut command = tmux_mcp(Some(&tmux), &["doctor"]);
    command.env("TMUX_MCP_SCOPE", "everything");
    let (code, out, _) = run(command);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  settings: TMUX_MCP_SCOPE must be"),
        "{out}"
    );

    let mut command = tmux_mcp(Some(&tmux), &["doctor"]);
    command.env("LIBTMUX_TMUX_BIN", "/nonexistent/tmux");
    let (code, out, _) = run(command);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  tmux"), "{out}");
    assert!(out.contains("LIBTMUX_TMUX_BIN"), "{out}");

    // A tmux older than the oldest supported release, binary and server.
    let old = std::env::temp_dir().join(format!("tmuxmcp-old-tmux-{}", std::process::id()));
    let script = "#!/bin/sh\n[ \"$1\" = -V ] && echo 'tmux 3.1c' || echo '3.1c main'\n";
    std::fs::write(&old, script).unwrap();
    std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut command = tmux_mcp(Some(&tmux), &["doctor"]);
    command.env("LIBTMUX_TMUX_BIN", &old);
    let (code, out, _) = run(command);
    std::fs::remove_file(&old).unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  tmux: tmux 3.1c is older than 3.2"),
        "{out}"
    );
    assert!(out.contains("FAIL  server: it runs tmux 3.1c"), "{out}");

    let mut command = tmux_mcp(Some(&tmux), &["doctor"]);
    command.env("TMUX", "/tmp/x,1,0");
    let (code, out, _) = run(command);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("TMUX arrived but TMUX_PANE did not"), "{out}");
}

#[test]
fn serve_is_also_the_explicit_command() {
    let mut command = tmux_mcp(None, &["serve"]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
    );
}

/// Both names are the same program, and `--version` says the name it was
/// started by and the crate's version (what the packages' checks read).
#[test]
fn version_under_both_names() {
    for (bin, name) in [
        (BIN, "tmux-mcp"),
        (env!("CARGO_BIN_EXE_mcp-server-tmux"), "mcp-server-tmux"),
    ] {
        let mut command = Command::new(bin);
        command.arg("--version");
        let (code, out, _) = run(command);
        assert_eq!(code, 0);
        assert_eq!(out, format!("{name} {}\n", env!("CARGO_PKG_VERSION")));
    }
}
