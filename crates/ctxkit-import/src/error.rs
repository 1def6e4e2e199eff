//! Errors of the importers. Problems inside a file (bad lines, orphan tool results, unknown records)
//! are not errors: they come back in the [`ImportReport`](crate::ImportReport).

use std::path::PathBuf;

use crate::SourceFormat;

/// Why an import or a listing failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading the source file or directory failed (`operation` says what was attempted). Returned by
    /// [`read_source`](crate::read_source), [`import_file`](crate::import_file) and the listings;
    /// the caller should report the path and give up on it.
    #[error("cannot {operation} `{path}`: {source}")]
    Io {
        operation: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The source file (or an earlier import being appended to) holds more than `limit` bytes, the
    /// most ctxkit reads of it. Returned by [`read_source`](crate::read_source),
    /// [`import_file`](crate::import_file), [`find_subagents`](crate::find_subagents) and the
    /// listings (which skip the file) before the file is read whole; check the path.
    #[error("`{path}` is {bytes} bytes, more than the {limit} ctxkit reads of it")]
    TooLarge {
        path: PathBuf,
        bytes: u64,
        limit: u64,
    },
    /// `--from auto` could not tell which agent wrote the file: no record has a shape one agent
    /// alone writes. Returned by [`detect_format`](crate::detect_format) and
    /// [`import_file`](crate::import_file); ask the user to name the format.
    #[error("cannot tell which agent wrote `{path}`")]
    UnknownFormat { path: PathBuf },
    /// Not one record of the file is one the format named with `--from` writes (OpenCode: the path
    /// is not an OpenCode store); `looks_like` is the format its records (or its `rollout-*` name)
    /// point to, if any. Returned by [`confirm_format`](crate::confirm_format),
    /// [`import_file`](crate::import_file) and [`import_opencode`](crate::import_opencode); nothing
    /// is written: import it as what it looks like, or with `--from auto`.
    #[error("`{path}` is not {}: {}", .format.described(), looks_like_reason(*.looks_like))]
    NotThisFormat {
        path: PathBuf,
        format: SourceFormat,
        looks_like: Option<SourceFormat>,
    },
    /// The file is already a Pi (or ctxkit) session, format `version` (1 when the header names
    /// none). Returned by [`import_file`](crate::import_file) and
    /// [`detect_format`](crate::detect_format), whatever the format named; nothing is written:
    /// ctxkit commands read it as it is.
    #[error("`{path}` is already a Pi session (format v{version}); there is nothing to import")]
    AlreadyPiSession { path: PathBuf, version: u64 },
    /// The file holds Pi (or ctxkit) session entries but no valid header line: a session whose
    /// first line was lost or damaged. Returned by [`import_file`](crate::import_file) and
    /// [`detect_format`](crate::detect_format), whatever the format named; nothing is written:
    /// `ctxkit check` shows what is wrong with the file.
    #[error(
        "`{path}` holds session entries but no valid header line (a Pi or ctxkit session whose \
         first line is missing or damaged)"
    )]
    HeaderlessPiSession { path: PathBuf },
    /// The file holds no record the importer could read, so there is no session to build. Returned
    /// by the converters; nothing is written.
    #[error("`{path}` holds no readable records")]
    Empty { path: PathBuf },
    /// The output file exists and is not an earlier import of the same session (another header, or
    /// an entry that differs). Returned by [`ImportedSession::write_to`](crate::ImportedSession::write_to);
    /// nothing was written: choose another `--out`.
    #[error("`{path}` is not an earlier import of this session: {reason}")]
    Conflict { path: PathBuf, reason: String },
    /// Reading an OpenCode database failed (not a database OpenCode wrote, or locked). Returned by
    /// [`import_opencode`](crate::import_opencode) and the listing; nothing was written anywhere.
    #[error("cannot read the OpenCode database `{path}`: {source}")]
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// The OpenCode database has no session with this id. Returned by
    /// [`import_opencode`](crate::import_opencode); list the sessions with
    /// `ctxkit sessions --from opencode`.
    #[error("`{path}` has no session `{id}`")]
    SessionNotFound { path: PathBuf, id: String },
    /// The output file is an earlier import that another process is writing (another `ctxkit
    /// import`, or a chat that continued the session holds its writer lock). Returned by
    /// [`ImportedSession::write_to`](crate::ImportedSession::write_to); nothing was written: import
    /// again when that process is done.
    #[error(transparent)]
    InUse(ctxkit_session::SessionError),
    /// Serializing an entry failed (only possible for values serde cannot represent). Returned by
    /// [`ImportedSession::to_jsonl`](crate::ImportedSession::to_jsonl).
    #[error("cannot serialize an imported entry: {0}")]
    Serialize(#[from] serde_json::Error),
}

/// Why a file is not the format named: what it looks like instead, if anything.
fn looks_like_reason(looks_like: Option<SourceFormat>) -> String {
    match looks_like {
        Some(format) => format!("it looks like {}", format.described()),
        None => "none of its records has that format's shape".to_owned(),
    }
}

impl ImportError {
    pub(crate) fn io<'a>(
        operation: &'static str,
        path: &'a std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self + 'a {
        move |source| Self::Io {
            operation,
            path: path.to_owned(),
            source,
        }
    }
}
