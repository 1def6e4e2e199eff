//! `ctxkit sessions`: list sessions newest first.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use ctxkit_protocol::SessionInfoRecord;
use ctxkit_session::{default_session_dir, list_all_sessions, list_sessions};

use super::{Locations, print_json};
use crate::Outcome;
use crate::render::one_line;

pub fn sessions(
    locations: &Locations,
    environment: Option<&ctxkit_settings::Environment>,
    dir: Option<PathBuf>,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let this_directory = !all && dir.is_none();
    let named_dir = dir.clone();
    let (sessions, skipped) = if all {
        list_all_sessions(&locations.sessions_root)?
    } else {
        let dir = match dir {
            // A folder named by hand must exist (a project without sessions has no folder yet).
            Some(dir) => {
                std::fs::read_dir(&dir)
                    .with_context(|| format!("cannot read directory `{}`", dir.display()))?;
                dir
            }
            None => {
                let cwd = std::env::current_dir()?;
                default_session_dir(&locations.sessions_root, &cwd.display().to_string())
            }
        };
        list_sessions(&dir)?
    };
    if json {
        print_json(out, &sessions)?;
    } else if sessions.is_empty() {
        writeln!(out, "{}", nothing_here(locations, this_directory))?;
        let pi_hint = environment
            .filter(|_| this_directory)
            .and_then(|environment| {
                let cwd = environment.cwd.display().to_string();
                super::pi_sessions::hint(environment, &locations.sessions_root, &cwd)
            });
        if let Some(hint) = pi_hint {
            writeln!(crate::redact::stderr(), "hint: {hint}")?;
        }
        if let Some(dir) = named_dir.filter(|dir| !dir.starts_with(&locations.sessions_root)) {
            // Sweep 9: `--dir` given a project listed nothing and said no more.
            writeln!(
                crate::redact::stderr(),
                "hint: `--dir` names a sessions folder (`{}/--<path>--/`), not a project: run \
                 `ctxkit sessions` in `{}` for its sessions, or `ctxkit sessions --all`",
                locations.sessions_root.display(),
                dir.display()
            )?;
        }
    } else {
        print_session_rows(&sessions, out)?;
    }
    super::warn_skipped(
        skipped
            .iter()
            .map(|file| (file.path.as_path(), &file.error as &dyn std::fmt::Display)),
    )?;
    Ok(Outcome::Success)
}

/// What an empty list says. This directory's list names the sessions of other directories when
/// there are any: an imported session keeps the directory its agent ran in, so right after
/// `ctxkit import` the current directory's list is often empty.
fn nothing_here(locations: &Locations, this_directory: bool) -> String {
    let elsewhere = if this_directory {
        list_all_sessions(&locations.sessions_root).map_or(0, |(sessions, _)| sessions.len())
    } else {
        0
    };
    match elsewhere {
        0 => "No sessions.".to_owned(),
        count => format!(
            "No sessions for this directory; {count} in other directories (an imported session keeps its own): `ctxkit sessions --all` lists them"
        ),
    }
}

/// One session a row: modified time, message count, name or first message, and its path below (with
/// its creation time when that is later, the time the listing orders it by), then the session it
/// was made from, when its header names one (a fork, a clone, a session written afresh: `--json`
/// had it and the text did not).
pub(super) fn print_session_rows(
    sessions: &[SessionInfoRecord],
    out: &mut dyn Write,
) -> Result<()> {
    for session in sessions {
        print_session_row(session, out)?;
        if let Some(parent) = &session.parent_session_path {
            writeln!(out, "    parent: {parent}")?;
        }
    }
    Ok(())
}

/// A session's row and path, without its parent (a subagent listed under it).
pub(super) fn print_session_row(session: &SessionInfoRecord, out: &mut dyn Write) -> Result<()> {
    let title = one_line(
        session
            .name
            .as_deref()
            .unwrap_or_else(|| shown_first_message(session)),
        60,
    );
    writeln!(
        out,
        "{}  {:>4} msgs  {}",
        session.modified, session.message_count, title
    )?;
    if created_after_its_messages(session) {
        // It lists by the later time (a fork made today of an old session lists first).
        writeln!(
            out,
            "    {}  (created {}, from older messages)",
            session.path, session.created
        )?;
    } else {
        writeln!(out, "    {}", session.path)?;
    }
    Ok(())
}

/// Whether the session was created after its last activity: a copy (a fork, a clone) of older
/// messages, which the listing orders by its creation.
pub(crate) fn created_after_its_messages(session: &SessionInfoRecord) -> bool {
    let time = |text: &str| ctxkit_session::parse_timestamp_ms(text);
    matches!(
        (time(&session.created), time(&session.modified)),
        (Some(created), Some(modified)) if created > modified
    )
}

