//! OpenCode's SQLite database (`opencode.db`), opened without writing to it or beside it: read-only
//! and `immutable=1` when no `-wal` file holds unsaved pages; else the database and its `-wal` are
//! copied into a private temporary folder and the copy is read (SQLite reads a `-wal` only through a
//! `-shm` index it creates beside the database, even read-only: a bulk sweep found `opencode.db-shm`
//! made beside other people's databases).
//!
//! Sessions live in `session` (2.x, from about 1.2) and, in newer versions, in `session_v2`; a database
//! may hold both (older sessions stay in `session`). Messages are `message` rows with their `part`
//! rows (`data` JSON without the ids, which are columns) and, in newer versions, `session_message`
//! rows (the newer message model: one row per message, `type` and `seq` columns, `data` the message
//! without `id`/`type`; versions still writing `message` rows record model and agent switches
//! there too). Every table is read when it exists.

use std::collections::HashSet;
use std::path::Path;

use ctxkit_protocol::JsonObject;
use rusqlite::{Connection, OpenFlags, OptionalExtension as _};
use serde_json::Value;

use super::rows::{Model, for_each_message, for_each_next_row};
use super::storage::{RawSession, Rows, parse_object, str_of};
use super::timeline::{EVENT_TYPES, legacy_created};
use crate::error::ImportError;

/// The session tables, the newer first (a session in both is read from the newer one).
const SESSION_TABLES: [&str; 2] = ["session_v2", "session"];

fn database_error(path: &Path) -> impl Fn(rusqlite::Error) -> ImportError + '_ {
    move |source| ImportError::Database {
        path: path.to_owned(),
        source,
    }
}

/// An open OpenCode database, and the private copy it reads when there is one (removed after the
/// connection is closed: fields drop in order).
#[derive(Debug)]
pub(super) struct Database {
    connection: Connection,
    _copy: Option<tempfile::TempDir>,
}

impl std::ops::Deref for Database {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.connection
    }
}

/// Opens an OpenCode database without writing to it or beside it (see the module's comment).
pub(super) fn open_read_only(path: &Path) -> Result<Database, ImportError> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = std::path::PathBuf::from(wal);
    if !wal.exists() {
        let connection = open_uri(path, path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        return Ok(Database {
            connection,
            _copy: None,
        });
    }
    let copy = tempfile::Builder::new()
        .prefix("ctxkit-opencode-")
        .tempdir()
        .map_err(ImportError::io("make a private copy of", path))?;
    let copied = copy.path().join("opencode.db");
    std::fs::copy(path, &copied).map_err(ImportError::io("copy", path))?;
    let mut copied_wal = copied.as_os_str().to_owned();
    copied_wal.push("-wal");
    std::fs::copy(&wal, &copied_wal).map_err(ImportError::io("copy", &wal))?;
    // The copy is ours: SQLite may index its `-wal` beside it (and apply it, read-write).
    let connection = open_uri(&copied, path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    Ok(Database {
        connection,
        _copy: Some(copy),
    })
}

/// Opens `file` by its URI, read-only (`mode=ro&immutable=1`: the user's database with no `-wal`)
/// or read-write (the private copy); errors name `shown`.
fn open_uri(file: &Path, shown: &Path, flags: OpenFlags) -> Result<Connection, ImportError> {
    let parameters = if flags.contains(OpenFlags::SQLITE_OPEN_READ_WRITE) {
        "mode=rw"
    } else {
        "mode=ro&immutable=1"
    };
    let uri = format!(
        "file:{}?{parameters}",
        file.display()
            .to_string()
            .replace('?', "%3f")
            .replace('#', "%23"),
    );
    Connection::open_with_flags(
        uri,
        flags | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(database_error(shown))
}

pub(super) fn table_exists(connection: &Connection, name: &str) -> rusqlite::Result<bool> {
    connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [name],
        |row| row.get(0),
    )
}

pub(super) fn column_exists(
    connection: &Connection,
    table: &str,
    column: &str,
) -> rusqlite::Result<bool> {
    connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
        [table, column],
        |row| row.get(0),
    )
}

/// The session tables this database has, the newer first.
fn session_tables(connection: &Connection) -> rusqlite::Result<Vec<&'static str>> {
    let mut tables = Vec::new();
    for table in SESSION_TABLES {
        if table_exists(connection, table)? {
            tables.push(table);
        }
    }
    Ok(tables)
}

