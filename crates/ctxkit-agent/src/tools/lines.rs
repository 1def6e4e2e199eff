//! A file's lines read a piece at a time, so `read` and `grep` reach every line of a file of any
//! size (a 100 MB log, a 2 GB dump) with bounded memory: at most `keep` bytes of one line are
//! held, the rest of a longer line is passed over. Lines end at `\n`, and a `\r` before it is not
//! part of the line, as `str::lines` splits them.

use std::io::{BufRead, BufReader, Read};

use tokio_util::sync::CancellationToken;

/// The bytes read at a time.
const BUFFER_BYTES: usize = 256 * 1024;

/// How long a line is before a NUL in it ends the stream
/// ([`LineReader::ending_at_nul_in_long_lines`]).
const LONG_LINE_BYTES: usize = 1024 * 1024;

/// The bytes looked at for a NUL, which makes a file binary to `grep`.
const BINARY_PROBE_BYTES: usize = 8192;

/// The text of the error a reader stopped by its call's cancellation gives.
const STOPPED: &str = "the call was cancelled";

/// The lines of a stream (see the module comment).
pub(super) struct LineReader<R> {
    reader: BufReader<R>,
    /// Checked at each piece read: a line of a 100 GB file without a line ending, or the count of
    /// its lines, went on for a minute after the user pressed Esc (QA 2026-12-07).
    stop: Option<CancellationToken>,
    /// Whether a NUL in the part of a long line passed over ends the stream ([`LineRead::Binary`]).
    nul_ends_long_line: bool,
    /// Whether it ended so: every later line read is [`LineRead::End`], and nothing is counted.
    binary_tail: bool,
}

/// Whether `error` is a reader's stop by its call's cancellation.
pub(super) fn is_stopped(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::Other && error.to_string() == STOPPED
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
    /// A line longer than asked for whose part passed over holds a NUL, with a reader
    /// [`LineReader::ending_at_nul_in_long_lines`]: the rest of the stream is binary (a sparse
    /// file's hole after a text head), and is not read.
    Binary,
}

