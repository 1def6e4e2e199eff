//! `/import <file>`: another session becomes the chat's, as Pi 1.6's `/import`. A Pi or ctxkit
//! session file is copied into this directory's sessions folder as Pi's `--fork` copies one (a
//! new session id, the file copied as its parent) and opened; a Claude Code transcript or a Codex rollout
//! is converted into a session there, as `ctxkit import` converts it. The file named is only read,
//! and the session left stays in its file (`/resume` gets back to it).

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

/// Whether `source` is already a file of `folder` (opened in place, not copied).
fn stored_in(folder: &Path, source: &Path) -> bool {
    let real = |path: &Path| std::fs::canonicalize(path).ok();
    source.file_name().is_some_and(|name| {
        let target = real(&folder.join(name));
        target.is_some() && target == real(source)
    })
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
                self.ui.say(&format!(
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

    /// A Pi or ctxkit session file copied into this directory's sessions folder as Pi 1.6.0's
    /// `--fork` copies one (already there: opened in place): every entry as written, under a new
    /// session id whose header names the file copied (`parentSession`) and this directory. Pi's
    /// `/import` keeps the id, so the two files then share it and a store keyed by id holds
    /// only one of them.
    fn copy_in(&self, source: &Path) -> Result<PathBuf> {
        if stored_in(&self.session_dir, source) {
            return Ok(source.to_owned());
        }
        std::fs::create_dir_all(&self.session_dir)
            .with_context(|| format!("cannot create `{}`", self.session_dir.display()))?;
        let cwd = self.cwd.display().to_string();
        let (target, notes) =
            crate::commands::edit::copy_session(source, &cwd, &self.session_dir, None)
                .with_context(|| format!("cannot copy `{}`", source.display()))?;
        self.ui.say(&format!(
            "Imported {} into {} (a copy with a session id of its own; the file named stays as \
             it was)",
            source.display(),
            target.display()
        ));
        for note in notes {
            self.ui.notice(&note);
        }
        Ok(target)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn a_file_already_in_the_folder_is_not_copied() {
        let folder = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let source = elsewhere.path().join("run.jsonl");
        std::fs::write(&source, "{}\n").unwrap();
        assert!(!stored_in(folder.path(), &source));
        std::fs::write(folder.path().join("run.jsonl"), "other\n").unwrap();
        assert!(!stored_in(folder.path(), &source));
        assert!(stored_in(folder.path(), &folder.path().join("run.jsonl")));
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
