//! The private folders that hold a database session's working copy (`ctxkit-serve-<pid>-…` in the
//! temporary folder). Closing the session removes its folder; a server that was killed cannot, so
//! the next server of the same user removes the folders whose process is gone.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use ctxkit_agent::tools::{current_user_id, is_running};

const PREFIX: &str = "ctxkit-serve-";

/// A new private folder (`0700`) for one session's copy, named after this process.
pub(crate) fn private_folder() -> std::io::Result<tempfile::TempDir> {
    ctxkit_session::private_temporary_folder(&format!("{PREFIX}{}-", std::process::id()))
}

/// Removes the copies in `temporary` that servers of this user left when they were killed; returns
/// how many folders were removed. A folder of a running process, of another user, or holding
/// anything but session files is kept.
pub fn remove_abandoned_copies(temporary: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(temporary) else {
        return 0;
    };
    let user = current_user_id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let Some(pid) = copy_pid(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        let path = entry.path();
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let ours = user.is_some_and(|user| metadata.uid() == user);
        if ours && metadata.is_dir() && !is_running(pid) && holds_only_sessions(&path) {
            removed += usize::from(std::fs::remove_dir_all(&path).is_ok());
        }
    }
    removed
}

/// The process id in a folder name `ctxkit-serve-<pid>-<random>`.
fn copy_pid(name: &str) -> Option<u32> {
    let (pid, random) = name.strip_prefix(PREFIX)?.split_once('-')?;
    if random.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// Whether `folder` holds nothing but plain `.jsonl` files (what a server puts there).
fn holds_only_sessions(folder: &Path) -> bool {
    let Ok(mut entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.all(|entry| {
        entry.is_ok_and(|entry| {
            let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
            is_file && entry.path().extension().is_some_and(|ext| ext == "jsonl")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_copies_are_recognised() {
        assert_eq!(copy_pid("ctxkit-serve-4242-AbC1x9"), Some(4242));
        assert_eq!(copy_pid("ctxkit-serve-AbC1x9"), None);
        assert_eq!(copy_pid("ctxkit-serve-4242-"), None);
        assert_eq!(copy_pid("other-serve-4242-x"), None);
    }

    /// A server killed while a database session was open left that session's copy in the
    /// temporary folder. The next start removes it, and nothing else: a running server's copy,
    /// a folder with something else in it, a file of the same shape.
    #[test]
    fn a_killed_servers_copy_is_removed_at_the_next_start() {
        let temporary = tempfile::tempdir().unwrap();
        let folder = |name: &str, files: &[&str]| {
            let path = temporary.path().join(name);
            std::fs::create_dir(&path).unwrap();
            for file in files {
                std::fs::write(path.join(file), "{}\n").unwrap();
            }
            path
        };
        // A pid above the kernel's maximum never runs.
        let abandoned = folder("ctxkit-serve-99999999-x1", &["0192.jsonl"]);
        let empty = folder("ctxkit-serve-99999999-x2", &[]);
        let running = folder(
            &format!("ctxkit-serve-{}-x3", std::process::id()),
            &["0193.jsonl"],
        );
        let foreign = folder("ctxkit-serve-99999999-x4", &["0194.jsonl", "notes.txt"]);
        let file = temporary.path().join("ctxkit-serve-99999999-x5");
        std::fs::write(&file, "not a folder").unwrap();
        assert_eq!(remove_abandoned_copies(temporary.path()), 2);
        assert!(!abandoned.exists() && !empty.exists());
        assert!(running.exists() && foreign.exists() && file.exists());
    }
}
