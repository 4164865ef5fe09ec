//! Typed tmux command lines and the one quoting function.
//!
//! A [`Command`] is a tmux command name plus arguments of two kinds: words
//! this crate wrote itself (flags, ids like `%3`, format strings) and
//! [`Command::arg`] data that came from a user. Data only ever reaches tmux
//! through [`quote`] (control-mode lines) or [`argv_escape`] (a one-shot
//! `tmux` process), both tested on every byte value.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStringExt;

/// One tmux command, built from typed parts.
#[derive(Clone, PartialEq, Eq)]
pub struct Command {
    name: &'static str,
    args: Vec<Arg>,
}

#[derive(Clone, PartialEq, Eq)]
enum Arg {
    /// A flag this crate wrote, sent as is (checked to be `[-A-Za-z0-9]`).
    Flag(&'static str),
    /// Anything else, quoted on the way out.
    Data(Vec<u8>),
}

/// Why a command cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsendableArg;

impl fmt::Display for UnsendableArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text contains a NUL byte, which tmux commands cannot carry")
    }
}

impl std::error::Error for UnsendableArg {}

impl Command {
    pub fn new(name: &'static str) -> Self {
        Command {
            name,
            args: Vec::new(),
        }
    }

    /// A word written by this crate: a flag such as `-d`. Flags come before
    /// every positional argument (after `--` tmux reads none).
    pub fn flag(mut self, flag: &'static str) -> Self {
        debug_assert!(
            flag.bytes().all(|b| b == b'-' || b.is_ascii_alphanumeric()),
            "{flag}"
        );
        debug_assert!(
            flag == "--" || !self.has_separator(),
            "{} {flag}: a flag after the positional arguments",
            self.name
        );
        if flag != "--" || !self.has_separator() {
            self.args.push(Arg::Flag(flag));
        }
        self
    }

    /// `-t <target>`: a typed id, or a target built from ids (`$1:2`).
    /// Quoted like data: an unquoted `$1` would be expanded as a variable.
    pub fn target(self, target: impl fmt::Display) -> Self {
        self.opt("-t", target.to_string())
    }

    /// An option flag followed by its value, e.g. `-F <format>`. tmux takes
    /// the word after such a flag as its value whatever it starts with.
    pub fn opt(mut self, flag: &'static str, value: impl AsRef<[u8]>) -> Self {
        self = self.flag(flag);
        self.args.push(Arg::Data(value.as_ref().to_vec()));
        self
    }

    /// A positional data argument. Quoted on the way out, so any bytes are
    /// safe, and always after `--` (added before the first one), so a value
    /// such as `-u` or `-k` is never read as a flag.
    pub fn arg(mut self, value: impl AsRef<[u8]>) -> Self {
        self = self.flag("--");
        self.args.push(Arg::Data(value.as_ref().to_vec()));
        self
    }

    fn has_separator(&self) -> bool {
        self.args.contains(&Arg::Flag("--"))
    }

    /// Adds `arg` when `value` is present.
    pub fn opt_if<T: AsRef<[u8]>>(self, flag: &'static str, value: Option<T>) -> Self {
        match value {
            Some(v) => self.opt(flag, v),
            None => self,
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The pane a `-t` names, when it is a pane id (`%3`).
    pub fn pane_target(&self) -> Option<crate::ids::PaneId> {
        let at = self.args.iter().position(|a| *a == Arg::Flag("-t"))?;
        match self.args.get(at + 1)? {
            Arg::Data(value) => crate::ids::PaneId::parse(value),
            Arg::Flag(_) => None,
        }
    }

    /// Whether `flag` was given (as a word of its own).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.args
            .iter()
            .any(|a| matches!(a, Arg::Flag(f) if *f == flag))
    }

    /// Whether this command is one of `names` (a class of commands).
    pub fn is_one_of(&self, names: &[&str]) -> bool {
        names.contains(&self.name)
    }

    /// The control-mode line (without the trailing newline).
    pub fn to_line(&self) -> Result<Vec<u8>, UnsendableArg> {
        let mut line = self.name.as_bytes().to_vec();
        for arg in &self.args {
            line.push(b' ');
            match arg {
                Arg::Flag(flag) => line.extend_from_slice(flag.as_bytes()),
                Arg::Data(data) => quote_into(data, &mut line)?,
            }
        }
        Ok(line)
    }

    /// The argv for a one-shot `tmux` process (after the global flags).
    pub fn to_argv(&self) -> Result<Vec<OsString>, UnsendableArg> {
        let mut argv = vec![OsString::from(self.name)];
        for arg in &self.args {
            argv.push(match arg {
                Arg::Flag(flag) => OsString::from(flag),
                Arg::Data(data) => OsString::from_vec(argv_escape(data)?),
            });
        }
        Ok(argv)
    }
}

/// The argv of `commands` as one list for a one-shot `tmux` process: tmux
/// runs them in a row, no other client's command in between, and drops
/// the rest of the list at the first that fails. Never sent to a control
/// client, which answers each command of a list with a reply of its own.
pub fn list_argv(commands: &[Command]) -> Result<Vec<OsString>, UnsendableArg> {
    let mut argv = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        if i > 0 {
            argv.push(OsString::from(";"));
        }
        argv.extend(command.to_argv()?);
    }
    Ok(argv)
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_line() {
            Ok(line) => write!(f, "{}", String::from_utf8_lossy(&line)),
            Err(_) => write!(f, "{} <unsendable>", self.name),
        }
    }
}

