//! Pane I/O tools against a live private tmux server: each scenario checks
//! the result fields and tmux's own view (or the file system's).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{PrivateTmux, err, ok};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

fn capture(tmux: &PrivateTmux, pane: &str) -> String {
    tmux.cmd(&["capture-pane", "-p", "-J", "-t", pane])
}

fn pane_var(tmux: &PrivateTmux, pane: &str, var: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", pane, &format!("#{{{var}}}")])
        .trim()
        .to_owned()
}

/// Types a command line into a pane with tmux itself (not the tool under test).
fn type_line(tmux: &PrivateTmux, pane: &str, line: &str) {
    tmux.cmd(&["send-keys", "-t", pane, "-l", line]);
    tmux.cmd(&["send-keys", "-t", pane, "Enter"]);
}

/// Polls a condition on something outside tmux's command queue (a file a
/// background process writes), failing after `WAIT`.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tmuxmcp-paneio-{tag}-{}-{}",
        std::process::id(),
        uuid_like()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn buffers(tmux: &PrivateTmux) -> String {
    tmux.cmd(&["list-buffers", "-F", "#{buffer_name}"])
}

#[tokio::test]
async fn send_keys_batch_in_order_with_failures() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();

    let result = ok(
        &svc,
        "send_keys_batch",
        json!({"operations": [
            {"keys": "printf '%s-%s\\n' first line", "pane_id": pane},
            {"keys": "printf '%s-%s\\n' never typed", "pane_id": "%999"},
            {"keys": "printf '%s-%s\\n' second line", "session_name": "main"},
            {"keys": "tmux wait-for -S batch1", "pane_id": pane},
        ], "on_error": "continue"}),
    )
    .await;
    tmux.wait_for("batch1", WAIT).await;
    assert_eq!(result["succeeded"], 3);
    assert_eq!(result["failed"], 1);
    assert_eq!(result["stopped_at"], json!(null));
    let rows = result["results"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["index"], i);
        assert!(row["elapsed_seconds"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(rows[0]["pane_id"], pane);
    assert_eq!(rows[0]["success"], true);
    assert_eq!(rows[0]["error"], json!(null));
    assert_eq!(rows[1]["success"], false);
    assert_eq!(rows[1]["pane_id"], json!(null));
    let error = rows[1]["error"].as_str().unwrap();
    assert!(error.starts_with("Pane not found: %999\n"), "{error}");
    assert!(error.contains("list_panes"), "{error}");
    assert_eq!(rows[2]["pane_id"], pane);

    let screen = capture(&tmux, &pane);
    let first = screen.find("first-line").expect(&screen);
    let second = screen.find("second-line").expect(&screen);
    assert!(first < second, "{screen}");
    assert!(!screen.contains("never"), "{screen}");

    // stop: the failure ends the batch.
    let stopped = ok(
        &svc,
        "send_keys_batch",
        json!({"operations": [
            {"keys": "", "pane_id": pane, "enter": false},
            {"keys": "x", "window_id": "@999"},
            {"keys": "printf '%s-%s\\n' after stop", "pane_id": pane},
        ]}),
    )
    .await;
    assert_eq!(stopped["stopped_at"], 1);
    assert_eq!(stopped["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        (stopped["succeeded"].clone(), stopped["failed"].clone()),
        (json!(1), json!(1))
    );

    // A deadline that has passed fails the remaining operations.
    let late = ok(
        &svc,
        "send_keys_batch",
        json!({"operations": [
            {"keys": "printf '%s-%s\\n' too late", "pane_id": pane},
            {"keys": "printf '%s-%s\\n' too late", "pane_id": pane},
        ], "timeout": 1e-9, "on_error": "continue"}),
    )
    .await;
    assert_eq!(late["failed"], 2);
    for row in late["results"].as_array().unwrap() {
        let error = row["error"].as_str().unwrap();
        assert!(
            error.starts_with("batch execution exceeded timeout of"),
            "{error}"
        );
    }

    // Bad arguments are refused whole, before anything is typed.
    assert!(
        err(&svc, "send_keys_batch", json!({"operations": []}))
            .await
            .contains("operations must not be empty")
    );
    let many: Vec<_> = (0..1001)
        .map(|_| json!({"keys": "ZZZ", "pane_id": pane}))
        .collect();
    assert!(
        err(&svc, "send_keys_batch", json!({"operations": many}))
            .await
            .contains("at most 1000")
    );
    let text = err(
        &svc,
        "send_keys_batch",
        json!({"operations": [{"keys": "ZZZ", "pane_id": pane, "wait": true}]}),
    )
    .await;
    assert!(text.contains("wait"), "{text}");
    assert!(
        err(
            &svc,
            "send_keys_batch",
            json!({"operations": [{"keys": "ZZZ"}], "timeout": 0})
        )
        .await
        .contains("timeout")
    );
    assert!(
        err(
            &svc,
            "send_keys_batch",
            json!({"operations": [{"keys": "ZZZ"}], "on_error": "maybe"})
        )
        .await
        .contains("unknown variant `maybe`, expected `stop` or `continue`")
    );
    type_line(&tmux, &pane, "tmux wait-for -S batch2");
    tmux.wait_for("batch2", WAIT).await;
    let screen = capture(&tmux, &pane);
    assert!(
        !screen.contains("ZZZ") && !screen.contains("too-late"),
        "{screen}"
    );
    assert!(!screen.contains("after-stop"), "{screen}");
}

/// `keys: ""` with `enter: true` presses Enter alone: the line typed
/// before runs (a bare Enter needs no key name).
#[tokio::test]
async fn empty_keys_with_enter_press_enter() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    tmux.cmd(&[
        "send-keys",
        "-t",
        &pane,
        "-l",
        "tmux wait-for -S bare-enter",
    ]);
    ok(
        &svc,
        "send_keys",
        json!({"pane_id": pane, "keys": "", "enter": true}),
    )
    .await;
    tmux.wait_for("bare-enter", WAIT).await;
}

#[tokio::test]
async fn paste_text_is_exact_and_leaves_no_buffer() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let dir = temp_dir("paste");
    let file = dir.join("pasted.txt");

    type_line(
        &tmux,
        &pane,
        &format!("cat > '{}'; tmux wait-for -S catdone", file.display()),
    );
    // cat is reading once the pane's command is cat.
    until("cat to start", || {
        pane_var(&tmux, &pane, "pane_current_command") == "cat"
    })
    .await;
    let text = "it's \"quoted\" #{pane_id} #(id) %d ; \\ $HOME é✓\n\tsecond line\n";
    let result = ok(&svc, "paste_text", json!({"text": text, "pane_id": pane})).await;
    assert_eq!(result, format!("Text pasted to pane {pane}"));
    tmux.cmd(&["send-keys", "-t", &pane, "C-d"]);
    tmux.wait_for("catdone", WAIT).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(buffers(&tmux), "");

    // Without pane_id: the first pane of the session.
    ok(
        &svc,
        "paste_text",
        json!({"text": "printf '%s-%s\\n' via session; tmux wait-for -S p2\n", "session_name": "main", "bracket": false}),
    )
    .await;
    tmux.wait_for("p2", WAIT).await;
    assert!(capture(&tmux, &pane).contains("via-session"));

    // Failures leave no buffer behind.
    assert!(
        err(&svc, "paste_text", json!({"text": "x", "pane_id": "%999"}))
            .await
            .contains("Pane not found")
    );
    assert!(
        err(
            &svc,
            "paste_text",
            json!({"text": "a\u{0}b", "pane_id": pane})
        )
        .await
        .contains("NUL")
    );
    assert!(
        err(&svc, "paste_text", json!({"text": "", "pane_id": pane}))
            .await
            .contains("empty")
    );
    assert!(
        err(&svc, "paste_text", json!({"pane_id": pane}))
            .await
            .contains("text")
    );
    assert_eq!(buffers(&tmux), "");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn clear_pane_resets_and_drops_history() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    type_line(&tmux, &pane, "seq 1 300; tmux wait-for -S seqdone");
    tmux.wait_for("seqdone", WAIT).await;
    assert!(
        pane_var(&tmux, &pane, "history_size")
            .parse::<u64>()
            .unwrap()
            > 0
    );

    let result = ok(&svc, "clear_pane", json!({"pane_id": pane})).await;
    assert_eq!(result, format!("Pane cleared: {pane}"));
    assert_eq!(pane_var(&tmux, &pane, "history_size"), "0");
    assert!(!capture(&tmux, &pane).contains("300"));

    assert!(
        err(&svc, "clear_pane", json!({"pane_id": "%999"}))
            .await
            .contains("Pane not found")
    );
    assert!(
        err(&svc, "clear_pane", json!({"session_name": "nope"}))
            .await
            .contains("Object not found")
    );
}

