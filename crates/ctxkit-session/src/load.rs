//! Reading a session file: lines, header, entry heads, migration. Tolerates what Pi tolerates (blank and
//! malformed lines are skipped) and records every problem; refuses files that are not sessions at all.

use std::path::Path;

use rayon::prelude::*;

use ctxkit_protocol::{CURRENT_SESSION_VERSION, SessionHeader, from_str_repaired};
use serde_json::Value;

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::{HeadError, StoredEntry};
use crate::error::{Result, SessionError};
use crate::index::SessionIndex;
use crate::line::{LineText, LoadedBody, LoadedLine, RawLine, read_lines, strip_byte_order_mark};
use crate::migrate;
use crate::storage::{LoadedSnapshot, current_snapshot};

/// A parsed session file.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    pub(crate) header: SessionHeader,
    /// The entries, indexed as they were read.
    pub(crate) index: SessionIndex,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The version the file had when it was older than v3 (the file needs rewriting before appends).
    pub(crate) migrated_from: Option<u64>,
    /// The size and identity of the file as read.
    pub(crate) snapshot: LoadedSnapshot,
    /// For a file older than v3: the lines that are not entries (unreadable, torn, extra headers),
    /// each with how many records (header and entries) come before it, so a migration keeps them.
    pub(crate) kept_lines: Vec<KeptLine>,
    /// The header's version when it is newer than v3: the file is never written.
    pub(crate) newer_version: Option<u64>,
}

/// A line of an older file that a migration must keep as it is.
#[derive(Debug)]
pub(crate) struct KeptLine {
    /// How many records (the header counting as one) precede it in the file.
    pub(crate) records_before: usize,
    pub(crate) text: LineText,
}

/// Loads the session file at `path`: a file of 8 MiB or more in chunks on all cores (its `message`
/// lines left on disk), indexed one chunk at a time as it is read, unless it is not valid UTF-8 or
/// changes size meanwhile; then, and for smaller files, whole on one thread.
pub(crate) fn load_file(path: &Path) -> Result<LoadedFile> {
    let file = crate::regular::open_session_file(path)?;
    let opened = current_snapshot(&file, path)?;
    let size_hint = file.metadata().map_or(0, |metadata| metadata.len());
    let too_large = |bytes: u64, limit: u64| SessionError::TooLarge {
        path: path.to_owned(),
        bytes,
        limit,
    };
    #[cfg(unix)]
    if size_hint >= crate::chunked::MIN_CHUNKED_BYTES {
        if size_hint > crate::MAX_SESSION_BYTES {
            return Err(too_large(size_hint, crate::MAX_SESSION_BYTES));
        }
        let mut parser = LineParser::new(path, Vec::new());
        // Room for the entries of a file of such lines, so the id table is not grown step by step.
        parser
            .index
            .reserve(usize::try_from(size_hint / ASSUMED_LINE_BYTES).unwrap_or(0));
        if let Some(read) = crate::chunked::read_lines_chunked(
            &file,
            path,
            size_hint,
            crate::body::DEFAULT_CACHE_BYTES,
            &mut |group| parser.push(group),
        )? {
            let mut loaded = parser.finish(read.ends_with_newline)?;
            // What was parsed, even while another process appends.
            loaded.snapshot = LoadedSnapshot {
                bytes: read.bytes,
                inode: opened.inode,
            };
            return Ok(loaded);
        }
    }
    // Chunks are read at offsets, so the file position is still at the start. A file that grows
    // while it is read stops past the in-memory limit (and is refused).
    let mut diagnostics = Vec::new();
    let read = read_lines(
        std::io::Read::take(&file, crate::regular::MAX_IN_MEMORY_BYTES + 1),
        size_hint,
        &mut diagnostics,
    )
    .map_err(SessionError::io("read", path))?;
    if read.bytes > crate::regular::MAX_IN_MEMORY_BYTES {
        return Err(too_large(read.bytes, crate::regular::MAX_IN_MEMORY_BYTES));
    }
    let mut loaded = parse_lines(
        path,
        vec![in_memory(read.lines)],
        read.ends_with_newline,
        diagnostics,
    )?;
    loaded.snapshot = LoadedSnapshot {
        bytes: read.bytes,
        inode: opened.inode,
    };
    Ok(loaded)
}

/// Lines read into memory, as loaded lines.
pub(crate) fn in_memory(lines: Vec<RawLine>) -> Vec<LoadedLine> {
    lines
        .into_iter()
        .map(|line| LoadedLine {
            number: line.number,
            body: LoadedBody::Text(line.text),
        })
        .collect()
}

