//! Reading a large session file on all cores: the file is cut into chunks at character boundaries,
//! each chunk is read, checked as UTF-8 and split into lines by its own task, and the lines that cross
//! a chunk's edge are joined afterwards. Most of the cost of reading a large file is the kernel filling
//! fresh memory; spread over the cores it no longer bounds the time to open.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use rayon::prelude::*;

use crate::line::{LineText, RawLine, ReadLines};

/// Files below this size are read whole, on one thread.
pub(crate) const MIN_CHUNKED_BYTES: u64 = 2 * CHUNK_BYTES as u64;

/// The size of one chunk.
const CHUNK_BYTES: usize = 4 << 20;

/// Page size the kernel copies fastest to (destination aligned as the source).
const PAGE: usize = 4096;

/// One chunk, read and split.
struct Chunk {
    text: Arc<String>,
    /// Where the file's bytes start in `text` (the bytes before are alignment padding).
    start: usize,
    /// Where the first and the last newline are, if the chunk has any.
    newlines: Option<(usize, usize)>,
    /// The lines that start and end inside the chunk (after its first newline, up to its last).
    lines: Vec<Range<usize>>,
}

/// Reads the first `length` bytes of `file` in chunks on all cores. `None` when the file is not valid
/// UTF-8 or changed size while being read: the caller then reads it whole.
pub(crate) fn read_lines_chunked(file: &File, length: u64) -> std::io::Result<Option<ReadLines>> {
    let Ok(length) = usize::try_from(length) else {
        return Ok(None);
    };
    let bounds = chunk_bounds(file, length)?;
    let chunks: Vec<Option<Chunk>> = bounds
        .par_windows(2)
        .map(|window| read_chunk(file, window[0]..window[1]))
        .collect::<std::io::Result<_>>()?;
    let Some(chunks) = chunks.into_iter().collect::<Option<Vec<Chunk>>>() else {
        return Ok(None);
    };
    Ok(Some(ReadLines {
        lines: join_chunks(&chunks),
        // Padding is at the front, so the last chunk ends where the file does.
        ends_with_newline: chunks
            .last()
            .is_none_or(|chunk| chunk.text.as_bytes().last() == Some(&b'\n')),
        bytes: length as u64,
    }))
}

/// Chunk edges: every `CHUNK_BYTES`, moved forward past UTF-8 continuation bytes so that no chunk
/// starts inside a character.
fn chunk_bounds(file: &File, length: usize) -> std::io::Result<Vec<usize>> {
    let mut bounds = vec![0];
    let mut next = CHUNK_BYTES;
    while next < length {
        let mut probe = [0_u8; 4];
        let read = file.read_at(&mut probe, next as u64)?;
        let skip = probe[..read]
            .iter()
            .take_while(|&&byte| (0x80..0xC0).contains(&byte))
            .count();
        let bound = next + skip;
        if bound < length {
            bounds.push(bound);
        }
        next += CHUNK_BYTES;
    }
    bounds.push(length);
    Ok(bounds)
}

fn read_chunk(file: &File, range: Range<usize>) -> std::io::Result<Option<Chunk>> {
    let size = range.end - range.start;
    let mut bytes: Vec<u8> = Vec::with_capacity(size + PAGE);
    // Pad so the chunk lands at the same offset within a page as in the file.
    let start = (range.start % PAGE + PAGE - bytes.as_ptr() as usize % PAGE) % PAGE;
    bytes.resize(start + size, b'\n');
    match file.read_exact_at(&mut bytes[start..], range.start as u64) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(None);
    };
    let content = text.as_bytes().get(start..).unwrap_or_default();
    let first = memchr::memchr(b'\n', content).map(|offset| start + offset);
    let last = memchr::memrchr(b'\n', content).map(|offset| start + offset);
    let mut lines = Vec::new();
    if let (Some(first), Some(last)) = (first, last) {
        let inner = text.as_bytes().get(first + 1..=last).unwrap_or_default();
        let mut line_start = first + 1;
        for newline in memchr::memchr_iter(b'\n', inner) {
            let end = first + 1 + newline;
            lines.push(line_start..end);
            line_start = end + 1;
        }
    }
    Ok(Some(Chunk {
        newlines: first.zip(last),
        text: Arc::new(text),
        start,
        lines,
    }))
}

