//! What a pane's process is doing, read from the operating system: at its
//! shell prompt, waiting for terminal input, running, or gone. Knows
//! nothing of tmux: it takes the pid of the pane's first process (tmux's
//! `pane_pid`, normally the shell) and answers one [`Probe`].
//!
//! # How (Linux)
//!
//! Everything comes from `/proc`, with no ptrace rights beyond what a
//! process has over its own user's processes:
//!
//! - `/proc/<pane_pid>/stat` gives the shell's process group and its
//!   terminal's foreground process group (`tpgid`). The shell is in the
//!   foreground exactly when they are equal: [`Activity::Prompt`].
//! - Otherwise the foreground group's members (`/proc/*/stat` with that
//!   `pgrp`) are the command. A task of theirs sleeping in the terminal's
//!   read (`/proc/<pid>/task/<tid>/wchan` reads `n_tty_read` on older
//!   kernels, `wait_woken` on 5.16 and later, measured on 6.18: `cat`,
//!   `read`, python `input()` and `getpass()`, `less`) is
//!   [`Activity::Input`]; so is one sleeping in `poll`/`select` while the
//!   terminal is in non-canonical mode (a line editor or a full-screen
//!   program reading keys: the python and node REPLs, `vim`, `top`, `ssh`).
//!   The terminal's mode comes from `tcgetattr` on the pane's tty, opened
//!   read-only without becoming its controlling terminal.
//! - A shell in the foreground sleeping in a terminal read in canonical
//!   mode is running its `read` builtin (bash and zsh edit their prompt in
//!   non-canonical mode), so that is [`Activity::Input`] too, except for
//!   shells that read every command line that way (dash, ash, ksh: see
//!   [`CANONICAL_PROMPT_SHELLS`]), where it is their prompt.
//! - No `/proc/<pane_pid>` (or a zombie): [`Activity::Exited`].
//! - Input read in canonical mode with echo off (`ICANON` set, `ECHO`
//!   clear in the same `tcgetattr`) is a password prompt: `getpass()`,
//!   `read -s`, sudo, ssh, su, gpg's tty pinentry. That is
//!   [`Activity::Secret`]. Only the terminal's settings are read (never
//!   its data), from a descriptor opened `O_RDONLY|O_NOCTTY|O_NONBLOCK`;
//!   an `O_PATH` descriptor is refused by the terminal ioctls (`EBADF`),
//!   so it will not do. A program in raw mode (a REPL, an editor) has echo
//!   off too, but reads keys, not a line: that stays input.
//! - A program blocked *writing* to the terminal (`yes`: tmux drains the
//!   pty slower than it fills) sleeps in the same `wait_woken` as a
//!   reader. The same descriptor tells them apart: a zero-timeout `poll`
//!   for `POLLOUT`, which the line discipline withholds while a write
//!   holds the terminal or the queue to the pty's master (tmux) is full.
//!   It is asked just before and just after the waits are read, and with
//!   no room at either look nothing asleep in the terminal (or in `poll`)
//!   counts as waiting for input: [`Activity::Running`]. Measured on 6.18
//!   in 3,000 looks each: `yes` and `… | tr` never had room while asleep
//!   in the terminal at both looks (`tr` had it at one look 3 times of
//!   2,777), a waiting `input()` always had room. It holds when tmux has
//!   stopped reading the pane (its control clients are behind), where the
//!   writer's CPU time and `/proc/<pid>/io` stand still like a reader's;
//!   `TIOCOUTQ` on the slave is always 0 for a pty.
//!
//! A process's end is also an event: [`ExitWatch`] (a pidfd) wakes a
//! waiter when it happens, so nobody re-probes to notice it.
//!
//! `wchan` reads `0` for a task of another user (the kernel's
//! `ptrace_may_access` read check; Yama's `ptrace_scope` only restricts
//! attaching, so a same-user read works) and on kernels built without
//! `CONFIG_KALLSYMS`; then input cannot be told, and [`Probe::observable`]
//! leaves `"input"` (and `"secret"`) out. A terminal that cannot be opened
//! (another user's) leaves `"secret"` out.
//!
//! # Limits (documented, not guessed around)
//!
//! - `wait_woken` is also where a blocking socket `recv` sleeps: such a
//!   program reads as input.
//! - A terminal's output blocked by another writer (a background job
//!   flooding it, or more than the pty holds, about 68 KB, printed while
//!   tmux is not reading the pane) makes a program that does wait for
//!   input read as running until the output drains.
//! - fish's `read` builtin uses its line editor, so it reads as prompt.
//! - A shell started inside the pane's shell is a foreground command: at
//!   its own prompt it reads as input (foreground_command names it).
//! - Finding the foreground group's members other than its leader (`git`
//!   waiting for the editor it started) takes a scan of `/proc`; a
//!   [`Prober`] repeats it at most every [`SCAN_EVERY`], and with the
//!   leader alive reads only pids above the leader's (a member born after
//!   the pid counter wrapped is missed).
//!
//! # The portable probe (macOS, the BSDs; on Linux when asked)
//!
//! Built only on what every unix has, and chosen at run time
//! ([`ProbeKind`], `TMUX_MCP_PROBE`), so the code a Mac runs is code CI
//! builds and tests on Linux:
//!
//! - `ps -o pid,pgid,tpgid,stat,wchan,comm -t TTY` ([`ps`]) lists the
//!   terminal's processes, the foreground group (`tpgid`) among them, and
//!   where each sleeps. The same rules ([`judge`]) then apply to them, one
//!   wait per process (the main thread's) instead of one per task.
//! - The wait channel names a terminal read on the BSDs (`ttyin`; a
//!   writer waits in `ttyout`, `select`/`poll`/`kqread` are a poll). On
//!   Linux procps prints the kernel's symbol, as `/proc` does. macOS
//!   prints `-` for every process (its kernel leaves the wait message of
//!   `sysctl` `kinfo_proc` empty): there a sleeping program's wait is
//!   hidden, `input` is not observable, and `secret` is what it is for a
//!   hidden wait anywhere: a line read with echo off
//!   ([`OBSERVE_NO_WAITS`]).
//! - The terminal's settings and room for output come from the same
//!   `tcgetattr` and `poll` as above, on the pane's tty (tmux's
//!   `pane_tty` when the caller has it, else `ps -o tty= -p PID` once per
//!   [`Prober`]). FreeBSD's `ttydev_poll` withholds `POLLOUT` the same way
//!   (read from its source, not run here).
//! - No process list at all (`ps` missing): only whether the pane's
//!   process still exists (`kill(pid, 0)`), `observable` is `["exited"]`,
//!   and the caller falls back to what tmux reports
//!   (`pane_current_command`; `wait_for_state` then reports
//!   [`OBSERVE_COMMAND`]).
//! - No [`ExitWatch`] (pidfds are Linux's): a process's end is seen by
//!   the next probe or tmux's own events.
//!
//! One look costs a `ps` (a fork and exec, a few ms) where the Linux probe
//! reads a few files.

pub mod ps;

/// What a pane is doing, from the operating system's side: the one pane
/// state the tools report (run_command's `pane_state`, list_panes',
/// wait_for_state's and the attention feed's process states), spelt in
/// lower case. (Its variants' comments are not doc comments: a result's
/// schema lists the values as a plain enum.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Activity {
    // The pane's shell holds the terminal: no command is running.
    Prompt,
    // The foreground command is blocked reading the terminal.
    Input,
    // The foreground command is blocked reading a line the terminal does
    // not echo: a password prompt.
    Secret,
    // A foreground command is doing something else.
    Running,
    // The pane's process is gone.
    Exited,
}

impl Activity {
    /// The name results use: `prompt`, `input`, `secret`, `running`,
    /// `exited`.
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Prompt => "prompt",
            Activity::Input => "input",
            Activity::Secret => "secret",
            Activity::Running => "running",
            Activity::Exited => "exited",
        }
    }
}

/// One look at a pane's process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub activity: Activity,
    /// The foreground process (the group's leader, or the member reading
    /// the terminal); the shell itself at a prompt. `None` once exited.
    pub foreground_pid: Option<u32>,
    /// That process's command name (`comm`, at most 15 bytes on Linux).
    pub foreground_command: Option<String>,
    /// The activities this probe could tell apart, by name: a state not
    /// listed may be true without being reported.
    pub observable: &'static [&'static str],
}

/// Everything a full `/proc` with readable wait channels and a readable
/// terminal tells.
pub const OBSERVE_ALL: &[&str] = &["prompt", "input", "secret", "running", "exited"];
/// Readable wait channels, but the terminal's settings could not be read.
pub const OBSERVE_NO_SECRET: &[&str] = &["prompt", "input", "running", "exited"];
/// Wait channels hidden and the terminal's settings unread.
pub const OBSERVE_NO_INPUT: &[&str] = &["prompt", "running", "exited"];
/// Wait channels hidden (another user's process, a kernel without
/// symbols, macOS), the terminal's settings read: `secret` is a line mode
/// with echo off while the foreground sleeps, whatever it waits on.
pub const OBSERVE_NO_WAITS: &[&str] = &["prompt", "secret", "running", "exited"];
/// No `/proc`: only whether the process exists.
pub const OBSERVE_EXITED: &[&str] = &["exited"];
/// No `/proc`, but the caller asked the terminal's owner (tmux's
/// `pane_current_command`) which command holds the foreground.
pub const OBSERVE_COMMAND: &[&str] = &["prompt", "running", "exited"];
/// A pane on another host: tmux's foreground command, and the terminal's
/// settings read there (`stty`, see [`parse_stty`]); whether a program
/// waits for input is not known, so `secret` is echo off in line mode.
pub const OBSERVE_REMOTE: &[&str] = &["prompt", "secret", "running", "exited"];

