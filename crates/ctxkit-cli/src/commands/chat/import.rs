//! `/import <file>`: another session becomes the chat's, as Pi 1.6's `/import`. A Pi or ctxkit
//! session file is copied into this directory's sessions folder (beside the others, never over
//! one; its id and recorded folder kept) and opened; a Claude Code transcript or a Codex rollout
//! is converted into a session there, as `ctxkit import` converts it. The file named is only read,
//! and the session left stays in its file (`/resume` gets back to it).

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use ctxkit_import::{ImportError, WriteOutcome, import_file};
use ctxkit_session::Session;

use super::Chat;
use super::banner::Banner;
use crate::render::counted;

/// `path` as the user typed it: `~/` is their home, a relative path is the chat's folder's.
fn named_path(cwd: &Path, path: &str) -> PathBuf {
    match path.strip_prefix("~/").zip(std::env::home_dir()) {
        Some((rest, home)) => home.join(rest),
        None => cwd.join(path),
    }
}

/// Where a copy of `source` goes in `folder`: its own name, or `name-1.jsonl`, `name-2.jsonl` …
/// when that is taken; `None` when `source` is already there.
fn copy_target(folder: &Path, source: &Path) -> Option<PathBuf> {
    let name = source.file_name()?;
    let target = folder.join(name);
    let same = |target: &Path| {
        std::fs::canonicalize(target)
            .ok()
            .is_some_and(|target| std::fs::canonicalize(source).ok() == Some(target))
    };
    if same(&target) {
        return None;
    }
    let stem = Path::new(name).file_stem()?.to_string_lossy().into_owned();
    let extension = Path::new(name)
        .extension()
        .map_or(String::new(), |extension| {
            format!(".{}", extension.to_string_lossy())
        });
    let mut candidate = target;
    let mut suffix = 1;
    while candidate.symlink_metadata().is_ok() {
        candidate = folder.join(format!("{stem}-{suffix}{extension}"));
        suffix += 1;
    }
    Some(candidate)
}

impl Chat {
    /// `/import <file>`.
    pub(super) async fn import(&mut self, rest: &str) -> Result<()> {
        if rest.is_empty() {
            bail!(
                "Usage: /import <file>: a Pi or ctxkit session, a Claude Code transcript or a \
                 Codex rollout"
            );
        }
        if let Some((_, shown)) = &self.shown_as {
            bail!(
                "The session is {shown}: import with `ctxkit import`, then `ctxkit chat --resume`"
            );
        }
        let source = named_path(&self.cwd, rest);
        let open_now = self
            .engine
            .with_session(|session| session.path().and_then(|path| path.canonicalize().ok()))
            .await;
        let is_open = |path: &Path| open_now.is_some() && path.canonicalize().ok() == open_now;
        if is_open(&source) {
            bail!("`{}` is the session open now", source.display());
        }
        let opened = match import_file(&source, None) {
            Ok(imported) => {
                let target = self.session_dir.join(imported.file_name());
                if is_open(&target) {
                    bail!(
                        "{} was imported into the session open now ({}); nothing changed",
                        source.display(),
                        target.display()
                    );
                }
                let outcome = imported
                    .write_to(&target)
                    .with_context(|| format!("cannot write `{}`", target.display()))?;
                let done = match outcome {
                    WriteOutcome::UpToDate => "already imported, opened as it was".to_owned(),
                    WriteOutcome::Created => format!(
                        "{} of {}",
                        counted(imported.report.entries, "entry"),
                        imported.format.name()
                    ),
                    WriteOutcome::Appended(count) => {
                        format!("imported before: {} appended", counted(count, "new entry"))
                    }
                    WriteOutcome::AppendedCompleted {
                        appended,
                        completed,
                    } => format!(
                        "imported before, {} caught unfinished: {} appended, each completed \
                         one beside its partial one",
                        counted(completed.len(), "entry"),
                        counted(appended, "new entry")
                    ),
                    WriteOutcome::AppendedBeside { appended, .. } => format!(
                        "imported and continued before: {} appended beside the continued turns, \
                         which stay the current branch",
                        counted(appended, "new entry")
                    ),
                };
                let issues = imported.report.issues.len();
                let issues = match issues {
                    0 => String::new(),
                    count => format!("; {} (`ctxkit import` lists them)", counted(count, "issue")),
                };
                self.ui.line(&format!(
                    "Imported {} into {} ({done}{issues})",
                    source.display(),
                    target.display()
                ));
                target
            }
            Err(ImportError::AlreadyPiSession { .. }) => self.copy_in(&source)?,
            Err(error) => return Err(error.into()),
        };
        let session = Session::open(&opened)?;
        self.install(session).await?;
        self.restore_recorded(true).await;
        self.banner(Banner::Switched).await;
        Ok(())
    }

    /// A Pi or ctxkit session file copied into this directory's sessions folder (already there:
    /// opened in place).
    fn copy_in(&self, source: &Path) -> Result<PathBuf> {
        let Some(target) = copy_target(&self.session_dir, source) else {
            return Ok(source.to_owned());
        };
        std::fs::create_dir_all(&self.session_dir)
            .with_context(|| format!("cannot create `{}`", self.session_dir.display()))?;
        let mut reader = std::fs::File::open(source)
            .with_context(|| format!("cannot read `{}`", source.display()))?;
        // A session is the user's own: readable by them only, as every session file.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&target)
            .with_context(|| format!("cannot create `{}`", target.display()))?;
        std::io::copy(&mut reader, &mut file)
            .and_then(|_| file.sync_all())
            .with_context(|| format!("cannot write `{}`", target.display()))?;
        self.ui.line(&format!(
            "Imported {} into {} (a copy; the file named stays as it was)",
            source.display(),
            target.display()
        ));
        Ok(target)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn a_copy_takes_a_free_name_and_a_file_already_there_is_not_copied() {
        let folder = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let source = elsewhere.path().join("run.jsonl");
        std::fs::write(&source, "{}\n").unwrap();
        assert_eq!(
            copy_target(folder.path(), &source),
            Some(folder.path().join("run.jsonl"))
        );
        std::fs::write(folder.path().join("run.jsonl"), "other\n").unwrap();
        std::fs::write(folder.path().join("run-1.jsonl"), "other\n").unwrap();
        assert_eq!(
            copy_target(folder.path(), &source),
            Some(folder.path().join("run-2.jsonl"))
        );
        let stored = folder.path().join("run.jsonl");
        assert_eq!(copy_target(folder.path(), &stored), None);
    }

    #[test]
    fn a_named_path_is_the_chats_folders_unless_it_starts_at_home() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            named_path(cwd, "s.jsonl"),
            PathBuf::from("/work/project/s.jsonl")
        );
        assert_eq!(
            named_path(cwd, "/tmp/s.jsonl"),
            PathBuf::from("/tmp/s.jsonl")
        );
        if let Some(home) = std::env::home_dir() {
            assert_eq!(named_path(cwd, "~/s.jsonl"), home.join("s.jsonl"));
        }
    }
}
