//! Reading OpenCode's two stores, read-only, into one shape ([`RawSession`]):
//!
//! - 1.x files: `storage/session/<project>/<session>.json`, `storage/message/<session>/<message>.json`,
//!   `storage/part/<message>/<part>.json` (ids sort in creation order);
//! - 2.x SQLite (`opencode.db`), read by `database`.

use std::path::{Path, PathBuf};

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use super::rows::Model;
use crate::error::ImportError;
use crate::report::IssueKind;

/// A session and where its messages are read from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawSession {
    /// `Session.Info`: `id`, `parentID`, `directory`, `title`, `time.created`, …
    pub(crate) info: JsonObject,
    pub(crate) rows: Rows,
    /// The problems met reading its records (a 1.x store's unreadable record files, bytes that
    /// are not UTF-8): none stops the import.
    pub(crate) issues: Vec<IssueKind>,
}

/// A session's messages: held (in order, each with its parts in order), or read from its
/// database as they are converted (`rows`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rows {
    Loaded {
        messages: Vec<RawMessage>,
        /// `session_message` rows in `seq` order (empty for 1.x stores and older databases).
        next_messages: Vec<NextRow>,
    },
    Database {
        path: PathBuf,
        session_id: String,
        model: Model,
    },
}

/// A `session_message` row as read: its `data` kept as text until it is converted (a million
/// parsed rows would take gigabytes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NextRow {
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) time_created: i64,
    /// The `data` column.
    pub(crate) data: Box<str>,
}

impl NextRow {
    /// The row with its data parsed.
    pub(crate) fn parsed(&self) -> NextMessage {
        NextMessage {
            id: self.id.clone(),
            kind: self.kind.clone(),
            time_created: self.time_created,
            data: parse_object(&self.data),
        }
    }
}

/// A `data` column as an object; data that is not a JSON object is kept under `data`.
pub(crate) fn parse_object(data: &str) -> JsonObject {
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(object)) => object,
        Ok(
            other @ (Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_)),
        ) => {
            let mut object = JsonObject::new();
            object.insert("data".to_owned(), other);
            object
        }
        Err(_) => {
            let mut object = JsonObject::new();
            object.insert("data".to_owned(), Value::String(data.to_owned()));
            object
        }
    }
}

/// A `session_message` row: a message of OpenCode's newer model (`user`, `synthetic`, `shell`,
/// `assistant`, `compaction`, `agent-switched`, `model-switched`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NextMessage {
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) time_created: i64,
    /// The message without `id` and `type` (those are columns).
    pub(crate) data: JsonObject,
}

/// A message (`MessageV2.Info`) and its parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawMessage {
    pub(crate) info: JsonObject,
    pub(crate) parts: Vec<JsonObject>,
}

/// The `storage` directory of a 1.x session file `storage/session/<project>/<session>.json`.
pub(crate) fn storage_root(session_file: &Path) -> Option<PathBuf> {
    let project_dir = session_file.parent()?;
    let session_dir = project_dir.parent()?;
    let root = session_dir.parent()?;
    (session_dir.file_name()? == "session" && root.join("message").is_dir())
        .then(|| root.to_owned())
}

/// The folder `root/kind/<id>` of a record's messages or parts, when `id` is one plain name. An id
/// is the transcript's own text: `../../x` or `/home/u/x` would read another folder's JSON into the
/// import (an empty path, which holds no file, then).
/// A folder there that is a link is not followed either: OpenCode writes none.
fn below(root: &Path, kind: &str, id: &str) -> PathBuf {
    let folder = root.join(kind).join(id);
    let plain_folder = std::fs::symlink_metadata(&folder).is_ok_and(|metadata| metadata.is_dir());
    if ctxkit_session::file_safe_id(id).is_some() || !plain_folder {
        return PathBuf::new();
    }
    folder
}