#[tokio::test]
async fn respawn_pane_restarts_in_place() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let old_pid = pane_var(&tmux, &pane, "pane_pid");
    let dir = temp_dir("respawn");
    let out = dir.join("out");
    let shell = format!(
        "sh -c 'printf \"%s %s\\n\" \"$FOO\" \"$(pwd)\" > {}; tmux wait-for -S respawned; exec sh'",
        out.display()
    );

    let info = ok(
        &svc,
        "respawn_pane",
        json!({"pane_id": pane, "shell": shell, "environment": {"FOO": "bar baz"},
               "start_directory": dir}),
    )
    .await;
    tmux.wait_for("respawned", WAIT).await;
    assert_eq!(info["pane_id"], pane);
    let new_pid = info["pane_pid"].as_str().unwrap();
    assert_ne!(new_pid, old_pid);
    assert_eq!(new_pid, pane_var(&tmux, &pane, "pane_pid"));
    let canon = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("bar baz {}\n", canon.display())
    );

    // kill=false on a live pane is tmux's refusal; nothing restarts.
    let text = err(
        &svc,
        "respawn_pane",
        json!({"pane_id": pane, "kill": false}),
    )
    .await;
    assert!(text.contains("still active"), "{text}");
    assert!(
        err(
            &svc,
            "respawn_pane",
            json!({"pane_id": pane, "start_directory": "/nonexistent/dir"})
        )
        .await
        .contains("not an existing directory")
    );
    assert!(
        err(&svc, "respawn_pane", json!({}))
            .await
            .contains("pane_id")
    );
    assert!(
        err(&svc, "respawn_pane", json!({"pane_id": "%999"}))
            .await
            .contains("Pane not found")
    );

    // Our own pane is refused.
    let me = format!("{},1,0", tmux.socket_path().display());
    let inside = tmux.service_with(&[("TMUX", &me), ("TMUX_PANE", &pane)]);
    let text = err(&inside, "respawn_pane", json!({"pane_id": pane})).await;
    assert!(
        text.starts_with("Refusing to respawn the pane running this MCP server."),
        "{text}"
    );
    assert_eq!(pane_var(&tmux, &pane, "pane_pid"), new_pid);
    let _ = std::fs::remove_dir_all(dir);
}

