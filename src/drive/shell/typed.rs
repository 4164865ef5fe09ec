//! What `run_command` types: the command alone when the shell marks its
//! commands itself, else the wrapper line that prints our markers.
//!
//! The wrapper spells the command once to be shown and once to be run,
//! each time escaped so that the typed line is one line of ASCII. When the
//! shell has read it, the first `printf` erases its echo (cursor up over
//! the rows it took, to the prompt's end, clear to the end of the screen)
//! and shows the command as a person would have typed it; then come the
//! start marker, the command, and the end marker with its status. The
//! command runs in a subshell (POSIX shells) or a `fish -c` child (fish),
//! so `exit 3` reports 3 without ending the pane's shell; or, asked for
//! the live shell, through `eval` in the pane's shell itself, so `cd` and
//! `export` persist. The markers' escapes are spelt out (`\033`), so only
//! the shell running the command prints them.

use crate::drive::watch::Geometry;
use crate::ids::PaneId;

/// The OSC number of the markers: tmux knows none such, so its screen
/// drops the sequence.
pub const OSC: &str = "6973";

/// How a command is typed into a shell.
#[derive(Clone, Copy, Debug)]
pub struct ShellTyping {
    /// A leading space keeps it out of the shell's history.
    pub suppress_history: bool,
    /// fish syntax, not POSIX.
    pub fish: bool,
    /// In a child shell, not the pane's own.
    pub subshell: bool,
    /// The shell execs a subshell's last simple command itself.
    pub execs_last: bool,
}

impl ShellTyping {
    /// Whether the shell named `shell` (the pane's current command) execs
    /// the last simple command of a subshell itself: dash and zsh do;
    /// bash does not. `sh` is taken for dash (Debian's): where it is bash,
    /// a program runs under its subshell, and the pane shows `sh`.
    pub fn execs_last(shell: &str) -> bool {
        matches!(shell, "dash" | "zsh" | "sh")
    }

    fn space(self) -> &'static str {
        if self.suppress_history { " " } else { "" }
    }
}

/// The command as typed at a shell that marks its commands itself: no
/// wrapper at all.
pub fn bare(command: &str, how: ShellTyping) -> String {
    format!("{}{command}", how.space())
}

/// The pane user option where the wrapper records how its commands ended
/// (`;<nonce> <status>` each, appended; the `;` leads, as tmux's command
/// line reads an argument's trailing `;` as the end of a command): tmux
/// keeps it for a server started later, and it shows nowhere in the pane.
pub const END_OPTION: &str = "@tmux_mcp_end";