/// The text of a loaded line, read back from the file when it was left there.
fn line_text(line: LoadedLine) -> Result<RawLine> {
    let text = match line.body {
        LoadedBody::Text(text) => text,
        LoadedBody::Entry(entry) => match entry.memory_raw() {
            Some(text) => LineText::from(text),
            None => LineText::from(&*entry.raw()?),
        },
    };
    Ok(RawLine {
        number: line.number,
        text,
    })
}

/// Parses the lines of a session file (in file order, in groups).
pub(crate) fn parse_lines(
    path: &Path,
    groups: Vec<Vec<LoadedLine>>,
    ends_with_newline: bool,
    diagnostics: Vec<Diagnostic>,
) -> Result<LoadedFile> {
    let mut parser = LineParser::new(path, diagnostics);
    for group in groups {
        parser.push(group)?;
    }
    parser.finish(ends_with_newline)
}

/// What the header line says.
struct Header {
    header: SessionHeader,
    version: f64,
    migrated_from: Option<u64>,
    newer_version: Option<u64>,
}

/// Parses the lines of a session file as they are read, one group at a time (file order): each group
/// is indexed and freed before the next arrives, so memory never holds the lines of the whole file
/// next to their entries.
pub(crate) struct LineParser<'p> {
    path: &'p Path,
    diagnostics: Vec<Diagnostic>,
    header: Option<Header>,
    /// Lines before the header that are not JSON (kept by a migration).
    before_header: Vec<LineText>,
    /// The lines of an older file, migrated together once all are read.
    to_migrate: Vec<Vec<LoadedLine>>,
    index: SessionIndex,
    kept_lines: Vec<KeptLine>,
    last_number: Option<usize>,
}

