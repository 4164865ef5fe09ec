//! Matching patterns against lines of pane output, a batch at a time.
//!
//! A flood prints millions of short lines; running a regex once per line
//! costs more than everything else on the path. So lines are gathered into
//! a [`LineBatch`] (joined by `\n`) and each pattern searches the whole batch
//! at once; a hit is then confirmed on its own line, so a pattern that could
//! span a newline (`a\sb`) never matches across lines.

use regex::bytes::{Regex, RegexBuilder};

/// Lines joined by `\n`, with where each starts.
#[derive(Default)]
pub struct LineBatch {
    buf: Vec<u8>,
    starts: Vec<usize>,
}

impl LineBatch {
    pub fn push(&mut self, line: &[u8]) {
        if !self.starts.is_empty() {
            self.buf.push(b'\n');
        }
        self.starts.push(self.buf.len());
        self.buf.extend_from_slice(line);
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.starts.clear();
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Line `i`, without its newline.
    pub fn line(&self, i: usize) -> &[u8] {
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.buf.len(), |next| next - 1);
        &self.buf[self.starts[i]..end]
    }

    /// The index of the line holding byte `pos`.
    fn line_at(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos) - 1
    }
}

/// One compiled pattern: for batches and for single lines.
struct Pattern {
    batch: Regex,
    line: Regex,
}

/// An ordered list of patterns.
pub struct Matcher {
    patterns: Vec<Pattern>,
}

impl Matcher {
    /// Compiles `patterns` (literal text unless `regex`). `Err` names the
    /// first pattern that does not compile.
    pub fn new(
        patterns: &[String],
        regex: bool,
        match_case: bool,
    ) -> Result<Matcher, regex::Error> {
        let build = |source: &str, multi_line: bool| {
            RegexBuilder::new(source)
                .case_insensitive(!match_case)
                .multi_line(multi_line)
                .size_limit(1 << 20)
                .build()
        };
        let patterns = patterns
            .iter()
            .map(|p| {
                let source = if regex { p.clone() } else { regex::escape(p) };
                Ok(Pattern {
                    batch: build(&source, true)?,
                    line: build(&source, false)?,
                })
            })
            .collect::<Result<_, regex::Error>>()?;
        Ok(Matcher { patterns })
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern (in list order) that matches `line`.
    pub fn line_hit(&self, line: &[u8]) -> Option<usize> {
        self.patterns.iter().position(|p| p.line.is_match(line))
    }

    /// Does pattern `index` match `line`?
    pub fn matches(&self, index: usize, line: &[u8]) -> bool {
        self.patterns
            .get(index)
            .is_some_and(|p| p.line.is_match(line))
    }

    /// The earliest line of `batch` that some pattern matches, and the first
    /// pattern (in list order) matching that line.
    pub fn first(&self, batch: &LineBatch) -> Option<(usize, usize)> {
        self.first_from(batch, 0)
    }

    /// Like [`first`](Self::first), looking only at lines `start..`.
    pub fn first_from(&self, batch: &LineBatch, start: usize) -> Option<(usize, usize)> {
        let from = *batch.starts.get(start)?;
        let line = self
            .patterns
            .iter()
            .filter_map(|p| earliest(p, batch, from))
            .min()?;
        Some((
            line,
            self.line_hit(batch.line(line))
                .expect("confirmed on its line"),
        ))
    }
}

/// The first line of `batch`, from byte `from` on, that `pattern` matches
/// on its own.
fn earliest(pattern: &Pattern, batch: &LineBatch, mut from: usize) -> Option<usize> {
    while from <= batch.buf.len() && !batch.is_empty() {
        let found = pattern.batch.find_at(&batch.buf, from)?;
        let line = batch.line_at(found.start());
        if pattern.line.is_match(batch.line(line)) {
            return Some(line);
        }
        // The batch match crossed a newline; go on from the next line.
        from = match batch.starts.get(line + 1) {
            Some(&next) => next,
            None => return None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(lines: &[&str]) -> LineBatch {
        let mut b = LineBatch::default();
        for l in lines {
            b.push(l.as_bytes());
        }
        b
    }

    #[test]
    fn finds_the_earliest_line_and_the_first_pattern() {
        let m = Matcher::new(&["beta".into(), "a".into()], false, false).unwrap();
        let b = batch(&["xxx", "ALPHA", "beta"]);
        assert_eq!(m.first(&b), Some((1, 1)));
        assert_eq!(b.line(2), b"beta");
        assert_eq!(m.first(&batch(&["none"])), None);
        assert_eq!(m.first_from(&b, 2), Some((2, 0)));
        assert_eq!(m.first_from(&b, 3), None);
    }

    #[test]
    fn never_matches_across_lines() {
        let m = Matcher::new(&[r"a\sb".into()], true, true).unwrap();
        assert_eq!(m.first(&batch(&["xa", "b", "a b"])), Some((2, 0)));
        assert_eq!(m.first(&batch(&["xa", "b"])), None);
        let anchored = Matcher::new(&["^ok$".into()], true, true).unwrap();
        assert_eq!(anchored.first(&batch(&["not ok", "ok"])), Some((1, 0)));
    }

    #[test]
    fn empty_lines_and_empty_batches() {
        let m = Matcher::new(&["^$".into()], true, true).unwrap();
        assert_eq!(m.first(&batch(&["a", "", "b"])), Some((1, 0)));
        assert_eq!(m.first(&LineBatch::default()), None);
    }
}
