//! Which session of a project was used last, for `--continue`: a one-line record
//! ([`LAST_USED_RECORD`]) in the project's sessions folder names the file an agent last had open.
//! It beats the newest file (a fork made with `/fork` is newer than the session the user went back
//! to) as long as no session file was written after the record: a session written since (by Pi,
//! another ctxkit) is the one used last.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};
use crate::listing::{find_most_recent_session, has_session_header};

/// The record's file name in a sessions folder (not a `.jsonl` file, so listings skip it).
pub const LAST_USED_RECORD: &str = ".ctxkit-last-used";

/// Records `file` as the session of `session_dir` used last; only a file in `session_dir` is
/// recorded (by name; another file leaves the record as it is). Written with a temporary file and
/// a rename, so a reader sees the old record or the new one; a symlink at the record's name is
/// replaced, never followed.
pub fn record_last_used_session(session_dir: &Path, file: &Path) -> Result<()> {
    let name = match (
        file.parent(),
        file.file_name().and_then(|name| name.to_str()),
    ) {
        (Some(parent), Some(name)) if parent == session_dir && !name.contains('\n') => name,
        (Some(_) | None, Some(_) | None) => return Ok(()),
    };
    let text = name.to_owned();
    std::fs::create_dir_all(session_dir)
        .map_err(SessionError::io("create directory", session_dir))?;
    let mut temporary = tempfile::NamedTempFile::new_in(session_dir)
        .map_err(SessionError::io("create a temporary file in", session_dir))?;
    temporary
        .write_all(format!("{text}\n").as_bytes())
        .map_err(SessionError::io("write", temporary.path().to_owned()))?;
    let record = session_dir.join(LAST_USED_RECORD);
    temporary
        .persist(&record)
        .map_err(|error| SessionError::Io {
            action: "write",
            path: record,
            source: error.error,
        })?;
    Ok(())
}

/// The session of `session_dir` used last: the recorded file while no session file was modified
/// after the record was written (and it still is a session file), else the newest session file.
/// `None` when the folder holds no session.
pub fn find_last_used_session(session_dir: &Path) -> Option<PathBuf> {
    let newest = find_most_recent_session(session_dir)?;
    Some(recorded_session(session_dir, &newest).unwrap_or(newest))
}

fn recorded_session(session_dir: &Path, newest: &Path) -> Option<PathBuf> {
    let record = session_dir.join(LAST_USED_RECORD);
    let metadata = std::fs::symlink_metadata(&record).ok()?;
    if !metadata.is_file() || metadata.len() > 4096 {
        return None;
    }
    let written = metadata.modified().ok()?;
    let newest_modified = std::fs::metadata(newest).and_then(|newest| newest.modified());
    if newest_modified.is_ok_and(|modified| modified > written) {
        return None;
    }
    let text = std::fs::read_to_string(&record).ok()?;
    let named = text.trim_end_matches(['\n', '\r']);
    // A bare file name in the folder, nothing else.
    if named.is_empty() || named.contains(['\n', '/', '\\']) || named.starts_with('.') {
        return None;
    }
    let file = session_dir.join(named);
    let is_session = file
        .extension()
        .is_some_and(|extension| extension == "jsonl")
        && file.is_file()
        && has_session_header(&file);
    is_session.then_some(file)
}
