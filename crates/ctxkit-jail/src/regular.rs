//! Bounded reads of regular files, shared by every [`crate::Jail`] read and by the reads of files
//! ctxkit finds by name outside a jail (the user's settings, the trust list, hook scripts): the open
//! never waits for a FIFO's writer, anything but a regular file (a FIFO, a device, a socket, a
//! directory) is refused before a byte is read, and at most the caller's limit is read.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use crate::JailError;

/// Whether `path` itself is a symbolic link (it is not followed); `false` when nothing is there.
/// For places ctxkit makes beside a session file someone may have shipped with its folder, where a
/// planted link must never be written or read through.
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
}

/// What a file that is not a regular one is, in words (`a FIFO`, `a directory`): for the
/// refusals that name it.
pub fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// At most `max` bytes of the regular file at `path`, and its size. Symlinks are followed (the
/// user's own settings file may be a link into a dotfiles folder), but only into a regular file,
/// and opening never waits for a writer. Nothing confines where a link leads: for a file someone
/// else chose (a project's), open it through a [`crate::Jail`] on its folder instead.
pub fn read_regular(path: &Path, max: u64) -> Result<(Vec<u8>, u64), JailError> {
    crate::check_shape(path)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| JailError::Io {
            path: path.to_owned(),
            source,
        })?;
    read_opened(file, path, max)
}

/// The whole text of the regular file at `path` when it is at most `max` bytes of UTF-8, read as
/// [`read_regular`] reads.
pub fn read_regular_to_string(path: &Path, max: u64) -> Result<String, JailError> {
    let (bytes, size) = read_regular(path, max)?;
    whole_text(bytes, size, path, max)
}

/// At most `max` bytes of the opened `file` and its size; `path` names it in errors. Anything but a
/// regular file is refused before it is read.
pub(crate) fn read_opened(
    file: std::fs::File,
    path: &Path,
    max: u64,
) -> Result<(Vec<u8>, u64), JailError> {
    let io = |source| JailError::Io {
        path: path.to_owned(),
        source,
    };
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(JailError::NotRegular {
            path: path.to_owned(),
        });
    }
    let mut bytes = Vec::new();
    // One byte past the limit: a file whose stated size is wrong (`/proc`) still shows it is longer.
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    Ok((bytes, metadata.len().max(read)))
}

/// `bytes` as text when they are the whole file (`size`) and UTF-8.
pub(crate) fn whole_text(
    bytes: Vec<u8>,
    size: u64,
    path: &Path,
    max: u64,
) -> Result<String, JailError> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) < size {
        return Err(JailError::TooLarge {
            path: path.to_owned(),
            max,
        });
    }
    String::from_utf8(bytes).map_err(|_| JailError::NotText {
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_device_and_a_long_file_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Without `O_NONBLOCK` this open waits for a writer forever.
        assert!(matches!(
            read_regular(&fifo, 1024),
            Err(JailError::NotRegular { .. })
        ));
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_regular(&zero, 1024),
            Err(JailError::NotRegular { .. })
        ));
        let long = dir.path().join("long.json");
        std::fs::write(&long, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_regular_to_string(&long, 1024),
            Err(JailError::TooLarge { max: 1024, .. })
        ));
        let (bytes, size) = read_regular(&long, 1024).unwrap();
        assert_eq!((bytes.len(), size), (1024, 2048));
    }

    #[test]
    fn a_link_to_a_regular_file_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("target.json"), "{}").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        assert_eq!(read_regular_to_string(&link, 1024).unwrap(), "{}");
        assert_eq!(read_regular_to_string(&link, 2).unwrap(), "{}");
        assert!(
            read_regular(&dir.path().join("missing"), 1)
                .unwrap_err()
                .is_not_found()
        );
    }
}
