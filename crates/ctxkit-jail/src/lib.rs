//! One capability-style handle on a folder: every file the agent's tools, the resource loader,
//! compaction's file context or the package manager opens is opened *beneath* a directory
//! descriptor ([`cap_std::fs::Dir`]; on Linux `openat2` with `RESOLVE_BENEATH`, elsewhere
//! cap-std's own component-by-component resolution). A symlink or `..` that leads out of the root
//! fails in the kernel at the moment of opening, so swapping a folder for a symlink between a check
//! and an open gains nothing: there is no check-then-open.
//!
//! On top of the confinement, a [`Jail`] refuses
//! - paths deeper than [`MAX_DEPTH`] components or longer than [`MAX_PATH_BYTES`] (checked before
//!   anything is resolved, so a path of 20,000 components is one error, not a deep recursion);
//! - every file whose real location (read back from the open descriptor) lies in a denied place:
//!   ctxkit's home and sessions folder ([`Jail::deny`]) and the user's credentials
//!   ([`credential_places`], always).
//!
//! Writes go to a temporary file beneath the same directory handle and are renamed over the
//! target; on any failure the temporary file is removed and the target is as it was. A file with
//! other names (hard links), or one the system will not replace (a bind mount, a folder this user
//! may not write), is written in place, its old content put back if the write fails part way.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod atomic;
mod directory;
mod error;
mod guard;
mod in_place;
mod links;
mod owners;
mod places;
mod regular;
mod spelling;
mod stream;
mod temporaries;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod write;

use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

pub use atomic::{AtomicWrite, Existing};
pub use directory::OpenedDir;
pub use error::JailError;
pub use guard::{completes_git_directory, is_guarded_name, names_guarded_place};
pub use in_place::MAX_IN_PLACE_BYTES;
pub use links::MAX_LINK_WALK;
pub use owners::LocalUsers;
pub use places::{credential_places, default_ctxkit_home};
pub use regular::{file_kind, is_link, read_regular, read_regular_to_string};
pub use stream::OpenedFile;
pub use temporaries::{
    TEMPORARY_SUFFIX, is_running, remove_dead_temporaries, remove_dead_temporaries_of,
    temporary_beside, temporary_owner, temporary_prefix,
};

/// The most components a path may have (a real project is rarely 40 deep).
pub const MAX_DEPTH: usize = 256;
/// The longest path accepted, in bytes (the system's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// A folder, opened once, beneath which every path is opened.
#[derive(Debug)]
pub struct Jail {
    /// The root as the system names it (resolved when opened).
    root: PathBuf,
    /// The directory descriptor everything is opened beneath.
    dir: Dir,
    /// Places no file may be read from or written to unless the root itself lies inside them.
    denied: Vec<PathBuf>,
    /// Places never readable, wherever the root is (credentials).
    denied_always: Vec<PathBuf>,
    /// The files of the denied places by inode, collected on the first file with several names
    /// (`links`); a denial added later empties it.
    denied_files: std::sync::OnceLock<links::DeniedFiles>,
    /// The active denied places a path beneath the root can lie in: those beneath the root or
    /// holding it. Most credential places are neither, and checking each of some hundred places
    /// for every file made `grep` over 100,000 files take 14 s (QA r99); a denial added later
    /// empties it.
    denials_near_root: std::sync::OnceLock<Vec<PathBuf>>,
    /// Places a write is refused in (`guard`): besides these, folders named one of
    /// `guarded_names` at any depth.
    guarded: Vec<PathBuf>,
    guarded_names: &'static [&'static str],
    /// The folder `guarded_names` are looked for beneath.
    guarded_base: PathBuf,
}

/// An entry of [`Jail::read_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's name, its bytes as they are (not UTF-8, a newline).
    pub name: std::ffi::OsString,
    /// Whether it is a directory (a symlink to one counts when it stays beneath the root).
    pub is_dir: bool,
}

impl Jail {
    /// A jail on the folder `root` (resolved), with the user's credentials and ctxkit's home of
    /// this process (`CTXKIT_HOME`, else `~/.ctxkit`) denied.
    pub fn open(root: &Path) -> Result<Self, JailError> {
        let mut jail = Self::open_bare(root)?;
        jail.denied_always = credential_places();
        if let Some(home) = default_ctxkit_home() {
            jail.deny(&home);
        }
        Ok(jail)
    }

