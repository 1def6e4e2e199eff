//! The typed read: the merged document becomes one [`Settings`] value, once per change. Each known
//! key whose value fits the schema is taken; a wrong value falls back to its default (and
//! `diagnostics` names it), unknown keys are left out. Keys marked `x-user-only` are read from the
//! global document alone, as Pi reads them. `"contextStrategy": "recommended"` adds its layer
//! beneath the files, so keys set explicitly still win.

use serde_json::{Map, Value};

use super::document::{self, Document, KeyPath};
use super::schema::{self, Field};
use super::validate::{self, CheckReport};
use crate::tree::Settings;

/// The typed settings of `effective` (global ⊕ applied project), with the keys marked
/// `x-user-only` taken from `global`, and the sections that did not read (see [`deserialize`]).
pub(crate) fn typed(global: &Document, effective: &Document) -> (Settings, Vec<String>) {
    let mut valid = Map::new();
    for (key, field) in schema::leaves() {
        let Ok(path) = KeyPath::parse(&key) else {
            continue;
        };
        let source = if field.user_only { global } else { effective };
        if let Some(value) =
            document::get_path(source, &path).filter(|value| fits(&key, field, value))
        {
            // `16384.0` passed the check as the integer it is; serde reads it into a `u64` so.
            let value = super::numbers::with_whole_numbers(value.clone());
            document::set_path(&mut valid, &path, value);
        }
    }
    let strategy = valid
        .get("contextStrategy")
        .and_then(|value| serde_json::from_value(value.clone()).ok())
        .unwrap_or_default();
    let resolved = document::merge_documents(&Settings::strategy_layer(strategy), &valid);
    let (mut settings, unread) = deserialize(resolved.clone());
    // Only a settings file's own value is taken as set: the default's and the strategy's follow
    // the window (capped by its proportional budget when planning).
    let set = |name: &str| {
        valid
            .get("compaction")
            .and_then(|compaction| compaction.get(name))
            .is_some()
    };
    settings.compaction.adaptive.reserve_tokens = !set("reserveTokens");
    settings.compaction.adaptive.keep_recent_tokens = !set("keepRecentTokens");
    settings.compaction.adaptive.append_summary_tokens = !set("appendSummaryTokens");
    trim_model_names(&mut settings);
    (settings, unread)
}

/// Model and provider names without the blanks a paste or an unquoted variable leaves around
/// them (`"anthropic/claude-sonnet-4-5 "`), as Pi 1.6.0 reads them; a name of blanks alone is
/// unset.
fn trim_model_names(settings: &mut Settings) {
    let trimmed = |name: &mut Option<String>| {
        *name = name
            .take()
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty());
    };
    trimmed(&mut settings.default_provider);
    trimmed(&mut settings.default_model);
    trimmed(&mut settings.compaction.model);
    if let Some(patterns) = settings.enabled_models.as_mut() {
        patterns.retain_mut(|pattern| {
            *pattern = pattern.trim().to_owned();
            !pattern.is_empty()
        });
    }
}

fn fits(key: &str, field: &Field, value: &Value) -> bool {
    if value.is_null() {
        return false;
    }
    let mut report = CheckReport::default();
    validate::check_value(key, &field.kind, value, &mut report);
    report.violations.is_empty()
}