/// A pane our first session's client streams (a cursor), swapped into
/// another session, printing there, then respawned with kill: before 3.8
/// tmux kept that client's frozen offset for the pane across the respawn
/// and its parser read past the new buffer (SIGSEGV in `input_parse`; 20
/// of 20 such runs on 3.3a and 3.7b before the guard). See
/// protocol/tmux-control.md §7b.
#[tokio::test]
async fn respawning_a_streamed_pane_swapped_into_another_session_leaves_tmux_alive() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let server = || tmux.try_cmd(&["display-message", "-p", "#{pid}"]).stdout;
    let pid = server();
    ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    let other = tmux.cmd(&["new-session", "-d", "-s", "other", "-P", "-F", "#{pane_id}"]);
    ok(
        &svc,
        "swap_pane",
        json!({"source_pane_id": pane, "target_pane_id": other.trim()}),
    )
    .await;
    // Output tmux has read and parsed (it is on the screen) after the swap.
    type_line(&tmux, &pane, "seq 1 300; echo printed-$((6*7))");
    until("the pane to print", || {
        capture(&tmux, &pane).contains("printed-42")
    })
    .await;

    let shell = "sh -c 'echo hi; exec sh'";
    ok(
        &svc,
        "respawn_pane",
        json!({"pane_id": pane, "kill": true, "shell": shell}),
    )
    .await;
    // The new program's first read is what crashed tmux: wait until it is
    // on the screen (polled with the CLI, which fails if tmux is gone).
    until("the respawned pane to print", || {
        let out = tmux.try_cmd(&["capture-pane", "-p", "-t", &pane]);
        !out.status.success() || String::from_utf8_lossy(&out.stdout).contains("hi")
    })
    .await;
    assert_eq!(server(), pid, "the tmux server survived the respawn");
    // The pane streams again, from the respawn on.
    let since = ok(&svc, "capture_since", json!({"pane_id": pane})).await;
    assert!(since["cursor"].is_string(), "{since}");
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn pipe_pane_writes_exactly_the_literal_path() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = tmux.first_pane();
    let dir = temp_dir("pipe");
    let names = [
        "a#{pane_id}b",
        "#(id)",
        "%d %Y %%",
        "sp ace",
        "q'uote\"",
        "#[fg=red]",
        "##[x]",
        "##{x}",
        "#S#42",
        "$HOME;x",
        "back\\slash~",
        "tail#",
    ];
    for name in names {
        let path = dir.join(name);
        let result = ok(
            &svc,
            "pipe_pane",
            json!({"pane_id": pane, "output_path": path}),
        )
        .await;
        assert_eq!(result, format!("Piping pane {pane} to {}", path.display()));
        assert_eq!(pane_var(&tmux, &pane, "pane_pipe"), "1");
        until(name, || path.exists()).await;
    }
    let mut expected: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(listing(&dir), expected);

    // Output reaches the file; append=false truncates first.
    let path = dir.join("log");
    std::fs::write(&path, "old\n").unwrap();
    ok(
        &svc,
        "pipe_pane",
        json!({"session_name": "main", "output_path": path, "append": false}),
    )
    .await;
    type_line(&tmux, &pane, "printf '%s-%s\\n' piped text");
    until("piped output", || {
        std::fs::read_to_string(&path).is_ok_and(|t| t.contains("piped-text"))
    })
    .await;
    assert!(!std::fs::read_to_string(&path).unwrap().contains("old"));

    let stopped = ok(&svc, "pipe_pane", json!({"pane_id": pane})).await;
    assert_eq!(stopped, format!("Piping stopped for pane {pane}"));
    assert_eq!(pane_var(&tmux, &pane, "pane_pipe"), "0");

    for bad in ["", "   "] {
        assert!(
            err(
                &svc,
                "pipe_pane",
                json!({"pane_id": pane, "output_path": bad})
            )
            .await
            .contains("non-empty path")
        );
    }
    let long = format!("/tmp/{}", "a".repeat(5000));
    assert!(
        err(
            &svc,
            "pipe_pane",
            json!({"pane_id": pane, "output_path": long})
        )
        .await
        .contains("at most")
    );
    assert!(
        err(
            &svc,
            "pipe_pane",
            json!({"pane_id": "%999", "output_path": dir.join("never")})
        )
        .await
        .contains("Pane not found")
    );
    assert_eq!(pane_var(&tmux, &pane, "pane_pipe"), "0");
    assert!(!dir.join("never").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn search_panes_finds_sorts_and_pages() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let main = tmux.first_pane();
    tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "other",
        "-n",
        "ow",
        "-x",
        "80",
        "-y",
        "20",
        "env PS1='$ ' sh",
    ]);
    let other = tmux
        .cmd(&["display-message", "-p", "-t", "other", "#{pane_id}"])
        .trim()
        .to_owned();
    type_line(
        &tmux,
        &main,
        "printf '%s-%s\\n' needle alpha; printf 'h%st\\n' 1 2 3 4 5; tmux wait-for -S s1",
    );
    tmux.wait_for("s1", WAIT).await;
    // 78 zeros then the needle: it wraps at column 80 and only a joined
    // capture sees it whole.
    type_line(
        &tmux,
        &other,
        "printf '%s-%s\\n' Needle beta; printf '%078d%s\\n' 0 WRAPNEEDLE; echo 10.0.0.1 | tr 0 2; tmux wait-for -S s2",
    );
    tmux.wait_for("s2", WAIT).await;

    let found = ok(&svc, "search_panes", json!({"pattern": "needle-"})).await;
    assert_eq!(found["total_panes_matched"], 2);
    assert_eq!(found["truncated"], false);
    assert_eq!(found["offset"], 0);
    assert_eq!(found["limit"], 500);
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches[0]["pane_id"], main);
    assert_eq!(matches[1]["pane_id"], other);
    // A shell still starting may print its prompt in front of the output.
    let only_line = |m: &serde_json::Value| {
        let lines = m["matched_lines"].as_array().unwrap();
        assert_eq!(lines.len(), 1, "{m}");
        lines[0].as_str().unwrap().to_owned()
    };
    assert!(only_line(&matches[0]).ends_with("needle-alpha"));
    assert!(only_line(&matches[1]).ends_with("Needle-beta"));
    assert_eq!(matches[1]["session_name"], "other");
    assert_eq!(matches[1]["window_name"], "ow");
    assert_eq!(
        matches[1]["window_id"],
        tmux.cmd(&["display-message", "-p", "-t", &other, "#{window_id}"])
            .trim()
    );
    assert_eq!(matches[1]["pane_at_left"], true);
    assert_eq!(matches[1]["is_caller"], json!(null));

    let exact = ok(
        &svc,
        "search_panes",
        json!({"pattern": "Needle-", "match_case": true}),
    )
    .await;
    assert_eq!(exact["total_panes_matched"], 1);
    assert_eq!(exact["matches"][0]["pane_id"], other);

    let scoped = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "session_name": "main"}),
    )
    .await;
    assert_eq!(scoped["total_panes_matched"], 1);
    assert_eq!(scoped["matches"][0]["pane_id"], main);

    let re = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-(alpha|beta)$", "regex": true}),
    )
    .await;
    assert_eq!(re["total_panes_matched"], 2);

    let wrapped = ok(&svc, "search_panes", json!({"pattern": "0WRAPNEEDLE"})).await;
    assert_eq!(wrapped["matches"][0]["pane_id"], other);
    assert_eq!(
        wrapped["matches"][0]["matched_lines"][0]
            .as_str()
            .unwrap()
            .len(),
        88
    );

    // Literal mode: dots are dots.
    let dotted = ok(&svc, "search_panes", json!({"pattern": "12.2.2.1"})).await;
    assert_eq!(dotted["total_panes_matched"], 1);
    assert_eq!(
        ok(&svc, "search_panes", json!({"pattern": "12.2.2.1x"})).await["total_panes_matched"],
        0
    );
    // Format syntax is text, never expanded.
    assert_eq!(
        ok(&svc, "search_panes", json!({"pattern": "#{pane_id}"})).await["total_panes_matched"],
        0
    );

    let capped = ok(
        &svc,
        "search_panes",
        json!({"pattern": "^h[0-9]t$", "regex": true, "max_matched_lines_per_pane": 2}),
    )
    .await;
    assert_eq!(capped["matches"][0]["matched_lines"], json!(["h4t", "h5t"]));
    assert_eq!(capped["truncated"], true);

    let page1 = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "limit": 1}),
    )
    .await;
    assert_eq!(page1["matches"].as_array().unwrap().len(), 1);
    assert_eq!(page1["matches"][0]["pane_id"], main);
    assert_eq!(page1["truncated_panes"], json!([other]));
    assert_eq!(page1["truncated"], true);
    assert_eq!(page1["total_panes_matched"], 2);
    let page2 = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "limit": 1, "offset": 1}),
    )
    .await;
    assert_eq!(page2["matches"][0]["pane_id"], other);
    assert_eq!(page2["truncated_panes"], json!([]));
    assert_eq!(page2["offset"], 1);
    let all = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "limit": null}),
    )
    .await;
    assert_eq!(all["matches"].as_array().unwrap().len(), 2);
    assert_eq!(all["limit"], json!(null));

    // Scrollback range: the first lines, by content_start/content_end.
    // Line 0 is the typed command (no "needle-"), line 1 its output.
    let top = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "content_start": 0, "content_end": 0}),
    )
    .await;
    assert_eq!(top["total_panes_matched"], 0);
    let second = ok(
        &svc,
        "search_panes",
        json!({"pattern": "needle-", "content_start": 1, "content_end": 1, "session_name": "main"}),
    )
    .await;
    assert_eq!(second["matches"][0]["pane_id"], main);

    let bad = err(&svc, "search_panes", json!({"pattern": "(", "regex": true})).await;
    assert!(bad.starts_with("Invalid regex pattern"), "{bad}");
    assert!(
        err(&svc, "search_panes", json!({"pattern": "a".repeat(1001)}))
            .await
            .contains("longer than 1000")
    );
    assert!(
        err(
            &svc,
            "search_panes",
            json!({"pattern": "x", "session_name": "nope"})
        )
        .await
        .contains("Object not found")
    );
    assert!(
        err(
            &svc,
            "search_panes",
            json!({"pattern": "x", "max_matched_lines_per_pane": 0})
        )
        .await
        .contains("positive")
    );
}
