//! Whole-file writes of session files: a temporary file beside the target, synced, then renamed over
//! it, so readers see the old file or the new one, never a part. Symlinks are followed (the file
//! they name is replaced, the link stays) and the old file's mode and owner are kept.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};

/// Writes `lines` to `path` through a temporary file in the same directory and a rename, so readers
/// see the old file or the new one, never a part.
/// A symlink is followed: the file it names is replaced, and the link stays. The new file keeps the
/// old one's mode and (when the writer may set it, as root can) owner.
pub(crate) fn write_atomic(path: &Path, lines: &[&str]) -> Result<()> {
    let target = resolve_symlinks(path)?;
    let previous = std::fs::metadata(&target).ok();
    let temporary = write_temporary(&target, lines)?;
    if let Some(previous) = &previous {
        keep_owner_and_mode(temporary.as_file(), previous, temporary.path())?;
    }
    temporary
        .persist(&target)
        .map_err(|error| SessionError::Io {
            action: "replace",
            path: target.clone(),
            source: error.error,
        })?;
    Ok(())
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

#[cfg(unix)]
fn keep_owner_and_mode(file: &File, previous: &std::fs::Metadata, path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let current = file
        .metadata()
        .map_err(SessionError::io("read metadata of", path))?;
    if (current.uid(), current.gid()) != (previous.uid(), previous.gid()) {
        // Only root (or the owner, for its own groups) may: a user rewriting someone else's file
        // in a directory it may write keeps its own ownership, as any editor would.
        let _ = std::os::unix::fs::fchown(file, Some(previous.uid()), Some(previous.gid()));
    }
    file.set_permissions(previous.permissions())
        .map_err(SessionError::io("set the mode of", path))
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, previous: &std::fs::Metadata, path: &Path) -> Result<()> {
    file.set_permissions(previous.permissions())
        .map_err(SessionError::io("set the mode of", path))
}

/// Like [`write_atomic`], for a file that must not exist yet.
pub(crate) fn write_new(path: &Path, lines: &[&str]) -> Result<()> {
    let temporary = write_temporary(path, lines)?;
    temporary
        .persist_noclobber(path)
        .map_err(|error| SessionError::Io {
            action: "create",
            path: path.to_owned(),
            source: error.error,
        })?;
    Ok(())
}

/// `lines` in a synced temporary file beside `path`.
fn write_temporary(path: &Path, lines: &[&str]) -> Result<tempfile::NamedTempFile> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        Some(_) | None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&directory)
        .map_err(SessionError::io("create directory", &directory))?;
    let mut temporary = tempfile::NamedTempFile::new_in(&directory)
        .map_err(SessionError::io("create a temporary file in", &directory))?;
    let mut buffer = String::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in lines {
        buffer.push_str(line);
        buffer.push('\n');
    }
    temporary
        .write_all(buffer.as_bytes())
        .map_err(SessionError::io("write", temporary.path()))?;
    temporary
        .as_file()
        .sync_all()
        .map_err(SessionError::io("sync", temporary.path()))?;
    Ok(temporary)
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
