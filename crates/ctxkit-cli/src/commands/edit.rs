//! Commands that write: `fork`, `fork-from`, `label`, `name`, `edit-context`, `migrate`. Every write appends to a
//! session file or creates a new one; existing lines are never changed (`migrate` rewrites atomically).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use ctxkit_protocol::MessageContent;
use ctxkit_session::{Session, default_session_dir};

use super::{Locations, note_rewrite};
use crate::Outcome;
use crate::render::counted;

pub fn fork(file: &Path, at: Option<&str>, out: &mut dyn Write) -> Result<Outcome> {
    let path = fork_file(file, at)?;
    writeln!(out, "{}", path.display())?;
    Ok(Outcome::Success)
}

/// Forks `file` at entry `at` (default: its leaf) into a new session file beside it; its path.
pub(super) fn fork_file(file: &Path, at: Option<&str>) -> Result<PathBuf> {
    let mut session = Session::open(file)?;
    super::refuse_newer_version(&session, file)?;
    super::warn_of_damage(&session, file, "copying what could be read")?;
    let leaf = match at {
        Some(id) => id.to_owned(),
        None => match session.leaf_id() {
            Some(leaf) => leaf.to_owned(),
            None => anyhow::bail!("`{}` has no entries to fork", file.display()),
        },
    };
    let new_path = session.create_branched_session(&leaf)?;
    // A fork without an assistant reply is held back by the deferred-write rule; write it now.
    session.flush_pending()?;
    let new_path = new_path.ok_or_else(|| anyhow::anyhow!("the session is not persisted"))?;
    if let Err(error) = super::checkpoints::carry_to_fork(file, &new_path, &session, u64::MAX) {
        writeln!(
            crate::redact::stderr(),
            "warning: the fork's rewinds cannot put files back as before it: {error:#}"
        )?;
    }
    Ok(new_path)
}

pub fn fork_from(
    locations: &Locations,
    file: &Path,
    cwd: &Path,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let cwd = project_folder(cwd)?;
    let dir = default_session_dir(&locations.sessions_root, &cwd);
    let path = fork_from_into(file, &cwd, &dir)?;
    writeln!(out, "{}", path.display())?;
    Ok(Outcome::Success)
}

/// The Pi or ctxkit session at `source` copied into `dir` as a session of project `cwd` (under
/// `id` when given), as Pi's `--fork` copies one: refused when a newer version wrote it, with the
/// file snapshots of its turns ([`super::checkpoints::carry_to_fork`]). The copy's path, and what
/// to tell the user of it (the source is damaged; its snapshots could not come): `chat --fork`
/// and `/import`.
pub(crate) fn copy_session(
    source: &Path,
    cwd: &str,
    dir: &Path,
    id: Option<String>,
) -> Result<(PathBuf, Vec<String>)> {
    let mut notes: Vec<String> = super::check_copy_source(source)?.into_iter().collect();
    let copy = Session::fork_from_as(source, cwd, dir, id)?;
    let path = copy
        .path()
        .map(Path::to_path_buf)
        .ok_or_else(|| anyhow::anyhow!("the copy of `{}` has no file", source.display()))?;
    if let Err(error) = super::checkpoints::carry_to_fork(source, &path, &copy, u64::MAX) {
        notes.push(format!(
            "the copy's rewinds cannot put files back as before it: {error:#}"
        ));
    }
    Ok((path, notes))
}

/// `--cwd` of `fork-from`: an existing folder, made absolute and resolved as Pi resolves it
/// (`../proj` and `proj/` name the folder `proj`).
pub(super) fn project_folder(cwd: &Path) -> Result<String> {
    if !cwd.is_dir() {
        anyhow::bail!(
            "`{}` is not a folder; --cwd names the project folder the copy belongs to",
            cwd.display()
        );
    }
    Ok(ctxkit_session::resolved_cwd(cwd)?.display().to_string())
}

/// Copies `file` into folder `dir` as a session of project `cwd`; the copy's path.
pub(super) fn fork_from_into(file: &Path, cwd: &str, dir: &Path) -> Result<PathBuf> {
    // The source read once more to say what the copy leaves out (QA 2026-12-07: a damaged line
    // was dropped from the copy without a word).
    if let Some(damaged) = super::check_copy_source(file)? {
        writeln!(crate::redact::stderr(), "warning: {damaged}")?;
    }
    let session = Session::fork_from(file, cwd, dir)?;
    session
        .path()
        .map(Path::to_path_buf)
        .ok_or_else(|| anyhow::anyhow!("the session is not persisted"))
}

