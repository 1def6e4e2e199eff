//! The package manager: installs, removes, updates and lists npm, git and
//! local packages in the user, project and temporary scopes, records them in settings, and
//! finds installed packages for the resolver through [`PackageProvider`].

mod git_ops;
mod incomplete;
mod locations;
mod npm_ops;
mod progress;
mod runner;
mod settings_edit;
mod update;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use progress::{NoProgress, ProgressAction, ProgressEvent, ProgressReporter, ProgressStage};
pub use runner::{CommandLine, CommandOutput, CommandRunner, ProcessRunner};
pub use update::{ConfiguredPackage, UpdateOutcome};

use crate::error::PackageError;
use crate::resolve::walk::{EntryType, entry_type};
use crate::resolve::{PackageProvider, SourceScope};
use crate::source::PackageSource;
use ctxkit_settings::SettingsManager;
use ctxkit_settings::SettingsScope;
use ctxkit_settings::{Environment, expand_tilde_loose, resolve_against};

/// Name of the directory under the OS temp dir holding temporary (`-e`) installs, and of the
/// private npm project created for project and temporary npm installs.
pub const TEMPORARY_INSTALL_DIR_NAME: &str = "ctxkit-extensions";

/// The scope a settings document stands for.
pub(crate) fn source_scope(scope: SettingsScope) -> SourceScope {
    match scope {
        SettingsScope::Global => SourceScope::User,
        SettingsScope::Project => SourceScope::Project,
    }
}

/// What resolving does about npm and git packages that are not installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingPackages {
    /// Install them (the reference's startup behaviour); cached temporary git checkouts are
    /// refreshed and mismatching pinned npm versions reinstalled.
    #[default]
    Install,
    /// Run nothing: a missing package becomes [`PackageError::NotInstalled`] (a diagnostic in
    /// the resolved set), installed ones are used as they are. For listing commands.
    Report,
}

/// Installs, removes, updates and lists packages; also the [`PackageProvider`] that makes the
/// resolver install missing npm and git packages (unless offline) and find installed ones.
///
/// Every external tool runs through the [`CommandRunner`] (real processes by default); progress
/// goes to the [`ProgressReporter`] (nothing by default). Settings edits are locked
/// read-modify-writes of the settings file, so concurrent edits by other processes survive.
pub struct PackageManager {
    environment: Environment,
    npm_command: Option<Vec<String>>,
    runner: Box<dyn CommandRunner>,
    reporter: Box<dyn ProgressReporter>,
    missing: MissingPackages,
    /// Whether the project's settings are trusted: npm runs in the project's npm folder as it
    /// is only then (`npm_ops::check_project_npm_root`).
    project_trusted: bool,
    /// `npm root -g` (where the old layout installed user packages), cached together with the
    /// npm argv that produced it.
    global_npm_root: Mutex<Option<(Vec<String>, PathBuf)>>,
}

impl std::fmt::Debug for PackageManager {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PackageManager")
            .field("environment", &self.environment)
            .field("npm_command", &self.npm_command)
            .finish_non_exhaustive()
    }
}

impl PackageManager {
    /// A manager running real `npm`/`git` processes, reporting no progress, with `npmCommand`
    /// taken from `settings`.
    pub fn new(environment: Environment, settings: &SettingsManager) -> Self {
        Self {
            environment,
            npm_command: settings
                .settings()
                .npm_command
                .clone()
                .filter(|argv| !argv.is_empty()),
            runner: Box::new(ProcessRunner::new()),
            reporter: Box::new(NoProgress),
            missing: MissingPackages::Install,
            project_trusted: settings.project_trusted(),
            global_npm_root: Mutex::new(None),
        }
    }

    /// Replaces the command runner.
    #[must_use]
    pub fn with_runner(mut self, runner: impl CommandRunner + 'static) -> Self {
        self.runner = Box::new(runner);
        self
    }

    /// Replaces the progress reporter.
    #[must_use]
    pub fn with_reporter(mut self, reporter: impl ProgressReporter + 'static) -> Self {
        self.reporter = Box::new(reporter);
        self
    }

    /// Sets what resolving does about packages that are not installed.
    #[must_use]
    pub fn with_missing_packages(mut self, missing: MissingPackages) -> Self {
        self.missing = missing;
        self
    }

    /// Changes the npm argv (`npmCommand`); the cached global root is looked up again.
    pub fn set_npm_command(&mut self, npm_command: Option<Vec<String>>) {
        self.npm_command = npm_command.filter(|argv| !argv.is_empty());
    }

