//! An OpenCode 1.x file store of any content imported (`import_opencode`): a session file, its
//! messages and their parts, and sessions that name it as their parent. Whatever the files hold,
//! the import reads without writing (the store is left as it was), and every session it returns
//! is held to what `foreign_import` asks of the other formats: written out, it opens with exactly
//! its entries, no line refused, every message of its context whole.
//!
//! The input is records separated by `0x1E`; each is a path below `storage/` on its first line
//! (`session/<project>/<id>.json`, `message/<session>/<id>.json`, `part/<message>/<id>.json`)
//! and the file's content after it. The first record is the session imported. A path that is
//! absolute or climbs out with `..` is left out.

use std::path::{Component, Path, PathBuf};

use ctxkit_import::import_opencode;

use crate::tree::snapshot;

/// This input's store, removed when dropped.
struct Store(PathBuf);

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `path` stays below the folder it is joined to.
fn stays_below(path: &Path) -> bool {
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
}

/// Writes the records of `data` below a fresh `storage/`; the path of the first record's file.
fn write_store(data: &[u8], store: &Store) -> Option<PathBuf> {
    let storage = store.0.join("storage");
    let mut first = None;
    for record in data.split(|byte| *byte == 0x1E).take(64) {
        let text = String::from_utf8_lossy(record);
        let (path, content) = text.split_once('\n').unwrap_or((&text, ""));
        let relative = Path::new(path.trim());
        if relative.as_os_str().is_empty() || !stays_below(relative) {
            continue;
        }
        let file = storage.join(relative);
        let written = file
            .parent()
            .is_some_and(|parent| std::fs::create_dir_all(parent).is_ok())
            && std::fs::write(&file, content).is_ok();
        if written && first.is_none() {
            first = Some(file);
        }
    }
    first
}

/// Imports the store of `data`; see the module's documentation.
pub fn opencode_import(data: &[u8]) {
    let root = crate::thread_temp_path("opencode");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let store = Store(root);
    let Some(session_file) = write_store(data, &store) else {
        return;
    };
    let before = snapshot(&store.0);
    let imported = import_opencode(&session_file);
    assert_eq!(
        snapshot(&store.0),
        before,
        "importing wrote into the OpenCode store"
    );
    let Ok(sessions) = imported else {
        return;
    };
    let written = store.0.join("imported.jsonl");
    for session in &sessions {
        crate::reopens_whole(session, &written, "opencode");
    }
}