/// Shells that read every command line in canonical mode (no line
/// editor), so a terminal read there is their prompt, not `read`.
pub const CANONICAL_PROMPT_SHELLS: &[&[u8]] = &[
    b"dash", b"sh", b"ash", b"busybox", b"posh", b"ksh", b"ksh93",
];

/// Interactive shells by process name: a pane's own process waiting for
/// the terminal is at its prompt when it is one of these, and a program
/// started in the pane's place (`python3 -q` at `>>>`) waits for input.
const SHELL_NAMES: &[&[u8]] = &[
    b"sh", b"ash", b"dash", b"bash", b"rbash", b"zsh", b"fish", b"ksh", b"ksh93", b"mksh", b"oksh",
    b"pdksh", b"yash", b"posh", b"busybox", b"tcsh", b"csh", b"nu", b"elvish", b"xonsh", b"pwsh",
    b"ion", b"osh",
];

/// Whether `comm` names a shell ([`SHELL_NAMES`]); a login shell's `-`
/// and a path (as BSD `ps` may print it) are not part of the name.
fn is_shell_name(comm: &[u8]) -> bool {
    let comm = comm.strip_prefix(b"-").unwrap_or(comm);
    let name = comm.rsplit(|b| *b == b'/').next().unwrap_or(comm);
    SHELL_NAMES.contains(&name)
}

impl Probe {
    /// A process this machine cannot look at (it runs on another host):
    /// running, as far as is known; only that it exists is not even known,
    /// so the caller asks the terminal's owner (tmux) instead.
    pub fn unobserved() -> Probe {
        Probe {
            activity: Activity::Running,
            foreground_pid: None,
            foreground_command: None,
            observable: OBSERVE_EXITED,
        }
    }

    /// What a probe of a process that is gone answers.
    pub fn exited() -> Probe {
        Probe {
            activity: Activity::Exited,
            foreground_pid: None,
            foreground_command: None,
            observable: ProbeKind::chosen().best(),
        }
    }
}

/// Which probe looks at processes: `TMUX_MCP_PROBE` = `auto` (the
/// default: [`ProbeKind::Linux`] on Linux, [`ProbeKind::Portable`]
/// elsewhere), `portable` or `linux`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// `/proc`, wait channels per task, pidfds.
    Linux,
    /// `ps`, `tcgetattr` and `kill(pid, 0)`: any unix.
    Portable,
}

impl ProbeKind {
    /// Reads a `TMUX_MCP_PROBE` value; unset or empty is `auto`.
    pub fn parse(value: Option<&str>) -> Result<ProbeKind, String> {
        match value.map(str::trim).unwrap_or("") {
            "" | "auto" => Ok(ProbeKind::auto()),
            "portable" => Ok(ProbeKind::Portable),
            "linux" if cfg!(target_os = "linux") => Ok(ProbeKind::Linux),
            "linux" => Err("TMUX_MCP_PROBE=linux needs Linux's /proc; use auto or portable".into()),
            other => Err(format!(
                "TMUX_MCP_PROBE must be unset, 'auto', 'portable' or 'linux', not {other:?}"
            )),
        }
    }

    /// The probe this process uses, read once from its environment: the
    /// machine's, shared by every server the process runs (the server
    /// refuses a bad value at start; here it falls back to `auto`).
    pub fn chosen() -> ProbeKind {
        static CHOSEN: std::sync::OnceLock<ProbeKind> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let value = std::env::var("TMUX_MCP_PROBE").ok();
            ProbeKind::parse(value.as_deref()).unwrap_or(ProbeKind::auto())
        })
    }

    /// `auto`: the Linux probe on Linux, the portable one elsewhere.
    fn auto() -> ProbeKind {
        if cfg!(target_os = "linux") {
            ProbeKind::Linux
        } else {
            ProbeKind::Portable
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Linux => "linux",
            ProbeKind::Portable => "portable",
        }
    }

    /// The most this probe tells on this machine, when wait channels and
    /// the terminal can be read.
    pub fn best(self) -> &'static [&'static str] {
        match self {
            // XNU fills no wait message in kinfo_proc: ps prints `-`.
            ProbeKind::Portable if cfg!(target_vendor = "apple") => OBSERVE_NO_WAITS,
            _ => OBSERVE_ALL,
        }
    }
}

/// Looks at the pane whose first process is `pane_pid`. Never panics;
/// reads a few small `/proc` files (and, when a command runs that is not
/// itself reading the terminal, one `stat` per process on the machine to
/// find the foreground group's other members), or runs `ps` twice (the
/// portable probe: once for the pane's terminal). A caller that looks
/// again and again keeps a [`Prober`]; one that knows the pane's tty
/// says so ([`Prober::with_tty`]).
pub fn probe(pane_pid: u32) -> Probe {
    Prober::new(pane_pid).probe()
}

/// The process group of `pane_pid` and its terminal's foreground group
/// (`/proc`, or `ps` for the portable probe).
pub fn groups(pane_pid: u32) -> Option<(i32, i32)> {
    match ProbeKind::chosen() {
        #[cfg(target_os = "linux")]
        ProbeKind::Linux => linux::groups(pane_pid),
        _ => ps::groups_of(pane_pid),
    }
}

/// A process's start, as [`started`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// How long ago it started.
    pub age: std::time::Duration,
    /// Whether it is a shell, by its name: a pane whose own process is a
    /// young shell may still be running its start-up files.
    pub shell: bool,
}

/// How long ago process `pid` started (`/proc`, or `ps -o etime` for the
/// portable probe, to the second), and whether it is a shell; `None` when
/// it is gone or cannot be read.
pub fn started(pid: u32) -> Option<Started> {
    started_by(ProbeKind::chosen(), pid)
}

fn started_by(kind: ProbeKind, pid: u32) -> Option<Started> {
    let (name, age) = match kind {
        #[cfg(target_os = "linux")]
        ProbeKind::Linux => linux::name_and_age(pid)?,
        _ => (ps::name_of(pid)?, ps::age_of(pid)?),
    };
    let shell = is_shell_name(&name);
    Some(Started { age, shell })
}

/// Whether the process `pid` has ended (`kill(pid, 0)` finds none). No
/// `/proc`, so the same on every unix; a process of another user (or
/// pid 0) reads as not ended.
pub fn has_ended(pid: u32) -> bool {
    let Some(pid) = libc::pid_t::try_from(pid).ok().filter(|p| *p > 0) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let failed = unsafe { libc::kill(pid, 0) } != 0;
    failed && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// How long a [`Prober`] trusts its list of the foreground group's
/// members: the scan of `/proc` that finds them costs one read per
/// process on the machine (about 1 ms per 150 processes, more under load).
pub const SCAN_EVERY: std::time::Duration = std::time::Duration::from_millis(400);

/// Probes one pane again and again: like [`probe`], but the members of a
/// foreground group found by a scan of `/proc` are kept for
/// [`SCAN_EVERY`] (re-read each time; only new members wait for the next
/// scan). The group's leader is always read afresh.
pub struct Prober {
    pane_pid: u32,
    kind: ProbeKind,
    /// The pane's terminal (portable probe): tmux's `pane_tty`, or what
    /// `ps` named at the first look.
    tty: Option<String>,
    #[cfg(target_os = "linux")]
    members: MemberCache,
}

/// The pids a scan found in a foreground group, and when.
#[cfg(target_os = "linux")]
#[derive(Default)]
struct MemberCache {
    pgrp: i32,
    pids: Vec<u32>,
    at: Option<std::time::Instant>,
}

#[cfg(target_os = "linux")]
impl MemberCache {
    fn fresh(&self, pgrp: i32) -> Option<&[u32]> {
        let recent = self.at.is_some_and(|at| at.elapsed() < SCAN_EVERY);
        (recent && self.pgrp == pgrp).then_some(self.pids.as_slice())
    }
}

impl Prober {
    pub fn new(pane_pid: u32) -> Prober {
        Prober::of_kind(pane_pid, ProbeKind::chosen())
    }

    /// A prober of the probe `kind` (tests compare the two).
    pub fn of_kind(pane_pid: u32, kind: ProbeKind) -> Prober {
        Prober {
            pane_pid,
            kind,
            tty: None,
            #[cfg(target_os = "linux")]
            members: MemberCache::default(),
        }
    }

    /// The pane's terminal as tmux names it (`pane_tty`), which spares
    /// the portable probe a `ps` to find it; empty is unknown.
    pub fn with_tty(mut self, tty: &str) -> Prober {
        self.tty = (!tty.is_empty()).then(|| tty.to_owned());
        self
    }

    /// Looks at the pane now.
    pub fn probe(&mut self) -> Probe {
        match self.kind {
            #[cfg(target_os = "linux")]
            ProbeKind::Linux => linux::probe(self.pane_pid, &mut self.members),
            _ => portable::probe(self.pane_pid, &mut self.tty),
        }
    }
}

/// Wakes when a process ends: a pidfd (Linux 5.3 and later) turns "the
/// process exited" into an event, for any process of the machine, with
/// no rights over it and no polling.
pub struct ExitWatch {
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>,
}

impl ExitWatch {
    /// Watches `pid`; `None` if it is gone already, the system has no
    /// pidfd or the portable probe is chosen (then only other events
    /// tell), or no tokio runtime runs.
    pub fn new(pid: u32) -> Option<ExitWatch> {
        match ProbeKind::chosen() {
            #[cfg(target_os = "linux")]
            ProbeKind::Linux => linux::exit_watch(pid),
            _ => None,
        }
    }

    /// Whether the process has ended, without waiting.
    pub fn has_exited(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            let mut poll = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(self.fd.get_ref()),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, a zero timeout: nothing blocks.
            unsafe { libc::poll(&mut poll, 1, 0) == 1 }
        }
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Resolves once the process has ended (at once if it had).
    pub async fn exited(&self) {
        #[cfg(target_os = "linux")]
        {
            // A pidfd stays readable once the process ended: the readiness
            // is kept (the guard is dropped without clearing it).
            let _ = self.fd.readable().await;
        }
        #[cfg(not(target_os = "linux"))]
        std::future::pending::<()>().await
    }
}

/// A process's `/proc/<pid>/stat`, the fields used here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    /// `comm`: may hold spaces and parentheses.
    pub comm: Vec<u8>,
    /// One letter: `R`, `S`, `D`, `Z`, `T`, …
    pub state: u8,
    pub pgrp: i32,
    pub tty_nr: i32,
    /// The foreground process group of the process's terminal, -1 if none.
    pub tpgid: i32,
}

