//! The processes on a terminal as `ps` lists them: the portable probe's
//! only source (POSIX `ps -o … -t TTY`, which procps, macOS and the BSDs
//! all have). Runs `ps` with argv only and parses its output; judges
//! nothing (the caller does).
//!
//! `ps` is asked for `pid pgid tpgid stat wchan comm`, `comm` last since
//! it may hold spaces. Every header is empty but the wait channel's, a
//! long one: procps sizes a column to at least its header and would cut a
//! wait channel at 6 characters otherwise (`wait_w`); BSD `ps` has no
//! width syntax, and its names fit (at most 8 bytes). So one header line
//! comes first; it is skipped like any line that does not start with a
//! pid.

use std::io::Read;
use std::process::{Command, Stdio};

/// The fields asked for, in order (`=` with no text: no header).
pub const FIELDS: &str = "pid=,pgid=,tpgid=,stat=,wchan=WAIT_CHANNEL_WIDE_ENOUGH_FOR_LINUX,comm=";

/// At most this much of `ps`'s output is read (a terminal rarely has more
/// than a few processes; a line is under 100 bytes).
const MAX_OUTPUT: u64 = 64 * 1024;

/// One process as `ps` printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub pid: u32,
    pub pgid: i32,
    /// The foreground process group of the process's terminal (`-1` or
    /// `0` without one).
    pub tpgid: i32,
    /// `stat`: a state letter (`S`, `R`, `I`, `Z`, …) then flags (`s`,
    /// `+`, `<`).
    pub stat: Vec<u8>,
    /// The wait channel: a kernel symbol on Linux (`wait_woken`), a wait
    /// message on the BSDs (`ttyin`), `-` for none.
    pub wchan: Vec<u8>,
    pub comm: Vec<u8>,
}

impl Row {
    /// The one-letter state.
    pub fn state(&self) -> u8 {
        self.stat.first().copied().unwrap_or(b'?')
    }
}

/// Parses `ps -o FIELDS` output; lines that are not a process (the
/// header, junk) are skipped, never a panic.
pub fn parse(out: &[u8]) -> Vec<Row> {
    out.split(|b| *b == b'\n').filter_map(parse_line).collect()
}

fn parse_line(line: &[u8]) -> Option<Row> {
    let mut rest = line;
    let mut field = || {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let len = rest[start..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + len];
        rest = &rest[start + len..];
        Some(word)
    };
    let pid = number(field()?)?;
    let pgid = number(field()?)?;
    let tpgid = number(field()?)?;
    let stat = field()?.to_vec();
    let wchan = field()?.to_vec();
    let comm = rest.trim_ascii();
    if comm.is_empty() {
        return None;
    }
    Some(Row {
        pid: u32::try_from(pid).ok()?,
        pgid: i32::try_from(pgid).ok()?,
        tpgid: i32::try_from(tpgid).ok()?,
        stat,
        wchan,
        comm: comm.to_vec(),
    })
}

fn number(field: &[u8]) -> Option<i64> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// The processes whose controlling terminal is `tty` (a path, such as
/// tmux's `pane_tty`, or a name `ps` printed); `None` if `ps` could not
/// run or failed.
pub fn on_terminal(tty: &str) -> Option<Vec<Row>> {
    let out = run(&["-o", FIELDS, "-t", tty])?;
    Some(parse(&out))
}

/// The terminal of process `pid` as `ps` names it (`pts/3` on Linux and
/// FreeBSD, `ttys003` on macOS); `None` if it has none or is gone.
pub fn terminal_of(pid: u32) -> Option<String> {
    let out = run(&["-o", "tty=", "-p", &pid.to_string()])?;
    let name = std::str::from_utf8(out.trim_ascii()).ok()?;
    let none = name.is_empty() || name.starts_with('?') || name == "-" || name.contains(' ');
    (!none).then(|| name.to_owned())
}

/// The one-letter state of `pid` (`Z` for a zombie, whose terminal `ps`
/// no longer shows); `None` if `ps` lists no such process.
pub fn state_of(pid: u32) -> Option<u8> {
    let out = run(&["-o", "stat=", "-p", &pid.to_string()])?;
    out.trim_ascii().first().copied()
}

/// The command name of `pid` (`ps -o comm=`: a path on BSD and macOS).
pub fn name_of(pid: u32) -> Option<Vec<u8>> {
    let out = run(&["-o", "comm=", "-p", &pid.to_string()])?;
    let name = out.trim_ascii();
    (!name.is_empty()).then(|| name.to_vec())
}

/// How long ago `pid` started: `ps -o etime=`, `[[dd-]hh:]mm:ss`.
pub fn age_of(pid: u32) -> Option<std::time::Duration> {
    parse_etime(&run(&["-o", "etime=", "-p", &pid.to_string()])?)
}

fn parse_etime(out: &[u8]) -> Option<std::time::Duration> {
    let text = std::str::from_utf8(out.trim_ascii()).ok()?;
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (days.parse::<u64>().ok()?, clock),
        None => (0, text),
    };
    let mut seconds = 0;
    let parts: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    for part in parts {
        seconds = seconds * 60 + part.parse::<u64>().ok()?;
    }
    Some(std::time::Duration::from_secs(days * 86_400 + seconds))
}

/// The process group of `pid` and its terminal's foreground group.
pub fn groups_of(pid: u32) -> Option<(i32, i32)> {
    let out = run(&["-o", "pgid=,tpgid=", "-p", &pid.to_string()])?;
    let text = std::str::from_utf8(&out).ok()?;
    let mut fields = text.split_ascii_whitespace().map(str::parse::<i32>);
    Some((fields.next()?.ok()?, fields.next()?.ok()?))
}

