//! `protocol/tools.json` is the catalog exactly as `tools/list` returns it.
//! `BLESS=1 cargo test --test tools_catalog` rewrites it after a deliberate change.

use serde_json::Value;
use tmux_mcp::config::Config;
use tmux_mcp::mcp::Service;
use tmux_mcp::tools::{App, TmuxService};

fn service() -> TmuxService {
    let (config, _) = Config::from_vars(|_| None).expect("default config");
    TmuxService::new(App::new(config))
}

#[test]
fn catalog_matches_the_committed_snapshot() {
    let tools = Value::Array(service().tools());
    let text = serde_json::to_string_pretty(&tools).unwrap() + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/protocol/tools.json");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let committed =
        std::fs::read_to_string(path).expect("protocol/tools.json exists (BLESS=1 creates it)");
    assert!(
        committed == text,
        "protocol/tools.json differs from tools/list; rerun with BLESS=1 if deliberate"
    );
}

#[test]
fn every_tool_is_fully_described() {
    let name_ok = regex::Regex::new(r"^[A-Za-z0-9_.-]{1,128}$").unwrap();
    for tool in service().tools() {
        let name = tool["name"].as_str().unwrap();
        assert!(name_ok.is_match(name), "{name}");
        for key in ["title", "description"] {
            assert!(
                tool[key].as_str().is_some_and(|s| !s.is_empty()),
                "{name}: {key}"
            );
        }
        for key in ["inputSchema", "outputSchema"] {
            assert_eq!(tool[key]["type"], "object", "{name}: {key}");
        }
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{name}");
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(tool["annotations"][hint].is_boolean(), "{name}: {hint}");
        }
        let read_only = tool["annotations"]["readOnlyHint"] == true;
        let reads = ["list_", "get_", "capture_", "display_", "snapshot_"]
            .iter()
            .any(|p| name.starts_with(p));
        assert_eq!(read_only, reads, "{name}: readOnlyHint must tell the truth");
    }
}

#[test]
fn instructions_fit_the_budget() {
    let text = service().instructions();
    assert!(
        !text.is_empty() && text.len() <= 2048,
        "{} bytes",
        text.len()
    );
}
