//! Which agent wrote a file, told from its records: a format is claimed only when a record has a
//! shape that agent alone writes, never because nothing else matched. A Pi (or ctxkit) session,
//! whole or without its header line, and a file that holds none of the records of the format named
//! with `--from` are refused with an error saying which case it is, so no import writes an empty
//! session.

use std::path::Path;

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use crate::error::ImportError;
use crate::source::{self, SourceFile, str_field};
use crate::{SourceFormat, codex, opencode};

/// Record types only Claude Code writes, recognised even in files without a conversation record
/// (a file holding only a `summary` or a `teleported-from` line).
const CLAUDE_CODE_RECORD_TYPES: &[&str] = &[
    "summary",
    "teleported-from",
    "file-history-snapshot",
    "queue-operation",
    "ai-title",
    "custom-title",
    "last-prompt",
    "permission-mode",
    "away_summary",
    "attachment",
];

/// What one record's shape says about the file it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A record only this agent writes.
    Foreign(SourceFormat),
    /// A line of a Pi (or ctxkit) session that is not a valid header on the first line.
    Pi,
}

/// The shape of a record, if it has one that identifies who wrote it.
fn shape(record: &JsonObject) -> Option<Shape> {
    if is_claude_code_record(record) {
        return Some(Shape::Foreign(SourceFormat::ClaudeCode));
    }
    if is_pi_record(record) {
        return Some(Shape::Pi);
    }
    codex::is_rollout_record(record).then_some(Shape::Foreign(SourceFormat::Codex))
}

/// Claude Code's records carry `sessionId`/`parentUuid`/`leafUuid`, or a type only it writes.
fn is_claude_code_record(record: &JsonObject) -> bool {
    record.contains_key("sessionId")
        || record.contains_key("parentUuid")
        || record.contains_key("leafUuid")
        || str_field(record, "type").is_some_and(|kind| CLAUDE_CODE_RECORD_TYPES.contains(&kind))
}

/// Whether a record has the shape of a Pi session line (never with Codex's `payload`): an entry
/// linked into the tree (`id` and `parentId`, null for a root), a v1 `message` entry (no ids, the
/// message in a `message` object), or a `session` header, here one not read as the file's header.
fn is_pi_record(record: &JsonObject) -> bool {
    if record.contains_key("payload") {
        return false;
    }
    let linked = record.contains_key("id") && record.contains_key("parentId");
    match str_field(record, "type") {
        Some("session") => record.contains_key("version") || record.contains_key("cwd"),
        Some("message") => linked || record.get("message").is_some_and(Value::is_object),
        Some(_) => linked,
        None => false,
    }
}

/// The format version of a valid Pi (or ctxkit) session header (1 when it names none).
fn pi_header_version(record: &JsonObject) -> Option<u64> {
    let header = str_field(record, "type") == Some("session")
        && str_field(record, "id").is_some()
        && record.get("cwd").is_some();
    header.then(|| record.get("version").and_then(Value::as_u64).unwrap_or(1))
}

/// What a file's records say about its format, gathered a record at a time
/// ([`Survey::observe`]) until nothing more can change the [`Survey::verdict`].
#[derive(Debug)]
pub(crate) struct Survey {
    /// The format named with `--from`, if one was.
    named: Option<SourceFormat>,
    records: usize,
    /// The version of the Pi session header on the first line, when it is one.
    pi_header: Option<u64>,
    /// The shape of the first record that has one.
    first_shape: Option<Shape>,
    /// Whether a record of the named format was seen.
    named_seen: bool,
}

impl Survey {
    /// A survey for `--from auto` (`named: None`) or for a named format.
    pub(crate) fn new(named: Option<SourceFormat>) -> Self {
        Self {
            named,
            records: 0,
            pi_header: None,
            first_shape: None,
            named_seen: false,
        }
    }

    /// Takes the next record; false once the verdict is settled (the rest need not be read).
    pub(crate) fn observe(&mut self, record: &JsonObject) -> bool {
        self.records += 1;
        if self.records == 1 {
            self.pi_header = pi_header_version(record);
            if self.pi_header.is_some() {
                return false;
            }
        }
        let shape = shape(record);
        self.first_shape = self.first_shape.or(shape);
        if let Some(named) = self.named {
            self.named_seen |= shape == Some(Shape::Foreign(named));
            return !self.named_seen;
        }
        self.first_shape.is_none()
    }

