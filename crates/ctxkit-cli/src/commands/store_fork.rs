//! Sessions made on a database store: `fork` and `fork-from` of a stored session, the sessions a
//! chat on one makes (`/fork`, `/save`), and a chat's new session, each stored under its own id as
//! a file's would be a new file beside it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ctxkit_store::{AnyStore, ListQuery, SessionStore as _, StoreUrl};

use crate::Outcome;
use crate::cli::{ChatArgs, Command};

/// Forks stored session `id` as `command` asks (`fork [--at]`, `fork-from --cwd`) and prints the
/// new session's id. Its `parentSession` is `id`: stored sessions are named by id where files are
/// named by path. The parent is only read.
pub(super) fn fork_in_store(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    id: &str,
    command: Command,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let lines = runtime.block_on(store.export(id))?;
    let directory = ctxkit_session::private_temporary_folder("session")
        .context("cannot create a private temporary directory")?;
    let copy = ctxkit_session::private_copy_path(directory.path(), id);
    ctxkit_session::write_private_file(&copy, &lines.to_jsonl())
        .with_context(|| format!("cannot write `{}`", copy.display()))?;
    let forked = {
        // Messages about the copy name the stored session.
        let _shown = crate::redact::show_path_as(&copy, id);
        if let Command::Fork { at, .. } = command {
            super::edit::fork_file(&copy, at.as_deref())?
        } else if let Command::ForkFrom { cwd, .. } = command {
            let cwd = super::edit::project_folder(&cwd)?;
            super::edit::fork_from_into(&copy, &cwd, directory.path())?
        } else {
            anyhow::bail!("only `fork` and `fork-from` make a new stored session")
        }
    };
    name_parent(&forked, id)?;
    let stored = runtime
        .block_on(store.import_file(&forked))
        .context("cannot store the fork")?;
    writeln!(out, "{}", stored.id)?;
    Ok(Outcome::Success)
}

/// Stores the private copy `copy` of session `id` as a new session, a fork of it at its leaf
/// (its parent `id`): what a chat wrote after its session was taken over. The new id.
pub(super) fn store_fork_of_copy(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    copy: &Path,
    id: &str,
) -> Result<String> {
    let forked = {
        let _shown = crate::redact::show_path_as(copy, id);
        super::edit::fork_file(copy, None)?
    };
    name_parent(&forked, id)?;
    let stored = runtime
        .block_on(store.import_file(&forked))
        .context("cannot store the fork")?;
    Ok(stored.id)
}

/// Sets the header's `parentSession` of session file `path` (a file this command wrote) to
/// `parent`; the file is replaced whole (a new file renamed over it) or left as it was.
pub(super) fn name_parent(path: &Path, parent: &str) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let lines = ctxkit_store::SessionLines::parse(&path.display().to_string(), &bytes)
        .and_then(|lines| lines.with_parent_session(parent))?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut replacement = ctxkit_jail::temporary_beside(path)
        .with_context(|| format!("cannot write in `{}`", folder.display()))?;
    replacement
        .write_all(&lines.to_jsonl())
        .and_then(|()| replacement.as_file().sync_all())
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    replacement
        .persist(path)
        .map_err(|error| anyhow::anyhow!("cannot write `{}`: {}", path.display(), error.error))?;
    Ok(())
}

/// The sessions a command made beside a database session's private copy (the chat's `/fork`,
/// `/new`, `/save`), stored under their own ids before the folder goes, in the order they were
/// made; a `parentSession` naming a file of the folder then names that file's stored id. Returns
/// the ids stored. When one cannot be stored, the folder is kept under a name no later run
/// removes, and the error says where.
pub(super) fn store_new_sessions(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    folder: tempfile::TempDir,
    copy: &Path,
    id: &str,
) -> Result<Vec<String>> {
    match store_each(runtime, store, folder.path(), copy, id) {
        Ok(stored) => Ok(stored),
        Err(error) => {
            let at = keep_unstored(folder, id);
            Err(error.context(format!(
                "the sessions made in this chat are kept in `{}`: `ctxkit store import FILE` \
                 once the database answers",
                at.display()
            )))
        }
    }
}

