//! Scopes (`TMUX_MCP_SCOPE`) on a private tmux server: every tool of the
//! catalog, aimed at a person's session the scope leaves out, is refused
//! with a message naming the scope and changes nothing in tmux; listings,
//! searches, resources and completions leave that session out; what the
//! agent created (and, under `session`, the session it runs in) works.

use serde_json::{Value, json};
use tmux_mcp::mcp::Service;
use tmux_mcp::tools::TmuxService;

use crate::resources_live::completion;
use crate::support::{PrivateTmux, call, ok};

/// The person's session no scope but `server` reaches; it runs `cat`, so
/// any key that reached it would show on its screen.
const PRIVATE: &str = "person-private";

/// Ids of the out-of-scope session, window and pane, and of the agent's own.
struct Ids {
    session: String,
    window: String,
    pane: String,
    own_session: String,
    own_window: String,
    own_pane: String,
}

/// How a tool is called with an out-of-scope target, and what must come back.
enum Case {
    /// Refused, naming the scope.
    Refused(Value),
    /// A batch: its result carries each operation's refusal.
    BatchRefused(Value),
    /// A listing without a target: succeeds and shows nothing out of scope.
    Listing(Value),
    /// The tool names no session, window or pane (why, for the reader).
    NoTarget(&'static str),
}

/// The argument table: one row per tool of the catalog. A tool missing
/// here fails the test, so a new tool gets a row.
fn case(tool: &str, o: &Ids) -> Case {
    use Case::*;
    let (s, w, p) = (o.session.as_str(), o.window.as_str(), o.pane.as_str());
    match tool {
        "call_read_tools_batch" => BatchRefused(json!({ "operations": [
            { "tool": "capture_pane", "arguments": { "pane_id": p } },
            { "tool": "list_windows", "arguments": { "session_id": s } },
        ] })),
        "list_sessions" | "get_server_info" | "list_servers" => Listing(json!({})),
        "kill_server" => Refused(json!({})),
        "get_session_info" | "kill_session" | "list_windows" | "list_panes"
        | "show_environment" => Refused(json!({ "session_id": s })),
        "create_session" => Refused(json!({ "session_name": PRIVATE })),
        "rename_session" => Refused(json!({ "session_id": s, "new_name": "renamed" })),
        "create_window" => Refused(json!({ "session_name": PRIVATE })),
        "get_window_info" | "kill_window" | "select_window" => Refused(json!({ "window_id": w })),
        "rename_window" => Refused(json!({ "window_id": w, "new_name": "renamed" })),
        "select_layout" => Refused(json!({ "window_id": w, "layout": "even-vertical" })),
        "resize_window" => Refused(json!({ "window_id": w, "width": 40, "height": 10 })),
        "move_window" => Refused(json!({ "window_id": o.own_window, "destination_session": s })),
        "find_pane_by_position" => Refused(json!({ "window_id": w, "corner": "top-left" })),
        "get_pane_info" | "split_window" | "kill_pane" | "capture_pane" | "snapshot_pane"
        | "select_pane" | "enter_copy_mode" | "exit_copy_mode" | "clear_pane" | "capture_since"
        | "list_commands" => Refused(json!({ "pane_id": p })),
        "send_keys" => Refused(json!({ "pane_id": p, "keys": "typed" })),
        "display_message" => Refused(json!({ "pane_id": p, "format_string": "#{pane_id}" })),
        "resize_pane" => Refused(json!({ "pane_id": p, "width": 20 })),
        "set_pane_title" => Refused(json!({ "pane_id": p, "title": "renamed" })),
        "swap_pane" => Refused(json!({ "source_pane_id": o.own_pane, "target_pane_id": p })),
        "send_keys_batch" => Refused(json!({ "operations": [
            { "pane_id": o.own_pane, "keys": "x" },
            { "pane_id": p, "keys": "typed" },
        ] })),
        "paste_text" => Refused(json!({ "pane_id": p, "text": "typed" })),
        "respawn_pane" => Refused(json!({ "pane_id": p, "kill": true })),
        "pipe_pane" => Refused(json!({ "pane_id": p, "output_path": "/tmp/scope-live-pipe" })),
        "search_panes" => Refused(json!({ "session_id": s, "pattern": "x" })),
        "send_prompt" => Refused(json!({ "pane_id": p, "text": "typed" })),
        "wait_for_text" => Refused(json!({ "pane_id": p, "patterns": ["x"], "timeout": 1 })),
        "wait_for_state" => Refused(json!({ "pane_id": p, "states": ["prompt"], "timeout": 1 })),
        "run_command" => Refused(json!({ "pane_id": p, "command": "true" })),
        "wait_for_attention" => Refused(json!({ "pane_ids": [o.own_pane, p], "timeout": 1 })),
        "wait_for_command" | "stop_command" => {
            NoTarget("a command id names only a command run_command started in scope")
        }
        "wait_for_channel" | "signal_channel" => {
            NoTarget("channels are server-wide names, not in any session (README)")
        }
        "show_option" => Refused(json!({ "scope": "pane", "target": p, "option": "@x" })),
        "set_option" => {
            Refused(json!({ "scope": "session", "target": PRIVATE, "option": "@x", "value": "1" }))
        }
        "set_environment" => Refused(json!({ "session_id": s, "name": "SCOPE_X", "value": "1" })),
        "show_hooks" => Refused(json!({ "scope": "window", "target": w })),
        "show_hook" => {
            Refused(json!({ "scope": "session", "target": s, "hook_name": "after-new-window" }))
        }
        "load_buffer" => NoTarget("it creates a buffer of its own"),
        "paste_buffer" => Refused(json!({ "buffer_name": "person", "pane_id": o.own_pane })),
        "show_buffer" | "delete_buffer" => Refused(json!({ "buffer_name": "person" })),
        "list_prompts" | "get_prompt" => NoTarget("prompts read no tmux state"),
        other => panic!("{other}: add a row to scope_live's argument table"),
    }
}

/// Calls that change or read the whole server, refused under any narrower
/// scope.
fn server_wide() -> Vec<(&'static str, Value)> {
    vec![
        (
            "set_option",
            json!({ "option": "status", "value": "off", "global_": true }),
        ),
        (
            "set_option",
            json!({ "scope": "server", "option": "escape-time", "value": "7" }),
        ),
        (
            "set_environment",
            json!({ "name": "SCOPE_X", "value": "1" }),
        ),
        // Read, not changed: the server's own environment, which every new
        // process inherits.
        ("show_environment", json!({})),
    ]
}

/// Everything a tool could change: sessions, windows and panes with ids,
/// names, sizes, processes, modes and titles; options and environments of
/// every level; hooks; buffers; the out-of-scope pane's screen.
fn snapshot(tmux: &PrivateTmux, pane: &str) -> String {
    let panes = "#{session_id} #{session_name} #{session_windows} #{window_id} #{window_index} \
                 #{window_name} #{window_layout} #{window_active} #{window_zoomed_flag} \
                 #{pane_id} #{pane_index} #{pane_width}x#{pane_height} #{pane_pid} \
                 #{pane_active} #{pane_in_mode} #{pane_pipe} #{pane_title}";
    let mut out = tmux.cmd(&["list-panes", "-a", "-F", panes]);
    for args in [
        &["show-options", "-s"][..],
        &["show-options", "-g"],
        &["show-options", "-gw"],
        &["show-environment", "-g"],
        &["show-hooks", "-g"],
        &["list-buffers", "-F", "#{buffer_name} #{buffer_size}"],
        &["capture-pane", "-p", "-t", pane],
    ] {
        out.push_str(&format!("== {args:?}\n"));
        out.push_str(&tmux.cmd(args));
    }
    for id in tmux.cmd(&["list-sessions", "-F", "#{session_id}"]).lines() {
        out.push_str(&tmux.cmd(&["show-options", "-t", id]));
        out.push_str(&tmux.cmd(&["show-environment", "-t", id]));
    }
    for id in tmux
        .cmd(&["list-windows", "-a", "-F", "#{window_id}"])
        .lines()
    {
        out.push_str(&tmux.cmd(&["show-options", "-w", "-t", id]));
    }
    for id in tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"]).lines() {
        out.push_str(&tmux.cmd(&["show-options", "-p", "-t", id]));
    }
    out
}

