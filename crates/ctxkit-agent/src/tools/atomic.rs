//! Writes that cannot destroy: the new content goes to a temporary file beside the target, is
//! flushed to disk, given the target's mode (and owner, where allowed), and renamed over the
//! target in one step. On any error the temporary file is removed and the target is as it was.
//! The path given is the resolved one ([`crate::workspace::resolve`]), so writing "through" a
//! symlink replaces the file it points to and leaves the link as it was.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells temporary files of one process apart.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces the file at `path` (resolved, its directory existing) by `content`, atomically.
pub fn write_file(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let directory = path.parent().unwrap_or(Path::new("."));
    let previous = std::fs::metadata(path).ok();
    let temporary = temporary_path(path);
    let written = (|| {
        // A new file gets the usual mode (the umask applies); a replaced one its own, below.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if previous.is_some() { 0o600 } else { 0o666 })
            .open(&temporary)?;
        file.write_all(content)?;
        if let Some(metadata) = &previous {
            file.set_permissions(std::fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
            // Keeping the owner needs privileges; a file the user could write stays theirs.
            let _ = std::os::unix::fs::fchown(&file, Some(metadata.uid()), Some(metadata.gid()));
        }
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename itself is on disk once the directory is synced (best effort).
    if let Ok(directory) = File::open(directory) {
        let _ = directory.sync_all();
    }
    Ok(())
}

/// `.<name>.ctxkit-<pid>-<n>.tmp` beside `path`.
fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.ctxkit-{}-{count}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_file(&path, b"new content").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new content");
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o751);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a directory: the final rename fails after the content was written.
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "kept").unwrap();
        assert!(write_file(&target, b"x").is_err());
        assert_eq!(
            std::fs::read_to_string(target.join("inside")).unwrap(),
            "kept"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "the temporary file is removed");
    }
}
