//! Listing Claude Code and Codex sessions from their directories, as `SessionInfoRecord`s of what an
//! import would produce. Reads only; newest first.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use ctxkit_protocol::{AgentMessage, EntryKind, MessageContent, SessionEntry, SessionInfoRecord};

use crate::error::ImportError;
use crate::{ImportedSession, SourceFormat, convert_read_file, read_source};

/// A file a listing could not read or convert, and why.
#[derive(Debug)]
pub struct SkippedSource {
    pub path: PathBuf,
    pub error: ImportError,
}

/// Where an agent keeps its sessions: under the directory its own variable names, as the agent
/// itself looks (`$CLAUDE_CONFIG_DIR/projects`, `$CODEX_HOME/sessions`, `$XDG_DATA_HOME/opencode`),
/// else under `home` (`.claude/projects`, `.codex/sessions`, `.local/share/opencode`). `variable`
/// reads the environment; an empty or relative value is ignored (the XDG rule).
pub fn default_sessions_root(
    format: SourceFormat,
    home: &Path,
    variable: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> PathBuf {
    let set = |name: &str| {
        variable(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    match format {
        SourceFormat::ClaudeCode => set("CLAUDE_CONFIG_DIR")
            .unwrap_or_else(|| home.join(".claude"))
            .join("projects"),
        SourceFormat::Codex => set("CODEX_HOME")
            .unwrap_or_else(|| home.join(".codex"))
            .join("sessions"),
        SourceFormat::OpenCode => set("XDG_DATA_HOME")
            .unwrap_or_else(|| home.join(".local").join("share"))
            .join("opencode"),
    }
}

/// Every session file of `format` under `root` (Claude Code: `<root>/<project>/*.jsonl` and
/// `<root>/<project>/<session>/subagents/**/*.jsonl`, or the same one level up when `root` is a
/// project's folder; Codex:
/// `rollout-*.jsonl` at any depth; OpenCode: `opencode.db` sessions as `opencode.db#<id>` and
/// `storage/session/*/*.json`), newest first with subagents right after their parent session
/// (`parentSessionPath`), and the files that could not be read. A missing
/// root lists nothing.
pub fn list_foreign_sessions(
    format: SourceFormat,
    root: &Path,
) -> Result<(Vec<SessionInfoRecord>, Vec<SkippedSource>), ImportError> {
    let mut files = Vec::new();
    if root.is_dir() {
        let depth = match format {
            SourceFormat::ClaudeCode => Some(5),
            SourceFormat::Codex => Some(4),
            SourceFormat::OpenCode => None,
        };
        // Claude Code's sessions lie one folder down, in each project's folder; a project's own
        // folder named as the root holds them directly (`--dir ~/.claude/projects/-home-me-app`
        // listed nothing).
        let level = if format == SourceFormat::ClaudeCode && holds_sessions_directly(root) {
            1
        } else {
            2
        };
        if let Some(depth) = depth {
            collect(format, root, root, (depth, level), &mut files)?;
        }
    }
    files.sort();
    let converted: Vec<(PathBuf, Result<ImportedSession, ImportError>)> = match format {
        SourceFormat::OpenCode => crate::opencode::list_sessions(root),
        SourceFormat::ClaudeCode | SourceFormat::Codex => files
            .into_iter()
            .map(|path| {
                let session =
                    read_source(&path).and_then(|source| convert_read_file(&source, format));
                (path, session)
            })
            .collect(),
    };
    let mut records = Vec::new();
    let mut parents: Vec<Option<String>> = Vec::new();
    let mut skipped = Vec::new();
    for (path, session) in converted {
        match session {
            Ok(session) => {
                parents.push(parent_session_id(&session));
                records.push(info_record(&path, &session));
            }
            Err(error) => skipped.push(SkippedSource { path, error }),
        }
    }
    // Subagents name their parent session by id: link them to its file.
    let mut path_of_id: HashMap<String, String> = HashMap::new();
    for (record, parent) in records.iter().zip(&parents) {
        if parent.is_none() {
            path_of_id.insert(record.id.clone(), record.path.clone());
        }
    }
    for (record, parent) in records.iter_mut().zip(&parents) {
        record.parent_session_path = parent
            .as_ref()
            .and_then(|parent| path_of_id.get(parent).cloned());
    }
    Ok((under_parents(records), skipped))
}

/// Newest first, each listed parent followed by its subagents (oldest first).
fn under_parents(mut records: Vec<SessionInfoRecord>) -> Vec<SessionInfoRecord> {
    records.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let listed: HashSet<String> = records.iter().map(|record| record.path.clone()).collect();
    let (children, top): (Vec<_>, Vec<_>) = records.into_iter().partition(|record| {
        record
            .parent_session_path
            .as_ref()
            .is_some_and(|parent| listed.contains(parent))
    });
    let mut by_parent: HashMap<String, Vec<SessionInfoRecord>> = HashMap::new();
    for child in children.into_iter().rev() {
        let parent = child.parent_session_path.clone().unwrap_or_default();
        by_parent.entry(parent).or_default().push(child);
    }
    let mut ordered = Vec::new();
    for record in top {
        let kids = by_parent.remove(&record.path).unwrap_or_default();
        ordered.push(record);
        ordered.extend(kids);
    }
    ordered
}

fn parent_session_id(session: &ImportedSession) -> Option<String> {
    session
        .header
        .extra
        .get("importedFrom")?
        .get("parentSessionId")?
        .as_str()
        .map(str::to_owned)
}

/// Whether `folder` holds a `.jsonl` file itself (a Claude Code project's folder).
fn holds_sessions_directly(folder: &Path) -> bool {
    std::fs::read_dir(folder).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|entry| {
            entry.path().is_file() && entry.file_name().to_string_lossy().ends_with(".jsonl")
        })
    })
}

