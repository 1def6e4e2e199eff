//! OpenCode sessions → v3 sessions: the 1.x file store (`storage/session/<project>/<id>.json` with
//! `storage/message` and `storage/part`) and the 2.x SQLite database (`opencode.db`), both read-only
//! (`storage`), converted message by message (`convert`). A session comes with its subagent
//! sessions (OpenCode's child sessions, `parentID`). Facts and assumptions: `docs/import-formats.md`.

mod blocks;
mod convert;
mod database;
mod next;
mod rows;
mod steps;
mod storage;
mod timeline;

use std::io::Read as _;
use std::path::{Path, PathBuf};

pub(crate) use blocks::INTERRUPTED_TOOL;

use crate::ImportedSession;
use crate::error::ImportError;

/// Whether `path` is an OpenCode store: a SQLite database (by its header), a
/// `storage/session/<project>/<id>.json` file, or `<database>#<session id>`.
pub fn is_opencode_path(path: &Path) -> bool {
    let (file, _) = split_session(path);
    is_database(&file) || storage::storage_root(&file).is_some()
}

/// Imports an OpenCode session and its subagent sessions (parents first; each child's header names
/// its parent in `importedFrom.parentSessionId`). `path` is a 1.x session file, or a database with
/// the session chosen as `opencode.db#<session id>` (default: the most recent top-level session).
pub fn import_opencode(path: &Path) -> Result<Vec<ImportedSession>, ImportError> {
    let (file, session) = split_session(path);
    let raw = if is_database(&file) {
        let id = match session {
            Some(id) => id,
            None => database::database_session_ids(&file, true)?
                .into_iter()
                .next()
                .ok_or_else(|| ImportError::Empty { path: file.clone() })?,
        };
        database::read_database(&file, &id)?
    } else if storage::storage_root(&file).is_some() {
        storage::read_file_store(&file)?
    } else {
        return Err(crate::detect::not_an_opencode_session(&file));
    };
    raw.into_iter().map(convert::convert_session).collect()
}

/// The OpenCode sessions under `root` (`opencode.db` and `storage/session/*/*.json`), each with
/// the path that imports it (`opencode.db#<id>` for the database).
pub(crate) fn list_sessions(root: &Path) -> Vec<(PathBuf, Result<ImportedSession, ImportError>)> {
    // OpenCode's `storage` folder named as the root (`--dir ~/.local/share/opencode/storage`, the
    // folder holding `session/`) listed nothing: its data folder is the one above it.
    let root = match root.parent() {
        Some(data)
            if root.file_name() == Some("storage".as_ref()) && root.join("session").is_dir() =>
        {
            data
        }
        Some(_) | None => root,
    };
    let mut found = Vec::new();
    let database = root.join("opencode.db");
    if is_database(&database) {
        match database::database_session_ids(&database, false) {
            Ok(ids) => {
                for id in ids {
                    let path = PathBuf::from(format!("{}#{id}", database.display()));
                    let session = database::read_database(&database, &id).and_then(|raw| {
                        raw.into_iter()
                            .next()
                            .map(convert::convert_session)
                            .ok_or_else(|| ImportError::Empty { path: path.clone() })?
                    });
                    found.push((path, session));
                }
            }
            Err(error) => found.push((database, Err(error))),
        }
    }
    let sessions_dir = root.join("storage").join("session");
    let mut projects: Vec<PathBuf> = std::fs::read_dir(&sessions_dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|project| project.path())
        .collect();
    projects.sort();
    for file in projects
        .iter()
        .flat_map(|project| storage::json_files(project))
    {
        let session = storage::read_file_store(&file).and_then(|raw| {
            raw.into_iter()
                .next()
                .map(convert::convert_session)
                .ok_or_else(|| ImportError::Empty { path: file.clone() })?
        });
        found.push((file, session));
    }
    found
}

/// `<file>#<session id>` → the file and the id (when the whole path is not itself a file).
fn split_session(path: &Path) -> (PathBuf, Option<String>) {
    if path.exists() {
        return (path.to_owned(), None);
    }
    let text = path.to_string_lossy();
    match text.rsplit_once('#') {
        Some((file, id)) if !id.is_empty() => (PathBuf::from(file), Some(id.to_owned())),
        Some(_) | None => (path.to_owned(), None),
    }
}

/// Whether a file starts with SQLite's header.
fn is_database(path: &Path) -> bool {
    if crate::refuse_special_file(path).is_err() {
        return false;
    }
    let mut magic = [0_u8; 16];
    crate::regular::open_regular(path).is_ok_and(|mut file| file.read_exact(&mut magic).is_ok())
        && &magic == b"SQLite format 3\0"
}
