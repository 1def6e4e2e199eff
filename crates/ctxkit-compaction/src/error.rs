//! Errors of compaction planning and runs.

use std::path::PathBuf;

use ctxkit_session::{Session, SessionError, StoredEntry};

/// What can go wrong planning or running a compaction.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// Reading the session failed. Returned by planning; see the inner error.
    #[error(transparent)]
    Session(#[from] SessionError),

    /// A stored entry on the path could not be read as its type. The file is not modified; run
    /// `ctxkit check` on it.
    #[error("`{path}` line {line}: {source}")]
    InvalidEntry {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },

    /// No entry has this id.
    #[error("entry `{id}` not found")]
    EntryNotFound { id: String },

    /// The summarizer failed; nothing was written. `kind` says whether a fresh summary prompt
    /// in place of a continued conversation might succeed.
    #[error("summarization failed: {message}")]
    Summarizer {
        message: String,
        kind: ctxkit_summarizer::FailureKind,
    },

    /// The run was cancelled; nothing was written.
    #[error("compaction cancelled")]
    Cancelled,
}

impl CompactionError {
    pub(crate) fn entry(session: &Session, entry: &StoredEntry, source: serde_json::Error) -> Self {
        Self::InvalidEntry {
            path: session.path().map(PathBuf::from).unwrap_or_default(),
            line: entry.line(),
            source,
        }
    }

    /// A failure to read or parse `entry` (typed accessors of the session).
    pub(crate) fn reading(session: &Session, entry: &StoredEntry, error: SessionError) -> Self {
        if let SessionError::InvalidEntry { source, .. } = error {
            return Self::entry(session, entry, source);
        }
        Self::Session(error)
    }
}
