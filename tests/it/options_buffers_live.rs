//! Options, environment, hooks and buffers against a live private tmux
//! server: each scenario checks the tool's result and tmux's own view.

use std::time::Duration;

use crate::support::{PrivateTmux, err, ok};
use serde_json::{Value, json};

fn first_window(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["display-message", "-p", "-t", "main", "#{window_id}"])
        .trim()
        .to_owned()
}

#[tokio::test]
async fn options_show_and_set() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();

    let status = ok(
        &svc,
        "show_option",
        json!({"option": "status", "global_": true}),
    )
    .await;
    assert_eq!(status, json!({"option": "status", "value": true}));
    let escape = ok(
        &svc,
        "show_option",
        json!({"option": "escape-time", "scope": "server"}),
    )
    .await;
    let want: i64 = tmux
        .cmd(&["show-options", "-s", "-v", "escape-time"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(escape["value"], want);
    // No scope, no target: tmux infers the scope from the name.
    ok(
        &svc,
        "set_option",
        json!({"option": "escape-time", "value": "123"}),
    )
    .await;
    assert_eq!(
        tmux.cmd(&["show-options", "-s", "-v", "escape-time"]),
        "123\n"
    );
    let aliases = ok(
        &svc,
        "show_option",
        json!({"option": "command-alias", "scope": "server"}),
    )
    .await;
    assert!(aliases["value"].as_array().unwrap().len() > 1, "{aliases}");
    let alias1 = ok(
        &svc,
        "show_option",
        json!({"option": "command-alias[1]", "scope": "server"}),
    )
    .await;
    assert_eq!(
        alias1["value"],
        tmux.cmd(&["show-options", "-s", "-v", "command-alias[1]"])
            .trim()
    );

    // A user option, stored verbatim: format syntax, quotes and a leading dash.
    let value = "-x 'it''s' \"q\" #{pane_id} $HOME; a\\b\tc é";
    let set = ok(
        &svc,
        "set_option",
        json!({"option": "@mcp_test", "value": value, "global_": true}),
    )
    .await;
    assert_eq!(
        set,
        json!({"option": "@mcp_test", "value": value, "status": "set"})
    );
    // As tmux's own CLI stores it (3.4 escapes its `$`).
    tmux.cmd(&["set-option", "-g", "@cli_test", value]);
    assert_eq!(
        tmux.cmd(&["show-options", "-g", "-v", "@mcp_test"]),
        tmux.cmd(&["show-options", "-g", "-v", "@cli_test"])
    );
    let shown = ok(
        &svc,
        "show_option",
        json!({"option": "@mcp_test", "global_": true}),
    )
    .await;
    let cli = json!({"option": "@cli_test", "global_": true});
    assert_eq!(shown["value"], ok(&svc, "show_option", cli).await["value"]);
    let unset = ok(
        &svc,
        "show_option",
        json!({"option": "@never_set", "global_": true}),
    )
    .await;
    assert_eq!(unset["value"], Value::Null);

    // Session scope by name; then by id.
    ok(
        &svc,
        "set_option",
        json!({"option": "status", "value": "off", "scope": "session", "target": "main"}),
    )
    .await;
    assert_eq!(
        tmux.cmd(&["show-options", "-t", "main", "-v", "status"]),
        "off\n"
    );
    let session_id = tmux.cmd(&["display-message", "-p", "-t", "main", "#{session_id}"]);
    let off = ok(
        &svc,
        "show_option",
        json!({"option": "status", "scope": "session", "target": session_id.trim()}),
    )
    .await;
    assert_eq!(off["value"], false);
    assert_eq!(tmux.cmd(&["show-options", "-g", "-v", "status"]), "on\n");

    // Window and pane scope by id; no target means the first window.
    let window = first_window(&tmux);
    ok(
        &svc,
        "set_option",
        json!({"option": "mode-keys", "value": "vi", "scope": "window", "target": window}),
    )
    .await;
    assert_eq!(
        tmux.cmd(&["show-options", "-w", "-t", &window, "-v", "mode-keys"]),
        "vi\n"
    );
    let shown = ok(
        &svc,
        "show_option",
        json!({"option": "mode-keys", "scope": "window"}),
    )
    .await;
    assert_eq!(shown["value"], "vi");
    let pane = tmux.first_pane();
    ok(
        &svc,
        "set_option",
        json!({"option": "@p", "value": "7", "scope": "pane", "target": pane}),
    )
    .await;
    assert_eq!(
        tmux.cmd(&["show-options", "-p", "-t", &pane, "-v", "@p"]),
        "7\n"
    );
    let seven = ok(
        &svc,
        "show_option",
        json!({"option": "@p", "scope": "pane", "target": pane}),
    )
    .await;
    assert_eq!(seven["value"], 7);
}

#[tokio::test]
async fn options_refuse_bad_input_and_change_nothing() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let before = tmux.cmd(&["show-options", "-g"]);

    for name in [
        "#{pane_id}",
        "-g",
        "a b",
        "status;kill-server",
        "x[",
        "@",
        "",
    ] {
        let msg = err(
            &svc,
            "set_option",
            json!({"option": name, "value": "1", "global_": true}),
        )
        .await;
        assert!(msg.contains("Invalid option name"), "{name}: {msg}");
        let msg = err(&svc, "show_option", json!({"option": name})).await;
        assert!(msg.contains("Invalid option name"), "{name}: {msg}");
    }
    let msg = err(
        &svc,
        "show_option",
        json!({"option": "nosuchoption", "global_": true}),
    )
    .await;
    assert!(msg.contains("invalid option: nosuchoption"), "{msg}");
    let msg = err(
        &svc,
        "set_option",
        json!({"option": "status", "value": "off", "target": "main"}),
    )
    .await;
    assert!(
        msg.contains("scope is required when target is specified"),
        "{msg}"
    );
    let msg = err(
        &svc,
        "set_option",
        json!({"option": "mode-keys", "value": "vi", "scope": "window", "target": "main"}),
    )
    .await;
    assert!(msg.contains("window id"), "{msg}");
    let msg = err(
        &svc,
        "set_option",
        json!({"option": "@x", "value": "1", "scope": "pane", "target": "%999"}),
    )
    .await;
    assert!(msg.contains("%999"), "{msg}");
    let msg = err(
        &svc,
        "set_option",
        json!({"option": "@x", "value": "1", "scope": "session", "target": "nope"}),
    )
    .await;
    assert!(msg.contains("not found"), "{msg}");
    let msg = err(
        &svc,
        "set_option",
        json!({"option": "@x", "value": "a\u{0}b", "global_": true}),
    )
    .await;
    assert!(msg.contains("NUL"), "{msg}");
    let msg = err(
        &svc,
        "show_option",
        json!({"option": "status", "scope": "global"}),
    )
    .await;
    assert!(msg.contains("Invalid arguments"), "{msg}");
    let msg = err(
        &svc,
        "show_option",
        json!({"option": "status", "scope": "server", "target": "main"}),
    )
    .await;
    assert!(msg.contains("takes no target"), "{msg}");
    assert_eq!(tmux.cmd(&["show-options", "-g"]), before);
    assert!(
        tmux.cmd(&["show-options", "-p", "-t", &tmux.first_pane()])
            .is_empty()
    );
}

