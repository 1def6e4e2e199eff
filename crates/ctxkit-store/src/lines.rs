//! The lines of a session as a store keeps them: the header line and one line per entry, each kept
//! byte for byte, with the few facts a store indexes (id, parent, type, name, first message, time).

use ctxkit_protocol::from_str_repaired;
use serde_json::Value;

use crate::error::{Result, StoreError};

/// A session's lines, split: the header line and the entry lines after it (without `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLines {
    pub header: String,
    pub entries: Vec<String>,
}

/// What a store reads from a header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderFacts {
    pub id: String,
    pub cwd: String,
    pub timestamp: String,
    pub parent_session: Option<String>,
}

/// What a store indexes of one entry line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryFacts {
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: String,
    /// The name a `session_info` entry sets.
    pub name: Option<String>,
    /// `user` or `assistant` for those messages.
    pub role: Option<String>,
    /// The text of a user message as a listing shows it (its first message): without injected
    /// context, `None` when nothing is left.
    pub user_text: Option<String>,
    pub timestamp_ms: Option<i64>,
}

impl SessionLines {
    /// Splits a JSONL session (a v3 file's bytes). Every line is kept as it is (a final line
    /// without `\n` too); empty lines are dropped, as the session reader ignores them.
    pub fn parse(what: &str, bytes: &[u8]) -> Result<Self> {
        let invalid = |reason: String| StoreError::InvalidSession {
            what: what.to_owned(),
            reason,
        };
        let text =
            std::str::from_utf8(bytes).map_err(|error| invalid(format!("not UTF-8 ({error})")))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.split('\n').filter(|line| !line.trim().is_empty());
        let header = lines
            .next()
            .ok_or_else(|| invalid("empty".to_owned()))?
            .to_owned();
        header_facts(&header).map_err(|reason| invalid(format!("line 1: {reason}")))?;
        let entries: Vec<String> = lines.map(str::to_owned).collect();
        Ok(Self { header, entries })
    }

    /// The same session with its header's `parentSession` set to `parent` (a fork stored under
    /// its own id names its parent by the parent's id, as stored sessions are named).
    pub fn with_parent_session(mut self, parent: &str) -> Result<Self> {
        let mut header = read_json(&self.header).map_err(|reason| StoreError::InvalidSession {
            what: "the header".to_owned(),
            reason,
        })?;
        let Some(fields) = header.as_object_mut() else {
            return Err(StoreError::InvalidSession {
                what: "the header".to_owned(),
                reason: "not a JSON object".to_owned(),
            });
        };
        fields.insert("parentSession".to_owned(), Value::from(parent));
        self.header = header.to_string();
        Ok(self)
    }

    /// The JSONL bytes: the header and every entry, each ending in `\n`.
    pub fn to_jsonl(&self) -> Vec<u8> {
        let size = self.header.len()
            + 1
            + self
                .entries
                .iter()
                .map(|line| line.len() + 1)
                .sum::<usize>();
        let mut bytes = Vec::with_capacity(size);
        for line in std::iter::once(&self.header).chain(&self.entries) {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    }
}

/// A JSONL session read a line at a time, split as [`SessionLines::parse`] splits a whole file:
/// a byte order mark before the first line is dropped, so are empty lines, and every other line is
/// kept as it is (without its `\n`; a final line without one too). A file of a million entries is
/// never held whole.
pub struct JsonlLines<R> {
    reader: R,
    what: String,
    /// The number of the line read last (1-based).
    line: usize,
    buffer: Vec<u8>,
}

impl JsonlLines<std::io::BufReader<std::fs::File>> {
    /// The lines of the file at `path`.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        #[cfg(test)]
        FILE_OPENS.with(|opens| opens.set(opens.get() + 1));
        let file = std::fs::File::open(path).map_err(StoreError::io("read", path))?;
        Ok(Self::new(
            path.display().to_string(),
            std::io::BufReader::with_capacity(1 << 16, file),
        ))
    }
}

impl<R: std::io::BufRead> JsonlLines<R> {
    /// Lines of `reader`; `what` names it in errors (a path).
    pub fn new(what: impl Into<String>, reader: R) -> Self {
        Self {
            reader,
            what: what.into(),
            line: 0,
            buffer: Vec::new(),
        }
    }