/// Quotes one argument as a single word of tmux's command grammar.
///
/// Bytes that the grammar treats specially outside quotes never appear
/// outside quotes: everything printable goes inside single quotes (where
/// tmux processes no escapes), and `'`, control bytes, 0x7F and 0xFF (which
/// tmux's signed-char lexer reads as end of input) are written as `\'` or
/// `\ooo` between quoted runs. NUL cannot be carried at all.
pub fn quote(arg: &[u8]) -> Result<Vec<u8>, UnsendableArg> {
    let mut out = Vec::with_capacity(arg.len() + 2);
    quote_into(arg, &mut out)?;
    Ok(out)
}

fn quote_into(arg: &[u8], out: &mut Vec<u8>) -> Result<(), UnsendableArg> {
    if arg.is_empty() {
        out.extend_from_slice(b"''");
        return Ok(());
    }
    let mut open = false;
    for &b in arg {
        let escaped = b == b'\'' || b < 0x20 || b == 0x7f || b == 0xff;
        if b == 0 {
            return Err(UnsendableArg);
        }
        if escaped {
            if open {
                out.push(b'\'');
                open = false;
            }
            if b == b'\'' {
                out.extend_from_slice(b"\\'");
            } else {
                out.extend_from_slice(&[
                    b'\\',
                    b'0' + (b >> 6),
                    b'0' + ((b >> 3) & 7),
                    b'0' + (b & 7),
                ]);
            }
        } else {
            if !open {
                out.push(b'\'');
                open = true;
            }
            out.push(b);
        }
    }
    if open {
        out.push(b'\'');
    }
    Ok(())
}

/// Escapes one argument for a `tmux` argv. tmux re-splits argv on a word
/// that ends in `;` (the command separator) unless it ends in `\;`; nothing
/// else in an argv word is special.
pub fn argv_escape(arg: &[u8]) -> Result<Vec<u8>, UnsendableArg> {
    if arg.contains(&0) {
        return Err(UnsendableArg);
    }
    let mut out = arg.to_vec();
    if out.last() == Some(&b';') {
        out.insert(out.len() - 1, b'\\');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_specials_inside_quotes() {
        assert_eq!(quote(b"").unwrap(), b"''");
        assert_eq!(quote(b"a b;#{x}").unwrap(), b"'a b;#{x}'");
        assert_eq!(quote(b"it's").unwrap(), b"'it'\\''s'");
        assert_eq!(quote(b"\n\xff").unwrap(), b"\\012\\377");
        assert_eq!(quote(b"x\0"), Err(UnsendableArg));
    }

    #[test]
    fn a_list_is_separated_by_lone_semicolons_only() {
        let first = Command::new("save-buffer").opt("-b", "b;").arg("/dev/null");
        let second = Command::new("delete-buffer").opt("-b", "b;");
        let argv = list_argv(&[first, second]).unwrap();
        let words: Vec<_> = argv.iter().map(|w| w.to_str().unwrap()).collect();
        assert_eq!(
            words,
            [
                "save-buffer",
                "-b",
                "b\\;",
                "--",
                "/dev/null",
                ";",
                "delete-buffer",
                "-b",
                "b\\;"
            ]
        );
    }

    #[test]
    fn argv_escape_protects_trailing_semicolon() {
        assert_eq!(argv_escape(b"a;").unwrap(), b"a\\;");
        assert_eq!(argv_escape(b"a\\;").unwrap(), b"a\\\\;");
        assert_eq!(argv_escape(b";a").unwrap(), b";a");
    }

    #[test]
    fn positional_data_always_follows_the_separator() {
        let cmd = Command::new("set-environment")
            .flag("-g")
            .arg("-u")
            .arg("-k");
        assert_eq!(
            cmd.to_line().unwrap(),
            b"set-environment -g -- '-u' '-k'".to_vec()
        );
        let cmd = Command::new("rename-window")
            .target("@1")
            .flag("--")
            .arg("-t");
        assert_eq!(
            cmd.to_line().unwrap(),
            b"rename-window -t '@1' -- '-t'".to_vec()
        );
        // An option's value is not positional: no separator.
        let cmd = Command::new("list-panes").opt("-F", "-g");
        assert_eq!(cmd.to_line().unwrap(), b"list-panes -F '-g'".to_vec());
        assert_eq!(
            cmd.to_argv().unwrap(),
            ["list-panes", "-F", "-g"].map(OsString::from).to_vec()
        );
    }

    #[test]
    fn command_line_shape() {
        let cmd = Command::new("send-keys")
            .target("%3")
            .flag("-l")
            .flag("--")
            .arg("-x y");
        assert_eq!(
            cmd.to_line().unwrap(),
            b"send-keys -t '%3' -l -- '-x y'".to_vec()
        );
    }
}
