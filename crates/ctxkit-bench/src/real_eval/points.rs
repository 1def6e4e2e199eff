//! Real compaction points: a session read as `ctxkit` reads it, and at each compaction on the path
//! to its leaf the span the agent summarized, the earlier summary and the real summary.

use std::path::Path;

use ctxkit_protocol::{AgentMessage, EntryKind, SessionEntry};
use ctxkit_session::Session;

/// One compaction a real agent made.
#[derive(Debug, Clone)]
pub struct CompactionPoint {
    /// The messages it replaced: from the previous compaction's first kept entry (or the start)
    /// to its own first kept entry, summaries left out.
    pub messages: Vec<AgentMessage>,
    /// The previous compaction's summary, which the real agent's context held.
    pub previous: Option<String>,
    /// The summary the real agent wrote.
    pub summary: String,
}

/// The entries on the path to the session's leaf: a Pi or ctxkit file as it is, any other file
/// through the importer (as `ctxkit import` would write it).
pub fn load_session_entries(path: &Path) -> Result<Vec<SessionEntry>, String> {
    let describe = |error: &dyn std::fmt::Display| format!("{}: {error}", path.display());
    let session = if is_pi_session(path) {
        Session::open(path).map_err(|error| describe(&error))?
    } else {
        let imported = ctxkit_import::import_file(path, None).map_err(|error| describe(&error))?;
        let text = imported.to_jsonl().map_err(|error| describe(&error))?;
        let file = tempfile::NamedTempFile::new().map_err(|error| describe(&error))?;
        std::fs::write(file.path(), text).map_err(|error| describe(&error))?;
        Session::open(file.path()).map_err(|error| describe(&error))?
    };
    session
        .branch_path(None)
        .into_iter()
        .map(|stored| stored.parse().map_err(|error| describe(&error)))
        .collect()
}

fn is_pi_session(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let first = text.lines().next().unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(first)
        .ok()
        .and_then(|value| value.get("type")?.as_str().map(|kind| kind == "session"))
        .unwrap_or(false)
}

/// The compaction points of a path, oldest first; a compaction with an empty summary (a provider's
/// opaque compaction) has none to compare with and is left out.
pub fn compaction_points(entries: &[SessionEntry]) -> Vec<CompactionPoint> {
    let position = |id: &str| entries.iter().position(|entry| entry.id == id);
    let mut points = Vec::new();
    let mut start = 0;
    let mut previous: Option<String> = None;
    for (index, entry) in entries.iter().enumerate() {
        let EntryKind::Compaction(compaction) = &entry.kind else {
            continue;
        };
        let end = position(&compaction.first_kept_entry_id)
            .filter(|kept| *kept < index && *kept >= start)
            .unwrap_or(index);
        let mut messages: Vec<AgentMessage> = entries[start..end]
            .iter()
            .filter_map(|entry| span_message(&entry.kind))
            .collect();
        while messages
            .last()
            .is_some_and(|last| ctxkit_import::wrote_compaction_summary(last, &compaction.summary))
        {
            messages.pop();
        }
        if !compaction.summary.trim().is_empty() {
            points.push(CompactionPoint {
                messages,
                previous: previous.clone(),
                summary: compaction.summary.clone(),
            });
            previous = Some(compaction.summary.clone());
        }
        start = end;
    }
    points
}

/// The message an entry puts in a span: conversation messages, not the summaries of earlier
/// compactions or branches (the earlier summary is passed apart).
fn span_message(kind: &EntryKind) -> Option<AgentMessage> {
    let EntryKind::Message(message) = kind else {
        return None;
    };
    match message.as_ref() {
        AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_) => None,
        other @ (AgentMessage::User(_)
        | AgentMessage::Assistant(_)
        | AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::Unknown(_)) => Some(other.clone()),
    }
}
