//! Reading a large session file on all cores: the file is cut into chunks of 1 MiB, and each chunk is
//! read, checked as UTF-8 and split into lines by its own task. A chunk owns the lines that start in
//! it: it skips the end of a line begun before it, and reads on past its edge to finish its own last
//! line, so no line is ever put together from pieces. Most of the cost of reading a large file is
//! copying it out of the kernel's cache; spread over the cores it no longer bounds the time to open.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::body::{BodyFile, DISK_LINE_BYTES, DiskLine, digest};
use crate::entry::{Body, EntryMeta, LineHead, StoredEntry};
use crate::error::{Result, SessionError};
use crate::line::{LineText, LoadedBody, LoadedLine};

/// Files below this size are read whole, on one thread.
pub(crate) const MIN_CHUNKED_BYTES: u64 = 8 << 20;

/// The size of one chunk.
const CHUNK_BYTES: usize = 1 << 20;

/// Page size the kernel copies fastest to (destination aligned as the source).
const PAGE: usize = 4096;

/// What reading a file in chunks found besides its lines.
#[derive(Debug)]
pub(crate) struct ChunkedRead {
    pub(crate) ends_with_newline: bool,
    pub(crate) bytes: u64,
}

/// One chunk, read and split into the lines that start in it, already converted.
struct Chunk {
    /// Those lines (blank ones skipped), numbered from 0 among them.
    lines: Vec<LoadedLine>,
    /// How many lines start in the chunk, blank ones included.
    count: usize,
    /// Whether the chunk's last byte is a newline (for the last chunk: whether the file ends with one).
    ends_with_newline: bool,
}

/// Reads the first `length` bytes of `file` (at `path`) in chunks on all cores, a few chunks at a
/// time, and hands the lines to `sink` one chunk's group at a time, in file order, so memory holds the
/// lines kept, never the whole file: `message` lines are left on disk (read back through their
/// entry), the others are copied. `None` when the file is not valid UTF-8 or is shorter than
/// `length` (the caller then reads it whole; `sink` may have had some groups already).
pub(crate) fn read_lines_chunked(
    file: &File,
    path: &Path,
    length: u64,
    cache_bytes: usize,
    sink: &mut (dyn FnMut(Vec<LoadedLine>) -> Result<()> + Send),
) -> Result<Option<ChunkedRead>> {
    let Ok(length) = usize::try_from(length) else {
        return Ok(None);
    };
    let io_error = |error| SessionError::io("read", path)(error);
    let source = Arc::new(BodyFile::new(
        file.try_clone().map_err(&io_error)?,
        path,
        cache_bytes,
    ));
    let chunks = length.div_ceil(CHUNK_BYTES);
    let mut number = 0;
    let mut ends_with_newline = true;
    let read_wave = |wave: Range<usize>| -> Result<Vec<Option<Chunk>>> {
        wave.into_par_iter()
            .map(|index| read_chunk(file, index, length, &source))
            .collect::<std::io::Result<_>>()
            .map_err(&io_error)
    };
    // Hands one wave's lines to `sink` in file order; `false` when a chunk was not text.
    let mut join = |wave: Vec<Option<Chunk>>| -> Result<bool> {
        for chunk in wave {
            let Some(chunk) = chunk else {
                return Ok(false);
            };
            let mut lines = chunk.lines;
            for line in &mut lines {
                line.renumber(number + 1);
            }
            if !lines.is_empty() {
                sink(lines)?;
            }
            number += chunk.count;
            ends_with_newline = chunk.ends_with_newline;
        }
        Ok(true)
    };
    // While one wave of chunks is joined and handed to `sink` (building the index is serial), the
    // next wave is read and split on the other cores (see `wave_sizes`).
    let mut first = 0;
    let mut waves = wave_sizes(chunks, rayon::current_num_threads().max(1))
        .into_iter()
        .map(move |size| {
            let wave = first..(first + size).min(chunks);
            first = wave.end;
            wave
        });
    let mut read = match waves.next() {
        Some(wave) => read_wave(wave)?,
        None => Vec::new(),
    };
    loop {
        let next = waves.next();
        let (next_read, joined) = rayon::join(
            || next.map(read_wave).transpose(),
            || join(std::mem::take(&mut read)),
        );
        if !joined? {
            return Ok(None);
        }
        match next_read? {
            Some(chunks) => read = chunks,
            None => break,
        }
    }
    Ok(Some(ChunkedRead {
        ends_with_newline,
        bytes: length as u64,
    }))
}

