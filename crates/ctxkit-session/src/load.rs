//! Reading a session file: lines, header, entry heads, migration. Tolerates what Pi tolerates (blank and
//! malformed lines are skipped) and records every problem; refuses files that are not sessions at all.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use rayon::prelude::*;

use ctxkit_protocol::{CURRENT_SESSION_VERSION, SessionHeader, from_str_repaired};
use serde_json::Value;

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::{HeadError, StoredEntry};
use crate::error::{Result, SessionError};
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
}

/// One non-blank line of the file.
pub(crate) struct RawLine {
    pub(crate) number: usize,
    pub(crate) text: String,
}

/// Reads the lines of `reader`, skipping blank ones. Invalid UTF-8 is replaced (as Node's `utf8`
/// decoding does) and reported. Returns whether the data ended with a newline.
pub(crate) fn read_lines(
    reader: impl Read,
    diagnostics: &mut Vec<Diagnostic>,
) -> std::io::Result<(Vec<RawLine>, bool)> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut lines = Vec::new();
    let mut number = 0;
    let mut ends_with_newline = true;
    loop {
        let mut bytes = Vec::new();
        if reader.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        number += 1;
        ends_with_newline = bytes.last() == Some(&b'\n');
        if ends_with_newline {
            bytes.pop();
        }
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                diagnostics.push(Diagnostic {
                    line: Some(number),
                    kind: DiagnosticKind::InvalidUtf8,
                });
                String::from_utf8_lossy(error.as_bytes()).into_owned()
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        lines.push(RawLine { number, text });
    }
    Ok((lines, ends_with_newline))
}

/// Loads the session file at `path`.
pub(crate) fn load_file(path: &Path) -> Result<LoadedFile> {
    let file = std::fs::File::open(path).map_err(SessionError::io("open", path))?;
    let opened = current_snapshot(&file, path)?;
    let mut counted = CountingReader {
        inner: &file,
        bytes: 0,
    };
    let mut diagnostics = Vec::new();
    let (lines, ends_with_newline) =
        read_lines(&mut counted, &mut diagnostics).map_err(SessionError::io("read", path))?;
    let mut loaded = parse_lines(path, lines, ends_with_newline, diagnostics)?;
    loaded.snapshot = LoadedSnapshot {
        bytes: counted.bytes,
        inode: opened.inode,
    };
    Ok(loaded)
}

/// Counts the bytes read, so the snapshot is what was parsed even while another process appends.
struct CountingReader<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.bytes += read as u64;
        Ok(read)
    }
}

/// Parses the lines of a session file.
pub(crate) fn parse_lines(
    path: &Path,
    lines: Vec<RawLine>,
    ends_with_newline: bool,
    mut diagnostics: Vec<Diagnostic>,
) -> Result<LoadedFile> {
    let not_a_session = |line: Option<usize>, reason: &str| SessionError::NotASession {
        path: path.to_owned(),
        line,
        reason: reason.to_owned(),
    };
    let last_number = lines.last().map(|line| line.number);
    let mut header: Option<(usize, Value)> = None;
    let mut bodies = Vec::with_capacity(lines.len());
    for line in lines {
        if header.is_none() {
            // The first line that parses is the header, as in Pi.
            match from_str_repaired::<Value>(&line.text) {
                Ok(value) => header = Some((line.number, value)),
                Err(error) => diagnostics.push(Diagnostic {
                    line: Some(line.number),
                    kind: DiagnosticKind::InvalidJson {
                        message: error.to_string(),
                    },
                }),
            }
            continue;
        }
        bodies.push(line);
    }
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
    if migrated_from.is_some() {
        migrate::migrate_lines(&mut bodies, version);
        header.version = Some(CURRENT_SESSION_VERSION);
    }

    // Reading heads is independent per line: spread it over the cores, keep file order.
    let parsed: Vec<(usize, Result<StoredEntry, HeadError>)> = bodies
        .into_par_iter()
        .with_min_len(256)
        .map(|line| {
            (
                line.number,
                StoredEntry::from_line(line.text.into_boxed_str(), line.number),
            )
        })
        .collect();
    let mut entries = Vec::with_capacity(parsed.len());
    for (number, parsed) in parsed {
        match parsed {
            Ok(entry) if entry.type_name() == "session" => {
                diagnostics.push(Diagnostic {
                    line: Some(number),
                    kind: DiagnosticKind::ExtraHeader,
                });
            }
            Ok(entry) => entries.push(entry),
            Err(error) => {
                let kind = match error {
                    HeadError::Json(message)
                        if Some(number) == last_number && !ends_with_newline =>
                    {
                        DiagnosticKind::TornLastLine { message }
                    }
                    HeadError::Json(message) => DiagnosticKind::InvalidJson { message },
                    HeadError::NotAnObject => DiagnosticKind::NotAnObject,
                    HeadError::NoType => DiagnosticKind::NoType,
                    HeadError::NoId => DiagnosticKind::NoId,
                };
                diagnostics.push(Diagnostic {
                    line: Some(number),
                    kind,
                });
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
    })
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
        let (lines, ends) = read_lines(text.as_bytes(), &mut diagnostics).unwrap();
        parse_lines(Path::new("s.jsonl"), lines, ends, diagnostics)
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
