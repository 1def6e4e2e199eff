//! Listing Claude Code and Codex sessions from their directories, as `SessionInfoRecord`s of what an
//! import would produce. Reads only; newest first.

use std::path::{Path, PathBuf};

use ctxkit_protocol::{AgentMessage, EntryKind, MessageContent, SessionInfoRecord};

use crate::error::ImportError;
use crate::{ImportedSession, SourceFormat, convert, read_source};

/// A file a listing could not read or convert, and why.
#[derive(Debug)]
pub struct SkippedSource {
    pub path: PathBuf,
    pub error: ImportError,
}

/// Where an agent keeps its sessions under `home`: `.claude/projects` or `.codex/sessions`.
pub fn default_sessions_root(format: SourceFormat, home: &Path) -> PathBuf {
    match format {
        SourceFormat::ClaudeCode => home.join(".claude").join("projects"),
        SourceFormat::Codex => home.join(".codex").join("sessions"),
    }
}

/// Every session file of `format` under `root` (Claude Code: `<root>/<project>/*.jsonl`; Codex:
/// `rollout-*.jsonl` at any depth), newest first, and the files that could not be read. A missing
/// root lists nothing.
pub fn list_foreign_sessions(
    format: SourceFormat,
    root: &Path,
) -> Result<(Vec<SessionInfoRecord>, Vec<SkippedSource>), ImportError> {
    let mut files = Vec::new();
    if root.is_dir() {
        let depth = match format {
            SourceFormat::ClaudeCode => 1,
            SourceFormat::Codex => 4,
        };
        collect(format, root, depth, &mut files)?;
    }
    files.sort();
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    for path in files {
        match read_source(&path).and_then(|source| convert(&source, format)) {
            Ok(session) => records.push(info_record(&path, &session)),
            Err(error) => skipped.push(SkippedSource { path, error }),
        }
    }
    records.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok((records, skipped))
}

fn collect(
    format: SourceFormat,
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
) -> Result<(), ImportError> {
    let read = std::fs::read_dir(dir).map_err(ImportError::io("read directory", dir))?;
    for entry in read.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if depth > 0 {
                collect(format, &path, depth - 1, files)?;
            }
            continue;
        }
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let wanted = match format {
            SourceFormat::ClaudeCode => depth == 0 && name.ends_with(".jsonl"),
            SourceFormat::Codex => name.starts_with("rollout-") && name.ends_with(".jsonl"),
        };
        if wanted {
            files.push(path);
        }
    }
    Ok(())
}

/// The listing record of an imported session.
pub(crate) fn info_record(path: &Path, session: &ImportedSession) -> SessionInfoRecord {
    let mut name = None;
    let mut message_count = 0;
    let mut first_message = None;
    for entry in &session.entries {
        match &entry.kind {
            EntryKind::Message(message) => {
                message_count += 1;
                if first_message.is_none()
                    && let AgentMessage::User(user) = message.as_ref()
                {
                    first_message = Some(text_of(&user.content)).filter(|text| !text.is_empty());
                }
            }
            EntryKind::SessionInfo(info) => name.clone_from(&info.name),
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => {}
        }
    }
    let modified = session
        .entries
        .iter()
        .map(|entry| entry.timestamp.as_str())
        .max()
        .unwrap_or(session.header.timestamp.as_str())
        .to_owned();
    SessionInfoRecord {
        path: path.display().to_string(),
        id: session.header.id.clone(),
        cwd: session.header.cwd.clone(),
        name,
        parent_session_path: None,
        created: session.header.timestamp.clone(),
        modified,
        message_count,
        first_message: first_message.unwrap_or_else(|| "(no messages)".to_owned()),
        format_version: None,
    }
}

fn text_of(content: &MessageContent) -> String {
    content.joined_text(" ")
}
