//! The session file's problems as the page shows them (what `ctxkit check` reports): where each is
//! (the file's line, and the entry read from that line when there is one) and what kind it is, in
//! fixed words, never what the line held. The page says at the top that the file is damaged, and
//! beside the entries and the contexts it affects.

use ctxkit_session::{Diagnostic, DiagnosticKind, Session, SessionError, StoredEntry};
use rayon::prelude::*;
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

/// A problem as the page lists it: its line, its kind's name and words, whether it is damage.
struct Problem {
    line: Option<usize>,
    kind: &'static str,
    words: String,
    damage: bool,
}

impl Problem {
    fn of(diagnostic: &Diagnostic) -> Self {
        let (kind, words) = kind_and_words(&diagnostic.kind);
        Self {
            line: diagnostic.line,
            kind,
            words,
            damage: diagnostic.kind.is_damage(),
        }
    }

    /// An entry whose head was read but whose whole line does not parse as its type (a tool
    /// call whose id is a number): what `ctxkit check` calls a field of the wrong type. Serde's
    /// words are not shown: they can quote the field's value.
    fn wrong_type(line: usize, words: &'static str) -> Self {
        Self {
            line: Some(line),
            kind: "wrongType",
            words: words.to_owned(),
            damage: true,
        }
    }

    fn record(&self, session: &Session) -> Value {
        let mut record = Map::new();
        record.insert("line".to_owned(), json!(self.line));
        record.insert("kind".to_owned(), json!(self.kind));
        record.insert("text".to_owned(), json!(self.words));
        record.insert("damage".to_owned(), json!(self.damage));
        if let Some(position) = self.line.and_then(|line| entry_at_line(session, line)) {
            record.insert("e".to_owned(), json!(position));
        }
        Value::Object(record)
    }
}

/// What an entry of the wrong type did to the session, as the page says it. A `context_edit` whose
/// `replacement` is no message's content (a string, a number) still edits its target: what the
/// model saw holds the target without content (`docs/pi-compatibility.md`, divergence 17), the
/// note said it was left out until QA r104 found the two disagreeing; one whose target is not a
/// string edits nothing.
fn wrong_type_words(entry: &StoredEntry) -> &'static str {
    if entry.type_name() != "context_edit" {
        return "an entry with a field of the wrong type: shown as written, and left out of \
                what the model saw";
    }
    let replaces = entry.target_id().is_some()
        && entry
            .raw()
            .ok()
            .and_then(|raw| serde_json::from_str::<Value>(&raw).ok())
            .and_then(|fields| fields.get("replacement").map(|value| !value.is_null()))
            .unwrap_or(false);
    if replaces {
        "a context edit whose replacement is not a message's content: shown as written; from \
         here on what the model saw holds its target without content"
    } else {
        "a context edit with a field of the wrong type: shown as written, and ignored (its \
         target is shown as stored)"
    }
}

/// The lines of the entries that do not parse as their type, and what each did (read on all
/// cores: every entry's whole line is parsed once). A line that can no longer be read back is
/// not counted here: the page's reads of it fail on their own.
fn wrong_type_lines(session: &Session) -> Vec<(usize, &'static str)> {
    session
        .entries()
        .par_iter()
        .with_min_len(64)
        .filter_map(|entry| match entry.parse() {
            Err(SessionError::InvalidEntry { line, .. }) => Some((line, wrong_type_words(entry))),
            Ok(_) | Err(_) => None,
        })
        .collect()
}

