//! Round-trips arguments through a real tmux and compares bytes exactly:
//! `set-buffer` writes the argument, `save-buffer` reads it back.
//!
//! - control mode: the line comes from `Command::to_line` (so `quote`),
//!   sent to a `tmux -C` client whose stream is read with the crate's parser;
//! - one-shot argv: `Command::to_argv` (so `argv_escape`) for a `tmux`
//!   process.
//!
//! Every test runs its own server (`tmux -L tmuxmcp-quoting-<pid>-<n> -f
//! /dev/null`), killed by a drop guard even when the test panics. The
//! default socket is never used. Waits are on conditions with deadlines.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tmux_mcp::tmux::Command;
use tmux_mcp::tmux::control::{Event, Parser, Reply};

const DEADLINE: Duration = Duration::from_secs(30);

/// A `tmux` process with no inherited `$TMUX`, so only our socket is used.
fn tmux() -> std::process::Command {
    let mut cmd = std::process::Command::new("tmux");
    cmd.env_remove("TMUX").env_remove("TMUX_PANE");
    cmd
}

/// A private tmux server, killed (and its socket and scratch dir removed) on drop.
struct Server {
    name: String,
    socket: PathBuf,
    scratch: PathBuf,
}

impl Server {
    fn start() -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        // Not `tmuxmcp-test-…`: `support::PrivateTmux` numbers those in this process.
        let name = format!("tmuxmcp-quoting-{}-{n}", std::process::id());
        let scratch = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&scratch).unwrap();
        // The guard exists before the server does: a failure below still kills it.
        let mut server = Server {
            name,
            socket: PathBuf::new(),
            scratch,
        };
        let status = tmux()
            .args([
                "-L",
                &server.name,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "q",
                "-x",
                "80",
                "-y",
                "24",
            ])
            .arg("sleep 86400")
            .status()
            .expect("tmux must be installed to run the live tests");
        assert!(status.success(), "new-session failed");
        let out = tmux()
            .args([
                "-L",
                &server.name,
                "display-message",
                "-p",
                "-t",
                "q",
                "#{socket_path}",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        server.socket = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
        assert!(server.socket.is_absolute(), "{:?}", server.socket);
        server
    }

    /// A fresh file name in the scratch dir.
    fn scratch_file(&self, tag: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        self.scratch
            .join(format!("{tag}-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
    }

    /// Runs a one-shot `tmux -S <socket> <cmd>`.
    fn oneshot(&self, cmd: &Command) -> std::process::Output {
        tmux()
            .arg("-S")
            .arg(&self.socket)
            .args(cmd.to_argv().unwrap())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = tmux()
            .args(["-L", &self.name, "kill-server"])
            .stderr(Stdio::null())
            .status();
        if !self.socket.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.socket);
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// A `tmux -C` client; its stdout is parsed on a thread into a channel.
struct Control {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Event>,
}

impl Control {
    fn attach(server: &Server) -> Control {
        let attach = Command::new("attach-session")
            .target("$0")
            .opt("-f", "ignore-size");
        let mut argv: Vec<OsString> = vec![
            "-u".into(),
            "-S".into(),
            server.socket.clone().into(),
            "-C".into(),
        ];
        argv.extend(attach.to_argv().unwrap());
        let mut child = tmux()
            .args(argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            let mut parser = Parser::new(64 << 20, 256 << 20);
            let mut buf = vec![0; 1 << 16];
            let mut out = Vec::new();
            loop {
                let n = stdout.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    parser.finish(&mut out);
                } else {
                    parser.push(&buf[..n], &mut out);
                }
                for event in out.drain(..) {
                    if tx.send(event).is_err() {
                        return;
                    }
                }
                if n == 0 {
                    return;
                }
            }
        });
        let mut control = Control {
            child,
            stdin,
            events,
        };
        // tmux 3.3a reads stdin before the initial command has run: wait for
        // its flags-0 reply before sending anything.
        let initial = control.next_reply(|g| g.flags == 0);
        assert!(initial.ok, "attach failed: {}", initial.text());
        control
    }

    fn next_reply(&mut self, want: impl Fn(&tmux_mcp::tmux::control::Guard) -> bool) -> Reply {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Event::Reply(reply)) if want(&reply.guard) => return reply,
                Ok(Event::Exit(reason)) => panic!("control client exited: {reason:?}"),
                Ok(_) => {}
                Err(e) => panic!("no reply from tmux: {e}"),
            }
        }
    }

    /// Sends one command line and returns its (flags 1) reply.
    fn run(&mut self, cmd: &Command) -> Reply {
        let mut line = cmd.to_line().unwrap();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
        self.next_reply(|g| g.flags == 1)
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn set_buffer(name: &str, data: &[u8]) -> Command {
    Command::new("set-buffer")
        .opt("-b", name)
        .flag("--")
        .arg(data)
}

fn save_buffer(name: &str, path: &Path) -> Command {
    Command::new("save-buffer")
        .opt("-b", name)
        .arg(path.as_os_str().as_encoded_bytes())
}

/// `save-buffer` from a control client answers `%end` before the file is
/// written: the `tmux -C` child writes it asynchronously after the server
/// sent the data, and the server reports done as soon as it has sent it
/// (tmux 3.3a `file_push`). So wait for the condition itself: the file has
/// reached the expected size (a file that never does fails at the deadline;
/// one that grows past it fails the comparison).
fn read_when_complete(path: &Path, len: usize) -> Vec<u8> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Ok(meta) = std::fs::metadata(path)
            && meta.len() >= len as u64
        {
            return std::fs::read(path).unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "{} never reached {len} bytes",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1)); // poll interval, not a stand-in for the condition
    }
}