pub fn label(file: &Path, id: &str, label: Option<&str>, out: &mut dyn Write) -> Result<Outcome> {
    // An empty label clears, as Pi reads it.
    let label = label.filter(|label| !label.is_empty());
    if let Some(label) = label {
        one_line("a label", label)?;
    }
    let mut session = Session::open(file)?;
    require_entry(&session, id)?;
    if label.is_none() && session.label(id).is_none() {
        writeln!(out, "{id} has no label; nothing was written")?;
        return Ok(Outcome::Success);
    }
    note_rewrite(&session, file)?;
    session.append_label_change(id, label)?;
    session.flush_pending()?;
    match label {
        Some(label) => writeln!(out, "Labelled {id}: {label}")?,
        None => writeln!(out, "Cleared the label of {id}")?,
    }
    Ok(Outcome::Success)
}

/// Refuses an id the session does not hold before anything is said of the write (a v1 file was
/// told "this write rewrites it as v3", then that the entry was not found).
fn require_entry(session: &Session, id: &str) -> Result<()> {
    if session.entry(id).is_none() {
        return Err(ctxkit_session::SessionError::EntryNotFound { id: id.to_owned() }.into());
    }
    Ok(())
}

/// Refuses a label or name that is not one line: lists and the tree show each on one.
fn one_line(what: &str, text: &str) -> Result<()> {
    if text.chars().any(char::is_control) {
        anyhow::bail!(
            "{what} is one line of text: this one holds a line break or another control character"
        );
    }
    Ok(())
}

/// Names the session `text`, or (`None`, `--clear`) removes its name. An empty name is refused:
/// it cleared the name, so `ctxkit name f "$UNSET"` lost it without a word.
pub fn name(file: &Path, text: Option<&str>, out: &mut dyn Write) -> Result<Outcome> {
    if text.is_some_and(|text| text.trim().is_empty()) {
        return Err(crate::usage::UsageError {
            message: "the name is empty".to_owned(),
            hint: "`--clear` removes the session's name".to_owned(),
        }
        .into());
    }
    let text = text.unwrap_or_default();
    one_line("a session name", text.trim())?;
    let mut session = Session::open(file)?;
    // Nothing to clear: nothing written, as `label --clear` of an unlabelled entry (QA
    // 2026-12-07: each `--clear` appended an entry, and rewrote a v2 file as v3).
    if text.is_empty() && session.session_name().is_none() {
        writeln!(out, "The session has no name; nothing was written")?;
        return Ok(Outcome::Success);
    }
    note_rewrite(&session, file)?;
    session.append_session_info(text)?;
    session.flush_pending()?;
    match session.session_name() {
        Some(name) => writeln!(out, "Named the session: {name}")?,
        None => writeln!(out, "Cleared the session name")?,
    }
    Ok(Outcome::Success)
}

/// Appends a context edit of `id`: `replacement` shown instead of its content, or (`None`) the
/// message left out of later contexts. A reply's tool results go with its calls, as in Pi 1.6.0.
pub fn edit_context(
    file: &Path,
    id: &str,
    replacement: Option<&str>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    if replacement.is_some_and(|text| text.trim().is_empty()) {
        // The view would send an empty message, which a provider refuses.
        return Err(crate::usage::UsageError {
            message: "the replacement is empty".to_owned(),
            hint: "`--omit` leaves the message out of later contexts".to_owned(),
        }
        .into());
    }
    let mut session = Session::open(file)?;
    require_entry(&session, id)?;
    note_rewrite(&session, file)?;
    let content = replacement.map(|text| MessageContent::Text(text.to_owned()));
    let written = session.append_context_edit_with_results(id, content)?;
    session.flush_pending()?;
    let edit = &written.edit;
    match replacement {
        Some(_) => writeln!(out, "Edited {id} in later contexts ({edit})")?,
        None => writeln!(out, "Left {id} out of later contexts ({edit})")?,
    }
    let results = &written.results_left_out;
    if !results.is_empty() {
        writeln!(
            out,
            "Also left out {} answering its calls, as Pi 1.6.0 does (a provider rejects a \
             tool result whose call is gone): {}",
            counted(results.len(), "tool result"),
            results.join(", ")
        )?;
    }
    Ok(Outcome::Success)
}

pub fn migrate(file: &Path, out: &mut dyn Write) -> Result<Outcome> {
    // The rewrite's temporary file goes if a signal ends the migration (QA: a 55 MB one stayed).
    let _temporaries = super::leftovers::temporaries_beside(file);
    let mut session = Session::open(file)?;
    super::warn_of_damage(
        &session,
        file,
        "migrating what could be read and keeping the other lines as they are",
    )?;
    if session.migrate_file()? {
        writeln!(out, "Migrated `{}` to session format v3", file.display())?;
    } else {
        writeln!(out, "`{}` is already in session format v3", file.display())?;
    }
    Ok(Outcome::Success)
}
