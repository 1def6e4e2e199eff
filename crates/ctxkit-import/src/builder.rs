//! Assembling an imported session: entries with derived ids and normalized timestamps, the tool
//! call/result pairing check, and the header.

use ctxkit_protocol::{CustomEntry, EntryKind, JsonObject, SessionEntry, SessionHeader};
use ctxkit_session::{iso_from_ms, parse_timestamp_ms};
use serde_json::Value;

use crate::ImportedSession;
use crate::ids::IdAllocator;
use crate::report::{ImportIssue, ImportReport, IssueKind};
use crate::stored::Stored;
use crate::tools::{
    CLAUDE_CODE_MISSING_RESULT_TEXT, CODEX_MISSING_RESULT_TEXT, MISSING_RESULT_TEXT, repair_tools,
};
use crate::{SourceFormat, custom_type};

/// An entry being built, with the source line it came from.
#[derive(Debug)]
pub(crate) struct Planned {
    pub(crate) line: usize,
    pub(crate) entry: SessionEntry,
}

/// Entries in output order plus the issues met so far.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    pub(crate) ids: IdAllocator,
    pub(crate) issues: Vec<ImportIssue>,
}

impl Builder {
    /// A builder starting with the problems met reading the source.
    pub(crate) fn new(issues: Vec<ImportIssue>) -> Self {
        Self {
            ids: IdAllocator::default(),
            issues,
        }
    }

    pub(crate) fn issue(&mut self, line: usize, kind: IssueKind) {
        self.issues.push(ImportIssue::at(line, kind));
    }

    /// Checks tool pairing (filling result tool names from their calls) and assembles the session:
    /// each entry becomes its line as it is taken from `planned`.
    pub(crate) fn finish(
        mut self,
        format: SourceFormat,
        mut header: SessionHeader,
        planned: Vec<Stored>,
        records: usize,
    ) -> ImportedSession {
        // The id names the session's file: one clean path component, or a hash of it.
        if let Some(replacement) = ctxkit_session::file_safe_id(&header.id) {
            let original: String = header.id.escape_debug().take(80).collect();
            self.issues.push(ImportIssue {
                line: None,
                kind: IssueKind::SessionIdReplaced {
                    original,
                    replacement: replacement.clone(),
                },
            });
            header.id = replacement;
        }
        // A call without a result gets the text its agent would have sent.
        let missing_text = match format {
            SourceFormat::Codex => CODEX_MISSING_RESULT_TEXT,
            SourceFormat::ClaudeCode => CLAUDE_CODE_MISSING_RESULT_TEXT,
            SourceFormat::OpenCode => MISSING_RESULT_TEXT,
        };
        let mut planned = planned;
        break_parent_cycles(&mut planned, &mut self.issues);
        let planned = repair_tools(planned, &mut self.ids, &mut self.issues, missing_text);
        crate::branches::report_messages_beside_the_path(&planned, &mut self.issues);
        if !planned.iter().any(Stored::is_conversation) {
            self.issues.push(ImportIssue {
                line: None,
                kind: IssueKind::NoConversation,
            });
        }
        self.issues.sort_by_key(|issue| issue.line);
        // The ids are no longer needed: let them go before the lines are made.
        drop(self.ids);
        let mut lines = Vec::with_capacity(planned.len());
        for stored in planned {
            // Every entry serializes (it was built from JSON values and strings); one that did
            // not would be left out rather than written half.
            if let Ok(line) = stored.into_line() {
                lines.push(line.into_boxed_str());
            }
        }
        ImportedSession {
            format,
            report: ImportReport {
                records,
                entries: lines.len(),
                issues: self.issues,
            },
            header,
            lines,
        }
    }
}

/// Cuts every parent cycle: a session file's entries must form a tree (a reader that follows
/// parents to the root would never end, and Pi's does not guard against it). Each cycle loses one
/// link, the parent of its earliest entry in file order, which becomes a root as ctxkit's loader
/// would take it; every entry stays.
fn break_parent_cycles(planned: &mut [Stored], issues: &mut Vec<ImportIssue>) {
    let parents = crate::stored::parent_positions(planned);
    // The walk that first reached each entry (0: none yet).
    let mut walk_of = vec![0_usize; planned.len()];
    let mut cut = Vec::new();
    for start in 0..planned.len() {
        if walk_of[start] != 0 {
            continue;
        }
        let walk = start + 1;
        let mut current = start;
        loop {
            walk_of[current] = walk;
            let Some(parent) = parents[current] else {
                break;
            };
            if walk_of[parent] == walk {
                // Back on this walk: `parent` is on a cycle. Its earliest entry loses its parent.
                let mut earliest = parent;
                let mut member = parents[parent];
                while let Some(next) = member.filter(|next| *next != parent) {
                    earliest = earliest.min(next);
                    member = parents[next];
                }
                cut.push(earliest);
                break;
            }
            if walk_of[parent] != 0 {
                break;
            }
            current = parent;
        }
    }
    for position in cut {
        let stored = &mut planned[position];
        if let Some(parent) = stored.parent_id.take() {
            issues.push(ImportIssue::at(
                stored.line,
                IssueKind::ParentCycle { parent },
            ));
        }
    }
}

/// The header of an imported session: the source's session id and start time, and where it came from.
pub(crate) fn header(
    format: SourceFormat,
    session_id: &str,
    timestamp: &str,
    cwd: &str,
) -> SessionHeader {
    let mut header = SessionHeader::new(
        session_id.to_owned(),
        normalize_timestamp(timestamp).unwrap_or_else(|| timestamp.to_owned()),
        cwd.to_owned(),
        None,
    );
    let mut origin = JsonObject::new();
    origin.insert("format".to_owned(), Value::String(format.name().to_owned()));
    origin.insert("sessionId".to_owned(), Value::String(session_id.to_owned()));
    header
        .extra
        .insert("importedFrom".to_owned(), Value::Object(origin));
    header
}

/// Records in the header's `importedFrom` the source session this one is a subagent of.
pub(crate) fn set_parent_session_id(header: &mut SessionHeader, parent: &str) {
    if let Some(Value::Object(origin)) = header.extra.get_mut("importedFrom") {
        origin.insert(
            "parentSessionId".to_owned(),
            Value::String(parent.to_owned()),
        );
    }
}

/// An ISO timestamp in `toISOString` form, or `None` when it does not parse.
pub(crate) fn normalize_timestamp(text: &str) -> Option<String> {
    parse_timestamp_ms(text).map(iso_from_ms)
}

/// Epoch milliseconds of an entry timestamp.
pub(crate) fn millis(timestamp: &str) -> Option<i64> {
    parse_timestamp_ms(timestamp)
}

/// A `custom` entry keeping a whole source record.
pub(crate) fn custom_kind(format: SourceFormat, kind: &str, record: &JsonObject) -> EntryKind {
    EntryKind::Custom(CustomEntry {
        custom_type: custom_type(format, kind),
        data: Some(Value::Object(record.clone())),
        extra: JsonObject::new(),
    })
}

/// Parses tool arguments given as JSON text; anything but an object is kept as `{"input": text}`.
pub(crate) fn arguments_from_text(text: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Some(value),
        Ok(
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_),
        )
        | Err(_) => None,
    }
}

/// `{"input": value}`, for tool inputs that are not objects.
pub(crate) fn wrapped_input(value: Value) -> Value {
    let mut object = JsonObject::new();
    object.insert("input".to_owned(), value);
    Value::Object(object)
}