/// Deterministic bytes in 1..=255 (xorshift), so failures reproduce.
fn random_bytes(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let b = (seed >> 24) as u8;
        if b != 0 {
            out.push(b);
        }
    }
    out
}

/// Every case: each byte 0x01-0xFF alone and inside text, the grammar's
/// special characters and their combinations, and random strings.
fn cases() -> Vec<Vec<u8>> {
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for b in 1..=255u8 {
        cases.push(vec![b]);
        cases.push([&b"a"[..], &[b], b"z"].concat());
    }
    let specials: &[&[u8]] = &[
        b";",
        b"#",
        b"{",
        b"}",
        b"$",
        b"~",
        b"\"",
        b"'",
        b"\\",
        b"; # { } $ ~ \" ' \\",
        b";#{}$~\"'\\",
        b"'$HOME'",
        b"$HOME",
        b"${HOME}",
        b"\"$HOME\"",
        b"~root",
        b"~",
        b"~/x",
        b"x~",
        b"#{pane_id}",
        b"#[fg=red]",
        b"##",
        b"#",
        b"a #b",
        b"%done",
        b"%if",
        b"%endif",
        b"%0",
        b"%%",
        b"%",
        b"-",
        b"-l",
        b"--",
        b"-- x",
        b"-b t",
        b"a;",
        b";",
        b"a\\;",
        b"\\;",
        b";;",
        b"a\\\\;",
        b"a ;",
        b"a; b",
        b"\\",
        b"a\\",
        b"\\\\",
        b"line1\nline2",
        b"\n",
        b"\r\n",
        b"trailing newline\n",
        b"\n\n\n",
        b"\xc3",
        b"\xff\xfe",
        b"\xed\xa0\x80",
        b"\x80abc\xbf",
        "é€😀".as_bytes(),
        b"NAME=value",
        b"A=1 B=2",
        b" leading space",
        b"trailing space ",
        b"  ",
        b"\t",
        b"{ x }",
        b"{",
        b"\"dq\"",
        b"\\033",
        b"\\x41",
        b"\\u0041",
        b"\\e",
        b"\x7f",
        b"''",
        b"'",
        b"it's",
        b"\\'",
        b"\x1b[1;31mred",
        b"\xff",
        b"a\xffb",
        b"\xff\xff",
        b"%begin 1 2 1",
        b"%end 1 2 1",
        b"%exit",
        b"\\;;",
        b"x\\",
        b"'\\''",
    ];
    cases.extend(specials.iter().map(|s| s.to_vec()));
    for (i, len) in [1usize, 7, 64, 500, 4000].into_iter().enumerate() {
        cases.push(random_bytes(len, 0x9e37_79b9_7f4a_7c15 ^ i as u64));
    }
    cases
}

fn preview(bytes: &[u8]) -> String {
    let shown: String = bytes
        .iter()
        .take(40)
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    format!(
        "{} bytes \"{shown}{}\"",
        bytes.len(),
        if bytes.len() > 40 { "…" } else { "" }
    )
}

