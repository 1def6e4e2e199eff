//! Writes that cannot destroy, beneath the jail: the target's directory is opened beneath the root
//! and the one atomic write (`atomic`) replaces the file through that handle. On any error the
//! temporary file is removed and the target is as it was. A symlink at the target's name is
//! replaced, never followed. A file this process may not write is refused first: the rename only
//! needs the folder's permission, and would otherwise replace a `0444` file that `echo x > file`
//! by the same user cannot change. A file with other names, or one the system will not replace
//! (a bind mount, a folder this user may not write), is written in place (`in_place`).

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::in_place::{Replacer, replace_atomically};
use crate::{Jail, JailError};

/// Asks the system whether this process may write the existing file `name` in `dir`; `Err` with
/// the system's answer when it may not. [`system_may_write`] in use; tests give their own, since a
/// test run as root may write every file.
pub(crate) type WriteProbe = fn(&Dir, &Path) -> std::io::Result<()>;

/// `access(2)` with `W_OK`, through the directory handle (`faccessat`), with the effective ids an
/// open would use: the file's mode and owner, ACLs, a read-only mount and the immutable flag all
/// count, and root may write a `0444` file as `echo >` does. Never judged from the mode bits alone.
pub(crate) fn system_may_write(dir: &Dir, name: &Path) -> std::io::Result<()> {
    rustix::fs::accessat(
        dir,
        name,
        rustix::fs::Access::WRITE_OK,
        rustix::fs::AtFlags::EACCESS,
    )
    .map_err(std::io::Error::from)
}

/// What the probe's answer means for the write.
#[derive(Debug)]
pub(crate) enum Writable {
    /// Write it (the file may be written, or went away meanwhile and is created anew).
    Yes,
    /// Refuse it: [`JailError::ReadOnly`].
    ReadOnly,
    /// Refuse it with the system's reason (an I/O error while asking).
    Unknown(std::io::Error),
}

/// The decision on a probe's answer: permission refusals (`EACCES`, `EPERM` for an immutable
/// file, `EROFS`) make the file read-only; any other error refuses the write with its reason.
pub(crate) fn judge(answer: std::io::Result<()>) -> Writable {
    match answer {
        Ok(()) => Writable::Yes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Writable::Yes,
        Err(error)
            if matches!(
                error.raw_os_error(),
                Some(libc::EACCES | libc::EPERM | libc::EROFS)
            ) =>
        {
            Writable::ReadOnly
        }
        Err(error) => Writable::Unknown(error),
    }
}

impl Jail {
    /// Creates the directory `path` and its missing parents beneath the root.
    pub fn create_dir_all(&self, path: &Path) -> Result<(), JailError> {
        let relative = self.relative(path)?;
        if relative.as_os_str().is_empty() {
            return Ok(());
        }
        if self.is_denied(relative) {
            return Err(JailError::Denied {
                path: self.root.join(relative),
                place: self.root.join(relative),
            });
        }
        self.dir
            .create_dir_all(relative)
            .map_err(|source| self.open_error(relative, source))
    }

    /// Removes the directory `path` and everything in it, beneath the root: a symlink on the way
    /// out of the root fails, a symlink inside is removed, never followed; a denied place is
    /// refused. Removing the root itself is refused.
    pub fn remove_dir_all(&self, path: &Path) -> Result<(), JailError> {
        let relative = self.removable(path)?;
        self.dir
            .remove_dir_all(relative)
            .map_err(|source| self.open_error(relative, source))
    }

    /// Removes the directory `path` when it is empty, beneath the root (as
    /// [`Self::remove_dir_all`] judges it).
    pub fn remove_dir(&self, path: &Path) -> Result<(), JailError> {
        let relative = self.removable(path)?;
        self.dir
            .remove_dir(relative)
            .map_err(|source| self.open_error(relative, source))
    }

