//! Recording packages in settings: entries are matched by identity (local
//! paths resolved against the settings file's scope base on one side and cwd on the other); the
//! edit itself (a locked read-modify-write of the file) is `ctxkit-settings`'s.

use super::{PackageManager, source_scope};
use crate::error::PackageError;
use crate::source::PackageSource;
use ctxkit_settings::SettingsScope;
use ctxkit_settings::relative_path;

impl PackageManager {
    /// The identity of user-typed input (local paths against cwd).
    pub(crate) fn input_identity(&self, source: &str) -> String {
        PackageSource::classify(source).identity(&self.environment.cwd, &self.environment.home)
    }

    /// The identity of a settings entry of `scope` (local paths against the scope base).
    pub(crate) fn entry_identity(&self, source: &str, scope: SettingsScope) -> String {
        PackageSource::classify(source).identity(
            &self.scope_base(source_scope(scope)),
            &self.environment.home,
        )
    }

    /// What is stored for `source`: npm and git verbatim, local paths relative to the scope base
    /// (`.` when equal), whatever form was typed.
    fn normalized_for_settings(&self, source: &str, scope: SettingsScope) -> String {
        match PackageSource::classify(source) {
            PackageSource::Local { path } => {
                let absolute = self.resolve_typed_path(&path);
                let base = self.scope_base(source_scope(scope));
                relative_path(&base, &absolute)
                    .to_string_lossy()
                    .into_owned()
            }
            PackageSource::Npm(_) | PackageSource::Git(_) => source.to_owned(),
        }
    }

    /// Records `source` in the scope's `packages`: an entry with the same identity takes it as
    /// its source (another version or ref of the package, as Pi 1.6), else it is appended.
    /// Returns `false`, writing nothing, when that entry's source is `source` already.
    pub fn add_source_to_settings(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        PackageSource::parse(source)?;
        let identity = self.input_identity(source);
        let stored = self.normalized_for_settings(source, scope);
        Ok(ctxkit_settings::add_package_source(
            &self.environment,
            scope,
            &stored,
            |text| self.entry_identity(text, scope) == identity,
        )?)
    }

    /// Deletes every entry of the scope's `packages` with the identity of `source` or spelled as
    /// `source` is; returns whether one was deleted.
    pub fn remove_source_from_settings(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        let identity = self.input_identity(source);
        Ok(ctxkit_settings::remove_package_sources(
            &self.environment,
            scope,
            |text| text.trim() == source.trim() || self.entry_identity(text, scope) == identity,
        )?)
    }

    /// Deletes every entry of the scope's `packages` spelled as `source` is; returns whether one
    /// was deleted.
    pub(crate) fn remove_entry_spelled(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        Ok(ctxkit_settings::remove_package_sources(
            &self.environment,
            scope,
            |text| text.trim() == source.trim(),
        )?)
    }
}