#[test]
fn control_mode_round_trips_every_case() {
    let server = Server::start();
    let mut control = Control::attach(&server);
    let mut cases = cases();
    cases.push(random_bytes(3 << 20, 42)); // multi-megabyte line
    let mut failures = Vec::new();
    for case in &cases {
        let set = control.run(&set_buffer("t", case));
        if !set.ok {
            failures.push(format!(
                "{}: set-buffer failed: {}",
                preview(case),
                set.text()
            ));
            continue;
        }
        let file = server.scratch_file("cc");
        let save = control.run(&save_buffer("t", &file));
        assert!(save.ok, "save-buffer: {}", save.text());
        let got = read_when_complete(&file, case.len());
        if &got != case {
            failures.push(format!("{}: came back as {}", preview(case), preview(&got)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// `set-buffer` with empty data is a no-op (no buffer is made), so the empty
/// argument is checked by its effect: `''` is one empty argument (appending
/// it changes nothing), while no argument at all is an error.
#[test]
fn control_mode_empty_argument() {
    let server = Server::start();
    let mut control = Control::attach(&server);
    assert!(control.run(&set_buffer("e", b"")).ok);
    let list = control.run(&Command::new("list-buffers").opt("-F", "#{buffer_name}"));
    assert!(
        !list.lines.iter().any(|l| l == b"e"),
        "empty set-buffer made a buffer: {:?}",
        list.text()
    );

    assert!(control.run(&set_buffer("t", b"keep")).ok);
    assert!(
        control
            .run(
                &Command::new("set-buffer")
                    .flag("-a")
                    .opt("-b", "t")
                    .flag("--")
                    .arg(b"")
            )
            .ok
    );
    let file = server.scratch_file("empty");
    assert!(control.run(&save_buffer("t", &file)).ok);
    assert_eq!(read_when_complete(&file, 4), b"keep");

    let missing = control.run(&Command::new("set-buffer").opt("-b", "t").flag("--"));
    assert!(
        !missing.ok && missing.text() == "no data specified",
        "{:?}",
        missing.text()
    );
}

#[test]
fn argv_round_trips_every_case() {
    let server = Server::start();
    let mut cases = cases();
    // The one-shot client sends its whole argv in one message of at most
    // 16 KiB (tmux `MAX_IMSGSIZE`), so "large" is 12 KB here.
    cases.push(random_bytes(12_000, 7));
    let mut failures = Vec::new();
    for case in &cases {
        let set = server.oneshot(&set_buffer("t", case));
        if !set.status.success() {
            failures.push(format!(
                "{}: set-buffer failed: {}",
                preview(case),
                String::from_utf8_lossy(&set.stderr)
            ));
            continue;
        }
        let file = server.scratch_file("argv");
        // A one-shot client exits only after it has written the file.
        let save = server.oneshot(&save_buffer("t", &file));
        assert!(
            save.status.success(),
            "save-buffer: {}",
            String::from_utf8_lossy(&save.stderr)
        );
        let got = std::fs::read(&file).unwrap();
        if &got != case {
            failures.push(format!("{}: came back as {}", preview(case), preview(&got)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Past the one-shot message size, tmux refuses the command outright (it is
/// not truncated): large data must go over control mode.
#[test]
fn argv_too_long_is_refused_not_truncated() {
    let server = Server::start();
    let out = server.oneshot(&set_buffer("big", &random_bytes(100_000, 9)));
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("command too long"),
        "{out:?}"
    );
    let list = server.oneshot(&Command::new("list-buffers").opt("-F", "#{buffer_name}"));
    assert!(
        !String::from_utf8_lossy(&list.stdout)
            .lines()
            .any(|l| l == "big")
    );
}

#[test]
fn argv_empty_argument() {
    let server = Server::start();
    assert!(server.oneshot(&set_buffer("t", b"keep")).status.success());
    let append = server.oneshot(
        &Command::new("set-buffer")
            .flag("-a")
            .opt("-b", "t")
            .flag("--")
            .arg(b""),
    );
    assert!(append.status.success(), "{append:?}");
    let file = server.scratch_file("empty");
    assert!(server.oneshot(&save_buffer("t", &file)).status.success());
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
}