/// Parses `/proc/<pid>/stat`. `comm` runs from the first `(` to the
/// *last* `)`: a program can name itself `a) S 1 (b`.
pub fn parse_stat(bytes: &[u8]) -> Option<Stat> {
    let open = memchr::memchr(b'(', bytes)?;
    let close = memchr::memrchr(b')', bytes)?;
    if close < open {
        return None;
    }
    let pid = number(bytes[..open].trim_ascii())?;
    let mut rest = bytes[close + 1..]
        .split(|b| *b == b' ')
        .filter(|f| !f.is_empty());
    let state = *rest.next()?.first()?;
    // After the state: ppid, pgrp, session, tty_nr, tpgid.
    let _ppid = rest.next()?;
    let pgrp = number(rest.next()?)?;
    let _session = rest.next()?;
    let tty_nr = number(rest.next()?)?;
    let tpgid = number(rest.next()?.trim_ascii())?;
    Some(Stat {
        pid: u32::try_from(pid).ok()?,
        comm: bytes[open + 1..close].to_vec(),
        state,
        pgrp: i32::try_from(pgrp).ok()?,
        tty_nr: i32::try_from(tty_nr).ok()?,
        tpgid: i32::try_from(tpgid).ok()?,
    })
}

fn number(field: &[u8]) -> Option<i64> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// Where a sleeping task waits, from its `wchan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// In the terminal's read (`n_tty_read`, or `wait_woken` since 5.16).
    TtyRead,
    /// In `poll`, `select` or `epoll_wait`.
    Poll,
    /// Elsewhere (a timer, a pipe, a child, a lock).
    Other,
    /// The kernel would not say (`0` for a sleeping task).
    Hidden,
}

/// Classifies a `wchan` as read: a Linux kernel symbol (from `/proc` or
/// procps) or a BSD wait message (from `ps`). Compiler suffixes
/// (`.constprop.0`, `.isra.0`) are ignored.
pub fn classify_wchan(bytes: &[u8]) -> Wait {
    let name = bytes.trim_ascii();
    let name = name.split(|b| *b == b'.').next().unwrap_or(name);
    match name {
        // `-`: what ps prints for a sleeping process's hidden wait.
        b"" | b"0" | b"-" => Wait::Hidden,
        // `ttyin`: the BSDs' terminal read (a writer waits in `ttyout`).
        b"n_tty_read" | b"wait_woken" | b"ttyin" => Wait::TtyRead,
        b"select" | b"poll" | b"kqread" => Wait::Poll,
        b"poll_schedule_timeout"
        | b"do_select"
        | b"core_sys_select"
        | b"do_sys_poll"
        | b"do_poll"
        | b"ep_poll"
        | b"do_epoll_wait"
        | b"schedule_hrtimeout_range" => Wait::Poll,
        _ => Wait::Other,
    }
}

/// One member of the foreground process group and its tasks' waits
/// (sleeping tasks only: a running task waits on nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub stat: Stat,
    pub waits: Vec<Wait>,
}

/// The facts a probe gathered, judged by [`judge`] (pure, so the rules
/// are tested on recorded facts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The pane's shell (`pane_pid`) and its tasks' waits.
    pub shell: Member,
    /// The foreground group's members when it is not the shell's.
    pub foreground: Vec<Member>,
    /// Whether the terminal is in canonical mode (`None`: unknown).
    pub canonical: Option<bool>,
    /// Whether the terminal echoes what is typed (`None`: unknown).
    pub echo: Option<bool>,
    /// Whether the terminal had no room for output (a write held it, or
    /// its queue was full) at either of two looks around the waits
    /// (`None`: unknown). A task asleep in the terminal then may be
    /// writing, not reading.
    pub output_blocked: Option<bool>,
}

/// The two terminal settings a probe reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermMode {
    /// `ICANON`: input is read a line at a time.
    pub canonical: bool,
    /// `ECHO`: what is typed is shown.
    pub echo: bool,
}

impl TermMode {
    /// A line read without echo: what password prompts set.
    pub fn is_secret(self) -> bool {
        self.canonical && !self.echo
    }
}

/// Reads `ICANON` and `ECHO` from the output of `stty -a` (GNU, BSD and
/// busybox all print the local flags as words, `-` before a flag that is
/// off: `icanon`, `-echo`). `None` unless both are found. For a terminal
/// on another machine, read there over the same ssh connection.
pub fn parse_stty(out: &[u8]) -> Option<TermMode> {
    let (mut canonical, mut echo) = (None, None);
    let words = out
        .split(|b| b.is_ascii_whitespace() || *b == b';')
        .filter(|w| !w.is_empty());
    for word in words {
        let (on, flag) = match word.strip_prefix(b"-") {
            Some(flag) => (false, flag),
            None => (true, word),
        };
        match flag {
            b"icanon" => canonical = Some(on),
            b"echo" => echo = Some(on),
            _ => {}
        }
    }
    Some(TermMode {
        canonical: canonical?,
        echo: echo?,
    })
}

/// Applies the rules of the module documentation to `facts`.
pub fn judge(facts: &Facts) -> Probe {
    let shell = &facts.shell;
    let raw = facts.canonical == Some(false);
    let hidden = |m: &Member| m.waits.contains(&Wait::Hidden);
    let name = |m: &Member| Some(String::from_utf8_lossy(&m.stat.comm).into_owned());
    let writing = facts.output_blocked == Some(true);
    // Where a wait is hidden, a line mode without echo is taken for a
    // password read (a program that turned echo off and does something
    // else reads as secret too: the safe side for a guard).
    let no_echo = facts.canonical == Some(true) && facts.echo == Some(false);
    if shell.stat.tpgid == shell.stat.pgrp || facts.foreground.is_empty() {
        let reading = (shell.waits.contains(&Wait::TtyRead) || (hidden(shell) && no_echo))
            && !writing
            && facts.canonical == Some(true)
            && !CANONICAL_PROMPT_SHELLS.contains(&shell.stat.comm.as_slice());
        // A shell at its prompt sleeps reading its command line; one that
        // runs (a loop, a builtin) or waits for a child of its own group
        // (`x=$(sleep 9)`) is busy, and so is one asleep in the terminal
        // while its output is blocked (a loop of `echo`).
        let at_line = |w: &Wait| match w {
            Wait::TtyRead => !writing,
            Wait::Poll | Wait::Hidden => true,
            Wait::Other => false,
        };
        let busy = !shell.waits.iter().any(at_line);
        let foreground = shell.stat.tpgid == shell.stat.pgrp;
        let activity = match (foreground, reading, busy) {
            (true, true, _) => input(facts),
            (true, false, false) if is_shell_name(&shell.stat.comm) => Activity::Prompt,
            // A program in the pane's place, waiting at its own prompt.
            (true, false, false) => Activity::Input,
            // Busy, or a foreground group with no member found (it just
            // ended).
            _ => Activity::Running,
        };
        return Probe {
            activity,
            foreground_pid: foreground.then_some(shell.stat.pid),
            foreground_command: if foreground { name(shell) } else { None },
            observable: observable(hidden(shell), facts.echo.is_some()),
        };
    }
    // With the output blocked, a task asleep in the terminal (or in poll)
    // is taken for the writer it most likely is.
    let reader = (!writing)
        .then(|| {
            let reads = |m: &&Member| wants_input(m, raw) || (hidden(m) && no_echo);
            facts.foreground.iter().find(reads)
        })
        .flatten();
    let leader = facts
        .foreground
        .iter()
        .find(|m| m.stat.pid as i32 == m.stat.pgrp)
        .unwrap_or(&facts.foreground[0]);
    let shown = reader.unwrap_or(leader);
    Probe {
        activity: match reader {
            // Read a line, not keys under poll: only that can be secret.
            Some(m) if m.waits.contains(&Wait::TtyRead) || hidden(m) => input(facts),
            Some(_) => Activity::Input,
            None => Activity::Running,
        },
        foreground_pid: Some(shown.stat.pid),
        foreground_command: name(shown),
        observable: observable(facts.foreground.iter().any(hidden), facts.echo.is_some()),
    }
}

