//! What a folder holds, to prove a call changed nothing: every entry below it, symlinks not
//! followed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An entry's content: a file's bytes, a link's target, `None` for a folder.
pub(crate) type Snapshot = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// Every entry below `folder` by its full path; a folder that is not there holds nothing.
pub(crate) fn snapshot(folder: &Path) -> Snapshot {
    let mut found = BTreeMap::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(current) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let content = if metadata.is_dir() {
                folders.push(path.clone());
                None
            } else if metadata.is_symlink() {
                Some(
                    std::fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else {
                Some(std::fs::read(&path).unwrap())
            };
            found.insert(path, content);
        }
    }
    found
}
