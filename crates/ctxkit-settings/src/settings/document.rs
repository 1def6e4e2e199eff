//! Pure operations on settings documents: legacy migrations, the global ⊕ project merge and
//! dotted-key access. No I/O here.

use serde_json::{Map, Value};

/// A settings document: the top-level JSON object of a settings file, key order preserved.
pub type Document = Map<String, Value>;

pub use super::key_path::KeyPath;

/// Value at a key path, if every step is an object holding the next key.
pub fn get_path<'a>(document: &'a Document, path: &KeyPath) -> Option<&'a Value> {
    let (first, rest) = path.segments().split_first()?;
    let mut current = document.get(first)?;
    for segment in rest {
        current = current.as_object()?.get(segment)?;
    }
    Some(current)
}

/// Sets the value at a key path, creating (or replacing non-object) intermediate objects.
pub fn set_path(document: &mut Document, path: &KeyPath, value: Value) {
    let Some((last, parents)) = path.segments().split_last() else {
        return;
    };
    let mut current = document;
    for segment in parents {
        let slot = current
            .entry(segment.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(next) = slot else {
            return;
        };
        current = next;
    }
    current.insert(last.clone(), value);
}

/// Removes the value at a key path; returns whether something was removed. Objects the removal
/// leaves empty are removed too (unsetting `a.b` leaves no `"a": {}` behind).
pub fn remove_path(document: &mut Document, path: &KeyPath) -> bool {
    remove_segments(document, path.segments())
}

fn remove_segments(object: &mut Document, segments: &[String]) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return false;
    };
    if rest.is_empty() {
        return object.shift_remove(first).is_some();
    }
    let Some(Value::Object(child)) = object.get_mut(first) else {
        return false;
    };
    let removed = remove_segments(child, rest);
    if removed && child.is_empty() {
        object.shift_remove(first);
    }
    removed
}

/// The reference merge (Pi 1.6's `deepMergeObjects`): for each key of `overrides`, two objects
/// merge key by key at every depth, anything else replaces (arrays are never concatenated). So a
/// project's `compaction.modelOverrides["p/m"].keepRecentTokens` leaves the global
/// `…["p/m"].reserveTokens` and the other models' entries in place.
///
/// One exception, `llm.models` (a ctxkit key, not Pi's): a list of models merges model by model
/// (`provider` and `id`), an override's entry replacing the base's of the same model. A project
/// that declared its own model replaced the user's whole list, and the user's default model was
/// then unknown.
///
/// And Pi's own, `defaultTools` (its `mergeDefaultTools`): an override list of only `+name` and
/// `-name` entries is appended to the base list, so it changes the selection the base makes.
pub fn merge_documents(base: &Document, overrides: &Document) -> Document {
    let mut result = base.clone();
    merge_into(&mut result, overrides);
    if let (Some(Value::Array(base_tools)), Some(Value::Array(override_tools))) =
        (base.get("defaultTools"), overrides.get("defaultTools"))
        && override_tools.iter().all(is_tool_modifier)
    {
        let tools = base_tools.iter().chain(override_tools).cloned().collect();
        result.insert("defaultTools".to_owned(), Value::Array(tools));
    }
    let models = |document: &Document| {
        document
            .get("llm")
            .and_then(|llm| llm.get("models"))
            .and_then(Value::as_array)
            .cloned()
    };
    if let (Some(base_models), Some(override_models)) = (models(base), models(overrides))
        && let Some(Value::Object(llm)) = result.get_mut("llm")
    {
        llm.insert(
            "models".to_owned(),
            Value::Array(merge_models(base_models, override_models)),
        );
    }
    result
}

/// A `defaultTools` entry that changes a selection (`+name`, `-name`) rather than naming a tool.
fn is_tool_modifier(entry: &Value) -> bool {
    entry
        .as_str()
        .is_some_and(|text| text.starts_with(['+', '-']))
}

/// `base`'s models not named in `overrides`, then `overrides`' (a model is its `provider` and
/// `id`; an entry without both is kept as it is).
fn merge_models(base: Vec<Value>, overrides: Vec<Value>) -> Vec<Value> {
    let name = |model: &Value| {
        Some((
            model.get("provider")?.as_str()?.to_owned(),
            model.get("id")?.as_str()?.to_owned(),
        ))
    };
    let overridden: Vec<(String, String)> = overrides.iter().filter_map(name).collect();
    base.into_iter()
        .filter(|model| name(model).is_none_or(|named| !overridden.contains(&named)))
        .chain(overrides)
        .collect()
}

fn merge_into(base: &mut Document, overrides: &Document) {
    for (key, override_value) in overrides {
        match (base.get_mut(key), override_value) {
            (Some(Value::Object(base_object)), Value::Object(override_object)) => {
                merge_into(base_object, override_object);
            }
            (Some(_) | None, _) => {
                base.insert(key.clone(), override_value.clone());
            }
        }
    }
}

