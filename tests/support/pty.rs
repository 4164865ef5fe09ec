//! A person's tmux client: `tmux attach` on a pseudo-terminal of the
//! test's own, typed into through the master side; what tmux draws on it
//! is kept (a reader thread drains it, so the client never blocks).

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{BOUND, PrivateTmux};

pub struct PtyClient {
    master: std::fs::File,
    child: Child,
    screen: Arc<Mutex<Vec<u8>>>,
    drawn: tokio::sync::watch::Receiver<usize>,
    /// The client's terminal: what tmux names it (`client_name`).
    pub tty: PathBuf,
}

impl PtyClient {
    /// Attaches a client of `tmux`'s server to `session` on a new 80x24
    /// pseudo-terminal, and waits until tmux has drawn on it.
    pub async fn attach(tmux: &PrivateTmux, session: &str) -> PtyClient {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors; name and termios may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both were just opened for us.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let tty = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd()))
            .expect("the slave's path");
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the slave"));
        let mut command = Command::new("tmux");
        command
            .args([
                "-L",
                &tmux.name,
                "-f",
                "/dev/null",
                "attach-session",
                "-t",
                session,
            ])
            .env_remove("TMUX")
            .env("TERM", "xterm")
            .stdin(io(&slave))
            .stdout(io(&slave))
            .stderr(io(&slave));
        // SAFETY: between fork and exec only async-signal-safe calls: a new
        // session, with the slave (stdin) as its controlling terminal.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("tmux attach");
        drop(slave);
        let master = std::fs::File::from(master);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let (tx, drawn) = tokio::sync::watch::channel(0);
        let mut reader = master.try_clone().expect("dup the master");
        let kept = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the client is gone and the slave closed.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let mut screen = kept.lock().unwrap();
                screen.extend_from_slice(&buf[..n]);
                let _ = tx.send(screen.len());
            }
        });
        let client = PtyClient {
            master,
            child,
            screen,
            drawn,
            tty,
        };
        client.until_drawn(|_| true).await;
        client
    }

    /// Types `bytes` as the person would (a key each, unless several are
    /// written at once).
    pub fn type_bytes(&self, bytes: &[u8]) {
        (&self.master)
            .write_all(bytes)
            .expect("type into the client");
    }

    /// Waits until what tmux drew on this client passes `check`; fails
    /// after [`BOUND`].
    pub async fn until_drawn(&self, check: impl Fn(&[u8]) -> bool) {
        let mut drawn = self.drawn.clone();
        let wait = async {
            loop {
                if check(&self.screen.lock().unwrap()) {
                    return;
                }
                drawn.changed().await.expect("the reader is alive");
            }
        };
        tokio::time::timeout(BOUND, wait).await.unwrap_or_else(|_| {
            let screen = self.screen.lock().unwrap();
            panic!(
                "not drawn within {BOUND:?}: {:?}",
                String::from_utf8_lossy(&screen)
            )
        });
    }

    /// How many bytes tmux has drawn on this client so far.
    pub fn drawn_len(&self) -> usize {
        self.screen.lock().unwrap().len()
    }

    /// Whether tmux drew `needle` (as one run of bytes) on this client.
    pub fn shows(screen: &[u8], needle: &str) -> bool {
        screen.windows(needle.len()).any(|w| w == needle.as_bytes())
    }
}

impl Drop for PtyClient {
    fn drop(&mut self) {
        // Our own child, by its pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Types `text` a byte at a time, `gap` apart, on a thread: a person's
/// schedule, not a wait for anything.
pub fn type_on_schedule(
    client: &Arc<PtyClient>,
    text: &str,
    gap: Duration,
) -> std::thread::JoinHandle<()> {
    let client = client.clone();
    let text = text.as_bytes().to_vec();
    std::thread::spawn(move || {
        for b in text {
            client.type_bytes(&[b]);
            std::thread::sleep(gap);
        }
    })
}