    /// Takes the records of a file read whole, as many as it needs.
    pub(crate) fn observe_source(&mut self, source: &SourceFile) {
        for line in &source.lines {
            if !self.observe(&line.record) {
                return;
            }
        }
    }

    /// The format to convert `path` as, or why it is refused. A named format needs one of its
    /// records (OpenCode: a path [`opencode::is_opencode_path`] accepts); `--from auto` takes the
    /// format of the first record that has one. A file named `rollout-*` whose records identify
    /// nothing is Codex's.
    pub(crate) fn verdict(&self, path: &Path) -> Result<SourceFormat, ImportError> {
        let path_buf = || path.to_owned();
        if let Some(version) = self.pi_header {
            return Err(ImportError::AlreadyPiSession {
                path: path_buf(),
                version,
            });
        }
        if let Some(named) = self.named
            && (self.named_seen
                || named == SourceFormat::OpenCode && opencode::is_opencode_path(path))
        {
            return Ok(named);
        }
        let foreign = match self.first_shape {
            Some(Shape::Pi) => return Err(ImportError::HeaderlessPiSession { path: path_buf() }),
            Some(Shape::Foreign(format)) => Some(format),
            None => None,
        };
        if let (None, Some(format)) = (self.named, foreign) {
            return Ok(format);
        }
        if self.records == 0 {
            return Err(ImportError::Empty { path: path_buf() });
        }
        let rollout_name = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("rollout-"));
        let by_name = (rollout_name && foreign.is_none()).then_some(SourceFormat::Codex);
        match self.named {
            None => by_name.ok_or_else(|| ImportError::UnknownFormat { path: path_buf() }),
            Some(named) if by_name == Some(named) => Ok(named),
            Some(named) => Err(ImportError::NotThisFormat {
                path: path_buf(),
                format: named,
                looks_like: foreign.or(by_name),
            }),
        }
    }
}

/// Guesses the format from the records (`--from auto`): the format of the first record only one
/// agent writes (Codex: `{timestamp, type, payload}` envelopes or the older bare shapes; Claude
/// Code: `uuid`/`sessionId` or one of its record types). A file nothing identifies is Codex's when
/// it is named `rollout-*`. A Pi session, whole or without its header, is refused.
pub fn detect_format(source: &SourceFile) -> Result<SourceFormat, ImportError> {
    let mut survey = Survey::new(None);
    survey.observe_source(source);
    survey.verdict(&source.path)
}

/// Checks that `source` can be read as `format` (named with `--from`): one of its records is one
/// that format writes (a file named `rollout-*` whose records identify nothing counts as Codex's;
/// OpenCode's sessions are told by their path). Otherwise [`ImportError::NotThisFormat`] says
/// what the file looks like, or a Pi session is refused as [`detect_format`] refuses it.
pub fn confirm_format(source: &SourceFile, format: SourceFormat) -> Result<(), ImportError> {
    let mut survey = Survey::new(Some(format));
    survey.observe_source(source);
    survey.verdict(&source.path).map(drop)
}

/// The format `ctxkit import` (`--from auto`) finds in the file at `path`, or why it would refuse
/// it: an OpenCode store by its path, else the records, read only as far as they tell (a record at
/// a time where the file allows). Commands that read session files use it to tell another agent's
/// session from a damaged one.
pub fn detect_file_format(path: &Path) -> Result<SourceFormat, ImportError> {
    crate::refuse_special_file(path)?;
    if opencode::is_opencode_path(path) {
        return Ok(SourceFormat::OpenCode);
    }
    let mut survey = Survey::new(None);
    observe_file(path, &mut survey)?;
    survey.verdict(path)
}

