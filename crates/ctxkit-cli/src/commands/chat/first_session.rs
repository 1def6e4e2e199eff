//! The session a chat starts in, from the command line as Pi 1.6.0's reads it: `--no-session`,
//! `--fork`, `--session`, `--continue`, `--session-id`, else a new session. `--resume` opens its
//! list once the screen is up (`Chat::resume_at_start`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use ctxkit_import::{ImportError, import_file};
use ctxkit_session::Session;

use super::super::Locations;
use crate::cli::ChatArgs;

/// What the chat says about the session it starts in, once its screen is up.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum StartNote {
    /// Nothing to say.
    Quiet,
    /// `--continue` found no session of this folder: a new one was started (sweep 9 found it
    /// silent).
    NothingToContinue,
    /// `--fork`: the copy (or import) of `source` written to `copy`.
    Forked { source: PathBuf, copy: PathBuf },
    /// `--session-id` named no session of this folder: a new one was started under it.
    NewUnderId(String),
}

impl StartNote {
    /// The line the chat shows, if any (`NothingToContinue` is said by the caller, which adds
    /// the hint of Pi's sessions).
    pub(super) fn line(&self) -> Option<String> {
        match self {
            Self::Quiet | Self::NothingToContinue => None,
            Self::Forked { source, copy } => Some(format!(
                "Forked {} into {} (a session of its own; the one named stays as it was)",
                source.display(),
                copy.display()
            )),
            Self::NewUnderId(id) => Some(format!(
                "No session of id `{id}` in this folder: starting a new one under that id"
            )),
        }
    }
}

/// The session the chat starts in, and what to say about it. `--session` takes a file or, as
/// Pi's does, a session id or its start (from the sessions folder).
pub(super) fn first_session(
    args: &ChatArgs,
    locations: &Locations,
    cwd: &str,
    session_dir: &Path,
) -> Result<(Session, StartNote)> {
    let quiet = |session| Ok((session, StartNote::Quiet));
    if args.no_session {
        return match &args.session_id {
            Some(id) => quiet(Session::in_memory_with_id(cwd, id.clone())),
            None => quiet(Session::in_memory(cwd)),
        };
    }
    if let Some(source) = &args.fork {
        return forked(locations, source, cwd, session_dir, args.session_id.clone());
    }
    if let Some(file) = &args.session {
        if crate::commands::sessions::names_a_file(file) && !file.exists() {
            return quiet(new_session_at(cwd, file)?);
        }
        let text = file.to_string_lossy();
        let in_chosen_folder = args
            .session_dir
            .as_ref()
            .and_then(|_| session_of_id_start(session_dir, &text));
        let file = match in_chosen_folder {
            Some(file) => file,
            None => crate::commands::sessions::resolve_session(locations, &text)?,
        };
        return quiet(Session::open(&file)?);
    }
    if args.continue_recent {
        let nothing = ctxkit_session::find_most_recent_session(session_dir).is_none();
        let note = match nothing {
            true => StartNote::NothingToContinue,
            false => StartNote::Quiet,
        };
        return Ok((Session::continue_recent(cwd, session_dir)?, note));
    }
    if let Some(id) = &args.session_id {
        return match session_of_id(session_dir, id) {
            Some(file) => quiet(Session::open(&file)?),
            None => Ok((
                Session::create_with_id(cwd, session_dir, id.clone()),
                StartNote::NewUnderId(id.clone()),
            )),
        };
    }
    quiet(Session::create(cwd, session_dir))
}

