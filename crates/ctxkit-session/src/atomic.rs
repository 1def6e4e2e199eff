//! Whole-file writes of session files through the one atomic write (`ctxkit_jail::AtomicWrite`): a
//! temporary file beside the target, synced, then renamed over it, so readers see the old file or
//! the new one, never a part. Symlinks are followed here (the file they name is replaced, the link
//! stays) and the old file's mode and owner are kept.

use std::fs::File;
use std::path::{Path, PathBuf};

use ctxkit_jail::{AtomicWrite, Existing};

use crate::error::{Result, SessionError};

/// Writes `lines` to `path` through a temporary file in the same directory and a rename, so readers
/// see the old file or the new one, never a part.
/// A symlink is followed: the file it names is replaced, and the link stays. The new file keeps the
/// old one's mode and (when the writer may set it, as root can) owner.
pub(crate) fn write_atomic(path: &Path, lines: &[&str]) -> Result<()> {
    let target = resolve_symlinks(path)?;
    write(&target, lines, Existing::Replace).map_err(|source| SessionError::Io {
        action: "replace",
        path: target.clone(),
        source,
    })
}

/// The file `path` names after following symlinks (`path` itself when it does not exist).
fn resolve_symlinks(path: &Path) -> Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(SessionError::io("resolve the symlink", path))
        }
        Ok(_) | Err(_) => Ok(path.to_owned()),
    }
}

/// Like [`write_atomic`], for a file that must not exist yet.
pub(crate) fn write_new(path: &Path, lines: &[&str]) -> Result<()> {
    write(path, lines, Existing::Refuse).map_err(|source| SessionError::Io {
        action: "create",
        path: path.to_owned(),
        source,
    })
}

/// `lines` written by the one atomic write (`ctxkit_jail::AtomicWrite`), a new file private
/// (`0600`), after creating the directory.
fn write(path: &Path, lines: &[&str], existing: Existing) -> std::io::Result<()> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)?;
    }
    let mut buffer = String::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in lines {
        buffer.push_str(line);
        buffer.push('\n');
    }
    AtomicWrite {
        existing,
        new_mode: 0o600,
    }
    .write_path(path, buffer.as_bytes())
}

/// Makes a rename or creation in `path`'s directory durable.
pub(crate) fn sync_directory(path: &Path) -> Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        Some(_) | None => PathBuf::from("."),
    };
    #[cfg(unix)]
    File::open(&directory)
        .and_then(|handle| handle.sync_all())
        .map_err(SessionError::io("sync directory", &directory))?;
    Ok(())
}
