//! The one atomic file write, shared by the session store (whole-file session writes) and the
//! jail's [`crate::Jail::write_atomic`] (the agent's `write` and `edit`, rewind, packages): the
//! content goes to a temporary file (`.<name>.ctxkit-<pid>-<n>.tmp`, the name cut to 128 bytes so
//! a target of the longest name has one) in the target's directory,
//! opened through that directory's handle, is flushed to disk, given the replaced file's mode (and
//! owner, where allowed), and renamed over the target (or linked to a name that must not exist).
//! On any error the temporary file is removed and the target is as it was: a failed write never
//! destroys a file. A symlink at the target's name is replaced, never followed (a caller that
//! wants the file a link names resolves it first). Syncing the directory is the caller's choice.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, MetadataExt as _, OpenOptions, OpenOptionsExt as _};

/// Tells temporary files of one process apart.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What an atomic write does when the target's name exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// The file is replaced; the new one keeps its mode and, where allowed, its owner.
    Replace,
    /// The write fails (`AlreadyExists`): a new file appears whole or not at all.
    Refuse,
}

/// How an atomic write treats the target and a file it creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicWrite {
    pub existing: Existing,
    /// The mode of a file that did not exist (less the umask): `0o600` for a private file,
    /// `0o666` for a project file.
    pub new_mode: u32,
}

impl AtomicWrite {
    /// Writes `content` to `name` in `dir` (see the module comment).
    pub fn write_in(self, dir: &Dir, name: &Path, content: &[u8]) -> std::io::Result<()> {
        let name_text = name.to_string_lossy();
        // What a writer of this file killed before its rename left (`temporaries`).
        crate::temporaries::remove_dead_temporaries(dir, &name_text);
        let temporary = format!(
            "{}{}{}",
            crate::temporaries::temporary_prefix(&name_text),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            crate::temporaries::TEMPORARY_SUFFIX
        );
        let temporary = Path::new(&temporary);
        let written = self.write_temporary(dir, name, temporary, content);
        let placed = written.and_then(|()| match self.existing {
            Existing::Replace => dir.rename(temporary, dir, name),
            Existing::Refuse => dir
                .hard_link(temporary, dir, name)
                .and_then(|()| dir.remove_file(temporary)),
        });
        if placed.is_err() {
            let _ = dir.remove_file(temporary);
        }
        placed
    }

    /// Writes `content` to the file at `path`, through a handle on its directory (see the module
    /// comment): a symlink at `path` is replaced, not followed.
    pub fn write_path(self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        let Some(name) = path.file_name() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path names no file",
            ));
        };
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            Some(_) | None => Path::new("."),
        };
        let dir = Dir::open_ambient_dir(directory, ambient_authority())?;
        self.write_in(&dir, Path::new(name), content)
    }

    /// `content` in a new, synced `temporary` in `dir`, with the mode and owner of the file at
    /// `name` when one is there.
    fn write_temporary(
        self,
        dir: &Dir,
        name: &Path,
        temporary: &Path,
        content: &[u8],
    ) -> std::io::Result<()> {
        // The mode of the file replaced; a symlink's target is not looked at.
        let previous = dir
            .symlink_metadata(name)
            .ok()
            .filter(|metadata| metadata.is_file());
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .mode(if previous.is_some() {
                0o600
            } else {
                self.new_mode
            });
        let mut file = dir.open_with(temporary, &options)?.into_std();
        file.write_all(content)?;
        if let Some(metadata) = &previous {
            // The owner first: the kernel clears the setuid and setgid bits on a change of owner,
            // so a mode set before it lost them (a `4755` file became `755`).
            // Keeping the owner needs privileges; a file the user could write stays theirs.
            let _ = std::os::unix::fs::fchown(&file, Some(metadata.uid()), Some(metadata.gid()));
            file.set_permissions(std::fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
        }
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::temporaries::shortened;
    use crate::testing::names;

    const PRIVATE: AtomicWrite = AtomicWrite {
        existing: Existing::Replace,
        new_mode: 0o600,
    };

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_given_mode() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.txt");
        std::fs::write(&old, "old").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        PRIVATE.write_path(&old, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "new");
        let mode = std::fs::metadata(&old).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let fresh = dir.path().join("fresh.txt");
        PRIVATE.write_path(&fresh, b"x").unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(names(dir.path()), ["fresh.txt", "old.txt"]);
    }

    /// QA r105: a `4755` or `2755` file came back `755`: the mode was set before the owner, and
    /// the kernel clears the setuid and setgid bits on a change of owner.
    #[test]
    fn a_replaced_file_keeps_its_setuid_and_setgid_bits() {
        let dir = tempfile::tempdir().unwrap();
        // Setgid needs a group of this user: the file's own group is one.
        for mode in [0o4755, 0o2755, 0o6750] {
            let path = dir.path().join(format!("{mode:o}.sh"));
            std::fs::write(&path, "v1").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            PRIVATE.write_path(&path, b"v2").unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "v2");
            let kept = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(kept, mode, "{mode:o}");
        }
    }

    /// QA (second round): a file named with 240 bytes could not be written or edited ("File name
    /// too long"): the temporary file's name repeated it whole, past the system's 255.
    #[test]
    fn a_name_of_the_longest_length_is_written() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a".repeat(255), "é".repeat(127)] {
            let path = dir.path().join(&name);
            PRIVATE.write_path(&path, b"first").unwrap();
            PRIVATE.write_path(&path, b"second").unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        }
        assert_eq!(names(dir.path()).len(), 2);
        assert_eq!(shortened(&"é".repeat(127)).len(), 128);
        assert_eq!(shortened(&"é".repeat(70)).len(), 128);
        assert_eq!(shortened(&"aé".repeat(60)).len(), 127);
    }

    #[test]
    fn refusing_an_existing_name_leaves_it_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("taken.jsonl");
        std::fs::write(&path, "theirs").unwrap();
        let refuse = AtomicWrite {
            existing: Existing::Refuse,
            ..PRIVATE
        };
        let error = refuse.write_path(&path, b"ours").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(names(dir.path()), ["taken.jsonl"]);
        refuse
            .write_path(&dir.path().join("new.jsonl"), b"ours")
            .unwrap();
        assert_eq!(names(dir.path()), ["new.jsonl", "taken.jsonl"]);
    }

    #[test]
    fn a_failed_rename_leaves_the_target_and_removes_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        // A directory at the target's name: the rename fails after the temporary was written.
        std::fs::create_dir(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/inside"), "kept").unwrap();
        assert!(
            PRIVATE
                .write_path(&dir.path().join("target"), b"x")
                .is_err()
        );
        assert_eq!(names(dir.path()), ["target"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("target/inside")).unwrap(),
            "kept"
        );
    }
}
