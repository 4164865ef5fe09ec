//! `wait_for_attention` against real shells and programs in a private
//! tmux: each reason caused by what a program prints or does, events
//! between calls kept, and a flooding neighbour that does not delay one.
//!
//! Every wait is the tool's own: a call returns when an event came, and
//! a test calls again with the returned `since` until the event it caused
//! shows, within [`BOUND`].

use std::time::{Duration, Instant};

use crate::pane_clean_live::shell_pane;
use crate::support::{BOUND, PrivateTmux, finish, ok, start_armed};
use serde_json::{Value, json};
use tmux_mcp::tools::TmuxService;
use tokio_util::sync::CancellationToken;

/// A new window running bash without start-up files, at its prompt.
async fn bash(tmux: &PrivateTmux) -> String {
    shell_pane(tmux, "bash", "env PS1='$ ' bash --norc --noprofile").await
}

fn type_line(tmux: &PrivateTmux, pane: &str, line: &str) {
    tmux.cmd(&["send-keys", "-t", pane, "-l", line]);
    tmux.cmd(&["send-keys", "-t", pane, "Enter"]);
}

/// Calls until an event of `reason` from `pane` comes (events before it
/// are skipped); returns it and the token after it.
async fn until_event(
    svc: &TmuxService,
    scope: &Value,
    since: &str,
    pane: &str,
    reason: &str,
) -> (Value, String) {
    let started = Instant::now();
    let mut since = since.to_owned();
    loop {
        let mut args = scope.clone();
        args["since"] = json!(since);
        args["timeout"] = json!(5);
        let got = ok(svc, "wait_for_attention", args).await;
        assert_eq!(got["dropped"], 0, "{got}");
        since = got["since"].as_str().expect("a token").to_owned();
        if let Some(e) = got["events"]
            .as_array()
            .expect("events")
            .iter()
            .find(|e| e["pane_id"] == pane && e["reason"] == reason)
        {
            return (e.clone(), since);
        }
        assert!(
            started.elapsed() < BOUND,
            "no {reason} from {pane}; last answer {got}"
        );
    }
}

/// Arms the scope: a call that returns at its (short) timeout with no
/// event, since nothing happened; its token is where the test starts.
async fn arm(svc: &TmuxService, scope: &Value) -> String {
    let mut args = scope.clone();
    args["timeout"] = json!(0.3);
    let got = ok(svc, "wait_for_attention", args).await;
    assert_eq!(got["events"], json!([]), "{got}");
    got["since"].as_str().expect("a token").to_owned()
}

#[tokio::test]
async fn every_reason_comes_from_a_real_shell() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    let scope = json!({"pane_ids": [pane]});
    let since = arm(&svc, &scope).await;

    type_line(&tmux, &pane, r"printf '\a'");
    let (bell, since) = until_event(&svc, &scope, &since, &pane, "bell").await;
    assert!(bell["time"].as_f64().unwrap() > 1.7e9, "{bell}");

    type_line(&tmux, &pane, r"printf '\e]9;build done\a'");
    let (n, since) = until_event(&svc, &scope, &since, &pane, "notify").await;
    assert_eq!(n["detail"], "build done");

    type_line(&tmux, &pane, r"printf '\e]777;notify;Claude;needs you\e\\'");
    let (n, since) = until_event(&svc, &scope, &since, &pane, "notify").await;
    assert_eq!(n["detail"], "Claude: needs you");

    type_line(&tmux, &pane, "sleep 0.3");
    let (p, since) = until_event(&svc, &scope, &since, &pane, "prompt").await;
    assert_eq!(p["detail"], "bash");

    type_line(&tmux, &pane, "python3 -c 'input(\"name? \")'");
    let (i, since) = until_event(&svc, &scope, &since, &pane, "input").await;
    assert_eq!(i["detail"], "python3", "{i}");
    type_line(&tmux, &pane, "x");
    let (_, since) = until_event(&svc, &scope, &since, &pane, "prompt").await;

    tmux.cmd(&["set", "-p", "-t", &pane, "@status", "done"]);
    let (s, since) = until_event(&svc, &scope, &since, &pane, "status").await;
    assert_eq!(s["detail"], "@status=done");

    // Set while a call waits: tmux's subscription reports it (once a second).
    let mut args = scope.clone();
    args["since"] = json!(since);
    args["reasons"] = json!(["status"]);
    args["timeout"] = json!(10);
    let call = start_armed(&svc, "wait_for_attention", args, CancellationToken::new()).await;
    tmux.cmd(&["set", "-p", "-t", &pane, "@claude_status", "waiting"]);
    let got = finish(call).await;
    assert_eq!(
        got["events"][0]["detail"], "@claude_status=waiting",
        "{got}"
    );
    let since = got["since"].as_str().unwrap().to_owned();

    type_line(&tmux, &pane, "exit");
    let (e, _) = until_event(&svc, &scope, &since, &pane, "exited").await;
    assert_eq!(e["detail"], "");
}

