//! `fork` and `fork-from` of a database session: the new session is stored in the database under
//! a new id, as the fork of a file is a new file beside it.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use ctxkit_store::{AnyStore, SessionStore as _};

use crate::Outcome;
use crate::cli::Command;

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

/// Sets the header's `parentSession` of session file `path` (a file this command wrote) to
/// `parent`; the file is replaced whole (a new file renamed over it) or left as it was.
pub(super) fn name_parent(path: &Path, parent: &str) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    let (header, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let mut header: serde_json::Value =
        serde_json::from_str(header).context("the fork's header is not JSON")?;
    let Some(fields) = header.as_object_mut() else {
        anyhow::bail!("the fork's header is not an object");
    };
    fields.insert("parentSession".to_owned(), parent.into());
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut replacement = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("cannot write in `{}`", folder.display()))?;
    replacement
        .write_all(format!("{header}\n{rest}").as_bytes())
        .and_then(|()| replacement.as_file().sync_all())
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    replacement
        .persist(path)
        .map_err(|error| anyhow::anyhow!("cannot write `{}`: {}", path.display(), error.error))?;
    Ok(())
}
