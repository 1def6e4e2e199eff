//! `ctxkit simulate ID…` with a database store: each session named by its id (or the start of
//! one) is replayed from a private copy of what the database holds, as the other commands that
//! take a session FILE read one (a tester's `simulate ID` said no such file was in the sessions
//! folder, which a database store does not use).

use std::path::Path;

use anyhow::{Context as _, Result};
use ctxkit_store::{SessionStore as _, StoreUrl};

use super::store::{open, runtime};

/// The private copies a simulation reads, and the names they are shown by; both go when dropped.
pub(super) struct StoredCopies {
    /// Held for its removal when dropped.
    _folder: tempfile::TempDir,
    shown: Vec<crate::redact::ShownAs>,
}

impl StoredCopies {
    /// Removes the copies, and keeps their names for the error the command ends with.
    pub(super) fn keep_names_for_the_error(self) {
        for shown in self.shown {
            shown.keep_for_the_error();
        }
    }
}

/// Replaces each of `names` that is no file by the path of a private copy of the database
/// session it names; `None` when every name is a file.
pub(super) fn copy_stored_sessions<'a>(
    url: &StoreUrl,
    names: impl Iterator<Item = &'a mut String>,
) -> Result<Option<StoredCopies>> {
    let stored: Vec<&mut String> = names
        .filter(|name| {
            // A name that is a path (`./nope/x.jsonl`) is a file that is missing, said as such
            // by the replay, not an id looked for in the store.
            let path = Path::new(name.as_str());
            !path.exists()
                && !super::sessions::names_a_file(path)
                && !ctxkit_import::is_opencode_path(path)
        })
        .collect();
    if stored.is_empty() {
        return Ok(None);
    }
    let runtime = runtime()?;
    let store = open(&runtime, url)?;
    let folder = ctxkit_session::private_temporary_folder("session")
        .context("cannot create a private temporary directory")?;
    let mut shown = Vec::new();
    for name in stored {
        let id = runtime.block_on(store.resolve(name))?;
        let lines = runtime.block_on(store.export(&id))?;
        let path = ctxkit_session::private_copy_path(folder.path(), &id);
        ctxkit_session::write_private_file(&path, &lines.to_jsonl())
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        // Reports name the session by its id, not by the copy.
        shown.push(crate::redact::show_path_as(&path, &id));
        *name = path.display().to_string();
    }
    Ok(Some(StoredCopies {
        _folder: folder,
        shown,
    }))
}