#[tokio::test]
async fn events_between_calls_are_kept_for_the_next() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let a = bash(&tmux).await;
    let b = bash(&tmux).await;
    let session = tmux
        .cmd(&["display-message", "-p", "-t", &a, "#{session_id}"])
        .trim()
        .to_owned();
    let scope = json!({"session_id": session});
    let since = arm(&svc, &scope).await;

    // No call runs: the panes stay armed, the feed records.
    type_line(&tmux, &a, r"printf '\a'; tmux wait-for -S rang");
    tmux.wait_for("rang", BOUND).await;
    type_line(&tmux, &b, r"printf '\e]9;from b\a'; tmux wait-for -S told");
    tmux.wait_for("told", BOUND).await;
    let asked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();

    let mut args = scope.clone();
    args["since"] = json!(since);
    args["reasons"] = json!(["bell", "notify"]);
    let got = ok(&svc, "wait_for_attention", args).await;
    let events = got["events"].as_array().unwrap();
    let find = |pane: &str, reason: &str| {
        events
            .iter()
            .find(|e| e["pane_id"] == pane && e["reason"] == reason)
            .unwrap_or_else(|| panic!("no {reason} from {pane}: {got}"))
    };
    assert!(find(&a, "bell")["time"].as_f64().unwrap() <= asked + 0.001);
    assert_eq!(find(&b, "notify")["detail"], "from b");
    assert_eq!(got["panes"], 3, "the session's first window and the two");

    // The same token again: the same events; the new token: none of them.
    let mut again = scope.clone();
    again["since"] = json!(since);
    again["reasons"] = json!(["bell", "notify"]);
    assert_eq!(
        ok(&svc, "wait_for_attention", again).await["events"],
        got["events"]
    );
    let mut after = scope.clone();
    after["since"] = got["since"].clone();
    after["reasons"] = json!(["bell", "notify"]);
    after["timeout"] = json!(0.3);
    assert_eq!(
        ok(&svc, "wait_for_attention", after).await["events"],
        json!([])
    );

    let bad = json!({"since": "not-a-token", "timeout": 1});
    let text = crate::support::err(&svc, "wait_for_attention", bad).await;
    assert!(text.contains("since"), "{text}");
}

#[tokio::test]
async fn a_flooding_neighbour_does_not_delay_an_event() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let quiet = bash(&tmux).await;
    let flood = bash(&tmux).await;
    type_line(&tmux, &flood, "yes");
    tmux.until_foreground(&flood, "yes").await;
    let scope = json!({"pane_ids": [quiet, flood]});
    let since = arm(&svc, &scope).await;

    let mut args = scope.clone();
    args["since"] = json!(since);
    args["reasons"] = json!(["notify"]);
    args["timeout"] = json!(10);
    let call = start_armed(&svc, "wait_for_attention", args, CancellationToken::new()).await;
    let sent = Instant::now();
    type_line(&tmux, &quiet, r"printf '\e]9;still here\a'");
    let got = finish(call).await;
    let took = sent.elapsed();
    let events = got["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{got}");
    assert_eq!(events[0]["pane_id"], quiet.as_str());
    assert_eq!(events[0]["detail"], "still here");
    // The shell must read, echo and run the line first; the bench measures
    // the tool's own latency (BENCHMARKS.md).
    assert!(took < Duration::from_secs(2), "took {took:?}");
    tmux.cmd(&["send-keys", "-t", &flood, "C-c"]);
}