    /// The environment the manager works in.
    pub fn environment(&self) -> &Environment {
        &self.environment
    }

    /// Runs `operation` between `start` and `complete`/`error` progress events.
    fn with_progress<T>(
        &self,
        action: ProgressAction,
        source: &str,
        operation: impl FnOnce() -> Result<T, PackageError>,
    ) -> Result<T, PackageError> {
        self.reporter.report(&ProgressEvent {
            action,
            source: source.to_owned(),
            stage: ProgressStage::Start {
                message: action.start_message(source),
            },
        });
        let result = operation();
        let stage = match &result {
            Ok(_) => ProgressStage::Complete,
            Err(error) => ProgressStage::Error {
                message: error.to_string(),
            },
        };
        self.reporter.report(&ProgressEvent {
            action,
            source: source.to_owned(),
            stage,
        });
        result
    }

    /// Installs `source` in `scope` (npm install, git clone, or checks a local path
    /// exists, resolved against cwd). An existing git checkout is moved to the source's ref, or
    /// to its remote branch when it has none (as Pi 1.6). In offline mode
    /// an npm or git source is refused ([`PackageError::Offline`]): installing it needs the
    /// network.
    pub fn install(&self, source: &str, scope: SourceScope) -> Result<(), PackageError> {
        let parsed = PackageSource::parse(source)?;
        match &parsed {
            PackageSource::Npm(_) | PackageSource::Git(_) if self.environment.is_offline() => {
                return Err(PackageError::Offline {
                    source_text: source.to_owned(),
                });
            }
            PackageSource::Npm(_) | PackageSource::Git(_) | PackageSource::Local { .. } => {}
        }
        self.with_progress(ProgressAction::Install, source, || {
            self.install_parsed(&parsed, scope)
        })
    }

    fn install_parsed(
        &self,
        parsed: &PackageSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        match parsed {
            PackageSource::Npm(npm) => self.install_npm(npm, scope),
            PackageSource::Git(git) => self.install_git(git, scope),
            // Refused before the settings are written, as the loader would refuse it after (QA
            // 2026-12-07: `install /dev/zero` and a FIFO were written to the settings).
            PackageSource::Local { path } => {
                let resolved = self.resolve_typed_path(path);
                match entry_type(&resolved) {
                    Some(EntryType::File | EntryType::Directory) => Ok(()),
                    Some(EntryType::Other) => {
                        Err(PackageError::NotAFileOrFolder { path: resolved })
                    }
                    None => Err(PackageError::PathDoesNotExist { path: resolved }),
                }
            }
        }
    }

    /// Installs, then records the source in the scope's settings (replacing the entry of the same
    /// package when its version or ref differs). Returns whether the settings changed.
    pub fn install_and_persist(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        self.install(source, source_scope(scope))?;
        self.add_source_to_settings(source, scope)
    }

    /// Uninstalls `source` from `scope` (npm uninstall, or deletes the git checkout and
    /// its now-empty parents below the git root); local sources are left on disk.
    pub fn remove(&self, source: &str, scope: SourceScope) -> Result<(), PackageError> {
        let parsed = PackageSource::parse(source)?;
        self.with_progress(ProgressAction::Remove, source, || match &parsed {
            PackageSource::Npm(npm) => self.uninstall_npm(npm, scope),
            PackageSource::Git(git) => self.remove_git(git, scope),
            PackageSource::Local { .. } => Ok(()),
        })
    }

    /// Removes, then deletes every entry of the scope's `packages` with the same identity, or
    /// spelled as `source` is (the form `ctxkit list` shows: a path relative to the settings
    /// file's folder). A source ctxkit refuses (`npm:../../v`) that an entry spells so is only
    /// taken out of the file: nothing was installed for it. Returns whether an entry was removed
    /// (the CLI reports "No matching package" otherwise).
    pub fn remove_and_persist(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        if let Err(error) = PackageSource::parse(source) {
            return match self.remove_entry_spelled(source, scope)? {
                true => Ok(true),
                false => Err(error.into()),
            };
        }
        self.remove(source, source_scope(scope))?;
        self.remove_source_from_settings(source, scope)
    }

    /// Where `source` is installed in `scope`, if it is.
    pub fn installed_path(&self, source: &str, scope: SourceScope) -> Option<PathBuf> {
        let parsed = PackageSource::parse(source).ok()?;
        let path = match &parsed {
            PackageSource::Npm(npm) => self.npm_install_path(npm, scope),
            PackageSource::Git(git) => self.git_install_path(git, scope),
            PackageSource::Local { .. } => {
                parsed.local_path(&self.scope_base(scope), &self.environment.home)?
            }
        };
        path.exists().then_some(path)
    }

