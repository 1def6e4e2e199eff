//! A file's lines read a piece at a time, so `read` and `grep` reach every line of a file of any
//! size (a 100 MB log, a 2 GB dump) with bounded memory: at most `keep` bytes of one line are
//! held, the rest of a longer line is passed over. Lines end at `\n`, and a `\r` before it is not
//! part of the line, as `str::lines` splits them.

use std::io::{BufRead, BufReader, Read};

/// The bytes read at a time.
const BUFFER_BYTES: usize = 256 * 1024;

/// The lines of a stream (see the module comment).
pub(super) struct LineReader<R> {
    reader: BufReader<R>,
}

/// What [`LineReader::next_line`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineRead {
    /// A whole line.
    Whole,
    /// A line longer than asked for: only its start was kept.
    Cut,
    /// Nothing: the stream has ended.
    End,
}

impl<R: Read> LineReader<R> {
    pub(super) fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(BUFFER_BYTES, reader),
        }
    }

    /// Appends at most `keep` bytes of the next line to `line`, without its line ending.
    pub(super) fn next_line(
        &mut self,
        line: &mut Vec<u8>,
        keep: usize,
    ) -> std::io::Result<LineRead> {
        let start = line.len();
        let mut consumed_any = false;
        let mut cut = false;
        let mut ended = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if available.is_empty() {
                break;
            }
            consumed_any = true;
            let (piece, done) = match memchr::memchr(b'\n', available) {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            let room = keep.saturating_sub(line.len() - start);
            let taken = piece.min(room);
            line.extend_from_slice(&available[..taken]);
            cut |= taken < piece;
            self.reader.consume(if done { piece + 1 } else { piece });
            if done {
                ended = true;
                break;
            }
        }
        if !consumed_any {
            return Ok(LineRead::End);
        }
        if ended && !cut && line.len() > start && line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(if cut { LineRead::Cut } else { LineRead::Whole })
    }

    /// Passes over the next `count` lines; how many there were (fewer at the end).
    pub(super) fn skip_lines(&mut self, count: u64) -> std::io::Result<u64> {
        let mut skipped = 0;
        let mut nothing = Vec::new();
        while skipped < count {
            if self.next_line(&mut nothing, 0)? == LineRead::End {
                break;
            }
            skipped += 1;
        }
        Ok(skipped)
    }

    /// How many lines are left (a last line without a line ending counts).
    pub(super) fn count_rest(&mut self) -> std::io::Result<u64> {
        let mut count: u64 = 0;
        let mut open_line = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            let Some(&last) = available.last() else {
                break;
            };
            count += u64::try_from(memchr::memchr_iter(b'\n', available).count()).unwrap_or(0);
            open_line = last != b'\n';
            let length = available.len();
            self.reader.consume(length);
        }
        Ok(count + u64::from(open_line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &[u8], keep: usize) -> Vec<(String, LineRead)> {
        let mut reader = LineReader::new(text);
        let mut lines = Vec::new();
        loop {
            let mut line = Vec::new();
            let read = reader.next_line(&mut line, keep).unwrap();
            if read == LineRead::End {
                return lines;
            }
            lines.push((String::from_utf8(line).unwrap(), read));
        }
    }

    #[test]
    fn lines_are_split_as_str_lines_splits_them() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb\r\n",
            "a\n\nb",
            "\n",
            "a\rb\r",
            "x\r\n\r\n",
        ] {
            let expected: Vec<String> = text.lines().map(str::to_owned).collect();
            let read: Vec<String> = lines_of(text.as_bytes(), 100)
                .into_iter()
                .map(|(line, _)| line)
                .collect();
            assert_eq!(read, expected, "{text:?}");
            let counted = LineReader::new(text.as_bytes()).count_rest().unwrap();
            assert_eq!(counted, expected.len() as u64, "{text:?}");
        }
    }

    #[test]
    fn a_long_line_is_kept_to_its_start_and_the_next_is_whole() {
        let text = format!("{}\nnext\n", "x".repeat(1_000_000));
        let lines = lines_of(text.as_bytes(), 10);
        assert_eq!(
            lines,
            [
                ("x".repeat(10), LineRead::Cut),
                ("next".to_owned(), LineRead::Whole)
            ]
        );
        let mut reader = LineReader::new(text.as_bytes());
        assert_eq!(reader.skip_lines(5).unwrap(), 2);
    }
}
