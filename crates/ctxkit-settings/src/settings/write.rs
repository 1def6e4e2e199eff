//! Edits of the settings: a key set or removed in one scope's document in memory, then written
//! back (`flush`) under the file's lock, merged into what the file holds by then so keys other
//! processes wrote meanwhile are kept.

use serde_json::Value;

use super::{
    KeyPath, ScopeState, SettingsDiagnostic, SettingsManager, document, key_path, schema, store,
    validate,
};
use crate::error::{SettingsError, SettingsScope};

impl SettingsManager {
    /// Sets a dotted key in one scope (in memory; call [`SettingsManager::flush`] to write).
    /// Known keys are validated (error names the file and key, nothing changes); an unknown key
    /// is stored and reported back as a warning.
    pub(crate) fn set(
        &mut self,
        scope: SettingsScope,
        key: &str,
        value: Value,
    ) -> Result<Vec<SettingsDiagnostic>, SettingsError> {
        let path = KeyPath::parse(key)?;
        let state = self.state(scope);
        let mut warnings = Vec::new();
        match key_path::kind_at(path.segments()) {
            Some(kind) => {
                let mut report = validate::CheckReport::default();
                validate::check_value(&path.dotted(), &kind, &value, &mut report);
                if let Some(violation) = report.violations.into_iter().next() {
                    return Err(SettingsError::RefusedValue {
                        path: state.display_path(),
                        key: violation.key,
                        expected: violation.expected,
                        found: violation.found,
                    });
                }
                for unknown in report.unknown_keys {
                    warnings.push(SettingsDiagnostic::UnknownKey {
                        scope,
                        path: state.display_path(),
                        line: None,
                        key: unknown,
                    });
                }
            }
            None => {
                self.check_parent_is_open(&path)?;
                warnings.push(SettingsDiagnostic::UnknownKey {
                    scope,
                    path: state.display_path(),
                    line: None,
                    key: path.dotted(),
                });
            }
        }
        let state = self.state_mut(scope);
        document::set_path(&mut state.document, &path, value);
        Self::mark(state, path);
        self.recompute();
        Ok(warnings)
    }

    /// Sets a dotted key in one scope from the text the user typed (in memory; call
    /// [`SettingsManager::flush`] to write): strings and enums verbatim, other known types (and
    /// unknown keys, when the text is valid JSON) parsed as JSON. A known key's value is validated
    /// against its type in the tree (the error names the file and key, nothing changes); an
    /// unknown key is stored and reported back as a warning.
    pub fn set_from_text(
        &mut self,
        scope: SettingsScope,
        key: &str,
        text: &str,
    ) -> Result<Vec<SettingsDiagnostic>, SettingsError> {
        let path = KeyPath::parse(key)?;
        let kind = key_path::kind_at(path.segments());
        let value = validate::parse_raw_value(kind.as_ref(), text);
        self.set(scope, key, value)
    }

    /// Removes a dotted key from one scope; returns whether it was present. A key that was not
    /// set leaves the file as it is: nothing to write (as Pi writes only on a change). A scope
    /// whose file failed to load is refused ([`SettingsError::ScopeNotWritable`]), as a save is:
    /// read as empty, it would say a key the file holds "was not set".
    pub fn unset(&mut self, scope: SettingsScope, key: &str) -> Result<bool, SettingsError> {
        let path = KeyPath::parse(key)?;
        let state = self.state_mut(scope);
        // A file refused for where it is (a link out of the project's folder) says so, with its
        // own hint (QA 2026-12-07: "could not be loaded … fix it by hand" for a valid file).
        if let Some(refused @ SettingsError::Refused { .. }) = &state.load_error {
            return Err(refused.clone());
        }
        if let (Some(_), Some(file)) = (&state.load_error, &state.path) {
            return Err(SettingsError::ScopeNotWritable {
                path: file.clone(),
                scope,
            });
        }
        let removed = document::remove_path(&mut state.document, &path);
        if removed {
            Self::mark(state, path);
            self.recompute();
        }
        Ok(removed)
    }

    /// Writes pending edits of both scopes. Each write locks the file, re-reads it, replaces only
    /// the changed keys and renames a temp file over it. A scope whose file failed to load is not
    /// written ([`SettingsError::ScopeNotWritable`]). The first error is returned after both scopes
    /// were tried.
    pub fn flush(&mut self) -> Result<(), SettingsError> {
        let global = self.flush_scope(SettingsScope::Global);
        let project = self.flush_scope(SettingsScope::Project);
        global.and(project)
    }

    fn flush_scope(&mut self, scope: SettingsScope) -> Result<(), SettingsError> {
        let state = self.state_mut(scope);
        if state.modified.is_empty() {
            return Ok(());
        }
        let Some(path) = state.path.clone() else {
            state.modified.clear();
            return Ok(());
        };
        if let Some(refused @ SettingsError::Refused { .. }) = &state.load_error {
            return Err(refused.clone());
        }
        if state.load_error.is_some() {
            return Err(SettingsError::ScopeNotWritable { path, scope });
        }
        let modified = state.modified.clone();
        let snapshot = state.document.clone();
        store::update(&path, state.reach, |current| {
            for key in &modified {
                match document::get_path(&snapshot, key) {
                    Some(value) => document::set_path(current, key, value.clone()),
                    None => {
                        document::remove_path(current, key);
                    }
                }
            }
        })?;
        self.state_mut(scope).modified.clear();
        Ok(())
    }

    fn check_parent_is_open(&self, path: &KeyPath) -> Result<(), SettingsError> {
        // An unknown key below a known scalar (e.g. `theme.x`) can never be valid; one inside a
        // model's entry of `compaction.modelOverrides` is kept, as in any object.
        let segments = path.segments();
        for length in 1..segments.len() {
            if let Some(kind) = key_path::kind_at(&segments[..length])
                && !matches!(
                    kind,
                    schema::ValueKind::Object(_) | schema::ValueKind::EntryMap { .. }
                )
            {
                return Err(SettingsError::InvalidKey {
                    key: path.dotted(),
                    reason: format!("`{}` is not an object", segments[..length].join(".")),
                });
            }
        }
        Ok(())
    }

    fn mark(state: &mut ScopeState, path: KeyPath) {
        if !state.modified.contains(&path) {
            state.modified.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA r104: `config unset` on a file with a trailing comma said the key "was not set".
    #[test]
    fn a_file_that_did_not_load_refuses_an_unset_and_stays_as_it_is() {
        let folder = tempfile::tempdir().unwrap();
        let global = folder.path().join("settings.json");
        let text = "{\n  \"defaultModel\": \"claude-sonnet-4-5\",\n}\n";
        std::fs::write(&global, text).unwrap();
        let mut settings =
            SettingsManager::from_paths(global.clone(), folder.path().join("project.json"));
        let refused = settings.unset(SettingsScope::Global, "defaultModel");
        assert!(
            matches!(refused, Err(SettingsError::ScopeNotWritable { .. })),
            "{refused:?}"
        );
        assert!(settings.flush().is_ok());
        assert_eq!(std::fs::read_to_string(&global).unwrap(), text);
    }
}
