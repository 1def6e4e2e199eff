//! The one error type of the crate.

use std::path::PathBuf;

/// What can go wrong while building or serving a session's page.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// Reading the session failed (returned by [`crate::build_page_data`] and the view's reloads):
    /// report it; the file is not changed.
    #[error(transparent)]
    Session(#[from] ctxkit_session::SessionError),
    /// Listing the compactions failed: as for `Session`.
    #[error(transparent)]
    Compaction(#[from] ctxkit_compaction::CompactionError),
    /// A `--redact` pattern is not a regular expression (returned by [`crate::Redactor::new`]):
    /// the user fixes the pattern.
    #[error("`--redact {pattern}` is not a valid regular expression: {reason}")]
    Pattern { pattern: String, reason: String },
    /// An entry id named in a request is not in the session (the view's `/api/context`).
    #[error("no entry `{id}` in the session")]
    UnknownEntry { id: String },
    /// The context asked for holds more messages than the view builds (the view's
    /// `/api/context`): `ctxkit context` prints it.
    #[error("the context at `{id}` holds {messages} messages, more than the view builds")]
    ContextTooLong { id: String, messages: usize },
    /// The view's socket could not be opened or served (returned by [`crate::serve_view`]).
    #[error("cannot serve the view on `{address}`: {source}")]
    Serve {
        address: String,
        source: std::io::Error,
    },
    /// Writing the page failed (returned by [`crate::export_page`]): nothing is left where the
    /// page was to go when the caller writes it atomically.
    #[error("cannot write the page: {source}")]
    Write { source: std::io::Error },
    /// Reading (or, for the live view, reloading) the session failed: the page keeps the last
    /// good data. Said as a read: the first read of `export` and `view` fails with it too.
    #[error("cannot read `{path}`: {reason}")]
    Reload { path: PathBuf, reason: String },
}
