//! Listing sessions: what a picker shows for each file (id, cwd, name, times, counts, first message),
//! newest first, and the most recent session of a directory. Reads only heads, never migrates or writes.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rayon::prelude::*;

use ctxkit_protocol::{AgentMessage, MessageContent, SessionInfoRecord, from_str_repaired};
use serde_json::Value;

use crate::error::{Result, SessionError};
use crate::head::{EntryHead, message_span, read_listing_head};
use crate::ids::{iso_from_ms, parse_timestamp_ms};
use crate::index::js_trim;

/// A file a listing skipped, and why.
#[derive(Debug)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub error: SessionError,
}

/// Largest file buffer a listing thread keeps for the next file (larger ones are freed after use).
const KEPT_BUFFER_BYTES: usize = 64 << 20;

thread_local! {
    /// Each listing thread's file buffer, reused from file to file: a fresh one per file would cost
    /// a page fault and the kernel zeroing a page for every 4 KiB read.
    static FILE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// What else reads a session file's lines while a listing reads them (a search, a store's facts),
/// so that the file is read once: every line, blank ones included, in order, without its `\n` (a
/// final line without one too) and the byte order mark of the first.
pub trait LineVisitor {
    fn visit(&mut self, line: &[u8]);

    /// The file's last line was read: what only reading needs can be let go (a folder's visitors
    /// are all held until the last file is read).
    fn end(&mut self) {}
}

/// Nothing else reads the lines.
impl LineVisitor for () {
    fn visit(&mut self, _: &[u8]) {}
}

/// The listing record of one session file.
pub fn read_session_info(path: &Path) -> Result<SessionInfoRecord> {
    read_session_info_with(path, &mut ())
}

/// The listing record of one session file, whose lines `visitor` reads in the same pass.
pub fn read_session_info_with(
    path: &Path,
    visitor: &mut dyn LineVisitor,
) -> Result<SessionInfoRecord> {
    let file = crate::regular::open_session_file(path)?;
    let mtime = file
        .metadata()
        .and_then(|metadata| metadata.modified())
        .ok();
    FILE_BUFFER.with(|buffer| {
        let mut bytes = buffer.borrow_mut();
        let reader = std::io::Read::take(&file, crate::regular::MAX_IN_MEMORY_BYTES);
        let info = session_info_from(
            path,
            reader,
            &mut bytes,
            LISTING_CHUNK_BYTES,
            mtime,
            visitor,
        );
        if bytes.capacity() > KEPT_BUFFER_BYTES {
            *bytes = Vec::new();
        }
        info
    })
}

/// Bytes a listing reads at a time: it holds one such chunk and the line that runs past its end,
/// never the whole file (a 3 GB session was read whole into memory to be listed).
const LISTING_CHUNK_BYTES: usize = 4 << 20;

/// The listing record of the session file at `path`, read from `reader` `chunk` bytes at a time
/// into `bytes` (which then holds a chunk and the longest line, at most).
fn session_info_from(
    path: &Path,
    mut reader: impl Read,
    bytes: &mut Vec<u8>,
    chunk: usize,
    mtime: Option<SystemTime>,
    visitor: &mut dyn LineVisitor,
) -> Result<SessionInfoRecord> {
    bytes.clear();
    let mut listing = Listing::default();
    let mut first_line = true;
    loop {
        let read = (&mut reader)
            .take(chunk as u64)
            .read_to_end(bytes)
            .map_err(SessionError::io("read", path))?;
        let at_end = read == 0;
        // Every whole line read so far; at the end, the last line too (without its newline).
        let complete = match memchr::memrchr(b'\n', bytes) {
            _ if at_end => bytes.len(),
            Some(newline) => newline + 1,
            None => continue,
        };
        // A last line without its newline that is not whole JSON was cut off by an interrupted
        // append: loading skips it, so the listing does not count it either (QA 2026-12-07: `info`
        // said 29 messages where the session holds 28). Only that line is read whole.
        let cut_start = match memchr::memrchr(b'\n', bytes) {
            _ if !at_end || bytes.ends_with(b"\n") => complete,
            Some(newline) => newline + 1,
            None => 0,
        };
        for line in byte_lines(&bytes[..cut_start], first_line) {
            first_line = false;
            visitor.visit(line);
            listing.line(path, line)?;
        }
        for line in byte_lines(&bytes[cut_start..complete], first_line) {
            first_line = false;
            visitor.visit(line);
            if from_str_repaired::<serde::de::IgnoredAny>(&line_text(line)).is_ok() {
                listing.line(path, line)?;
            }
        }
        bytes.drain(..complete);
        if at_end {
            visitor.end();
            return listing.record(path, mtime);
        }
    }
}

/// The lines of `bytes` (a final line without a newline included), a byte-order mark dropped
/// from the first line when `bytes` starts the file (as reading the whole file drops it).
fn byte_lines(bytes: &[u8], starts_the_file: bool) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let last = (!bytes.is_empty() && !bytes.ends_with(b"\n")).then_some(bytes.len());
    memchr::memchr_iter(b'\n', bytes)
        .chain(last)
        .map(move |end| {
            let first = start == 0 && starts_the_file;
            let line = bytes.get(start..end).unwrap_or_default();
            start = end + 1;
            if first {
                line.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(line)
            } else {
                line
            }
        })
}

