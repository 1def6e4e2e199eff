//! Recording packages in settings: entries are matched by identity (local
//! paths resolved against the settings file's scope base on one side and cwd on the other), and
//! every edit is a locked read-modify-write of the file so concurrent edits survive.

use std::path::PathBuf;

use serde_json::Value;

use super::{PackageManager, source_scope};
use crate::error::PackageError;
use crate::source::PackageSource;
use ctxkit_settings::relative_path;
use ctxkit_settings::store;
use ctxkit_settings::{SettingsError, SettingsScope};

/// The source string of a `packages` entry (string or `{source, …}` object).
pub(crate) fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(text) => Some(text),
        Value::Object(object) => object.get("source").and_then(Value::as_str),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => None,
    }
}

impl PackageManager {
    fn settings_path(&self, scope: SettingsScope) -> PathBuf {
        match scope {
            SettingsScope::Global => self.environment.global_settings_path(),
            SettingsScope::Project => self.environment.project_settings_path(),
        }
    }

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

    /// Appends `source` to the scope's `packages` unless an entry with the same identity is
    /// there (then nothing is written and `false` returned, even if the version differs).
    pub fn add_source_to_settings(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        PackageSource::parse(source)?;
        let identity = self.input_identity(source);
        let stored = self.normalized_for_settings(source, scope);
        let path = self.settings_path(scope);
        let mut not_an_array = false;
        let changed = store::update_if_changed(&path, |document| {
            let packages = document
                .entry("packages")
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(items) = packages else {
                not_an_array = true;
                return false;
            };
            let exists = items.iter().any(|item| {
                entry_source(item).is_some_and(|text| self.entry_identity(text, scope) == identity)
            });
            if exists {
                return false;
            }
            items.push(Value::from(stored.as_str()));
            true
        })?;
        if not_an_array {
            return Err(PackageError::Settings(SettingsError::InvalidValue {
                path,
                key: "packages".to_owned(),
                expected: "an array of package sources".to_owned(),
                found: "another JSON type".to_owned(),
            }));
        }
        Ok(changed)
    }

    /// Deletes every entry of the scope's `packages` with the identity of `source`; returns
    /// whether one was deleted.
    pub fn remove_source_from_settings(
        &self,
        source: &str,
        scope: SettingsScope,
    ) -> Result<bool, PackageError> {
        let identity = self.input_identity(source);
        let path = self.settings_path(scope);
        let changed = store::update_if_changed(&path, |document| {
            let Some(Value::Array(items)) = document.get_mut("packages") else {
                return false;
            };
            let before = items.len();
            items.retain(|item| {
                entry_source(item).is_none_or(|text| self.entry_identity(text, scope) != identity)
            });
            items.len() != before
        })?;
        Ok(changed)
    }
}