/// `--fork`: the session `name` names (a file, or an id or its start from any project's
/// sessions) copied into `session_dir` for `cwd` under a new id, or `id`; a Claude Code transcript
/// or Codex rollout imported there instead, as `/import` imports it.
fn forked(
    locations: &Locations,
    name: &Path,
    cwd: &str,
    session_dir: &Path,
    id: Option<String>,
) -> Result<(Session, StartNote)> {
    if let Some(id) = &id
        && let Some(file) = session_of_id(session_dir, id)
    {
        bail!(
            "a session of id `{id}` is already in this folder (`{}`): `--session-id` with \
             `--fork` names the copy, so pick another id",
            file.display()
        );
    }
    let source = crate::commands::sessions::resolve_session(locations, &name.to_string_lossy())?;
    std::fs::create_dir_all(session_dir)?;
    let copy = match import_file(&source, None) {
        Ok(imported) => {
            if id.is_some() {
                bail!(
                    "`{}` is another agent's session, imported under its own id: leave out \
                     `--session-id`",
                    source.display()
                );
            }
            let target = session_dir.join(imported.file_name());
            imported.write_to(&target)?;
            target
        }
        Err(ImportError::AlreadyPiSession { .. }) => {
            let (copy, notes) = crate::commands::edit::copy_session(&source, cwd, session_dir, id)?;
            for note in notes {
                writeln!(crate::redact::stderr(), "warning: {note}")?;
            }
            copy
        }
        Err(error) => return Err(error.into()),
    };
    let session = Session::open(&copy)?;
    Ok((session, StartNote::Forked { source, copy }))
}

/// `--session-dir`'s folder, absolute (against the current directory `cwd`) and made if missing.
/// The project itself is refused: its session files, this chat's and every later one's, would lie
/// among the files the model's tools read (QA 2026-12-07: closing the folder to tools closed the
/// whole project; closing the files found at the start left the next session open).
pub(super) fn chosen_folder(folder: &Path, cwd: &Path) -> Result<PathBuf> {
    let folder = cwd.join(folder);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot make the session folder `{}`", folder.display()))?;
    let resolved = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    if resolved(&folder) == resolved(cwd) {
        return Err(crate::usage::UsageError {
            message: format!(
                "--session-dir `{}` is the project itself, whose files the model's tools read",
                folder.display()
            ),
            hint: "name a folder of its own for the sessions, such as `--session-dir .sessions`"
                .to_owned(),
        }
        .into());
    }
    Ok(folder)
}

/// The one file in `session_dir` whose session id starts with `start` (`--session ID` with
/// `--session-dir`, looked up there first as Pi does); `None` for none or several.
fn session_of_id_start(session_dir: &Path, start: &str) -> Option<PathBuf> {
    let mut found = std::fs::read_dir(session_dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
                && ctxkit_session::read_header(path)
                    .is_ok_and(|header| header.id.starts_with(start))
        });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The file in `session_dir` whose session id is exactly `id`, as Pi's `--session-id` looks it up
/// (the headers read, not the file names).
fn session_of_id(session_dir: &Path, id: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(session_dir).ok()?;
    entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .find(|path| ctxkit_session::read_header(path).is_ok_and(|header| header.id == id))
}

/// `--session` naming a file that is not there: a new session written there, as Pi's does; the
/// folders missing on the way are created with the file, when it is first written (as the
/// sessions folder is). Refused when a part of the path that is there is no folder.
fn new_session_at(cwd: &str, file: &Path) -> Result<Session> {
    let path = std::path::absolute(file)?;
    let existing = path.ancestors().skip(1).find(|folder| folder.exists());
    match existing {
        Some(folder) if !folder.is_dir() => bail!(
            "`{}` cannot be a new session file: `{}` is not a folder; name a session file, a \
             new file's path, or a session id",
            file.display(),
            folder.display()
        ),
        _ => Ok(Session::create_at(cwd, &path)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn written(dir: &Path, id: &str) -> PathBuf {
        let file = dir.join(format!("2026-12-07T01-00-00-000Z_{id}.jsonl"));
        let header = serde_json::json!({
            "type": "session", "version": 3, "id": id,
            "timestamp": "2026-12-07T01:00:00.000Z", "cwd": "/p"
        });
        std::fs::write(&file, format!("{header}\n")).unwrap();
        file
    }

    #[test]
    fn an_id_is_found_by_the_header_not_the_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = written(dir.path(), "my-session");
        let renamed = dir.path().join("renamed.jsonl");
        std::fs::rename(&file, &renamed).unwrap();
        assert_eq!(session_of_id(dir.path(), "my-session"), Some(renamed));
        assert_eq!(session_of_id(dir.path(), "my"), None);
        assert_eq!(
            session_of_id(&dir.path().join("absent"), "my-session"),
            None
        );
    }
}
