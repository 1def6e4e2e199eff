//! Reading OpenCode's two stores, read-only, into one shape ([`RawSession`]):
//!
//! - 1.x files: `storage/session/<project>/<session>.json`, `storage/message/<session>/<message>.json`,
//!   `storage/part/<message>/<part>.json` (ids sort in creation order);
//! - 2.x SQLite (`opencode.db`): tables `session` (columns), `message` and `part` (`data` JSON without
//!   the ids, which are columns), opened read-only (`mode=ro`, and `immutable=1` when no `-wal` file
//!   holds unsaved pages, so nothing is created beside the database); newer databases also hold
//!   `session_message` rows (the newer message model: one row per message, `type` and `seq` columns,
//!   `data` the message without `id`/`type`), read when the table exists.

use std::path::{Path, PathBuf};

use ctxkit_protocol::JsonObject;
use rusqlite::{Connection, OpenFlags, OptionalExtension as _};
use serde_json::Value;

use crate::error::ImportError;

/// A session with its messages in order, each with its parts in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawSession {
    /// `Session.Info`: `id`, `parentID`, `directory`, `title`, `time.created`, …
    pub(crate) info: JsonObject,
    pub(crate) messages: Vec<RawMessage>,
    /// `session_message` rows in `seq` order (empty for 1.x stores and older databases).
    pub(crate) next_messages: Vec<NextMessage>,
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
    infos
        .into_iter()
        .map(|info| {
            let id = str_of(&info, "id").unwrap_or_default().to_owned();
            let mut messages = Vec::new();
            for message_file in json_files(&root.join("message").join(&id)) {
                let message = read_object(&message_file)?;
                let message_id = str_of(&message, "id").unwrap_or_default().to_owned();
                let parts = json_files(&root.join("part").join(&message_id))
                    .iter()
                    .map(|part| read_object(part))
                    .collect::<Result<Vec<_>, _>>()?;
                messages.push(RawMessage {
                    info: message,
                    parts,
                });
            }
            Ok(RawSession {
                info,
                messages,
                next_messages: Vec::new(),
            })
        })
        .collect()
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

/// Opens an OpenCode database without writing to it or beside it.
fn open_read_only(path: &Path) -> Result<Connection, ImportError> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let immutable = !Path::new(&wal).exists();
    let uri = format!(
        "file:{}?mode=ro{}",
        path.display()
            .to_string()
            .replace('?', "%3f")
            .replace('#', "%23"),
        if immutable { "&immutable=1" } else { "" }
    );
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| ImportError::Database {
        path: path.to_owned(),
        source,
    })
}

/// The ids of the sessions in a database, newest first: every session, or only the top-level ones
/// (not subagents).
pub(crate) fn database_session_ids(
    path: &Path,
    top_level_only: bool,
) -> Result<Vec<String>, ImportError> {
    let connection = open_read_only(path)?;
    let database = |source| ImportError::Database {
        path: path.to_owned(),
        source,
    };
    let query = if top_level_only {
        "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created DESC, id"
    } else {
        "SELECT id FROM session ORDER BY time_created DESC, id"
    };
    let mut statement = connection.prepare(query).map_err(database)?;
    let ids = statement
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(database)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(database)?;
    Ok(ids)
}

