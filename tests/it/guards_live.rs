//! Guards against a live private tmux: bad arguments to every tool change
//! nothing, the server refuses to kill what it runs in, and hidden toolsets
//! really are unreachable.

use crate::support::{PrivateTmux, call, err, ok};
use serde_json::{Value, json};
use tmux_mcp::mcp::{CallContext, Service};

/// Stops tmux renaming windows after the command they run (automatic-rename
/// lags behind the shell's exec, more so on a loaded machine), so [`state`]
/// changes only by what a tool does.
fn hold_names(tmux: &PrivateTmux) {
    tmux.cmd(&["set-option", "-gw", "automatic-rename", "off"]);
}

/// What a user would notice changing: objects, focus, sizes, buffers.
fn state(tmux: &PrivateTmux) -> String {
    [
        tmux.cmd(&[
            "list-sessions",
            "-F",
            "#{session_id} #{session_name} #{session_windows}",
        ]),
        tmux.cmd(&[
            "list-windows",
            "-a",
            "-F",
            "#{window_id} #{window_name} #{window_active} #{window_layout}",
        ]),
        tmux.cmd(&[
            "list-panes",
            "-a",
            "-F",
            "#{pane_id} #{pane_active} #{pane_pid} #{pane_title}",
        ]),
        tmux.cmd(&["list-buffers", "-F", "#{buffer_name}"]),
    ]
    .join("--\n")
}

/// A value of the wrong JSON type for a property of `schema` (`None` when
/// the property takes anything).
fn wrong_type(schema: &Value) -> Option<Value> {
    if schema.get("anyOf").is_some() {
        // The unions here are of objects, strings and integers.
        return Some(json!(true));
    }
    Some(match schema["type"].as_str()? {
        "string" => json!(12345),
        "integer" | "number" | "boolean" | "array" => json!("not this"),
        _ => json!(12345),
    })
}

#[tokio::test]
async fn bad_arguments_to_every_tool_are_refused_and_change_nothing() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    hold_names(&tmux);
    let before = state(&tmux);
    let tools = svc.tools();
    assert_eq!(tools.len(), 60);
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["inputSchema"];

        let unknown = err(&svc, name, json!({"no_such_argument": 1})).await;
        assert!(unknown.contains("no_such_argument"), "{name}: {unknown}");

        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !required.is_empty() {
            let missing = err(&svc, name, json!({})).await;
            assert!(
                missing.contains(required[0]) || missing.contains("missing"),
                "{name}: {missing}"
            );
        }
        for (arg, prop) in schema["properties"].as_object().unwrap() {
            // A wrong type for each argument, with the others well formed
            // enough to reach argument checking.
            let mut args = serde_json::Map::new();
            for req in &required {
                if req != arg {
                    args.insert(req.to_string(), placeholder(&schema["properties"][*req]));
                }
            }
            let Some(bad) = wrong_type(prop) else {
                continue;
            };
            args.insert(arg.clone(), bad);
            let result = call(&svc, name, Value::Object(args.clone())).await;
            assert!(result.is_error, "{name} accepted {args:?}");
        }
    }
    assert_eq!(state(&tmux), before, "a refused call changed tmux");
}

/// A well-typed value that names nothing real.
fn placeholder(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!("%999999"),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => json!({}),
    }
}

#[tokio::test]
async fn the_server_refuses_to_kill_what_it_runs_in() {
    let tmux = PrivateTmux::start();
    let pane = tmux.first_pane();
    let window = tmux
        .cmd(&["display-message", "-p", "-t", "main", "#{window_id}"])
        .trim()
        .to_owned();
    let socket = tmux.socket_path().display().to_string();
    let identity = format!("{socket},1,$0");
    let svc = tmux.service_with(&[("TMUX", identity.as_str()), ("TMUX_PANE", pane.as_str())]);
    let other = ok(&svc, "split_window", json!({"pane_id": pane})).await;
    hold_names(&tmux);
    let before = state(&tmux);

    for (tool, args) in [
        ("kill_pane", json!({"pane_id": pane})),
        ("respawn_pane", json!({"pane_id": pane})),
        ("kill_window", json!({"window_id": window})),
        ("kill_session", json!({"session_name": "main"})),
        ("kill_server", json!({})),
    ] {
        let refused = err(&svc, tool, args).await;
        assert!(refused.starts_with("Refusing to"), "{tool}: {refused}");
    }
    assert_eq!(state(&tmux), before);

    // is_caller marks our pane, and only ours.
    let panes = ok(&svc, "list_panes", json!({"session_name": "main"})).await;
    for p in panes.as_array().unwrap() {
        assert_eq!(p["is_caller"], p["pane_id"] == json!(pane), "{p}");
    }
    // Another pane of the same server can go.
    ok(&svc, "kill_pane", json!({"pane_id": other["pane_id"]})).await;
    // And a server this process does not run in can be killed.
    let elsewhere = PrivateTmux::start();
    let name = elsewhere.name.clone();
    ok(&svc, "kill_server", json!({"socket_name": name})).await;
    assert!(!elsewhere.try_cmd(&["list-sessions"]).status.success());
}

