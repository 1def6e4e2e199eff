//! Importing other agents' sessions into ctxkit: Claude Code JSONL transcripts, Codex rollouts and
//! OpenCode sessions (1.x files, 2.x SQLite) become Pi v3 session trees (header + entries) plus a
//! report of what could not be mapped one-to-one; subagent transcripts become linked child sessions.
//!
//! Conversion is pure ([`convert`] over a parsed [`SourceFile`]); the only I/O is reading the source
//! (never modified), listing the agents' session directories and writing the imported session
//! ([`ImportedSession::write_to`], create-or-append, atomic). Ids derive from source ids and timestamps
//! come from the source, so importing twice gives the same entries.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod builder;
mod claude_code;
mod codex;
mod error;
mod ids;
mod listing;
mod opencode;
mod output;
mod report;
mod source;
mod subagents;
mod surroundings;
mod tools;

use std::path::Path;

use ctxkit_protocol::{SessionEntry, SessionHeader};

pub use claude_code::convert_claude_code;
pub use codex::{REMOTE_COMPACTION_SUMMARY, convert_codex};
pub use error::ImportError;
pub use listing::{SkippedSource, default_sessions_root, list_foreign_sessions};
pub use opencode::{import_opencode, is_opencode_path};
pub use output::WriteOutcome;
pub use report::{ImportIssue, ImportReport, IssueKind};
pub use source::{SourceFile, SourceLine, parse_source, read_source};
pub use subagents::{SubagentSource, find_subagents, import_subagent};

/// Which agent wrote a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// Claude Code: `~/.claude/projects/<escaped cwd>/<session id>.jsonl`.
    ClaudeCode,
    /// Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
    Codex,
    /// OpenCode: `~/.local/share/opencode/opencode.db` (2.x) or `…/storage/session/…` (1.x).
    OpenCode,
}

impl SourceFormat {
    /// The name used on the command line and in `customType`s: `claude-code` or `codex`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::OpenCode => "opencode",
        }
    }
}

impl std::str::FromStr for SourceFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "claude-code" | "claude" => Ok(Self::ClaudeCode),
            "codex" => Ok(Self::Codex),
            "opencode" => Ok(Self::OpenCode),
            other => Err(format!(
                "unknown format `{other}` (expected `claude-code`, `codex` or `opencode`)"
            )),
        }
    }
}

/// The `customType` of entries that keep a source record: `import.<format>.<kind>`.
pub fn custom_type(format: SourceFormat, kind: &str) -> String {
    format!("import.{}.{kind}", format.name())
}

/// A converted session: what a v3 file of it holds, and the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession {
    pub format: SourceFormat,
    pub header: SessionHeader,
    /// In file order: parents before children where the source allows it, the main conversation's
    /// last entry last (it becomes the leaf when the file is opened).
    pub entries: Vec<SessionEntry>,
    pub report: ImportReport,
}

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

/// Guesses the format from the records: Codex lines are `{timestamp, type, payload}` envelopes (or
/// the older bare shapes), Claude Code lines carry `uuid`/`sessionId` or one of its record types. A
/// file nothing identifies is Codex's when it is named `rollout-*`.
pub fn detect_format(source: &SourceFile) -> Result<SourceFormat, ImportError> {
    for line in &source.lines {
        let record = &line.record;
        if record.contains_key("sessionId")
            || record.contains_key("parentUuid")
            || record.contains_key("leafUuid")
            || source::str_field(record, "type")
                .is_some_and(|kind| CLAUDE_CODE_RECORD_TYPES.contains(&kind))
        {
            return Ok(SourceFormat::ClaudeCode);
        }
        if codex::is_rollout_record(record) {
            return Ok(SourceFormat::Codex);
        }
    }
    let rollout_name = source
        .path
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("rollout-"));
    if rollout_name && !source.lines.is_empty() {
        return Ok(SourceFormat::Codex);
    }
    Err(ImportError::UnknownFormat {
        path: source.path.clone(),
    })
}

/// Converts a parsed source file of the given format (OpenCode: the session its path names, read
/// from its store; see [`import_opencode`]).
pub fn convert(source: &SourceFile, format: SourceFormat) -> Result<ImportedSession, ImportError> {
    match format {
        SourceFormat::ClaudeCode => convert_claude_code(source),
        SourceFormat::Codex => convert_codex(source),
        SourceFormat::OpenCode => first_opencode_session(&source.path),
    }
}

fn first_opencode_session(path: &Path) -> Result<ImportedSession, ImportError> {
    import_opencode(path)?
        .into_iter()
        .next()
        .ok_or_else(|| ImportError::Empty {
            path: path.to_owned(),
        })
}

/// Reads and converts `path`; `format: None` detects it. An OpenCode store gives its session
/// without the subagent sessions ([`import_opencode`] gives those too).
pub fn import_file(
    path: &Path,
    format: Option<SourceFormat>,
) -> Result<ImportedSession, ImportError> {
    refuse_special_file(path)?;
    if format == Some(SourceFormat::OpenCode) || format.is_none() && is_opencode_path(path) {
        return first_opencode_session(path);
    }
    let source = read_source(path)?;
    refuse_pi_session(&source)?;
    let format = match format {
        Some(format) => format,
        None => detect_format(&source)?,
    };
    convert_read_file(&source, format)
}

/// Refuses a file whose first record is a Pi (or ctxkit) session header, of any format version:
/// ctxkit reads it as it is, and a converter would take it for another agent's records and write an
/// empty session.
fn refuse_pi_session(source: &SourceFile) -> Result<(), ImportError> {
    let Some(first) = source.lines.first() else {
        return Ok(());
    };
    let record = &first.record;
    let header = source::str_field(record, "type") == Some("session")
        && source::str_field(record, "id").is_some()
        && record.get("cwd").is_some();
    if !header {
        return Ok(());
    }
    Err(ImportError::AlreadyPiSession {
        path: source.path.clone(),
        version: record
            .get("version")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(1),
    })
}

/// [`convert`] for a source read from its file: a start time or working directory the records do
/// not give is taken from the file's surroundings (`surroundings`).
pub(crate) fn convert_read_file(
    source: &SourceFile,
    format: SourceFormat,
) -> Result<ImportedSession, ImportError> {
    let mut session = convert(source, format)?;
    surroundings::fill_missing_header(&mut session, &source.path);
    Ok(session)
}

/// Refuses FIFOs, devices and sockets before anything opens them: opening a FIFO waits for a
/// writer, and `/dev/zero` never ends. Only `stat` is used, which never blocks.
pub(crate) fn refuse_special_file(path: &Path) -> Result<(), ImportError> {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Ok(());
    };
    let file_type = metadata.file_type();
    if file_type.is_file() || file_type.is_dir() {
        return Ok(());
    }
    Err(ImportError::Io {
        operation: "read",
        path: path.to_owned(),
        source: std::io::Error::other("not a regular file (a FIFO, a device or a socket)"),
    })
}
