//! Flag-like values (`-u`, `-g`, `-k`, `-t`) in every string argument of
//! every tool, against a private tmux server: tmux never reads one as a
//! flag (no usage error, nothing but the named object changes), and
//! environment variable names must be POSIX names.

use std::time::Duration;

use crate::support::{PrivateTmux, call, err, ok};
use serde_json::{Map, Value, json};
use tmux_mcp::mcp::Service;

const FLAGS: [&str; 4] = ["-u", "-g", "-k", "-t"];

/// What tmux says when it parsed a word as a flag, or ran out of words.
const PARSE_ERRORS: [&str; 5] = [
    "unknown flag",
    "usage:",
    "too many arguments",
    "not enough arguments",
    "invalid flag",
];

/// A valid value for a required argument that is not the one under test.
fn filler(name: &str, pane: &str, window: &str) -> Option<Value> {
    Some(match name {
        "pane_id" | "source_pane_id" | "target_pane_id" => json!(pane),
        "window_id" => json!(window),
        "keys" | "text" | "content" | "format_string" | "title" | "value" | "pattern" => json!("x"),
        "command" => json!("true"),
        "new_name" => json!("renamed"),
        "name" => json!("MCP_FLAG"),
        "layout" => json!("tiled"),
        "corner" => json!("top-left"),
        "channel" => json!("mcp-flag"),
        "option" => json!("@mcp_flag"),
        "hook_name" => json!("pane-exited"),
        "buffer_name" => json!("libtmux_mcp_flag"),
        "operations" => json!([]),
        "command_id" => json!("cmd-none"),
        _ => return None,
    })
}

fn window_of(tmux: &PrivateTmux, pane: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", pane, "#{window_id}"])
        .trim()
        .to_owned()
}

