//! How `ctxkit view` reads the session it follows: a loader the binary gives, called for every
//! rebuild of the page's data and every context built on demand, and the session it opens, which
//! owns the private copy it reads from when the session was imported from another agent's format.
//! An imported session is imported once per version of its source ([`ImportCache`]): each click
//! in the page imported a 65 MB Claude Code transcript anew, and 16 quick clicks took the view to
//! a gigabyte.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use ctxkit_session::Session;

use crate::error::WebError;

/// Opens the session again (a Pi/ctxkit file, or another agent's session imported anew).
pub type SessionLoader = Arc<dyn Fn() -> Result<OpenedSession, WebError> + Send + Sync>;

/// A session the loader opened, and the private copy it reads its lines from when it was
/// imported. The copy is shared by the requests that read one version of the source, and removed
/// once the last of them ends and a newer version replaced it in the [`ImportCache`] (copies kept
/// until a later request removed them were left behind by concurrent requests: 90 contexts asked
/// 30 at a time left 55 copies, 184 MB, until the view exited).
pub struct OpenedSession {
    // Declared before the copy, so the session (and its open file) is dropped first: a file still
    // open cannot be removed everywhere.
    session: Session,
    copy: Option<Arc<RemovedOnDrop>>,
}

impl OpenedSession {
    /// A session read from the file the user named (nothing to remove).
    pub fn new(session: Session) -> Self {
        Self {
            session,
            copy: None,
        }
    }

    fn reading_shared_copy(copy: Arc<RemovedOnDrop>) -> Result<Self, WebError> {
        Ok(Self {
            session: Session::open(&copy.0)?,
            copy: Some(copy),
        })
    }
}

/// The private copy of the source's last version a loader imported, so that the page's data and
/// every context asked while the source stays the same read one copy, imported once. A request
/// that comes while the copy is made waits for it.
#[derive(Default)]
pub struct ImportCache {
    last: Mutex<Option<(String, Arc<RemovedOnDrop>)>>,
}

impl ImportCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The session of the source at `version` (its watched files' version, read before the
    /// import so that a change made during it is imported again next time): the copy made for
    /// that version, or else the one `import` writes now (it returns the new private file's path,
    /// which this cache removes once no request reads it).
    pub fn open(
        &self,
        version: String,
        import: impl FnOnce() -> Result<PathBuf, WebError>,
    ) -> Result<OpenedSession, WebError> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let copy = match last.as_ref() {
            Some((imported, copy)) if *imported == version => Arc::clone(copy),
            Some(_) | None => {
                // The older copy is let go before the new one is made (removed now unless a
                // request still reads it).
                *last = None;
                let copy = Arc::new(RemovedOnDrop(import()?));
                *last = Some((version, Arc::clone(&copy)));
                copy
            }
        };
        drop(last);
        OpenedSession::reading_shared_copy(copy)
    }
}

impl std::fmt::Debug for ImportCache {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ImportCache")
            .finish_non_exhaustive()
    }
}

impl Deref for OpenedSession {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::fmt::Debug for OpenedSession {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OpenedSession")
            .field("copy", &self.copy.as_ref().map(|copy| &copy.0))
            .finish_non_exhaustive()
    }
}

/// A file removed when this is dropped (a failure to remove it is left to the private folder's
/// own removal when the command ends).
struct RemovedOnDrop(PathBuf);

impl Drop for RemovedOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> &'static str {
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n"
    }

    /// Two requests against one version of the source import it once; a new version is imported
    /// again, and the older copy is removed once no request reads it.
    #[test]
    fn one_version_of_the_source_is_imported_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ImportCache::new();
        let imports = std::cell::Cell::new(0);
        let import = || {
            imports.set(imports.get() + 1);
            let copy = dir.path().join(format!("imported-{}.jsonl", imports.get()));
            std::fs::write(&copy, header()).unwrap();
            Ok(copy)
        };
        let first = cache.open("1-100".to_owned(), import).unwrap();
        let second = cache.open("1-100".to_owned(), import).unwrap();
        assert_eq!(imports.get(), 1);
        drop((first, second));
        let older = dir.path().join("imported-1.jsonl");
        assert!(older.exists(), "kept for the next request of that version");
        let reading = cache.open("1-100".to_owned(), import).unwrap();
        let newer = cache.open("2-200".to_owned(), import).unwrap();
        assert_eq!(imports.get(), 2);
        assert!(older.exists(), "still read by a request");
        drop(reading);
        assert!(!older.exists(), "removed with its last reader");
        drop(newer);
        assert!(dir.path().join("imported-2.jsonl").exists());
        drop(cache);
        assert!(!dir.path().join("imported-2.jsonl").exists());
    }
}