impl<'p> LineParser<'p> {
    pub(crate) fn new(path: &'p Path, diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            path,
            diagnostics,
            header: None,
            before_header: Vec::new(),
            to_migrate: Vec::new(),
            index: SessionIndex::default(),
            kept_lines: Vec::new(),
            last_number: None,
        }
    }

    fn not_a_session(&self, line: Option<usize>, reason: &str) -> SessionError {
        SessionError::NotASession {
            path: self.path.to_owned(),
            line,
            reason: reason.to_owned(),
        }
    }

    /// Takes the next group of lines.
    pub(crate) fn push(&mut self, group: Vec<LoadedLine>) -> Result<()> {
        if let Some(last) = group.last() {
            self.last_number = Some(last.number);
        }
        let mut lines = group.into_iter();
        if self.header.is_none() {
            for line in lines.by_ref() {
                // The first line that parses is the header, as in Pi.
                let mut line = line_text(line)?;
                if line.number == 1 {
                    strip_byte_order_mark(std::slice::from_mut(&mut line));
                }
                match from_str_repaired::<Value>(line.text.as_str()) {
                    Ok(value) => {
                        self.header = Some(self.read_header(line.number, value)?);
                        break;
                    }
                    Err(error) => {
                        self.before_header.push(line.text.clone());
                        self.diagnostics.push(Diagnostic {
                            line: Some(line.number),
                            kind: DiagnosticKind::InvalidJson {
                                message: error.to_string(),
                            },
                        });
                    }
                }
            }
        }
        let rest: Vec<LoadedLine> = lines.collect();
        match &self.header {
            None => Ok(()),
            Some(header) if header.migrated_from.is_some() => {
                self.to_migrate.push(rest);
                Ok(())
            }
            Some(_) => {
                self.index_group(rest, false);
                Ok(())
            }
        }
    }

    fn read_header(&mut self, header_line: usize, header_value: Value) -> Result<Header> {
        if header_value.get("type").and_then(Value::as_str) != Some("session") {
            return Err(self.not_a_session(
                Some(header_line),
                "the first line is not a `session` header",
            ));
        }
        if !header_value.get("id").is_some_and(Value::is_string) {
            return Err(self.not_a_session(Some(header_line), "the header `id` is not a string"));
        }
        let version = header_value
            .get("version")
            .and_then(Value::as_f64)
            .unwrap_or(1.0);
        let header: SessionHeader = serde_json::from_value(lenient_header(header_value))
            .map_err(|error| self.not_a_session(Some(header_line), &error.to_string()))?;
        let migrated_from = (version < CURRENT_SESSION_VERSION as f64).then_some(version as u64);
        let newer_version = header
            .version
            .filter(|&version| version > CURRENT_SESSION_VERSION);
        if let Some(version) = newer_version {
            self.diagnostics.push(Diagnostic {
                line: Some(header_line),
                kind: DiagnosticKind::NewerVersion { version },
            });
        }
        Ok(Header {
            header,
            version,
            migrated_from,
            newer_version,
        })
    }

    /// Indexes the entry lines of one group; `keep_texts` keeps the lines that are not entries (a
    /// migration writes them back).
    fn index_group(&mut self, group: Vec<LoadedLine>, keep_texts: bool) {
        // Lines read in chunks arrive indexed already, but for the few that are not messages.
        let texts = group
            .iter()
            .filter(|line| matches!(line.body, LoadedBody::Text(_)))
            .count();
        if texts < PARALLEL_TEXTS {
            for line in group {
                let (number, text, parsed) = index_line(line, keep_texts);
                self.take(number, text, parsed);
            }
            return;
        }
        // Reading heads is independent per line: spread it over the cores, keep file order.
        let parsed: Vec<(usize, Option<LineText>, Result<StoredEntry, HeadError>)> = group
            .into_par_iter()
            .with_min_len(256)
            .map(|line| index_line(line, keep_texts))
            .collect();
        for (number, text, parsed) in parsed {
            self.take(number, text, parsed);
        }
    }

    /// Takes one line's entry (or the reason it is none) in file order.
    fn take(
        &mut self,
        number: usize,
        text: Option<LineText>,
        parsed: Result<StoredEntry, HeadError>,
    ) {
        if parsed
            .as_ref()
            .map_or(true, |entry| entry.type_name() == "session")
            && let Some(text) = text
        {
            self.kept_lines.push(KeptLine {
                records_before: 1 + self.index.entries().len(),
                text,
            });
        }
        match parsed {
            Ok(entry) if entry.type_name() == "session" => {
                self.diagnostics.push(Diagnostic {
                    line: Some(number),
                    kind: DiagnosticKind::ExtraHeader,
                });
            }
            Ok(entry) => self.index.add_loaded(entry, &mut self.diagnostics),
            Err(error) => self.diagnostics.push(Diagnostic {
                line: Some(number),
                kind: head_error_kind(error),
            }),
        }
    }

    /// The parsed file; `ends_with_newline` tells whether its last line is whole.
    pub(crate) fn finish(mut self, ends_with_newline: bool) -> Result<LoadedFile> {
        let Some(header) = self.header.take() else {
            return Err(self.not_a_session(None, "the file holds no JSON lines"));
        };
        let Header {
            mut header,
            version,
            migrated_from,
            newer_version,
        } = header;
        if migrated_from.is_some() {
            // Older files are rewritten on first write: their lines are all read into memory.
            let mut texts = std::mem::take(&mut self.to_migrate)
                .into_iter()
                .flatten()
                .map(line_text)
                .collect::<Result<Vec<RawLine>>>()?;
            migrate::migrate_lines(&mut texts, version);
            header.version = Some(CURRENT_SESSION_VERSION);
            let before_header = std::mem::take(&mut self.before_header);
            self.kept_lines
                .extend(before_header.into_iter().map(|text| KeptLine {
                    records_before: 0,
                    text,
                }));
            self.index_group(in_memory(texts), true);
        }
        // A last line that is not JSON and has no newline was cut off while it was written.
        if !ends_with_newline
            && let Some(diagnostic) = self.diagnostics.last_mut()
            && diagnostic.line.is_some()
            && diagnostic.line == self.last_number
            && let DiagnosticKind::InvalidJson { message } = &diagnostic.kind
        {
            diagnostic.kind = DiagnosticKind::TornLastLine {
                message: message.clone(),
            };
        }
        self.index.complete(&mut self.diagnostics);
        Ok(LoadedFile {
            header,
            index: self.index,
            diagnostics: self.diagnostics,
            migrated_from,
            snapshot: LoadedSnapshot {
                bytes: 0,
                inode: None,
            },
            kept_lines: self.kept_lines,
            newer_version,
        })
    }
}

/// The line length assumed to size the index of a large file before it is read (Pi's lines with tool
/// output are a few KiB; a file of shorter lines grows the index as it goes).
const ASSUMED_LINE_BYTES: u64 = 2048;

/// Below this many lines to parse in a group, they are parsed on the calling thread.
const PARALLEL_TEXTS: usize = 64;

