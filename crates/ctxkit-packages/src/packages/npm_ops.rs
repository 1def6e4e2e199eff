//! npm operations: install, uninstall, batched `@latest` updates and the latest-version
//! query, each one `npm` (or `npmCommand`) process.

use std::time::Duration;

use super::PackageManager;
use super::locations::ensure_npm_project;
use crate::error::PackageError;
use crate::resolve::SourceScope;
use crate::source::NpmSource;

/// Time limit of network checks (`npm view`, `git ls-remote`).
pub(crate) const NETWORK_TIMEOUT: Duration = Duration::from_secs(10);

impl PackageManager {
    /// `npm install <spec> --prefix <root>` into the scope's private npm project (created first;
    /// for the user scope `<ctxkit home>/npm`, as Pi 1.6).
    /// npm exiting 0 is not enough: the package's folder must be there afterwards.
    pub(crate) fn install_npm(
        &self,
        npm: &NpmSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        self.install_npm_specs(&[npm.spec.as_str()], scope)?;
        self.check_npm_installed(npm, scope)
    }

    /// After an install npm said succeeded: [`PackageError::NothingInstalled`] when the package's
    /// folder is not there (a wrapper `npmCommand` that did nothing, a registry answering with
    /// nothing).
    pub(crate) fn check_npm_installed(
        &self,
        npm: &NpmSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let path = self.managed_npm_install_path(npm, scope);
        if path.exists() {
            Ok(())
        } else {
            Err(PackageError::NothingInstalled {
                source_text: format!("npm:{}", npm.spec),
                path,
            })
        }
    }

    /// One npm install of several specs into `scope`.
    pub(crate) fn install_npm_specs(
        &self,
        specs: &[&str],
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let root = self.npm_install_root(scope);
        let folders = self.folders();
        ensure_npm_project(&folders, &root)?;
        for spec in specs {
            folders.check_npm_root(&root, spec)?;
        }
        self.check_project_npm_root(&root, scope)?;
        let root_text = super::path_text(&root)?;
        let mut args = vec!["install"];
        args.extend_from_slice(specs);
        args.extend(["--prefix", root_text]);
        self.runner.run(&self.npm_command_line(&args)?)?;
        Ok(())
    }

    /// `npm uninstall <name> --prefix <root>` (skipped when the root does not exist), or
    /// `npm uninstall -g <name>` for a user package found only where the old layout installed it:
    /// removing it is how a user of that layout gets rid of it.
    pub(crate) fn uninstall_npm(
        &self,
        npm: &NpmSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        if self.legacy_npm_install_path(npm, scope).is_some() {
            self.runner
                .run(&self.npm_command_line(&["uninstall", "-g", &npm.name])?)?;
            return Ok(());
        }
        let root = self.npm_install_root(scope);
        if !root.exists() {
            return Ok(());
        }
        if self.check_project_npm_root(&root, scope).is_err() {
            // npm is not run there: the package's own folder is removed, and the project's
            // `package.json` left as it is (QA 2026-12-07: `npm uninstall` installed what a
            // cloned project's `.ctxkit/npm/package.json` named and ran its `postinstall`).
            let path = self.managed_npm_install_path(npm, scope);
            return self.folders().remove_dir_all(&path);
        }
        self.folders().check_npm_root(&root, &npm.name)?;
        let root_text = super::path_text(&root)?;
        self.runner.run(&self.npm_command_line(&[
            "uninstall",
            &npm.name,
            "--prefix",
            root_text,
        ])?)?;
        Ok(())
    }

    /// Refuses to run npm in the project's npm folder (`root`) of an untrusted project unless it
    /// holds nothing npm would act on ([`ctxkit_settings::npm_folder_is_fresh`]): a cloned
    /// repository can commit a `package.json`, a lock file or a `node_modules` there naming
    /// dependencies (and install scripts of its own) that `npm install` or `npm uninstall` would
    /// install and run. Such a folder is a resource that waits for trust
    /// (`ctxkit_settings::protected_resources`); the user's folder and a trusted project's are
    /// not checked.
    fn check_project_npm_root(
        &self,
        root: &std::path::Path,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        if scope != SourceScope::Project
            || self.project_trusted
            || ctxkit_settings::npm_folder_is_fresh(root)
        {
            return Ok(());
        }
        Err(PackageError::UntrustedNpmRoot {
            root: root.to_owned(),
        })
    }

    /// `npm view <query> version --json` (10 s limit), run in cwd: the version it prints, or the
    /// newest within `range` of the versions it lists (a range matching several).
    pub(crate) fn newest_npm_version(
        &self,
        query: &str,
        range: Option<&nodejs_semver::Range>,
    ) -> Result<String, PackageError> {
        let command = self
            .npm_command_line(&["view", query, "version", "--json"])?
            .in_dir(&self.environment.cwd)
            .with_timeout(NETWORK_TIMEOUT);
        let output = self.runner.run(&command)?;
        let raw = output.stdout.trim();
        let unexpected = || PackageError::UnexpectedOutput {
            command: command.display(),
            output: raw.to_owned(),
        };
        // One version, or (for a range matching several) a list, of which the newest the
        // range takes.
        match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(serde_json::Value::String(version)) => Ok(version),
            Ok(serde_json::Value::Array(versions)) => versions
                .iter()
                .filter_map(serde_json::Value::as_str)
                .filter_map(|text| Some((crate::source::npm_version(text)?, text)))
                .filter(|(version, _)| range.is_none_or(|range| version.satisfies(range)))
                .max_by(|(left, _), (right, _)| left.cmp(right))
                .map(|(_, text)| text.to_owned())
                .ok_or_else(unexpected),
            Ok(_) | Err(_) => Err(unexpected()),
        }
    }

    /// The dependency install run in a git checkout with a `package.json`:
    /// `npm install --omit=dev`, or plain `install` through a configured `npmCommand`.
    pub(crate) fn install_git_dependencies(
        &self,
        checkout: &std::path::Path,
    ) -> Result<(), PackageError> {
        if !checkout.join("package.json").exists() {
            return Ok(());
        }
        let args: &[&str] = if self.npm_command.is_some() {
            &["install"]
        } else {
            &["install", "--omit=dev"]
        };
        self.runner
            .run(&self.npm_command_line(args)?.in_dir(checkout))?;
        Ok(())
    }
}