/// Nested tmux: this MCP server runs in the inner server (`$TMUX`), whose
/// client runs in a pane of an outer server. Killing that pane, its window,
/// its session or the outer server would take the caller's client with it.
#[tokio::test]
async fn the_server_refuses_to_kill_what_hosts_its_client_in_nested_tmux() {
    let outer = PrivateTmux::start();
    let inner = PrivateTmux::start();
    inner.cmd(&["set-hook", "-g", "client-attached", "wait-for -S attached"]);
    let host = outer.first_pane();
    let host_window = outer
        .cmd(&["display-message", "-p", "-t", &host, "#{window_id}"])
        .trim()
        .to_owned();
    outer.cmd(&["new-session", "-d", "-s", "spare"]);
    let attach = format!(
        "env -u TMUX tmux -L {} -f /dev/null attach -t main",
        inner.name
    );
    outer.cmd(&["send-keys", "-t", &host, &attach, "Enter"]);
    inner
        .wait_for("attached", std::time::Duration::from_secs(15))
        .await;

    let identity = format!("{},1,$0", inner.socket_path().display());
    let inner_pane = inner.first_pane();
    let svc = outer.service_with(&[
        ("TMUX", identity.as_str()),
        ("TMUX_PANE", inner_pane.as_str()),
    ]);
    hold_names(&outer);
    let before = state(&outer);
    for (tool, args) in [
        ("kill_pane", json!({"pane_id": host})),
        ("kill_window", json!({"window_id": host_window})),
        ("kill_session", json!({"session_name": "main"})),
        ("kill_server", json!({})),
    ] {
        let refused = err(&svc, tool, args).await;
        assert!(
            refused.starts_with("Refusing to") && refused.contains("nested tmux"),
            "{tool}: {refused}"
        );
    }
    assert_eq!(state(&outer), before);
    assert_ne!(
        inner.cmd(&["list-clients"]).trim(),
        "",
        "the client is still attached"
    );
    // What does not host the client can go.
    ok(&svc, "kill_session", json!({"session_name": "spare"})).await;
}

#[tokio::test]
async fn hidden_toolsets_are_unreachable() {
    use tmux_mcp::config::Config;
    use tmux_mcp::tools::toolsets::Selection;
    use tmux_mcp::tools::{App, TmuxService};

    let tmux = PrivateTmux::start();
    let name = tmux.name.clone();
    let (config, _) = Config::from_vars(|v| (v == "LIBTMUX_SOCKET").then(|| name.clone())).unwrap();
    let svc = TmuxService::new(App::with_selection(config, Selection::default()));
    let pane = tmux.first_pane();
    assert!(
        svc.call_tool(
            "kill_pane",
            json!({"pane_id": pane}),
            CallContext::detached()
        )
        .is_none()
    );
    assert!(svc.tools().iter().all(|t| t["name"] != "kill_pane"));
    assert!(
        tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&pane)
    );
    // A read batch cannot reach a hidden teardown tool either.
    let batch = svc
        .call_tool(
            "call_read_tools_batch",
            json!({"operations": [{"tool": "kill_pane", "arguments": {"pane_id": pane}}]}),
            CallContext::detached(),
        )
        .unwrap()
        .await;
    let row = &batch.structured_content.unwrap()["results"][0];
    assert_eq!(row["success"], false, "{row}");
    assert!(
        tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&pane)
    );
}

