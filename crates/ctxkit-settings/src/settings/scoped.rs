//! What each scope's document holds of the keys both scopes contribute to (`packages` and the
//! resource arrays): read per file, not from the merged view, and of the project's file what
//! applies (an untrusted project's entries reaching outside it are left out:
//! [`SettingsManager::held_project_entries`]). Every other key is read from the typed tree
//! ([`SettingsManager::settings`]).

use serde_json::Value;

use super::SettingsManager;
use crate::error::SettingsScope;
use crate::kind::ResourceKind;
use crate::tree::PackageSetting;

impl SettingsManager {
    /// The `packages` entries of one scope's document that apply (not the merged view: both scopes
    /// contribute packages). Entries without a source are skipped (reported by `diagnostics`);
    /// in a filter, a kind that is not an array selects everything, and patterns that are not
    /// strings are left out.
    pub fn packages_in(&self, scope: SettingsScope) -> Vec<PackageSetting> {
        self.applied_document(scope)
            .get("packages")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(package_setting).collect())
            .unwrap_or_default()
    }

    /// The `extensions` / `skills` / `prompts` / `themes` entries of one scope's document that
    /// apply.
    pub fn resource_entries_in(&self, scope: SettingsScope, kind: ResourceKind) -> Vec<String> {
        string_array(self.applied_document(scope).get(kind.key()))
    }
}

/// One `packages` entry read leniently, as the package manager always has.
fn package_setting(item: &Value) -> Option<PackageSetting> {
    match item {
        Value::String(source) => Some(PackageSetting::Source(source.clone())),
        Value::Object(object) => {
            let source = object.get("source")?.as_str()?.to_owned();
            let patterns = |kind: ResourceKind| {
                object
                    .get(kind.key())
                    .and_then(Value::as_array)
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(|item| item.as_str().map(str::to_owned))
                            .collect()
                    })
            };
            Some(PackageSetting::Filtered {
                source,
                extensions: patterns(ResourceKind::Extensions),
                skills: patterns(ResourceKind::Skills),
                prompts: patterns(ResourceKind::Prompts),
                themes: patterns(ResourceKind::Themes),
                autoload: object.get("autoload").and_then(Value::as_bool),
            })
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => None,
    }
}

fn string_array(value: Option<&Value>) -> Vec<String> {
    crate::json::string_items(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cache_warming_is_idle_by_default_and_read_from_the_global_settings_only() {
        let default = SettingsManager::in_memory(serde_json::Map::new());
        assert_eq!(default.settings().cache_warming, "idle");
        let global = json!({"cacheWarming": "off"}).as_object().cloned().unwrap();
        let mut manager = SettingsManager::in_memory(global);
        assert_eq!(manager.settings().cache_warming, "off");
        // A project, even a trusted one, cannot turn warming (and its spending) back on.
        manager.set_project_trusted(true);
        manager
            .set(SettingsScope::Project, "cacheWarming", json!("idle"))
            .unwrap();
        assert_eq!(manager.settings().cache_warming, "off");
        let invalid = json!({"cacheWarming": "always"})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(
            SettingsManager::in_memory(invalid).settings().cache_warming,
            "idle"
        );
    }

    /// Pi 1.6's `autoload` of a package object is read, and only a boolean is accepted.
    #[test]
    fn a_package_objects_autoload_is_read_and_checked() {
        let document = json!({"packages": [{"source": "./p", "autoload": false, "skills": []}]});
        let document = document.as_object().cloned().unwrap();
        assert!(
            super::super::validate::check_document(&document)
                .violations
                .is_empty()
        );
        let manager = SettingsManager::in_memory(document);
        let entries = manager.packages_in(SettingsScope::Global);
        assert!(entries[0].autoload_disabled());
        let wrong = json!({"packages": [{"source": "./p", "autoload": "no"}]});
        let report = super::super::validate::check_document(wrong.as_object().unwrap());
        assert_eq!(report.violations[0].key, "packages[0]");
    }

    #[test]
    fn message_threads_are_unset_unless_the_settings_say() {
        let default = SettingsManager::in_memory(serde_json::Map::new());
        assert_eq!(
            default.settings().llm.anthropic.supports_message_threads,
            None
        );
        let off = json!({"llm": {"anthropic": {"supportsMessageThreads": false}}});
        let off = SettingsManager::in_memory(off.as_object().cloned().unwrap());
        assert_eq!(
            off.settings().llm.anthropic.supports_message_threads,
            Some(false)
        );
    }

    #[test]
    fn package_entries_are_read_leniently_as_the_package_manager_always_has() {
        let read = |value: serde_json::Value| package_setting(&value);
        assert_eq!(
            read(serde_json::json!("npm:tool")),
            Some(PackageSetting::Source("npm:tool".to_owned()))
        );
        assert_eq!(read(serde_json::json!({"skills": ["a"]})), None);
        assert_eq!(read(serde_json::json!(3)), None);
        let filtered = read(serde_json::json!({
            "source": "git:github.com/a/b",
            "skills": ["one", 2, "two"],
            "prompts": "not an array",
        }))
        .unwrap();
        assert_eq!(filtered.source(), "git:github.com/a/b");
        assert!(filtered.is_filtered());
        let skills = ["one".to_owned(), "two".to_owned()];
        assert_eq!(filtered.patterns(ResourceKind::Skills), Some(&skills[..]));
        assert_eq!(filtered.patterns(ResourceKind::Prompts), None);
        assert_eq!(filtered.patterns(ResourceKind::Themes), None);
    }
}
