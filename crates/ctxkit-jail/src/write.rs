//! Writes that cannot destroy, beneath the jail: the content goes to a temporary file in the
//! target's directory (opened beneath the root), is flushed, given the target's mode (and owner,
//! where allowed) and renamed over the target through the same directory handle. On any error the
//! temporary file is removed and the target is as it was. A symlink at the target's name is
//! replaced, never followed.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, MetadataExt as _, OpenOptions, OpenOptionsExt as _};
use std::os::unix::fs::PermissionsExt as _;

use crate::{Jail, JailError};

/// Tells temporary files of one process apart.
static COUNTER: AtomicU64 = AtomicU64::new(0);

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
        let temporary = format!(
            ".{}.ctxkit-{}-{}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let written = replace(&dir, name, Path::new(&temporary), content);
        if let Err(source) = written {
            let _ = dir.remove_file(&temporary);
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

/// Writes `temporary` in `dir` and renames it over `name`.
fn replace(dir: &Dir, name: &Path, temporary: &Path, content: &[u8]) -> std::io::Result<()> {
    // The mode of the file replaced; a symlink's target is not looked at.
    let previous = dir
        .symlink_metadata(name)
        .ok()
        .filter(|metadata| metadata.is_file());
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .mode(if previous.is_some() { 0o600 } else { 0o666 });
    let mut file = dir.open_with(temporary, &options)?.into_std();
    file.write_all(content)?;
    if let Some(metadata) = &previous {
        file.set_permissions(std::fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
        // Keeping the owner needs privileges; a file the user could write stays theirs.
        let _ = std::os::unix::fs::fchown(&file, Some(metadata.uid()), Some(metadata.gid()));
    }
    file.sync_all()?;
    dir.rename(temporary, dir, name)
}
