//! Entry lines kept on disk: a loaded session keeps its large lines (message bodies, tool outputs) in
//! the file and reads one when it is first asked for, with a positioned read on the descriptor opened
//! at load time (no `mmap`: a file truncated under us would kill the process, see
//! `docs/decisions.md`). Every read is checked against what was indexed (length and a 64-bit digest),
//! so a file changed in place gives an error, never other data. Lines read back are kept in a cache
//! bounded in bytes, so memory grows with the number of entries, not with their size.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::hash::BuildHasher;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Result, SessionError};

/// `message` lines longer than this are left on disk when a file is loaded in chunks; shorter ones
/// are copied. Zero: every message line stays on disk, since the index holds its head anyway and a
/// copy of even a short line costs more than its place in the file (issue 22: memory per entry).
pub(crate) const DISK_LINE_BYTES: usize = 0;

/// `message` lines at least this long are left on disk once they are appended (and read back when
/// asked for), so a session that is appended large messages (a `serve` client's, issue 42) holds
/// them once, in the file, not also in memory. Shorter ones are kept: a turn's small messages are
/// read again at once, and a copy of them costs little.
pub(crate) const APPENDED_DISK_LINE_BYTES: usize = 16 << 10;

/// How many bytes of lines read back a session keeps by default.
pub(crate) const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// Seed of the line digests (any fixed value: digests are compared within one process only).
const DIGEST_SEED: u64 = 0x6374_786b_6974_0022;

/// The digest of a line's bytes, as checked when the line is read back.
pub(crate) fn digest(bytes: &[u8]) -> u64 {
    foldhash::quality::FixedState::with_seed(DIGEST_SEED).hash_one(bytes)
}

/// A check of a line's text when it is read back from the file (see [`BodyFile::read`]).
pub(crate) type LineCheck<'a> = dyn Fn(&str) -> Result<()> + 'a;

/// An open session file whose lines are read on demand: a handle on the file and its cache (see
/// [`BodyFile::handle`]).
pub(crate) struct BodyFile {
    shared: Arc<SharedFile>,
}

struct SharedFile {
    file: File,
    path: PathBuf,
    cache: Mutex<BodyCache>,
}

impl fmt::Debug for BodyFile {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("BodyFile")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

/// One line left in its file.
#[derive(Clone)]
pub(crate) struct DiskLine {
    pub(crate) source: Arc<BodyFile>,
    pub(crate) offset: u64,
    pub(crate) length: usize,
    pub(crate) digest: u64,
}

impl fmt::Debug for DiskLine {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "<{} bytes at {}>", self.length, self.offset)
    }
}

impl BodyFile {
    pub(crate) fn new(file: File, path: &Path, cache_bytes: usize) -> Self {
        Self {
            shared: Arc::new(SharedFile {
                file,
                path: path.to_owned(),
                cache: Mutex::new(BodyCache::new(cache_bytes)),
            }),
        }
    }

    /// Another handle on the same file and cache, counted on its own: the entries of one chunk
    /// share one, so the threads reading chunks do not take turns on a single reference count.
    pub(crate) fn handle(&self) -> Arc<Self> {
        Arc::new(Self {
            shared: Arc::clone(&self.shared),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.shared.path
    }

    /// How many bytes of lines the cache holds now.
    #[cfg(test)]
    pub(crate) fn cached_bytes(&self) -> usize {
        self.shared
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }

    /// Reads `line` back (from the cache when it is there), checked against what was indexed, and
    /// by `check` when it is not in the cache (a line read back is cached only once it passed).
    /// `number` is the 1-based line number, for the error.
    pub(crate) fn read(
        &self,
        line: &DiskLine,
        number: usize,
        check: Option<&LineCheck<'_>>,
    ) -> Result<Arc<str>> {
        if let Some(text) = self
            .shared
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(line.offset)
        {
            return Ok(text);
        }
        let changed = |reason: &str| SessionError::LineChanged {
            path: self.shared.path.clone(),
            line: number,
            reason: reason.to_owned(),
        };
        let mut bytes = vec![0_u8; line.length];
        match read_exact_at(&self.shared.file, &mut bytes, line.offset) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(changed("the file is shorter than when it was read"));
            }
            Err(error) => return Err(SessionError::io("read", &self.shared.path)(error)),
        }
        if digest(&bytes) != line.digest {
            return Err(changed("the line's bytes differ from when it was read"));
        }
        let text: Arc<str> = String::from_utf8(bytes)
            .map_err(|_| changed("the line is no longer valid UTF-8"))?
            .into();
        if let Some(check) = check {
            check(&text)?;
        }
        self.shared
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(line.offset, Arc::clone(&text));
        Ok(text)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buffer: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buffer.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buffer, offset) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(read) => {
                buffer = &mut buffer[read..];
                offset += read as u64;
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Lines read back, by offset, dropped oldest first once they hold more than `limit` bytes.
struct BodyCache {
    lines: HashMap<u64, Arc<str>, foldhash::fast::RandomState>,
    order: VecDeque<u64>,
    bytes: usize,
    limit: usize,
}

impl BodyCache {
    fn new(limit: usize) -> Self {
        Self {
            lines: HashMap::default(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    fn get(&self, offset: u64) -> Option<Arc<str>> {
        self.lines.get(&offset).cloned()
    }

    fn insert(&mut self, offset: u64, text: Arc<str>) {
        if text.len() > self.limit || self.lines.contains_key(&offset) {
            return;
        }
        self.bytes += text.len();
        self.lines.insert(offset, text);
        self.order.push_back(offset);
        while self.bytes > self.limit
            && let Some(oldest) = self.order.pop_front()
        {
            if let Some(dropped) = self.lines.remove(&oldest) {
                self.bytes -= dropped.len();
            }
        }
    }
}

/// The text of an entry's line: borrowed from the entry, or read back from its file.
#[derive(Clone)]
pub struct EntryText<'a> {
    inner: TextInner<'a>,
}

#[derive(Clone)]
enum TextInner<'a> {
    Borrowed(&'a str),
    Shared { text: Arc<str>, range: Range<usize> },
}

impl<'a> EntryText<'a> {
    pub(crate) fn borrowed(text: &'a str) -> Self {
        Self {
            inner: TextInner::Borrowed(text),
        }
    }

    pub(crate) fn shared(text: Arc<str>) -> Self {
        let range = 0..text.len();
        Self {
            inner: TextInner::Shared { text, range },
        }
    }

    /// The part `range` of this text (`None` when it is not on character boundaries).
    pub(crate) fn slice(self, range: Range<usize>) -> Option<Self> {
        self.get(range.clone())?;
        Some(match self.inner {
            TextInner::Borrowed(text) => Self::borrowed(text.get(range)?),
            TextInner::Shared { text, range: outer } => Self {
                inner: TextInner::Shared {
                    text,
                    range: outer.start + range.start..outer.start + range.end,
                },
            },
        })
    }
}

impl Deref for EntryText<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match &self.inner {
            TextInner::Borrowed(text) => text,
            // Ranges are checked when they are made.
            TextInner::Shared { text, range } => text.get(range.clone()).unwrap_or_default(),
        }
    }
}

impl AsRef<str> for EntryText<'_> {
    fn as_ref(&self) -> &str {
        self
    }
}

impl fmt::Debug for EntryText<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, formatter)
    }
}

