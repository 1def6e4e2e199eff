//! The lines of a session file as read: the file is read into one buffer and every line is a slice of
//! it, so loading copies nothing per line and cloning an entry only bumps a reference count.

use std::fmt;
use std::io::Read;
use std::ops::Range;
use std::sync::Arc;

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::StoredEntry;

/// The text of one line, without its newline.
#[derive(Clone)]
pub(crate) enum LineText {
    /// A slice of the text of the file it was read from.
    Shared {
        file: Arc<String>,
        range: Range<usize>,
    },
    /// A line made or rewritten in memory (appends, migrations).
    Owned(Box<str>),
}

impl LineText {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            // Ranges are cut at newlines, which are always character boundaries.
            Self::Shared { file, range } => file.get(range.clone()).unwrap_or_default(),
            Self::Owned(text) => text,
        }
    }
}

impl From<String> for LineText {
    fn from(text: String) -> Self {
        Self::Owned(text.into_boxed_str())
    }
}

impl From<&str> for LineText {
    fn from(text: &str) -> Self {
        Self::Owned(text.into())
    }
}

impl fmt::Debug for LineText {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), formatter)
    }
}

/// One non-blank line of a file.
#[derive(Debug)]
pub(crate) struct RawLine {
    /// 1-based.
    pub(crate) number: usize,
    pub(crate) text: LineText,
}

/// One non-blank line of a loaded file: its text, or (a `message` line of a large file) its entry,
/// indexed already, whose text stays in the file.
#[derive(Debug)]
// Not boxed: lines live in one chunk's group at a time, and a box per entry costs more than the
// space of the text lines (a few per chunk).
#[allow(clippy::large_enum_variant)]
pub(crate) enum LoadedBody {
    Text(LineText),
    Entry(StoredEntry),
}

/// A numbered line of a loaded file.
#[derive(Debug)]
pub(crate) struct LoadedLine {
    /// 1-based.
    pub(crate) number: usize,
    pub(crate) body: LoadedBody,
}

impl LoadedLine {
    /// Line `number` (an entry learns its number here).
    pub(crate) fn new(number: usize, mut body: LoadedBody) -> Self {
        if let LoadedBody::Entry(entry) = &mut body {
            entry.set_line(number);
        }
        Self { number, body }
    }

    /// Moves the line `by` lines further down the file (its entry too).
    pub(crate) fn renumber(&mut self, by: usize) {
        self.number += by;
        if let LoadedBody::Entry(entry) = &mut self.body {
            entry.set_line(self.number);
        }
    }
}

/// The lines of a file.
#[derive(Debug)]
pub(crate) struct ReadLines {
    /// The non-blank lines.
    pub(crate) lines: Vec<RawLine>,
    /// Whether the data ended with a newline (true for no data).
    pub(crate) ends_with_newline: bool,
    /// How many bytes were read.
    pub(crate) bytes: u64,
}

/// Reads all of `reader` (`size_hint` bytes expected) and splits it into lines, skipping blank ones.
/// Invalid UTF-8 is replaced (as Node's `utf8` decoding does) and reported per line.
pub(crate) fn read_lines(
    mut reader: impl Read,
    size_hint: u64,
    diagnostics: &mut Vec<Diagnostic>,
) -> std::io::Result<ReadLines> {
    // One byte more than expected, so a file that did not grow is read without reallocating. A
    // `File` reads straight into the spare capacity (an adapter without `read_buf` would have it
    // zeroed first: a fifth of the time of opening a large session).
    let capacity = usize::try_from(size_hint).unwrap_or(0).saturating_add(1);
    let mut bytes = Vec::with_capacity(capacity);
    reader.read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    let (lines, ends_with_newline) = split_lines(bytes, diagnostics);
    Ok(ReadLines {
        lines,
        ends_with_newline,
        bytes: read,
    })
}

