//! `tmux-mcp demo`, run as a user runs it: one narrated line per step, a
//! summary, the raw exchange with `--json`, and its tmux server gone after.

use std::process::Command;

fn demo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tmux-mcp"))
        .arg("demo")
        .args(args)
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env_remove("LIBTMUX_TOOLSETS")
        .env_remove("LIBTMUX_TOOLS")
        .env_remove("LIBTMUX_EXCLUDE_TOOLS")
        .output()
        .expect("tmux-mcp demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `-L` name in "tmux -L <name>" of the narration.
fn socket_of(text: &str) -> String {
    let start = text.find("tmux -L ").expect("names its tmux server") + 8;
    text[start..]
        .split(|c: char| c == ')' || c == ',' || c.is_whitespace())
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn the_demo_narrates_each_step_and_sums_up() {
    let out = demo(&[]);
    let steps: Vec<&str> = out
        .lines()
        .filter(|l| {
            l.trim_start()
                .split('.')
                .next()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(steps.len(), 10, "{out}");
    for (n, step) in steps.iter().enumerate() {
        assert!(
            step.trim_start().starts_with(&format!("{}.", n + 1)),
            "{step}"
        );
        assert!(step.ends_with(" ms]"), "every step has its figure: {step}");
    }
    assert!(out.contains("54 tools, from the default toolsets"), "{out}");
    assert!(out.contains("exit status 3"), "{out}");
    assert!(out.contains("after the pane printed READY-42"), "{out}");
    assert!(out.contains("10 requests, median round trip"), "{out}");
    assert!(out.contains("exited with status 0"), "{out}");
    let socket = socket_of(&out);
    let alive = Command::new("tmux")
        .args(["-L", &socket, "has-session"])
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert!(
        !alive.status.success(),
        "the demo's tmux server {socket} is gone"
    );
}

#[test]
fn demo_json_prints_the_raw_exchange() {
    let out = demo(&["--json"]);
    let mut sent = 0;
    for line in out.lines() {
        let (direction, message) = line.split_at(2);
        let message: serde_json::Value =
            serde_json::from_str(message).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0");
        match direction {
            "> " => sent += 1,
            "< " => assert!(message.get("error").is_none(), "{line}"),
            _ => panic!("neither sent nor received: {line}"),
        }
    }
    assert_eq!(
        sent, 11,
        "10 requests and the initialized notification: {out}"
    );
}