/// Runs `ps ARGS` in the C locale; its output (bounded), or `None` when
/// it cannot run or exits unsuccessfully (procps exits 1 when nothing
/// matched).
fn run(args: &[&str]) -> Option<Vec<u8>> {
    let mut child = Command::new("ps")
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|s| s.take(MAX_OUTPUT).read_to_end(&mut out));
    if read.is_some_and(|r| r.is_err()) || out.len() as u64 >= MAX_OUTPUT {
        let _ = child.kill();
    }
    let status = child.wait().ok()?;
    status.success().then_some(out)
}

/// The path to open a terminal `ps` or tmux named: a path as it is, a
/// name under `/dev`.
pub fn terminal_path(tty: &str) -> std::path::PathBuf {
    if tty.starts_with('/') {
        tty.into()
    } else {
        std::path::Path::new("/dev").join(tty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_parse_in_every_form_ps_prints() {
        let secs = |t: &str| parse_etime(t.as_bytes()).map(|d| d.as_secs());
        assert_eq!(secs("  00:07\n"), Some(7));
        assert_eq!(secs("12:34"), Some(754));
        assert_eq!(secs("01:02:03"), Some(3723));
        assert_eq!(secs("2-01:02:03"), Some(2 * 86_400 + 3723));
        for bad in ["", "7", "a:b", "1:2:3:4", "x-00:01"] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }

    /// Recorded from procps-ng 4.0.2 on Linux 6.18 (`ps -o FIELDS -t
    /// /dev/pts/0`): a bash whose foreground job is python's getpass.
    const PROCPS: &[u8] = b"                       WAIT_CHANNEL_WIDE_ENOUGH_FOR_LINUX \n\
        13839 13839 14001 Ss   do_select                          bash\n\
        14001 14001 14001 S+   wait_woken                         python3\n\
        14002 14001 14001 R+   -                                  my prog (x)\n";

    /// Not recorded (no BSD machine here): written from the documented
    /// format of FreeBSD's and macOS's ps(1) (`-o` keywords with `=`,
    /// the header printed when any header is non-empty, the `wchan`
    /// column a wait message such as `ttyin`, `select`, `nanslp`, or `-`,
    /// which macOS prints for every process since its kernel leaves the
    /// wait message empty).
    const BSD: &[u8] = b"                        WAIT_CHANNEL_WIDE_ENOUGH_FOR_LINUX \n\
        71001 71001 71040 Is   select                             -zsh\n\
        71040 71040 71040 I+   ttyin                              sudo\n\
        71041 71040 71040 S+   -                                  ssh\n";

    #[test]
    fn procps_output_parses() {
        let rows = parse(PROCPS);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].pid, rows[0].pgid, rows[0].tpgid, rows[0].state()),
            (13839, 13839, 14001, b'S')
        );
        assert_eq!(rows[0].wchan, b"do_select");
        assert_eq!(rows[1].wchan, b"wait_woken");
        assert_eq!(rows[1].comm, b"python3");
        // A command name with spaces and parentheses is kept whole.
        assert_eq!(rows[2].comm, b"my prog (x)");
        assert_eq!(
            (rows[2].state(), rows[2].wchan.as_slice()),
            (b'R', &b"-"[..])
        );
    }

    #[test]
    fn bsd_output_parses() {
        let rows = parse(BSD);
        assert_eq!(rows.len(), 3, "the header line is skipped");
        assert_eq!(
            (rows[0].comm.as_slice(), rows[0].state()),
            (&b"-zsh"[..], b'I')
        );
        assert_eq!((rows[1].pid, rows[1].tpgid), (71040, 71040));
        assert_eq!(rows[1].wchan, b"ttyin");
        assert_eq!(rows[2].wchan, b"-");
    }

    #[test]
    fn junk_is_skipped_not_a_panic() {
        for bad in [
            &b""[..],
            b"\n\n",
            b"12",
            b"12 13 14 S",
            b"12 13 14 S wchan",
            b"x 13 14 S - sh",
            b"12 13 99999999999 S - sh",
            b"-1 13 14 S - sh",
            &[0xff, b' ', b'1', b'\n'],
        ] {
            assert_eq!(parse(bad), vec![], "{:?}", String::from_utf8_lossy(bad));
        }
        // A good line among junk is still found.
        let rows = parse(b"junk\n5 5 5 S - sh\n\xff\xfe\n");
        assert_eq!(rows.len(), 1);
    }

    #[test]
    fn terminal_paths() {
        assert_eq!(terminal_path("/dev/pts/3").to_str(), Some("/dev/pts/3"));
        assert_eq!(terminal_path("pts/3").to_str(), Some("/dev/pts/3"));
        assert_eq!(terminal_path("ttys003").to_str(), Some("/dev/ttys003"));
    }

    #[test]
    fn a_process_of_ours_is_found_by_ps() {
        // No terminal under cargo test, often; the group query works
        // for any process.
        let (pgid, _) = groups_of(std::process::id()).expect("ps runs");
        // SAFETY: getpgrp only reads our own process group.
        assert_eq!(pgid, unsafe { libc::getpgrp() });
        assert_eq!(groups_of(0x7fff_fff0), None);
        assert!(matches!(state_of(std::process::id()), Some(b'R' | b'S')));
        assert_eq!(state_of(0x7fff_fff0), None);
        assert_eq!(terminal_of(0x7fff_fff0), None);
    }
}
