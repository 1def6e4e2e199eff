//! Updating and listing configured packages: selection by identity with a
//! "did you mean" suggestion, the npm version check and batched `@latest` installs, git updates,
//! the listing used by `ctxkit list`, and the available-updates check.

use std::path::PathBuf;

use super::{PackageManager, ProgressAction, source_scope};
use crate::error::PackageError;
use crate::resolve::SourceScope;
use crate::source::{GitSource, NpmSource, PackageSource};
use ctxkit_settings::SettingsManager;
use ctxkit_settings::SettingsScope;

/// How an update ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// Offline mode: nothing was checked or run.
    SkippedOffline,
    /// The selected packages were checked.
    Checked {
        /// Sources an update ran for (npm behind the registry or not installed; git checkouts
        /// that moved).
        updated: Vec<String>,
        /// Sources left alone: pinned, local, or already current.
        unchanged: Vec<String>,
    },
}

/// One `packages` entry, for listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredPackage {
    /// The source as written in settings.
    pub source: String,
    /// Which settings file lists it.
    pub scope: SettingsScope,
    /// Written in object form (with resource filters).
    pub filtered: bool,
    /// Where it is installed, when it is.
    pub installed_path: Option<PathBuf>,
}

struct Selected {
    source: String,
    scope: SettingsScope,
}

/// A configured entry that looks like what `input` meant.
fn suggestion(input: &str, configured: &[Selected]) -> Option<String> {
    let trimmed = input.trim();
    configured.iter().find_map(|entry| {
        let matches = match PackageSource::classify(&entry.source) {
            PackageSource::Npm(npm) => trimmed == npm.name || trimmed == npm.spec,
            PackageSource::Git(git) => {
                let shorthand = format!("{}/{}", git.host, git.path);
                trimmed == shorthand
                    || git
                        .git_ref
                        .as_ref()
                        .is_some_and(|reference| trimmed == format!("{shorthand}@{reference}"))
            }
            PackageSource::Local { .. } => false,
        };
        matches.then(|| entry.source.clone())
    })
}