/// Collects the session files below `dir`, at most `depth` folders down; a Claude Code session
/// is `level` components below `root` (2: `<project>/<session>.jsonl`; 1 in a project's folder).
fn collect(
    format: SourceFormat,
    root: &Path,
    dir: &Path,
    (depth, level): (usize, usize),
    files: &mut Vec<PathBuf>,
) -> Result<(), ImportError> {
    let read = std::fs::read_dir(dir).map_err(ImportError::io("read directory", dir))?;
    for entry in read.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            if depth > 0 {
                collect(format, root, &path, (depth - 1, level), files)?;
            }
            continue;
        }
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let wanted = match format {
            // `<project>/<session>.jsonl` and `<project>/<session>/subagents/[…/]agent-*.jsonl`.
            SourceFormat::ClaudeCode => {
                let parts: Vec<_> = path
                    .strip_prefix(root)
                    .map(|relative| relative.components().collect())
                    .unwrap_or_default();
                let in_subagents = (level + 2..=level + 4).contains(&parts.len())
                    && parts[level].as_os_str() == std::ffi::OsStr::new("subagents");
                (parts.len() == level || in_subagents) && name.ends_with(".jsonl")
            }
            SourceFormat::Codex => {
                name.starts_with("rollout-")
                    && (name.ends_with(".jsonl") || name.ends_with(".json"))
            }
            SourceFormat::OpenCode => false,
        };
        if wanted {
            files.push(path);
        }
    }
    Ok(())
}

/// The listing record of an imported session. Its message count and first message are those of
/// the branch the session continues from (root to leaf, the leaf being the last entry): messages a
/// side branch holds (a sidechain, an undone OpenCode revert, a rolled-back Codex
/// turn) are not counted, compacted ones are.
pub(crate) fn info_record(path: &Path, session: &ImportedSession) -> SessionInfoRecord {
    let entries = session.entries();
    let branch = leaf_branch(&entries);
    let mut name = None;
    let mut message_count = 0;
    let mut first_message = None;
    for entry in &entries {
        match &entry.kind {
            EntryKind::Message(message) => {
                if !branch.contains(entry.id.as_str()) {
                    continue;
                }
                message_count += 1;
                if first_message.is_none()
                    && let AgentMessage::User(user) = message.as_ref()
                {
                    // Injected context (Codex's `AGENTS.md` and environment blocks, Claude
                    // Code's reminders) is not what the user asked.
                    first_message = ctxkit_session::listed_first_message(text_of(&user.content));
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
    let modified = entries
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

/// The ids of the entries from the last entry (the leaf when the file is opened) up to its root.
fn leaf_branch(entries: &[SessionEntry]) -> HashSet<&str> {
    let parents: HashMap<&str, Option<&str>> = entries
        .iter()
        .map(|entry| (entry.id.as_str(), entry.parent_id.as_deref()))
        .collect();
    let mut branch = HashSet::new();
    let mut next = entries.last().map(|entry| entry.id.as_str());
    // `insert` refusing an id already walked ends a parent cycle.
    while let Some(id) = next
        && branch.insert(id)
    {
        next = parents.get(id).copied().flatten();
    }
    branch
}

fn text_of(content: &MessageContent) -> String {
    content.joined_text(" ")
}