/// The ids of the sessions in a database, newest first: every session, or only the top-level ones
/// (not subagents).
pub(crate) fn database_session_ids(
    path: &Path,
    top_level_only: bool,
) -> Result<Vec<String>, ImportError> {
    let connection = open_read_only(path)?;
    let database = database_error(path);
    let mut sessions: Vec<(i64, String)> = Vec::new();
    for table in session_tables(&connection).map_err(&database)? {
        let filter = if top_level_only {
            " WHERE parent_id IS NULL"
        } else {
            ""
        };
        let query = format!("SELECT time_created, id FROM {table}{filter}");
        let mut statement = connection.prepare(&query).map_err(&database)?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(&database)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&database)?;
        for row in rows {
            if !sessions.iter().any(|(_, id)| *id == row.1) {
                sessions.push(row);
            }
        }
    }
    sessions.sort_by(|left, right| right.0.cmp(&left.0).then_with(|| left.1.cmp(&right.1)));
    Ok(sessions.into_iter().map(|(_, id)| id).collect())
}

/// Session `id` of a database and its subagent sessions (by `parent_id`), parents first.
pub(crate) fn read_database(path: &Path, id: &str) -> Result<Vec<RawSession>, ImportError> {
    let connection = open_read_only(path)?;
    let database = database_error(path);
    let tables = session_tables(&connection).map_err(&database)?;
    let mut sessions = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![id.to_owned()];
    while !queue.is_empty() {
        let current = queue.remove(0);
        if !seen.insert(current.clone()) {
            continue;
        }
        let info = session_info(&connection, &tables, &current)
            .map_err(&database)?
            .ok_or_else(|| ImportError::SessionNotFound {
                path: path.to_owned(),
                id: current.clone(),
            })?;
        let rows = session_rows(&connection, path, &current).map_err(&database)?;
        sessions.push(RawSession {
            info,
            rows,
            issues: Vec::new(),
        });
        queue.extend(children(&connection, &tables, &current).map_err(&database)?);
    }
    Ok(sessions)
}

/// A session's row as `Session.Info` (`id`, `parentID`, `directory`, `title`, `version`, `time`,
/// `revert`), from the first table that has it.
fn session_info(
    connection: &Connection,
    tables: &[&str],
    id: &str,
) -> rusqlite::Result<Option<JsonObject>> {
    for table in tables {
        let query = format!(
            "SELECT id, parent_id, directory, title, version, time_created, time_updated, revert \
             FROM {table} WHERE id = ?1"
        );
        let info = connection
            .query_row(&query, [id], |row| {
                let mut info = JsonObject::new();
                info.insert("id".to_owned(), Value::String(row.get(0)?));
                let text_columns = [
                    (1, "parentID"),
                    (2, "directory"),
                    (3, "title"),
                    (4, "version"),
                ];
                for (column, key) in text_columns {
                    if let Some(text) = row.get::<_, Option<String>>(column)? {
                        info.insert(key.to_owned(), Value::String(text));
                    }
                }
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
            .optional()?;
        if info.is_some() {
            return Ok(info);
        }
    }
    Ok(None)
}

/// The child sessions of `id` in creation order, from every session table.
fn children(connection: &Connection, tables: &[&str], id: &str) -> rusqlite::Result<Vec<String>> {
    let mut found: Vec<(i64, String)> = Vec::new();
    for table in tables {
        let query = format!("SELECT time_created, id FROM {table} WHERE parent_id = ?1");
        let mut statement = connection.prepare(&query)?;
        let rows = statement
            .query_map([id], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        for row in rows {
            if !found.iter().any(|(_, child)| *child == row.1) {
                found.push(row);
            }
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, child)| child).collect())
}

/// How a session's rows are read: streamed from the one model that holds its history, or read
/// whole when OpenCode shows rows of both (`message` rows an older version wrote after the newest
/// `session_message` row of history, which `timeline` merges by creation time). A session whose
/// only `session_message` rows are events (switches recorded beside `message` rows) streams its
/// `message` rows, the events merged in (`rows`).
fn session_rows(connection: &Connection, path: &Path, session_id: &str) -> rusqlite::Result<Rows> {
    let streamed = |model| Rows::Database {
        path: path.to_owned(),
        session_id: session_id.to_owned(),
        model,
    };
    // Without `message` rows the history is the `session_message` rows (a scan of those saved).
    if !has_legacy_rows(connection, session_id)? {
        return Ok(streamed(Model::Next));
    }
    let Some(latest) = latest_history_row(connection, session_id)? else {
        return Ok(streamed(Model::Legacy));
    };
    // Messages newer than every `session_message` row of history that are not one of them.
    let mut later = Vec::new();
    for_each_message(connection, session_id, &mut |message| {
        if legacy_created(&message.info) > latest {
            later.push(str_of(&message.info, "id").unwrap_or_default().to_owned());
        }
    })?;
    let next_ids = if later.is_empty() {
        HashSet::new()
    } else {
        next_row_ids(connection, session_id)?
    };
    if later.iter().all(|id| next_ids.contains(id)) {
        return Ok(streamed(Model::Next));
    }
    let mut messages = Vec::new();
    for_each_message(connection, session_id, &mut |message| {
        messages.push(message)
    })?;
    let mut next_messages = Vec::new();
    for_each_next_row(connection, session_id, &mut |row| next_messages.push(row))?;
    Ok(Rows::Loaded {
        messages,
        next_messages,
    })
}

/// Whether a session has `message` rows.
fn has_legacy_rows(connection: &Connection, session_id: &str) -> rusqlite::Result<bool> {
    if !table_exists(connection, "message")? {
        return Ok(false);
    }
    connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM message WHERE session_id = ?1)",
        [session_id],
        |row| row.get(0),
    )
}

