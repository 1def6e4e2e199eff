//! A directory opened beneath the root for a child process to start in (`bash`'s working
//! directory): resolved by the jail like any file, so a symlink out of the root, `..` past it and
//! ctxkit's own places are refused, and handed to the child by its descriptor, not by a name that
//! could be swapped for a symlink between the check and the `chdir`.

use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::{Jail, JailError, places};

/// A directory opened through a [`Jail`]; the descriptor stays open as long as this does.
#[derive(Debug)]
pub struct OpenedDir {
    dir: Dir,
    /// Where it really is (from the descriptor), or the name it was opened by without `/proc`.
    real: PathBuf,
}

impl OpenedDir {
    /// Where the directory really is.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// A path naming this very directory for [`std::process::Command::current_dir`]: the child's
    /// own copy of the descriptor (`/proc/self/fd/N`, which the child inherits until `exec`) where
    /// `/proc` exists, so no name is resolved again; else the real path.
    pub fn path_for_child(&self) -> PathBuf {
        let by_descriptor = Path::new("/proc/self/fd").join(self.dir.as_raw_fd().to_string());
        if by_descriptor.is_dir() {
            by_descriptor
        } else {
            self.real.clone()
        }
    }
}

impl Jail {
    /// The directory at `path` (absolute under the root, or relative to it), opened beneath the
    /// root and checked against the denied places.
    pub fn open_directory(&self, path: &Path) -> Result<OpenedDir, JailError> {
        let relative = self.stored_spelling(self.relative(path)?);
        let dir = self.open_dir(&relative)?;
        let real = places::real_path(&dir).unwrap_or_else(|| self.root.join(&relative));
        Ok(OpenedDir { dir, real })
    }
}