/// The wrapper line for `command` with markers of `nonce`, typed where
/// the cursor is (`at`) in `pane`.
pub fn wrapped(command: &str, nonce: &str, how: ShellTyping, at: Geometry, pane: PaneId) -> String {
    let quoted = if how.fish {
        fish_quote(command)
    } else {
        format!("'{}'", printf_b_escape(command))
    };
    let first = plain_program(command);
    let (shown, run, status) = match (how.fish, how.subshell, first) {
        (true, true, Some(first)) => {
            // The child execs a program (not a function): the pane then
            // shows it as its current command.
            let body = format!(
                "if functions -q {first}; or not command -q {first}; {command}; else; exec {command}; end"
            );
            ("%s", format!("fish -c {}", fish_quote(&body)), "$status")
        }
        (true, true, None) => ("%s", format!("fish -c {quoted}"), "$status"),
        (true, false, _) => ("%s", format!("eval {quoted}"), "$status"),
        // A plain command is typed as is. Run last in a subshell, a
        // program found on the PATH is then exec'd (the pane shows it as
        // its current command): dash and zsh do so themselves; for other
        // shells the wrapper does, and a function, alias or builtin runs
        // as typed.
        (false, true, Some(_)) if how.execs_last => ("%b", format!("({command})"), "$?"),
        (false, true, Some(first)) => (
            "%b",
            format!("(case $(command -v {first}) in /*) exec {command};; *) {command};; esac)"),
            "$?",
        ),
        (false, true, None) => (
            "%b",
            format!("(eval {})", sh_source(command, &quoted)),
            "$?",
        ),
        (false, false, _) => ("%b", format!("eval {}", sh_source(command, &quoted)), "$?"),
    };
    let end = end_part(nonce, how.fish, status, pane);
    let line = |rows: usize| {
        format!(
            "{space}printf '\\r\\033[{rows}A\\033[{col}G\\033[J{shown}\\n\\033]{OSC};{nonce};S\\007' {quoted}; {run}; {end}",
            space = how.space(),
            col = at.cursor_x + 1
        )
    };
    // The rows the echo takes depend on the line's length, which holds
    // the row count: settle it (a digit more at most, twice).
    let width = at.width.max(1);
    let mut rows = 1;
    let mut typed = line(rows);
    for _ in 0..3 {
        let cells = at.cursor_x + typed.chars().count();
        // A line ending exactly at the margin leaves the cursor there,
        // pending a wrap; a space more makes the wrap happen.
        let cells = cells + usize::from(cells.is_multiple_of(width));
        let needed = cells.div_ceil(width).max(1);
        if needed == rows {
            break;
        }
        rows = needed;
        typed = line(rows);
    }
    let cells = at.cursor_x + typed.chars().count();
    if cells.is_multiple_of(width) {
        typed.push(' ');
    }
    typed
}

/// The end of the wrapper line: the end marker with the status, then,
/// only when the pane's end script ([`end_script_suffix`],
/// [`end_script`]) exists beside the tmux socket (its call returned with
/// the command running: see `handles::record_start`), that script run
/// with the nonce and the status, once `$TMUX_PANE` says this is the
/// pane; only a file of the shell's own user, not a link (a socket given
/// with `-S` may sit in a directory others write to). The test is a
/// builtin: a command that ended within its call forks nothing more. The script
/// runs in the background (no prompt waits on a tmux client), with no job
/// message, and silently fails (no tmux to run, a remote shell, the
/// script removed by the server that read the end marker between the test
/// and `sh` opening it). It prints nothing: output after the prompt would be a gap in the
/// recording once run_command returned; a waiter that lost the end marker
/// reads the option instead.
fn end_part(nonce: &str, fish: bool, status: &str, pane: PaneId) -> String {
    let marker = |what: &str| format!("printf '\\033]{OSC};{nonce};{what}\\007'");
    let suffix = end_script_suffix(pane);
    let end = marker("E;%d");
    if fish {
        // fish runs no block in the background, and reports a job's end
        // unless it is disowned.
        let file = format!("(string replace -r ',[^,]*,[^,]*$' '' -- \"$TMUX\"){suffix}");
        format!(
            "set __tmux_mcp_s {status}; {end} $__tmux_mcp_s; if test \"$TMUX_PANE\" = '{pane}'; and test -O {file}; and not test -L {file}; sh {file} {nonce} $__tmux_mcp_s 2>/dev/null &; disown 2>/dev/null; end; set -e __tmux_mcp_s"
        )
    } else {
        // The socket is `$TMUX` without its last two fields (pid, session).
        let file = format!("\"${{TMUX%,*,*}}{suffix}\"");
        format!(
            "__tmux_mcp_s={status}; {end} \"$__tmux_mcp_s\"; case ${{TMUX_PANE-}} in '{pane}') if [ -O {file} ] && ! [ -L {file} ]; then (sh {file} {nonce} \"$__tmux_mcp_s\" 2>/dev/null &); fi;; esac; unset __tmux_mcp_s"
        )
    }
}

/// What follows the tmux socket's path in the name of the end script of
/// `pane`: `<socket>.tmux-mcp-end-<N>`. One per pane: a script left by a
/// command that ended before it was made only makes the pane's next
/// command record its own end, and remove the script.
pub fn end_script_suffix(pane: PaneId) -> String {
    format!("{END_SCRIPT_PREFIX}{}", pane.0)
}