/// How many chunks each wave reads, in order: large waves (few stops where one side waits for the
/// other), the last ones smaller and smaller (the last wave's join has nothing to overlap).
fn wave_sizes(chunks: usize, threads: usize) -> Vec<usize> {
    let small = 2 * threads;
    let large = 16 * threads;
    let mut tail = Vec::new();
    let mut left = chunks;
    let mut size = small;
    while size < large && left > 0 {
        let take = size.min(left);
        tail.push(take);
        left -= take;
        size *= 2;
    }
    let mut sizes = Vec::new();
    if !left.is_multiple_of(large) {
        sizes.push(left % large);
    }
    sizes.extend(std::iter::repeat_n(large, left / large));
    sizes.extend(tail.into_iter().rev());
    sizes
}

/// What is kept of a line that starts at `offset`: nothing when it is blank, the indexed entry of a
/// `message` line with an id (its text stays in the file), else a copy.
fn line_body(text: &str, offset: u64, source: &Arc<BodyFile>) -> Option<LoadedBody> {
    if text.trim().is_empty() {
        return None;
    }
    if text.len() > DISK_LINE_BYTES
        && let Ok((head, complete)) = LineHead::read_prefix(text)
        && matches!(head.meta, EntryMeta::Message { .. })
        && head.id.is_some()
    {
        let disk = DiskLine {
            source: Arc::clone(source),
            offset,
            length: text.len(),
            digest: digest(text.as_bytes()),
        };
        let body = if complete {
            Body::Disk(disk)
        } else {
            Body::DiskPrefix(disk)
        };
        // The line number is set when the chunk's place in the file is known.
        if let Ok(entry) = StoredEntry::from_head(head, body, 0) {
            return Some(LoadedBody::Entry(entry));
        }
    }
    Some(LoadedBody::Text(LineText::from(text)))
}

