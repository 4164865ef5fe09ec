//! tmux formats: asking for fields (`-F`, `display-message -p`) and
//! decoding what comes back.
//!
//! Each record is its fields joined by U+241E and ended by U+241F. Paths,
//! commands and titles can hold tabs and even newlines, so neither makes a
//! safe separator; these two code points are printed raw by every tmux
//! version (clients run with `-u`) and never appear in ids or numbers.
//!
//! Free text is not ours, though: any program can set its pane's title (an
//! OSC 2 sequence) to a string holding the separators, which would forge
//! whole records (a pane id pointing somewhere else). So every free-text
//! field is asked for through tmux's `s/…/…/` modifier, which replaces the
//! two separators with U+FFFD before the text reaches us.
//!
//! A [`Schema`] is a record type's one field list: the format asked for
//! and the parse of the reply both come from it, so they cannot drift.

const FIELD: &str = "\u{241E}";
const RECORD: &str = "\u{241F}";

/// Fields whose text comes from users or programs, not from tmux's counters.
const FREE_TEXT: &[&str] = &[
    "session_name",
    "window_name",
    "pane_title",
    "pane_current_command",
    "pane_current_path",
    "pane_start_command",
    "pane_mode",
    "buffer_name",
];

/// The tmux format for a record of `fields`.
pub fn template(fields: &[&str]) -> String {
    let mut out = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(FIELD);
        }
        // A user option (`@name`) holds whatever anyone set.
        if FREE_TEXT.contains(field) || field.starts_with('@') {
            out.push_str(&format!("#{{s/{FIELD}|{RECORD}/\u{FFFD}/:{field}}}"));
        } else {
            out.push_str("#{");
            out.push_str(field);
            out.push('}');
        }
    }
    out.push_str(RECORD);
    out
}

/// Splits a reply into records of exactly `n` fields; malformed ones are skipped.
pub fn records(lines: &[Vec<u8>], n: usize) -> Vec<Vec<String>> {
    let text = String::from_utf8_lossy(&lines.join(&b'\n')).into_owned();
    text.split(RECORD)
        .map(|r| r.strip_prefix('\n').unwrap_or(r))
        .filter(|r| !r.is_empty())
        .filter_map(|r| {
            let fields: Vec<String> = r.split(FIELD).map(str::to_owned).collect();
            (fields.len() == n).then_some(fields)
        })
        .collect()
}

/// One field of a record type: the format variable, and how its text is
/// stored in the record.
pub type Field<T> = (&'static str, fn(&mut T, &str));

/// A record type's field list, in the order they are asked for.
pub struct Schema<T: 'static>(pub &'static [Field<T>]);

impl<T: Default> Schema<T> {
    /// The format variables, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|(name, _)| *name).collect()
    }

    /// The tmux format asking for every field.
    pub fn template(&self) -> String {
        template(&self.names())
    }

    /// Every well-formed record of a reply to [`template`](Self::template).
    pub fn parse(&self, lines: &[Vec<u8>]) -> Vec<T> {
        self.parse_where(lines, |_| true)
    }

    /// The well-formed records of a reply whose fields' text `keep` accepts.
    pub fn parse_where(&self, lines: &[Vec<u8>], keep: impl Fn(&[String]) -> bool) -> Vec<T> {
        records(lines, self.0.len())
            .iter()
            .filter(|fields| keep(fields))
            .map(|fields| {
                let mut record = T::default();
                for ((_, store), text) in self.0.iter().zip(fields) {
                    store(&mut record, text);
                }
                record
            })
            .collect()
    }
}

/// Empty text is "no value".
pub fn opt(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

pub fn int(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// tmux's `1`/`0` flags.
pub fn flag(s: &str) -> Option<bool> {
    match s {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// Undoes the escaping tmux before 3.4 applies to `show-buffer` output on
/// a control client (`vis(3)` with `VIS_OCTAL | VIS_CSTYLE | VIS_TAB`):
/// `\\`, C escapes, three-digit octal, and `\X` for `X` itself.
pub fn unvis(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b != b'\\' || i + 1 >= text.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = text[i + 1];
        let octal = text
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
            i += 4;
            continue;
        }
        let decoded = match next {
            b'\\' => b'\\',
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'a' => 0x07,
            b'b' => 0x08,
            b'v' => 0x0b,
            b'f' => 0x0c,
            b's' => b' ',
            // Any other escaped character stands for itself (tmux 3.3a
            // writes `$` as `\$`); a lone `\` is always written `\\`.
            other => other,
        };
        out.push(decoded);
        i += 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_newlines_and_tabs_in_free_text() {
        let reply = vec![
            "%1\u{241E}a\tb\u{241F}".as_bytes().to_vec(),
            "%2\u{241E}multi".as_bytes().to_vec(),
            "line\u{241F}".as_bytes().to_vec(),
            "junk".as_bytes().to_vec(),
        ];
        let recs = records(&reply, 2);
        assert_eq!(
            recs,
            vec![
                vec!["%1".to_string(), "a\tb".into()],
                vec!["%2".into(), "multi\nline".into()]
            ]
        );
        assert_eq!(template(&["a", "b"]), "#{a}\u{241E}#{b}\u{241F}");
        assert_eq!(
            template(&["pane_title"]),
            "#{s/\u{241E}|\u{241F}/\u{FFFD}/:pane_title}\u{241F}"
        );
    }

    #[derive(Default, Debug, PartialEq)]
    struct Probe {
        id: String,
        size: Option<i64>,
    }

    const PROBE: Schema<Probe> = Schema(&[
        ("pane_id", |p, v| p.id = v.into()),
        ("pane_width", |p, v| p.size = int(v)),
    ]);

    #[test]
    fn a_schema_asks_for_and_parses_the_same_fields() {
        assert_eq!(PROBE.template(), "#{pane_id}\u{241E}#{pane_width}\u{241F}");
        let reply = vec!["%1\u{241E}80\u{241F}%2\u{241E}\u{241F}%3\u{241F}".into()];
        assert_eq!(
            PROBE.parse(&reply),
            [
                Probe {
                    id: "%1".into(),
                    size: Some(80)
                },
                Probe {
                    id: "%2".into(),
                    size: None
                }
            ]
        );
    }

    #[test]
    fn show_buffer_escapes_are_undone() {
        assert_eq!(
            unvis(b"a\\\\b\\tt\\001\\033\\177 \xc3\xa9\nx\\r\\v\\f\\a\\b\\$\\`"),
            b"a\\b\tt\x01\x1b\x7f \xc3\xa9\nx\r\x0b\x0c\x07\x08$`".to_vec()
        );
        assert_eq!(unvis(b"end\\"), b"end\\".to_vec());
    }
}