/// The creation time of a session's newest `session_message` row of history (not an event, see
/// `timeline::EVENT_TYPES`); none without such rows.
fn latest_history_row(connection: &Connection, session_id: &str) -> rusqlite::Result<Option<i64>> {
    if !table_exists(connection, "session_message")? {
        return Ok(None);
    }
    let events = EVENT_TYPES.map(|kind| format!("'{kind}'")).join(", ");
    let query = format!(
        "SELECT max(time_created) FROM session_message WHERE session_id = ?1 \
         AND type NOT IN ({events})"
    );
    connection.query_row(&query, [session_id], |row| row.get(0))
}

/// The ids of a session's `session_message` rows.
fn next_row_ids(connection: &Connection, session_id: &str) -> rusqlite::Result<HashSet<String>> {
    let mut statement =
        connection.prepare("SELECT id FROM session_message WHERE session_id = ?1")?;
    let ids = statement
        .query_map([session_id], |row| row.get(0))?
        .collect::<Result<HashSet<String>, _>>()?;
    Ok(ids)
}

/// A `data` column (the object without its ids) with the ids put back, as the 1.x files hold them.
/// Data that is not a JSON object is kept under `data`.
pub(super) fn with_ids(
    data: &str,
    id: &str,
    session_id: &str,
    message_id: Option<&str>,
) -> JsonObject {
    let mut object = parse_object(data);
    object.insert("id".to_owned(), Value::String(id.to_owned()));
    object.insert("sessionID".to_owned(), Value::String(session_id.to_owned()));
    if let Some(message_id) = message_id {
        object.insert("messageID".to_owned(), Value::String(message_id.to_owned()));
    }
    object
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Found by a bulk sweep: a database whose `-wal` held pages got an `opencode.db-shm` beside it
    /// at every read. The rows only the `-wal` holds are read all the same.
    #[test]
    fn a_database_with_a_wal_is_read_through_a_private_copy_leaving_nothing_beside_it() {
        let made = tempfile::tempdir().unwrap();
        let source = made.path().join("opencode.db");
        let writer = Connection::open(&source).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
                 CREATE TABLE session (id TEXT PRIMARY KEY);
                 INSERT INTO session VALUES ('ses_in_the_wal');",
            )
            .unwrap();
        // The database and its `-wal` as a repository holds them: no `-shm`.
        let shared = tempfile::tempdir().unwrap();
        let path = shared.path().join("opencode.db");
        std::fs::copy(&source, &path).unwrap();
        std::fs::copy(
            made.path().join("opencode.db-wal"),
            shared.path().join("opencode.db-wal"),
        )
        .unwrap();
        drop(writer);
        let before = std::fs::read_dir(shared.path()).unwrap().flatten().count();
        let database = open_read_only(&path).unwrap();
        let id: String = database
            .query_row("SELECT id FROM session", [], |row| row.get(0))
            .unwrap();
        assert_eq!(id, "ses_in_the_wal");
        drop(database);
        let names: Vec<String> = std::fs::read_dir(shared.path())
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), before, "{names:?}");
        assert!(
            !names.iter().any(|name| name.ends_with("-shm")),
            "{names:?}"
        );
    }
}