/// Session `id` of a 2.x database and its subagent sessions (by `parent_id`), parents first.
pub(crate) fn read_database(path: &Path, id: &str) -> Result<Vec<RawSession>, ImportError> {
    let connection = open_read_only(path)?;
    let database = |source| ImportError::Database {
        path: path.to_owned(),
        source,
    };
    let mut sessions = Vec::new();
    let mut queue = vec![id.to_owned()];
    let mut session_query = connection
        .prepare(
            "SELECT id, parent_id, directory, title, version, time_created, time_updated, revert \
             FROM session WHERE id = ?1",
        )
        .map_err(database)?;
    let mut children_query = connection
        .prepare("SELECT id FROM session WHERE parent_id = ?1 ORDER BY time_created, id")
        .map_err(database)?;
    let mut messages_query = connection
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .map_err(database)?;
    let mut parts_query = connection
        .prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")
        .map_err(database)?;
    while let Some(current) = queue.first().cloned() {
        queue.remove(0);
        let info = session_query
            .query_row([&current], |row| {
                let mut info = JsonObject::new();
                info.insert("id".to_owned(), Value::String(row.get(0)?));
                if let Some(parent) = row.get::<_, Option<String>>(1)? {
                    info.insert("parentID".to_owned(), Value::String(parent));
                }
                info.insert("directory".to_owned(), Value::String(row.get(2)?));
                info.insert("title".to_owned(), Value::String(row.get(3)?));
                info.insert("version".to_owned(), Value::String(row.get(4)?));
                let mut time = JsonObject::new();
                time.insert("created".to_owned(), Value::from(row.get::<_, i64>(5)?));
                time.insert("updated".to_owned(), Value::from(row.get::<_, i64>(6)?));
                info.insert("time".to_owned(), Value::Object(time));
                let revert = row.get::<_, Option<String>>(7)?;
                if let Some(Ok(revert @ Value::Object(_))) =
                    revert.as_deref().map(serde_json::from_str::<Value>)
                {
                    info.insert("revert".to_owned(), revert);
                }
                Ok(info)
            })
            .optional()
            .map_err(database)?
            .ok_or_else(|| ImportError::SessionNotFound {
                path: path.to_owned(),
                id: current.clone(),
            })?;
        let rows = messages_query
            .query_map([&current], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(database)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(database)?;
        let mut messages = Vec::new();
        for (message_id, data) in rows {
            let info = with_ids(&data, &message_id, &current, None);
            let parts = parts_query
                .query_map([&message_id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                })
                .map_err(database)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(database)?
                .into_iter()
                .map(|(part_id, data)| with_ids(&data, &part_id, &current, Some(&message_id)))
                .collect();
            messages.push(RawMessage { info, parts });
        }
        let next_messages = read_next_messages(&connection, &current).map_err(database)?;
        sessions.push(RawSession {
            info,
            messages,
            next_messages,
        });
        let children = children_query
            .query_map([&current], |row| row.get::<_, String>(0))
            .map_err(database)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(database)?;
        queue.extend(children);
    }
    Ok(sessions)
}

/// The `session_message` rows of a session in `seq` order; none when the table does not exist.
fn read_next_messages(
    connection: &Connection,
    session_id: &str,
) -> Result<Vec<NextMessage>, rusqlite::Error> {
    let exists: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_message')",
        [],
        |row| row.get(0),
    )?;
    if !exists {
        return Ok(Vec::new());
    }
    // Older versions of the table have no `seq` column; their rows are in creation order.
    let has_seq: bool = connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('session_message') WHERE name = 'seq')",
        [],
        |row| row.get(0),
    )?;
    let query = if has_seq {
        "SELECT id, type, time_created, data FROM session_message WHERE session_id = ?1 \
         ORDER BY seq, id"
    } else {
        "SELECT id, type, time_created, data FROM session_message WHERE session_id = ?1 \
         ORDER BY time_created, id"
    };
    let mut statement = connection.prepare(query)?;
    let rows = statement.query_map([session_id], |row| {
        let id: String = row.get(0)?;
        let data: String = row.get(3)?;
        Ok(NextMessage {
            id,
            kind: row.get(1)?,
            time_created: row.get(2)?,
            data: parse_object(&data),
        })
    })?;
    rows.collect()
}

/// A `data` column (the object without its ids) with the ids put back, as the 1.x files hold them.
/// Data that is not a JSON object is kept under `data`.
fn with_ids(data: &str, id: &str, session_id: &str, message_id: Option<&str>) -> JsonObject {
    let mut object = parse_object(data);
    object.insert("id".to_owned(), Value::String(id.to_owned()));
    object.insert("sessionID".to_owned(), Value::String(session_id.to_owned()));
    if let Some(message_id) = message_id {
        object.insert("messageID".to_owned(), Value::String(message_id.to_owned()));
    }
    object
}

/// A `data` column as an object; data that is not a JSON object is kept under `data`.
fn parse_object(data: &str) -> JsonObject {
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

pub(crate) fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
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
    let text = std::fs::read_to_string(path).map_err(ImportError::io("read", path))?;
    match ctxkit_protocol::from_str_repaired::<Value>(&text) {
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
