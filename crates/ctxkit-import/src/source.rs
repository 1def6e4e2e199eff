//! Reading a foreign session file: one JSON object per line, tolerant of bad lines, never writing.

use std::path::{Path, PathBuf};

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use crate::error::ImportError;
use crate::report::{ImportIssue, IssueKind};

/// One readable record of a source file, with its 1-based line number.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceLine {
    pub line: usize,
    pub record: JsonObject,
}

/// The readable records of a file and the problems met reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub path: PathBuf,
    pub lines: Vec<SourceLine>,
    pub issues: Vec<ImportIssue>,
}

/// Reads `path` (opened read-only; a regular file of at most 4 GiB, never a FIFO or a device).
/// Blank lines are skipped; lines that are not JSON objects are
/// reported as [`IssueKind::MalformedLine`].
pub fn read_source(path: &Path) -> Result<SourceFile, ImportError> {
    let bytes = crate::regular::read_regular(path, crate::regular::MAX_WHOLE_FILE_BYTES)?;
    let mut source = parse_source(path, &String::from_utf8_lossy(&bytes));
    if std::str::from_utf8(&bytes).is_err() {
        let invalid = bytes
            .split(|byte| *byte == b'\n')
            .enumerate()
            .filter(|(_, line)| std::str::from_utf8(line).is_err())
            .map(|(index, _)| ImportIssue::at(index + 1, IssueKind::InvalidUtf8 { file: None }));
        source.issues.extend(invalid);
        source.issues.sort_by_key(|issue| issue.line);
    }
    Ok(source)
}

/// The byte-order mark some editors (and PowerShell 5's `Set-Content -Encoding utf8`) write at the
/// start of a UTF-8 file; no agent writes one, and JSON does not allow it.
const BYTE_ORDER_MARK: &str = "\u{feff}";

/// `text` without a byte-order mark at its start.
pub(crate) fn without_byte_order_mark(text: &str) -> &str {
    text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text)
}

/// Parses the text of a source file (see [`read_source`]); a byte-order mark at its start is
/// skipped (read as part of the first line, it cost the first record: a Codex rollout's
/// `session_meta`, and with it the session's id and start).
pub fn parse_source(path: &Path, text: &str) -> SourceFile {
    let text = without_byte_order_mark(text);
    if let Some(document) = whole_document(path, text) {
        return SourceFile {
            path: path.to_owned(),
            lines: vec![SourceLine {
                line: 1,
                record: document,
            }],
            issues: Vec::new(),
        };
    }
    let mut lines = Vec::new();
    let mut issues = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        if let Some(line) = parse_line(index + 1, raw, &mut issues) {
            lines.push(line);
        }
    }
    SourceFile {
        path: path.to_owned(),
        lines,
        issues,
    }
}

/// One line of a file of records: `None` for a blank line or one that is not a JSON object (the
/// second reported in `issues`).
fn parse_line(line: usize, raw: &str, issues: &mut Vec<ImportIssue>) -> Option<SourceLine> {
    if raw.trim().is_empty() {
        return None;
    }
    let reason = match ctxkit_protocol::from_str_repaired::<Value>(raw) {
        Ok(Value::Object(record)) => return Some(SourceLine { line, record }),
        Ok(
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_),
        ) => "not a JSON object".to_owned(),
        Err(error) => ctxkit_protocol::json_line_error(&error),
    };
    issues.push(ImportIssue::at(line, IssueKind::MalformedLine { reason }));
    None
}

/// Whether `path` is read a line at a time, as [`read_source`] reads it: its first non-blank line
/// is a JSON object and its name does not end in `.json` (otherwise it may be one document over
/// several lines). An empty file is not.
pub(crate) fn reads_by_line(path: &Path) -> Result<bool, ImportError> {
    let mut first = None;
    for_each_raw_line(path, |_, raw, _| {
        if raw.trim().is_empty() {
            return true;
        }
        first = Some(matches!(
            ctxkit_protocol::from_str_repaired::<Value>(raw),
            Ok(Value::Object(_))
        ));
        false
    })?;
    let json_name = path
        .extension()
        .is_some_and(|extension| extension == "json");
    Ok(first == Some(true) && !json_name)
}

