//! The store's one error type.

use std::path::PathBuf;

/// What a store operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `store.url` is neither a directory nor a `postgres://` URL (a text that starts like a URL
    /// is never taken for a directory). Returned by [`crate::StoreUrl::parse`]. Fix the setting,
    /// flag or `CTXKIT_STORE`. `url` is shown redacted (a refused scheme: only the scheme).
    #[error("invalid store URL `{url}`: {reason}")]
    InvalidUrl { url: String, reason: String },

    /// No session with this id is in the store. Returned by every operation on one session.
    #[error("no session `{}` in the store", shown(id))]
    NotFound { id: String },

    /// Several sessions' ids start with `prefix`. Returned by `resolve`; `ids` holds the first
    /// few of them, in order. Give more of the id.
    #[error(
        "`{}` starts {count} session ids ({}); give more of it",
        shown(prefix),
        listed(ids, *count)
    )]
    AmbiguousId {
        prefix: String,
        count: usize,
        ids: Vec<String>,
    },

    /// A session with this id is already in the store. Returned by `create` and `import`; export
    /// it, or import a fork of the file.
    #[error("session `{id}` is already in the store")]
    Exists { id: String },

    /// Another writer holds the session's lease and it has not expired. Returned by `acquire`.
    /// Wait for the lease to expire (a writer that died is taken over then), or fork the session.
    #[error(
        "session `{id}` is in use by {owner} (its lease expires in {expires_in_ms} ms unless that \
         writer renews it, as it does while it runs)"
    )]
    SessionInUse {
        id: String,
        owner: String,
        expires_in_ms: i64,
    },

    /// The lease this writer holds was taken over (its token is no longer the session's): the
    /// writer is stale. Returned by `append`, `renew` and `release`; nothing was written. Open the
    /// session again and acquire a new lease.
    #[error(
        "session `{id}`: this writer's lease (token {token}) was taken over; nothing was written"
    )]
    Fenced { id: String, token: i64 },

    /// A line to store is not a session entry (not a JSON object with a string `type`), or the
    /// file to import is not a session. Nothing was written.
    #[error("{what}: {reason}")]
    InvalidSession { what: String, reason: String },

    /// Line `line` of the file to import is not UTF-8: a store keeps each line as text. Returned
    /// by `import_file`, whose caller names the file (`what`); nothing was written. `ctxkit
    /// check` names the line.
    #[error("line {line}: not UTF-8 ({reason})")]
    NotUtf8 {
        what: String,
        line: usize,
        reason: String,
    },

    /// Line `line` of the file to import is not a session entry (not JSON, cut short, not an
    /// object with a string `type`). Returned by `import_file`, whose caller names the file
    /// (`what`); nothing was written. `ctxkit check` lists every such line; fix or remove it in
    /// a copy, and import the copy.
    #[error("line {line}: {reason}")]
    DamagedLine {
        what: String,
        line: usize,
        reason: String,
    },

    /// A file operation of the directory store failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The session library refused a file (not a session, too large, newer format…).
    #[error(transparent)]
    Session(#[from] ctxkit_session::SessionError),

    /// The database answered with an error or the connection failed. `context` says what ctxkit
    /// was doing; the message is the server's own when it sent one. Retry when the database is
    /// reachable again; nothing acknowledged was lost.
    #[error("database: {context}: {}", describe(.error))]
    Database {
        context: &'static str,
        error: tokio_postgres::Error,
    },

    /// The database did not answer a statement within its deadline (10 s; 600 s for a migration
    /// or an import's batch): the host is frozen or the network to it is cut while the
    /// connection stays open. `context` says what ctxkit was doing. Whether a write that timed
    /// out was stored is unknown: open the session again once the database answers.
    #[error(
        "database: {context}: no answer within {seconds} s (the database or the network to it does not answer)"
    )]
    Unresponsive { context: &'static str, seconds: u64 },

    /// No database connection could be had from the pool: the server is down or unreachable, or
    /// refused the connection. `reason` is the server's message when it sent one (`password
    /// authentication failed for user …`, `database … does not exist`: never a password).
    #[error("database: cannot connect: {reason}")]
    Connect { reason: String },

    /// The TLS the URL asked for could not be set up: the server's certificate was not verified,
    /// or the `sslrootcert` file could not be read.
    #[error("database: cannot connect over TLS: {reason}")]
    Tls { reason: String },

    /// A file the store URL names for TLS (`sslrootcert`, `sslcert`, `sslkey`) cannot be used:
    /// missing, empty, not PEM, or PEM of another kind. Fix the file or the URL's parameter.
    #[error("database: cannot use the `{parameter}` file `{}`: {problem}", path.display())]
    TlsFile {
        /// The URL's parameter that names the file.
        parameter: &'static str,
        path: PathBuf,
        /// What is wrong with it, in a few words.
        problem: String,
    },
}