/// The first [`MAX_PAGE_PROBLEMS`] problems of `session`, in file order, and how many it has.
pub(crate) fn problems(session: &Session) -> (Value, usize) {
    let mut all: Vec<Problem> = session.diagnostics().iter().map(Problem::of).collect();
    all.extend(
        wrong_type_lines(session)
            .into_iter()
            .map(|(line, words)| Problem::wrong_type(line, words)),
    );
    all.sort_by_key(|problem| problem.line);
    let count = all.len();
    let records = all
        .iter()
        .take(MAX_PAGE_PROBLEMS)
        .map(|problem| problem.record(session))
        .collect();
    (Value::Array(records), count)
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
        written(dir, text)
    }

    /// The session `text` is, written as a file in `dir`.
    fn written(dir: &std::path::Path, text: &str) -> Session {
        let path = dir.join("session.jsonl");
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

    /// One entry with a field of the wrong type (a tool call whose id is a number, a compaction
    /// whose summary is a number): `export` refused the whole session and a live view stopped for
    /// good. The page is built from what could be read and names the lines.
    #[test]
    fn entries_of_the_wrong_type_are_damage_and_the_page_is_still_built() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"w","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"first","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":1,"name":"bash","arguments":{"command":"ls"}}],"stopReason":"toolUse","timestamp":2}}"#,
            "\n",
            r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","summary":7,"firstKeptEntryId":"u1","tokensBefore":10}"#,
            "\n",
            r#"{"type":"message","id":"u2","parentId":"c1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"second","timestamp":3}}"#,
            "\n",
        );
        let dir = tempfile::tempdir().unwrap();
        let session = written(dir.path(), text);
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = crate::PageOptions::new("w", redactor);
        let data = crate::build_page_data(&session, &options).unwrap();
        assert_eq!(data["entries"].as_array().unwrap().len(), 4);
        let problems = data["problems"].as_array().unwrap();
        let wrong: Vec<_> = problems
            .iter()
            .filter(|problem| problem["kind"] == json!("wrongType"))
            .collect();
        assert_eq!(wrong.len(), 2, "{problems:?}");
        assert_eq!(wrong[0]["line"], json!(3));
        assert_eq!(wrong[0]["e"], json!(1));
        assert_eq!(wrong[0]["damage"], json!(true));
        assert_eq!(wrong[1]["line"], json!(4));
        assert_eq!(data["problemCount"], json!(2));
        // What the model saw at the last entry: what could be read.
        let context = crate::context_data(&session, "u2", &options).unwrap();
        assert!(context["messages"].as_array().is_some(), "{context}");
        let at_reply = crate::context_data(&session, "a1", &options).unwrap();
        let entries: Vec<_> = at_reply["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|message| message["e"].clone())
            .collect();
        assert_eq!(entries, vec![json!(0)], "{at_reply}");
    }

    /// QA r104: a `context_edit` whose replacement was a string was noted as "left out of what
    /// the model saw" while the page's "What the model saw" showed its target emptied. The note
    /// now says what the edit does; an edit whose target is not a string is ignored and says so.
    #[test]
    fn a_context_edit_of_the_wrong_type_says_what_it_did() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"ORIGINAL QUESTION","timestamp":1}}"#,
            "\n",
            r#"{"type":"context_edit","id":"e1","parentId":"u1","timestamp":"2026-01-01T00:00:00.000Z","targetId":"u1","replacement":"EDITED REPLACEMENT"}"#,
            "\n",
            r#"{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","targetId":5,"replacement":{"content":"x"}}"#,
            "\n",
            r#"{"type":"message","id":"u2","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"second","timestamp":3}}"#,
            "\n",
        );
        let dir = tempfile::tempdir().unwrap();
        let session = written(dir.path(), text);
        let (list, count) = problems(&session);
        assert_eq!(count, 2, "{list}");
        assert_eq!(list[0]["line"], json!(3));
        assert_eq!(
            list[0]["text"],
            json!(
                "a context edit whose replacement is not a message's content: shown as written; \
                 from here on what the model saw holds its target without content"
            )
        );
        assert_eq!(list[1]["line"], json!(4));
        assert_eq!(
            list[1]["text"],
            json!(
                "a context edit with a field of the wrong type: shown as written, and ignored \
                 (its target is shown as stored)"
            )
        );
        // What the note says is what the page's "What the model saw" shows.
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = crate::PageOptions::new("x", redactor);
        let context = crate::context_data(&session, "u2", &options).unwrap();
        let target = &context["messages"][0];
        assert_eq!(target["e"], json!(0), "{context}");
        assert_eq!(target["edit"], json!(1), "{context}");
        assert_eq!(target["msg"]["blocks"], json!([]), "{context}");
    }
}