thread_local! {
    /// How many lines this thread's next chunk is expected to hold (its last one's count, and some).
    static LINES_PER_CHUNK: Cell<usize> = const { Cell::new(0) };
    /// Each thread's chunk buffer, reused from chunk to chunk: a fresh one per chunk would cost a
    /// page fault and the kernel zeroing a page for every 4 KiB read.
    static CHUNK_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Reads chunk `index` of a file of `length` bytes and splits it into the lines that start in it:
/// from the byte after the first newline at or after the byte before its start (the start of the
/// file for the first chunk) to the first newline at or after its last byte, read on past its edge
/// when its last line goes on (the last chunk ends with the file). `None` when those lines are not
/// valid UTF-8 or the file is shorter than `length` (it changed meanwhile).
fn read_chunk(
    file: &File,
    index: usize,
    length: usize,
    source: &Arc<BodyFile>,
) -> std::io::Result<Option<Chunk>> {
    CHUNK_BUFFER.with(|buffer| {
        let mut bytes = buffer.borrow_mut();
        let chunk_start = index * CHUNK_BYTES;
        let chunk_end = (chunk_start + CHUNK_BYTES).min(length);
        // One byte before the chunk too: whether a line starts right at its edge.
        let read_start = chunk_start.saturating_sub(1);
        let size = chunk_end.saturating_sub(read_start);
        if bytes.len() < size + PAGE {
            bytes.resize(size + PAGE, b'\n');
        }
        // Read to the same offset within a page as in the file (the kernel copies fastest so).
        let offset = (read_start % PAGE + PAGE - bytes.as_ptr() as usize % PAGE) % PAGE;
        let Some(window) = bytes.get_mut(offset..offset + size) else {
            return Ok(None);
        };
        match file.read_exact_at(window, read_start as u64) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(error) => return Err(error),
        }
        let ends_with_newline = window.last().is_none_or(|&last| last == b'\n');
        // What comes before the first newline ends a line begun earlier: another chunk reads it.
        let owned_start = match (index, memchr::memchr(b'\n', window)) {
            (0, _) => 0,
            (_, Some(newline)) => newline + 1,
            (_, None) => {
                return Ok(Some(Chunk {
                    lines: Vec::new(),
                    count: 0,
                    ends_with_newline,
                }));
            }
        };
        let mut owned_end = chunk_end;
        if chunk_end < length && !ends_with_newline {
            match read_past_edge(file, &mut bytes, offset + size, chunk_end, length)? {
                Some(end) => owned_end = end,
                None => return Ok(None),
            }
        }
        let split = bytes
            .get(offset + owned_start..offset + owned_end - read_start)
            .and_then(|owned| split_lines(owned, read_start + owned_start, &source.handle()));
        // A long line made the buffer grow: give the memory back rather than keep it for as long as
        // the thread lives.
        if bytes.capacity() > 4 * (CHUNK_BYTES + PAGE) {
            bytes.truncate(CHUNK_BYTES + PAGE);
            bytes.shrink_to_fit();
        }
        Ok(split.map(|(lines, count)| Chunk {
            lines,
            count,
            ends_with_newline,
        }))
    })
}

/// Reads on from the file's byte `from`, placed at `at` in `bytes`, until a newline or the end of
/// the file at `length`; the file offset just past that newline (or `length`). `None` when the file
/// is shorter than `length`.
fn read_past_edge(
    file: &File,
    bytes: &mut Vec<u8>,
    at: usize,
    from: usize,
    length: usize,
) -> std::io::Result<Option<usize>> {
    let mut block = 64 << 10;
    let (mut position, mut place) = (from, at);
    while position < length {
        let size = block.min(length - position);
        if bytes.len() < place + size {
            bytes.resize(place + size, 0);
        }
        let Some(window) = bytes.get_mut(place..place + size) else {
            return Ok(None);
        };
        match file.read_exact_at(window, position as u64) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(error) => return Err(error),
        }
        if let Some(newline) = memchr::memchr(b'\n', window) {
            return Ok(Some(position + newline + 1));
        }
        position += size;
        place += size;
        block = (block * 2).min(CHUNK_BYTES);
    }
    Ok(Some(length))
}