    /// The next line that is not empty, `None` at the end; a line that is not UTF-8 is refused
    /// with its number.
    pub fn next_line(&mut self) -> Result<Option<String>> {
        loop {
            self.buffer.clear();
            let read = self
                .reader
                .read_until(b'\n', &mut self.buffer)
                .map_err(StoreError::io("read", std::path::Path::new(&self.what)))?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            if self.buffer.last() == Some(&b'\n') {
                self.buffer.pop();
            }
            let mut bytes = std::mem::take(&mut self.buffer);
            if self.line == 1 && bytes.starts_with("\u{feff}".as_bytes()) {
                bytes.drain(.."\u{feff}".len());
            }
            let text = String::from_utf8(bytes).map_err(|error| StoreError::NotUtf8 {
                what: self.what.clone(),
                line: self.line,
                reason: error.utf8_error().to_string(),
            })?;
            if !text.trim().is_empty() {
                return Ok(Some(text));
            }
            self.buffer = text.into_bytes();
        }
    }

    /// The next entry line and its facts, `None` at the end; a line that is not an entry (a
    /// damaged or torn line) is refused with its number.
    pub fn next_entry(&mut self) -> Result<Option<(String, EntryFacts)>> {
        let Some(line) = self.next_line()? else {
            return Ok(None);
        };
        let facts = entry_facts(&line).map_err(|reason| StoreError::DamagedLine {
            what: self.what.clone(),
            line: self.line,
            reason,
        })?;
        Ok(Some((line, facts)))
    }

    /// The header line, checked: the first line must be a v3 session header.
    pub fn header(&mut self) -> Result<(String, HeaderFacts)> {
        let invalid = |what: &str, reason: String| StoreError::InvalidSession {
            what: what.to_owned(),
            reason,
        };
        let header = self
            .next_line()?
            .ok_or_else(|| invalid(&self.what, "empty".to_owned()))?;
        let facts = header_facts(&header)
            .map_err(|reason| invalid(&self.what, format!("line 1: {reason}")))?;
        Ok((header, facts))
    }
}

