//! The binary's startup: bad settings fail before any MCP traffic, with a
//! message that says what is valid; deprecated ones warn and go on.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(env: &[(&str, &str)], stdin: &str) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tmux-mcp"));
    cmd.env_remove("LIBTMUX_SAFETY")
        .env_remove("LIBTMUX_TOOLSETS")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A server that refuses to start may exit before reading: a broken pipe
    // here is expected, and its exit status is what the tests check.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
"#;

#[test]
fn unknown_toolsets_and_tools_fail_startup_listing_the_valid_ones() {
    let out = run(&[("LIBTMUX_TOOLSETS", "inspect,bogus")], INIT);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bogus") && err.contains("inspect, manage, execute, teardown"),
        "{err}"
    );

    let out = run(&[("LIBTMUX_TOOLS", "no_such_tool")], INIT);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no_such_tool") && err.contains("list_panes"),
        "{err}"
    );

    let out = run(&[("LIBTMUX_SUPPRESS_HISTORY", "yes")], INIT);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn deprecated_safety_warns_and_maps_to_toolsets() {
    let out = run(&[("LIBTMUX_SAFETY", "readonly")], INIT);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LIBTMUX_SAFETY") && err.contains("LIBTMUX_TOOLSETS=inspect"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let list: serde_json::Value =
        serde_json::from_str(stdout.lines().nth(1).expect("tools/list answered")).unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"list_panes") && !names.contains(&"send_keys"),
        "{names:?}"
    );
}

#[test]
fn help_and_version() {
    let out = Command::new(env!("CARGO_BIN_EXE_tmux-mcp"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("tmux-mcp "));
    let out = Command::new(env!("CARGO_BIN_EXE_tmux-mcp"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: tmux-mcp"));
    let out = Command::new(env!("CARGO_BIN_EXE_tmux-mcp"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