    /// `path` beneath the root when it names a directory there that may be removed.
    fn removable<'a>(&self, path: &'a Path) -> Result<&'a Path, JailError> {
        let relative = self.relative(path)?;
        if crate::lexical(relative).as_os_str().is_empty() {
            return Err(JailError::Escapes {
                path: self.root.join(relative),
                root: self.root.clone(),
            });
        }
        // Opened first: a parent that is a symlink out of the root, or a denied place, fails here.
        self.open_dir(relative)?;
        Ok(relative)
    }

    /// Replaces the file at `path` by `content` atomically, creating missing parent directories.
    /// An existing file this process may not write is refused ([`JailError::ReadOnly`]) and left
    /// as it was.
    /// A file with other names (hard links), or one the system refuses to replace (a bind mount,
    /// a folder this user may not write), is written in place instead (`in_place`).
    pub fn write_atomic(&self, path: &Path, content: &[u8]) -> Result<(), JailError> {
        self.write_atomic_probed(path, content, system_may_write)
    }

    /// [`Self::write_atomic`], asking `may_write` whether an existing file may be written.
    pub(crate) fn write_atomic_probed(
        &self,
        path: &Path,
        content: &[u8],
        may_write: WriteProbe,
    ) -> Result<(), JailError> {
        self.write_atomic_with(path, content, may_write, replace_atomically)
    }

    /// [`Self::write_atomic_probed`], replacing a file by `replace`.
    pub(crate) fn write_atomic_with(
        &self,
        path: &Path,
        content: &[u8],
        may_write: WriteProbe,
        replace: Replacer,
    ) -> Result<(), JailError> {
        // An existing file stored in another normalization is replaced, not written beside.
        let relative = self.stored_spelling(self.relative(path)?);
        let relative: &Path = &relative;
        let Some(name) = relative.file_name() else {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        };
        let parent = relative.parent().unwrap_or(Path::new(""));
        // A write that fails leaves no folder it made for the file.
        let missing = self.missing_folders(parent);
        let written = self.create_dir_all(parent).and_then(|()| {
            let name = Path::new(name);
            self.write_in_parent(relative, parent, name, content, (may_write, replace))
        });
        if written.is_err() {
            for folder in missing.iter().rev() {
                let _ = self.dir.remove_dir(folder);
            }
        }
        written
    }

    /// The folders of `parent` (relative) that do not exist yet, outermost first.
    fn missing_folders(&self, parent: &Path) -> Vec<PathBuf> {
        let mut missing: Vec<PathBuf> = parent
            .ancestors()
            .filter(|folder| !folder.as_os_str().is_empty())
            .take_while(|folder| {
                self.dir
                    .symlink_metadata(folder)
                    .is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound)
            })
            .map(Path::to_path_buf)
            .collect();
        missing.reverse();
        missing
    }

    /// The rest of [`Self::write_atomic_probed`], once `parent` exists.
    fn write_in_parent(
        &self,
        relative: &Path,
        parent: &Path,
        name: &Path,
        content: &[u8],
        (may_write, replace): (WriteProbe, Replacer),
    ) -> Result<(), JailError> {
        let dir = self.open_dir(parent)?;
        self.check_guarded(&dir, relative, name)?;
        // Only a regular file, or a link at the name (replaced, never followed), is written
        // over: a FIFO, a socket or a device is another program's, and `write events.pipe` had
        // turned a pipe into a file.
        let special = dir.symlink_metadata(name).is_ok_and(|metadata| {
            let kind = metadata.file_type();
            !kind.is_file() && !kind.is_symlink()
        });
        if special || dir.metadata(name).is_ok_and(|metadata| metadata.is_dir()) {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        }
        // A regular file at the name is replaced only when it could be written in place; a
        // symlink there is replaced, never followed, so its target's mode does not count.
        if dir
            .symlink_metadata(name)
            .is_ok_and(|metadata| metadata.is_file())
        {
            match judge(may_write(&dir, name)) {
                Writable::Yes => {}
                Writable::ReadOnly => {
                    return Err(JailError::ReadOnly {
                        path: self.root.join(relative),
                    });
                }
                Writable::Unknown(source) => return Err(self.io_error(relative, source)),
            }
        }
        self.write_replacing(&dir, relative, name, content, replace)?;
        // The rename itself is on disk once the directory is synced (best effort).
        if let Ok(handle) = dir.try_clone() {
            let _ = handle.into_std_file().sync_all();
        }
        Ok(())
    }

    /// Removes the regular file (or symlink) at `path` beneath the root; a directory is refused.
    /// Used to undo a file an agent created (a rewind to before it).
    pub fn remove_file(&self, path: &Path) -> Result<(), JailError> {
        let relative = self.relative(path)?;
        let Some(name) = relative.file_name() else {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        };
        if self.is_denied(relative) {
            return Err(JailError::Denied {
                path: self.root.join(relative),
                place: self.root.join(relative),
            });
        }
        let dir = self.open_dir(relative.parent().unwrap_or(Path::new("")))?;
        let name = Path::new(name);
        if dir
            .symlink_metadata(name)
            .is_ok_and(|metadata| metadata.is_dir())
        {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        }
        dir.remove_file(name)
            .map_err(|source| self.io_error(relative, source))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    use super::*;
    use crate::testing::names;

    fn os_error(code: i32) -> std::io::Result<()> {
        Err(std::io::Error::from_raw_os_error(code))
    }

    #[test]
    fn permission_refusals_make_a_file_read_only_and_other_errors_refuse_the_write() {
        assert!(matches!(judge(Ok(())), Writable::Yes));
        // Removed between the look and the question: the write creates it.
        assert!(matches!(judge(os_error(libc::ENOENT)), Writable::Yes));
        for code in [libc::EACCES, libc::EPERM, libc::EROFS] {
            assert!(
                matches!(judge(os_error(code)), Writable::ReadOnly),
                "{code}"
            );
        }
        assert!(matches!(judge(os_error(libc::EIO)), Writable::Unknown(_)));
    }

    /// Found by the `agent_tools` fuzz target: `write new/<300 characters>.txt` failed with "File
    /// name too long" and said the file was left unchanged, but left the folder `new` it made.
    #[test]
    fn a_failed_write_leaves_no_folder_it_made_and_keeps_those_that_were_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("kept")).unwrap();
        let jail = Jail::open_bare(dir.path()).unwrap();
        let long = "n".repeat(300);
        for path in [
            format!("new/deeper/{long}.txt"),
            format!("kept/made/{long}.txt"),
        ] {
            let error = jail.write_atomic(Path::new(&path), b"x").unwrap_err();
            assert!(error.to_string().contains("too long"), "{error}");
        }
        let error = jail
            .write_atomic(Path::new(&format!("new/{long}/x.txt")), b"x")
            .unwrap_err();
        assert!(error.to_string().contains("too long"), "{error}");
        assert_eq!(names(dir.path()), ["kept"]);
        assert!(names(&dir.path().join("kept")).is_empty());
        // A folder that exists is used as it is, and one a write made for its file stays.
        jail.write_atomic(Path::new("kept/made/ok.txt"), b"x")
            .unwrap();
        assert_eq!(names(&dir.path().join("kept/made")), ["ok.txt"]);
    }

    /// QA: as a user who may not write `ro.txt` (`0444`), `write` renamed its temporary file over
    /// it, which only needs the folder's permission. A test run as root may write every file, so
    /// the system's answer is given here; `a_file_this_user_cannot_write_is_left_whole` in
    /// `ctxkit-agent` runs the real one as a user who may not write.
    #[test]
    fn a_file_the_system_says_is_read_only_is_left_whole_with_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ro.txt"), "must survive").unwrap();
        let jail = Jail::open_bare(dir.path()).unwrap();
        let read_only: WriteProbe = |_, _| Err(std::io::Error::from_raw_os_error(libc::EACCES));
        let error = jail
            .write_atomic_probed(Path::new("ro.txt"), b"overwritten", read_only)
            .unwrap_err();
        assert!(matches!(error, JailError::ReadOnly { .. }), "{error:?}");
        assert!(error.to_string().contains("is read-only"), "{error}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ro.txt")).unwrap(),
            "must survive"
        );
        assert_eq!(names(dir.path()), ["ro.txt"]);
        let failing: WriteProbe = |_, _| Err(std::io::Error::from_raw_os_error(libc::EIO));
        let error = jail
            .write_atomic_probed(Path::new("ro.txt"), b"overwritten", failing)
            .unwrap_err();
        assert!(matches!(error, JailError::Io { .. }), "{error:?}");
        // A new file is not asked about, nor a symlink at the name (replaced, never followed).
        jail.write_atomic_probed(Path::new("new.txt"), b"new", read_only)
            .unwrap();
        std::os::unix::fs::symlink("ro.txt", dir.path().join("link.txt")).unwrap();
        jail.write_atomic_probed(Path::new("link.txt"), b"link", read_only)
            .unwrap();
        assert_eq!(names(dir.path()), ["link.txt", "new.txt", "ro.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ro.txt")).unwrap(),
            "must survive"
        );
    }

    /// The system's own answer, as this process gets it: a `0444` file is read-only for a user,
    /// and writable for root (who may write it with `echo >` too), never judged by its mode alone.
    #[test]
    fn the_system_answers_for_this_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro.txt");
        std::fs::write(&path, "kept").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        // Files are made with the effective user id.
        let root = std::fs::metadata(&path).unwrap().uid() == 0;
        let jail = Jail::open_bare(dir.path()).unwrap();
        let written = jail.write_atomic(Path::new("ro.txt"), b"new");
        if root {
            written.unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o444, "the replaced file keeps its mode");
        } else {
            assert!(matches!(written, Err(JailError::ReadOnly { .. })));
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept");
        }
        assert_eq!(names(dir.path()), ["ro.txt"]);
    }
}