#[cfg(test)]
thread_local! {
    /// How many files this thread opened to read a line at a time: tests count the reads of a file.
    pub(crate) static FILE_OPENS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// How many lines this thread read as a whole `Value`: tests count the lines a listing builds.
    pub(crate) static VALUE_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A line's JSON as the session reader reads it (`ctxkit_protocol::from_str_repaired`: a lone
/// surrogate, which Pi writes when it cuts a string inside an emoji, is read, not refused), so a
/// store takes every line `ctxkit_session::Session::open` reads as an entry.
fn read_json(line: &str) -> Result<Value, String> {
    #[cfg(test)]
    VALUE_READS.with(|reads| reads.set(reads.get() + 1));
    from_str_repaired(line).map_err(|error| format!("not JSON ({error})"))
}

/// The facts of a header line, or why it is not a v3 session header.
pub fn header_facts(line: &str) -> Result<HeaderFacts, String> {
    let value = read_json(line)?;
    if value.get("type").and_then(Value::as_str) != Some("session") {
        return Err("the first line is not a session header".to_owned());
    }
    let version = value.get("version").and_then(Value::as_u64).unwrap_or(1);
    let supported = ctxkit_protocol::CURRENT_SESSION_VERSION;
    if version > supported {
        // `ctxkit migrate` refuses such a file too: only a newer ctxkit can store it.
        return Err(format!(
            "written by a newer version (session format v{version}; stores hold \
             v{supported} sessions); use a newer ctxkit to store it"
        ));
    }
    if version < supported {
        return Err(format!(
            "format version {version}; stores hold v{supported} sessions (run `ctxkit migrate` first)"
        ));
    }
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(HeaderFacts {
        id: text("id").ok_or("the header has no string `id`")?,
        cwd: text("cwd").unwrap_or_default(),
        timestamp: text("timestamp").unwrap_or_default(),
        parent_session: text("parentSession"),
    })
}

/// The facts of an entry line, or why it is not an entry (a JSON object with a string `type`).
/// Read in one pass that builds nothing but the facts (`ctxkit_session::entry_line_facts`); a line
/// that pass refuses is read as a `Value` (`entry_facts_of_value`), which says why.
pub fn entry_facts(line: &str) -> Result<EntryFacts, String> {
    if line.contains('\n') {
        return Err("an entry is one line".to_owned());
    }
    match ctxkit_session::entry_line_facts(line) {
        Ok(facts) if facts.kind.is_some() => Ok(read_facts(facts)),
        _ => entry_facts_of_value(line),
    }
}

/// The [`EntryFacts`] of a line's fields.
fn read_facts(line: ctxkit_session::EntryLineFacts) -> EntryFacts {
    let mut facts = EntryFacts {
        id: line.id,
        parent_id: line.parent_id,
        timestamp_ms: line
            .timestamp
            .as_deref()
            .and_then(ctxkit_session::parse_timestamp_ms),
        kind: line.kind.unwrap_or_default(),
        ..EntryFacts::default()
    };
    match facts.kind.as_str() {
        "session_info" => facts.name = line.name,
        "message" => {
            if let Some(role @ ("user" | "assistant")) = line.role.as_deref() {
                facts.role = Some(role.to_owned());
                // The message's own time, as the file listing uses it.
                if let Some(ms) = line.message_timestamp {
                    facts.timestamp_ms = Some(ms);
                }
            }
            // As the file listing shows it: without the context an agent injected.
            facts.user_text = line.user_text;
        }
        _ => {}
    }
    facts
}

/// The facts of an entry line read from its `Value` (how every line was read before
/// [`entry_facts`]'s one pass).
pub(crate) fn entry_facts_of_value(line: &str) -> Result<EntryFacts, String> {
    let value = read_json(line)?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let kind = text("type").ok_or("no string `type`")?;
    let mut facts = EntryFacts {
        id: text("id"),
        parent_id: text("parentId"),
        timestamp_ms: object
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(ctxkit_session::parse_timestamp_ms),
        kind,
        ..EntryFacts::default()
    };
    match facts.kind.as_str() {
        "session_info" => facts.name = text("name"),
        "message" => {
            let message = object.get("message");
            let role = message
                .and_then(|message| message.get("role"))
                .and_then(Value::as_str);
            if let Some(role @ ("user" | "assistant")) = role {
                facts.role = Some(role.to_owned());
                // The message's own time, as the file listing uses it.
                if let Some(ms) = message
                    .and_then(|message| message.get("timestamp"))
                    .and_then(Value::as_i64)
                {
                    facts.timestamp_ms = Some(ms);
                }
            }
            if role == Some("user") {
                // As the file listing shows it: without the context an agent injected.
                facts.user_text = message
                    .and_then(|message| message.get("content"))
                    .map(content_text)
                    .and_then(ctxkit_session::listed_first_message);
            }
        }
        _ => {}
    }
    Ok(facts)
}

/// The text of a message's content: a string, or the text blocks joined by a space.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => String::new(),
    }
}

/// The next of a session's entry lines (numbered from 0) with its facts, as an import of the
/// session given as lines reads them; a line that is not an entry is refused with its position.
pub(crate) fn next_checked<'a>(
    entries: &mut impl Iterator<Item = (usize, &'a String)>,
) -> Result<Option<(&'a String, EntryFacts)>> {
    let Some((index, line)) = entries.next() else {
        return Ok(None);
    };
    let facts = entry_facts(line).map_err(|reason| StoreError::InvalidSession {
        what: format!("entry {} of the session to import", index + 1),
        reason,
    })?;
    Ok(Some((line, facts)))
}

/// Checks lines to append: each one entry line.
pub fn check_entries(id: &str, lines: &[String]) -> Result<Vec<EntryFacts>> {
    lines
        .iter()
        .enumerate()
        .map(|(position, line)| check_entry(id, position + 1, line))
        .collect()
}

/// Checks the `position`th (1-based) line appended to session `id`: one entry line.
pub(crate) fn check_entry(id: &str, position: usize, line: &str) -> Result<EntryFacts> {
    entry_facts(line).map_err(|reason| StoreError::InvalidSession {
        what: format!("entry {position} appended to session `{id}`"),
        reason,
    })
}

