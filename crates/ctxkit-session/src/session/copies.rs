//! Copies of a whole session under a new identity: `fork-from` (another project's folder) and
//! `compact --out` (a file the user names). A copy never shares its source's session id: two files
//! with one id make the id useless for finding either.

use std::path::Path;

use ctxkit_protocol::SessionHeader;

use super::Session;
use crate::atomic::{write_atomic, write_new};
use crate::entry::StoredEntry;
use crate::error::{Result, SessionError};
use crate::ids::{new_session_id, now_iso};
use crate::load::{LoadedFile, load_file};
use crate::paths::session_file_name;

impl Session {
    /// Copies every entry of the session at `source` into a new session file for `target_cwd` in
    /// `session_dir`, whose header names `source` as its parent. The source is migrated first.
    pub fn fork_from(source: &Path, target_cwd: &str, session_dir: &Path) -> Result<Self> {
        Self::fork_from_as(source, target_cwd, session_dir, None)
    }

    /// [`Session::fork_from`], the copy under the session id `id` when one is given (Pi's
    /// `--fork` with `--session-id`); the caller checks that the id is a plain name and not taken.
    pub fn fork_from_as(
        source: &Path,
        target_cwd: &str,
        session_dir: &Path,
        id: Option<String>,
    ) -> Result<Self> {
        let loaded = load_file(source)?;
        let mut header = child_header(source, target_cwd.to_owned());
        if let Some(id) = id {
            header.id = id;
        }
        let path = session_dir.join(session_file_name(&header.timestamp, &header.id));
        write_copy(&header, &loaded, &path, true)?;
        Self::open(&path)
    }

    /// Copies every entry of the session at `source` into the new file `target` (refused when it
    /// exists), under a new session id whose header names `source` as its parent; the working
    /// directory stays the source's.
    pub fn copy_to(source: &Path, target: &Path) -> Result<Self> {
        let loaded = load_file(source)?;
        let header = child_header(source, loaded.header.cwd.clone());
        write_copy(&header, &loaded, target, false)?;
        Self::open(target)
    }
}

fn child_header(source: &Path, cwd: String) -> SessionHeader {
    SessionHeader::new(
        new_session_id(),
        now_iso(),
        cwd,
        Some(absolute_display(source)),
    )
}

/// Writes `header` and the source's entry lines as stored to `path`: replacing a file there
/// (`replace`) or refusing to.
fn write_copy(
    header: &SessionHeader,
    loaded: &LoadedFile,
    path: &Path,
    replace: bool,
) -> Result<()> {
    let header_line = serde_json::to_string(header).map_err(SessionError::Serialize)?;
    let texts = loaded
        .index
        .entries()
        .iter()
        .map(StoredEntry::raw)
        .collect::<Result<Vec<_>>>()?;
    let mut lines = vec![header_line.as_str()];
    lines.extend(texts.iter().map(|text| &**text));
    if replace {
        write_atomic(path, &lines)
    } else {
        write_new(path, &lines)
    }
}

/// `path` made absolute against the working directory and resolved as Pi resolves it (`a/../b` is
/// `b`), as Pi records a parent session: a relative `parentSession` could not be followed from
/// anywhere else, and one with `..` in it read as another file (QA 2026-12-07).
pub(super) fn absolute_display(path: &Path) -> String {
    crate::paths::resolved_cwd(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::absolute_display;

    /// QA (2026-12-07): a fork of `proj/../a.jsonl` recorded that path as its parent.
    #[test]
    fn a_parent_session_is_recorded_resolved() {
        assert_eq!(
            absolute_display("/tmp/proj/../a.jsonl".as_ref()),
            "/tmp/a.jsonl"
        );
        assert_eq!(
            absolute_display("/tmp/./b/c.jsonl".as_ref()),
            "/tmp/b/c.jsonl"
        );
        let relative = absolute_display("x/../y.jsonl".as_ref());
        assert!(
            relative.starts_with('/') && relative.ends_with("/y.jsonl") && !relative.contains("..")
        );
    }
}
