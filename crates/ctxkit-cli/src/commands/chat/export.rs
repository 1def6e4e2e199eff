//! `/export [file]`: the session as one self-contained web page, as `ctxkit export` writes it
//! (Pi 1.6's `/export`), or, for a name ending in `.jsonl`, a copy of the session file.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use ctxkit_web::{PageOptions, Redactor, export_page};

use super::Chat;
use crate::commands::web::{refuse_to_replace, write_page};

impl Chat {
    pub(super) async fn export(&self, rest: &str) -> Result<()> {
        let file = self
            .engine
            .with_session(|session| session.path().map(Path::to_owned))
            .await;
        let output = match path_argument(rest) {
            // A name without an extension is a page's (`/export notes` writes `notes.html`).
            Some(named) if named.extension().is_none() => {
                self.cwd.join(named.with_extension("html"))
            }
            Some(named) => self.cwd.join(named),
            None => self.cwd.join(self.default_page_name().await),
        };
        if output
            .extension()
            .is_some_and(|extension| extension == "jsonl")
        {
            return self.copy_session_file(file.as_deref(), &output);
        }
        refuse_to_replace(&output, "/export")?;
        let bytes = self.write_session_page(&output).await?;
        self.ui.say(&format!(
            "Exported the session to {} ({bytes} bytes): open it in a browser",
            output.display()
        ));
        Ok(())
    }

    /// Writes the session's page to `output` (titled with the session's name, else its file's);
    /// returns its size in bytes.
    pub(super) async fn write_session_page(&self, output: &Path) -> Result<u64> {
        let (file, id, name) = self
            .engine
            .with_session(|session| {
                (
                    session.path().map(Path::to_owned),
                    session.id().to_owned(),
                    session.session_name(),
                )
            })
            .await;
        let title = name.unwrap_or_else(|| match file.as_deref().and_then(Path::file_name) {
            Some(file_name) => file_name.to_string_lossy().into_owned(),
            None => id,
        });
        let options = self.page_options(title)?;
        self.engine
            .with_session(|session| {
                write_page(output, |page| {
                    export_page(session, &options, page).map(|_| ())
                })
            })
            .await
    }

    /// The name `/export` gives the page when none is named.
    pub(super) async fn default_page_name(&self) -> String {
        self.engine
            .with_session(|session| default_page_name(session.path(), session.id()))
            .await
    }

    /// The page as `ctxkit export` makes it: the secrets tool output hides redacted, the chat's
    /// transforms and the model's window for the model's view.
    fn page_options(&self, title: String) -> Result<PageOptions> {
        let redactor = Redactor::new(self.agent.workspace().secrets().to_vec(), &[])?;
        let mut options = PageOptions::new(title, redactor);
        options.transform = self.parts.settings.transforms.clone();
        options.context_window = self.model_info().context_window;
        options.free_models = crate::commands::spend::free_models(&self.llm_options.model_costs);
        Ok(options)
    }

    /// `/export copy.jsonl`: the session file's bytes in a new file (never over another).
    fn copy_session_file(&self, file: Option<&Path>, output: &Path) -> Result<()> {
        let Some(file) = file else {
            bail!("the session is in memory (--no-session): it has no file to copy");
        };
        let bytes = copy_to_new_file(file, output)?;
        self.ui.say(&format!(
            "Copied the session file to {} ({bytes} bytes); the chat goes on in {}",
            output.display(),
            file.display()
        ));
        Ok(())
    }
}

/// Copies `file` into `output`, which must not exist, not even as a link that leads nowhere: the
/// new file is created in the same step as the check (`create_new`), so a link planted in its
/// place, or a file that appears meanwhile, is never written through. The copy is readable by
/// the user alone, as the session files are (it was 0644: the whole conversation for every local
/// user to read).
fn copy_to_new_file(file: &Path, output: &Path) -> Result<u64> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut target = match options.open(output) {
        Ok(target) => target,
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            bail!("`{}` exists; name a new file", output.display())
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot create `{}`", output.display()));
        }
    };
    let copied = std::fs::File::open(file)
        .with_context(|| format!("cannot read the session `{}`", file.display()))
        .and_then(|mut source| {
            std::io::copy(&mut source, &mut target)
                .with_context(|| format!("cannot copy the session to `{}`", output.display()))
        });
    if copied.is_err() {
        // The file is the one just created: a part of a copy is no copy.
        let _ = std::fs::remove_file(output);
    }
    copied
}

/// Pi's name for an exported page: `<app>-session-<session file's name>.html`.
fn default_page_name(file: Option<&Path>, id: &str) -> String {
    let stem = file
        .and_then(Path::file_stem)
        .map_or_else(|| id.to_owned(), |stem| stem.to_string_lossy().into_owned());
    format!("ctxkit-session-{stem}.html")
}

/// The path a command names: the first word, or a quoted run (`"my page.html"`); `None` when
/// nothing is named.
fn path_argument(rest: &str) -> Option<PathBuf> {
    let rest = rest.trim_start();
    let mut characters = rest.chars();
    let named = match characters.next()? {
        quote @ ('"' | '\'') => characters.as_str().split(quote).next()?,
        _ => rest.split_whitespace().next()?,
    };
    (!named.is_empty()).then(|| PathBuf::from(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_the_first_word_or_a_quoted_run() {
        assert_eq!(path_argument(""), None);
        assert_eq!(path_argument("  out.html more"), Some("out.html".into()));
        assert_eq!(
            path_argument("\"my page.html\" x"),
            Some("my page.html".into())
        );
        assert_eq!(path_argument("'a b.jsonl"), Some("a b.jsonl".into()));
        assert_eq!(path_argument("\"\""), None);
    }

    #[test]
    fn the_default_name_is_pi_s_with_the_session_file_s_name() {
        assert_eq!(
            default_page_name(Some(Path::new("/s/2026_abc.jsonl")), "id"),
            "ctxkit-session-2026_abc.html"
        );
        assert_eq!(default_page_name(None, "0193"), "ctxkit-session-0193.html");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod copy_tests {
    use super::copy_to_new_file;

    /// A link planted where the copy goes, even one that leads nowhere yet, is not written through.
    #[test]
    fn a_copy_never_goes_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, "{\"type\":\"session\"}\n").unwrap();
        let aimed = dir.path().join("victim");
        let planted = dir.path().join("copy.jsonl");
        std::os::unix::fs::symlink(&aimed, &planted).unwrap();
        let error = copy_to_new_file(&session, &planted)
            .unwrap_err()
            .to_string();
        assert!(error.contains("exists; name a new file"), "{error}");
        assert!(!aimed.exists());
        let fresh = dir.path().join("fresh.jsonl");
        assert_eq!(copy_to_new_file(&session, &fresh).unwrap(), 19);
        assert_eq!(
            std::fs::read(&fresh).unwrap(),
            std::fs::read(&session).unwrap()
        );
        // The conversation, for the user alone, as the session file is.
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&fresh).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }
}