/// Legacy migrations applied on every load and to the file content re-read during a save
/// `queueMode` → `steeringMode`, `websockets` → `transport`, object-form `skills`,
/// `retry.maxDelayMs` → `retry.provider.maxRetryDelayMs`.
pub fn migrate(document: &mut Document) {
    if document.contains_key("queueMode")
        && !document.contains_key("steeringMode")
        && let Some(value) = document.shift_remove("queueMode")
    {
        document.insert("steeringMode".to_owned(), value);
    }
    if !document.contains_key("transport")
        && let Some(Value::Bool(websockets)) = document.get("websockets").cloned()
    {
        let transport = if websockets { "websocket" } else { "sse" };
        document.insert("transport".to_owned(), Value::from(transport));
        document.shift_remove("websockets");
    }
    if let Some(Value::Object(legacy)) = document.get("skills").cloned() {
        if let Some(enable) = legacy.get("enableSkillCommands")
            && document.get("enableSkillCommands").is_none()
        {
            document.insert("enableSkillCommands".to_owned(), enable.clone());
        }
        match legacy.get("customDirectories") {
            Some(Value::Array(directories)) if !directories.is_empty() => {
                document.insert("skills".to_owned(), Value::Array(directories.clone()));
            }
            Some(_) | None => {
                document.shift_remove("skills");
            }
        }
    }
    if let Some(Value::Object(retry)) = document.get_mut("retry") {
        let max_delay = retry
            .get("maxDelayMs")
            .filter(|value| value.is_number())
            .cloned();
        if let Some(max_delay) = max_delay {
            let provider_has_value = retry
                .get("provider")
                .and_then(Value::as_object)
                .and_then(|provider| provider.get("maxRetryDelayMs"))
                .is_some_and(|value| !value.is_null());
            if !provider_has_value {
                let mut provider = retry
                    .get("provider")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                provider.insert("maxRetryDelayMs".to_owned(), max_delay);
                retry.insert("provider".to_owned(), Value::Object(provider));
            }
        }
        retry.shift_remove("maxDelayMs");
    }
}

/// Serialises like `JSON.stringify(value, null, 2)`: two-space indent, no trailing newline.
/// Numbers read as kept literals (`numbers`) are printed as written.
pub fn serialize(document: &Document) -> String {
    let text = serde_json::to_string_pretty(document).unwrap_or_else(|_| "{}".to_owned());
    super::numbers::restore(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(value: Value) -> Document {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_projects_models_join_the_users_model_by_model() {
        let global = json!({"llm": {"models": [
            {"provider": "mock", "id": "coder", "contextWindow": 32000},
            {"provider": "anthropic", "id": "claude-sonnet-4-5", "contextWindow": 200000},
        ]}});
        let project = json!({"llm": {"models": [
            {"provider": "anthropic", "id": "claude-sonnet-4-5", "contextWindow": 1000},
        ]}});
        let merged = merge_documents(global.as_object().unwrap(), project.as_object().unwrap());
        assert_eq!(
            Value::Object(merged)["llm"]["models"],
            json!([
                {"provider": "mock", "id": "coder", "contextWindow": 32000},
                {"provider": "anthropic", "id": "claude-sonnet-4-5", "contextWindow": 1000},
            ])
        );
    }

    #[test]
    fn merge_is_deep_as_in_pi_16() {
        let global = doc(
            json!({"retry": {"enabled": true, "provider": {"timeoutMs": 1, "maxRetries": 2}}, "extensions": ["a.ts"]}),
        );
        let project = doc(json!({"retry": {"provider": {"timeoutMs": 5}}, "extensions": ["b.ts"]}));
        let merged = merge_documents(&global, &project);
        assert_eq!(
            Value::Object(merged),
            json!({"retry": {"enabled": true, "provider": {"timeoutMs": 5, "maxRetries": 2}}, "extensions": ["b.ts"]})
        );
        // Per-model budgets merge per model and per field; a non-object replaces an object.
        let global = doc(json!({"compaction": {"modelOverrides": {
            "a/x": {"reserveTokens": 1000}, "b/y": {"keepRecentTokens": 7}
        }}}));
        let project = doc(json!({"compaction": {"modelOverrides": {
            "a/x": {"keepRecentTokens": 2000}, "b/y": 3
        }}}));
        assert_eq!(
            Value::Object(merge_documents(&global, &project)),
            json!({"compaction": {"modelOverrides": {
                "a/x": {"reserveTokens": 1000, "keepRecentTokens": 2000}, "b/y": 3
            }}})
        );
    }

    #[test]
    fn a_project_list_of_only_modifiers_changes_the_users_default_tools() {
        let global = doc(json!({"defaultTools": ["read", "bash"]}));
        let project = doc(json!({"defaultTools": ["-bash", "+grep"]}));
        assert_eq!(
            Value::Object(merge_documents(&global, &project))["defaultTools"],
            json!(["read", "bash", "-bash", "+grep"])
        );
        let project = doc(json!({"defaultTools": ["ls", "-bash"]}));
        assert_eq!(
            Value::Object(merge_documents(&global, &project))["defaultTools"],
            json!(["ls", "-bash"]),
            "a plain name replaces"
        );
    }

    #[test]
    fn dotted_paths() {
        let mut document = Document::new();
        let key = KeyPath::parse("retry.provider.maxRetryDelayMs").unwrap();
        set_path(&mut document, &key, json!(5));
        assert_eq!(get_path(&document, &key), Some(&json!(5)));
        assert!(remove_path(&mut document, &key));
        assert_eq!(
            Value::Object(document),
            json!({}),
            "the parents the removal emptied go too"
        );
        assert!(KeyPath::parse("a..b").is_err());
        assert!(KeyPath::parse("").is_err());
    }

    #[test]
    fn removing_keeps_parents_that_hold_other_keys_and_empty_objects_it_did_not_empty() {
        let mut document = doc(json!({"nonsense": {"key": 1, "other": 2}, "empty": {}}));
        assert!(remove_path(
            &mut document,
            &KeyPath::parse("nonsense.key").unwrap()
        ));
        assert_eq!(
            Value::Object(document.clone()),
            json!({"nonsense": {"other": 2}, "empty": {}})
        );
        assert!(!remove_path(
            &mut document,
            &KeyPath::parse("empty.missing").unwrap()
        ));
        assert!(!remove_path(
            &mut document,
            &KeyPath::parse("nonsense.other.deeper").unwrap()
        ));
        assert_eq!(
            Value::Object(document),
            json!({"nonsense": {"other": 2}, "empty": {}}),
            "a removal that removed nothing changes nothing"
        );
    }
}