fn is_string(schema: &Value) -> bool {
    let typed = |s: &Value| match &s["type"] {
        Value::String(t) => t == "string",
        Value::Array(ts) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    typed(schema)
        || schema["anyOf"]
            .as_array()
            .is_some_and(|alts| alts.iter().any(typed))
}

#[tokio::test]
async fn flag_like_values_never_reach_tmux_as_flags() {
    let scratch = std::env::temp_dir().join(format!("tmuxmcp-flags-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    // A value such as `-t` given as pipe_pane's output_path is a relative
    // file name: the tmux server works in a scratch directory, so it is not
    // written where the tests run (nor is this process's directory changed
    // under the tests running beside this one).
    let tmux = PrivateTmux::start_in(&scratch);
    let pane = tmux.first_pane();
    let window = window_of(&tmux, &pane);
    let env_before = tmux.cmd(&["show-environment", "-g"]);
    let svc = tmux.service();
    let mut calls = 0;
    for tool in svc.tools() {
        let name = tool["name"].as_str().unwrap().to_owned();
        let schema = &tool["inputSchema"];
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // respawn_pane(shell="-u") runs the program "-u", whose shell prints
        // an error and exits at once: with a control client attached, tmux
        // 3.3a and 3.7b were seen to crash on that respawn (reproduced with
        // tmux commands alone), which says nothing about flags. The builder's
        // `--` before every positional word is unit-tested in tmux::command.
        // create_session(socket_name="-u") would start a tmux server on the
        // socket "-u" in the user's TMUX_TMPDIR, outside this test's private
        // server; a socket name reaches tmux only as `-S <path>`, never as
        // a word tmux could read as a flag.
        let testable = |arg: &str| {
            !matches!(
                (name.as_str(), arg),
                ("respawn_pane", "shell") | ("create_session", "socket_name")
            )
        };
        for (arg, arg_schema) in props
            .iter()
            .filter(|(arg, s)| is_string(s) && testable(arg))
        {
            for flag in FLAGS {
                let mut args = Map::new();
                for req in required.iter().filter(|r| *r != arg) {
                    let value = filler(req, &pane, &window)
                        .unwrap_or_else(|| panic!("no value for {name}.{req}"));
                    args.insert((*req).into(), value);
                }
                if props.contains_key("timeout") {
                    args.insert("timeout".into(), json!(0.2));
                }
                args.insert(arg.clone(), json!(flag));
                let result = tokio::time::timeout(
                    Duration::from_secs(20),
                    call(&svc, &name, Value::Object(args)),
                )
                .await
                .unwrap_or_else(|_| panic!("{name}({arg}={flag}) did not answer"));
                calls += 1;
                let text = result
                    .content
                    .first()
                    .and_then(|c| c["text"].as_str())
                    .unwrap_or_default()
                    .to_lowercase();
                for sign in PARSE_ERRORS {
                    assert!(
                        !text.contains(sign),
                        "{name}({arg}={flag}) reached tmux as a flag: {text} ({arg_schema})"
                    );
                }
                let alive = tmux.try_cmd(&["display-message", "-p", "-t", &pane, "#{pane_id}"]);
                assert!(
                    alive.status.success(),
                    "{name}({arg}={flag}) took the first pane or the server with it"
                );
            }
        }
    }
    assert!(calls > 400, "only {calls} calls made");
    let env_after = tmux.cmd(&["show-environment", "-g"]);
    for line in env_after.lines().filter(|l| !env_before.contains(*l)) {
        assert!(
            line.starts_with("MCP_FLAG="),
            "a variable appeared in the global environment: {line}"
        );
    }
    drop(tmux);
    let _ = std::fs::remove_dir_all(&scratch);
}

#[tokio::test]
async fn flag_like_values_are_stored_literally() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let window = window_of(&tmux, &pane);
    let svc = tmux.service();
    for flag in FLAGS {
        ok(
            &svc,
            "set_environment",
            json!({ "name": "MCP_V", "value": flag }),
        )
        .await;
        assert_eq!(
            tmux.cmd(&["show-environment", "-g", "MCP_V"]),
            format!("MCP_V={flag}\n")
        );
        ok(
            &svc,
            "set_option",
            json!({ "option": "@mcp_v", "value": flag, "global_": true }),
        )
        .await;
        assert_eq!(tmux.cmd(&["show-options", "-gv", "@mcp_v"]).trim(), flag);
        let renamed = ok(
            &svc,
            "rename_window",
            json!({ "new_name": flag, "window_id": window }),
        )
        .await;
        assert_eq!(renamed["window_name"], flag);
        ok(
            &svc,
            "set_pane_title",
            json!({ "title": flag, "pane_id": pane }),
        )
        .await;
        assert_eq!(
            tmux.cmd(&["display-message", "-p", "-t", &pane, "#{pane_title}"])
                .trim(),
            flag
        );
        let shown = ok(
            &svc,
            "display_message",
            json!({ "format_string": flag, "pane_id": pane }),
        )
        .await;
        assert_eq!(shown, json!(flag));
        let session = ok(&svc, "create_session", json!({ "session_name": flag })).await;
        assert_eq!(session["session_name"], flag);
        ok(&svc, "kill_session", json!({ "session_name": flag })).await;
    }
}

#[tokio::test]
async fn environment_names_must_be_posix_names() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let svc = tmux.service();
    let before = tmux.cmd(&["show-environment", "-g"]);
    for name in ["-u", "-g", "-r", "1A", "A B", "A-B", "A=B", ""] {
        let msg = err(
            &svc,
            "set_environment",
            json!({ "name": name, "value": "FOO" }),
        )
        .await;
        assert!(msg.contains("POSIX name"), "{name:?}: {msg}");
        let env = json!({ name: "x" });
        for (tool, args) in [
            ("create_session", json!({ "environment": env })),
            ("create_window", json!({ "environment": env })),
            ("split_window", json!({ "environment": env })),
            (
                "respawn_pane",
                json!({ "pane_id": pane, "environment": env, "kill": true }),
            ),
        ] {
            let msg = err(&svc, tool, args).await;
            assert!(msg.contains("POSIX name"), "{tool} {name:?}: {msg}");
        }
    }
    assert_eq!(tmux.cmd(&["show-environment", "-g"]), before);
    assert_eq!(
        tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"]).trim(),
        pane,
        "nothing was created or respawned"
    );
    ok(
        &svc,
        "set_environment",
        json!({ "name": "_Ok_9", "value": "-u" }),
    )
    .await;
    assert_eq!(tmux.cmd(&["show-environment", "-g", "_Ok_9"]), "_Ok_9=-u\n");
}