    /// A jail on `root` with nothing denied besides what lies outside it.
    pub fn open_bare(root: &Path) -> Result<Self, JailError> {
        check_shape(root)?;
        let resolved = std::fs::canonicalize(root).map_err(|source| JailError::Io {
            path: root.to_owned(),
            source,
        })?;
        let dir = Dir::open_ambient_dir(&resolved, ambient_authority()).map_err(|source| {
            JailError::Io {
                path: resolved.clone(),
                source,
            }
        })?;
        Ok(Self {
            guarded_base: resolved.clone(),
            root: resolved,
            dir,
            denied: Vec::new(),
            denied_always: Vec::new(),
            denied_files: std::sync::OnceLock::new(),
            denials_near_root: std::sync::OnceLock::new(),
            guarded: Vec::new(),
            guarded_names: &[],
        })
    }

    /// The root, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Nothing at or under `place` is opened through this jail, unless the root lies inside
    /// `place` (a jail on ctxkit's own agent folder reads its files; nothing beside them).
    pub fn deny(&mut self, place: &Path) {
        let resolved = std::fs::canonicalize(place).unwrap_or_else(|_| place.to_owned());
        for candidate in [resolved, place.to_owned()] {
            if !self.denied.contains(&candidate) {
                self.denied.push(candidate);
            }
        }
        self.denied_files = std::sync::OnceLock::new();
        self.denials_near_root = std::sync::OnceLock::new();
    }

    /// Nothing at or under `place` is opened through this jail, wherever its root is (a
    /// credential place; the real ones are `credential_places`, set when the jail is made).
    #[cfg(test)]
    pub(crate) fn deny_always(&mut self, place: &Path) {
        let resolved = std::fs::canonicalize(place).unwrap_or_else(|_| place.to_owned());
        for candidate in [resolved, place.to_owned()] {
            if !self.denied_always.contains(&candidate) {
                self.denied_always.push(candidate);
            }
        }
        self.denied_files = std::sync::OnceLock::new();
        self.denials_near_root = std::sync::OnceLock::new();
    }

    /// Whether `path` (absolute, or relative to the root) names a denied place, judged by its
    /// name alone (walkers use it to skip a folder before listing it).
    pub fn is_denied(&self, path: &Path) -> bool {
        let absolute = if path.is_absolute() {
            path.to_owned()
        } else {
            self.root.join(path)
        };
        self.denial_of(&absolute).is_some()
    }

