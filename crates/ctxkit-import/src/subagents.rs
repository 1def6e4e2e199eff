//! Subagent transcripts that belong to a session, found beside its file, and imported as child
//! sessions linked to their parent (`parentSession` in the header).
//!
//! - Claude Code ≥ 2.1: `<project>/<session id>/subagents/agent-<id>.jsonl`, with
//!   `agent-<id>.meta.json` beside it (the agent's type and task), and workflow agents one or two
//!   folders further down (`subagents/workflows/wf_<id>/agent-*.jsonl`);
//! - older Claude Code: `<project>/agent-<id>.jsonl` whose records carry the parent's `sessionId`;
//! - Codex: a rollout whose `session_meta.source.subagent.thread_spawn` names the parent thread, in
//!   the parent's directory or, when that is a day folder of Codex's `sessions/YYYY/MM/DD/`, in a
//!   later day's (a thread spawned after midnight, or when the session was resumed another day).

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
            for child in day_folders_from(dir)
                .iter()
                .flat_map(|folder| files(folder))
            {
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

/// `dir`, and when it is a day folder `<root>/YYYY/MM/DD` (Codex's layout), the day folders of
/// `root` after it, in date order. A thread spawned in a session is written under the day it
/// started, which is a later day's folder when the session ran past midnight or was resumed.
fn day_folders_from(dir: &Path) -> Vec<PathBuf> {
    let mut folders = vec![dir.to_owned()];
    let Some((root, day)) = day_folder(dir) else {
        return folders;
    };
    for year in numbered_folders(&root, 4) {
        for month in numbered_folders(&year, 2) {
            for later in numbered_folders(&month, 2) {
                if day_folder(&later).is_some_and(|(_, date)| date > day) {
                    folders.push(later);
                }
            }
        }
    }
    folders
}

/// The root and the date (`[year, month, day]` as written) of a day folder `<root>/YYYY/MM/DD`.
fn day_folder(dir: &Path) -> Option<(PathBuf, [String; 3])> {
    let name = |path: &Path, digits: usize| {
        let name = path.file_name()?.to_str()?;
        is_numbered(name, digits).then(|| name.to_owned())
    };
    let month_folder = dir.parent()?;
    let year_folder = month_folder.parent()?;
    let date = [name(year_folder, 4)?, name(month_folder, 2)?, name(dir, 2)?];
    Some((year_folder.parent()?.to_owned(), date))
}

/// The folders of `dir` named by `digits` digits, sorted (links left out).
fn numbered_folders(dir: &Path, digits: usize) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| is_numbered(name, digits))
        })
        .map(|entry| entry.path())
        .collect();
    folders.sort();
    folders
}

/// Whether `name` is `digits` ASCII digits (`2026`, `03`), as Codex names its date folders.
fn is_numbered(name: &str, digits: usize) -> bool {
    name.len() == digits && name.bytes().all(|byte| byte.is_ascii_digit())
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
        .and_then(|line| {
            serde_json::from_str::<Value>(crate::source::without_byte_order_mark(&line)).ok()
        })
        .and_then(|value| value.as_object().map(&test))
        .unwrap_or(false)
}
