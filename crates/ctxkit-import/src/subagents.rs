//! Subagent transcripts that belong to a session, found beside its file, and imported as child
//! sessions linked to their parent (`parentSession` in the header).
//!
//! - Claude Code ≥ 2.1: `<project>/<session id>/subagents/agent-<id>.jsonl`, with
//!   `agent-<id>.meta.json` beside it (the agent's type and task), and workflow agents one or two
//!   folders further down (`subagents/workflows/wf_<id>/agent-*.jsonl`);
//! - older Claude Code: `<project>/agent-<id>.jsonl` whose records carry the parent's `sessionId`;
//! - Codex: a rollout in the same directory whose `session_meta.source.subagent.thread_spawn`
//!   names the parent thread.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use crate::error::ImportError;
use crate::{ImportedSession, SourceFormat, import_file};

/// A subagent transcript of a session, and the metadata its agent wrote beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentSource {
    pub path: PathBuf,
    /// Claude Code's `agent-<id>.meta.json` (e.g. `agentType`, `description`), when present.
    pub meta: Option<JsonObject>,
}

/// The subagent transcripts of the session in `path` (whose source session id is `session_id`),
/// sorted by path. Reads only; unreadable directories and transcripts are skipped, and so are
/// links, FIFOs and devices among the transcripts. An agent's metadata file that is there but not
/// a regular file (a FIFO, a device, a link to one) or is over 1 MiB is an error
/// ([`ImportError::Io`], [`ImportError::TooLarge`]), found before anything is imported.
pub fn find_subagents(
    format: SourceFormat,
    path: &Path,
    session_id: &str,
) -> Result<Vec<SubagentSource>, ImportError> {
    let Some(dir) = path.parent() else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    match format {
        SourceFormat::ClaudeCode => {
            if let Some(stem) = path.file_stem() {
                for child in files_below(&dir.join(stem).join("subagents"), 2) {
                    if is_jsonl(&child) {
                        let meta = read_meta(&child.with_extension("meta.json"))?;
                        found.push(SubagentSource { path: child, meta });
                    }
                }
            }
            for child in files(dir) {
                let agent_file = child
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with("agent-"));
                if agent_file
                    && is_jsonl(&child)
                    && child != path
                    && first_record(&child, |record| {
                        record.get("sessionId").and_then(Value::as_str) == Some(session_id)
                    })
                {
                    found.push(SubagentSource {
                        path: child,
                        meta: None,
                    });
                }
            }
        }
        SourceFormat::Codex => {
            for child in files(dir) {
                let rollout = child
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with("rollout-"));
                if rollout
                    && child != path
                    && first_record(&child, |record| {
                        let meta = record.get("payload").and_then(Value::as_object);
                        meta.and_then(crate::codex::parent_thread_id) == Some(session_id)
                    })
                {
                    found.push(SubagentSource {
                        path: child,
                        meta: None,
                    });
                }
            }
        }
        // OpenCode's subagent sessions come with the session (`import_opencode`).
        SourceFormat::OpenCode => {}
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Imports a subagent transcript as a child of the session written to `parent_path`: the header's
/// `parentSession` names that file and `subagent` keeps the agent's metadata.
pub fn import_subagent(
    format: SourceFormat,
    subagent: &SubagentSource,
    parent_path: &Path,
) -> Result<ImportedSession, ImportError> {
    let mut session = import_file(&subagent.path, Some(format))?;
    session.header.parent_session = Some(parent_path.display().to_string());
    if let Some(meta) = &subagent.meta {
        session
            .header
            .extra
            .insert("subagent".to_owned(), Value::Object(meta.clone()));
    }
    Ok(session)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // Regular files only: a link among a transcript's subagents may lead to another transcript.
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

/// The files of `dir` and of its folders down to `depth` levels, sorted.
fn files_below(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut found = files(dir);
    if depth > 0
        && let Ok(read) = std::fs::read_dir(dir)
    {
        let mut folders: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| entry.path())
            .collect();
        folders.sort();
        for folder in folders {
            found.extend(files_below(&folder, depth - 1));
        }
    }
    found
}

fn is_jsonl(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == "jsonl")
}

/// An agent's `.meta.json`: `None` when there is none or it is not a JSON object.
fn read_meta(path: &Path) -> Result<Option<JsonObject>, ImportError> {
    let bytes = match crate::regular::read_regular(path, crate::regular::MAX_META_BYTES) {
        Ok(bytes) => bytes,
        Err(ImportError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(error) => return Err(error),
    };
    Ok(match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(meta)) => Some(meta),
        Ok(
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_),
        )
        | Err(_) => None,
    })
}

/// Whether the first readable record of a JSONL file satisfies `test` (only that line is read).
fn first_record(path: &Path, test: impl Fn(&JsonObject) -> bool) -> bool {
    let Ok(file) = crate::regular::open_regular(path) else {
        return false;
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .find(|line| !line.trim().is_empty())
        .and_then(|line| serde_json::from_str::<Value>(&line).ok())
        .and_then(|value| value.as_object().map(&test))
        .unwrap_or(false)
}