impl<R: Read> LineReader<R> {
    pub(super) fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(BUFFER_BYTES, reader),
            stop: None,
            nul_ends_long_line: false,
            binary_tail: false,
        }
    }

    /// The reader, ending at a NUL past the first [`LONG_LINE_BYTES`] of a line, in the part of it
    /// passed over (`grep` and `read`: a text head and a 40 GB hole were read to the end, 39 s,
    /// QA 2026-12-07); a stray NUL in an ordinary line is read as it always was.
    pub(super) fn ending_at_nul_in_long_lines(mut self) -> Self {
        self.nul_ends_long_line = true;
        self
    }

    /// Whether the stream ended at a NUL in a long line ([`Self::ending_at_nul_in_long_lines`]).
    pub(super) fn ended_binary(&self) -> bool {
        self.binary_tail
    }

    /// The reader, stopping with an error ([`is_stopped`]) once `cancel` is cancelled.
    pub(super) fn stopping_on(mut self, cancel: &CancellationToken) -> Self {
        self.stop = Some(cancel.clone());
        self
    }

    /// The next piece of the stream (empty at its end), unless the call was cancelled.
    fn fill(&mut self) -> std::io::Result<&[u8]> {
        if self
            .stop
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            return Err(std::io::Error::other(STOPPED));
        }
        loop {
            match self.reader.fill_buf() {
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
                Ok(_) => break,
            }
        }
        self.reader.fill_buf()
    }

    /// Whether the stream's first [`BINARY_PROBE_BYTES`] hold a NUL, looked at before any line is
    /// read: a sparse disk image is one line of zeros as long as the file.
    pub(super) fn starts_binary(&mut self) -> std::io::Result<bool> {
        let available = self.fill()?;
        let probe = &available[..available.len().min(BINARY_PROBE_BYTES)];
        Ok(probe.contains(&0))
    }

    /// Appends at most `keep` bytes of the next line to `line`, without its line ending.
    pub(super) fn next_line(
        &mut self,
        line: &mut Vec<u8>,
        keep: usize,
    ) -> std::io::Result<LineRead> {
        if self.binary_tail {
            return Ok(LineRead::End);
        }
        let start = line.len();
        let mut consumed_any = false;
        let mut cut = false;
        let mut ended = false;
        let nul_ends_line = self.nul_ends_long_line;
        // The line's bytes read so far: a NUL is judged only past its first [`LONG_LINE_BYTES`],
        // so a stray NUL in an ordinary line is read as it always was.
        let mut line_bytes: usize = 0;
        loop {
            let available = self.fill()?;
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
            if nul_ends_line
                && line_bytes >= LONG_LINE_BYTES
                && available[taken..piece].contains(&0)
            {
                self.reader.consume(piece);
                self.binary_tail = true;
                return Ok(LineRead::Binary);
            }
            cut |= taken < piece;
            line_bytes = line_bytes.saturating_add(piece);
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

    /// How many lines are left (a last line without a line ending counts), counted in at most
    /// `budget` bytes: the second value is `false` when the stream went on past them (at disk
    /// speed a 100 GB log took half a minute to count).
    pub(super) fn count_rest(&mut self, budget: u64) -> std::io::Result<(u64, bool)> {
        if self.binary_tail {
            return Ok((0, true));
        }
        let mut count: u64 = 0;
        let mut open_line = false;
        let mut counted: u64 = 0;
        // The bytes of the line still open, for the NUL rule of `ending_at_nul_in_long_lines`.
        let mut open_bytes: usize = 0;
        loop {
            if counted >= budget {
                let more = !self.fill()?.is_empty();
                return Ok((count + u64::from(open_line && !more), !more));
            }
            let nul_ends_line = self.nul_ends_long_line;
            let available = self.fill()?;
            let Some(&last) = available.last() else {
                break;
            };
            count += u64::try_from(memchr::memchr_iter(b'\n', available).count()).unwrap_or(0);
            open_line = last != b'\n';
            let length = available.len();
            open_bytes = match memchr::memrchr(b'\n', available) {
                Some(at) => length - at - 1,
                None => open_bytes.saturating_add(length),
            };
            let binary = nul_ends_line && open_bytes >= LONG_LINE_BYTES && available.contains(&0);
            self.reader.consume(length);
            if binary {
                self.binary_tail = true;
                return Ok((count, true));
            }
            counted = counted.saturating_add(u64::try_from(length).unwrap_or(u64::MAX));
        }
        Ok((count + u64::from(open_line), true))
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
            let counted = LineReader::new(text.as_bytes())
                .count_rest(u64::MAX)
                .unwrap();
            assert_eq!(counted, (expected.len() as u64, true), "{text:?}");
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

    /// QA 2026-12-07: the count of a 100 GB log's lines, and a line of a sparse image without a
    /// line ending, went on for a minute after Esc. The count stops at its budget, saying so, and
    /// a cancelled call stops the reader.
    #[test]
    fn the_count_stops_at_its_budget_and_a_cancelled_call_stops_the_reader() {
        let text = "line\n".repeat(200_000);
        let mut reader = LineReader::new(text.as_bytes());
        let (counted, whole) = reader.count_rest(300_000).unwrap();
        assert!(!whole);
        assert!((60_000..200_000).contains(&counted), "{counted}");
        let cancel = CancellationToken::new();
        let mut reader = LineReader::new(std::io::repeat(b'x')).stopping_on(&cancel);
        assert!(!reader.starts_binary().unwrap());
        cancel.cancel();
        let error = reader.next_line(&mut Vec::new(), 10).unwrap_err();
        assert!(is_stopped(&error), "{error}");
        let mut zeros = LineReader::new(std::io::repeat(0));
        assert!(zeros.starts_binary().unwrap());
    }
}
