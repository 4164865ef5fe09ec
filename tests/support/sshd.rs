//! A private sshd on 127.0.0.1, for the tests of remote tmux: a host key,
//! an authorized key and a config of its own in a temporary directory, a
//! free port, and every process of it killed when dropped.
//!
//! ssh reaches it only through a wrapper script (`TMUX_MCP_SSH`) that
//! passes a private `ssh -F` config (the user's ~/.ssh is never read or
//! written) and logs each invocation's arguments, one line each, so tests
//! can count ssh processes and find the control socket.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

const SSHD: &str = "/usr/sbin/sshd";
static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Sshd {
    pub dir: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl Sshd {
    /// Starts sshd, or returns `None` (with SKIPPED on stderr) where it is
    /// not installed; CI must have it (`.ci/run` installs openssh-server).
    pub fn start() -> Option<Sshd> {
        if !Path::new(SSHD).exists() || Command::new("ssh").arg("-V").output().is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "sshd or ssh is not installed, and CI must test them"
            );
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {SSHD} or ssh is not installed (apt-get install openssh-server openssh-client)"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "tmuxmcp-sshd-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("sshd dir");
        // sshd refuses to start without its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        for key in ["host_key", "user_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(key))
                .status()
                .expect("ssh-keygen runs");
            assert!(made.success(), "ssh-keygen {key}");
        }
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).expect("copy key");
        let mut sshd = Sshd {
            dir,
            port: free_port(),
            child: None,
        };
        sshd.write_configs();
        sshd.resume();
        Some(sshd)
    }

    fn write_configs(&self) {
        let d = self.dir.display();
        let path = std::env::var("PATH").unwrap_or_default();
        // `SHLVL=1`: bash run by sshd skips ~/.bashrc then (whatever the
        // machine's rc files do is not ours to test). PATH and TMUX_TMPDIR
        // are ours, so the "remote" tmux is the one the tests run.
        let mut env = format!("SetEnv SHLVL=1 \"PATH={path}\"");
        if let Ok(tmpdir) = std::env::var("TMUX_TMPDIR") {
            env.push_str(&format!(" \"TMUX_TMPDIR={tmpdir}\""));
        }
        let sshd_config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
             AuthorizedKeysFile {d}/authorized_keys\nPidFile none\nUsePAM no\n\
             StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\n{env}\nLogLevel INFO\n",
            port = self.port
        );
        std::fs::write(self.dir.join("sshd_config"), sshd_config).expect("sshd_config");
        let user = std::env::var("USER")
            .ok()
            .or_else(whoami)
            .expect("a user name");
        let ssh_config = format!(
            "Host loop\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
             IdentityFile {d}/user_key\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking accept-new\n",
            port = self.port
        );
        std::fs::write(self.dir.join("ssh_config"), ssh_config).expect("ssh_config");
        let wrapper = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {d}/calls.log\nexec ssh -F {d}/ssh_config \"$@\"\n"
        );
        let script = self.ssh();
        std::fs::write(&script, wrapper).expect("wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// Adds the ssh host `name`: 127.0.0.1 on `port`, with this sshd's
    /// key and known hosts (a host that is not this sshd).
    pub fn add_host(&self, name: &str, port: u16) {
        let config = self.dir.join("ssh_config");
        let text = std::fs::read_to_string(&config).expect("ssh_config");
        let ours = text.replace("Host loop", &format!("Host {name}"));
        let ours = ours.replace(&format!("Port {}", self.port), &format!("Port {port}"));
        std::fs::write(&config, format!("{text}{ours}")).expect("ssh_config");
    }

    /// The `TMUX_MCP_SSH` to use: the wrapper script.
    pub fn ssh(&self) -> PathBuf {
        self.dir.join("ssh")
    }

    /// The environment a service needs to reach this sshd as `loop` (and
    /// the hosts [`Sshd::add_host`] added, as themselves).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let config = std::fs::read_to_string(self.dir.join("ssh_config")).unwrap_or_default();
        let hosts: Vec<String> = config
            .lines()
            .filter_map(|l| l.strip_prefix("Host "))
            .map(|h| format!("{h}={h}"))
            .collect();
        vec![
            ("TMUX_MCP_HOSTS", hosts.join(",")),
            ("TMUX_MCP_SSH", self.ssh().display().to_string()),
        ]
    }

    /// Each ssh invocation so far, its arguments joined by spaces.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// (Re)starts the listener on the same port and waits until it listens.
    pub fn resume(&mut self) {
        let mut child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(self.dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sshd starts");
        let stderr = child.stderr.take().expect("stderr");
        let (ready, listening) = mpsc::channel();
        let log = self.dir.join("sshd.log");
        // Drains sshd's log for as long as it runs, so it never blocks.
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .ok();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Server listening") {
                    let _ = ready.send(());
                }
                if let Some(f) = file.as_mut() {
                    let _ = writeln!(f, "{line}");
                }
            }
        });
        let up = listening.recv_timeout(Duration::from_secs(15));
        self.child = Some(child);
        assert!(
            up.is_ok(),
            "sshd did not listen: {}",
            std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
        );
    }

    /// Stops sshd: its listener and every connection it serves are killed
    /// (clients see their connections drop).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = child.id();
            kill_tree(pid);
            let _ = child.wait();
        }
    }

    /// The pid of the master connection the service's ssh processes share
    /// (found through the ControlPath they were given), if it runs.
    pub fn master(&self) -> Option<u32> {
        let calls = self.calls();
        let path = calls
            .iter()
            .find_map(|c| c.split(' ').find_map(|w| w.strip_prefix("ControlPath=")))?
            .to_owned();
        let out = Command::new(self.ssh())
            .args(["-o", &format!("ControlPath={path}"), "-O", "check", "loop"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stderr);
        let pid = text.split("pid=").nth(1)?.split(')').next()?;
        pid.parse().ok()
    }

    /// The pids of this sshd's ssh client processes whose arguments contain
    /// `word` (`attach-session`: the control clients).
    pub fn clients(&self, word: &str) -> Vec<u32> {
        let dir = self.dir.display().to_string();
        processes()
            .into_iter()
            .filter(|(_, _, cmdline)| {
                cmdline.first().is_some_and(|p| p.ends_with("ssh"))
                    && cmdline.iter().any(|a| a.contains(&dir))
                    && cmdline.iter().any(|a| a.contains(word))
            })
            .map(|(pid, _, _)| pid)
            .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(pid) = self.master() {
            kill(pid);
        }
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn whoami() -> Option<String> {
    let out = Command::new("id").arg("-un").output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

pub fn kill(pid: u32) {
    // SAFETY: kill has no memory preconditions; a gone pid is ESRCH.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

/// Kills `pid` and every process below it.
fn kill_tree(pid: u32) {
    let all = processes();
    let mut doomed = vec![pid];
    let mut i = 0;
    while i < doomed.len() {
        let parent = doomed[i];
        doomed.extend(all.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    for pid in doomed {
        kill(pid);
    }
}

/// Every process: its pid, parent pid and argv.
fn processes() -> Vec<(u32, u32, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid ...`; comm may hold spaces and parens.
            let after = &stat[stat.rfind(')')? + 2..];
            let ppid = after.split(' ').nth(1)?.parse().ok()?;
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let argv = raw
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            Some((pid, ppid, argv))
        })
        .collect()
}
