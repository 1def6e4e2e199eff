//! Errors of the session store. Each variant says who returns it and how a caller should react.

use std::path::PathBuf;

/// Everything that can go wrong opening, reading or writing a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A filesystem operation failed. Returned by every operation that touches a file; the path names
    /// the file. Usually fatal for the command.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file is not a session file ctxkit can use (empty, no header, header not first, header id not
    /// a string). Returned by [`crate::Session::open`]. The file is left untouched: ctxkit never
    /// overwrites a file it could not read. Run `ctxkit check` for details.
    #[error("`{path}` is not a session file: {reason}{}", line.map(|line| format!(" (line {line})")).unwrap_or_default())]
    NotASession {
        path: PathBuf,
        line: Option<usize>,
        reason: String,
    },

    /// Another process holds the writer lock of this session file. Returned by the first write.
    /// Retry later, or fork the session to write elsewhere. `holder` is the lock holder's PID when
    /// the system tells (Linux).
    #[error("`{path}` is in use by {}", holder.map_or_else(|| "another writer".to_owned(), |pid| format!("PID {pid}")))]
    Locked { path: PathBuf, holder: Option<u32> },

    /// Another process wrote to the file after it was loaded. Returned by the first write of a loaded
    /// session: appending from the stale view would branch off an old leaf (so the newer entries
    /// would fall out of the context), and rewriting it (migration) would erase them. Nothing was
    /// written: open the file again and retry.
    #[error("`{path}` was changed by another process since it was read; nothing was written")]
    ChangedOnDisk { path: PathBuf },

    /// No entry has this id. Returned by navigation, labels and branching.
    #[error("entry `{id}` not found")]
    EntryNotFound { id: String },

    /// A context edit names an entry that is not on the current branch or has no editable model
    /// content (only user, assistant, tool-result and extension messages do). Returned by
    /// `Session::append_context_edit`; pick another entry.
    #[error(
        "entry `{id}` is not a user, assistant, tool-result or extension message on the current branch"
    )]
    NotEditable { id: String },

    /// A stored line could not be read as the typed entry its head announced. Returned by typed
    /// accessors; the raw line is still kept and rewritten unchanged.
    #[error("`{path}` line {line}: {source}")]
    InvalidEntry {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },

    /// An entry ctxkit built could not be serialized. A bug; report it.
    #[error("cannot serialize entry: {0}")]
    Serialize(#[source] serde_json::Error),
}

impl SessionError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;