    /// The path of `path` beneath the root: relative paths as they are, absolute ones with the
    /// root taken off (an absolute path elsewhere is [`JailError::Outside`]).
    pub fn relative<'a>(&self, path: &'a Path) -> Result<&'a Path, JailError> {
        check_shape(path)?;
        if !path.is_absolute() {
            return Ok(path);
        }
        path.strip_prefix(&self.root)
            .map_err(|_| JailError::Outside {
                path: path.to_owned(),
                root: self.root.clone(),
            })
    }

    /// At most `max` bytes of the regular file at `path`, and its size. Anything else (a FIFO,
    /// a device, a socket, a directory) is refused, and opening never waits for a writer.
    pub fn read(&self, path: &Path, max: u64) -> Result<(Vec<u8>, u64), JailError> {
        self.read_checked(path, max, |_| Ok(()))
    }

    /// [`Self::read`], with `check` asked about the opened file's metadata before anything is read
    /// (so what is judged is what is read).
    fn read_checked(
        &self,
        path: &Path,
        max: u64,
        check: impl FnOnce(&std::fs::Metadata) -> Result<(), JailError>,
    ) -> Result<(Vec<u8>, u64), JailError> {
        let relative = self.stored_spelling(self.relative(path)?);
        let file = self.open_checked(&relative, check)?;
        regular::read_opened(file, &self.root.join(&relative), max)
    }

    /// The whole text of the file at `path` when it is at most `max` bytes of UTF-8.
    pub fn read_to_string(&self, path: &Path, max: u64) -> Result<String, JailError> {
        self.read_to_string_checked(path, max, |_| Ok(()))
    }

    /// [`Self::read_to_string`] of a file owned by one of `users` (checked on the opened file):
    /// another user's is [`JailError::OtherOwner`].
    pub fn read_to_string_owned(
        &self,
        path: &Path,
        max: u64,
        users: &LocalUsers,
    ) -> Result<String, JailError> {
        self.read_to_string_checked(path, max, |metadata| {
            use std::os::unix::fs::MetadataExt as _;
            match users.other(metadata.uid()) {
                Some(uid) => Err(JailError::OtherOwner {
                    path: self.root.join(path),
                    uid,
                }),
                None => Ok(()),
            }
        })
    }

    fn read_to_string_checked(
        &self,
        path: &Path,
        max: u64,
        check: impl FnOnce(&std::fs::Metadata) -> Result<(), JailError>,
    ) -> Result<String, JailError> {
        let (bytes, size) = self.read_checked(path, max, check)?;
        regular::whole_text(bytes, size, &self.root.join(path), max)
    }

    /// The entries of the directory at `path`, unsorted.
    pub fn read_dir(&self, path: &Path) -> Result<Vec<DirEntry>, JailError> {
        let relative = self.stored_spelling(self.relative(path)?);
        let dir = self.open_dir(&relative)?;
        let entries = dir
            .entries()
            .map_err(|source| self.io_error(&relative, source))?;
        Ok(entries
            .filter_map(Result::ok)
            .map(|entry| {
                let name = entry.file_name();
                let is_dir = dir.metadata(&name).is_ok_and(|metadata| metadata.is_dir());
                DirEntry { name, is_dir }
            })
            .collect())
    }

    /// Whether `path` is a directory beneath the root (`false` when it cannot be opened).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.relative(path)
            .is_ok_and(|relative| self.open_dir(&self.stored_spelling(relative)).is_ok())
    }

    /// Whether `path` names a regular file that [`Self::read`] would open.
    pub fn is_file(&self, path: &Path) -> bool {
        self.relative(path).is_ok_and(|relative| {
            let relative = self.stored_spelling(relative);
            self.dir
                .metadata(beneath(&relative))
                .is_ok_and(|metadata| metadata.is_file())
                && self.denial_of(&self.root.join(&relative)).is_none()
        })
    }

    /// The directory at `relative`, opened beneath the root and checked against the denials.
    fn open_dir(&self, relative: &Path) -> Result<Dir, JailError> {
        let dir = self
            .dir
            .open_dir(beneath(relative))
            .map_err(|source| self.open_error(relative, source))?;
        self.check_opened(&dir, relative)?;
        Ok(dir)
    }

    /// Refuses a descriptor whose real place is denied.
    fn check_opened(
        &self,
        opened: &impl std::os::fd::AsRawFd,
        relative: &Path,
    ) -> Result<(), JailError> {
        let real = places::real_path(opened);
        // Without `/proc`, the name the file was opened by is judged instead.
        let real = real.unwrap_or_else(|| self.root.join(relative));
        match self.denial_of(&real) {
            Some(place) => Err(JailError::Denied {
                path: self.root.join(relative),
                place,
            }),
            None => Ok(()),
        }
    }

    /// Refuses an opened regular file with several names when one of them lies in a denied place
    /// (`links`): its real path is the name it was opened by, whatever its others are.
    fn check_other_names(
        &self,
        metadata: &std::fs::Metadata,
        relative: &Path,
    ) -> Result<(), JailError> {
        use std::os::unix::fs::MetadataExt as _;
        if !links::has_other_names(metadata) {
            return Ok(());
        }
        let denied = self.denied_files.get_or_init(|| {
            let mut places: Vec<PathBuf> = Vec::new();
            for place in self.active_denials() {
                let resolved = std::fs::canonicalize(place).unwrap_or_else(|_| place.clone());
                if !places.contains(&resolved) {
                    places.push(resolved);
                }
            }
            links::DeniedFiles::collect(places.iter())
        });
        let path = self.root.join(relative);
        match denied.other_name(metadata.dev(), metadata.ino()) {
            links::OtherName::None => Ok(()),
            links::OtherName::Denied { name, place } => Err(JailError::HardLink {
                path,
                other: name,
                place,
            }),
            links::OtherName::Unchecked { place } => {
                Err(JailError::HardLinkUnchecked { path, place })
            }
        }
    }

    /// Every denied place that applies to this jail: the credentials always, the others unless
    /// the root lies inside them.
    fn active_denials(&self) -> impl Iterator<Item = &PathBuf> {
        self.denied_always.iter().chain(
            self.denied
                .iter()
                .filter(|place| !self.root.starts_with(place)),
        )
    }

    /// The denied place `path` lies in, if any. For a path beneath the root only the places
    /// beneath the root or holding it are looked at: a place holding the path is an ancestor of
    /// it as the root is, so one of the two holds the other.
    fn denial_of(&self, path: &Path) -> Option<PathBuf> {
        let path = lexical(path);
        if path.starts_with(&self.root) {
            let near = self.denials_near_root.get_or_init(|| {
                self.active_denials()
                    .filter(|place| place.starts_with(&self.root) || self.root.starts_with(place))
                    .cloned()
                    .collect()
            });
            return near.iter().find(|place| path.starts_with(place)).cloned();
        }
        self.active_denials()
            .find(|place| path.starts_with(place))
            .cloned()
    }

    fn io_error(&self, relative: &Path, source: std::io::Error) -> JailError {
        JailError::Io {
            path: self.root.join(relative),
            source,
        }
    }

    /// An open that failed: an escape when cap-std says the path leads out of the root.
    fn open_error(&self, relative: &Path, source: std::io::Error) -> JailError {
        let escaped = source.kind() == std::io::ErrorKind::PermissionDenied
            && source.to_string().contains("outside of the filesystem");
        if escaped {
            JailError::Escapes {
                path: self.root.join(relative),
                root: self.root.clone(),
            }
        } else {
            self.io_error(relative, source)
        }
    }
}