/// The person's private session (running `cat`) and a buffer of theirs.
fn person_session(tmux: &PrivateTmux) -> (String, String, String) {
    let ids = tmux.cmd(&[
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{session_id} #{window_id} #{pane_id}",
        "-s",
        PRIVATE,
        "-x",
        "80",
        "-y",
        "20",
        "cat",
    ]);
    tmux.cmd(&["set-buffer", "-b", "person", "the person's clipboard"]);
    // Window names stay put (no renaming after the foreground command), so
    // a snapshot changes only when a tool changed something.
    tmux.cmd(&["set-option", "-gw", "automatic-rename", "off"]);
    let mut ids = ids.split_whitespace().map(str::to_owned);
    let mut next = || ids.next().expect("an id");
    (next(), next(), next())
}

/// A service under `env`, the person's private session and the agent's
/// own session, made through the tool.
async fn scoped(tmux: &PrivateTmux, env: &[(&str, &str)]) -> (TmuxService, Ids) {
    let (session, window, pane) = person_session(tmux);
    let service = tmux.service_with(env);
    let made = ok(
        &service,
        "create_session",
        json!({ "session_name": "agent" }),
    )
    .await;
    let own = ok(
        &service,
        "list_panes",
        json!({ "session_id": made["session_id"] }),
    )
    .await;
    let id = |v: &Value| v.as_str().unwrap().to_owned();
    let ids = Ids {
        session,
        window,
        pane,
        own_session: id(&made["session_id"]),
        own_window: id(&own[0]["window_id"]),
        own_pane: id(&own[0]["pane_id"]),
    };
    (service, ids)
}