/// Keeps `folder` (the sessions a chat made that could not be stored) where no later run removes
/// it, and says where: renamed over a new empty folder of this user's, `0700`, named
/// `ctxkit-unstored-<the id's letters>.<random>` beside it. Not a private folder's name
/// (`ctxkit-<kind>-<pid>-<random>`), which a later run removes once this process is gone, and
/// never one an earlier failure (or another user) holds already: a fixed name made a second
/// failure for the same session, or an id too long for a file name, keep the private name.
pub(super) fn keep_unstored(folder: tempfile::TempDir, id: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let kept = folder.keep();
    let Some(parent) = kept.parent() else {
        return kept;
    };
    let letters: String = id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(64)
        .collect();
    let made = tempfile::Builder::new()
        .prefix(&format!("ctxkit-unstored-{letters}."))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent);
    let Ok(made) = made else {
        return kept;
    };
    let safe = made.keep();
    match std::fs::rename(&kept, &safe) {
        Ok(()) => safe,
        Err(_) => {
            let _ = std::fs::remove_dir(&safe);
            kept
        }
    }
}

fn store_each(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    folder: &Path,
    copy: &Path,
    id: &str,
) -> Result<Vec<String>> {
    let mut made: Vec<PathBuf> = std::fs::read_dir(folder)
        .with_context(|| format!("cannot list `{}`", folder.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path != copy && path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    // Pi's session file names start with the time the session was made.
    made.sort();
    let mut stored_as = std::collections::HashMap::from([(copy.to_owned(), id.to_owned())]);
    let mut stored = Vec::new();
    for path in made {
        if let Some(parent) = header_parent(&path)?.and_then(|parent| stored_as.get(&parent)) {
            name_parent(&path, &parent.clone())?;
        }
        let session = runtime
            .block_on(store.import_file(&path))
            .context("cannot store a session made in this chat")?;
        stored_as.insert(path, session.id.clone());
        stored.push(session.id);
    }
    Ok(stored)
}

/// The header's `parentSession` of session file `path`, as a path.
fn header_parent(path: &Path) -> Result<Option<PathBuf>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let header = text.lines().next().unwrap_or_default();
    let facts = ctxkit_store::header_facts(header)
        .map_err(|reason| anyhow::anyhow!("`{}`: {reason}", path.display()))?;
    Ok(facts.parent_session.map(PathBuf::from))
}

/// `ctxkit chat` on a database store works on a stored session as `--session ID` does: a new one
/// (its header stored at once), or with `--continue` this directory's most recent one. `--session`,
/// `--no-session` and `--resume` (the directory's session files) are left as they are.
pub(super) fn chat_in_store(url: &StoreUrl, args: &mut ChatArgs) -> Result<()> {
    if let Some(flag) = [
        args.fork.as_ref().map(|_| "--fork"),
        args.session_id.as_ref().map(|_| "--session-id"),
        args.session_dir.as_ref().map(|_| "--session-dir"),
    ]
    .into_iter()
    .flatten()
    .next()
    {
        return Err(crate::usage::UsageError {
            message: format!("`{flag}` works on session files, not on a database store"),
            hint: "`--session ID` opens a stored session, and `ctxkit store export ID -o FILE` \
                   writes one to a file"
                .to_owned(),
        }
        .into());
    }
    if args.session.is_some() || args.no_session {
        return Ok(());
    }
    let project = super::store::current_project()?;
    let runtime = super::store::runtime()?;
    let store = super::store::open(&runtime, url)?;
    if args.resume {
        args.resume = false;
        if let Some(id) = resume_from_store(&runtime, &store, &project)? {
            args.session = Some(PathBuf::from(id));
            return Ok(());
        }
    }
    let recent = if args.continue_recent {
        let query = ListQuery {
            project: Some(project.clone()),
            limit: 1,
            ..ListQuery::default()
        };
        runtime.block_on(store.list(&query))?.into_iter().next()
    } else {
        None
    };
    let id = match recent {
        Some(session) => session.id,
        None => new_stored_session(&runtime, &store, &project)?,
    };
    args.continue_recent = false;
    args.session = Some(PathBuf::from(id));
    Ok(())
}

/// `chat --resume` on a database: the store's sessions of project `cwd`, listed as `/resume`
/// lists files, and the id of the one chosen on standard input (`None`: a new session, as an
/// empty answer stays in the new one a file chat starts with).
fn resume_from_store(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    cwd: &str,
) -> Result<Option<String>> {
    let query = ListQuery {
        project: Some(cwd.to_owned()),
        ..ListQuery::default()
    };
    let sessions: Vec<_> = runtime
        .block_on(store.list(&query))?
        .into_iter()
        .map(super::store::record_of)
        .collect();
    let mut out = std::io::stdout().lock();
    if sessions.is_empty() {
        writeln!(out, "No stored sessions for this directory.")?;
        return Ok(None);
    }
    for row in super::chat::resume_rows(&sessions) {
        writeln!(out, "{}", crate::render::terminal_safe(&row))?;
    }
    write!(out, "{}", super::chat::RESUME_QUESTION)?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    // A terminal echoes the answer and its Enter; from a pipe, the answer is written here, so
    // what follows (the chat's banner) starts a line of its own.
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        writeln!(out, "{}", crate::render::terminal_safe(answer.trim_end()))?;
    }
    let answer = answer.trim();
    if answer.is_empty() {
        return Ok(None);
    }
    let chosen = answer
        .parse::<usize>()
        .ok()
        .and_then(|number| number.checked_sub(1))
        .and_then(|index| sessions.get(index));
    match chosen {
        Some(session) => Ok(Some(session.id.clone())),
        None => anyhow::bail!("No session number `{answer}`"),
    }
}