/// Reads a file that [`reads_by_line`] a record at a time, giving `each` the records
/// [`parse_source`] would hold, in order, without keeping them; returns the problems met.
/// `each` returns false to stop early.
pub(crate) fn for_each_record(
    path: &Path,
    mut each: impl FnMut(&SourceLine) -> bool,
) -> Result<Vec<ImportIssue>, ImportError> {
    let mut issues = Vec::new();
    for_each_raw_line(path, |line, raw, replaced| {
        if replaced {
            issues.push(ImportIssue::at(line, IssueKind::InvalidUtf8 { file: None }));
        }
        match parse_line(line, raw, &mut issues) {
            Some(record) => each(&record),
            None => true,
        }
    })?;
    Ok(issues)
}

/// The lines of `path` as `str::lines` splits its lossily decoded text, with their 1-based
/// numbers and whether bytes of them that are not UTF-8 were replaced, until `each` returns false.
fn for_each_raw_line(
    path: &Path,
    mut each: impl FnMut(usize, &str, bool) -> bool,
) -> Result<(), ImportError> {
    use std::io::BufRead as _;
    let file = crate::regular::open_regular(path)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut bytes = Vec::new();
    let mut number = 0;
    loop {
        bytes.clear();
        let read = reader
            .read_until(b'\n', &mut bytes)
            .map_err(ImportError::io("read", path))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        let line = String::from_utf8_lossy(&bytes);
        let replaced = matches!(line, std::borrow::Cow::Owned(_));
        let line = if number == 1 {
            without_byte_order_mark(&line)
        } else {
            &line
        };
        if !each(number, line, replaced) {
            return Ok(());
        }
    }
}

/// A file that is one JSON object spread over several lines (the oldest Codex rollouts,
/// `rollout-*.json`): read whole when its first line is not a JSON object by itself.
fn whole_document(path: &Path, text: &str) -> Option<JsonObject> {
    let first = text.lines().find(|line| !line.trim().is_empty())?;
    let first_is_record = matches!(
        ctxkit_protocol::from_str_repaired::<Value>(first),
        Ok(Value::Object(_))
    );
    let json_name = path
        .extension()
        .is_some_and(|extension| extension == "json");
    if first_is_record && !json_name {
        return None;
    }
    match ctxkit_protocol::from_str_repaired::<Value>(text) {
        Ok(Value::Object(document)) => Some(document),
        Ok(
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_),
        )
        | Err(_) => None,
    }
}

/// A string field of a record.
pub(crate) fn str_field<'a>(record: &'a JsonObject, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_reported_and_blank_lines_skipped() {
        let source = parse_source(Path::new("x.jsonl"), "{\"a\":1}\n\n[1]\n{\"b\":\n{\"c\":2}");
        let lines: Vec<usize> = source.lines.iter().map(|line| line.line).collect();
        assert_eq!(lines, [1, 5]);
        let bad: Vec<Option<usize>> = source.issues.iter().map(|issue| issue.line).collect();
        assert_eq!(bad, [Some(3), Some(4)]);
    }

    #[test]
    fn reading_a_line_at_a_time_gives_what_reading_whole_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let bytes: &[u8] =
            b"{\"a\":1}\r\n\n[1]\n{\"b\":\n{\"c\":\"\xff\xe2\x82\"}\r\n  \n{\"d\":2}\r";
        std::fs::write(&path, bytes).unwrap();
        let whole = read_source(&path).unwrap();
        assert!(reads_by_line(&path).unwrap());
        let mut lines = Vec::new();
        let issues = for_each_record(&path, |line| {
            lines.push(line.clone());
            true
        })
        .unwrap();
        assert_eq!(lines, whole.lines);
        assert_eq!(issues, whole.issues);
        assert_eq!(lines.len(), 3);
        std::fs::write(&path, b"\n\n[1]\n").unwrap();
        assert!(!reads_by_line(&path).unwrap());
        let json = dir.path().join("rollout-1.json");
        std::fs::write(&json, b"{}\n").unwrap();
        assert!(!reads_by_line(&json).unwrap());
    }

    #[test]
    fn a_document_over_several_lines_is_one_record() {
        let source = parse_source(
            Path::new("rollout-1.json"),
            "{\n  \"session\": {},\n  \"items\": []\n}\n",
        );
        assert_eq!(source.lines.len(), 1);
        assert!(source.issues.is_empty());
        assert!(source.lines[0].record.contains_key("items"));
    }
}