/// What went wrong, in the database's words: the server's message when it sent one (a driver
/// error shows only "db error"), else the driver's error and its causes (`error connecting to
/// server: Connection refused`).
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(database) = error.as_db_error() {
        return database.message().to_owned();
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        text.push_str(": ");
        text.push_str(&current.to_string());
        cause = current.source();
    }
    text
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// Whether the database refused the schema the connection works in: none of the URL's
    /// `search_path` exists or may be used by the role (another team's, say), so there is
    /// nowhere to create or read the tables.
    pub fn is_schema_unusable(&self) -> bool {
        use tokio_postgres::error::SqlState;
        matches!(self, Self::Database { error, .. }
            if error.code() == Some(&SqlState::INVALID_SCHEMA_NAME)
                || error.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE))
    }

    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }

    /// Why no connection could be had from the pool.
    pub(crate) fn connect(error: &deadpool_postgres::PoolError) -> Self {
        use deadpool_postgres::{PoolError, TimeoutType};
        let reason = match error {
            PoolError::Backend(error) => {
                let reason = describe(error);
                if crate::postgres::tls::is_certificate_refusal(&reason) {
                    return Self::Tls { reason };
                }
                reason
            }
            PoolError::Timeout(TimeoutType::Create) => {
                "the database did not answer in time".to_owned()
            }
            PoolError::Timeout(TimeoutType::Wait | TimeoutType::Recycle) => {
                "every connection stayed busy".to_owned()
            }
            PoolError::Closed | PoolError::NoRuntimeSpecified | PoolError::PostCreateHook(_) => {
                error.to_string()
            }
        };
        Self::Connect { reason }
    }
}

/// The most characters of an id or a prefix an error shows: a mistyped argument may be anything,
/// and a message is one line.
const SHOWN_ID_CHARS: usize = 80;

/// `id` as an error shows it: at most [`SHOWN_ID_CHARS`] characters, then `…`.
fn shown(id: &str) -> std::borrow::Cow<'_, str> {
    match id.char_indices().nth(SHOWN_ID_CHARS) {
        Some((end, _)) => std::borrow::Cow::Owned(format!("{}…", &id[..end])),
        None => std::borrow::Cow::Borrowed(id),
    }
}

/// The ids an [`StoreError::AmbiguousId`] names, and how many more of the `count` it leaves out.
fn listed(ids: &[String], count: usize) -> String {
    let mut text = ids
        .iter()
        .map(|id| shown(id))
        .collect::<Vec<_>>()
        .join(", ");
    let more = count.saturating_sub(ids.len());
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod shown_tests {
    use super::*;

    #[test]
    fn a_long_argument_is_shown_cut_and_a_cut_list_says_how_many_more() {
        let long = "é".repeat(100_000);
        let message = StoreError::NotFound { id: long.clone() }.to_string();
        assert!(message.chars().count() < 120, "{message}");
        assert!(message.contains('…'));
        let message = StoreError::AmbiguousId {
            prefix: long.clone(),
            count: 2,
            ids: vec![long.clone(), "short".to_owned()],
        }
        .to_string();
        assert!(message.chars().count() < 250, "{}", message.len());
        assert_eq!(
            StoreError::NotFound {
                id: "abc".to_owned()
            }
            .to_string(),
            "no session `abc` in the store"
        );
    }
}