/// The text of the file at `path` (at most `max` bytes of UTF-8), opened beneath the folder that
/// holds it: a symlink out of that folder, and ctxkit's own places and credentials, are refused.
/// For resource files (context files, prompts, skills, themes, package manifests) found by
/// listing a folder: the one place they are read, so a leading byte-order mark, which editors on
/// Windows write, is dropped here for all of them, as Pi 1.6 drops it (`stripBom`). Left in, it
/// hid a skill's frontmatter, and a prompt template's went to the model as the user's message.
pub fn read_in_folder(path: &Path, max: u64) -> Result<String, JailError> {
    let (folder, name) = split_folder(path)?;
    Jail::open(folder)?
        .read_to_string(Path::new(name), max)
        .map(without_byte_order_mark)
}

/// [`read_in_folder`] of a file found in a folder above the project, where another local user may
/// have put it: the file (and the link naming it) must belong to one of `users`, else
/// [`JailError::OtherOwner`].
pub fn read_in_folder_owned(
    path: &Path,
    max: u64,
    users: &LocalUsers,
) -> Result<String, JailError> {
    if let Some(uid) = users.other_owner(path) {
        return Err(JailError::OtherOwner {
            path: path.to_owned(),
            uid,
        });
    }
    let (folder, name) = split_folder(path)?;
    Jail::open(folder)?
        .read_to_string_owned(Path::new(name), max, users)
        .map(without_byte_order_mark)
}

/// `text` without a leading UTF-8 byte-order mark.
fn without_byte_order_mark(text: String) -> String {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// The folder holding `path` (`.` for a bare name) and its name.
fn split_folder(path: &Path) -> Result<(&Path, &std::ffi::OsStr), JailError> {
    check_shape(path)?;
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(JailError::NotRegular {
            path: path.to_owned(),
        });
    };
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    Ok((folder, name))
}

/// The most bytes a resource file (context file, prompt, skill, theme) or a settings file (the
/// user's, a project's, the trust list) may have: one limit for the files ctxkit reads as
/// configuration.
pub const MAX_RESOURCE_BYTES: u64 = 4 * 1024 * 1024;

/// `relative` as cap-std wants it: the root itself is `.`.
fn beneath(relative: &Path) -> &Path {
    if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    }
}

/// Refuses a path too deep or too long to be a real one, before anything resolves it.
pub fn check_shape(path: &Path) -> Result<(), JailError> {
    let bytes = path.as_os_str().len();
    if bytes > MAX_PATH_BYTES {
        return Err(JailError::TooLong { bytes });
    }
    let depth = path.components().count();
    if depth > MAX_DEPTH {
        return Err(JailError::TooDeep { depth });
    }
    Ok(())
}

/// `path` with `.` and `..` taken away by their names alone (no symlink followed); the tools'
/// path judgement uses it too.
pub fn lexical(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            Component::Normal(_) | Component::RootDir | Component::Prefix(_) => {
                normal.push(component);
            }
        }
    }
    normal
}

#[cfg(test)]
mod tests;
