//! Reading a session file: lines, header, entry heads, migration. Tolerates what Pi tolerates (blank and
//! malformed lines are skipped) and records every problem; refuses files that are not sessions at all.

use std::path::Path;

use rayon::prelude::*;

use ctxkit_protocol::{CURRENT_SESSION_VERSION, SessionHeader, from_str_repaired};
use serde_json::Value;

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::{HeadError, StoredEntry};
use crate::error::{Result, SessionError};
use crate::line::{LineText, LoadedBody, LoadedLine, RawLine, read_lines, strip_byte_order_mark};
use crate::migrate;
use crate::storage::{LoadedSnapshot, current_snapshot};

/// A parsed session file.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    pub(crate) header: SessionHeader,
    pub(crate) entries: Vec<StoredEntry>,
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

/// Loads the session file at `path`.
pub(crate) fn load_file(path: &Path) -> Result<LoadedFile> {
    let file = crate::regular::open_session_file(path)?;
    let opened = current_snapshot(&file, path)?;
    let size_hint = file.metadata().map_or(0, |metadata| metadata.len());
    let mut diagnostics = Vec::new();
    let read = read_file_lines(&file, path, size_hint, &mut diagnostics)
        .map_err(SessionError::io("read", path))?;
    let limit = if read.in_memory {
        crate::regular::MAX_IN_MEMORY_BYTES
    } else {
        crate::MAX_SESSION_BYTES
    };
    if read.bytes > limit {
        return Err(SessionError::TooLarge {
            path: path.to_owned(),
            bytes: read.bytes,
            limit,
        });
    }
    let mut loaded = parse_lines(path, read.lines, read.ends_with_newline, diagnostics)?;
    // What was parsed, even while another process appends.
    loaded.snapshot = LoadedSnapshot {
        bytes: read.bytes,
        inode: opened.inode,
    };
    Ok(loaded)
}

/// The lines of a file, with whether they were all read into memory.
struct FileLines {
    /// In file order, in groups (see [`crate::chunked::LoadedLines`]).
    lines: Vec<Vec<LoadedLine>>,
    ends_with_newline: bool,
    bytes: u64,
    in_memory: bool,
}