/// A line as text, invalid UTF-8 replaced (per line, as reading the whole file replaces it).
fn line_text(line: &[u8]) -> Cow<'_, str> {
    // The fast check first: `from_utf8_lossy` walks valid text several times slower.
    match std::str::from_utf8(line) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// The head of a line for a listing (see [`read_listing_head`]), `None` for a line that is not
/// JSON. Only the strings the head reads are checked to be UTF-8; when one is not, the line is read
/// again with invalid bytes replaced, as the whole-file reader replaces them, and a lone surrogate
/// escape read as U+FFFD (as `ctxkit_protocol::from_str_repaired` reads it).
fn listing_head(line: &[u8]) -> Option<EntryHead<'_>> {
    if let Ok((head, _)) = read_listing_head(line) {
        return Some(head);
    }
    let text = line_text(line);
    let repaired = ctxkit_protocol::repair_lone_surrogates(&text);
    if let (Cow::Borrowed(_), Cow::Borrowed(_)) = (&text, &repaired) {
        // Valid UTF-8 and no lone surrogate: the line is not JSON.
        return None;
    }
    read_listing_head(repaired.as_bytes())
        .ok()
        .map(|(head, _)| head.into_owned())
}

/// The listing record of the session file at `path`, holding `bytes`.
#[cfg(test)]
fn session_info_of(
    path: &Path,
    bytes: &[u8],
    mtime: Option<SystemTime>,
) -> Result<SessionInfoRecord> {
    session_info_from(
        path,
        bytes,
        &mut Vec::new(),
        LISTING_CHUNK_BYTES,
        mtime,
        &mut (),
    )
}

fn not_a_session(path: &Path, reason: &str) -> SessionError {
    SessionError::NotASession {
        path: path.to_owned(),
        line: None,
        reason: reason.to_owned(),
    }
}

/// What a listing has read of a file so far, line by line.
#[derive(Default)]
struct Listing {
    header: Option<Value>,
    message_count: u64,
    first_message: Option<String>,
    name: Option<String>,
    last_activity: Option<f64>,
}

impl Listing {
    /// Reads one line. The first line that parses is the header (as when loading); the others are
    /// read once, by their heads (up to the role of a message the listing only counts), and a line
    /// that is not JSON there is skipped.
    fn line(&mut self, path: &Path, line: &[u8]) -> Result<()> {
        if self.header.is_none() {
            let Ok(header) = from_str_repaired::<Value>(&line_text(line)) else {
                return Ok(());
            };
            if header.get("type").and_then(Value::as_str) != Some("session") {
                return Err(not_a_session(
                    path,
                    "the first line is not a `session` header",
                ));
            }
            self.header = Some(header);
            return Ok(());
        }
        let Some(entry) = listing_head(line) else {
            return Ok(());
        };
        match entry.kind.0.as_deref() {
            Some("session_info") => {
                self.name = entry
                    .name
                    .0
                    .as_deref()
                    .map(js_trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned);
            }
            Some("message") => {
                self.message_count += 1;
                let message = entry.message.unwrap_or_default();
                let role = message.role.0.as_deref();
                if !message.has_content || !matches!(role, Some("user" | "assistant")) {
                    return Ok(());
                }
                let entry_time = entry.timestamp.0.as_deref().and_then(parse_timestamp_ms);
                let time = message.timestamp.0.or(entry_time.map(|ms| ms as f64));
                if let Some(time) = time {
                    self.last_activity =
                        Some(self.last_activity.map_or(time, |latest| latest.max(time)));
                }
                if self.first_message.is_none() && role == Some("user") {
                    // Only this line is read a second time, for the message's text.
                    let text = &*line_text(line);
                    // Context an agent injected (an imported Codex or Claude Code session) is
                    // not what the user asked: the first message is the first one they typed.
                    self.first_message = message_span(text)
                        .and_then(|(start, end)| text.get(start..end))
                        .and_then(message_text)
                        .and_then(listed_first_message);
                }
            }
            Some(_) | None => {}
        }
        Ok(())
    }