/// The non-blank lines of the chunks in order, numbered, with lines across chunk edges joined.
fn join_chunks(chunks: &[Chunk]) -> Vec<RawLine> {
    let mut lines = Vec::with_capacity(chunks.iter().map(|chunk| chunk.lines.len() + 1).sum());
    let mut number = 0;
    // The start of the line in progress: its pieces from earlier chunks.
    let mut pending = String::new();
    let mut push = |lines: &mut Vec<RawLine>, text: LineText| {
        number += 1;
        if !text.as_str().trim().is_empty() {
            lines.push(RawLine { number, text });
        }
    };
    for chunk in chunks {
        let content_end = chunk.text.len();
        let Some((first, last)) = chunk.newlines else {
            pending.push_str(chunk.text.get(chunk.start..).unwrap_or_default());
            continue;
        };
        let head = chunk.start..first;
        let text = if pending.is_empty() {
            shared(chunk, head)
        } else {
            pending.push_str(chunk.text.get(head).unwrap_or_default());
            LineText::from(std::mem::take(&mut pending))
        };
        push(&mut lines, text);
        for range in &chunk.lines {
            push(&mut lines, shared(chunk, range.clone()));
        }
        pending.push_str(chunk.text.get(last + 1..content_end).unwrap_or_default());
    }
    if !pending.is_empty() {
        push(&mut lines, LineText::from(pending));
    }
    lines
}

fn shared(chunk: &Chunk, range: Range<usize>) -> LineText {
    LineText::Shared {
        file: Arc::clone(&chunk.text),
        range,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::line::split_lines;

    fn both_ways(bytes: &[u8]) -> (Vec<(usize, String)>, bool) {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        let chunked = read_lines_chunked(&file, bytes.len() as u64)
            .unwrap()
            .unwrap();
        let (whole, whole_ends) = split_lines(bytes.to_vec(), &mut Vec::new());
        let listed = |lines: Vec<RawLine>| -> Vec<(usize, String)> {
            lines
                .into_iter()
                .map(|line| (line.number, line.text.as_str().to_owned()))
                .collect()
        };
        let chunked_lines = listed(chunked.lines);
        assert_eq!(chunked_lines, listed(whole));
        assert_eq!(chunked.ends_with_newline, whole_ends);
        assert_eq!(chunked.bytes, bytes.len() as u64);
        (chunked_lines, chunked.ends_with_newline)
    }

    #[test]
    fn chunked_reading_matches_reading_whole() {
        // Lines of every length around the chunk size, multi-byte characters across chunk edges,
        // blank lines, a line longer than two chunks, with and without a final newline.
        let mut text = String::new();
        for index in 0..40 {
            let length = (index * 211_111) % (CHUNK_BYTES + 7);
            text.push_str(&"é日x".repeat(length / 6 + 1));
            text.push('\n');
            if index % 7 == 0 {
                text.push_str("\n  \n");
            }
        }
        text.push_str(&"y".repeat(2 * CHUNK_BYTES + 3));
        let (lines, ends) = both_ways(text.as_bytes());
        assert!(lines.len() > 40);
        assert!(!ends);
        text.push('\n');
        assert!(both_ways(text.as_bytes()).1);
    }

    #[test]
    fn invalid_utf8_is_left_to_the_whole_file_reader() {
        let mut bytes = vec![b'a'; 3 * CHUNK_BYTES];
        bytes[CHUNK_BYTES + 5] = 0xFF;
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        assert!(
            read_lines_chunked(&file, bytes.len() as u64)
                .unwrap()
                .is_none()
        );
        // A file shorter than it was said to be is read again whole, too.
        assert!(
            read_lines_chunked(&file, bytes.len() as u64 + 10)
                .unwrap()
                .is_none()
        );
    }
}
