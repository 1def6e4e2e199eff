//! Where packages live: npm install roots and package directories, git checkouts,
//! the hashed temporary locations, the cached global npm root, and the files created in
//! private install roots.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::runner::CommandLine;
use super::{PackageManager, TEMPORARY_INSTALL_DIR_NAME};
use crate::error::PackageError;
use crate::folders::{PackageFolders, read_package_file};
use crate::resolve::SourceScope;
use crate::source::{GitSource, NpmSource};

/// `.gitignore` written into private install roots: ignore everything but itself.
const IGNORE_EVERYTHING: &str = "*\n!.gitignore\n";

/// First 8 hex digits of the SHA-256 of `text`.
fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest
        .iter()
        .take(4)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The `version` of `<package dir>/package.json`, if readable.
pub(crate) fn installed_npm_version(package_dir: &Path) -> Option<String> {
    let text = read_package_file(&package_dir.join("package.json"))?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

/// Creates `directory` and, if absent, its ignore-everything `.gitignore` (through `folders`).
pub(crate) fn ensure_gitignore(
    folders: &PackageFolders,
    directory: &Path,
) -> Result<(), PackageError> {
    folders.create_dir_all(directory)?;
    folders.write_if_absent(&directory.join(".gitignore"), IGNORE_EVERYTHING)
}

/// Creates a private npm project in `root`: directory, `.gitignore`, and a
/// `package.json` naming a private package (2-space JSON, no trailing newline).
pub(crate) fn ensure_npm_project(
    folders: &PackageFolders,
    root: &Path,
) -> Result<(), PackageError> {
    ensure_gitignore(folders, root)?;
    folders.write_if_absent(
        &root.join("package.json"),
        ctxkit_settings::NPM_FOLDER_MANIFEST,
    )
}

impl PackageManager {
    /// The folders packages are installed in, each touched only through a jail on it: the
    /// project (its `.ctxkit/`), ctxkit's git checkouts, the temporary install folder.
    pub(crate) fn folders(&self) -> PackageFolders {
        PackageFolders::new([
            self.environment.cwd.clone(),
            self.environment.agent_dir().join("git"),
            self.environment.agent_dir().join("npm"),
            self.environment.temp_dir.join(TEMPORARY_INSTALL_DIR_NAME),
        ])
    }

    /// `<tmp>/ctxkit-extensions/<prefix>/<hash of "prefix-suffix">/<suffix>`.
    fn temporary_dir(&self, prefix: &str, suffix: &str) -> PathBuf {
        let hash = short_hash(&format!("{prefix}-{suffix}"));
        let directory = self
            .environment
            .temp_dir
            .join(TEMPORARY_INSTALL_DIR_NAME)
            .join(prefix)
            .join(hash);
        if suffix.is_empty() {
            directory
        } else {
            directory.join(suffix)
        }
    }

    /// The npm program and the arguments prepended to every npm call.
    pub(crate) fn npm_argv(&self) -> Result<(String, Vec<String>), PackageError> {
        match self.npm_command.as_deref() {
            None | Some([]) => Ok(("npm".to_owned(), Vec::new())),
            Some([program, rest @ ..]) => {
                if program.is_empty() {
                    Err(PackageError::InvalidNpmCommand)
                } else {
                    Ok((program.clone(), rest.to_vec()))
                }
            }
        }
    }

    /// An npm command line with `args` after the configured prefix arguments.
    pub(crate) fn npm_command_line(&self, args: &[&str]) -> Result<CommandLine, PackageError> {
        let (program, mut all) = self.npm_argv()?;
        all.extend(args.iter().map(|arg| (*arg).to_owned()));
        Ok(CommandLine::new(program, all))
    }

    /// The global `node_modules` directory (`npm root -g`, or for bun
    /// `dirname(bun pm bin -g)/install/global/node_modules`), cached per npm argv.
    pub(crate) fn global_npm_root(&self) -> Result<PathBuf, PackageError> {
        let (program, prefix) = self.npm_argv()?;
        let key: Vec<String> = std::iter::once(program.clone())
            .chain(prefix.iter().cloned())
            .collect();
        let mut cache = match self.global_npm_root.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((cached_key, root)) = cache.as_ref()
            && *cached_key == key
        {
            return Ok(root.clone());
        }
        let root = if program == "bun" {
            let output = self
                .runner
                .run(&self.npm_command_line(&["pm", "bin", "-g"])?)?;
            let bin = PathBuf::from(output.stdout.trim());
            bin.parent()
                .unwrap_or(&bin)
                .join("install/global/node_modules")
        } else {
            let output = self.runner.run(&self.npm_command_line(&["root", "-g"])?)?;
            PathBuf::from(output.stdout.trim())
        };
        *cache = Some((key, root.clone()));
        Ok(root)
    }

    /// The npm install root, a private npm project: `<ctxkit home>/npm` (user, as Pi 1.6's
    /// `<agent dir>/npm`: npm's global prefix is often not the user's to write),
    /// `<cwd>/.ctxkit/npm` (project), or the hashed temporary directory.
    pub(crate) fn npm_install_root(&self, scope: SourceScope) -> PathBuf {
        match scope {
            SourceScope::User => self.environment.agent_dir().join("npm"),
            SourceScope::Project => self.environment.project_dir().join("npm"),
            SourceScope::Temporary => self.temporary_dir("npm", ""),
        }
    }

    /// Where ctxkit installs an npm package in `scope`: `<install root>/node_modules/<name>`.
    pub(crate) fn managed_npm_install_path(&self, npm: &NpmSource, scope: SourceScope) -> PathBuf {
        self.npm_install_root(scope)
            .join("node_modules")
            .join(&npm.name)
    }

    /// Where an npm package of the user scope was installed by the old layout (`npm install
    /// -g`), when it is there and not in ctxkit's own npm folder.
    pub(crate) fn legacy_npm_install_path(
        &self,
        npm: &NpmSource,
        scope: SourceScope,
    ) -> Option<PathBuf> {
        if scope != SourceScope::User || self.managed_npm_install_path(npm, scope).exists() {
            return None;
        }
        // No npm to ask means no old install to find.
        let legacy = self.global_npm_root().ok()?.join(&npm.name);
        legacy.exists().then_some(legacy)
    }

    /// Where an npm package is (or would be) installed in `scope`: ctxkit's own folder, or for
    /// the user scope npm's global folder when an old install is there only (as Pi 1.6 keeps
    /// loading its own `-g` installs).
    pub(crate) fn npm_install_path(&self, npm: &NpmSource, scope: SourceScope) -> PathBuf {
        self.legacy_npm_install_path(npm, scope)
            .unwrap_or_else(|| self.managed_npm_install_path(npm, scope))
    }

    /// Where a git package is (or would be) checked out in `scope`.
    pub(crate) fn git_install_path(&self, git: &GitSource, scope: SourceScope) -> PathBuf {
        match scope {
            SourceScope::User | SourceScope::Project => self
                .git_install_root(scope)
                .unwrap_or_default()
                .join(&git.host)
                .join(&git.path),
            SourceScope::Temporary => self.temporary_dir(&format!("git-{}", git.host), &git.path),
        }
    }

    /// `<agent dir>/git` or `<cwd>/.ctxkit/git`; temporary checkouts have no shared root.
    pub(crate) fn git_install_root(&self, scope: SourceScope) -> Option<PathBuf> {
        match scope {
            SourceScope::User => Some(self.environment.agent_dir().join("git")),
            SourceScope::Project => Some(self.environment.project_dir().join("git")),
            SourceScope::Temporary => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_reference_layout() {
        // sha256("npm-") starts with these digits.
        assert_eq!(short_hash("npm-").len(), 8);
        assert_eq!(short_hash("abc"), "ba7816bf");
    }

    #[test]
    fn npm_project_files() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("npm");
        ensure_npm_project(&PackageFolders::new([root.clone()]), &root).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join(".gitignore")).unwrap(),
            "*\n!.gitignore\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("package.json")).unwrap(),
            "{\n  \"name\": \"ctxkit-extensions\",\n  \"private\": true\n}"
        );
    }
}