/// Whether a foreground process waits for the terminal: in its read, or
/// in `poll`/`select` while the terminal is in non-canonical (`raw`) mode.
fn wants_input(m: &Member, raw: bool) -> bool {
    m.waits.contains(&Wait::TtyRead) || (raw && m.waits.contains(&Wait::Poll))
}

/// A terminal read: a secret one when the terminal is in canonical mode
/// with echo off.
fn input(facts: &Facts) -> Activity {
    if facts.canonical == Some(true) && facts.echo == Some(false) {
        Activity::Secret
    } else {
        Activity::Input
    }
}

fn observable(hidden: bool, mode_known: bool) -> &'static [&'static str] {
    match (hidden, mode_known) {
        (true, false) => OBSERVE_NO_INPUT,
        (true, true) => OBSERVE_NO_WAITS,
        (false, false) => OBSERVE_NO_SECRET,
        (false, true) => OBSERVE_ALL,
    }
}

/// The `/dev` path of a terminal from `tty_nr` (Unix98 pty slaves, majors
/// 136–143, are what tmux panes get).
pub fn tty_path(tty_nr: i32) -> Option<std::path::PathBuf> {
    let dev = tty_nr as u32;
    let major = (dev >> 8) & 0xfff;
    let minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
    (136..=143)
        .contains(&major)
        .then(|| format!("/dev/pts/{}", (major - 136) * 256 + minor).into())
}

/// The settings of the terminal at `path`. Opened read-only,
/// non-blocking, never as a controlling terminal; nothing is read from
/// it or written to it.
pub fn terminal_mode(path: &std::path::Path) -> Option<TermMode> {
    mode_of(&open_terminal(path)?)
}

/// Opens the terminal at `path` to look at it: read-only, non-blocking,
/// never as a controlling terminal.
fn open_terminal(path: &std::path::Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .ok()
}

/// Whether the terminal has room for output now: a zero-timeout `poll`
/// for `POLLOUT`, which Linux's line discipline withholds while a write
/// holds the terminal or the pty's queue to its master is full (the
/// reader, tmux, is behind). The descriptor's read-only mode does not
/// matter to it; nothing is read or written. `None` if the poll fails.
fn has_room(file: &std::fs::File) -> Option<bool> {
    let mut poll = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(file),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd on an open descriptor, a zero timeout.
    let rc = unsafe { libc::poll(&mut poll, 1, 0) };
    (rc >= 0 && poll.revents & libc::POLLNVAL == 0).then_some(poll.revents & libc::POLLOUT != 0)
}

/// Whether the output was blocked, from looks at the terminal's room
/// ([`has_room`]): no room at any look is blocked; room at every one is
/// not; `None` when the looks that could tell all had room but not all
/// could.
fn blocked_at_any(rooms: &[Option<bool>]) -> Option<bool> {
    if rooms.contains(&Some(false)) {
        Some(true)
    } else if rooms.iter().all(|room| *room == Some(true)) {
        Some(false)
    } else {
        None
    }
}

fn mode_of(file: &std::fs::File) -> Option<TermMode> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(file);
    // SAFETY: termios is plain data; tcgetattr fills it or fails, and
    // fd stays open for the call (file is dropped after).
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut termios) } != 0 {
        return None;
    }
    Some(TermMode {
        canonical: termios.c_lflag & libc::ICANON != 0,
        echo: termios.c_lflag & libc::ECHO != 0,
    })
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::fs;

    /// At most this many processes of the foreground group, and threads
    /// of each, are looked at (a bound on one probe's reads).
    const MAX_MEMBERS: usize = 64;
    const MAX_TASKS: usize = 64;
    /// Reads of a sleeping task's `wchan` before a `0` is believed.
    const WCHAN_READS: usize = 3;

    pub(super) fn groups(pane_pid: u32) -> Option<(i32, i32)> {
        read_stat(&format!("/proc/{pane_pid}/stat")).map(|s| (s.pgrp, s.tpgid))
    }

    /// From the process's `starttime` (field 22 of its `stat`, in clock
    /// ticks after boot) and the machine's uptime.
    /// The process's name and age, from one read of its `stat`.
    pub(super) fn name_and_age(pid: u32) -> Option<(Vec<u8>, std::time::Duration)> {
        let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
        let name = parse_stat(&stat)?.comm;
        let close = memchr::memrchr(b')', &stat)?;
        // After the name: state is field 3, starttime field 22.
        let field = stat[close + 1..]
            .split(|b| *b == b' ')
            .filter(|f| !f.is_empty())
            .nth(19)?;
        let started = number(field)? as f64;
        let uptime = fs::read_to_string("/proc/uptime").ok()?;
        let uptime: f64 = uptime.split_ascii_whitespace().next()?.parse().ok()?;
        // SAFETY: sysconf only reads a configuration value.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let age = (uptime - started / ticks as f64).max(0.0);
        (ticks > 0).then(|| (name, std::time::Duration::from_secs_f64(age)))
    }

    pub(super) fn probe(pane_pid: u32, cache: &mut MemberCache) -> Probe {
        let Some(stat) = read_stat(&format!("/proc/{pane_pid}/stat")) else {
            return Probe::exited();
        };
        if matches!(stat.state, b'Z' | b'X') {
            return Probe::exited();
        }
        let tty = tty_path(stat.tty_nr).and_then(|p| open_terminal(&p));
        let mode = tty.as_ref().and_then(mode_of);
        let room_before = tty.as_ref().and_then(has_room);
        let canonical = mode.map(|m| m.canonical);
        let foreground = if stat.tpgid > 0 && stat.tpgid != stat.pgrp {
            members(stat.tpgid, stat.tty_nr, canonical == Some(false), cache)
        } else {
            Vec::new()
        };
        let shell = member(stat);
        // A writer asleep on a full queue is woken each time tmux drains
        // it and may be between two writes at one look (measured: 3 in
        // 2777 looks at `tr`), hardly at both.
        let room_after = tty.as_ref().and_then(has_room);
        let output_blocked = blocked_at_any(&[room_before, room_after]);
        judge(&Facts {
            shell,
            foreground,
            canonical,
            echo: mode.map(|m| m.echo),
            output_blocked,
        })
    }

    fn read_stat(path: &str) -> Option<Stat> {
        parse_stat(&fs::read(path).ok()?)
    }

    fn member(stat: Stat) -> Member {
        let waits = task_waits(stat.pid);
        Member { stat, waits }
    }

    /// The waits of a process's sleeping tasks.
    fn task_waits(pid: u32) -> Vec<Wait> {
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            return Vec::new();
        };
        let mut waits = Vec::new();
        for task in tasks.flatten().take(MAX_TASKS) {
            if let Some(wait) = sleeping_wait(&task.path()) {
                waits.push(wait);
            }
        }
        waits
    }

    /// A task's wait, or `None` while it runs. The kernel reads `0` for a
    /// task that woke between its `stat` and its `wchan`, so a `0` is
    /// believed (hidden) only from a task still asleep after a re-read.
    fn sleeping_wait(task: &std::path::Path) -> Option<Wait> {
        let asleep = || {
            fs::read(task.join("stat"))
                .ok()
                .and_then(|b| parse_stat(&b))
                .is_some_and(|s| matches!(s.state, b'S' | b'D'))
        };
        let mut wait = None;
        for _ in 0..WCHAN_READS {
            if !asleep() {
                return None;
            }
            wait = Some(classify_wchan(&fs::read(task.join("wchan")).ok()?));
            if wait != Some(Wait::Hidden) {
                break;
            }
        }
        wait
    }

    /// The processes of group `pgrp` on terminal `tty_nr`, leader first.
    /// A leader waiting for the terminal is all it takes; otherwise the
    /// others come from `cache`, or a scan of `/proc` when it is stale.
    fn members(pgrp: i32, tty_nr: i32, raw: bool, cache: &mut MemberCache) -> Vec<Member> {
        // A zombie has ended: only its parent has yet to reap it.
        let in_group =
            |s: &Stat| s.pgrp == pgrp && s.tty_nr == tty_nr && !matches!(s.state, b'Z' | b'X');
        let read = |pid: u32| read_stat(&format!("/proc/{pid}/stat")).filter(in_group);
        // The leader's pid is the group id.
        let leader = u32::try_from(pgrp).ok().and_then(read).map(member);
        if leader.as_ref().is_some_and(|m| wants_input(m, raw)) {
            return leader.into_iter().collect();
        }
        let others: Vec<u32> = match cache.fresh(pgrp) {
            Some(pids) => pids.to_vec(),
            None => {
                // A group's members were born after its leader: with the
                // leader alive, only younger pids are read (pids that
                // wrapped past pid_max since are the one miss).
                let from = if leader.is_some() { pgrp as u32 } else { 0 };
                let pids = scan(pgrp, from, &in_group);
                *cache = MemberCache {
                    pgrp,
                    pids: pids.clone(),
                    at: Some(std::time::Instant::now()),
                };
                pids
            }
        };
        let others = others.into_iter().filter_map(read).map(member);
        leader.into_iter().chain(others).take(MAX_MEMBERS).collect()
    }

    /// The pids in `/proc` from `from` on (the leader's aside) whose stat
    /// passes `keep`.
    fn scan(leader: i32, from: u32, keep: &impl Fn(&Stat) -> bool) -> Vec<u32> {
        let Ok(dir) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in dir.flatten() {
            if found.len() >= MAX_MEMBERS {
                break;
            }
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid < from {
                continue;
            }
            let stat = read_stat(&format!("/proc/{pid}/stat"));
            if pid as i64 != leader as i64 && stat.is_some_and(|s| keep(&s)) {
                found.push(pid);
            }
        }
        found
    }

    pub fn exit_watch(pid: u32) -> Option<ExitWatch> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let pid = libc::pid_t::try_from(pid).ok().filter(|p| *p > 0)?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: fd was just returned to us and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // Registering outside a runtime would panic.
        tokio::runtime::Handle::try_current().ok()?;
        // SAFETY: the OwnedFd is moved into the AsyncFd, so it stays open
        // and the same descriptor for the AsyncFd's whole life.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        };
        Some(ExitWatch { fd: fd.ok()? })
    }
}

