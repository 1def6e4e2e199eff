//! Engine and session errors as JSON-RPC errors: each failure's `data.kind`, as
//! `docs/protocol.md` lists them.

use ctxkit_engine::EngineError;
use ctxkit_session::SessionError;

use crate::{MethodError, codes};

/// An engine error as a method's error (`-32000`, with its `data.kind`); a blank `text` the
/// engine refused is the request's fault (`-32602`).
pub(crate) fn engine_error(error: EngineError) -> MethodError {
    let kind = match &error {
        EngineError::EmptyPin => {
            return MethodError::new(
                codes::INVALID_PARAMS,
                "invalid params: `text` is empty; pin the text to keep in view",
            );
        }
        EngineError::EmptyPrompt => {
            return MethodError::new(codes::INVALID_PARAMS, "invalid params: `text` is empty");
        }
        EngineError::Session(error) => session_kind(error),
        EngineError::Compaction(_) => "invalid_entry",
        EngineError::AlreadyCompacted => "already_compacted",
        EngineError::NothingToCompact => "nothing_to_compact",
        EngineError::Cancelled => "cancelled",
        EngineError::OverflowUnrecoverable { .. } => "overflow_unrecoverable",
        EngineError::Summarization(_) => "summarization_failed",
        EngineError::EntryNotFound(_) => "entry_not_found",
        EngineError::InvalidForkEntry => "invalid_fork_entry",
        EngineError::NothingToClone => "nothing_to_clone",
        EngineError::PinNotFound(_) => "pin_not_found",
        EngineError::PinCapExceeded { .. } => "pin_cap_exceeded",
        EngineError::NotOnBranch(_) => "not_on_branch",
        EngineError::ForgetBeforeCompaction(_) => "forget_before_compaction",
    };
    let message = match locked_by_this_server(&error) {
        // "PID <ours>" would name the server itself: another client of it (WebSocket) has the
        // session open.
        Some(path) => format!(
            "`{}` is open in another client of this server, which holds it for writing; nothing \
             was written",
            path.display()
        ),
        None if matches!(error, EngineError::InvalidForkEntry) => format!(
            "{error}: `fork` with `position` `before` (the default) forks just before a user \
             message, and this entry is not one; to fork at any other \
             entry, pass `\"position\": \"at\"`"
        ),
        None => error.to_string(),
    };
    MethodError {
        code: codes::ENGINE_ERROR,
        message,
        kind: Some(kind),
    }
}

/// The session file whose writer lock this process holds (for another of its clients).
fn locked_by_this_server(error: &EngineError) -> Option<&std::path::Path> {
    if let EngineError::Session(SessionError::Locked { path, holder }) = error
        && *holder == Some(std::process::id())
    {
        return Some(path);
    }
    None
}

/// The `data.kind` of a session store error: two writers on one session file are
/// `session_in_use` (another process or client holds its lock) and `session_file_changed`
/// (another writer changed it since it was read or last written); the others are `session`.
fn session_kind(error: &SessionError) -> &'static str {
    match error {
        SessionError::EntryNotFound { .. } => "entry_not_found",
        SessionError::Locked { .. } => "session_in_use",
        SessionError::FileChanged { .. } | SessionError::ChangedOnDisk { .. } => {
            "session_file_changed"
        }
        SessionError::Io { .. }
        | SessionError::NotASession { .. }
        | SessionError::TailUnrepaired { .. }
        | SessionError::NotARegularFile { .. }
        | SessionError::TooLarge { .. }
        | SessionError::CannotMigrate { .. }
        | SessionError::NewerVersion { .. }
        | SessionError::NotEditable { .. }
        | SessionError::ResultWithoutCall { .. }
        | SessionError::InvalidEntry { .. }
        | SessionError::LineChanged { .. }
        | SessionError::Serialize(_) => "session",
    }
}
