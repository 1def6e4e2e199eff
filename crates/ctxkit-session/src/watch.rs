//! The session file is watched while a session writes to it: before each append, the file the
//! writer holds open must still be the one at the session's path, and end exactly where the
//! session's last write ended. Another program that deleted, moved, replaced, truncated or extended
//! it would otherwise have the next entry land in an unlinked inode (lost), or hang on a parent that
//! is no longer in the file.

use std::fs::File;
use std::path::Path;

/// How the session file differs from what the session last wrote. Carried by
/// [`crate::SessionError::FileChanged`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    /// The file was deleted (no name links to it any more).
    Deleted,
    /// The file was moved or renamed: nothing is at the session's path, but the file still exists
    /// elsewhere.
    Moved,
    /// Another file now stands at the session's path (a program wrote a new file and renamed it
    /// over, as editors do).
    Replaced,
    /// The file is shorter than what the session wrote: lines were cut off.
    Truncated { expected: u64, found: u64 },
    /// The file is longer than what the session wrote: another program appended to it.
    Extended { expected: u64, found: u64 },
}

impl std::fmt::Display for FileChange {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Deleted => write!(formatter, "was deleted"),
            Self::Moved => write!(formatter, "was moved or renamed"),
            Self::Replaced => write!(formatter, "was replaced by another file"),
            Self::Truncated { expected, found } => write!(
                formatter,
                "was cut short by another program ({found} bytes, the session wrote {expected})"
            ),
            Self::Extended { expected, found } => write!(
                formatter,
                "was written by another program ({found} bytes, the session wrote {expected})"
            ),
        }
    }
}

/// What the writer expects of the file before an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExpectedEnd {
    /// The file ends exactly at this offset.
    Exactly(u64),
    /// A write failed: bytes of it may follow this offset (the repair cuts them), but none are
    /// missing before it.
    AtLeast(u64),
}

/// Compares the open `file` with the file at `path` and its length with `expected`.
pub(crate) fn check_file(
    file: &File,
    path: &Path,
    expected: ExpectedEnd,
) -> std::io::Result<Option<FileChange>> {
    let open = file.metadata()?;
    if let Some(change) = identity_change(&open, path)? {
        return Ok(Some(change));
    }
    let found = open.len();
    let change = match expected {
        ExpectedEnd::Exactly(expected) | ExpectedEnd::AtLeast(expected) if found < expected => {
            Some(FileChange::Truncated { expected, found })
        }
        ExpectedEnd::Exactly(expected) if found > expected => {
            Some(FileChange::Extended { expected, found })
        }
        ExpectedEnd::Exactly(_) | ExpectedEnd::AtLeast(_) => None,
    };
    Ok(change)
}

#[cfg(unix)]
fn identity_change(open: &std::fs::Metadata, path: &Path) -> std::io::Result<Option<FileChange>> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(named) if named.dev() == open.dev() && named.ino() == open.ino() => Ok(None),
        Ok(_) => Ok(Some(FileChange::Replaced)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Ok(Some(if open.nlink() == 0 {
                FileChange::Deleted
            } else {
                FileChange::Moved
            }))
        }
        Err(error) => Err(error),
    }
}

#[cfg(not(unix))]
fn identity_change(_open: &std::fs::Metadata, path: &Path) -> std::io::Result<Option<FileChange>> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(None),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Some(FileChange::Deleted)),
        Err(error) => Err(error),
    }
}
