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

    /// The session file is no longer the one this session writes to: deleted, moved, replaced, or
    /// cut short or extended by another program since the session's last write. Returned by every
    /// append (and by [`crate::Session::check_file`]) from then on; nothing was written, and the
    /// entries already in memory are kept. Never appended to: the new entry would be lost (a
    /// deleted file) or hang on a parent the file no longer holds. Write the session afresh to a
    /// new file ([`crate::Session::write_afresh`]), or open the file again.
    #[error("`{path}` {change} since the session last wrote it; nothing was written")]
    FileChanged {
        path: PathBuf,
        change: crate::FileChange,
    },

    /// An earlier write to this file failed and what it left could not be cut back to the last
    /// acknowledged record, so this append was refused (appending would glue the entry onto a torn
    /// fragment). Nothing was written; free space or fix the file (`ctxkit check`), then open the
    /// session again.
    #[error(
        "`{path}`: an earlier write failed and the file could not be repaired ({reason}); nothing was written"
    )]
    TailUnrepaired { path: PathBuf, reason: String },

    /// The path is not a regular file (a FIFO, a device, a directory, a socket). Returned by every
    /// open before anything is read, so a FIFO or `/dev/zero` never hangs or fills memory. Name a
    /// session file instead.
    #[error("`{path}` is not a regular file ({kind}); sessions are regular files")]
    NotARegularFile { path: PathBuf, kind: &'static str },

    /// The file is larger than a session file may be ([`crate::MAX_SESSION_BYTES`]). Returned by
    /// every open before anything is read. Split the session (`ctxkit fork`) or check the path.
    #[error("`{path}` is {bytes} bytes, more than the {limit} a session file may hold")]
    TooLarge {
        path: PathBuf,
        bytes: u64,
        limit: u64,
    },

    /// The file is in an older format and cannot be migrated without losing bytes (it holds
    /// invalid UTF-8). Returned by the first write of such a file (and `ctxkit migrate`); nothing
    /// was written. Repair the file (`ctxkit check` names the lines) and retry.
    #[error("`{path}` cannot be migrated without losing data: {reason}; nothing was written")]
    CannotMigrate { path: PathBuf, reason: String },

    /// The header names a format version newer than this ctxkit writes. Returned by the first write:
    /// appending v3 entries to it could corrupt it. Reading works, with a diagnostic.
    #[error(
        "`{path}` was written by a newer version (session format v{version}; this ctxkit writes v{supported}); nothing was written"
    )]
    NewerVersion {
        path: PathBuf,
        version: u64,
        supported: u64,
    },

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

    /// A context edit would bring back a tool result whose call the context no longer holds (an
    /// earlier edit took the call out of its reply, and the result with it): a provider refuses
    /// a result without its call. Returned by `Session::append_context_edit_with_results`.
    #[error(
        "entry `{id}` is a tool result whose call `{call_id}` an earlier edit took out of the context; replacing it would send a result without its call"
    )]
    ResultWithoutCall { id: String, call_id: String },

    /// A stored line could not be read as the typed entry its head announced. Returned by typed
    /// accessors; the raw line is still kept and rewritten unchanged.
    #[error("{}line {line}: {source}", file_prefix(path))]
    InvalidEntry {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },

    /// A line left on disk when the session was opened no longer reads back as it was indexed (the
    /// file was truncated or rewritten in place by another program). Returned by every accessor that
    /// reads an entry's line ([`crate::StoredEntry::raw`] and those built on it); no other data is
    /// ever returned in its place. Open the session again.
    #[error("`{path}` line {line} changed on disk since the session was opened: {reason}")]
    LineChanged {
        path: PathBuf,
        line: usize,
        reason: String,
    },

    /// An entry ctxkit built could not be serialized. A bug; report it.
    #[error("cannot serialize entry: {0}")]
    Serialize(#[source] serde_json::Error),
}

impl SessionError {
    /// The file the error names, when it names one (to name it as the user knows it: a command
    /// working on a copy).
    pub fn path_mut(&mut self) -> Option<&mut PathBuf> {
        match self {
            Self::Io { path, .. }
            | Self::NotASession { path, .. }
            | Self::Locked { path, .. }
            | Self::ChangedOnDisk { path }
            | Self::FileChanged { path, .. }
            | Self::TailUnrepaired { path, .. }
            | Self::NotARegularFile { path, .. }
            | Self::TooLarge { path, .. }
            | Self::CannotMigrate { path, .. }
            | Self::NewerVersion { path, .. }
            | Self::InvalidEntry { path, .. }
            | Self::LineChanged { path, .. } => Some(path),
            Self::EntryNotFound { .. }
            | Self::NotEditable { .. }
            | Self::ResultWithoutCall { .. }
            | Self::Serialize(_) => None,
        }
    }

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

/// "`path` " before a line number, or nothing for an entry that never came from a file (one
/// parsed from memory): an empty path printed as "`` line 6".
fn file_prefix(path: &std::path::Path) -> String {
    if path.as_os_str().is_empty() {
        String::new()
    } else {
        format!("`{}` ", path.display())
    }
}