/// What every end script's name holds between the socket's and the pane
/// number ([`end_script_suffix`]).
pub const END_SCRIPT_PREFIX: &str = ".tmux-mcp-end-";

/// The pane whose end script's name ends in `number` (what follows
/// [`END_SCRIPT_PREFIX`]): a pane number as we write it, nothing else.
pub fn end_script_pane(number: &str) -> Option<PaneId> {
    PaneId::parse(format!("%{number}").as_bytes())
}

/// The end script of `pane`, run by `sh` with the command's nonce and
/// status: appends them (`;<nonce> <status>`) to the pane's
/// [`END_OPTION`], then removes itself. Through `named`, the tmux program
/// and socket of this server by their absolute paths (a pane's shell may
/// have no `tmux` on its `PATH`), then through the `tmux` the shell finds
/// (its `$TMUX`).
pub fn end_script(pane: PaneId, named: Option<(&str, &str)>) -> String {
    let set =
        format!("set-option -ap -t '{pane}' {END_OPTION} \";$1 $2\" </dev/null >/dev/null 2>&1");
    let tmux = match named {
        Some((program, socket)) => format!("{} -S {}", sh_quote(program), sh_quote(socket)),
        None => "tmux".to_owned(),
    };
    format!("{tmux} {set} || tmux {set}\nrm -f \"$0\"\n")
}

/// Quotes `text` as one POSIX shell word.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The program a plain command runs (`sleep 30`, `make -j4 test`): words
/// of characters no shell treats specially, the first naming a program
/// (no assignment). Such a command can be exec'd, so that the pane shows
/// it; anything else (a pipeline, a list, quotes, expansions) is not.
fn plain_program(command: &str) -> Option<&str> {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b" _./:,+@%=-".contains(&b);
    if !command.bytes().all(safe) {
        return None;
    }
    let first = command.split(' ').find(|w| !w.is_empty())?;
    let program = !first.contains('=') && !first.starts_with('-') && first != "exec";
    program.then_some(first)
}

/// What a POSIX shell evals for `command`: the command itself in single
/// quotes when it is one line of printable ASCII, else decoded from its
/// `printf %b` form (`quoted`), which costs the shell a fork.
fn sh_source(command: &str, quoted: &str) -> String {
    if command.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        format!("'{}'", command.replace('\'', "'\\''"))
    } else {
        format!("\"$(printf %b {quoted})\"")
    }
}

/// `text` for a single-quoted `printf %b` argument in a POSIX shell,
/// ASCII only: newlines, tabs, other controls and non-ASCII bytes as `\n`,
/// `\t` and `\0NNN`, so the typed line is one line of known width.
fn printf_b_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for &b in text.as_bytes() {
        match b {
            b'\'' => out.push_str("'\\''"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\0{b:03o}")),
        }
    }
    out
}

/// `text` as one fish word of ASCII: quoted runs, with newlines, tabs,
/// other controls and non-ASCII characters as unquoted escapes (inside fish single quotes only `\\` and
/// `\'` are escapes).
fn fish_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut open = false;
    for c in text.chars() {
        if c.is_control() || !c.is_ascii() {
            if open {
                out.push('\'');
                open = false;
            }
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                _ if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
                _ => out.push_str(&format!("\\U{:08x}", c as u32)),
            }
            continue;
        }
        if !open {
            out.push('\'');
            open = true;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            _ => out.push(c),
        }
    }
    if open {
        out.push('\'');
    }
    if out.is_empty() {
        out.push_str("''");
    }
    out
}

/// What every wrapper line holds, spelt out (`\033]6973;`): its echo
/// reaches `%output` before the shell erases it from the screen.
const ECHO_SIGNATURE: &[u8] = b"\\033]6973;";