/// Stores a new session of project `cwd` (its header); its id.
fn new_stored_session(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    cwd: &str,
) -> Result<String> {
    let directory = ctxkit_session::private_temporary_folder("session")
        .context("cannot create a private temporary directory")?;
    let mut session = ctxkit_session::Session::create(cwd, directory.path());
    session.flush_pending()?;
    let path = session
        .path()
        .map(Path::to_path_buf)
        .ok_or_else(|| anyhow::anyhow!("the new session has no file"))?;
    let stored = runtime
        .block_on(store.import_file(&path))
        .context("cannot store the new session")?;
    Ok(stored.id)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn folder_with_a_session(name: &str) -> tempfile::TempDir {
        let folder = ctxkit_session::private_temporary_folder("session").unwrap();
        std::fs::write(folder.path().join(name), "{}\n").unwrap();
        folder
    }

    /// The folder a failed store leaves must survive this process: a private folder's name
    /// (`ctxkit-session-<pid>-…`) is removed by the next ctxkit run once this process is gone.
    /// A second failure for the same session, and an id too long for a file name, fell back to it.
    #[test]
    fn every_unstored_folder_is_kept_under_a_name_of_its_own() {
        let long = "a".repeat(300);
        let mut kept = Vec::new();
        for (id, file) in [
            ("019a-session", "one.jsonl"),
            ("019a-session", "two.jsonl"),
            (long.as_str(), "three.jsonl"),
            ("///", "four.jsonl"),
            ("///", "five.jsonl"),
        ] {
            let at = keep_unstored(folder_with_a_session(file), id);
            let name = at.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("ctxkit-unstored-"), "{name}");
            assert!(at.join(file).is_file(), "{}", at.display());
            kept.push(at);
        }
        for at in &kept {
            std::fs::remove_dir_all(at).unwrap();
        }
    }
}
