//! Every result is bounded by default: a pane full of long lines, read by
//! each reading tool with its defaults, never gives a result over 64 KB
//! (both copies counted), says what it cut, and gives the rest when asked.

use std::time::Duration;

use crate::support::{PrivateTmux, RESULT_BOUND, ok, ok_sized};
use serde_json::{Value, json};
use tmux_mcp::tools::TmuxService;

const BOUND: Duration = Duration::from_secs(15);

/// A 400x120 pane whose screen and 1,000 lines of scrollback are full of
/// 390-character lines (about 470 KB in all).
async fn flooded(tmux: &PrivateTmux) -> String {
    let pane = tmux.cmd(&[
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-s",
        "big",
        "-x",
        "400",
        "-y",
        "120",
    ]);
    let pane = pane.trim().to_owned();
    tmux.cmd(&["set-option", "-t", "big", "history-limit", "5000"]);
    let fill = "i=0; while [ $i -lt 1200 ]; do i=$((i+1)); printf 'L%05d-%0384d\\n' $i 0; done; tmux wait-for -S filled";
    tmux.cmd(&["send-keys", "-t", &pane, fill, "Enter"]);
    tmux.wait_for("filled", BOUND).await;
    pane
}

async fn sized(svc: &TmuxService, tool: &str, args: Value) -> Value {
    let (value, size) = ok_sized(svc, tool, args.clone()).await;
    assert!(size <= RESULT_BOUND, "{tool} {args}: {size} bytes");
    value
}

#[tokio::test]
async fn reading_tools_are_bounded_by_default_and_give_more_when_asked() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = flooded(&tmux).await;

    let text = sized(
        &svc,
        "capture_pane",
        json!({"pane_id": pane, "start": -1000}),
    )
    .await;
    let text = text.as_str().unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with("[... truncated ") && header.contains("max_lines=null"),
        "{header}"
    );
    let (all, size) = ok_sized(
        &svc,
        "capture_pane",
        json!({"pane_id": pane, "start": -1000, "max_lines": null}),
    )
    .await;
    assert!(size > RESULT_BOUND && !all.as_str().unwrap().starts_with("[..."));

    let snap = sized(&svc, "snapshot_pane", json!({"pane_id": pane})).await;
    assert_eq!(snap["content_truncated"], true);
    assert!(snap["content_truncated_lines"].as_i64().unwrap() > 0);
    let snap = ok(
        &svc,
        "snapshot_pane",
        json!({"pane_id": pane, "max_lines": null}),
    )
    .await;
    assert_eq!(snap["content_truncated"], false);

    let first = sized(&svc, "capture_since", json!({"pane_id": pane})).await;
    assert_eq!(first["truncated"], true);

    let search = json!({"pattern": "-0000", "max_matched_lines_per_pane": 200});
    let found = sized(&svc, "search_panes", search).await;
    assert_eq!(found["truncated"], true);
    let lines = found["matches"][0]["matched_lines"].as_array().unwrap();
    assert!(!lines.is_empty() && lines.len() < 200, "{}", lines.len());

    let batch = json!({"operations": [
        {"tool": "capture_pane", "arguments": {"pane_id": pane}},
        {"tool": "capture_pane", "arguments": {"pane_id": pane}},
        {"tool": "capture_pane", "arguments": {"pane_id": pane}},
    ]});
    let result = sized(&svc, "call_read_tools_batch", batch).await;
    assert_eq!(result["response_truncated"], true);
    let elided = result["results"][0]["content"][0]["text"].as_str().unwrap();
    assert!(elided.contains("call capture_pane alone"), "{elided}");
}

#[tokio::test]
async fn capture_since_pages_a_flood_forward() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let first = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let fill = "i=0; while [ $i -lt 800 ]; do i=$((i+1)); printf 'P%05d-%0184d\\n' $i 0; done; tmux wait-for -S filled";
    tmux.cmd(&["send-keys", "-t", &pane, fill, "Enter"]);
    tmux.wait_for("filled", BOUND).await;
    let mut cursor = first["cursor"].clone();
    let mut got: Vec<String> = Vec::new();
    for _ in 0..100 {
        let page = sized(&svc, "capture_since", json!({"cursor": cursor})).await;
        got.extend(
            page["lines"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .filter(|l| l.starts_with('P'))
                .map(|l| l[..6].to_owned()),
        );
        cursor = page["cursor"].clone();
        if page["truncated"] == false {
            break;
        }
        assert!(page["truncated_bytes"].as_i64().unwrap() > 0);
    }
    let expected: Vec<String> = (1..=800).map(|i| format!("P{i:05}")).collect();
    assert!(
        got == expected,
        "{} lines, first {:?}",
        got.len(),
        got.first()
    );
}

#[tokio::test]
async fn show_buffer_is_bounded_by_default() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let content: String = (0..300)
        .map(|i| format!("{i:04}-{}\n", "b".repeat(295)))
        .collect();
    let loaded = ok(&svc, "load_buffer", json!({"content": content})).await;
    let name = loaded["buffer_name"].clone();
    let shown = sized(&svc, "show_buffer", json!({"buffer_name": name})).await;
    assert_eq!(shown["content_truncated"], true);
    let cut = shown["content_truncated_lines"].as_i64().unwrap() as usize;
    let text = shown["content"].as_str().unwrap();
    assert!(text.ends_with(&format!("0299-{}", "b".repeat(295))));
    assert_eq!(text.lines().count(), 300 - cut);
    let all = ok(
        &svc,
        "show_buffer",
        json!({"buffer_name": name, "max_lines": null}),
    )
    .await;
    assert_eq!(all["content"], content.as_str());
}

/// One line longer than the whole bound (300,000 characters, which the
/// line view takes in 64 KB parts) counts as one line: left out whole
/// between the lines around it, which the bound keeps (issue 33.6: it read
/// as 3 or 5 lines left out). run_command and wait_for_command alike.
#[tokio::test]
async fn one_long_line_counts_as_one_line() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let print = "python3 -c \"print('a'); print('x' * 300000); print('z')\"";
    let want = json!(["a", "[... 1 lines left out ...]", "z"]);
    let run = json!({"pane_id": pane, "command": print, "timeout": 30});
    let r = sized(&svc, "run_command", run).await;
    assert_eq!(r["exit_status"], 0, "{r}");
    assert_eq!(r["output_truncated"], true);
    assert_eq!(r["output_truncated_lines"], 1, "{r}");
    assert_eq!(r["output"], want);

    let run = json!({"pane_id": pane, "command": print, "background": true});
    let started = ok(&svc, "run_command", run).await;
    let id = started["command_id"].as_str().expect("a handle").to_owned();
    let waited = json!({"command_id": id, "timeout": 30});
    let w = sized(&svc, "wait_for_command", waited).await;
    assert_eq!(w["exit_status"], 0, "{w}");
    assert_eq!(w["output"], want, "{w}");

    // Alone, the line is kept, cut to the bound.
    let print = "python3 -c \"print('x' * 300000)\"";
    let run = json!({"pane_id": pane, "command": print, "timeout": 30});
    let r = sized(&svc, "run_command", run).await;
    assert_eq!(
        (&r["output_truncated"], &r["output_truncated_lines"]),
        (&json!(true), &json!(0)),
        "{r}"
    );
    let lines = r["output"].as_array().unwrap();
    assert!(
        lines.len() == 1 && lines[0].as_str().unwrap().starts_with("xxx"),
        "{r}"
    );
}