/// The lines of `file`: a large file in chunks on all cores (its large message lines left on disk),
/// unless it is not valid UTF-8 or changes size meanwhile; then, and for smaller files, whole on one
/// thread.
fn read_file_lines(
    file: &std::fs::File,
    path: &Path,
    size_hint: u64,
    diagnostics: &mut Vec<Diagnostic>,
) -> std::io::Result<FileLines> {
    #[cfg(unix)]
    if size_hint >= crate::chunked::MIN_CHUNKED_BYTES
        && let Some(read) = crate::chunked::read_lines_chunked(
            file,
            path,
            size_hint,
            crate::body::DEFAULT_CACHE_BYTES,
        )?
    {
        return Ok(FileLines {
            lines: read.lines,
            ends_with_newline: read.ends_with_newline,
            bytes: read.bytes,
            in_memory: false,
        });
    }
    #[cfg(not(unix))]
    let _ = path;
    // Chunks are read at offsets, so the file position is still at the start. A file that grows
    // while it is read stops past the in-memory limit (and is refused by the caller).
    let read = read_lines(
        std::io::Read::take(file, crate::regular::MAX_IN_MEMORY_BYTES + 1),
        size_hint,
        diagnostics,
    )?;
    Ok(FileLines {
        lines: vec![in_memory(read.lines)],
        ends_with_newline: read.ends_with_newline,
        bytes: read.bytes,
        in_memory: true,
    })
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

/// Parses the lines of a session file (in file order, in groups: each group is indexed and freed
/// before the next).
pub(crate) fn parse_lines(
    path: &Path,
    groups: Vec<Vec<LoadedLine>>,
    ends_with_newline: bool,
    mut diagnostics: Vec<Diagnostic>,
) -> Result<LoadedFile> {
    let not_a_session = |line: Option<usize>, reason: &str| SessionError::NotASession {
        path: path.to_owned(),
        line,
        reason: reason.to_owned(),
    };
    let last_number = groups
        .iter()
        .rev()
        .find_map(|group| group.last())
        .map(|line| line.number);
    let mut header: Option<(usize, Value)> = None;
    let mut before_header = Vec::new();
    let mut groups = groups.into_iter();
    let mut bodies: Vec<Vec<LoadedLine>> = Vec::new();
    'header: for group in groups.by_ref() {
        let mut lines = group.into_iter();
        while let Some(line) = lines.next() {
            // The first line that parses is the header, as in Pi.
            let mut line = line_text(line)?;
            if line.number == 1 {
                strip_byte_order_mark(std::slice::from_mut(&mut line));
            }
            match from_str_repaired::<Value>(line.text.as_str()) {
                Ok(value) => {
                    header = Some((line.number, value));
                    bodies.push(lines.collect());
                    break 'header;
                }
                Err(error) => diagnostics.push({
                    before_header.push(line.text.clone());
                    Diagnostic {
                        line: Some(line.number),
                        kind: DiagnosticKind::InvalidJson {
                            message: error.to_string(),
                        },
                    }
                }),
            }
        }
    }
    bodies.extend(groups);
    let Some((header_line, header_value)) = header else {
        return Err(not_a_session(None, "the file holds no JSON lines"));
    };
    if header_value.get("type").and_then(Value::as_str) != Some("session") {
        return Err(not_a_session(
            Some(header_line),
            "the first line is not a `session` header",
        ));
    }
    if !header_value.get("id").is_some_and(Value::is_string) {
        return Err(not_a_session(
            Some(header_line),
            "the header `id` is not a string",
        ));
    }
    let version = header_value
        .get("version")
        .and_then(Value::as_f64)
        .unwrap_or(1.0);
    let mut header: SessionHeader = serde_json::from_value(lenient_header(header_value))
        .map_err(|error| not_a_session(Some(header_line), &error.to_string()))?;

    let migrated_from = (version < CURRENT_SESSION_VERSION as f64).then_some(version as u64);
    let newer_version = header
        .version
        .filter(|&version| version > CURRENT_SESSION_VERSION);
    if let Some(version) = newer_version {
        diagnostics.push(Diagnostic {
            line: Some(header_line),
            kind: DiagnosticKind::NewerVersion { version },
        });
    }
    let mut kept_lines = Vec::new();
    if migrated_from.is_some() {
        // Older files are rewritten on first write: their lines are all read into memory.
        let mut texts = bodies
            .into_iter()
            .flatten()
            .map(line_text)
            .collect::<Result<Vec<RawLine>>>()?;
        migrate::migrate_lines(&mut texts, version);
        bodies = vec![in_memory(texts)];
        header.version = Some(CURRENT_SESSION_VERSION);
        kept_lines.extend(before_header.into_iter().map(|text| KeptLine {
            records_before: 0,
            text,
        }));
    }
    let keep_texts = migrated_from.is_some();

    let count = bodies.iter().map(Vec::len).sum();
    let mut entries = Vec::with_capacity(count);
    for group in bodies {
        // Reading heads is independent per line: spread it over the cores, keep file order.
        let parsed: Vec<(usize, Option<LineText>, Result<StoredEntry, HeadError>)> = group
            .into_par_iter()
            .with_min_len(256)
            .map(|line| match line.body {
                LoadedBody::Text(text) => {
                    let kept = keep_texts.then(|| text.clone());
                    (line.number, kept, StoredEntry::from_line(text, line.number))
                }
                LoadedBody::Entry(entry) => (line.number, None, Ok(entry)),
            })
            .collect();
        for (number, text, parsed) in parsed {
            if parsed
                .as_ref()
                .map_or(true, |entry| entry.type_name() == "session")
                && let Some(text) = text
            {
                kept_lines.push(KeptLine {
                    records_before: 1 + entries.len(),
                    text,
                });
            }
            match parsed {
                Ok(entry) if entry.type_name() == "session" => {
                    diagnostics.push(Diagnostic {
                        line: Some(number),
                        kind: DiagnosticKind::ExtraHeader,
                    });
                }
                Ok(entry) => entries.push(entry),
                Err(error) => diagnostics.push(Diagnostic {
                    line: Some(number),
                    kind: head_error_kind(error, Some(number) == last_number && !ends_with_newline),
                }),
            }
        }
    }
    Ok(LoadedFile {
        header,
        entries,
        diagnostics,
        migrated_from,
        snapshot: LoadedSnapshot {
            bytes: 0,
            inode: None,
        },
        kept_lines,
        newer_version,
    })
}

/// The diagnostic for a line whose head could not be read; `torn` when it is the last line and the
/// file does not end with a newline.
fn head_error_kind(error: HeadError, torn: bool) -> DiagnosticKind {
    match error {
        HeadError::Json(message) if torn => DiagnosticKind::TornLastLine { message },
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
    fn skips_and_reports_bad_lines_and_torn_tail() {
        let text = format!(
            "{HEADER}\r\n\nnot json\n{}\n{{\"type\":\"label\",\"id\":\"b",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#
        );
        let loaded = parse(&text).unwrap();
        assert_eq!(loaded.entries.len(), 1);
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