/// A program can set its pane's title to anything, separators included; it
/// must not be able to forge rows of list output (and so redirect a tool to
/// another pane).
#[tokio::test]
async fn titles_cannot_forge_list_rows() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let forged = "x\u{241F}%999\u{241E}0\u{241E}1\u{241E}1\u{241E}0\u{241E}0\u{241E}0\u{241E}0\u{241E}1\u{241E}1\u{241E}1\u{241E}1\u{241E}t\u{241E}1\u{241E}1\u{241E}@999\u{241E}$999\u{241E}sh\u{241E}/\u{241E}y";
    let keys = format!("printf '\\033]2;%s\\033\\\\' '{forged}'; tmux wait-for -S titled");
    tmux.cmd(&["send-keys", "-t", &pane, "-l", &keys]);
    tmux.cmd(&["send-keys", "-t", &pane, "Enter"]);
    tmux.wait_for("titled", std::time::Duration::from_secs(10))
        .await;
    assert!(
        tmux.cmd(&["display-message", "-p", "-t", &pane, "#{pane_title}"])
            .contains('\u{241F}')
    );

    let panes = ok(&svc, "list_panes", json!({})).await;
    let panes = panes.as_array().unwrap();
    assert_eq!(panes.len(), 1, "{panes:?}");
    assert_eq!(panes[0]["pane_id"], pane.as_str());
    assert!(
        panes[0]["pane_title"]
            .as_str()
            .unwrap()
            .contains('\u{FFFD}')
    );
    let info = ok(&svc, "get_pane_info", json!({"session_name": "main"})).await;
    assert_eq!(info["pane_id"], pane.as_str());
}

/// Inputs that used to be taken the wrong way: a name that looks like a
/// flag, a hook written as an option, `%` in literal text, a huge timeout,
/// and killing the last pane of the session our client sits in.
#[tokio::test]
async fn edge_inputs_are_taken_literally_or_refused() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let window = ok(
        &svc,
        "rename_window",
        json!({"session_name": "main", "new_name": "-x"}),
    )
    .await;
    assert_eq!(window["window_name"], "-x");
    let session = ok(
        &svc,
        "rename_session",
        json!({"session_name": "main", "new_name": "-y"}),
    )
    .await;
    assert_eq!(session["session_name"], "-y");
    ok(
        &svc,
        "rename_session",
        json!({"session_name": "-y", "new_name": "main"}),
    )
    .await;

    let hook =
        json!({"option": "after-capture-pane", "value": "run-shell 'sleep 600'", "global_": true});
    assert!(err(&svc, "set_option", hook).await.contains("is a hook"));
    assert!(!tmux.cmd(&["show-hooks", "-g"]).contains("sleep 600"));

    let shown = ok(
        &svc,
        "display_message",
        json!({"pane_id": pane, "format_string": "50%d %Y #{pane_id}"}),
    )
    .await;
    assert_eq!(shown, format!("50%d %Y {pane}"));

    // A one-second ceiling keeps the test short.
    let quick = tmux.service_with(&[("LIBTMUX_MCP_WAIT_MAX_SECONDS", "1")]);
    let waited = call(
        &quick,
        "wait_for_channel",
        json!({"channel": "never", "timeout": 1e20}),
    )
    .await;
    assert!(waited.is_error, "a timeout at the ceiling, not a panic");
    assert!(
        waited.content[0]["text"]
            .as_str()
            .unwrap()
            .contains("not signalled")
    );

    // Our control client sits in the first session; killing that session's
    // last pane must not leave the next call on a dead client.
    tmux.cmd(&["new-session", "-d", "-s", "zz"]);
    ok(&svc, "list_sessions", json!({})).await;
    ok(&svc, "kill_pane", json!({"pane_id": pane})).await;
    let sessions = ok(&svc, "list_sessions", json!({})).await;
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["session_name"], "zz");
}

/// A value holding a newline is one variable, not two.
#[tokio::test]
async fn environment_values_with_newlines_stay_whole() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let value = "l1\nBAR=evil \"q\" $x `y` \\z";
    ok(
        &svc,
        "set_environment",
        json!({"name": "FOO", "value": value}),
    )
    .await;
    // The same value set by tmux's own CLI is the one to match (3.4
    // escapes its `$`).
    tmux.cmd(&["set-environment", "-g", "CLI_FOO", value]);
    let shown = ok(&svc, "show_environment", json!({})).await;
    assert_eq!(shown["variables"]["FOO"], shown["variables"]["CLI_FOO"]);
    assert!(
        shown["variables"]["FOO"]
            .as_str()
            .unwrap()
            .starts_with("l1\nBAR=evil")
    );
    assert!(shown["variables"].get("BAR").is_none(), "a forged variable");
}