    /// A user-typed local path: tilde-expanded and resolved against cwd.
    fn resolve_typed_path(&self, path: &str) -> PathBuf {
        resolve_against(
            &self.environment.cwd,
            &expand_tilde_loose(path.trim(), &self.environment.home),
        )
    }

    /// The directory relative local paths of a scope resolve against.
    fn scope_base(&self, scope: SourceScope) -> PathBuf {
        match scope {
            SourceScope::User => self.environment.agent_dir(),
            SourceScope::Project => self.environment.project_dir(),
            SourceScope::Temporary => self.environment.cwd.clone(),
        }
    }
}

impl PackageProvider for PackageManager {
    /// The package root, installing a missing package (or a pinned npm package whose
    /// installed version differs) unless offline, and refreshing an unpinned temporary git
    /// checkout (failures there keep the cached checkout).
    fn package_root(
        &self,
        source: &PackageSource,
        source_text: &str,
        scope: SourceScope,
    ) -> Result<Option<PathBuf>, PackageError> {
        let offline = self.environment.is_offline();
        let not_installed = |path: &std::path::Path| PackageError::NotInstalled {
            source_text: source_text.to_owned(),
            path: path.to_path_buf(),
        };
        match source {
            PackageSource::Npm(npm) => {
                let path = self.npm_install_path(npm, scope);
                let exists = path.exists();
                let needs_install = !exists
                    || !npm.accepts_installed(locations::installed_npm_version(&path).as_deref());
                if needs_install {
                    if offline {
                        return Ok(None);
                    }
                    match self.missing {
                        MissingPackages::Install => {
                            self.with_progress(ProgressAction::Install, source_text, || {
                                self.install_npm(npm, scope)
                            })?;
                        }
                        // A pinned version mismatch is used as installed.
                        MissingPackages::Report if !exists => return Err(not_installed(&path)),
                        MissingPackages::Report => {}
                    }
                }
                Ok(Some(path))
            }
            PackageSource::Git(git) => {
                let path = self.git_install_path(git, scope);
                let refresh = scope == SourceScope::Temporary && !git.is_pinned() && !offline;
                let exists = path.exists();
                if exists && incomplete::checkout_is_incomplete(&path) {
                    // Cloned again (and swapped in) when installing; else said, never loaded empty.
                    if offline || self.missing == MissingPackages::Report {
                        return Err(PackageError::IncompleteCheckout {
                            source_text: source_text.to_owned(),
                            path,
                        });
                    }
                    self.with_progress(ProgressAction::Install, source_text, || {
                        self.install_git(git, scope)
                    })?;
                    return Ok(Some(path));
                }
                match (exists, self.missing) {
                    (false, MissingPackages::Install | MissingPackages::Report) if offline => {
                        return Ok(None);
                    }
                    (false, MissingPackages::Report) => return Err(not_installed(&path)),
                    (false, MissingPackages::Install) => {
                        self.with_progress(ProgressAction::Install, source_text, || {
                            self.install_git(git, scope)
                        })?;
                    }
                    (true, MissingPackages::Install) if refresh => {
                        // A failed refresh keeps the cached checkout.
                        let _ = self.with_progress(ProgressAction::Pull, source_text, || {
                            self.update_git(git, scope)
                        });
                    }
                    (true, MissingPackages::Install | MissingPackages::Report) => {}
                }
                Ok(Some(path))
            }
            PackageSource::Local { .. } => {
                Ok(source.local_path(&self.scope_base(scope), &self.environment.home))
            }
        }
    }
}

/// `path` as the text a command is given; [`PackageError::PathNotText`] when it is not UTF-8.
pub(crate) fn path_text(path: &Path) -> Result<&str, PackageError> {
    path.to_str().ok_or_else(|| PackageError::PathNotText {
        path: path.to_owned(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::ffi::OsStrExt;

    use super::*;

    /// QA (2026-12-07): a project path that is not UTF-8 went to npm lossily (`o\xff` as `o�`),
    /// and npm installed into a sibling folder outside the project.
    #[test]
    fn a_path_that_is_not_text_is_refused_not_read_lossily() {
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/o\xff/.ctxkit/npm"));
        assert!(matches!(
            path_text(path),
            Err(PackageError::PathNotText { path: refused }) if refused == path
        ));
        assert_eq!(
            path_text(Path::new("/tmp/o/.ctxkit/npm")).unwrap(),
            "/tmp/o/.ctxkit/npm"
        );
    }
}
