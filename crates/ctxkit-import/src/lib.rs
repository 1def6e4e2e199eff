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

mod append_plan;
mod branches;
mod builder;
mod claude_code;
mod codex;
mod detect;
mod error;
mod ids;
mod listing;
mod opencode;
mod output;
mod pricing;
mod regular;
mod report;
mod source;
mod stored;
mod subagents;
mod surroundings;
mod tools;

use std::path::Path;

use ctxkit_protocol::{SessionEntry, SessionHeader};

use detect::Survey;

pub use claude_code::convert_claude_code;
pub use codex::{REMOTE_COMPACTION_SUMMARY, convert_codex, wrote_compaction_summary};
pub use detect::{confirm_format, detect_file_format, detect_format};
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
    /// The name used on the command line and in `customType`s: `claude-code`, `codex` or
    /// `opencode`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::OpenCode => "opencode",
        }
    }

    /// What a file of the format is, with its article: `a Claude Code transcript`.
    pub fn described(self) -> &'static str {
        match self {
            Self::ClaudeCode => "a Claude Code transcript",
            Self::Codex => "a Codex rollout",
            Self::OpenCode => "an OpenCode session",
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
    /// The entries as JSON lines (without newlines), in file order: parents before children where
    /// the source allows it, the main conversation's last entry last (it becomes the leaf when the
    /// file is opened). Kept as lines, written once each: a million entries held structured would
    /// take gigabytes ([`ImportedSession::entries`] parses them).
    lines: Vec<Box<str>>,
    pub report: ImportReport,
}

impl ImportedSession {
    /// The entries, parsed from their lines (for callers that inspect them; the file is written
    /// from the lines).
    pub fn entries(&self) -> Vec<SessionEntry> {
        self.lines
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// How many entries the session has.
    pub fn entry_count(&self) -> usize {
        self.lines.len()
    }

    /// Gives the entries without a timestamp `timestamp` (a source that records none).
    pub(crate) fn fill_missing_timestamps(&mut self, timestamp: &str) {
        for line in &mut self.lines {
            if !line.contains("\"timestamp\":\"\"") {
                continue;
            }
            let Ok(mut entry) = serde_json::from_str::<SessionEntry>(line) else {
                continue;
            };
            if !entry.timestamp.is_empty() {
                continue;
            }
            entry.timestamp = timestamp.to_owned();
            if let Ok(text) = serde_json::to_string(&entry) {
                *line = text.into_boxed_str();
            }
        }
    }

    /// The entries' JSON lines (without newlines), in file order.
    pub fn entry_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(AsRef::as_ref)
    }
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

/// Reads and converts `path`; `format: None` detects it ([`detect_format`]), a named format must
/// match one of its records ([`confirm_format`]). An OpenCode store gives its session without the
/// subagent sessions ([`import_opencode`] gives those too).
pub fn import_file(
    path: &Path,
    format: Option<SourceFormat>,
) -> Result<ImportedSession, ImportError> {
    refuse_special_file(path)?;
    if format == Some(SourceFormat::OpenCode) || format.is_none() && is_opencode_path(path) {
        return first_opencode_session(path);
    }
    let mut survey = Survey::new(format);
    if source::reads_by_line(path)? {
        // Read a record at a time: only as many records as tell the format.
        source::for_each_record(path, |line| survey.observe(&line.record))?;
        let mut session = match survey.verdict(path)? {
            SourceFormat::ClaudeCode => claude_code::convert_claude_code_file(path)?,
            SourceFormat::Codex => codex::convert_codex_file(path)?,
            SourceFormat::OpenCode => return first_opencode_session(path),
        };
        surroundings::fill_missing_header(&mut session, path);
        return Ok(session);
    }
    let source = read_source(path)?;
    survey.observe_source(&source);
    let format = survey.verdict(&source.path)?;
    convert_read_file(&source, format)
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
    Err(regular::not_regular(path, "a FIFO, a device or a socket"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Every `.jsonl` file under `dir`, recursively.
    fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, found);
            } else if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                found.push(path);
            }
        }
    }

    /// The import read a record at a time gives what the import of the file read whole gives
    /// (entries, header, report), for every fixture and for bad lines, blank lines and `\r\n`.
    #[test]
    fn reading_a_record_at_a_time_changes_nothing() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut paths = Vec::new();
        sources(&fixtures, &mut paths);
        let dir = tempfile::tempdir().unwrap();
        let fixture = std::fs::read_to_string(fixtures.join("claude-code-session.jsonl")).unwrap();
        let mut damaged = String::from("\n[1]\r\n{\"bad\":\n");
        for line in fixture.lines() {
            damaged.push_str(line);
            damaged.push_str("\r\n\n");
        }
        let damaged_path = dir.path().join("damaged.jsonl");
        std::fs::write(&damaged_path, damaged).unwrap();
        paths.push(damaged_path);
        let mut streamed = HashMap::new();
        for path in &paths {
            let source = read_source(path).unwrap();
            let Ok(format) = detect_format(&source) else {
                continue;
            };
            for given in [None, Some(format)] {
                let whole = convert_read_file(&source, format);
                let read = import_file(path, given);
                match (whole, read) {
                    (Ok(whole), Ok(read)) => assert_eq!(whole, read, "{}", path.display()),
                    (Err(whole), Err(read)) => {
                        assert_eq!(whole.to_string(), read.to_string());
                    }
                    (whole, read) => panic!("{}: {whole:?} / {read:?}", path.display()),
                }
            }
            if source::reads_by_line(path).unwrap() {
                *streamed.entry(format).or_insert(0) += 1;
            }
        }
        assert!(streamed[&SourceFormat::ClaudeCode] >= 8, "{streamed:?}");
        assert!(streamed[&SourceFormat::Codex] >= 6, "{streamed:?}");
    }

    /// The session written a line at a time is its `to_jsonl` text.
    #[test]
    fn the_written_file_is_the_jsonl_text() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-session.jsonl");
        let session = import_file(&path, None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.jsonl");
        assert_eq!(session.write_to(&target).unwrap(), WriteOutcome::Created);
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            session.to_jsonl().unwrap()
        );
    }
}
