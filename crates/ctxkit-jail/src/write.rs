//! Writes that cannot destroy, beneath the jail: the target's directory is opened beneath the root
//! and the one atomic write (`atomic`) replaces the file through that handle. On any error the
//! temporary file is removed and the target is as it was. A symlink at the target's name is
//! replaced, never followed.

use std::path::Path;

use crate::atomic::{AtomicWrite, Existing};
use crate::{Jail, JailError};

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
    pub fn write_atomic(&self, path: &Path, content: &[u8]) -> Result<(), JailError> {
        let relative = self.relative(path)?;
        let Some(name) = relative.file_name() else {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        };
        let parent = relative.parent().unwrap_or(Path::new(""));
        self.create_dir_all(parent)?;
        let dir = self.open_dir(parent)?;
        let name = Path::new(name);
        if dir.metadata(name).is_ok_and(|metadata| metadata.is_dir()) {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        }
        let write = AtomicWrite {
            existing: Existing::Replace,
            new_mode: 0o666,
        };
        if let Err(source) = write.write_in(&dir, name, content) {
            return Err(self.io_error(relative, source));
        }
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