#[cfg(test)]
#[path = "facts_tests.rs"]
mod facts_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_lines_byte_for_byte() {
        let bytes = b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n{\"type\":\"message\", \"id\":\"a\",\"parentId\":null}\n\n{\"type\":\"x\"}";
        let lines = SessionLines::parse("test", bytes).unwrap();
        assert_eq!(lines.entries.len(), 2);
        assert_eq!(
            lines.entries[0],
            "{\"type\":\"message\", \"id\":\"a\",\"parentId\":null}"
        );
        let mut expected = bytes.to_vec();
        expected.retain(|_| true);
        let text = String::from_utf8(lines.to_jsonl()).unwrap();
        assert_eq!(text.lines().count(), 3);
    }

    /// Every line `JsonlLines` reads, or its error.
    fn streamed(bytes: &[u8]) -> Result<SessionLines> {
        let mut lines = JsonlLines::new("test", std::io::BufReader::with_capacity(7, bytes));
        let (header, _) = lines.header()?;
        let mut entries = Vec::new();
        while let Some(line) = lines.next_line()? {
            entries.push(line);
        }
        Ok(SessionLines { header, entries })
    }

    #[test]
    fn lines_read_one_at_a_time_are_the_lines_of_the_whole_file() {
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"/p\"}";
        let cases: Vec<Vec<u8>> = vec![
            format!("{header}\n{{\"type\":\"a\"}}\n").into_bytes(),
            // A byte order mark, blank lines, `\r\n`, a last line without `\n`.
            format!(
                "\u{feff}{header}\r\n\n  \n{{\"type\":\"a\", \"t\":\"é\"}}\r\n\n{{\"type\":\"b\"}}"
            )
            .into_bytes(),
            format!("\u{feff}\n{header}\n").into_bytes(),
        ];
        for bytes in cases {
            assert_eq!(
                streamed(&bytes).unwrap(),
                SessionLines::parse("test", &bytes).unwrap(),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
        for bad in [&b""[..], b"\n\n", b"{\"type\":\"message\"}\n"] {
            assert!(streamed(bad).is_err());
            assert!(SessionLines::parse("test", bad).is_err());
        }
        let mut not_utf8 = format!("{header}\n{{\"type\":\"a\"}}\n").into_bytes();
        not_utf8.extend_from_slice(b"{\"type\":\"\xff\"}\n");
        let error = streamed(&not_utf8).unwrap_err().to_string();
        assert!(error.contains("line 3: not UTF-8"), "{error}");
        assert!(
            matches!(
                streamed(&not_utf8),
                Err(StoreError::NotUtf8 { line: 3, .. })
            ),
            "{error}"
        );
    }

    #[test]
    fn refuses_what_is_not_a_v3_session() {
        assert!(SessionLines::parse("t", b"").is_err());
        assert!(SessionLines::parse("t", b"{\"type\":\"message\"}\n").is_err());
        assert!(SessionLines::parse("t", b"{\"type\":\"session\",\"id\":\"x\"}\n").is_err());
        assert!(entry_facts("[1]").is_err());
        assert!(entry_facts("{\"id\":\"a\"}").is_err());
    }

    #[test]
    fn sends_only_an_older_file_to_migrate() {
        let header = |version: u64| {
            format!(r#"{{"type":"session","version":{version},"id":"s","cwd":"/p"}}"#)
        };
        let older = header_facts(&header(2)).unwrap_err();
        assert!(older.contains("run `ctxkit migrate` first"), "{older}");
        // `ctxkit migrate` refuses a newer file: the hint must not send the user there.
        for version in [4, 99] {
            let newer = header_facts(&header(version)).unwrap_err();
            assert!(!newer.contains("migrate"), "{newer}");
            assert!(
                newer.contains(&format!(
                    "written by a newer version (session format v{version}"
                )),
                "{newer}"
            );
        }
        assert!(header_facts(&header(3)).is_ok());
    }

    #[test]
    fn reads_listing_facts() {
        let facts = entry_facts(r#"{"type":"message","id":"a","parentId":"b","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"fix"},{"type":"text","text":"it"}]}}"#).unwrap();
        assert_eq!(facts.role.as_deref(), Some("user"));
        assert_eq!(facts.user_text.as_deref(), Some("fix it"));
        assert_eq!(facts.parent_id.as_deref(), Some("b"));
        assert!(facts.timestamp_ms.is_some());
        let named = entry_facts(r#"{"type":"session_info","id":"c","name":"parser"}"#).unwrap();
        assert_eq!(named.name.as_deref(), Some("parser"));
    }
}