impl PackageManager {
    fn configured(&self, settings: &SettingsManager) -> Vec<Selected> {
        let mut out = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            for entry in settings.packages_in(scope) {
                out.push(Selected {
                    source: entry.source().to_owned(),
                    scope,
                });
            }
        }
        out
    }

    /// Updates every configured package, or only those with the identity of
    /// `source` (error `No matching package found …` when none has it). Local packages, and
    /// pinned ones that are installed, are skipped; npm packages are updated when not installed
    /// (a pinned one at its version) or behind the registry, in one install per scope; git
    /// checkouts follow their remote (a missing pinned one is cloned at its ref).
    /// Offline mode returns at once. Every selected package is attempted; the first failure is
    /// returned after the others ran.
    pub fn update(
        &self,
        settings: &SettingsManager,
        source: Option<&str>,
    ) -> Result<UpdateOutcome, PackageError> {
        let configured = self.configured(settings);
        let selected: Vec<&Selected> = match source {
            None => configured.iter().collect(),
            Some(input) => {
                let identity = self.input_identity(input);
                let matching: Vec<&Selected> = configured
                    .iter()
                    .filter(|entry| self.entry_identity(&entry.source, entry.scope) == identity)
                    .collect();
                if matching.is_empty() {
                    if let Some(held) = self.held_project_source(settings, &identity) {
                        return Err(PackageError::UntrustedSource {
                            source_text: held.entry,
                            reason: held.reason,
                        });
                    }
                    return Err(PackageError::NoMatchingPackage {
                        source_text: input.to_owned(),
                        suggestion: suggestion(input, &configured),
                    });
                }
                matching
            }
        };
        if self.environment.is_offline() {
            return Ok(UpdateOutcome::SkippedOffline);
        }
        let mut unchanged = Vec::new();
        let mut npm_updates: Vec<(&Selected, NpmSource)> = Vec::new();
        let mut git_updates: Vec<(&Selected, GitSource)> = Vec::new();
        for entry in selected {
            match PackageSource::parse(&entry.source) {
                Ok(PackageSource::Npm(npm)) if !npm.is_pinned() => {
                    if self.npm_needs_update(&npm, source_scope(entry.scope)) {
                        npm_updates.push((entry, npm));
                    } else {
                        unchanged.push(entry.source.clone());
                    }
                }
                // A missing pinned package is installed at its pin, as Pi 1.6's update does.
                Ok(PackageSource::Npm(npm))
                    if !self
                        .npm_install_path(&npm, source_scope(entry.scope))
                        .exists() =>
                {
                    npm_updates.push((entry, npm));
                }
                // A pinned checkout an interrupted clone left is cloned again too.
                Ok(PackageSource::Git(git))
                    if !git.is_pinned()
                        || !self.git_checkout_complete(&git, source_scope(entry.scope)) =>
                {
                    git_updates.push((entry, git));
                }
                Ok(PackageSource::Npm(_) | PackageSource::Git(_) | PackageSource::Local { .. })
                | Err(_) => unchanged.push(entry.source.clone()),
            }
        }
        let mut updated = Vec::new();
        let mut errors = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            let batch: Vec<&(&Selected, NpmSource)> = npm_updates
                .iter()
                .filter(|(entry, _)| entry.scope == scope)
                .collect();
            if batch.is_empty() {
                continue;
            }
            let label = match batch.as_slice() {
                [(entry, _)] => entry.source.clone(),
                _ => format!("{} npm packages", source_scope(scope).as_str()),
            };
            let specs: Vec<String> = batch
                .iter()
                // A range or a tag is installed as written: npm takes its newest version.
                .map(|(_, npm)| match &npm.version {
                    Some(_) => npm.spec.clone(),
                    None => format!("{}@latest", npm.name),
                })
                .collect();
            let spec_refs: Vec<&str> = specs.iter().map(String::as_str).collect();
            match self.with_progress(ProgressAction::Update, &label, || {
                self.install_npm_specs(&spec_refs, source_scope(scope))?;
                batch
                    .iter()
                    .try_for_each(|(_, npm)| self.check_npm_installed(npm, source_scope(scope)))
            }) {
                Ok(()) => updated.extend(batch.iter().map(|(entry, _)| entry.source.clone())),
                Err(error) => errors.push(error),
            }
        }
        for (entry, git) in git_updates {
            match self.with_progress(ProgressAction::Update, &entry.source, || {
                self.update_git(&git, source_scope(entry.scope))
            }) {
                Ok(true) => updated.push(entry.source.clone()),
                Ok(false) => unchanged.push(entry.source.clone()),
                Err(error) => errors.push(error),
            }
        }
        match errors.into_iter().next() {
            Some(error) => Err(error),
            None => Ok(UpdateOutcome::Checked { updated, unchanged }),
        }
    }

    /// The entry of the project's `packages` with `identity` held back until the project is
    /// trusted.
    fn held_project_source(
        &self,
        settings: &SettingsManager,
        identity: &str,
    ) -> Option<ctxkit_settings::HeldEntry> {
        settings
            .held_project_entries()
            .into_iter()
            .filter(|held| held.key == "packages")
            .find(|held| self.entry_identity(&held.entry, SettingsScope::Project) == identity)
    }

    /// Not installed in ctxkit's own npm folder (or no readable version) → yes, so an install of
    /// the old `-g` layout is installed again there, as Pi 1.6 does; else whether `npm view`
    /// names a newer version (of the entry's range or tag, as Pi 1.6 asks); a failed query → yes.
    fn npm_needs_update(&self, npm: &NpmSource, scope: SourceScope) -> bool {
        let path = self.managed_npm_install_path(npm, scope);
        let Some(installed) = super::locations::installed_npm_version(&path) else {
            return true;
        };
        let query = match &npm.version {
            Some(_) => npm.spec.as_str(),
            None => npm.name.as_str(),
        };
        self.newest_npm_version(query, npm.range().as_ref())
            .map_or(true, |newest| is_newer(&newest, &installed))
    }

    /// Every configured package, global entries first, with its install location.
    pub fn list_configured(&self, settings: &SettingsManager) -> Vec<ConfiguredPackage> {
        let mut out = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            for entry in settings.packages_in(scope) {
                let source = entry.source();
                out.push(ConfiguredPackage {
                    source: source.to_owned(),
                    scope,
                    filtered: entry.is_filtered(),
                    installed_path: self.installed_path(source, source_scope(scope)),
                });
            }
        }
        out
    }
}

/// Whether the version `newest` is newer than `installed` (when either is no version, whether
/// they differ).
fn is_newer(newest: &str, installed: &str) -> bool {
    use crate::source::npm_version;
    match (npm_version(newest), npm_version(installed)) {
        (Some(newest), Some(installed)) => newest > installed,
        (Some(_) | None, Some(_) | None) => newest.trim() != installed.trim(),
    }
}