    /// The record of the file read.
    fn record(self, path: &Path, mtime: Option<SystemTime>) -> Result<SessionInfoRecord> {
        let header = self
            .header
            .ok_or_else(|| not_a_session(path, "the file holds no JSON lines"))?;
        let header_time = header.get("timestamp").and_then(Value::as_str);
        let header_ms = header_time.and_then(parse_timestamp_ms);
        // As Pi 1.6: the last activity, even when it is older than the header (a fork of an old
        // session, an old file), else the header's time, else the file's.
        let modified = match (self.last_activity.filter(|&time| time > 0.0), header_ms) {
            (Some(time), _) => iso_from_ms(time as i64),
            (None, Some(ms)) => iso_from_ms(ms),
            (None, None) => mtime.map(iso_from_system_time).unwrap_or_default(),
        };
        let string = |key: &str| header.get(key).and_then(Value::as_str).map(str::to_owned);
        // Files before v3 (no `version` is v1) are read migrated, and rewritten as v3 when written to.
        let version = header.get("version").and_then(Value::as_f64).unwrap_or(1.0);
        let format_version = (version < 3.0).then_some(version.max(1.0) as u64);
        Ok(SessionInfoRecord {
            path: path.display().to_string(),
            id: string("id").unwrap_or_default(),
            cwd: string("cwd").unwrap_or_default(),
            name: self.name,
            // As Pi 1.6: only `parentSession`; a v1 header's `branchedFrom` is not a parent.
            parent_session_path: string("parentSession"),
            created: header_ms
                .map(iso_from_ms)
                .or_else(|| header_time.map(str::to_owned))
                .unwrap_or_default(),
            modified,
            message_count: self.message_count,
            first_message: self
                .first_message
                .unwrap_or_else(|| "(no messages)".to_owned()),
            format_version,
        })
    }
}

/// The most characters of a first message a listing carries: a pasted log of megabytes as the
/// first message made every `sessions.list` answer that large (QA 2026-12-07). Longer text is
/// cut there and ends in `…`.
pub const LISTED_FIRST_MESSAGE_CHARS: usize = 2_000;

/// What a listing shows of a user message's text as the session's first message: the text
/// without the context an agent injected (unchanged, as Pi shows it, when it holds none), cut to
/// [`LISTED_FIRST_MESSAGE_CHARS`]; `None` when nothing is left. Every listing (files, a directory
/// store, the database, another agent's sessions) uses this one.
pub fn listed_first_message(text: String) -> Option<String> {
    let stripped = ctxkit_protocol::strip_injected_context(&text);
    let mut shown = if stripped == text {
        text
    } else {
        stripped.trim().to_owned()
    };
    if let Some((cut, _)) = shown.char_indices().nth(LISTED_FIRST_MESSAGE_CHARS) {
        shown.truncate(cut);
        shown.push('…');
    }
    (!shown.is_empty()).then_some(shown)
}

/// The text of a user or assistant message: a string content, or its text blocks joined by a space.
fn message_text(json: &str) -> Option<String> {
    let message: AgentMessage = from_str_repaired(json).ok()?;
    let content = match message {
        AgentMessage::User(user) => user.content,
        AgentMessage::Assistant(assistant) => MessageContent::Blocks(assistant.content),
        AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => return None,
    };
    Some(content.joined_text(" "))
}

fn iso_from_system_time(time: SystemTime) -> String {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|duration| duration.as_millis() as i64)
        .unwrap_or(0);
    iso_from_ms(ms)
}

fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(dir).map_err(SessionError::io("read directory", dir))?;
    let mut files: Vec<PathBuf> = read
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
                && path.is_file()
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Every session in `dir`, newest first, and the files that could not be read. A missing directory
/// lists nothing.
pub fn list_sessions(dir: &Path) -> Result<(Vec<SessionInfoRecord>, Vec<SkippedFile>)> {
    let (sessions, skipped) = list_sessions_with(dir, |_| ())?;
    Ok((
        sessions.into_iter().map(|(info, ())| info).collect(),
        skipped,
    ))
}

/// The sessions of a folder, each with what read its lines, and the files skipped.
pub type ListedWith<V> = (Vec<(SessionInfoRecord, V)>, Vec<SkippedFile>);

/// [`list_sessions`], each file's lines read in the same pass by the visitor `visitor_of` makes for
/// it, which comes back beside the file's record (a file skipped drops its visitor).
pub fn list_sessions_with<V: LineVisitor + Send>(
    dir: &Path,
    visitor_of: impl Fn(&Path) -> V + Sync,
) -> Result<ListedWith<V>> {
    if !dir.exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut sessions = Vec::new();
    let mut skipped = Vec::new();
    // Files are independent: read them on every core, in a stable order.
    let results: Vec<(PathBuf, Result<(SessionInfoRecord, V)>)> = jsonl_files(dir)?
        .into_par_iter()
        .map(|path| {
            let mut visitor = visitor_of(&path);
            let info = read_session_info_with(&path, &mut visitor);
            (path, info.map(|info| (info, visitor)))
        })
        .collect();
    for (path, result) in results {
        match result {
            Ok(listed) => sessions.push(listed),
            Err(error) => skipped.push(SkippedFile { path, error }),
        }
    }
    sort_newest_first(&mut sessions, |(info, _)| info);
    Ok((sessions, skipped))
}

/// Every session in every directory under `sessions_root`, newest first.
pub fn list_all_sessions(
    sessions_root: &Path,
) -> Result<(Vec<SessionInfoRecord>, Vec<SkippedFile>)> {
    let (sessions, skipped) = list_all_sessions_with(sessions_root, |_| ())?;
    Ok((
        sessions.into_iter().map(|(info, ())| info).collect(),
        skipped,
    ))
}

/// [`list_all_sessions`], each file's lines read in the same pass by the visitor `visitor_of` makes
/// for it, as [`list_sessions_with`] does for one folder.
pub fn list_all_sessions_with<V: LineVisitor + Send>(
    sessions_root: &Path,
    visitor_of: impl Fn(&Path) -> V + Sync,
) -> Result<ListedWith<V>> {
    if !sessions_root.exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let read = std::fs::read_dir(sessions_root)
        .map_err(SessionError::io("read directory", sessions_root))?;
    let mut dirs: Vec<PathBuf> = read
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    let mut sessions = Vec::new();
    let mut skipped = Vec::new();
    for dir in dirs {
        let (mut found, mut failed) = list_sessions_with(&dir, &visitor_of)?;
        sessions.append(&mut found);
        skipped.append(&mut failed);
    }
    sort_newest_first(&mut sessions, |(info, _)| info);
    Ok((sessions, skipped))
}

/// Newest first by the later of `modified` and `created`: `modified` is Pi's (the last activity,
/// older than the header in a fork of an old session), but a fork made just now lists as new.
fn sort_newest_first<T>(sessions: &mut [T], info_of: impl Fn(&T) -> &SessionInfoRecord) {
    sessions.sort_by_cached_key(|session| {
        let info = info_of(session);
        let modified = parse_timestamp_ms(&info.modified).unwrap_or(i64::MIN);
        let created = parse_timestamp_ms(&info.created).unwrap_or(i64::MIN);
        std::cmp::Reverse(modified.max(created))
    });
}

/// The session file in `dir` modified most recently whose first line is a session header.
pub fn find_most_recent_session(dir: &Path) -> Option<PathBuf> {
    let files = jsonl_files(dir).ok()?;
    files
        .into_iter()
        .filter(|path| has_session_header(path))
        .filter_map(|path| {
            let modified = std::fs::metadata(&path)
                .and_then(|metadata| metadata.modified())
                .ok()?;
            Some((modified, path))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
}

pub(crate) fn has_session_header(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = crate::regular::open_session_file(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    ctxkit_protocol::from_str_repaired::<Value>(&first).is_ok_and(|header| {
        header.get("type").and_then(Value::as_str) == Some("session")
            && header.get("id").is_some_and(Value::is_string)
    })
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
