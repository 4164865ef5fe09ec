//! call_read_tools_batch against a live private tmux server.

use crate::support::{PrivateTmux, err, ok};
use serde_json::json;

#[tokio::test]
async fn read_batch_runs_inspect_tools_and_refuses_the_rest() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let ops = json!([
        {"tool": "list_sessions"},
        {"tool": "get_pane_info", "arguments": {"pane_id": pane}},
        {"tool": "kill_pane", "arguments": {"pane_id": pane}},
        {"tool": "run_command", "arguments": {"command": "true"}},
        {"tool": "call_read_tools_batch", "arguments": {"operations": []}},
        {"tool": "no_such_tool"},
        {"tool": "get_pane_info", "arguments": {"pane_id": "%999"}},
    ]);
    let batch = ok(
        &svc,
        "call_read_tools_batch",
        json!({"operations": ops, "on_error": "continue"}),
    )
    .await;
    let rows = batch["results"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[0]["success"], true, "{}", rows[0]);
    assert_eq!(
        rows[0]["structured_content"]["result"][0]["session_name"],
        "main"
    );
    assert_eq!(rows[1]["structured_content"]["pane_id"], pane.as_str());
    // A row says each thing once: no text copy of its structured content
    // or of its error.
    for row in rows {
        assert_eq!(row["content"], json!([]), "{row}");
    }
    assert!(
        rows[2]["error"]
            .as_str()
            .unwrap()
            .contains("not an 'inspect' tool")
    );
    assert!(
        rows[3]["error"]
            .as_str()
            .unwrap()
            .contains("own wait ceiling")
    );
    assert!(rows[4]["error"].as_str().unwrap().contains("recursively"));
    assert_eq!(rows[5]["error"], "Unknown tool: 'no_such_tool'");
    assert!(
        rows[6]["error"]
            .as_str()
            .unwrap()
            .contains("Pane not found")
    );
    assert_eq!(
        (batch["succeeded"].clone(), batch["failed"].clone()),
        (json!(2), json!(5))
    );
    // The refused kill never ran.
    assert!(
        tmux.cmd(&["list-panes", "-a", "-F", "#{pane_id}"])
            .contains(&pane)
    );

    let stop = ok(
        &svc,
        "call_read_tools_batch",
        json!({"operations": [{"tool": "kill_server"}, {"tool": "list_sessions"}]}),
    )
    .await;
    assert_eq!(stop["stopped_at"], 0);
    assert_eq!(stop["results"].as_array().unwrap().len(), 1);

    assert!(
        err(&svc, "call_read_tools_batch", json!({"operations": []}))
            .await
            .contains("at least one")
    );
    let many: Vec<_> = (0..1001)
        .map(|_| json!({"tool": "list_sessions"}))
        .collect();
    assert!(
        err(&svc, "call_read_tools_batch", json!({"operations": many}))
            .await
            .contains("at most 1000")
    );
}
