//! Framing: input bytes to lines, each at most a bound long.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One input line, or the news that one was too long.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameLine {
    /// A line without its `\n`. A last line without `\n` before EOF counts.
    Complete(Vec<u8>),
    /// A line longer than the bound. Reported as soon as the bound is
    /// crossed; the rest of it, up to its newline, is skipped.
    TooLong,
}

/// Splits bytes into lines with a bound on their length.
///
/// The partial line lives in `self`, not in a future, so `next_line` is
/// cancel-safe (it can sit in a `select!`): the only await is `fill_buf`,
/// and bytes are consumed only after they were copied.
pub struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(input: R, max_line: usize) -> Self {
        LineReader::with_reader(BufReader::new(input), max_line)
    }

    pub fn with_reader(reader: BufReader<R>, max_line: usize) -> Self {
        LineReader {
            reader,
            line: Vec::new(),
            max_line,
            discarding: false,
        }
    }

    /// The next line; `None` at EOF.
    pub async fn next_line(&mut self) -> std::io::Result<Option<FrameLine>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                self.discarding = false;
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(FrameLine::Complete(std::mem::take(&mut self.line))));
            }
            let (chunk, newline) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            let used = chunk.len() + usize::from(newline);
            if self.discarding {
                self.discarding = !newline;
                self.reader.consume(used);
                continue;
            }
            if self.line.len() + chunk.len() > self.max_line {
                self.line.clear();
                self.discarding = !newline;
                self.reader.consume(used);
                return Ok(Some(FrameLine::TooLong));
            }
            self.line.extend_from_slice(chunk);
            self.reader.consume(used);
            if newline {
                return Ok(Some(FrameLine::Complete(std::mem::take(&mut self.line))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max_line: usize, capacity: usize) -> Vec<FrameLine> {
        let mut reader =
            LineReader::with_reader(BufReader::with_capacity(capacity, input), max_line);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    fn complete(s: &str) -> FrameLine {
        FrameLine::Complete(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn lines_are_the_same_at_every_buffer_size() {
        let input = b"ab\n\ncdef\nlonger-than-eight\nxyz\n\xff\xfe\nlast";
        let expected = vec![
            complete("ab"),
            complete(""),
            complete("cdef"),
            FrameLine::TooLong,
            complete("xyz"),
            FrameLine::Complete(b"\xff\xfe".to_vec()),
            complete("last"),
        ];
        for capacity in 1..=input.len() + 1 {
            assert_eq!(
                lines(input, 8, capacity).await,
                expected,
                "capacity {capacity}"
            );
        }
    }

    #[tokio::test]
    async fn bound_is_inclusive_and_overlong_tail_is_skipped() {
        assert_eq!(
            lines(b"12345678\n123456789\nok\n", 8, 3).await,
            vec![complete("12345678"), FrameLine::TooLong, complete("ok")]
        );
        // An over-long last line without newline is reported once.
        assert_eq!(
            lines(b"ok\n123456789012345", 8, 4).await,
            vec![complete("ok"), FrameLine::TooLong]
        );
    }
}
