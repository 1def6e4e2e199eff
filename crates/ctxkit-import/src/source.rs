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

/// Reads `path` (opened read-only). Blank lines are skipped; lines that are not JSON objects are
/// reported as [`IssueKind::MalformedLine`].
pub fn read_source(path: &Path) -> Result<SourceFile, ImportError> {
    let bytes = std::fs::read(path).map_err(ImportError::io("read", path))?;
    Ok(parse_source(path, &String::from_utf8_lossy(&bytes)))
}

/// Parses the text of a source file (see [`read_source`]).
pub fn parse_source(path: &Path, text: &str) -> SourceFile {
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
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match ctxkit_protocol::from_str_repaired::<Value>(raw) {
            Ok(Value::Object(record)) => lines.push(SourceLine { line, record }),
            Ok(
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::String(_)
                | Value::Array(_),
            ) => issues.push(ImportIssue::at(
                line,
                IssueKind::MalformedLine {
                    reason: "not a JSON object".to_owned(),
                },
            )),
            Err(error) => issues.push(ImportIssue::at(
                line,
                IssueKind::MalformedLine {
                    reason: error.to_string(),
                },
            )),
        }
    }
    SourceFile {
        path: path.to_owned(),
        lines,
        issues,
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