/// Is `line` the echo of a line run_command typed? Waits leave it out.
pub fn is_plumbing(line: &[u8]) -> bool {
    memchr::memmem::find(line, ECHO_SIGNATURE).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PANE: PaneId = PaneId(3);

    const AT: Geometry = Geometry {
        width: 80,
        height: 24,
        cursor_x: 2,
        blank: false,
    };

    fn how(shell: &str, subshell: bool) -> ShellTyping {
        ShellTyping {
            suppress_history: false,
            fish: shell == "fish",
            subshell,
            execs_last: ShellTyping::execs_last(shell),
        }
    }

    #[test]
    fn the_typed_line_is_one_line_of_ascii_whose_rows_are_counted() {
        let typed = wrapped("cat <<'E'\n\té\nE", "abc", how("sh", true), AT, PANE);
        assert!(typed.bytes().all(|b| (0x20..0x7f).contains(&b)), "{typed}");
        assert!(
            typed.contains(r"'cat <<'\''E'\''\n\t\0303\0251\nE'"),
            "{typed}"
        );
        let cells = 2 + typed.len();
        assert_ne!(cells % 80, 0);
        assert!(
            typed.contains(&format!("\\033[{}A", cells.div_ceil(80))),
            "{typed}"
        );
        let fish = wrapped("a\nb'cé", "abc", how("fish", true), AT, PANE);
        assert!(fish.contains(r"'a'\n'b\'c'\U000000e9"), "{fish}");
        assert!(fish.is_ascii());
        // At the margin exactly, a space more makes the wrap happen.
        for len in 100..260 {
            let typed = wrapped(&"x".repeat(len), "abc", how("sh", true), AT, PANE);
            assert_ne!((2 + typed.len()) % 80, 0);
        }
    }

    #[test]
    fn the_live_shell_evals_in_place_and_the_subshell_in_a_child() {
        let sh = |subshell| wrapped("cd /tmp; pwd", "abc", how("sh", subshell), AT, PANE);
        assert!(sh(true).contains("; (eval 'cd /tmp; pwd'); __tmux_mcp_s=$?; printf"));
        assert!(sh(false).contains("; eval 'cd /tmp; pwd'; __tmux_mcp_s=$?; printf"));
        // Quotes as the shell reads them; a line that is not printable
        // ASCII is decoded from its escaped form.
        let quoted = wrapped(r"echo 'a\b'", "abc", how("sh", true), AT, PANE);
        assert!(
            quoted.contains(r"; (eval 'echo '\''a\b'\'''); "),
            "{quoted}"
        );
        let two = wrapped("echo a\necho é", "abc", how("sh", false), AT, PANE);
        assert!(
            two.contains(r#"; eval "$(printf %b 'echo a\necho \0303\0251')"; "#),
            "{two}"
        );
        let fish = |subshell| wrapped("cd /tmp; pwd", "abc", how("fish", subshell), AT, PANE);
        assert!(fish(true).contains("; fish -c 'cd /tmp; pwd'; set __tmux_mcp_s $status; printf"));
        assert!(fish(false).contains("; eval 'cd /tmp; pwd'; set __tmux_mcp_s $status; printf"));
        let quiet = ShellTyping {
            suppress_history: true,
            ..how("bash", false)
        };
        assert_eq!(bare("ls -l", quiet), " ls -l");
        assert_eq!(bare("ls -l", how("bash", false)), "ls -l");
    }

    #[test]
    fn the_end_is_recorded_in_the_pane_option_only_when_the_script_is_there() {
        let sh = wrapped("false", "abc", how("sh", true), AT, PANE);
        let file = "\"${TMUX%,*,*}.tmux-mcp-end-3\"";
        assert!(
            sh.contains(&format!("case ${{TMUX_PANE-}} in '%3') if [ -O {file} ] && ! [ -L {file} ]; then (sh {file} abc \"$__tmux_mcp_s\" 2>/dev/null &); fi;; esac; unset __tmux_mcp_s")),
            "{sh}"
        );
        let fish = wrapped("false", "abc", how("fish", true), AT, PANE);
        let file = "(string replace -r ',[^,]*,[^,]*$' '' -- \"$TMUX\").tmux-mcp-end-3";
        assert!(
            fish.contains(&format!("if test \"$TMUX_PANE\" = '%3'; and test -O {file}; and not test -L {file}; sh {file} abc $__tmux_mcp_s 2>/dev/null &; disown 2>/dev/null; end")),
            "{fish}"
        );
        assert!(
            fish.trim_end().ends_with("; end; set -e __tmux_mcp_s"),
            "{fish}"
        );
        assert_eq!(end_script_pane("3"), Some(PANE));
        for other in ["", "03", "3x", "-3", "%3", "3 "] {
            assert_eq!(end_script_pane(other), None, "{other:?}");
        }
        let set = "set-option -ap -t '%3' @tmux_mcp_end \";$1 $2\" </dev/null >/dev/null 2>&1";
        assert_eq!(
            end_script(PANE, None),
            format!("tmux {set} || tmux {set}\nrm -f \"$0\"\n")
        );
        assert_eq!(
            end_script(PANE, Some(("/opt/t b/tmux", "/tmp/it's"))),
            format!("'/opt/t b/tmux' -S '/tmp/it'\\''s' {set} || tmux {set}\nrm -f \"$0\"\n")
        );
    }

    #[test]
    fn a_plain_command_is_execd_in_the_subshell() {
        assert_eq!(plain_program("sleep 30"), Some("sleep"));
        assert_eq!(plain_program("  make -j4 test"), Some("make"));
        for other in [
            "a=1 sleep 3",
            "sleep 3; echo",
            "echo $HOME",
            "ls | wc",
            "echo 'x'",
            "",
        ] {
            assert_eq!(plain_program(other), None, "{other}");
        }
        // dash and zsh exec it themselves; bash is told to.
        let sh = wrapped("sleep 30", "abc", how("sh", true), AT, PANE);
        assert!(
            sh.contains("'sleep 30'; (sleep 30); __tmux_mcp_s=$?"),
            "{sh}"
        );
        let bash = wrapped("sleep 30", "abc", how("bash", true), AT, PANE);
        assert!(
            bash.contains(
                "; (case $(command -v sleep) in /*) exec sleep 30;; *) sleep 30;; esac); "
            ),
            "{bash}"
        );
        let fish = wrapped("sleep 30", "abc", how("fish", true), AT, PANE);
        assert!(fish.contains("fish -c 'if functions -q sleep; or not command -q sleep; sleep 30; else; exec sleep 30; end'"), "{fish}");
        // The live shell runs it as a job of its own already.
        let live = wrapped("sleep 30", "abc", how("sh", false), AT, PANE);
        assert!(!live.contains("exec"), "{live}");
    }

    #[test]
    fn markers_never_appear_in_the_typed_text() {
        let start = b"\x1b]6973;abc;S\x07";
        let quiet = ShellTyping {
            suppress_history: true,
            ..how("bash", true)
        };
        for typed in [
            wrapped("echo hi", "abc", quiet, AT, PANE),
            wrapped("echo 'a' \\x", "abc", how("fish", true), AT, PANE),
        ] {
            assert!(!typed.contains('\x1b') && !typed.contains('\x07'));
            assert!(memchr::memmem::find(typed.as_bytes(), start).is_none());
        }
        assert!(wrapped("echo hi", "abc", quiet, AT, PANE).starts_with(' '));
        assert!(is_plumbing(
            wrapped("x", "abc", how("sh", true), AT, PANE).as_bytes()
        ));
        assert!(!is_plumbing(b"$ echo hi"));
        let fish = wrapped("echo 'a' \\x", "abc", how("fish", true), AT, PANE);
        assert!(fish.contains("fish -c 'echo \\'a\\' \\\\x'"), "{fish}");
    }
}
