//! Opening a session file for reading: only regular files, of a bounded size. A FIFO would block
//! the open (and every read after it) until a writer shows up, a character device such as
//! `/dev/zero` never ends; both are refused before a byte is read.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::{Result, SessionError};

/// The largest session file ctxkit reads (64 GiB): far above any real session. Large message lines
/// stay on disk when a file is loaded, so memory follows the number of entries, not this size.
pub const MAX_SESSION_BYTES: u64 = 64 << 30;

/// The largest file read whole into memory (4 GiB): a session file that is not valid UTF-8 (read
/// whole, with replacements) or that is listed. A file that keeps growing cannot take all memory.
pub(crate) const MAX_IN_MEMORY_BYTES: u64 = 4 << 30;

/// Opens `path` for reading when it is a regular file (symlinks followed) of at most
/// [`MAX_SESSION_BYTES`], as every session reader opens it: a FIFO, a device or a socket is
/// refused ([`SessionError::NotARegularFile`]) without waiting for a writer. Public for a command
/// that looks at a file before it knows whether it is a session (`ctxkit export` and `view` read
/// the first line to choose between a session and another agent's transcript).
pub fn open_session_file(path: &Path) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    // Opening a FIFO without O_NONBLOCK waits for a writer; a regular file ignores the flag.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(SessionError::io("open", path))?;
    let metadata = file
        .metadata()
        .map_err(SessionError::io("read metadata of", path))?;
    let file_type = metadata.file_type();
    if !file_type.is_file() {
        return Err(SessionError::NotARegularFile {
            path: path.to_owned(),
            kind: ctxkit_jail::file_kind(&file_type),
        });
    }
    if metadata.len() > MAX_SESSION_BYTES {
        return Err(SessionError::TooLarge {
            path: path.to_owned(),
            bytes: metadata.len(),
            limit: MAX_SESSION_BYTES,
        });
    }
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_fifos_and_devices_at_once() {
        let directory = tempfile::tempdir().unwrap();
        let fifo = directory.path().join("s.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        // Without O_NONBLOCK this open would wait for a writer forever.
        assert!(matches!(
            open_session_file(&fifo),
            Err(SessionError::NotARegularFile { kind: "a FIFO", .. })
        ));
        assert!(matches!(
            open_session_file(Path::new("/dev/zero")),
            Err(SessionError::NotARegularFile {
                kind: "a character device",
                ..
            })
        ));
        assert!(matches!(
            open_session_file(directory.path()),
            Err(SessionError::NotARegularFile { .. })
        ));
    }
}
