//! How `ctxkit view` reads the session it follows: a loader the binary gives, called for every
//! rebuild of the page's data and every context built on demand, and the session it opens, which
//! owns the private copy it reads from when the session was imported from another agent's format.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::Arc;

use ctxkit_session::Session;

use crate::error::WebError;

/// Opens the session again (a Pi/ctxkit file, or another agent's session imported anew).
pub type SessionLoader = Arc<dyn Fn() -> Result<OpenedSession, WebError> + Send + Sync>;

/// A session the loader opened, and the private copy it reads its lines from when it was
/// imported. The copy is removed when this is dropped, as the request that opened it ends: each
/// request imports its own, and copies kept until a later request removed them were left behind
/// by concurrent requests (90 contexts asked 30 at a time left 55 copies, 184 MB, until the view
/// exited).
pub struct OpenedSession {
    // Declared before the copy, so the session (and its open file) is dropped first: a file still
    // open cannot be removed everywhere.
    session: Session,
    copy: Option<RemovedOnDrop>,
}

impl OpenedSession {
    /// A session read from the file the user named (nothing to remove).
    pub fn new(session: Session) -> Self {
        Self {
            session,
            copy: None,
        }
    }

    /// A session read from `copy`, a private file made for it alone and removed with it.
    pub fn reading_private_copy(session: Session, copy: PathBuf) -> Self {
        Self {
            session,
            copy: Some(RemovedOnDrop(copy)),
        }
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

    #[test]
    fn the_copy_is_removed_with_the_session_read_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("imported-1.jsonl");
        std::fs::write(
            &copy,
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        )
        .unwrap();
        let opened =
            OpenedSession::reading_private_copy(Session::open(&copy).unwrap(), copy.clone());
        assert_eq!(opened.entries().len(), 0);
        assert!(copy.exists());
        drop(opened);
        assert!(!copy.exists());
    }
}
