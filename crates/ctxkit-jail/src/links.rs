//! Hard links: a file with several names is one file, and the name it was opened by says nothing
//! about its others. `ln ~/.ssh/id_rsa notes.txt` (by an approved command, a build script, an
//! unpacked archive) puts the user's key in the project under an innocent name, and the real path
//! read back from the descriptor is the project's. So a regular file with more than one link is
//! read only once no denied place holds a file with the same device and inode: the denied places
//! are walked (never following a symlink, at most [`MAX_LINK_WALK`] entries in all) once per jail,
//! on its first file with several names; the usual file with one name costs nothing.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The most entries of the denied places looked at for one file with several links; past it the
/// file is refused (its other names could not all be checked).
pub const MAX_LINK_WALK: usize = 100_000;

/// Where another name of the file `(device, inode)` lies.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OtherName {
    /// No denied place holds it.
    None,
    /// `name`, in the denied place `place`.
    Denied { name: PathBuf, place: PathBuf },
    /// `place` has more entries than could be looked at.
    Unchecked { place: PathBuf },
}

/// The regular files of the denied places, by device and inode: collected once per jail, on its
/// first file with several names, so a `grep` over many such files (a pnpm store) walks the places
/// once.
#[derive(Debug)]
pub(crate) struct DeniedFiles {
    /// `(device, inode)` → (the file's name, the denied place holding it).
    files: HashMap<(u64, u64), (PathBuf, PathBuf)>,
    /// The place whose walk ran out of budget, if one did.
    unchecked: Option<PathBuf>,
}

impl DeniedFiles {
    /// The files of `places` (see the module comment).
    pub(crate) fn collect<'a>(places: impl Iterator<Item = &'a PathBuf>) -> Self {
        Self::collect_within(places, MAX_LINK_WALK)
    }

    /// [`Self::collect`], looking at no more than `budget` entries.
    fn collect_within<'a>(places: impl Iterator<Item = &'a PathBuf>, mut budget: usize) -> Self {
        let mut files = HashMap::new();
        for place in places {
            let mut pending = vec![place.clone()];
            while let Some(path) = pending.pop() {
                if budget == 0 {
                    return Self {
                        files,
                        unchecked: Some(place.clone()),
                    };
                }
                budget -= 1;
                let Ok(metadata) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                if metadata.is_file() {
                    // A place that is one file (Pi's `auth.json`) is named by its folder: the
                    // refusal says "a hard link to `…/auth.json` in `…/agent`".
                    let shown_place = match place.parent() {
                        Some(folder) if path == *place => folder.to_path_buf(),
                        _ => place.clone(),
                    };
                    files
                        .entry((metadata.dev(), metadata.ino()))
                        .or_insert_with(|| (path, shown_place));
                } else if metadata.is_dir() {
                    push_entries(&path, &mut pending);
                }
            }
        }
        Self {
            files,
            unchecked: None,
        }
    }

    /// Where another name of the file `(device, inode)` lies.
    pub(crate) fn other_name(&self, device: u64, inode: u64) -> OtherName {
        if let Some((name, place)) = self.files.get(&(device, inode)) {
            return OtherName::Denied {
                name: name.clone(),
                place: place.clone(),
            };
        }
        match &self.unchecked {
            Some(place) => OtherName::Unchecked {
                place: place.clone(),
            },
            None => OtherName::None,
        }
    }
}

/// The entries of the directory `path` (none when it cannot be listed).
fn push_entries(path: &Path, pending: &mut Vec<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(path) {
        pending.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
    }
}

/// Whether the opened file's metadata says it has other names worth looking for.
pub(crate) fn has_other_names(metadata: &std::fs::Metadata) -> bool {
    metadata.is_file() && metadata.nlink() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_found_by_its_inode_and_a_large_place_is_not_taken_as_checked() {
        let dir = tempfile::tempdir().unwrap();
        let place = dir.path().join("home");
        std::fs::create_dir_all(place.join("a/b")).unwrap();
        std::fs::write(place.join("a/b/secret"), "s").unwrap();
        std::fs::write(dir.path().join("other"), "o").unwrap();
        let secret = std::fs::metadata(place.join("a/b/secret")).unwrap();
        let other = std::fs::metadata(dir.path().join("other")).unwrap();
        // A symlink in the place is not followed out of it.
        std::os::unix::fs::symlink(dir.path(), place.join("up")).unwrap();
        let places = [place.clone()];
        let denied = DeniedFiles::collect(places.iter());
        assert_eq!(
            denied.other_name(secret.dev(), secret.ino()),
            OtherName::Denied {
                name: place.join("a/b/secret"),
                place: place.clone()
            }
        );
        assert_eq!(denied.other_name(other.dev(), other.ino()), OtherName::None);
        assert!(!has_other_names(&other));
        // QA (r101): a place that is one file was named twice ("a hard link to `…/auth.json` in
        // `…/auth.json`"); its folder is named.
        let file_place = [place.join("a/b/secret")];
        assert_eq!(
            DeniedFiles::collect(file_place.iter()).other_name(secret.dev(), secret.ino()),
            OtherName::Denied {
                name: place.join("a/b/secret"),
                place: place.join("a/b")
            }
        );
        let cut = DeniedFiles::collect_within(places.iter(), 2);
        assert_eq!(
            cut.other_name(other.dev(), other.ino()),
            OtherName::Unchecked {
                place: place.clone()
            }
        );
    }
}