impl fmt::Display for EntryText<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, formatter)
    }
}

impl PartialEq for EntryText<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for EntryText<'_> {}

impl PartialEq<str> for EntryText<'_> {
    fn eq(&self, other: &str) -> bool {
        **self == *other
    }
}

impl PartialEq<&str> for EntryText<'_> {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_with(text: &str) -> (tempfile::NamedTempFile, File) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let reader = File::open(file.path()).unwrap();
        (file, reader)
    }

    fn line_of(source: &Arc<BodyFile>, text: &str, offset: u64) -> DiskLine {
        DiskLine {
            source: Arc::clone(source),
            offset,
            length: text.len(),
            digest: digest(text.as_bytes()),
        }
    }

    #[test]
    fn lines_read_back_are_byte_identical_and_cached_within_the_bound() {
        let lines = ["é".repeat(300), "x".repeat(500), "日本".repeat(200)];
        let text = lines.join("\n");
        let (file, reader) = file_with(&text);
        let source = Arc::new(BodyFile::new(reader, file.path(), 1200));
        let mut offset = 0;
        let mut disk = Vec::new();
        for line in &lines {
            disk.push(line_of(&source, line, offset));
            offset += line.len() as u64 + 1;
        }
        for (line, stored) in lines.iter().zip(&disk) {
            assert_eq!(&*source.read(stored, 1, None).unwrap(), line.as_str());
            assert!(source.cached_bytes() <= 1200);
        }
        // 600 + 500 fit; the third (1200 bytes) pushed the oldest out until the bound held.
        assert_eq!(source.cached_bytes(), 1200);
        // Read again: identical, from the file or the cache.
        for (line, stored) in lines.iter().zip(&disk) {
            assert_eq!(&*source.read(stored, 1, None).unwrap(), line.as_str());
            assert!(source.cached_bytes() <= 1200);
        }
    }

    #[test]
    fn a_file_truncated_or_rewritten_after_indexing_gives_an_error() {
        let line = "a".repeat(2000);
        let (file, reader) = file_with(&format!("{{}}\n{line}\n"));
        let source = Arc::new(BodyFile::new(reader, file.path(), 0));
        let stored = line_of(&source, &line, 3);
        assert_eq!(&*source.read(&stored, 2, None).unwrap(), line.as_str());
        // Rewritten in place with the same length: the digest tells.
        std::fs::write(file.path(), format!("{{}}\n{}\n", "b".repeat(2000))).unwrap();
        let error = source.read(&stored, 2, None).unwrap_err();
        assert!(
            matches!(error, SessionError::LineChanged { line: 2, .. }),
            "{error}"
        );
        // Truncated: shorter than indexed.
        std::fs::write(file.path(), "{}\n").unwrap();
        let error = source.read(&stored, 2, None).unwrap_err();
        assert!(
            matches!(error, SessionError::LineChanged { line: 2, .. }),
            "{error}"
        );
    }

    #[test]
    fn slices_of_shared_text_stay_inside_their_range() {
        let text = EntryText::shared(Arc::from("{\"a\":\"é\"}"));
        let inner = text.clone().slice(5..9).unwrap();
        assert_eq!(inner, "\"é\"");
        assert_eq!(inner.slice(1..3).unwrap(), "é");
        assert!(text.slice(6..7).is_none());
        assert_eq!(EntryText::borrowed("xyz").slice(1..2).unwrap(), "y");
    }
}
