//! An entry id a command was given that its session does not hold: the error names the session
//! (the library's error knows only the id) and its hint the command that lists the ids.

use std::path::{Path, PathBuf};

use ctxkit_session::SessionError;

use crate::cli::Command;

/// An entry id not found in the session a command named.
#[derive(Debug)]
pub struct MissingEntry {
    pub session: PathBuf,
    pub id: String,
}

impl std::fmt::Display for MissingEntry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "entry `{}` not found in `{}`",
            self.id,
            self.session.display()
        )
    }
}

impl std::error::Error for MissingEntry {}

impl MissingEntry {
    /// What to run to see the session's entry ids.
    pub fn hint(&self) -> String {
        format!(
            "list entry ids with `ctxkit tree {}`",
            self.session.display()
        )
    }
}

/// The session (file, or id with a database) of a command that takes entry ids.
pub(super) fn session_of(command: &mut Command) -> Option<PathBuf> {
    let takes_ids = matches!(
        command,
        Command::Context { .. }
            | Command::Fork { .. }
            | Command::Label { .. }
            | Command::EditContext { .. }
            | Command::Tokens { .. }
            | Command::Branch { .. }
    );
    if !takes_ids {
        return None;
    }
    super::store_copy::session_argument(command).map(|(file, _)| file.clone())
}

/// `error`, naming `session` when an entry id was not found in it.
pub(super) fn name_session(error: anyhow::Error, session: Option<&Path>) -> anyhow::Error {
    let Some(session) = session else {
        return error;
    };
    let id = error
        .chain()
        .find_map(|cause| match cause.downcast_ref::<SessionError>() {
            Some(SessionError::EntryNotFound { id }) => Some(id.clone()),
            Some(_) | None => None,
        });
    match id {
        Some(id) => MissingEntry {
            session: session.to_owned(),
            id,
        }
        .into(),
        None => error,
    }
}
