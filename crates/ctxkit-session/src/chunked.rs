//! Reading a large session file on all cores: the file is cut into chunks at character boundaries,
//! each chunk is read, checked as UTF-8 and split into lines by its own task, and the lines that cross
//! a chunk's edge are joined afterwards. Most of the cost of reading a large file is the kernel filling
//! fresh memory; spread over the cores it no longer bounds the time to open.

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

/// One chunk, read and split; the lines inside it are already converted. The text before its first
/// newline and after its last one belongs to lines that cross a chunk's edge: those are read again
/// whole when the chunks are joined (copying their pieces cost more, as they are often long ones).
struct Chunk {
    /// Where the chunk's first newline is in the file; `None` when it holds none.
    first_newline: Option<u64>,
    /// The lines between the first and the last newline (blank ones skipped), numbered from 0 among
    /// them.
    inner: Vec<LoadedLine>,
    /// How many lines lie between the first and the last newline, blank ones included.
    inner_count: usize,
    /// Where the text after the last newline starts in the file.
    tail_offset: u64,
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
    let bounds = chunk_bounds(file, length).map_err(&io_error)?;
    let ranges: Vec<Range<usize>> = bounds.windows(2).map(|pair| pair[0]..pair[1]).collect();
    let mut state = Joiner {
        file,
        number: 0,
        buffer: Vec::new(),
        pending_offset: 0,
        ends_with_newline: true,
    };
    let read_wave = |group: &[Range<usize>]| -> Result<Vec<Option<Chunk>>> {
        group
            .par_iter()
            .map(|range| read_chunk(file, range.clone(), &source))
            .collect::<std::io::Result<_>>()
            .map_err(&io_error)
    };
    // While one wave of chunks is joined and handed to `sink` (building the index is serial), the
    // next wave is read and split on the other cores (see `wave_sizes`).
    let mut rest: &[Range<usize>] = &ranges;
    let mut waves = wave_sizes(ranges.len(), rayon::current_num_threads().max(1))
        .into_iter()
        .map(move |size| {
            let (wave, after) = rest.split_at(size.min(rest.len()));
            rest = after;
            wave
        });
    let mut read = match waves.next() {
        Some(group) => read_wave(group)?,
        None => Vec::new(),
    };
    loop {
        let next = waves.next();
        let (next_read, joined) = rayon::join(
            || next.map(read_wave).transpose(),
            || state.join(std::mem::take(&mut read), &source, &mut *sink),
        );
        if !joined? {
            return Ok(None);
        }
        match next_read? {
            Some(chunks) => read = chunks,
            None => break,
        }
    }
    if state.pending_offset < length as u64 && !state.finish_line(length as u64, &source, sink)? {
        return Ok(None);
    }
    Ok(Some(ChunkedRead {
        ends_with_newline: state.ends_with_newline,
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

/// The joining of chunks into lines, in file order.
struct Joiner<'f> {
    file: &'f File,
    /// Lines handed out so far (blank ones counted).
    number: usize,
    /// Where the line in progress starts in the file.
    pending_offset: u64,
    /// Holds each line that crosses a chunk's edge, read again whole; kept from line to line.
    buffer: Vec<u8>,
    ends_with_newline: bool,
}

impl Joiner<'_> {
    /// Joins one wave of chunks onto the lines before it and hands their lines to `sink`; `false`
    /// when a chunk could not be read as text (see [`read_lines_chunked`]).
    fn join(
        &mut self,
        chunks: Vec<Option<Chunk>>,
        source: &Arc<BodyFile>,
        sink: &mut (dyn FnMut(Vec<LoadedLine>) -> Result<()> + Send),
    ) -> Result<bool> {
        for chunk in chunks {
            let Some(chunk) = chunk else {
                return Ok(false);
            };
            self.ends_with_newline = chunk.ends_with_newline;
            let Some(first_newline) = chunk.first_newline else {
                continue;
            };
            if !self.finish_line(first_newline, source, sink)? {
                return Ok(false);
            }
            // The chunk's own lines go on as they are, numbered in place (moving them to another
            // list cost a copy and fresh pages for every line).
            let mut inner = chunk.inner;
            for line in &mut inner {
                line.renumber(self.number + 1);
            }
            sink(inner)?;
            self.number += chunk.inner_count;
            self.pending_offset = chunk.tail_offset;
        }
        Ok(true)
    }

    /// Hands out the line in progress, which ends at `end`, read again whole; `false` when it is
    /// no longer there or not text (the file changed since its chunks were read).
    fn finish_line(
        &mut self,
        end: u64,
        source: &Arc<BodyFile>,
        sink: &mut (dyn FnMut(Vec<LoadedLine>) -> Result<()> + Send),
    ) -> Result<bool> {
        self.number += 1;
        let Ok(length) = usize::try_from(end.saturating_sub(self.pending_offset)) else {
            return Ok(false);
        };
        if self.buffer.len() < length {
            self.buffer.resize(length, 0);
        }
        let Some(bytes) = self.buffer.get_mut(..length) else {
            return Ok(false);
        };
        match self.file.read_exact_at(bytes, self.pending_offset) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(error) => return Err(SessionError::io("read", source.path())(error)),
        }
        let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
            return Ok(false);
        };
        if let Some(body) = line_body(text, self.pending_offset, source) {
            sink(vec![LoadedLine::new(self.number, body)])?;
        }
        Ok(true)
    }
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

thread_local! {
    /// How many lines this thread's next chunk is expected to hold (its last one's count, and some).
    static LINES_PER_CHUNK: Cell<usize> = const { Cell::new(0) };
    /// Each thread's chunk buffer, reused from chunk to chunk: a fresh one per chunk would cost a
    /// page fault and the kernel zeroing a page for every 4 KiB read.
    static CHUNK_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn read_chunk(
    file: &File,
    range: Range<usize>,
    source: &Arc<BodyFile>,
) -> std::io::Result<Option<Chunk>> {
    CHUNK_BUFFER.with(|buffer| {
        let mut bytes = buffer.borrow_mut();
        let size = range.end - range.start;
        if bytes.len() < size + PAGE {
            bytes.resize(size + PAGE, b'\n');
        }
        // Read to the same offset within a page as in the file (the kernel copies fastest so).
        let start = (range.start % PAGE + PAGE - bytes.as_ptr() as usize % PAGE) % PAGE;
        let window = bytes.get_mut(start..start + size).unwrap_or_default();
        match file.read_exact_at(window, range.start as u64) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(error) => return Err(error),
        }
        Ok(split_chunk(window, range.start, source))
    })
}

/// Splits one chunk's bytes (starting at `chunk_start` in the file) into its lines; `None` when they
/// are not valid UTF-8.
fn split_chunk(bytes: &[u8], chunk_start: usize, source: &Arc<BodyFile>) -> Option<Chunk> {
    let range = chunk_start..chunk_start + bytes.len();
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        return None;
    };
    let file_offset = |position: usize| (range.start + position) as u64;
    let ends_with_newline = text.as_bytes().last().is_none_or(|&last| last == b'\n');
    let (Some(first), Some(last)) = (
        memchr::memchr(b'\n', text.as_bytes()),
        memchr::memrchr(b'\n', text.as_bytes()),
    ) else {
        return Some(Chunk {
            first_newline: None,
            inner: Vec::new(),
            inner_count: 0,
            tail_offset: 0,
            ends_with_newline,
        });
    };
    let mut inner = Vec::with_capacity(LINES_PER_CHUNK.get());
    let mut inner_count = 0;
    let mut line_start = first + 1;
    for newline in memchr::memchr_iter(
        b'\n',
        text.as_bytes().get(first + 1..=last).unwrap_or_default(),
    ) {
        let end = first + 1 + newline;
        if let Some(body) = line_body(
            text.get(line_start..end).unwrap_or_default(),
            file_offset(line_start),
            source,
        ) {
            inner.push(LoadedLine::new(inner_count, body));
        }
        inner_count += 1;
        line_start = end + 1;
    }
    // Room for as many lines next time, and a little more.
    LINES_PER_CHUNK.set(inner.len() + inner.len() / 4 + 16);
    Some(Chunk {
        first_newline: Some(file_offset(first)),
        inner,
        inner_count,
        tail_offset: file_offset(last + 1),
        ends_with_newline,
    })
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