/// The probe on POSIX calls and `ps` (module documentation, "The
/// portable probe").
mod portable {
    use super::*;

    /// At most this many processes of the foreground group are looked at.
    const MAX_MEMBERS: usize = 64;

    /// Looks again (at most this many times in all) when the terminal's
    /// mode changed while `ps` ran.
    const LOOKS: usize = 3;

    pub(super) fn probe(pane_pid: u32, tty: &mut Option<String>) -> Probe {
        if tty.is_none() {
            *tty = ps::terminal_of(pane_pid);
        }
        let file = tty.as_deref().map(ps::terminal_path);
        let file = file.as_deref().and_then(open_terminal);
        // `ps` takes milliseconds, in which a flooding writer is let write
        // now and then: the terminal's room is looked at around each
        // listing, and no room at any look means its output is blocked.
        let mut rooms = vec![file.as_ref().and_then(has_room)];
        // A `ps` takes milliseconds; a shell switches the terminal's mode
        // and hands it to its job in between (zsh: raw for its line
        // editor, then canonical for `cat`). Only a mode that held across
        // the listing is judged with it.
        let mut looks = 0;
        let (rows, mode) = loop {
            looks += 1;
            let before = file.as_ref().and_then(mode_of);
            let rows = tty.as_deref().and_then(ps::on_terminal);
            let after = file.as_ref().and_then(mode_of);
            rooms.push(file.as_ref().and_then(has_room));
            if before == after || looks == LOOKS {
                break (rows, before.filter(|_| before == after));
            }
        };
        let Some(rows) = rows else {
            return exists_only(pane_pid);
        };
        let Some(shell) = rows.iter().find(|r| r.pid == pane_pid) else {
            // Not on its terminal: gone, or a terminal named wrong.
            return exists_only(pane_pid);
        };
        if matches!(shell.state(), b'Z' | b'X') {
            return Probe::exited();
        }
        let foreground = if shell.tpgid > 0 && shell.tpgid != shell.pgid {
            foreground(&rows, shell.tpgid)
        } else {
            Vec::new()
        };
        rooms.push(file.as_ref().and_then(has_room));
        judge(&Facts {
            shell: member(shell),
            foreground,
            canonical: mode.map(|m| m.canonical),
            echo: mode.map(|m| m.echo),
            output_blocked: blocked_at_any(&rooms),
        })
    }

    /// The live members of group `pgrp`, its leader first.
    fn foreground(rows: &[ps::Row], pgrp: i32) -> Vec<Member> {
        let live = |r: &&ps::Row| r.pgid == pgrp && !matches!(r.state(), b'Z' | b'X');
        let leader = rows
            .iter()
            .filter(live)
            .find(|r| r.pid as i64 == pgrp as i64);
        let others = rows
            .iter()
            .filter(live)
            .filter(|r| r.pid as i64 != pgrp as i64);
        leader
            .into_iter()
            .chain(others)
            .take(MAX_MEMBERS)
            .map(member)
            .collect()
    }

    /// A process as the judge sees it: its wait when it sleeps (`S`; `I`
    /// idle, `D` disk, `U` uninterruptible, `L` lock on the BSDs).
    fn member(row: &ps::Row) -> Member {
        let asleep = matches!(row.state(), b'S' | b'I' | b'D' | b'U' | b'L');
        Member {
            stat: Stat {
                pid: row.pid,
                comm: row.comm.clone(),
                state: row.state(),
                pgrp: row.pgid,
                tty_nr: 0,
                tpgid: row.tpgid,
            },
            waits: if asleep {
                vec![classify_wchan(&row.wchan)]
            } else {
                Vec::new()
            },
        }
    }

