//! The four prompts: every `tool(arg=…)` a recipe writes is a real tool
//! with real argument names, and the recipes say what the reference's do.

use serde_json::{Map, Value, json};
use tmux_mcp::config::Config;
use tmux_mcp::mcp::{Service, ServiceError};
use tmux_mcp::tools::{App, TmuxService, cmd};

fn service() -> TmuxService {
    let (config, _) = Config::from_vars(|_| None).expect("config");
    TmuxService::new(App::new(config))
}

fn render(service: &TmuxService, name: &str, args: Value) -> Result<String, ServiceError> {
    let args: Map<String, Value> = args.as_object().cloned().unwrap();
    let result = service.get_prompt(name, args)?;
    let messages = result["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"]["type"], "text");
    Ok(messages[0]["content"]["text"].as_str().unwrap().to_owned())
}

/// Every `name(args)` in `text`: the name and the argument names.
fn calls(text: &str) -> Vec<(String, Vec<String>)> {
    let call = regex::Regex::new(r"\b([a-z_]+)\(").unwrap();
    let mut out = Vec::new();
    for m in call.captures_iter(text) {
        let start = m.get(0).unwrap().end();
        let (mut depth, mut quote, mut args, mut current) = (0, None, Vec::new(), String::new());
        let mut chars = text[start..].chars();
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), '\\') => {
                    current.push(c);
                    if let Some(n) = chars.next() {
                        current.push(n);
                    }
                    let _ = q;
                }
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => current.push(c),
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '(') => depth += 1,
                (None, ']') => depth -= 1,
                (None, ')') if depth == 0 => break,
                (None, ')') => depth -= 1,
                (None, ',') if depth == 0 => args.push(std::mem::take(&mut current)),
                (None, c) => current.push(c),
            }
        }
        args.push(current);
        let names = args
            .iter()
            .filter_map(|a| a.split_once('=').map(|(k, _)| k.trim().to_owned()))
            .collect();
        out.push((m[1].to_owned(), names));
    }
    out
}

fn all_renders(service: &TmuxService) -> Vec<(String, String)> {
    [
        (
            "run_and_wait",
            json!({ "command": "make test", "pane_id": "%1" }),
        ),
        (
            "run_and_wait",
            json!({ "command": "cat <<EOF\nx\nEOF", "pane_id": "%1", "timeout": "12.5" }),
        ),
        ("diagnose_failing_pane", json!({ "pane_id": "%2" })),
        ("build_dev_workspace", json!({ "session_name": "dev" })),
        ("interrupt_gracefully", json!({ "pane_id": "%3" })),
    ]
    .into_iter()
    .map(|(name, args)| (name.to_owned(), render(service, name, args).unwrap()))
    .collect()
}