/// Drops a UTF-8 byte-order mark before the first line, as editors on Windows write it (Pi 0.73.1
/// read such files; 0.87.1 and today's 1.6.0 refuse them, ctxkit reads them: divergence 14 of
/// `docs/pi-compatibility.md`).
pub(crate) fn strip_byte_order_mark(lines: &mut [RawLine]) {
    if let Some(first) = lines.first_mut().filter(|line| line.number == 1)
        && let Some(rest) = first.text.as_str().strip_prefix('\u{FEFF}')
    {
        first.text = LineText::from(rest);
    }
}

/// Splits `bytes` into lines (see [`read_lines`]); returns whether they ended with a newline.
pub(crate) fn split_lines(
    bytes: Vec<u8>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<RawLine>, bool) {
    let ends_with_newline = bytes.last().is_none_or(|&last| last == b'\n');
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let bytes = error.into_bytes();
            for (index, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
                if std::str::from_utf8(line).is_err() {
                    diagnostics.push(Diagnostic {
                        line: Some(index + 1),
                        kind: DiagnosticKind::InvalidUtf8,
                    });
                }
            }
            // A newline is never part of an invalid sequence, so lines keep their numbers.
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let file = Arc::new(text);
    let mut lines = Vec::new();
    let mut start = 0;
    let newlines = memchr::memchr_iter(b'\n', file.as_bytes());
    // The text after the last newline is a line too when it is not empty.
    let last = (!file.is_empty() && !file.ends_with('\n')).then_some(file.len());
    for (index, end) in newlines.chain(last).enumerate() {
        let range = start..end;
        start = end + 1;
        if file
            .get(range.clone())
            .is_none_or(|line| line.trim().is_empty())
        {
            continue;
        }
        lines.push(RawLine {
            number: index + 1,
            text: LineText::Shared {
                file: Arc::clone(&file),
                range,
            },
        });
    }
    (lines, ends_with_newline)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(bytes: &[u8]) -> (Vec<(usize, String)>, bool, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let (lines, ends) = split_lines(bytes.to_vec(), &mut diagnostics);
        let lines = lines
            .into_iter()
            .map(|line| (line.number, line.text.as_str().to_owned()))
            .collect();
        (lines, ends, diagnostics)
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_the_first_line_only() {
        let (mut lines, _) = split_lines(
            "\u{FEFF}{}\n\u{FEFF}x\n".as_bytes().to_vec(),
            &mut Vec::new(),
        );
        strip_byte_order_mark(&mut lines);
        assert_eq!(lines[0].text.as_str(), "{}");
        assert_eq!(lines[1].text.as_str(), "\u{FEFF}x");
    }

    #[test]
    fn numbers_lines_and_skips_blank_ones() {
        let (lines, ends, diagnostics) = split(b"a\r\n\n  \nb\nc");
        assert_eq!(
            lines,
            vec![
                (1, "a\r".to_owned()),
                (4, "b".to_owned()),
                (5, "c".to_owned())
            ]
        );
        assert!(!ends);
        assert!(diagnostics.is_empty());
        assert!(split(b"").1);
        assert_eq!(split(b"x\n").0, vec![(1, "x".to_owned())]);
        assert!(split(b"x\n").1);
        assert!(split(b"\n\n").0.is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported_by_line() {
        let (lines, _, diagnostics) = split(b"ok\nbad \xff\xfe\n\xe4\xb8\nfine");
        assert_eq!(
            lines,
            vec![
                (1, "ok".to_owned()),
                (2, "bad \u{fffd}\u{fffd}".to_owned()),
                (3, "\u{fffd}".to_owned()),
                (4, "fine".to_owned()),
            ]
        );
        let reported: Vec<_> = diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(reported, vec![Some(2), Some(3)]);
    }

    #[test]
    fn clones_share_the_file_and_debug_shows_only_the_line() {
        let (lines, _) = split_lines(b"first\nsecond\n".to_vec(), &mut Vec::new());
        let copy = lines[1].text.clone();
        assert_eq!(copy.as_str(), "second");
        assert_eq!(format!("{copy:?}"), "\"second\"");
        assert_eq!(LineText::from("x").as_str(), "x");
    }
}