/// The sessions of a 1.x store: `session_file` and the sessions in its project directory whose
/// `parentID` chain leads to it (its subagents), parents first.
pub(crate) fn read_file_store(session_file: &Path) -> Result<Vec<RawSession>, ImportError> {
    let root = storage_root(session_file).ok_or_else(|| ImportError::Empty {
        path: session_file.to_owned(),
    })?;
    let info = read_object(session_file)?;
    let project_dir = session_file.parent().unwrap_or(Path::new("."));
    let mut infos = vec![info];
    let others: Vec<JsonObject> = json_files(project_dir)
        .iter()
        .filter(|path| path.as_path() != session_file)
        .filter_map(|path| read_object(path).ok())
        .collect();
    collect_children(&mut infos, &others);
    let sessions = infos
        .into_iter()
        .map(|info| {
            let id = str_of(&info, "id").unwrap_or_default().to_owned();
            let mut issues = Vec::new();
            let mut messages = Vec::new();
            for message_file in json_files(&below(&root, "message", &id)) {
                // A message that cannot be read leaves its parts without a role or a place.
                let Some(message) = read_record(&root, &message_file, &mut issues) else {
                    continue;
                };
                let message_id = str_of(&message, "id").unwrap_or_default().to_owned();
                let parts = json_files(&below(&root, "part", &message_id))
                    .iter()
                    .filter_map(|part| read_record(&root, part, &mut issues))
                    .collect();
                messages.push(RawMessage {
                    info: message,
                    parts,
                });
            }
            RawSession {
                info,
                rows: Rows::Loaded {
                    messages,
                    next_messages: Vec::new(),
                },
                issues,
            }
        })
        .collect();
    Ok(sessions)
}

/// A message or part file of a 1.x store, or `None` with the reason in `issues` when it cannot
/// be read (QA: one empty or cut part file made the whole session unimportable and dropped it
/// from the listing). Bytes that are not UTF-8 are read as U+FFFD, and said so.
fn read_record(root: &Path, path: &Path, issues: &mut Vec<IssueKind>) -> Option<JsonObject> {
    let shown = || {
        path.strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let (object, replaced) = match read_lossy_object(path) {
        Ok(read) => read,
        Err(error) => {
            let reason = if matches!(error, ImportError::Empty { .. }) {
                "empty, cut short or not a JSON object".to_owned()
            } else {
                error.to_string()
            };
            issues.push(IssueKind::UnreadableRecordFile {
                file: shown(),
                reason,
            });
            return None;
        }
    };
    if replaced {
        issues.push(IssueKind::InvalidUtf8 {
            file: Some(shown()),
        });
    }
    Some(object)
}

/// Appends the sessions of `candidates` whose `parentID` is a session already in `sessions`.
fn collect_children(sessions: &mut Vec<JsonObject>, candidates: &[JsonObject]) {
    let mut index = 0;
    while index < sessions.len() {
        let id = str_of(&sessions[index], "id")
            .unwrap_or_default()
            .to_owned();
        for candidate in candidates {
            if str_of(candidate, "parentID") == Some(id.as_str()) {
                sessions.push(candidate.clone());
            }
        }
        index += 1;
    }
}

pub(crate) fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // Regular files only: a link among a store's records is not OpenCode's and may lead anywhere.
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    files.sort();
    files
}

fn read_object(path: &Path) -> Result<JsonObject, ImportError> {
    let bytes = crate::regular::read_regular(path, crate::regular::MAX_WHOLE_FILE_BYTES)?;
    let text = String::from_utf8(bytes).map_err(|error| {
        ImportError::io("read", path)(std::io::Error::new(std::io::ErrorKind::InvalidData, error))
    })?;
    parse_object_file(path, &text)
}

/// [`read_object`] reading bytes that are not UTF-8 as U+FFFD; whether any were.
fn read_lossy_object(path: &Path) -> Result<(JsonObject, bool), ImportError> {
    let bytes = crate::regular::read_regular(path, crate::regular::MAX_WHOLE_FILE_BYTES)?;
    let text = String::from_utf8_lossy(&bytes);
    let replaced = matches!(text, std::borrow::Cow::Owned(_));
    Ok((parse_object_file(path, &text)?, replaced))
}

/// The JSON object a record file holds.
fn parse_object_file(path: &Path, text: &str) -> Result<JsonObject, ImportError> {
    match ctxkit_protocol::from_str_repaired::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_),
        )
        | Err(_) => Err(ImportError::Empty {
            path: path.to_owned(),
        }),
    }
}

pub(crate) fn str_of<'a>(object: &'a JsonObject, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}
