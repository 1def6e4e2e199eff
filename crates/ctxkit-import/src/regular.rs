//! The one way the importers open a file for reading: through `ctxkit_session::open_session_file`,
//! which opens without waiting (`O_NONBLOCK`) and checks the opened handle, so a FIFO, a device, a
//! socket (or a link to one) among received transcripts is refused before a byte is read, and a
//! file over `MAX_SESSION_BYTES` is refused too. Files read whole are bounded further.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use ctxkit_session::SessionError;

use crate::error::ImportError;

/// The largest source file read whole into memory (4 GiB, as ctxkit reads a session whole): a
/// one-document Codex rollout, an OpenCode record, an earlier import being appended to.
pub(crate) const MAX_WHOLE_FILE_BYTES: u64 = 4 << 30;

/// The largest subagent metadata file read (`agent-<id>.meta.json`, a few hundred bytes as Claude
/// Code writes it).
pub(crate) const MAX_META_BYTES: u64 = 1 << 20;

/// What a refused FIFO, device or socket is called in an error.
const NOT_REGULAR: &str = "not a regular file (a FIFO, a device or a socket)";

/// The error for a path that is not a regular file (`kind` as `open_session_file` names it).
pub(crate) fn not_regular(path: &Path, kind: &str) -> ImportError {
    let source = if kind == "a directory" {
        std::io::Error::from(std::io::ErrorKind::IsADirectory)
    } else {
        std::io::Error::other(NOT_REGULAR)
    };
    ImportError::Io {
        operation: "read",
        path: path.to_owned(),
        source,
    }
}

/// Opens `path` for reading when it is a regular file, never waiting for a writer.
pub(crate) fn open_regular(path: &Path) -> Result<File, ImportError> {
    ctxkit_session::open_session_file(path).map_err(|error| match error {
        SessionError::NotARegularFile { path, kind } => not_regular(&path, kind),
        SessionError::TooLarge { path, bytes, limit } => {
            ImportError::TooLarge { path, bytes, limit }
        }
        SessionError::Io { source, .. } => ImportError::Io {
            operation: "read",
            path: path.to_owned(),
            source,
        },
        // Opening returns none of these; should it one day, the path and the message stay.
        other @ (SessionError::NotASession { .. }
        | SessionError::Locked { .. }
        | SessionError::ChangedOnDisk { .. }
        | SessionError::FileChanged { .. }
        | SessionError::TailUnrepaired { .. }
        | SessionError::CannotMigrate { .. }
        | SessionError::NewerVersion { .. }
        | SessionError::EntryNotFound { .. }
        | SessionError::NotEditable { .. }
        | SessionError::ResultWithoutCall { .. }
        | SessionError::InvalidEntry { .. }
        | SessionError::LineChanged { .. }
        | SessionError::Serialize(_)) => ImportError::Io {
            operation: "read",
            path: path.to_owned(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}

/// The whole of the regular file `path`, refused ([`ImportError::TooLarge`]) when it holds more
/// than `limit` bytes (even one whose stated size is wrong, or that grows while read).
pub(crate) fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ImportError> {
    read_bounded(&open_regular(path)?, path, limit)
}

/// The whole of the open `file` (at `path`), from where it stands, refused as [`read_regular`]
/// refuses a file over `limit`.
pub(crate) fn read_bounded(file: &File, path: &Path, limit: u64) -> Result<Vec<u8>, ImportError> {
    let stated = file
        .metadata()
        .map_err(ImportError::io("read metadata of", path))?
        .len();
    let too_large = |bytes| ImportError::TooLarge {
        path: path.to_owned(),
        bytes,
        limit,
    };
    if stated > limit {
        return Err(too_large(stated));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ImportError::io("read", path))?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Err(too_large(read));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meta.json");
        std::fs::write(&path, b"{\"a\":1}").unwrap();
        assert_eq!(read_regular(&path, 7).unwrap(), b"{\"a\":1}");
        assert!(matches!(
            read_regular(&path, 6),
            Err(ImportError::TooLarge {
                bytes: 7,
                limit: 6,
                ..
            })
        ));
        let error = read_regular(dir.path(), 6).unwrap_err().to_string();
        assert!(error.starts_with("cannot read `"), "{error}");
    }
}
