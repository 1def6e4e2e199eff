//! An untrusted project's settings file of any bytes: loading it never panics, and it changes no
//! setting the schema does not mark `x-project` (what may run code or send data elsewhere stays
//! the user's). The oracle is the schema's markers, read here on their own, not the allowlist
//! the settings crate derives from them.

use std::cell::RefCell;
use std::path::PathBuf;

use ctxkit_settings::{SettingsManager, json_schema};
use serde_json::Value;

/// The user's own settings: values for keys a project may not set, so a leak shows.
const GLOBAL: &str = r#"{
  "hooks": [{"command": ["/usr/bin/true"], "events": ["before_compact"]}],
  "chat": {"passEnv": ["GH_TOKEN"], "readablePaths": ["/srv/data"], "confirmBash": true},
  "store": {"url": "/var/ctxkit/sessions"},
  "server": {"token": "user-token"},
  "compaction": {"model": "anthropic/claude-haiku-4-5", "keepRecentTokens": 12000},
  "transforms": {"pruneMinChars": 700}
}"#;

/// This thread's folder: the user's settings file and a project's.
struct Folder(PathBuf);

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

thread_local! {
    static FOLDER: RefCell<Option<(Folder, Value)>> = const { RefCell::new(None) };
}

/// Removes this thread's folder (the driver calls it before it exits).
pub fn remove_settings_folder() {
    FOLDER.with(|cell| cell.borrow_mut().take());
}

/// The global settings file, the fuzzed project's settings file, and the settings read with an
/// empty project.
fn folder() -> (PathBuf, PathBuf, Value) {
    FOLDER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (folder, baseline) = cell.get_or_insert_with(|| {
            let root = crate::thread_temp_path("settings");
            std::fs::create_dir_all(root.join("project/.ctxkit")).unwrap();
            std::fs::create_dir_all(root.join("empty/.ctxkit")).unwrap();
            std::fs::write(root.join("global.json"), GLOBAL).unwrap();
            let baseline = SettingsManager::from_paths(
                root.join("global.json"),
                root.join("empty/.ctxkit/settings.json"),
            );
            let baseline = serde_json::to_value(baseline.settings()).unwrap();
            (Folder(root), baseline)
        });
        let root = &folder.0;
        (
            root.join("global.json"),
            root.join("project/.ctxkit/settings.json"),
            baseline.clone(),
        )
    })
}

/// Loads `data` as an untrusted project's `.ctxkit/settings.json` beside fixed user settings:
/// every setting the schema does not let a project set reads as it does with no project file.
pub fn untrusted_settings(data: &[u8]) {
    let (global, project, baseline) = folder();
    std::fs::write(&project, data).unwrap();
    let mut manager = SettingsManager::from_paths(global, project);
    let _ = manager.diagnostics();
    let _ = manager.list();
    let _ = manager.held_project_entries();
    let _ = manager.drain_errors();
    assert!(!manager.project_trusted(), "a project trusted itself");
    let read = serde_json::to_value(manager.settings()).unwrap();
    let mut path = Vec::new();
    assert_only_project_keys_moved(&baseline, &read, Some(json_schema()), &mut path);
}

/// Walks the settings read without and with the project file beside the schema: below a key
/// marked `x-project` anything may differ; anywhere else the values are equal.
fn assert_only_project_keys_moved(
    without: &Value,
    with: &Value,
    schema: Option<&Value>,
    path: &mut Vec<String>,
) {
    if schema.is_some_and(|schema| schema.get("x-project") == Some(&Value::Bool(true))) {
        return;
    }
    let properties = schema.and_then(properties_of);
    if let (Value::Object(left), Value::Object(right), Some(properties)) =
        (without, with, properties)
    {
        let keys: std::collections::BTreeSet<&String> = left.keys().chain(right.keys()).collect();
        for key in keys {
            path.push(key.clone());
            assert_only_project_keys_moved(
                left.get(key).unwrap_or(&Value::Null),
                right.get(key).unwrap_or(&Value::Null),
                properties.get(key),
                path,
            );
            path.pop();
        }
        return;
    }
    assert_eq!(
        without,
        with,
        "an untrusted project changed `{}`",
        path.join(".")
    );
}

/// The properties of an object's schema, looking through `anyOf`/`oneOf` (an optional section).
fn properties_of(schema: &Value) -> Option<&serde_json::Map<String, Value>> {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        return Some(properties);
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .find_map(properties_of)
}