/// Gives `survey` the records of the file at `path` until its verdict is settled.
fn observe_file(path: &Path, survey: &mut Survey) -> Result<(), ImportError> {
    if source::reads_by_line(path)? {
        source::for_each_record(path, |line| survey.observe(&line.record)).map(drop)
    } else {
        source::read_source(path).map(|source| survey.observe_source(&source))
    }
}

/// Why `path`, named as an OpenCode session, is not one: a Pi session, or records of another
/// format (or the error reading it).
pub(crate) fn not_an_opencode_session(path: &Path) -> ImportError {
    let format = SourceFormat::OpenCode;
    let mut survey = Survey::new(Some(format));
    let read = crate::refuse_special_file(path).and_then(|()| observe_file(path, &mut survey));
    let verdict = read.and_then(|()| survey.verdict(path));
    match verdict {
        Err(error) => error,
        Ok(_) => ImportError::NotThisFormat {
            path: path.to_owned(),
            format,
            looks_like: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, text: &str) -> SourceFile {
        source::parse_source(Path::new(name), text)
    }

    const PI_ENTRIES: &str = concat!(
        r#"{"type":"model_change","id":"m1","parentId":null,"timestamp":"2025-03-14T09:19:15.785Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":"m1","timestamp":"2025-03-14T09:19:16.785Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        "\n",
    );

    #[test]
    fn session_entries_without_a_header_are_refused_whatever_the_format() {
        let file = source("nohdr.jsonl", PI_ENTRIES);
        assert!(matches!(
            detect_format(&file),
            Err(ImportError::HeaderlessPiSession { .. })
        ));
        for format in [SourceFormat::ClaudeCode, SourceFormat::Codex] {
            assert!(matches!(
                confirm_format(&file, format),
                Err(ImportError::HeaderlessPiSession { .. })
            ));
        }
        let damaged_header = format!(
            "{}\n{PI_ENTRIES}",
            r#"{"type":"session","version":3,"id":12345,"cwd":"/p"}"#
        );
        assert!(matches!(
            detect_format(&source("bad.jsonl", &damaged_header)),
            Err(ImportError::HeaderlessPiSession { .. })
        ));
        let header = format!(
            "{}\n{PI_ENTRIES}",
            r#"{"type":"session","version":3,"id":"s","cwd":"/p"}"#
        );
        assert!(matches!(
            confirm_format(&source("whole.jsonl", &header), SourceFormat::Codex),
            Err(ImportError::AlreadyPiSession { version: 3, .. })
        ));
    }

    #[test]
    fn a_named_format_needs_one_of_its_records() {
        let codex = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
        let claude =
            r#"{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"q"}}"#;
        let file = source("x.jsonl", &format!("{{\"hello\":1}}\n{codex}\n"));
        assert!(confirm_format(&file, SourceFormat::Codex).is_ok());
        assert_eq!(detect_format(&file).unwrap(), SourceFormat::Codex);
        match confirm_format(&file, SourceFormat::ClaudeCode) {
            Err(ImportError::NotThisFormat {
                format: SourceFormat::ClaudeCode,
                looks_like: Some(SourceFormat::Codex),
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let mixed = source("y.jsonl", &format!("{codex}\n{claude}\n"));
        assert!(confirm_format(&mixed, SourceFormat::ClaudeCode).is_ok());
        let nothing = source("notes.jsonl", "{\"hello\":1}\n");
        assert!(matches!(
            detect_format(&nothing),
            Err(ImportError::UnknownFormat { .. })
        ));
        assert!(matches!(
            confirm_format(&nothing, SourceFormat::Codex),
            Err(ImportError::NotThisFormat {
                looks_like: None,
                ..
            })
        ));
        let named = source("rollout-1.jsonl", "{\"hello\":1}\n");
        assert_eq!(detect_format(&named).unwrap(), SourceFormat::Codex);
        assert!(confirm_format(&named, SourceFormat::Codex).is_ok());
        assert!(matches!(
            confirm_format(&named, SourceFormat::ClaudeCode),
            Err(ImportError::NotThisFormat {
                looks_like: Some(SourceFormat::Codex),
                ..
            })
        ));
        assert!(matches!(
            detect_format(&source("empty.jsonl", "\n")),
            Err(ImportError::Empty { .. })
        ));
    }
}