/// Splits `bytes` (starting at `start` in the file, at the start of a line) into its lines: every
/// newline ends one, and text after the last newline is one more. The lines kept (blank ones
/// skipped) numbered from 0, and how many there are, blank ones included; `None` when the bytes are
/// not valid UTF-8.
fn split_lines(
    bytes: &[u8],
    start: usize,
    source: &Arc<BodyFile>,
) -> Option<(Vec<LoadedLine>, usize)> {
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        return None;
    };
    let mut lines = Vec::with_capacity(LINES_PER_CHUNK.get());
    let mut count = 0;
    let mut line_start = 0;
    let mut keep = |line: &str, line_start: usize, count: usize| {
        if let Some(body) = line_body(line, (start + line_start) as u64, source) {
            lines.push(LoadedLine::new(count, body));
        }
    };
    for newline in memchr::memchr_iter(b'\n', bytes) {
        keep(
            text.get(line_start..newline).unwrap_or_default(),
            line_start,
            count,
        );
        count += 1;
        line_start = newline + 1;
    }
    if line_start < text.len() {
        keep(
            text.get(line_start..).unwrap_or_default(),
            line_start,
            count,
        );
        count += 1;
    }
    // Room for as many lines next time, and a little more.
    LINES_PER_CHUNK.set(lines.len() + lines.len() / 4 + 16);
    Some((lines, count))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::line::split_lines;

    /// The lines of a file read in chunks, in one list.
    struct LoadedLines {
        lines: Vec<Vec<LoadedLine>>,
        ends_with_newline: bool,
        bytes: u64,
    }

    fn read_all(file: &File, path: &Path, length: u64, cache_bytes: usize) -> Option<LoadedLines> {
        let mut lines = Vec::new();
        let read = read_lines_chunked(file, path, length, cache_bytes, &mut |group| {
            lines.push(group);
            Ok(())
        })
        .unwrap()?;
        Some(LoadedLines {
            lines,
            ends_with_newline: read.ends_with_newline,
            bytes: read.bytes,
        })
    }

    fn both_ways(bytes: &[u8]) -> (Vec<(usize, String)>, bool) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        let chunked = read_all(file.as_file(), file.path(), bytes.len() as u64, 1 << 20).unwrap();
        let (whole, whole_ends) = split_lines(bytes.to_vec(), &mut Vec::new());
        let whole: Vec<(usize, String)> = whole
            .into_iter()
            .map(|line| (line.number, line.text.as_str().to_owned()))
            .collect();
        let chunked_lines: Vec<(usize, String)> = chunked
            .lines
            .into_iter()
            .flatten()
            .map(|line| {
                let text = match line.body {
                    LoadedBody::Text(text) => text.as_str().to_owned(),
                    LoadedBody::Entry(entry) => {
                        assert_eq!(entry.line(), line.number);
                        entry.raw().unwrap().to_string()
                    }
                };
                (line.number, text)
            })
            .collect();
        assert_eq!(chunked_lines, whole);
        assert_eq!(chunked.ends_with_newline, whole_ends);
        assert_eq!(chunked.bytes, bytes.len() as u64);
        (chunked_lines, chunked.ends_with_newline)
    }

    #[test]
    fn large_message_lines_stay_on_disk_and_read_back_byte_identical() {
        let mut text = String::new();
        for index in 0..30 {
            let body = "日本é\\\"x".repeat(index * 7919 % 60_000 + 200);
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"m{index}\",\"message\":{{\"role\":\"user\",\"content\":\"{body}\"}}}}\n"
            ));
            text.push_str(&format!(
                "{{\"type\":\"custom\",\"id\":\"c{index}\",\"data\":\"{body}\"}}\n"
            ));
        }
        assert!(text.len() as u64 > MIN_CHUNKED_BYTES);
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let chunked = read_all(file.as_file(), file.path(), text.len() as u64, 1 << 20).unwrap();
        let on_disk = chunked
            .lines
            .iter()
            .flatten()
            .filter(|line| matches!(line.body, LoadedBody::Entry(_)))
            .count();
        // Every large message line is on disk; `custom` lines are always kept in memory.
        assert_eq!(on_disk, 30);
        both_ways(text.as_bytes());
    }

    #[test]
    fn a_line_indexed_from_its_first_fields_is_checked_whole_when_read_back() {
        let lines = [
            r#"{"type":"message","id":"good","parentId":null,"timestamp":"t","message":{"role":"user","content":"ok"}}"#,
            r#"{"type":"message","id":"broken","parentId":"good","timestamp":"t","message":{"role":"toolResult","content":"x" oops}}"#,
            r#"{"type":"message","id":"twice","parentId":"good","timestamp":"t","message":{"role":"user","content":"x"},"id":"other"}"#,
            r#"{"type":"message","id":"whole","parentId":"good","timestamp":"t","message":{"role":"assistant","content":[],"model":"m"}}"#,
        ];
        let text = lines.join("\n");
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let chunked = read_all(file.as_file(), file.path(), text.len() as u64, 1 << 20).unwrap();
        let entries: Vec<StoredEntry> = chunked
            .lines
            .into_iter()
            .flatten()
            .map(|line| match line.body {
                LoadedBody::Entry(entry) => entry,
                LoadedBody::Text(text) => panic!("kept in memory: {text:?}"),
            })
            .collect();
        assert_eq!(entries.len(), 4);
        assert!(entries.iter().all(|entry| !entry.is_in_memory()));
        assert_eq!(entries[0].raw().unwrap(), lines[0]);
        assert_eq!(entries[0].role(), Some("user"));
        // Indexed from its head; the rest of the line is not JSON.
        assert_eq!(entries[1].id(), "broken");
        assert!(matches!(
            entries[1].raw(),
            Err(SessionError::InvalidEntry { line: 2, .. })
        ));
        // A later `id` (which `JSON.parse` would take) makes it another entry than indexed.
        assert_eq!(entries[2].id(), "twice");
        assert!(matches!(
            entries[2].raw(),
            Err(SessionError::InvalidEntry { line: 3, .. })
        ));
        assert!(matches!(entries[1].parse_message(), Some(Err(_))));
        assert_eq!(entries[3].raw().unwrap(), lines[3]);
        // Its model, after its content, is read from the line when asked for.
        let (provider, model) = entries[3].assistant_model().unwrap().unwrap();
        assert_eq!((provider, model.as_deref()), (None, Some("m")));
        assert_eq!(entries[0].assistant_model().unwrap(), None);
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
    fn lines_ending_or_starting_at_a_chunk_edge_are_read_once() {
        // Newlines just before, at and just after each chunk's last byte; a line filling whole
        // chunks; no newline at all; a blank tail.
        for newline_at in [
            CHUNK_BYTES - 2,
            CHUNK_BYTES - 1,
            CHUNK_BYTES,
            CHUNK_BYTES + 1,
        ] {
            let mut bytes = vec![b'x'; 9 * CHUNK_BYTES + 5];
            for chunk in 0..9 {
                bytes[chunk * CHUNK_BYTES + newline_at % CHUNK_BYTES] = b'\n';
            }
            bytes[0] = b'{';
            let (lines, _) = both_ways(&bytes);
            assert!(lines.len() >= 9, "{newline_at}: {}", lines.len());
            bytes.extend_from_slice(b"\n \t");
            both_ways(&bytes);
        }
        let mut one_line = vec![b'y'; 9 * CHUNK_BYTES + 3];
        assert_eq!(both_ways(&one_line).0.len(), 1);
        one_line.push(b'\n');
        assert_eq!(both_ways(&one_line).0.len(), 1);
        // Only the last chunk holds a newline.
        one_line.extend_from_slice(b"z\n");
        assert_eq!(both_ways(&one_line).0.len(), 2);
    }

    #[test]
    fn waves_cover_every_chunk_once_and_shrink_toward_the_end() {
        for chunks in [0, 1, 3, 4, 27, 28, 29, 100, 284, 2731] {
            let sizes = wave_sizes(chunks, 2);
            assert_eq!(sizes.iter().sum::<usize>(), chunks, "{chunks}: {sizes:?}");
            assert!(
                sizes.iter().all(|&size| size > 0 && size <= 32),
                "{sizes:?}"
            );
            if chunks >= 28 {
                assert_eq!(sizes[sizes.len() - 3..], [16, 8, 4], "{chunks}");
            }
        }
        assert_eq!(
            wave_sizes(284, 2),
            [32, 32, 32, 32, 32, 32, 32, 32, 16, 8, 4]
        );
        assert_eq!(wave_sizes(27, 2), [15, 8, 4]);
    }

    #[test]
    fn invalid_utf8_is_left_to_the_whole_file_reader() {
        let mut bytes = vec![b'a'; 3 * CHUNK_BYTES];
        bytes[CHUNK_BYTES + 5] = 0xFF;
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        let read = |length| read_all(file.as_file(), file.path(), length, 0);
        assert!(read(bytes.len() as u64).is_none());
        // A file shorter than it was said to be is read again whole, too.
        assert!(read(bytes.len() as u64 + 10).is_none());
    }
}