#[test]
fn every_tool_call_in_a_recipe_is_real() {
    let service = service();
    let (config, _) = Config::from_vars(|_| None).expect("default config");
    let tools = cmd::catalog(&config).tools;
    let mut checked = 0;
    for (prompt, text) in all_renders(&service) {
        let found = calls(&text);
        assert!(!found.is_empty(), "{prompt} names no tool call");
        for (name, args) in found {
            let tool = tools
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{prompt}: {name}() is not a tool"));
            let properties = tool.input_schema["properties"].as_object().unwrap();
            for arg in args {
                assert!(
                    properties.contains_key(&arg),
                    "{prompt}: {name}({arg}=…) is not an argument of {name}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} arguments checked");
}

#[test]
fn the_call_scanner_sees_arguments() {
    assert_eq!(
        calls("x send_keys(pane_id='%1', keys='a, b)', enter=False) y f()"),
        vec![
            (
                "send_keys".to_owned(),
                vec!["pane_id".into(), "keys".into(), "enter".into()]
            ),
            ("f".to_owned(), vec![]),
        ]
    );
}

#[test]
fn listing_matches_the_reference_arguments() {
    let prompts = service().prompts();
    let shape: Vec<(String, Vec<(String, bool)>)> = prompts
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_owned(),
                p["arguments"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            a["name"].as_str().unwrap().to_owned(),
                            a["required"].as_bool().unwrap(),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        shape,
        vec![
            (
                s("run_and_wait"),
                vec![
                    (s("command"), true),
                    (s("pane_id"), true),
                    (s("timeout"), false)
                ]
            ),
            (s("diagnose_failing_pane"), vec![(s("pane_id"), true)]),
            (
                s("build_dev_workspace"),
                vec![(s("session_name"), true), (s("log_command"), false)]
            ),
            (s("interrupt_gracefully"), vec![(s("pane_id"), true)]),
        ]
    );
    for p in &prompts {
        assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
}

#[test]
fn recipes_say_what_matters() {
    let service = service();
    let text = render(
        &service,
        "run_and_wait",
        json!({ "command": "echo 'hi'", "pane_id": "%1" }),
    )
    .unwrap();
    assert!(
        text.contains(
            "run_command(pane_id='%1', command=\"echo 'hi'\", timeout=60.0, max_lines=100)"
        ),
        "{text}"
    );
    for word in [
        "exit_status",
        "timed_out",
        "effective_timeout",
        "capture_since",
    ] {
        assert!(text.contains(word), "{word}: {text}");
    }
    assert!(!text.contains("suppress_history=False"));
    let text = render(
        &service,
        "run_and_wait",
        json!({ "command": "a\nb", "pane_id": "%1", "timeout": 5 }),
    )
    .unwrap();
    assert!(
        text.contains("command='a\\nb', timeout=5.0, max_lines=100, suppress_history=False)"),
        "{text}"
    );
    assert!(text.contains("history"), "{text}");

    let text = render(&service, "interrupt_gracefully", json!({ "pane_id": "%3" })).unwrap();
    assert!(text.contains("keys='C-c', literal=False, enter=False"));
    assert!(!text.contains("kill_pane("), "never a kill call: {text}");
    assert!(!text.contains("patterns=['^C"), "^C is no stop marker");

    let text = render(
        &service,
        "diagnose_failing_pane",
        json!({ "pane_id": "%2" }),
    )
    .unwrap();
    assert!(text.contains("capture_since(pane_id='%2')"));
    assert!(text.contains("max_lines=None"));

    let text = render(
        &service,
        "build_dev_workspace",
        json!({ "session_name": "dev", "log_command": "tail -f log" }),
    )
    .unwrap();
    assert!(text.contains("create_session(session_name='dev')"));
    assert!(text.contains("keys='tail -f log'"));
    assert!(text.contains("patterns=None"));
    assert!(!text.contains("keys=''"));
    let default = render(
        &service,
        "build_dev_workspace",
        json!({ "session_name": "d" }),
    )
    .unwrap();
    assert!(default.contains("keys='watch -n 1 date'"));
}

#[test]
fn bad_arguments_are_invalid_params() {
    let service = service();
    let cases = [
        (
            "run_and_wait",
            json!({ "pane_id": "%1" }),
            "Missing required arguments: {'command'}",
        ),
        (
            "run_and_wait",
            json!({}),
            "Missing required arguments: {'command', 'pane_id'}",
        ),
        (
            "run_and_wait",
            json!({ "command": "x", "pane_id": "%1", "timeout": "abc" }),
            "Could not convert argument 'timeout': expected a positive number of seconds, got 'abc'",
        ),
        (
            "diagnose_failing_pane",
            json!({ "pane_id": "%1", "extra": "x" }),
            "Unknown argument(s) for prompt 'diagnose_failing_pane': extra. Valid arguments: pane_id.",
        ),
        (
            "interrupt_gracefully",
            json!({ "pane_id": ["%1"] }),
            "Could not convert argument 'pane_id': expected a string, got [\"%1\"]",
        ),
    ];
    for (name, args, message) in cases {
        assert_eq!(
            render(&service, name, args),
            Err(ServiceError::InvalidParams(message.into())),
            "{name}"
        );
    }
    assert_eq!(
        render(&service, "nope", json!({})),
        Err(ServiceError::unknown_prompt("nope"))
    );
}

/// `LIBTMUX_MCP_PROMPTS_AS_TOOLS=1` adds `list_prompts` and `get_prompt`
/// (inspect tools) for clients that show tools but not prompts.
#[tokio::test]
async fn prompts_as_tools_when_asked_for() {
    use tmux_mcp::config::Config;
    use tmux_mcp::mcp::{CallContext, Service};
    use tmux_mcp::tools::{App, TmuxService};

    let (config, _) =
        Config::from_vars(|v| (v == "LIBTMUX_MCP_PROMPTS_AS_TOOLS").then(|| "1".to_owned()))
            .unwrap();
    let svc = TmuxService::new(App::new(config));
    let names: Vec<String> = svc
        .tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"list_prompts".to_owned()) && names.contains(&"get_prompt".to_owned()));
    let listed = svc
        .call_tool(
            "list_prompts",
            serde_json::json!({}),
            CallContext::detached(),
        )
        .unwrap()
        .await;
    let text = listed.structured_content.unwrap()["result"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("run_and_wait"), "{text}");
    let args = serde_json::json!({"name": "diagnose_failing_pane", "arguments": {"pane_id": "%1"}});
    let got = svc
        .call_tool("get_prompt", args, CallContext::detached())
        .unwrap()
        .await;
    assert!(!got.is_error);
    assert!(
        got.structured_content.unwrap()["result"]
            .as_str()
            .unwrap()
            .contains("%1")
    );
    let bad = svc
        .call_tool(
            "get_prompt",
            serde_json::json!({"name": "nope"}),
            CallContext::detached(),
        )
        .unwrap()
        .await;
    assert!(bad.is_error);

    let (plain, _) = Config::from_vars(|_| None).unwrap();
    let without = TmuxService::new(App::new(plain));
    assert!(without.tools().iter().all(|t| t["name"] != "list_prompts"));
}