/// The names list_sessions shows, sorted.
async fn session_names(service: &TmuxService) -> Vec<String> {
    let listed = ok(service, "list_sessions", json!({})).await;
    let mut names: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// The text of a result, both copies.
fn text(result: &tmux_mcp::mcp::CallToolResult) -> String {
    format!("{:?} {:?}", result.content, result.structured_content)
}

/// Does `text` mention any of the out-of-scope objects?
fn mentions(text: &str, o: &Ids) -> bool {
    // Ids as JSON strings (`"%1"`, not the prefix of `"%12"`), in Debug text.
    [&o.session, &o.window, &o.pane, &PRIVATE.to_owned()]
        .iter()
        .any(|id| text.contains(&format!("\\\"{id}\\\"")) || text.contains(&format!("\"{id}\"")))
}

/// Every tool of the catalog against the person's session: refused or
/// filtered, and tmux unchanged.
async fn every_tool_stays_out(tmux: &PrivateTmux, service: &TmuxService, o: &Ids, scope: &str) {
    let named = format!("TMUX_MCP_SCOPE={scope}");
    let before = snapshot(tmux, &o.pane);
    let mut checked = 0;
    let mut exempt = Vec::new();
    for tool in service.catalog().names() {
        let args = match case(tool, o) {
            Case::NoTarget(why) => {
                assert!(!why.is_empty());
                exempt.push(tool);
                continue;
            }
            Case::Listing(args) => {
                let r = call(service, tool, args).await;
                assert!(!r.is_error, "{tool}: {}", text(&r));
                assert!(
                    !mentions(&text(&r), o),
                    "{tool} lists the person's: {}",
                    text(&r)
                );
                checked += 1;
                continue;
            }
            Case::BatchRefused(args) => {
                let r = call(service, tool, args).await;
                assert!(text(&r).contains(&named), "{tool}: {}", text(&r));
                checked += 1;
                continue;
            }
            Case::Refused(args) => args,
        };
        let r = call(service, tool, args.clone()).await;
        assert!(r.is_error, "{tool} {args}: not refused: {}", text(&r));
        let message = text(&r);
        assert!(message.contains(&named), "{tool} {args}: {message}");
        assert!(
            message.contains("outside this MCP server's scope"),
            "{tool}: {message}"
        );
        checked += 1;
    }
    for (tool, args) in server_wide() {
        let r = call(service, tool, args.clone()).await;
        assert!(
            r.is_error && text(&r).contains(&named),
            "{tool} {args}: {}",
            text(&r)
        );
    }
    assert!(checked >= 50, "only {checked} tools checked");
    let expected = [
        "wait_for_command",
        "stop_command",
        "wait_for_channel",
        "signal_channel",
        "load_buffer",
    ];
    assert_eq!(exempt.len(), expected.len(), "{exempt:?}");
    assert!(exempt.iter().all(|t| expected.contains(t)), "{exempt:?}");
    assert_eq!(
        snapshot(tmux, &o.pane),
        before,
        "tmux changed under {named}"
    );
}

#[tokio::test]
async fn owned_refuses_every_tool_outside_what_it_made_and_changes_nothing() {
    let tmux = PrivateTmux::start();
    let (service, o) = scoped(&tmux, &[("TMUX_MCP_SCOPE", "owned")]).await;
    every_tool_stays_out(&tmux, &service, &o, "owned").await;
    // `main`, the person's first session, is out too: listings show only "agent".
    assert_eq!(session_names(&service).await, ["agent"]);
    let r = call(
        &service,
        "get_session_info",
        json!({ "session_name": "main" }),
    )
    .await;
    assert!(
        r.is_error && text(&r).contains("TMUX_MCP_SCOPE=owned"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn session_scope_refuses_other_sessions_and_changes_nothing() {
    let tmux = PrivateTmux::start();
    let home = tmux.first_pane();
    let socket = tmux.socket_path();
    let tmux_var = format!("{},1,0", socket.display());
    let env = [
        ("TMUX", tmux_var.as_str()),
        ("TMUX_PANE", home.as_str()),
        ("TMUX_MCP_SCOPE", "session"),
    ];
    let (service, o) = scoped(&tmux, &env).await;
    every_tool_stays_out(&tmux, &service, &o, "session").await;
    // The session it runs in and the one it made are both in.
    assert_eq!(session_names(&service).await, ["agent", "main"]);
    let info = ok(&service, "get_pane_info", json!({ "pane_id": home })).await;
    assert_eq!(info["is_caller"], json!(true));
}

#[tokio::test]
async fn in_scope_targets_work_and_listings_hide_the_rest() {
    let tmux = PrivateTmux::start();
    let (service, o) = scoped(&tmux, &[("TMUX_MCP_SCOPE", "owned")]).await;
    // Defaults pick the first session in scope, not the person's `main`.
    let info = ok(&service, "get_session_info", json!({})).await;
    assert_eq!(info["session_id"], json!(o.own_session));
    // Creating inside what it owns works, and what it creates is in scope.
    let new_window = ok(
        &service,
        "create_window",
        json!({ "session_id": o.own_session }),
    )
    .await;
    let split = ok(&service, "split_window", json!({ "pane_id": o.own_pane })).await;
    let ran = ok(
        &service,
        "run_command",
        json!({ "pane_id": split["pane_id"], "command": "echo scoped-$((6*7))" }),
    )
    .await;
    assert_eq!(ran["exit_status"], json!(0), "{ran}");
    let found = ok(&service, "search_panes", json!({ "pattern": "scoped-42" })).await;
    assert!(
        found
            .to_string()
            .contains(split["pane_id"].as_str().unwrap()),
        "{found}"
    );
    // Every listing, search and batch leaves the person's objects out.
    for (tool, args) in [
        ("list_sessions", json!({})),
        ("list_windows", json!({})),
        ("list_panes", json!({})),
        ("search_panes", json!({ "pattern": "." })),
    ] {
        let r = call(&service, tool, args).await;
        assert!(!r.is_error, "{tool}: {}", text(&r));
        assert!(!mentions(&text(&r), &o), "{tool}: {}", text(&r));
    }
    let windows = ok(&service, "list_windows", json!({})).await;
    assert_eq!(windows.as_array().unwrap().len(), 2, "{windows}");
    assert!(
        windows
            .to_string()
            .contains(new_window["window_id"].as_str().unwrap())
    );
    let panes = ok(&service, "list_panes", json!({})).await;
    assert_eq!(panes.as_array().unwrap().len(), 3, "{panes}");
    let batch = ok(
        &service,
        "call_read_tools_batch",
        json!({ "operations": [{ "tool": "list_panes", "arguments": {} }] }),
    )
    .await;
    assert!(!mentions(&batch.to_string(), &o), "{batch}");
    // A window the person split in the agent's session is the agent's to reach.
    let theirs = tmux.cmd(&[
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        &o.own_pane,
    ]);
    ok(
        &service,
        "get_pane_info",
        json!({ "pane_id": theirs.trim() }),
    )
    .await;

    // Resources and completions: the same scope.
    let listed = service.read_resource("tmux://sessions").await.unwrap();
    let listed = listed[0]["text"].as_str().unwrap();
    assert!(
        listed.contains("\"agent\"") && !listed.contains(PRIVATE),
        "{listed}"
    );
    let uri = format!("tmux://panes/%25{}/content", &o.pane[1..]);
    let refused = service.read_resource(&uri).await.unwrap_err();
    assert!(
        format!("{refused:?}").contains("TMUX_MCP_SCOPE=owned"),
        "{refused:?}"
    );
    let uri = format!("tmux://sessions/{PRIVATE}");
    assert!(service.read_resource(&uri).await.is_err());
    let uri = "tmux://sessions/{session_name}{?socket_name}";
    let completed = service
        .complete(completion(uri, "session_name", "", json!({})))
        .await;
    assert_eq!(completed, ["agent"]);
    // Its own buffer is in scope; the person's is not.
    let loaded = ok(&service, "load_buffer", json!({ "content": "mine" })).await;
    let name = loaded["buffer_name"].as_str().unwrap();
    let shown = ok(&service, "show_buffer", json!({ "buffer_name": name })).await;
    assert!(shown.to_string().contains("mine"), "{shown}");
    // list_servers shows this server only, and kill_server is refused.
    let servers = ok(&service, "list_servers", json!({})).await;
    assert_eq!(servers.as_array().unwrap().len(), 1, "{servers}");
    assert_eq!(servers[0]["session_count"], json!(1), "{servers}");
    let info = ok(&service, "get_server_info", json!({})).await;
    assert_eq!(info["session_count"], json!(1), "only `agent`: {info}");
    let r = call(&service, "kill_server", json!({})).await;
    assert!(r.is_error && text(&r).contains("TMUX_MCP_SCOPE=owned"));
    // Its own session can go.
    ok(
        &service,
        "kill_session",
        json!({ "session_id": o.own_session }),
    )
    .await;
}

#[tokio::test]
async fn server_scope_is_the_default_and_reaches_everything() {
    let tmux = PrivateTmux::start();
    let (session, _, pane) = person_session(&tmux);
    let service = tmux.service();
    let listed = ok(&service, "list_sessions", json!({})).await;
    assert!(listed.to_string().contains(PRIVATE), "{listed}");
    ok(
        &service,
        "get_session_info",
        json!({ "session_id": session }),
    )
    .await;
    ok(&service, "capture_pane", json!({ "pane_id": pane })).await;
}

#[test]
fn a_bad_scope_is_a_startup_error_naming_the_variable() {
    let Err(e) = tmux_mcp::config::Config::from_vars(|v| {
        (v == "TMUX_MCP_SCOPE").then(|| "sessions".to_owned())
    }) else {
        panic!("a bad scope was accepted");
    };
    assert!(e.to_string().contains("TMUX_MCP_SCOPE"), "{e}");
}
