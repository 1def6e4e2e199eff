//! The session file's problems as the page shows them (what `ctxkit check` reports): where each is
//! (the file's line, and the entry read from that line when there is one) and what kind it is, in
//! fixed words, never what the line held. The page says at the top that the file is damaged, and
//! beside the entries and the contexts it affects.

use ctxkit_session::{Diagnostic, DiagnosticKind, Session};
use serde_json::{Map, Value, json};

/// Most problems a page lists (a file of a million broken lines has a million); `problemCount`
/// says how many there are.
pub(crate) const MAX_PAGE_PROBLEMS: usize = 200;

/// The kind's name in the page's data and what it did to the session, without the line's content.
fn kind_and_words(kind: &DiagnosticKind) -> (&'static str, String) {
    let (name, words) = match kind {
        DiagnosticKind::InvalidJson { .. } => {
            ("invalidJson", "not valid JSON: the line was skipped")
        }
        DiagnosticKind::TornLastLine { .. } => (
            "tornLastLine",
            "the last line is cut off (an append was interrupted): it was skipped",
        ),
        DiagnosticKind::NotAnObject => ("notAnObject", "not a JSON object: the line was skipped"),
        DiagnosticKind::NoType => ("noType", "an entry without a type: the line was skipped"),
        DiagnosticKind::NoId => ("noId", "an entry without an id: the line was skipped"),
        DiagnosticKind::InvalidUtf8 => ("invalidUtf8", "bytes that are not UTF-8, shown as �"),
        DiagnosticKind::ExtraHeader => ("extraHeader", "a second session header: ignored"),
        DiagnosticKind::NewerVersion { version } => {
            return (
                "newerVersion",
                format!("written by a newer version (session format v{version}): read as v3"),
            );
        }
        DiagnosticKind::DuplicateId { .. } => (
            "duplicateId",
            "an entry id used twice: the later entry is the one found",
        ),
        DiagnosticKind::MissingParent { .. } => (
            "missingParent",
            "its parent is not in the file: the entry starts a chain of its own, so what the \
             model saw from here on lacks everything before it",
        ),
        DiagnosticKind::ParentCycle { .. } => (
            "parentCycle",
            "its parents lead back to it: read as the start of a chain",
        ),
        DiagnosticKind::DanglingFirstKept { .. } => (
            "danglingFirstKept",
            "a compaction that keeps from an entry not in the file",
        ),
        DiagnosticKind::DanglingLabelTarget { .. } => (
            "danglingLabelTarget",
            "a label naming an entry not in the file",
        ),
    };
    (name, words.to_owned())
}

/// The entry read from file line `line`, by position (entries are in file order).
fn entry_at_line(session: &Session, line: usize) -> Option<usize> {
    session
        .entries()
        .binary_search_by_key(&line, |entry| entry.line())
        .ok()
}

fn record(session: &Session, problem: &Diagnostic) -> Value {
    let (kind, words) = kind_and_words(&problem.kind);
    let mut record = Map::new();
    record.insert("line".to_owned(), json!(problem.line));
    record.insert("kind".to_owned(), json!(kind));
    record.insert("text".to_owned(), json!(words));
    record.insert("damage".to_owned(), json!(problem.kind.is_damage()));
    if let Some(position) = problem.line.and_then(|line| entry_at_line(session, line)) {
        record.insert("e".to_owned(), json!(position));
    }
    Value::Object(record)
}

/// The first [`MAX_PAGE_PROBLEMS`] problems of `session`, in file order, and how many it has.
pub(crate) fn problems(session: &Session) -> (Value, usize) {
    let all = session.diagnostics();
    let mut shown: Vec<&Diagnostic> = all.iter().collect();
    shown.sort_by_key(|problem| problem.line);
    shown.truncate(MAX_PAGE_PROBLEMS);
    let records = shown
        .into_iter()
        .map(|problem| record(session, problem))
        .collect();
    (Value::Array(records), all.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply cut off in the middle (line 3) and the question after it, whose parent it was.
    fn damaged(dir: &std::path::Path) -> Session {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"first","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"SECRET ANSWER cut"#,
            "\n",
            r#"{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"second","timestamp":3}}"#,
            "\n",
        );
        let path = dir.join("d.jsonl");
        std::fs::write(&path, text).unwrap();
        Session::open(&path).unwrap()
    }

    #[test]
    fn problems_carry_lines_kinds_and_entries_never_content() {
        let dir = tempfile::tempdir().unwrap();
        let session = damaged(dir.path());
        let (list, count) = problems(&session);
        assert_eq!(count, 2);
        assert_eq!(list[0]["line"], json!(3));
        assert_eq!(list[0]["kind"], json!("invalidJson"));
        assert_eq!(list[0]["damage"], json!(true));
        assert!(list[0].get("e").is_none(), "no entry was read from it");
        assert_eq!(list[1]["line"], json!(4));
        assert_eq!(list[1]["kind"], json!("missingParent"));
        assert_eq!(
            list[1]["e"],
            json!(1),
            "the second question, read as a root"
        );
        let text = list.to_string();
        assert!(!text.contains("SECRET") && !text.contains("a1"), "{text}");
    }
}