/// Every value was checked against the schema, so this reads (`accepted_reads` tests it key by
/// key). Should a section still not, it takes its defaults and its name is returned, so the
/// commands that send anything refuse ([`super::SettingsManager::check_loaded`]) rather than run
/// on them: `llm` on its defaults would send the key to the public host.
fn deserialize(document: Document) -> (Settings, Vec<String>) {
    if let Ok(settings) = serde_json::from_value(Value::Object(document.clone())) {
        return (settings, Vec::new());
    }
    let mut kept = Map::new();
    let mut unread = Vec::new();
    for (key, value) in document {
        let single = Map::from_iter([(key.clone(), value.clone())]);
        if serde_json::from_value::<Settings>(Value::Object(single)).is_ok() {
            kept.insert(key, value);
        } else {
            // The error may quote a value (a key, a token): only the section's name is logged.
            tracing::warn!(section = %key, "a settings section does not read; it takes its defaults");
            unread.push(key);
        }
    }
    (
        serde_json::from_value(Value::Object(kept)).unwrap_or_default(),
        unread,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{ContextStrategy, SettingOrigin, SettingsManager, SettingsScope};

    fn manager(document: serde_json::Value) -> SettingsManager {
        SettingsManager::in_memory(document.as_object().cloned().unwrap())
    }

    #[test]
    fn a_wrong_value_reads_as_its_default_and_the_rest_is_taken() {
        let read = manager(json!({
            "compaction": {"reserveTokens": "lots", "keepRecentTokens": 9000},
            "transforms": {"windowThresholdPercent": 0, "headLines": 5},
            "llm": {"timeouts": {"idleSeconds": 0, "connectSeconds": 3}},
            "mine": true,
        }));
        let settings = read.settings();
        assert_eq!(settings.compaction.reserve_tokens, 16_384);
        assert_eq!(settings.compaction.keep_recent_tokens, 9_000);
        // A wrong value counts as not set: the reserve follows the window.
        assert!(settings.compaction.adaptive.reserve_tokens);
        assert!(!settings.compaction.adaptive.keep_recent_tokens);
        assert_eq!(settings.transforms.window_threshold_percent, 75);
        assert_eq!(settings.transforms.head_lines, 5);
        assert_eq!(settings.llm.timeouts.idle_seconds, 300);
        assert_eq!(settings.llm.timeouts.connect_seconds, 3);
        assert_eq!(read.diagnostics().len(), 4);
    }

    /// A section serde refuses (the check would have refused this value: the typed read is given
    /// it directly) stands on its defaults, the others are read, and its name comes back.
    #[test]
    fn a_section_that_does_not_read_is_named() {
        let document = json!({"llm": {"baseUrl": 3}, "theme": "dark"});
        let (settings, unread) = super::deserialize(document.as_object().cloned().unwrap());
        assert_eq!(unread, vec!["llm".to_owned()]);
        assert_eq!(settings.llm.base_url, None);
        assert_eq!(settings.theme.as_deref(), Some("dark"));
        let (_, unread) =
            super::deserialize(json!({"theme": "dark"}).as_object().cloned().unwrap());
        assert!(unread.is_empty());
    }

    /// The commands that send anything stop while a section stands on its defaults.
    #[test]
    fn an_unread_section_stops_the_commands_that_send() {
        let mut read = manager(json!({"llm": {"baseUrl": "http://127.0.0.1:1/v1"}}));
        assert!(read.check_loaded().is_ok());
        read.unread_sections = vec!["llm".to_owned()];
        let error = read.check_loaded().unwrap_err();
        assert!(
            matches!(&error, crate::SettingsError::SectionUnread { section } if section == "llm"),
            "{error}"
        );
        assert!(error.to_string().contains("nothing is sent"), "{error}");
    }

    #[test]
    fn model_names_are_read_without_surrounding_blanks() {
        let settings = manager(json!({
            "defaultProvider": " anthropic ",
            "defaultModel": "anthropic/claude-sonnet-4-5 ",
            "compaction": {"model": "\tanthropic/claude-haiku-4-5\n"},
            "enabledModels": ["openai/gpt-5:high ", "  ", " *sonnet*"],
        }))
        .settings()
        .clone();
        assert_eq!(settings.default_provider.as_deref(), Some("anthropic"));
        assert_eq!(
            settings.default_model.as_deref(),
            Some("anthropic/claude-sonnet-4-5")
        );
        assert_eq!(
            settings.compaction.model.as_deref(),
            Some("anthropic/claude-haiku-4-5")
        );
        assert_eq!(
            settings.enabled_models,
            Some(vec!["openai/gpt-5:high".to_owned(), "*sonnet*".to_owned()])
        );
        let blank = manager(json!({"defaultModel": "  "})).settings().clone();
        assert_eq!(blank.default_model, None);
    }

    #[test]
    fn user_only_keys_come_from_the_global_file_alone() {
        let mut read = manager(json!({"chat": {"passEnv": ["GH_TOKEN"]}}));
        read.set_project_trusted(true);
        read.set(
            SettingsScope::Project,
            "chat.passEnv",
            json!(["OPENAI_API_KEY"]),
        )
        .unwrap();
        read.set(SettingsScope::Project, "chat.readablePaths", json!(["~"]))
            .unwrap();
        let chat = &read.settings().chat;
        assert_eq!(chat.pass_env.as_deref(), Some(&["GH_TOKEN".to_owned()][..]));
        assert_eq!(chat.readable_paths, None);
    }

    #[test]
    fn the_recommended_strategy_is_a_layer_beneath_the_files() {
        let read = manager(json!({"contextStrategy": "recommended",
            "compaction": {"thresholdTokens": 60_000}}));
        let settings = read.settings();
        assert_eq!(settings.context_strategy, ContextStrategy::Recommended);
        assert_eq!(settings.compaction.threshold_tokens, 60_000);
        assert_eq!(settings.compaction.keep_recent_tokens, 10_000);
        // No file set it: the strategy's value follows the window (capped by a small one's).
        assert!(settings.compaction.adaptive.keep_recent_tokens);
        assert_eq!(settings.transforms.keep_recent_tool_results, 1);
        // `config get` shows the effective value and where it comes from: the layer's under the
        // files', and the default where neither sets the key.
        let shown = |key: &str| {
            let lookup = read.get(key).unwrap();
            (lookup.value.map(|value| value.to_string()), lookup.origin)
        };
        assert_eq!(
            shown("compaction.keepRecentTokens"),
            (Some("10000".to_owned()), Some(SettingOrigin::Strategy))
        );
        assert_eq!(
            shown("compaction.thresholdTokens"),
            (Some("60000".to_owned()), Some(SettingOrigin::Global))
        );
        assert_eq!(
            shown("compaction.reserveTokens"),
            (Some("16384".to_owned()), Some(SettingOrigin::Default))
        );
        // An empty file starts from the recommended strategy; the reference strategy from the
        // defaults alone.
        let plain = manager(json!({}));
        assert_eq!(
            plain.get("compaction.keepRecentTokens").unwrap().origin,
            Some(SettingOrigin::Strategy)
        );
        let strategy = plain.get("contextStrategy").unwrap();
        assert_eq!(
            (
                strategy.value.map(|value| value.to_string()),
                strategy.origin
            ),
            (
                Some("\"recommended\"".to_owned()),
                Some(SettingOrigin::Default)
            )
        );
        let reference = manager(json!({"contextStrategy": "reference"}));
        let lookup = reference.get("compaction.keepRecentTokens").unwrap();
        assert_eq!(
            (lookup.value.map(|value| value.to_string()), lookup.origin),
            (Some("20000".to_owned()), Some(SettingOrigin::Default))
        );
        // A section shows its keys as each one does (QA 2026-12-07: `config get compaction`
        // printed the file's keys alone), with what else the file holds there.
        let with_unknown = manager(json!({"compaction": {"thresholdTokens": 60_000, "mine": 1}}));
        let section = with_unknown.get("compaction").unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&section.value.unwrap().to_string()).unwrap();
        assert_eq!(value["thresholdTokens"], 60_000);
        assert_eq!(value["keepRecentTokens"], 10_000);
        assert_eq!(value["reserveTokens"], 16_384);
        assert_eq!(value["mine"], 1);
        assert_eq!(section.origin, Some(SettingOrigin::Global));
        let untouched = plain.get("chat").unwrap();
        assert_eq!(untouched.origin, Some(SettingOrigin::Default));
        assert!(
            untouched
                .value
                .unwrap()
                .to_string()
                .contains("\"confirmBash\":true")
        );
    }

    #[test]
    fn an_unknown_key_in_a_file_warns_with_the_key_it_meant() {
        let read = manager(json!({"compaction": {"reserveTokenz": 1}, "myTeam": true,
            "transfroms": {"headLines": 2}}));
        let messages: Vec<String> = read
            .diagnostics()
            .iter()
            .map(crate::SettingsDiagnostic::message)
            .collect();
        assert_eq!(
            messages,
            [
                "Unknown setting `compaction.reserveTokenz` in `` (kept as is); did you mean `compaction.reserveTokens`?",
                "Unknown setting `myTeam` in `` (kept as is)",
                "Unknown setting `transfroms` in `` (kept as is); did you mean `transforms`?",
            ]
        );
    }
}