/// tmux expands the name argument of `set-option`, `show-options`,
/// `set-hook` and `show-hooks` as a format (3.3a runs a `#()` in a shown
/// name, 3.5a in a set one too, 3.8 in a set hook's as well), so a name
/// holding `#(…)` would run a command. Names reach tmux only when plain;
/// values are stored and read back literally.
#[tokio::test]
async fn option_and_hook_names_stay_literal() {
    let dir = std::env::temp_dir().join(format!("tmuxmcp-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let touch = |what: &str| format!("#(touch {})", dir.join(what).display());

    for (i, name) in [
        format!("@x{}", touch("a")),
        touch("b"),
        format!("status-format[{}]", touch("c")),
        format!("pane-exited{}", touch("d")),
        format!("@y#{{pid}}{}", touch("e")),
    ]
    .iter()
    .enumerate()
    {
        let value = json!({"option": name, "value": "1", "global_": true});
        let msg = err(&svc, "set_option", value).await;
        assert!(msg.contains("Invalid option name"), "{i}: {msg}");
        let msg = err(
            &svc,
            "show_option",
            json!({"option": name, "global_": true}),
        )
        .await;
        assert!(msg.contains("Invalid option name"), "{i}: {msg}");
        let msg = err(
            &svc,
            "show_hook",
            json!({"hook_name": name, "global_": true}),
        )
        .await;
        assert!(msg.contains("Invalid hook name"), "{i}: {msg}");
    }
    // A value is stored as given and read back as stored.
    let value = touch("value");
    ok(
        &svc,
        "set_option",
        json!({"option": "@v", "value": value, "global_": true}),
    )
    .await;
    let shown = ok(
        &svc,
        "show_option",
        json!({"option": "@v", "global_": true}),
    )
    .await;
    assert_eq!(shown["value"], value.as_str());
    ok(&svc, "show_hooks", json!({"scope": "server"})).await;

    // A command tmux runs after every call above has run, and waits for:
    // a #() job one of the calls had started was started before it.
    let control = dir.join("control");
    tmux.cmd(&["run-shell", &format!("touch '{}'", control.display())]);
    assert!(control.exists(), "tmux ran the control command");
    let made: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(made, ["control"], "a name ran a command");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn environment_show_and_set() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();

    let set = ok(
        &svc,
        "set_environment",
        json!({"name": "MCP_T", "value": "a b=c 'q' é \\$x\t"}),
    )
    .await;
    assert_eq!(
        set,
        json!({"name": "MCP_T", "value": "a b=c 'q' é \\$x\t", "status": "set"})
    );
    // As tmux's own CLI stores it (3.4 escapes its `$`).
    tmux.cmd(&["set-environment", "-g", "CLI_T", "a b=c 'q' é \\$x\t"]);
    assert_eq!(
        tmux.cmd(&["show-environment", "-g", "MCP_T"])["MCP_T".len()..],
        tmux.cmd(&["show-environment", "-g", "CLI_T"])["CLI_T".len()..]
    );
    let global = ok(&svc, "show_environment", json!({})).await;
    assert_eq!(global["variables"]["MCP_T"], global["variables"]["CLI_T"]);

    ok(
        &svc,
        "set_environment",
        json!({"name": "MCP_S", "value": "s", "session_name": "main"}),
    )
    .await;
    assert_eq!(
        tmux.cmd(&["show-environment", "-t", "main", "MCP_S"]),
        "MCP_S=s\n"
    );
    assert!(!tmux.cmd(&["show-environment", "-g"]).contains("MCP_S"));
    tmux.cmd(&["set-environment", "-t", "main", "-r", "MCP_GONE"]);
    let session = ok(&svc, "show_environment", json!({"session_name": "main"})).await;
    assert_eq!(session["variables"]["MCP_S"], "s");
    assert_eq!(session["variables"]["-MCP_GONE"], true);
    assert!(session["variables"].get("MCP_T").is_none());

    let before = tmux.cmd(&["show-environment", "-g"]);
    for name in [
        "", "A=B", "A\u{0}B", "-u", "-g", "-r", "1A", "A B", "A-B", "é",
    ] {
        let msg = err(&svc, "set_environment", json!({"name": name, "value": "x"})).await;
        assert!(msg.contains("Invalid environment variable name"), "{msg}");
    }
    let msg = err(
        &svc,
        "set_environment",
        json!({"name": "V", "value": "x\u{0}"}),
    )
    .await;
    assert!(msg.contains("NUL"), "{msg}");
    let msg = err(
        &svc,
        "set_environment",
        json!({"name": "V", "value": "x", "session_name": "nope"}),
    )
    .await;
    assert!(msg.contains("not found"), "{msg}");
    let msg = err(&svc, "show_environment", json!({"session_id": "$99"})).await;
    assert!(msg.contains("not found"), "{msg}");
    assert_eq!(tmux.cmd(&["show-environment", "-g"]), before);
}

#[tokio::test]
async fn hooks_show() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();

    let empty = ok(
        &svc,
        "show_hook",
        json!({"hook_name": "after-new-window", "global_": true}),
    )
    .await;
    assert_eq!(empty, json!({"entries": []}));

    tmux.cmd(&["set-hook", "-g", "after-new-window", "display-message one"]);
    tmux.cmd(&[
        "set-hook",
        "-ga",
        "after-new-window",
        "display-message 'two words'",
    ]);
    tmux.cmd(&["set-hook", "-g", "pane-exited", "display-message gone"]);

    let hook = ok(
        &svc,
        "show_hook",
        json!({"hook_name": "after-new-window", "global_": true}),
    )
    .await;
    let entries = hook["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{hook}");
    assert_eq!(entries[0]["hook_name"], "after-new-window");
    assert_eq!(entries[0]["index"], 0);
    assert_eq!(entries[0]["command"], "display-message one");
    assert_eq!(entries[1]["index"], 1);
    assert!(
        entries[1]["command"]
            .as_str()
            .unwrap()
            .contains("two words")
    );

    let one = ok(
        &svc,
        "show_hook",
        json!({"hook_name": "after-new-window[1]", "global_": true}),
    )
    .await;
    assert_eq!(one["entries"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["entries"][0]["index"], 1);

    // scope=server merges the global session and window trees.
    let all = ok(&svc, "show_hooks", json!({"scope": "server"})).await;
    let names: Vec<&str> = all["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["hook_name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"after-new-window"), "{all}");
    assert!(names.contains(&"pane-exited"), "{all}");
    let pane_exited = ok(
        &svc,
        "show_hook",
        json!({"hook_name": "pane-exited", "scope": "server"}),
    )
    .await;
    assert_eq!(pane_exited["entries"][0]["command"], "display-message gone");

    // A session-level hook on "main" only.
    tmux.cmd(&[
        "set-hook",
        "-t",
        "main",
        "session-renamed",
        "display-message r",
    ]);
    let local = ok(
        &svc,
        "show_hooks",
        json!({"scope": "session", "target": "main"}),
    )
    .await;
    assert_eq!(local["entries"].as_array().unwrap().len(), 1, "{local}");
    assert_eq!(local["entries"][0]["hook_name"], "session-renamed");
    let default = ok(&svc, "show_hooks", json!({})).await;
    assert_eq!(default, local);

    let msg = err(
        &svc,
        "show_hook",
        json!({"hook_name": "no-such-hook", "global_": true}),
    )
    .await;
    assert!(msg.contains("invalid option"), "{msg}");
    for bad in ["#{x}", "Pane-Exited", "a b", "x[y]", "-g"] {
        let msg = err(&svc, "show_hook", json!({"hook_name": bad})).await;
        assert!(msg.contains("Invalid hook name"), "{bad}: {msg}");
    }
    let msg = err(&svc, "show_hooks", json!({"target": "main"})).await;
    assert!(msg.contains("scope is required"), "{msg}");
    let msg = err(&svc, "show_hooks", json!({"scope": "galaxy"})).await;
    assert!(msg.contains("Invalid arguments"), "{msg}");
}

fn buffer_names(tmux: &PrivateTmux) -> Vec<String> {
    let out = tmux.try_cmd(&["list-buffers", "-F", "#{buffer_name}"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn buffer_bytes(tmux: &PrivateTmux, name: &str) -> Vec<u8> {
    let out = tmux.try_cmd(&["save-buffer", "-b", name, "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[tokio::test]
async fn buffers_load_show_paste_delete() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();

    // Control bytes, backslashes, octal look-alikes, non-ASCII, quotes, a
    // trailing newline.
    let content =
        "a\\b\\001 \t\x01\x1b[31m\x7f é € 😀 'q' \"d\" #{pane_id} $HOME `x` \\$ \\\\;\r\nline2\n\n";
    let loaded = ok(
        &svc,
        "load_buffer",
        json!({"content": content, "logical_name": "my.buf-1"}),
    )
    .await;
    let name = loaded["buffer_name"].as_str().unwrap().to_owned();
    assert_eq!(loaded["logical_name"], "my.buf-1");
    let re = regex::Regex::new(r"^libtmux_mcp_[0-9a-f]{32}_my\.buf-1$").unwrap();
    assert!(re.is_match(&name), "{name}");
    assert_eq!(buffer_bytes(&tmux, &name), content.as_bytes());

    let shown = ok(&svc, "show_buffer", json!({"buffer_name": name})).await;
    assert_eq!(shown["buffer_name"], name.as_str());
    assert_eq!(shown["content"], content);
    assert_eq!(shown["content_truncated"], false);
    assert_eq!(shown["content_truncated_lines"], 0);

    // Default logical name, fresh uuid per call.
    let a = ok(&svc, "load_buffer", json!({"content": "x"})).await;
    let b = ok(
        &svc,
        "load_buffer",
        json!({"content": "x", "logical_name": ""}),
    )
    .await;
    assert_ne!(a["buffer_name"], b["buffer_name"]);
    assert!(a["buffer_name"].as_str().unwrap().ends_with("_buf"));
    assert_eq!(a["logical_name"], Value::Null);
    assert_eq!(b["logical_name"], "");
    let x = ok(
        &svc,
        "show_buffer",
        json!({"buffer_name": a["buffer_name"]}),
    )
    .await;
    assert_eq!(x["content"], "x");

    // Tail truncation.
    let lines: Vec<String> = (1..=10).map(|i| format!("l{i}")).collect();
    let long = ok(
        &svc,
        "load_buffer",
        json!({"content": lines.join("\n") + "\n"}),
    )
    .await;
    let cut = ok(
        &svc,
        "show_buffer",
        json!({"buffer_name": long["buffer_name"], "max_lines": 3}),
    )
    .await;
    assert_eq!(cut["content"], "l8\nl9\nl10");
    assert_eq!(cut["content_truncated"], true);
    assert_eq!(cut["content_truncated_lines"], 7);
    let all = ok(
        &svc,
        "show_buffer",
        json!({"buffer_name": long["buffer_name"], "max_lines": null}),
    )
    .await;
    assert_eq!(all["content"], lines.join("\n") + "\n");
    assert!(
        err(
            &svc,
            "show_buffer",
            json!({"buffer_name": long["buffer_name"], "max_lines": 0}),
        )
        .await
        .contains("max_lines")
    );

    // A large buffer, every printable and control byte: exact both ways.
    let big: String = (0..20_000)
        .map(|i| char::from_u32(1 + (i % 0x7e) as u32).unwrap())
        .chain("é😀\n".chars().cycle().take(3000))
        .collect();
    let loaded_big = ok(&svc, "load_buffer", json!({"content": big})).await;
    let big_name = loaded_big["buffer_name"].as_str().unwrap();
    assert_eq!(buffer_bytes(&tmux, big_name), big.as_bytes());
    let shown_big = ok(
        &svc,
        "show_buffer",
        json!({"buffer_name": big_name, "max_lines": null}),
    )
    .await;
    assert!(shown_big["content"] == big.as_str(), "big buffer differs");

    // Paste into the pane's shell; the command signals a channel when run.
    let pane = tmux.first_pane();
    let script = ok(
        &svc,
        "load_buffer",
        json!({"content": "printf 'pasted-%s\\n' ok; tmux wait-for -S mcp_paste\n", "logical_name": "script"}),
    )
    .await;
    let pasted = ok(
        &svc,
        "paste_buffer",
        json!({"buffer_name": script["buffer_name"], "pane_id": pane}),
    )
    .await;
    assert_eq!(
        pasted,
        format!(
            "Buffer '{}' pasted to pane {pane}",
            script["buffer_name"].as_str().unwrap()
        )
    );
    tmux.wait_for("mcp_paste", Duration::from_secs(10)).await;
    assert!(
        tmux.cmd(&["capture-pane", "-p", "-t", &pane])
            .contains("pasted-ok")
    );
    // The buffer is kept.
    assert!(buffer_names(&tmux).contains(&script["buffer_name"].as_str().unwrap().to_owned()));

    let deleted = ok(&svc, "delete_buffer", json!({"buffer_name": name})).await;
    assert_eq!(deleted, format!("Buffer '{name}' deleted"));
    assert!(!buffer_names(&tmux).contains(&name));
    let msg = err(&svc, "delete_buffer", json!({"buffer_name": name})).await;
    assert!(msg.contains("delete-buffer failed for"), "{msg}");
    let msg = err(&svc, "show_buffer", json!({"buffer_name": name})).await;
    assert!(msg.contains("show-buffer failed for"), "{msg}");
    let msg = err(
        &svc,
        "paste_buffer",
        json!({"buffer_name": name, "pane_id": pane}),
    )
    .await;
    assert!(msg.contains("paste-buffer failed for"), "{msg}");
}

#[tokio::test]
async fn buffers_refuse_foreign_names_and_bad_input() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["set-buffer", "-b", "clipboard", "secret"]);
    let fake = format!("libtmux_mcp_{}_x", "A".repeat(32));
    for tool in ["show_buffer", "delete_buffer", "paste_buffer"] {
        for name in ["clipboard", "buffer0", fake.as_str(), "libtmux_mcp_1_x"] {
            let msg = err(&svc, tool, json!({"buffer_name": name})).await;
            assert!(msg.contains("Invalid buffer name"), "{tool} {name}: {msg}");
        }
    }
    let msg = err(&svc, "load_buffer", json!({"content": ""})).await;
    assert!(msg.contains("empty"), "{msg}");
    let msg = err(&svc, "load_buffer", json!({"content": "a\u{0}b"})).await;
    assert!(msg.contains("NUL"), "{msg}");
    for logical in ["a b", "x/y", "#{x}", &"n".repeat(65)] {
        let msg = err(
            &svc,
            "load_buffer",
            json!({"content": "x", "logical_name": logical}),
        )
        .await;
        assert!(msg.contains("Invalid logical buffer name"), "{msg}");
    }
    let good = ok(&svc, "load_buffer", json!({"content": "x"})).await;
    let msg = err(
        &svc,
        "paste_buffer",
        json!({"buffer_name": good["buffer_name"], "pane_id": "%999"}),
    )
    .await;
    assert!(msg.contains("%999"), "{msg}");
    let names = buffer_names(&tmux);
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(buffer_bytes(&tmux, "clipboard"), b"secret");
}

#[tokio::test]
async fn shutdown_deletes_our_buffers_only() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["set-buffer", "-b", "keep", "mine"]);
    let a = ok(&svc, "load_buffer", json!({"content": "a"})).await;
    let b = ok(&svc, "load_buffer", json!({"content": "b"})).await;
    ok(
        &svc,
        "delete_buffer",
        json!({"buffer_name": b["buffer_name"]}),
    )
    .await;
    // A buffer someone else removed is skipped without trouble.
    let c = ok(&svc, "load_buffer", json!({"content": "c"})).await;
    tmux.cmd(&["delete-buffer", "-b", c["buffer_name"].as_str().unwrap()]);
    assert_eq!(buffer_names(&tmux).len(), 2);
    assert!(buffer_names(&tmux).contains(&a["buffer_name"].as_str().unwrap().to_owned()));
    svc.shutdown().await;
    assert_eq!(buffer_names(&tmux), vec!["keep".to_owned()]);
}