/// A session a call watched and the person then killed leaves tmux
/// alive. Before 3.7, tmux's once-a-second check of a control client's
/// subscriptions read the session of a client whose session had just been
/// killed (NULL, in `control_check_subs_all_panes`): 3.3a died when one
/// of ours had subscribed to the pane options of a session of many
/// windows (`protocol/tmux-control.md` §7d). Nothing of a watch is kept
/// in tmux now; since the fault came on tmux's timer, tmux is watched
/// through two of its ticks after the kill.
#[tokio::test]
async fn a_watched_session_killed_by_the_person_leaves_tmux_alive() {
    const WINDOWS: usize = 50;
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let bash = "bash --norc --noprofile";
    tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "doomed",
        "-x",
        "120",
        "-y",
        "40",
        bash,
    ]);
    for _ in 1..WINDOWS {
        tmux.cmd(&["new-window", "-d", "-t", "doomed:", bash]);
    }
    let started = Instant::now();
    loop {
        let xs = tmux.cmd(&["list-panes", "-s", "-t", "doomed", "-F", "#{cursor_x}"]);
        if xs.lines().filter(|x| *x != "0").count() == WINDOWS {
            break;
        }
        assert!(started.elapsed() < BOUND, "prompts not drawn: {xs}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = tmux.cmd(&["display-message", "-p", "#{pid}"]);
    for timeout in [1.0, 2.0] {
        let args = json!({"session_name": "doomed", "timeout": timeout});
        let got = ok(&svc, "wait_for_attention", args).await;
        assert_eq!(got["panes"], WINDOWS, "{got}");
    }

    tmux.cmd(&["kill-session", "-t", "doomed"]);
    let killed = Instant::now();
    while killed.elapsed() < Duration::from_millis(2500) {
        let out = tmux.try_cmd(&["display-message", "-p", "#{pid}"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            pid,
            "tmux died {:?} after the watched session was killed",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let got = ok(&svc, "list_sessions", json!({})).await;
    assert!(!got.to_string().contains("doomed"), "{got}");
}

/// A password prompt is `secret`, with how a person reaches the pane: a
/// `read -s` of the shell itself and Python's `getpass`.
#[tokio::test]
async fn a_password_prompt_is_secret_with_how_to_reach_it() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    let scope = json!({"pane_ids": [pane]});
    let since = arm(&svc, &scope).await;
    let reach = format!("attach -t {pane}");

    type_line(
        &tmux,
        &pane,
        "python3 -c 'import getpass; getpass.getpass(\"pw? \")'",
    );
    let (s, since) = until_event(&svc, &scope, &since, &pane, "secret").await;
    let detail = s["detail"].as_str().expect("a detail");
    assert!(
        detail.starts_with("python3") && detail.contains(&reach),
        "{s}"
    );
    tmux.cmd(&["send-keys", "-t", &pane, "C-c"]);
    let (_, since) = until_event(&svc, &scope, &since, &pane, "prompt").await;

    type_line(&tmux, &pane, "read -s -p 'pw? ' x");
    let (s, _) = until_event(&svc, &scope, &since, &pane, "secret").await;
    assert!(
        s["detail"].as_str().is_some_and(|d| d.contains(&reach)),
        "{s}"
    );
}

/// A pane that exited (kept by `remain-on-exit`) is reported once: the
/// next call with the new token waits (issue 33, `r5`: every call
/// returned the same end again, about every 22 ms).
#[tokio::test]
async fn an_exited_pane_is_reported_once() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    tmux.cmd(&["set", "-g", "remain-on-exit", "on"]);
    let pane = bash(&tmux).await;
    let scope = json!({"pane_ids": [pane]});
    let since = arm(&svc, &scope).await;

    type_line(&tmux, &pane, "exit");
    let (_, since) = until_event(&svc, &scope, &since, &pane, "exited").await;
    for _ in 0..2 {
        let mut args = scope.clone();
        args["since"] = json!(since);
        args["timeout"] = json!(0.5);
        let got = ok(&svc, "wait_for_attention", args).await;
        assert_eq!(got["events"], json!([]), "told again: {got}");
        assert_eq!(got["since"], json!(since), "{got}");
    }
}

/// A shell that ran something and came back to its prompt while no call
/// waited is a `prompt` for the next call with the token (issue 33, `r6`:
/// the entry probe saw a prompt before and after, and nothing was told).
#[tokio::test]
async fn a_prompt_between_calls_is_kept_for_the_next() {
    let tmux = PrivateTmux::start();
    let svc = tmux.service();
    let pane = bash(&tmux).await;
    let scope = json!({"pane_ids": [pane]});
    let since = arm(&svc, &scope).await;

    // No call runs while the command runs and ends.
    type_line(&tmux, &pane, "sleep 1.5; tmux wait-for -S ran");
    tmux.wait_for("ran", BOUND).await;
    tmux.until_text(&pane, |t| t.trim_end().ends_with("-S ran\n$"))
        .await;

    let mut args = scope.clone();
    args["since"] = json!(since);
    args["timeout"] = json!(3);
    let got = ok(&svc, "wait_for_attention", args).await;
    let events = got["events"].as_array().expect("events");
    assert!(
        events
            .iter()
            .any(|e| e["pane_id"] == pane.as_str() && e["reason"] == "prompt"),
        "{got}"
    );
    // Told once: the new token has nothing more.
    let mut args = scope.clone();
    args["since"] = got["since"].clone();
    args["timeout"] = json!(0.5);
    assert_eq!(
        ok(&svc, "wait_for_attention", args).await["events"],
        json!([])
    );
}
