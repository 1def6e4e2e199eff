//! Edits of a settings file's `packages` list (`ctxkit install`, `ctxkit remove`): each is a locked
//! read-modify-write of the file, so concurrent edits survive. Which entries are the same package
//! is the package manager's question (identity against each file's base), asked by source text.

use std::path::PathBuf;

use serde_json::Value;

use super::confine::Reach;
use super::store;
use crate::env::Environment;
use crate::error::{SettingsError, SettingsScope};

const PACKAGES_KEY: &str = "packages";

/// The source string of a `packages` entry (a string or `{source, …}`).
fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(text) => Some(text),
        Value::Object(object) => object.get("source").and_then(Value::as_str),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => None,
    }
}

/// The settings file of `scope` and how far it may lead (a project's stays in its `.ctxkit`).
fn scope_file(environment: &Environment, scope: SettingsScope) -> (PathBuf, Reach) {
    let path = match scope {
        SettingsScope::Global => environment.global_settings_path(),
        SettingsScope::Project => environment.project_settings_path(),
    };
    (path, Reach::of(environment, scope))
}

/// Records `stored` in the `packages` of the settings file of `scope`, as Pi 1.6's
/// `addSourceToSettings`: the first entry whose source `same` accepts (the same package) takes
/// `stored` as its source (an object entry keeps its filters), unless its source is `stored`
/// already (then nothing is written and `false` returned); with no such entry `stored` is
/// appended. A `packages` that is not an array is an error naming the file and key, and the file
/// is left alone.
pub fn add_package_source(
    environment: &Environment,
    scope: SettingsScope,
    stored: &str,
    same: impl Fn(&str) -> bool,
) -> Result<bool, SettingsError> {
    let (path, reach) = scope_file(environment, scope);
    let mut not_an_array = false;
    let changed = store::update_if_changed(&path, reach, |document| {
        let packages = document
            .entry(PACKAGES_KEY)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(items) = packages else {
            not_an_array = true;
            return false;
        };
        let matching = items
            .iter_mut()
            .find(|entry| entry_source(entry).is_some_and(&same));
        match matching {
            Some(entry) if entry_source(entry) == Some(stored) => false,
            Some(Value::Object(object)) => {
                object.insert("source".to_owned(), Value::from(stored));
                true
            }
            Some(entry) => {
                *entry = Value::from(stored);
                true
            }
            None => {
                items.push(Value::from(stored));
                true
            }
        }
    })?;
    if not_an_array {
        return Err(SettingsError::InvalidValue {
            path,
            line: None,
            key: PACKAGES_KEY.to_owned(),
            expected: "an array of package sources".to_owned(),
            found: "another JSON type".to_owned(),
        });
    }
    Ok(changed)
}

/// Deletes every entry of the `packages` of the settings file of `scope` whose source `same`
/// accepts; returns whether one was deleted.
pub fn remove_package_sources(
    environment: &Environment,
    scope: SettingsScope,
    same: impl Fn(&str) -> bool,
) -> Result<bool, SettingsError> {
    let (path, reach) = scope_file(environment, scope);
    store::update_if_changed(&path, reach, |document| {
        let Some(Value::Array(items)) = document.get_mut(PACKAGES_KEY) else {
            return false;
        };
        let before = items.len();
        items.retain(|item| !entry_source(item).is_some_and(&same));
        items.len() != before
    })
}