/// One line's entry: indexed already when it was left on disk, else parsed from its text (kept
/// too with `keep_texts`, for a migration to write back).
fn index_line(
    line: LoadedLine,
    keep_texts: bool,
) -> (usize, Option<LineText>, Result<StoredEntry, HeadError>) {
    match line.body {
        LoadedBody::Text(text) => {
            let kept = keep_texts.then(|| text.clone());
            (line.number, kept, StoredEntry::from_line(text, line.number))
        }
        LoadedBody::Entry(entry) => (line.number, None, Ok(entry)),
    }
}

/// The diagnostic for a line whose head could not be read.
fn head_error_kind(error: HeadError) -> DiagnosticKind {
    match error {
        HeadError::Json(message) => DiagnosticKind::InvalidJson { message },
        HeadError::NotAnObject => DiagnosticKind::NotAnObject,
        HeadError::NoType => DiagnosticKind::NoType,
        HeadError::NoId => DiagnosticKind::NoId,
    }
}

/// Drops header fields of the wrong type so the typed header loads (they are optional in practice).
fn lenient_header(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        for key in ["timestamp", "cwd"] {
            if object.get(key).is_some_and(|field| !field.is_string()) {
                object.shift_remove(key);
            }
        }
        if object
            .get("parentSession")
            .is_some_and(|field| !field.is_string())
        {
            object.shift_remove("parentSession");
        }
        if object.get("version").is_some_and(|field| !field.is_u64()) {
            object.shift_remove("version");
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadedFile> {
        let mut diagnostics = Vec::new();
        let read = read_lines(text.as_bytes(), 0, &mut diagnostics).unwrap();
        parse_lines(
            Path::new("s.jsonl"),
            vec![in_memory(read.lines)],
            read.ends_with_newline,
            diagnostics,
        )
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#;

    #[test]
    fn refuses_files_that_are_not_sessions() {
        assert!(matches!(
            parse(""),
            Err(SessionError::NotASession { line: None, .. })
        ));
        assert!(matches!(
            parse("{\"type\":\"message\"}\n"),
            Err(SessionError::NotASession { line: Some(1), .. })
        ));
        assert!(matches!(
            parse("\n{\"type\":\"session\",\"id\":5}\n"),
            Err(SessionError::NotASession { line: Some(2), .. })
        ));
    }

    #[test]
    fn lines_handed_over_in_groups_parse_as_one_list_does() {
        let text = format!(
            "not json\n{HEADER}\n{}\nbad\n{}\n{{\"type\":\"label\",\"id\":\"b",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"session","id":"again"}"#,
        );
        let whole = parse(&text).unwrap();
        let mut diagnostics = Vec::new();
        let read = read_lines(text.as_bytes(), 0, &mut diagnostics).unwrap();
        // One group per line, and an empty group between.
        let mut groups: Vec<Vec<LoadedLine>> = Vec::new();
        for line in in_memory(read.lines) {
            groups.push(vec![line]);
            groups.push(Vec::new());
        }
        let grouped = parse_lines(Path::new("s.jsonl"), groups, false, diagnostics).unwrap();
        let ids = |loaded: &LoadedFile| -> Vec<String> {
            loaded
                .index
                .entries()
                .iter()
                .map(|entry| entry.id().to_owned())
                .collect()
        };
        assert_eq!(ids(&grouped), ids(&whole));
        assert_eq!(ids(&grouped), vec!["a".to_owned()]);
        let kinds = |loaded: &LoadedFile| -> Vec<String> {
            loaded
                .diagnostics
                .iter()
                .map(|d| format!("{:?} {:?}", d.line, d.kind))
                .collect()
        };
        assert_eq!(kinds(&grouped), kinds(&whole));
        assert!(matches!(
            grouped.diagnostics.last().map(|d| &d.kind),
            Some(DiagnosticKind::TornLastLine { .. })
        ));
        assert!(matches!(
            grouped.diagnostics.first().map(|d| &d.kind),
            Some(DiagnosticKind::InvalidJson { .. })
        ));
    }

    #[test]
    fn skips_and_reports_bad_lines_and_torn_tail() {
        let text = format!(
            "{HEADER}\r\n\nnot json\n{}\n{{\"type\":\"label\",\"id\":\"b",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#
        );
        let loaded = parse(&text).unwrap();
        assert_eq!(loaded.index.entries().len(), 1);
        let kinds: Vec<_> = loaded
            .diagnostics
            .iter()
            .map(|d| (d.line, d.kind.clone()))
            .collect();
        assert!(matches!(
            kinds[0],
            (Some(3), DiagnosticKind::InvalidJson { .. })
        ));
        assert!(matches!(
            kinds[1],
            (Some(5), DiagnosticKind::TornLastLine { .. })
        ));
    }
}