    /// Only whether the process exists, when `ps` cannot tell more. A
    /// zombie (its terminal no longer shown) has ended: only its parent
    /// has yet to reap it.
    fn exists_only(pane_pid: u32) -> Probe {
        let zombie = || matches!(ps::state_of(pane_pid), Some(b'Z' | b'X'));
        if pane_pid == 0 || has_ended(pane_pid) || zombie() {
            return Probe::exited();
        }
        Probe {
            activity: Activity::Running,
            foreground_pid: None,
            foreground_command: None,
            observable: OBSERVE_EXITED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from /proc on Linux 6.18 (a bash at its prompt, pid 22323,
    // on /dev/pts/0 = tty_nr 34816).
    const BASH_AT_PROMPT: &[u8] = b"22323 (bash) S 22322 22323 22323 34816 22323 4194304 491 0 1 0 0 0 0 0 20 0 1 0 1009410 4816896 856 18446744073709551615 94806619136000 94806619925405 140721203183456 0 0 0 0 3686404 1266761467 1 0 0 17 1 0 0 0 0 0 94806620158704 94806620206948 94807653998592 140721203190453 140721203190477 140721203190477 140721203191786 0\n";

    /// A state is spelt one way, in results' JSON as in text.
    #[test]
    fn a_state_is_spelt_as_results_show_it() {
        use Activity::*;
        for state in [Prompt, Input, Secret, Running, Exited] {
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, state.as_str(), "{state:?}");
        }
    }

    /// Both probes tell a young process's age and whether it is a shell.
    #[test]
    fn a_process_start_tells_its_age_and_a_shell() {
        let spawn = |program: &str, args: &[&str]| {
            std::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut shell = spawn("sh", &["-c", "sleep 5; :"]);
        let mut other = spawn("sleep", &["5"]);
        let kinds: &[ProbeKind] = if cfg!(target_os = "linux") {
            &[ProbeKind::Linux, ProbeKind::Portable]
        } else {
            &[ProbeKind::Portable]
        };
        let young = |s: Option<Started>| s.filter(|s| s.age < std::time::Duration::from_secs(5));
        for &kind in kinds {
            let shell = young(started_by(kind, shell.id()));
            assert_eq!(shell.map(|s| s.shell), Some(true), "{kind:?}: {shell:?}");
            let other = young(started_by(kind, other.id()));
            assert_eq!(other.map(|s| s.shell), Some(false), "{kind:?}: {other:?}");
        }
        assert_eq!(started(u32::MAX), None);
        for child in [&mut shell, &mut other] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    #[test]
    fn parses_a_recorded_stat() {
        let s = parse_stat(BASH_AT_PROMPT).unwrap();
        assert_eq!(
            (s.pid, s.comm.as_slice(), s.state, s.pgrp, s.tty_nr, s.tpgid),
            (22323, &b"bash"[..], b'S', 22323, 34816, 22323)
        );
        assert_eq!(tty_path(s.tty_nr).unwrap().to_str(), Some("/dev/pts/0"));
    }

    #[test]
    fn comm_with_spaces_and_parentheses_ends_at_the_last_paren() {
        let line = b"77 (a) S 1 (b) x) R 5 77 77 34818 -1 0\n";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, b"a) S 1 (b) x".to_vec());
        assert_eq!((s.state, s.pgrp, s.tty_nr, s.tpgid), (b'R', 77, 34818, -1));
    }

    #[test]
    fn junk_stat_is_none_not_a_panic() {
        for bad in [
            &b""[..],
            b"12",
            b"12 (x",
            b"x) 12 (",
            b"12 (x) S",
            b"12 (x) S 1 2 3 4",
            b"abc (x) S 1 2 3 4 5",
            b"12 (x) S 1 2 3 99999999999 5",
            "12 (\u{fffd}) S 1 2 3 4 z".as_bytes(),
        ] {
            assert_eq!(parse_stat(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn wait_channels_as_this_kernel_writes_them() {
        assert_eq!(classify_wchan(b"wait_woken"), Wait::TtyRead);
        assert_eq!(classify_wchan(b"n_tty_read\n"), Wait::TtyRead);
        assert_eq!(
            classify_wchan(b"poll_schedule_timeout.constprop.0"),
            Wait::Poll
        );
        assert_eq!(classify_wchan(b"do_select"), Wait::Poll);
        assert_eq!(classify_wchan(b"ep_poll"), Wait::Poll);
        assert_eq!(classify_wchan(b"hrtimer_nanosleep"), Wait::Other);
        assert_eq!(classify_wchan(b"anon_pipe_read"), Wait::Other);
        assert_eq!(classify_wchan(b"do_sigtimedwait.isra.0"), Wait::Other);
        assert_eq!(classify_wchan(b"0"), Wait::Hidden);
        assert_eq!(classify_wchan(b""), Wait::Hidden);
    }

    fn stat(pid: u32, comm: &str, pgrp: i32, tpgid: i32) -> Stat {
        Stat {
            pid,
            comm: comm.as_bytes().to_vec(),
            state: b'S',
            pgrp,
            tty_nr: 34816,
            tpgid,
        }
    }

    fn facts(shell: (&str, Wait, i32), fg: &[(u32, &str, &[Wait])], canonical: bool) -> Facts {
        let (comm, wait, tpgid) = shell;
        Facts {
            shell: Member {
                stat: stat(100, comm, 100, tpgid),
                waits: vec![wait],
            },
            foreground: fg
                .iter()
                .map(|(pid, comm, waits)| Member {
                    stat: stat(*pid, comm, tpgid, tpgid),
                    waits: waits.to_vec(),
                })
                .collect(),
            canonical: Some(canonical),
            echo: Some(true),
            output_blocked: Some(false),
        }
    }

    fn activity(f: &Facts) -> (Activity, Option<u32>, Option<String>) {
        let p = judge(f);
        (p.activity, p.foreground_pid, p.foreground_command)
    }

    #[test]
    fn shells_at_their_prompt_and_in_read() {
        use Activity::*;
        let own = |a, w: (&str, Wait), canon| (a, facts((w.0, w.1, 100), &[], canon));
        let cases = [
            // bash and fish edit the prompt in raw mode under poll.
            own(Prompt, ("bash", Wait::Poll), false),
            own(Prompt, ("fish", Wait::Poll), false),
            // zsh reads its raw-mode prompt with read().
            own(Prompt, ("zsh", Wait::TtyRead), false),
            // `read` in bash or zsh: a canonical-mode terminal read.
            own(Input, ("bash", Wait::TtyRead), true),
            own(Input, ("zsh", Wait::TtyRead), true),
            // dash has no line editor: that read is its prompt.
            own(Prompt, ("dash", Wait::TtyRead), true),
            // A loop of builtins, or `x=$(sleep 9)`: the shell is busy.
            own(Running, ("bash", Wait::Other), true),
            own(Running, ("zsh", Wait::Other), false),
            // A wait channel it would not tell: the prompt is the guess.
            own(Prompt, ("bash", Wait::Hidden), false),
            // A program in the pane's place (create_window(shell=...)) at
            // its own prompt waits for input: python3's readline polls in
            // raw mode, node's REPL too.
            own(Input, ("python3", Wait::Poll), false),
            own(Input, ("node", Wait::Poll), false),
        ];
        for (want, f) in cases {
            assert_eq!(
                activity(&f),
                (
                    want,
                    Some(100),
                    Some(f.shell.stat.comm.iter().map(|b| *b as char).collect())
                ),
                "{f:?}"
            );
        }
    }

    #[test]
    fn foreground_commands() {
        use Activity::*;
        let fg = |members: &[(u32, &str, &[Wait])], canon| {
            facts(("bash", Wait::Other, 200), members, canon)
        };
        let cat = fg(&[(200, "cat", &[Wait::TtyRead])], true);
        assert_eq!(activity(&cat), (Input, Some(200), Some("cat".into())));
        let sleep = fg(&[(200, "sleep", &[Wait::Other])], true);
        assert_eq!(activity(&sleep), (Running, Some(200), Some("sleep".into())));
        // A REPL under poll in raw mode waits for keys; a server under
        // epoll in canonical mode does not.
        let repl = fg(&[(200, "python3", &[Wait::Poll])], false);
        assert_eq!(activity(&repl).0, Input);
        let server = fg(&[(200, "node", &[Wait::Poll, Wait::Other])], true);
        assert_eq!(activity(&server).0, Running);
        // `sort | cat`: the member reading the terminal is named.
        let pipe = fg(
            &[
                (200, "sort", &[Wait::Other]),
                (201, "cat", &[Wait::TtyRead]),
            ],
            true,
        );
        assert_eq!(activity(&pipe), (Input, Some(201), Some("cat".into())));
        // The leader is named when nobody reads.
        let busy = fg(&[(201, "tee", &[]), (200, "make", &[Wait::Other])], true);
        assert_eq!(activity(&busy), (Running, Some(200), Some("make".into())));
    }

    fn with_output(mut f: Facts, blocked: Option<bool>) -> Facts {
        f.output_blocked = blocked;
        f
    }

    #[test]
    fn no_room_at_any_look_is_blocked_output() {
        let (room, full) = (Some(true), Some(false));
        assert_eq!(blocked_at_any(&[room, room, room]), Some(false));
        assert_eq!(blocked_at_any(&[room, full, room]), Some(true));
        assert_eq!(blocked_at_any(&[None, full]), Some(true));
        assert_eq!(blocked_at_any(&[room, None, room]), None);
        // Two looks, as the Linux probe takes them.
        assert_eq!(blocked_at_any(&[full, None]), Some(true));
        assert_eq!(blocked_at_any(&[None, room]), None);
        assert_eq!(blocked_at_any(&[room, room]), Some(false));
    }

    #[test]
    fn a_task_asleep_in_a_terminal_whose_output_is_blocked_writes() {
        use Activity::*;
        let fg = |comm: &str, wait, canon| {
            facts(("bash", Wait::Other, 200), &[(200, comm, &[wait])], canon)
        };
        // `yes`, or `tr` at the end of a pipe: asleep in the terminal
        // while tmux has not drained what it wrote.
        let yes = fg("yes", Wait::TtyRead, true);
        assert_eq!(
            activity(&with_output(yes.clone(), Some(true))),
            (Running, Some(200), Some("yes".into()))
        );
        // The same wait with room for output is a read; unknown room
        // keeps the read (the old behaviour).
        assert_eq!(activity(&with_output(yes.clone(), Some(false))).0, Input);
        assert_eq!(activity(&with_output(yes, None)).0, Input);
        // Nor does a raw-mode program under poll wait for keys then.
        let tui = fg("top", Wait::Poll, false);
        assert_eq!(activity(&with_output(tui, Some(true))).0, Running);
        // A getpass-like read is not secret either.
        let pass = with_echo(fg("python3", Wait::TtyRead, true), Some(false));
        assert_eq!(activity(&with_output(pass, Some(true))).0, Running);
        // The shell's own `while :; do echo y; done`: busy, not `read`
        // and not at its prompt.
        let own = facts(("bash", Wait::TtyRead, 100), &[], true);
        assert_eq!(activity(&with_output(own, Some(true))).0, Running);
        let zsh = facts(("zsh", Wait::TtyRead, 100), &[], false);
        assert_eq!(activity(&with_output(zsh.clone(), Some(true))).0, Running);
        assert_eq!(activity(&zsh).0, Prompt);
        // A prompt under poll does not wait on the terminal's output.
        let bash = facts(("bash", Wait::Poll, 100), &[], false);
        assert_eq!(activity(&with_output(bash, Some(true))).0, Prompt);
    }

    #[test]
    fn a_hidden_wait_channel_drops_input_from_observable() {
        let f = facts(
            ("bash", Wait::Other, 200),
            &[(200, "cat", &[Wait::Hidden])],
            true,
        );
        let p = judge(&f);
        assert_eq!(p.activity, Activity::Running);
        assert_eq!(p.observable, OBSERVE_NO_WAITS);
        assert_eq!(judge(&with_echo(f, None)).observable, OBSERVE_NO_INPUT);
        let f = facts(("bash", Wait::Poll, 100), &[], false);
        assert_eq!(judge(&f).observable, OBSERVE_ALL);
    }

    /// Hidden waits (macOS's ps prints `-`): a line mode without echo is
    /// a password read, whoever sleeps in the foreground.
    #[test]
    fn with_hidden_waits_a_line_without_echo_is_secret() {
        use Activity::*;
        let sudo = facts(
            ("zsh", Wait::Hidden, 200),
            &[(200, "sudo", &[Wait::Hidden])],
            true,
        );
        let p = judge(&with_echo(sudo.clone(), Some(false)));
        assert_eq!(
            (p.activity, p.foreground_command.as_deref(), p.observable),
            (Secret, Some("sudo"), OBSERVE_NO_WAITS)
        );
        // Echo on: nothing to tell, running.
        assert_eq!(judge(&sudo).activity, Running);
        // Writing into a full terminal is not reading a password.
        let writing = with_output(with_echo(sudo, Some(false)), Some(true));
        assert_eq!(judge(&writing).activity, Running);
        // Raw mode with echo off (an editor) is not a line: running.
        let vim = facts(
            ("zsh", Wait::Hidden, 200),
            &[(200, "vim", &[Wait::Hidden])],
            false,
        );
        assert_eq!(judge(&with_echo(vim, Some(false))).activity, Running);
        // A running process has no wait: not secret.
        let busy = facts(("bash", Wait::Hidden, 200), &[(200, "python3", &[])], true);
        assert_eq!(judge(&with_echo(busy, Some(false))).activity, Running);
        // The shell's own `read -s`; its prompt otherwise.
        let shell = facts(("bash", Wait::Hidden, 100), &[], true);
        assert_eq!(
            judge(&with_echo(shell.clone(), Some(false))).activity,
            Secret
        );
        assert_eq!(judge(&shell).activity, Prompt);
        let dash = facts(("dash", Wait::Hidden, 100), &[], true);
        assert_eq!(judge(&with_echo(dash, Some(false))).activity, Prompt);
    }

    #[test]
    fn bsd_wait_messages() {
        assert_eq!(classify_wchan(b"ttyin"), Wait::TtyRead);
        assert_eq!(classify_wchan(b"ttyout"), Wait::Other);
        assert_eq!(classify_wchan(b"select"), Wait::Poll);
        assert_eq!(classify_wchan(b"kqread"), Wait::Poll);
        assert_eq!(classify_wchan(b"nanslp"), Wait::Other);
        assert_eq!(classify_wchan(b"wait"), Wait::Other);
        assert_eq!(classify_wchan(b"-"), Wait::Hidden);
    }

    /// A pane's shell that ended before tmux reaped it is a zombie: it
    /// exists for `kill(pid, 0)`, and `ps` shows it on no terminal.
    #[test]
    fn the_portable_probe_sees_a_zombie_as_exited() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true runs");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while ps::state_of(child.id()) != Some(b'Z') {
            assert!(std::time::Instant::now() < deadline, "never a zombie");
            std::thread::yield_now();
        }
        assert!(!has_ended(child.id()));
        let p = Prober::of_kind(child.id(), ProbeKind::Portable).probe();
        child.wait().expect("reaped");
        assert_eq!(p.activity, Activity::Exited);
    }

    #[test]
    fn the_probe_is_chosen_by_name() {
        let auto = ProbeKind::parse(None).unwrap();
        assert_eq!(ProbeKind::parse(Some("auto")), Ok(auto));
        assert_eq!(ProbeKind::parse(Some(" ")), Ok(auto));
        if cfg!(target_os = "linux") {
            assert_eq!(auto, ProbeKind::Linux);
            assert_eq!(ProbeKind::parse(Some("linux")), Ok(ProbeKind::Linux));
        } else {
            assert_eq!(auto, ProbeKind::Portable);
            assert!(ProbeKind::parse(Some("linux")).is_err());
        }
        assert_eq!(ProbeKind::parse(Some("portable")), Ok(ProbeKind::Portable));
        assert!(ProbeKind::parse(Some("proc")).is_err());
    }

    #[test]
    fn a_pid_that_does_not_exist_has_exited() {
        // Above the kernel's pid_max (at most 2^22).
        let p = probe(0x7fff_fff0);
        assert_eq!(p.activity, Activity::Exited);
        assert_eq!(p.foreground_pid, None);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_exit_watch_wakes_when_the_process_ends() {
        use std::time::Duration;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let Some(watch) = ExitWatch::new(child.id()) else {
            // A sandbox's seccomp filter may refuse pidfd_open; then the
            // documented fallback (no watch) is what the callers get.
            let err = std::io::Error::last_os_error().raw_os_error();
            child.kill().expect("kill");
            child.wait().expect("reaped");
            assert!(
                matches!(err, Some(libc::ENOSYS | libc::EPERM)),
                "pidfd_open failed with {err:?}"
            );
            eprintln!("pidfd_open is refused here ({err:?}): no exit watch");
            return;
        };
        let early = tokio::time::timeout(Duration::from_millis(1), watch.exited()).await;
        assert!(early.is_err(), "sleep 30 has not ended");
        // Asked before the kill: after it, the exit may already be seen.
        assert!(!watch.has_exited());
        child.kill().expect("kill");
        tokio::time::timeout(Duration::from_secs(15), watch.exited())
            .await
            .expect("woken by the exit");
        assert!(watch.has_exited());
        child.wait().expect("reaped");
        // Once ended, it stays ended.
        tokio::time::timeout(Duration::from_secs(1), watch.exited())
            .await
            .expect("still ended");
        assert!(ExitWatch::new(0x7fff_fff0).is_none());
    }

    #[test]
    fn tty_numbers_map_to_pts_paths() {
        // major 136 minor 5; major 137 minor 3 = pts 259; minor above 255.
        assert_eq!(
            tty_path((136 << 8) | 5).unwrap().to_str(),
            Some("/dev/pts/5")
        );
        assert_eq!(
            tty_path((137 << 8) | 3).unwrap().to_str(),
            Some("/dev/pts/259")
        );
        let big = (136 << 8) | (0x1 << 20) | 0x02; // minor 0x102
        assert_eq!(tty_path(big).unwrap().to_str(), Some("/dev/pts/258"));
        assert_eq!(tty_path(0), None);
        assert_eq!(tty_path(4 << 8), None);
    }

    fn with_echo(mut f: Facts, echo: Option<bool>) -> Facts {
        f.echo = echo;
        f
    }

    #[test]
    fn a_line_read_without_echo_is_secret() {
        use Activity::*;
        // `read -s` in bash: the shell reads a canonical line, echo off.
        let read_s = facts(("bash", Wait::TtyRead, 100), &[], true);
        assert_eq!(
            judge(&with_echo(read_s.clone(), Some(false))).activity,
            Secret
        );
        assert_eq!(
            judge(&with_echo(read_s.clone(), Some(true))).activity,
            Input
        );
        // Settings unknown: input, and secret is not observable.
        let unknown = judge(&with_echo(read_s, None));
        assert_eq!(unknown.activity, Input);
        assert_eq!(unknown.observable, OBSERVE_NO_SECRET);
        // getpass() in a foreground python3.
        let getpass = facts(
            ("bash", Wait::Other, 200),
            &[(200, "python3", &[Wait::TtyRead])],
            true,
        );
        let p = judge(&with_echo(getpass, Some(false)));
        assert_eq!((p.activity, p.observable), (Secret, OBSERVE_ALL));
        // A REPL in raw mode has echo off too, but reads keys: input.
        let repl = facts(
            ("bash", Wait::Other, 200),
            &[(200, "python3", &[Wait::Poll])],
            false,
        );
        assert_eq!(judge(&with_echo(repl, Some(false))).activity, Input);
        // zsh edits its prompt in raw mode with echo off: a prompt.
        let zsh = facts(("zsh", Wait::TtyRead, 100), &[], false);
        assert_eq!(judge(&with_echo(zsh, Some(false))).activity, Prompt);
        // Echo off while nothing reads (`stty -echo; sleep 9`): running.
        let sleep = facts(
            ("bash", Wait::Other, 200),
            &[(200, "sleep", &[Wait::Other])],
            true,
        );
        assert_eq!(judge(&with_echo(sleep, Some(false))).activity, Running);
        // dash reads its prompt as a canonical line: with echo off it is
        // still its prompt (dash's `read` has no -s).
        let dash = facts(("dash", Wait::TtyRead, 100), &[], true);
        assert_eq!(judge(&with_echo(dash, Some(false))).activity, Prompt);
    }

    #[test]
    fn stty_output_gives_icanon_and_echo() {
        // GNU coreutils 9 (`stty -a`), echo off as getpass leaves it.
        let gnu = b"speed 38400 baud; rows 24; columns 80; line = 0;\n\
            intr = ^C; quit = ^\\; erase = ^?; kill = ^U; eof = ^D;\n\
            -parenb -parodd -cmspar cs8 -hupcl -cstopb cread -clocal -crtscts\n\
            isig icanon iexten -echo echoe echok -echonl -noflsh -xcase -tostop -echoprt\n\
            echoctl echoke -flusho -extproc\n";
        assert_eq!(
            parse_stty(gnu),
            Some(TermMode {
                canonical: true,
                echo: false
            })
        );
        assert!(parse_stty(gnu).unwrap().is_secret());
        // BSD / macOS: `lflags:` on one line, flags in any order.
        let bsd = b"speed 9600 baud; 24 rows; 80 columns;\n\
            lflags: -icanon isig iexten echo echoe -echok echoke -echonl echoctl\n";
        let mode = parse_stty(bsd).unwrap();
        assert_eq!((mode.canonical, mode.echo), (false, true));
        assert!(!mode.is_secret());
        // echoe, echok, echonl are other flags, not echo.
        assert_eq!(parse_stty(b"icanon -echoe echok"), None);
        assert_eq!(parse_stty(b"stty: /dev/pts/9: No such file"), None);
        assert_eq!(parse_stty(b""), None);
        assert_eq!(parse_stty(&[0xff, b'-', b' ', b'\n']), None);
    }

    /// A pty of our own: the master and the slave's path. The master is
    /// kept open (the slave would hang up) and never read or written.
    #[cfg(target_os = "linux")]
    fn pty() -> (
        std::os::fd::OwnedFd,
        std::os::fd::OwnedFd,
        std::path::PathBuf,
    ) {
        use std::os::fd::FromRawFd;
        let (mut master, mut slave) = (-1, -1);
        // SAFETY: openpty writes two descriptors; the name, termios and
        // window size are optional (null).
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both were just opened for us.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd()))
            .expect("the slave's path");
        (master, slave, path)
    }

    #[cfg(target_os = "linux")]
    use std::os::fd::{AsRawFd, OwnedFd};

    #[cfg(target_os = "linux")]
    fn set_lflag(fd: &OwnedFd, on: libc::tcflag_t, off: libc::tcflag_t) {
        // SAFETY: termios is plain data, filled by tcgetattr on an open fd.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) }, 0);
        t.c_lflag = (t.c_lflag | on) & !off;
        assert_eq!(
            unsafe { libc::tcsetattr(fd.as_raw_fd(), libc::TCSANOW, &t) },
            0
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_pty_reads_as_echoing_or_secret() {
        let (_master, slave, path) = pty();
        let mode = |p| terminal_mode(p).expect("tcgetattr on the slave");
        // A new pty: canonical, echoing.
        assert_eq!(
            mode(&path),
            TermMode {
                canonical: true,
                echo: true
            }
        );
        // What getpass and `read -s` do: echo off, line mode kept.
        set_lflag(&slave, 0, libc::ECHO);
        assert!(mode(&path).is_secret());
        // Raw mode (a REPL, an editor): echo off, but no line.
        set_lflag(&slave, 0, libc::ICANON);
        assert_eq!(
            mode(&path),
            TermMode {
                canonical: false,
                echo: false
            }
        );
        set_lflag(&slave, libc::ICANON | libc::ECHO, 0);
        assert!(!mode(&path).is_secret());
        assert_eq!(terminal_mode(std::path::Path::new("/dev/null")), None);
        assert_eq!(
            terminal_mode(std::path::Path::new("/nonexistent/pts/9")),
            None
        );
    }

    /// Why the terminal is opened for reading: an `O_PATH` descriptor is
    /// refused by the terminal ioctls.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_o_path_descriptor_cannot_read_terminal_settings() {
        use std::os::unix::fs::OpenOptionsExt;
        let (_master, _slave, path) = pty();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOCTTY)
            .open(&path)
            .expect("O_PATH open");
        // SAFETY: as in terminal_mode.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::tcgetattr(file.as_raw_fd(), &mut t) };
        let err = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((rc, err), (-1, Some(libc::EBADF)));
    }

    /// A program in its own session on a pty of ours, that pty its
    /// controlling terminal (as a pane's shell has its pane's).
    #[cfg(target_os = "linux")]
    fn on_pty(slave: &OwnedFd, argv: &[&str]) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let fd = slave.as_raw_fd();
        let stdio = || std::process::Stdio::from(slave.try_clone().expect("dup"));
        let mut command = std::process::Command::new(argv[0]);
        command
            .args(&argv[1..])
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio());
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(fd, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command.spawn().expect("spawn on the pty")
    }

    /// Probes `pid` until it is seen reading the terminal (bounded), then
    /// once more (the first look may have read the settings just before
    /// the program changed them), and says what that look saw.
    #[cfg(target_os = "linux")]
    fn reading(mut prober: Prober) -> Activity {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        loop {
            let p = prober.probe();
            if matches!(p.activity, Activity::Input | Activity::Secret) {
                return prober.probe().activity;
            }
            if std::time::Instant::now() > deadline {
                return p.activity;
            }
            std::thread::yield_now();
        }
    }

    /// Waits (bounded) until every task of `pid` sleeps in `wchan`.
    #[cfg(target_os = "linux")]
    fn until_asleep_in(pid: u32, wchan: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        let asleep = || {
            let stat = std::fs::read(format!("/proc/{pid}/stat")).ok();
            let here = std::fs::read(format!("/proc/{pid}/wchan")).ok();
            stat.as_deref()
                .and_then(parse_stat)
                .is_some_and(|s| s.state == b'S')
                && here.as_deref() == Some(wchan.as_bytes())
        };
        while !asleep() {
            assert!(
                std::time::Instant::now() < deadline,
                "{pid} never slept in {wchan}"
            );
            std::thread::yield_now();
        }
    }

    /// `yes` on a pty whose master nobody reads fills the pty and sleeps
    /// in the same `wait_woken` a reader sleeps in, for good: no output
    /// room tells it from one. `read` on another pty stays input.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_writer_blocked_on_a_full_pty_is_running_not_input() {
        let (_master, slave, path) = pty();
        let mut yes = on_pty(&slave, &["yes"]);
        until_asleep_in(yes.id(), "wait_woken");
        let file = open_terminal(&path).expect("the slave opens");
        assert_eq!(has_room(&file), Some(false), "the pty is full");
        let mut prober = Prober::new(yes.id());
        let mut looks: Vec<Activity> = (0..50).map(|_| prober.probe().activity).collect();
        let mut portable = Prober::of_kind(yes.id(), ProbeKind::Portable);
        looks.extend((0..5).map(|_| portable.probe().activity));
        let _ = yes.kill();
        let _ = yes.wait();
        assert!(looks.iter().all(|a| *a == Activity::Running), "{looks:?}");

        let (_master, slave, path) = pty();
        let mut read = on_pty(&slave, &["bash", "-c", "read x"]);
        let got = reading(Prober::new(read.id()));
        let room = open_terminal(&path).as_ref().and_then(has_room);
        let _ = read.kill();
        let _ = read.wait();
        assert_eq!((got, room), (Activity::Input, Some(true)));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn getpass_and_read_s_on_a_real_pty_are_secret_and_read_is_not() {
        let have = |p: &str| {
            std::process::Command::new(p)
                .arg("-c")
                .arg("")
                .output()
                .is_ok()
        };
        let mut cases: Vec<(Vec<&str>, Activity)> = Vec::new();
        if have("python3") {
            cases.push((
                vec!["python3", "-c", "import getpass; getpass.getpass()"],
                Activity::Secret,
            ));
        }
        cases.push((vec!["bash", "-c", "read -s x"], Activity::Secret));
        cases.push((vec!["bash", "-c", "read x"], Activity::Input));
        // Both probes, the portable one finding the terminal with ps and
        // being told it (as tmux's pane_tty tells it).
        for (argv, want) in cases {
            for kind in [ProbeKind::Linux, ProbeKind::Portable] {
                for told in [false, true] {
                    let (_master, slave, path) = pty();
                    let mut child = on_pty(&slave, &argv);
                    let mut prober = Prober::of_kind(child.id(), kind);
                    if told {
                        prober = prober.with_tty(path.to_str().expect("a utf-8 path"));
                    }
                    let got = reading(prober);
                    let _ = child.kill();
                    let _ = child.wait();
                    assert_eq!(got, want, "{argv:?} {kind:?} told the tty: {told}");
                }
            }
        }
    }

    /// The portable probe on a real pty: a shell's foreground job found
    /// through `tpgid`, named, and judged as the Linux probe judges it.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_portable_probe_sees_a_foreground_job() {
        let (_master, slave, _) = pty();
        // The shell runs a job in its own foreground group (job control).
        let mut shell = on_pty(&slave, &["bash", "--norc", "-ic", "sleep 30; true"]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        let mut prober = Prober::of_kind(shell.id(), ProbeKind::Portable);
        let seen = loop {
            let p = prober.probe();
            let done = p.foreground_command.as_deref() == Some("sleep");
            if done || std::time::Instant::now() > deadline {
                break p;
            }
            std::thread::yield_now();
        };
        let _ = shell.kill();
        let _ = shell.wait();
        assert_eq!(
            (seen.activity, seen.foreground_command.as_deref()),
            (Activity::Running, Some("sleep"))
        );
        assert_ne!(seen.foreground_pid, Some(shell.id()));
        assert_eq!(seen.observable, OBSERVE_ALL);
        // Gone: exited.
        let gone = Prober::of_kind(shell.id(), ProbeKind::Portable).probe();
        assert_eq!(gone.activity, Activity::Exited);
    }

    /// One look's cost, each probe, at a `read` on a pty (the common case
    /// of a wait): a timing print, not a check.
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore = "timing: cargo test --lib probe_cost -- --ignored --nocapture"]
    fn probe_cost() {
        let (_master, slave, path) = pty();
        let mut read = on_pty(&slave, &["bash", "-c", "read x"]);
        assert_eq!(reading(Prober::new(read.id())), Activity::Input);
        let tty = path.to_str().expect("a utf-8 path");
        let looks = 100;
        let time = |mut make: Box<dyn FnMut() -> Prober>| {
            let started = std::time::Instant::now();
            for _ in 0..looks {
                assert_eq!(make().probe().activity, Activity::Input);
            }
            started.elapsed() / looks
        };
        let pid = read.id();
        let linux = time(Box::new(|| Prober::of_kind(pid, ProbeKind::Linux)));
        let told = time(Box::new(|| {
            Prober::of_kind(pid, ProbeKind::Portable).with_tty(tty)
        }));
        let found = time(Box::new(|| Prober::of_kind(pid, ProbeKind::Portable)));
        let _ = read.kill();
        let _ = read.wait();
        eprintln!(
            "one look, mean of {looks}: linux {linux:?}; portable with pane_tty {told:?}, \
             finding the tty with ps {found:?}"
        );
    }
}