/// The first message as a row shows it: a session with messages but none typed by the user (only
/// tool results, images or injected context) says so instead of "(no messages)".
pub(crate) fn shown_first_message(session: &ctxkit_protocol::SessionInfoRecord) -> &str {
    if session.message_count > 0 && session.first_message == "(no messages)" {
        "(no text typed by the user)"
    } else {
        &session.first_message
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn session(created: &str, modified: &str) -> SessionInfoRecord {
        SessionInfoRecord {
            path: "/s/fork.jsonl".to_owned(),
            id: "s1".to_owned(),
            cwd: "/w".to_owned(),
            name: None,
            parent_session_path: None,
            created: created.to_owned(),
            modified: modified.to_owned(),
            message_count: 1,
            first_message: "an old question".to_owned(),
            format_version: None,
        }
    }

    /// A fork of old messages shows the time the lists order it by, in `sessions` and `/resume`.
    #[test]
    fn a_copy_of_older_messages_shows_when_it_was_made() {
        let fork = session("2026-01-02T00:00:00.000Z", "2025-03-17T09:00:00.000Z");
        let plain = session("2025-03-17T08:00:00.000Z", "2025-03-17T09:00:00.000Z");
        assert!(created_after_its_messages(&fork));
        assert!(!created_after_its_messages(&plain));
        let rows = crate::commands::chat::resume_rows(&[fork.clone(), plain]);
        assert!(
            rows[0].starts_with("  1. 2026-01-02T00:00:00.000Z (created)  1 message "),
            "{rows:?}"
        );
        assert!(
            rows[1].starts_with("  2. 2025-03-17T09:00:00.000Z  1 message "),
            "{rows:?}"
        );
        let mut out = Vec::new();
        print_session_rows(&[fork], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("fork.jsonl  (created 2026-01-02T00:00:00.000Z, from older messages)"),
            "{text}"
        );
    }

    /// `sessions --json` named a fork's parent and the text listing did not: it is the row's last
    /// line.
    #[test]
    fn a_row_names_the_session_it_was_made_from() {
        let mut fork = session("2025-03-17T08:00:00.000Z", "2025-03-17T09:00:00.000Z");
        fork.parent_session_path = Some("/s/original.jsonl".to_owned());
        let mut out = Vec::new();
        print_session_rows(&[fork], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("    /s/fork.jsonl\n    parent: /s/original.jsonl\n"),
            "{text}"
        );
    }
}

/// A name that is neither a file nor the id (or its start) of a session in the sessions directory:
/// a session that is not there, which exits 4 with one hint as a missing file does for every
/// command that takes a session.
#[derive(Debug)]
pub struct NoSuchSession {
    pub name: String,
    pub sessions_root: PathBuf,
}

impl std::fmt::Display for NoSuchSession {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "`{}` is neither a file nor the id of a session in `{}`",
            self.name,
            self.sessions_root.display()
        )
    }
}

impl std::error::Error for NoSuchSession {}

/// The most ids an ambiguous id's start lists (as a database store lists them).
const AMBIGUOUS_IDS_SHOWN: usize = 5;

/// Whether `name` is written as a path (a folder in it, or a `.jsonl` name), not as a session id:
/// one that is not there is a missing file, never looked up as an id.
pub(crate) fn names_a_file(name: &Path) -> bool {
    name.components().count() > 1
        || name
            .extension()
            .is_some_and(|extension| extension == "jsonl")
}

/// A file that exists (or a session in an OpenCode database, `opencode.db#<session id>`, which the
/// importer reads), else the session whose id is (or starts with) `name` in the sessions directory.
pub(crate) fn resolve_session(locations: &Locations, name: &str) -> Result<PathBuf> {
    let path = Path::new(name);
    if ctxkit_import::is_opencode_path(path) && !path.exists() {
        return Ok(path.to_path_buf());
    }
    if path.exists() || names_a_file(path) {
        // A missing file fails as every command that opens a session says it (exit 4).
        std::fs::metadata(path).map_err(|source| ctxkit_session::SessionError::Io {
            action: "open",
            path: path.to_owned(),
            source,
        })?;
        super::refuse_folder(path)?;
        return Ok(path.to_path_buf());
    }
    let (sessions, _) = ctxkit_session::list_all_sessions(&locations.sessions_root)
        .with_context(|| format!("cannot list `{}`", locations.sessions_root.display()))?;
    let matching: Vec<_> = sessions
        .iter()
        .filter(|session| session.id.starts_with(name))
        .collect();
    match &matching[..] {
        [one] => Ok(PathBuf::from(&one.path)),
        [] => Err(NoSuchSession {
            name: name.to_owned(),
            sessions_root: locations.sessions_root.clone(),
        }
        .into()),
        several if several.iter().all(|session| session.id == name) => anyhow::bail!(
            "`{name}` is the id of {} session files ({}); name the file",
            several.len(),
            several
                .iter()
                .map(|session| format!("`{}`", session.path))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // As a database store says it (exit 2, the ids listed): the user picks one.
        several => {
            let mut ids: Vec<String> = several.iter().map(|session| session.id.clone()).collect();
            ids.sort();
            ids.dedup();
            Err(ctxkit_store::StoreError::AmbiguousId {
                prefix: name.to_owned(),
                count: ids.len(),
                ids: ids.into_iter().take(AMBIGUOUS_IDS_SHOWN).collect(),
            }
            .into())
        }
    }
}
