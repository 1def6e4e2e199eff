//! Values checked against the known settings: a document walked key by key (unknown keys kept
//! and listed, values of the wrong type or range reported), and a value typed on a command line
//! read as its key's type.

use serde_json::{Map, Value};

use super::schema::{Field, ValueKind, top_level};

/// A problem found by [`check_value`]: the dotted key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Dotted key (array elements as `key[i]`).
    pub key: String,
    /// Human description of the accepted values.
    pub expected: String,
    /// The offending value as JSON.
    pub found: String,
}

/// Result of walking a document against the schema.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Keys the schema does not know (dotted).
    pub unknown_keys: Vec<String>,
    /// Values of the wrong type or range.
    pub violations: Vec<Violation>,
}

impl CheckReport {
    /// Notes that `found` at `key` is not what the key accepts (`expected`).
    pub(crate) fn refuse(&mut self, key: &str, expected: impl Into<String>, found: &Value) {
        self.violations.push(Violation {
            key: key.to_owned(),
            expected: expected.into(),
            found: super::shown::found_text(key, found),
        });
    }
}

/// The events a command hook may name (the engine's `command_hooks`).
pub const HOOK_EVENTS: [&str; 6] = [
    "before_compact",
    "after_compact",
    "compaction_failed",
    "before_tree",
    "after_tree",
    "before_fork",
];

/// What a `hooks` value should be, when it is not: an array of well-formed hooks whose events are
/// among [`HOOK_EVENTS`] (QA 2026-12-07: `before_compactt` was taken, and the guard hook never
/// ran).
fn hook_list_problem(value: &Value) -> Option<String> {
    let shape = "an array of {command: [program, args…], events?, timeoutMs?}";
    let Some(hooks) = value.as_array() else {
        return Some(shape.to_owned());
    };
    for hook in hooks {
        let command_valid = hook
            .get("command")
            .and_then(Value::as_array)
            .is_some_and(|command| !command.is_empty() && command.iter().all(Value::is_string));
        let events = match hook.get("events") {
            None => Some(Vec::new()),
            Some(events) => events
                .as_array()
                .and_then(|events| events.iter().map(Value::as_str).collect::<Option<Vec<_>>>()),
        };
        let timeout_valid = hook.get("timeoutMs").is_none_or(|timeout| {
            super::numbers::whole_number(timeout).is_some_and(|milliseconds| milliseconds >= 0)
        });
        let pass_env_valid = hook.get("passEnv").is_none_or(|names| {
            names
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string))
        });
        let Some(events) = events.filter(|_| command_valid && timeout_valid && pass_env_valid)
        else {
            return Some(shape.to_owned());
        };
        if let Some(unknown) = events.iter().find(|event| !HOOK_EVENTS.contains(event)) {
            return Some(format!(
                "hook events among {} (`{unknown}` is none of them)",
                HOOK_EVENTS.join(", ")
            ));
        }
    }
    None
}

/// Checks `value` against `kind`; nested unknown keys and violations go into `report`.
pub fn check_value(key: &str, kind: &ValueKind, value: &Value, report: &mut CheckReport) {
    let mut violation = |expected: String| report.refuse(key, expected, value);
    match kind {
        ValueKind::Bool => {
            if !value.is_boolean() {
                violation("a boolean (`true` or `false`)".to_owned());
            }
        }
        ValueKind::BoolOr(words) => {
            let is_word = |text: &str| words.iter().any(|word| word == text);
            if !(value.is_boolean() || value.as_str().is_some_and(is_word)) {
                let words: Vec<String> = words.iter().map(|word| format!("\"{word}\"")).collect();
                violation(format!("`true`, `false` or {}", words.join(", ")));
            }
        }
        ValueKind::Integer { min, max } => {
            let in_range = super::numbers::whole_number(value)
                .is_some_and(|number| number >= *min && number <= *max);
            if !in_range {
                if *max == i64::MAX {
                    violation(format!("an integer ≥ {min}"));
                } else {
                    violation(format!("an integer from {min} to {max}"));
                }
            }
        }
        ValueKind::String => {
            if !value.is_string() {
                violation("a string".to_owned());
            }
        }
        ValueKind::HttpUrl => {
            if !value.as_str().is_some_and(is_http_url) {
                violation("an `http://` or `https://` URL (`http://localhost:8080/v1`)".to_owned());
            }
        }
        ValueKind::Enum(allowed) => {
            if !value
                .as_str()
                .is_some_and(|text| allowed.iter().any(|allowed| allowed == text))
            {
                violation(format!("one of {}", allowed.join(", ")));
            }
        }
        ValueKind::StringList => {
            let valid = value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string));
            if !valid {
                violation("an array of strings".to_owned());
            }
        }
        ValueKind::PackageList => check_packages(key, value, report),
        ValueKind::StringMap => {
            let valid = value
                .as_object()
                .is_some_and(|object| object.values().all(Value::is_string));
            if !valid {
                violation("an object of strings".to_owned());
            }
        }
        ValueKind::ModelList => super::model_list::check_models(key, value, report),
        ValueKind::HookList => {
            if let Some(expected) = hook_list_problem(value) {
                violation(expected);
            }
        }
        ValueKind::EntryMap {
            keyed,
            fields,
            required,
        } => check_entry_map(key, keyed, (fields, required), value, report),
        ValueKind::Object(fields) => check_object(key, fields, value, report),
    }
}

/// Whether `text` is an address a request can be sent to: `http://` or `https://` and a host.
fn is_http_url(text: &str) -> bool {
    let lower = text.trim().to_ascii_lowercase();
    ["http://", "https://"].iter().any(|scheme| {
        lower
            .strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    })
}

/// `compaction.modelOverrides`: each entry an object whose known budgets are safe integers ≥ 0 (as
/// Pi 1.6 requires); other keys inside an entry are reported as unknown.
/// An object of entries keyed as `keyed` says, each an object with `fields`, of which `required`
/// must be there: an entry without one is refused, since the typed settings cannot hold it.
fn check_entry_map(
    key: &str,
    keyed: &str,
    (fields, required): (&[Field], &[String]),
    value: &Value,
    report: &mut CheckReport,
) {
    let Some(entries) = value.as_object() else {
        report.refuse(key, format!("an object keyed `{keyed}`"), value);
        return;
    };
    for (name, entry) in entries {
        let entry_key = super::key_path::entry_key(key, name);
        let missing: Vec<&String> = required
            .iter()
            .filter(|field| entry.get(field.as_str()).is_none_or(Value::is_null))
            .collect();
        if entry.is_object() && !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|name| format!("`{name}`")).collect();
            report.refuse(
                &entry_key,
                format!("an object with {}", names.join(" and ")),
                entry,
            );
            continue;
        }
        check_object(&entry_key, fields, entry, report);
    }
}

fn check_object(key: &str, fields: &[Field], value: &Value, report: &mut CheckReport) {
    let Some(object) = value.as_object() else {
        report.refuse(key, "an object", value);
        return;
    };
    for (name, nested) in object {
        let nested_key = super::key_path::child_key(key, name);
        match fields.iter().find(|field| field.key == *name) {
            Some(_) if nested.is_null() => {}
            Some(field) => check_value(&nested_key, &field.kind, nested, report),
            None => report.unknown_keys.push(nested_key),
        }
    }
}

fn check_packages(key: &str, value: &Value, report: &mut CheckReport) {
    let Some(items) = value.as_array() else {
        report.refuse(key, "an array of package sources", value);
        return;
    };
    for (index, item) in items.iter().enumerate() {
        let item_key = format!("{key}[{index}]");
        let valid = match item {
            Value::String(_) => true,
            Value::Object(object) => {
                object.get("source").is_some_and(Value::is_string)
                    && object.get("autoload").is_none_or(Value::is_boolean)
                    && ["extensions", "skills", "prompts", "themes"]
                        .iter()
                        .all(|kind| {
                            object.get(*kind).is_none_or(|filter| {
                                filter
                                    .as_array()
                                    .is_some_and(|patterns| patterns.iter().all(Value::is_string))
                            })
                        })
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => false,
        };
        if !valid {
            report.refuse(
                &item_key,
                "a source string or {\"source\": …, \"extensions\"?: [..], \"skills\"?: [..], \"prompts\"?: [..], \"themes\"?: [..], \"autoload\"?: false}",
                item,
            );
        }
    }
}

/// Checks a whole document: unknown keys and violations, in document order. `null` values are
/// treated as unset (the reference's getters do the same).
pub fn check_document(document: &Map<String, Value>) -> CheckReport {
    let mut report = CheckReport::default();
    for (key, value) in document {
        match top_level().iter().find(|field| field.key == *key) {
            Some(_) if value.is_null() => {}
            Some(field) => check_value(key, &field.kind, value, &mut report),
            None => report
                .unknown_keys
                .push(super::key_path::child_key("", key)),
        }
    }
    report
}

/// Interprets the text of `ctxkit config set KEY VALUE` for `kind`: strings and enums are taken
/// verbatim unless the text is a JSON string (`'"dark"'` is `dark`, not a name in quotes),
/// everything else (and unknown keys) is parsed as JSON, unknown keys falling back to a plain
/// string when the text is not JSON. A whole number typed as a float (`1e4`) is stored as the
/// integer it is where the key takes one.
pub fn parse_raw_value(kind: Option<&ValueKind>, raw: &str) -> Value {
    let as_json = || serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw));
    match kind {
        Some(ValueKind::String | ValueKind::HttpUrl | ValueKind::Enum(_)) => {
            match serde_json::from_str::<Value>(raw.trim()) {
                Ok(Value::String(text)) if raw.trim().starts_with('"') => Value::String(text),
                Ok(_) | Err(_) => Value::from(raw),
            }
        }
        Some(ValueKind::Integer { .. }) => super::numbers::with_whole_numbers(as_json()),
        Some(
            ValueKind::Bool
            | ValueKind::BoolOr(_)
            | ValueKind::StringList
            | ValueKind::PackageList
            | ValueKind::StringMap
            | ValueKind::ModelList
            | ValueKind::HookList
            | ValueKind::EntryMap { .. }
            | ValueKind::Object(_),
        )
        | None => as_json(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::schema::{lookup, project_may_set};
    use serde_json::json;

    #[test]
    fn check_reports_unknown_and_invalid() {
        let document = json!({"theme": 3, "compaction": {"enabled": "yes", "extra": 1}, "mine": true, "packages": ["npm:x", {"source": "y", "skills": ["a"]}, 4]});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(report.unknown_keys, vec!["compaction.extra", "mine"]);
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(keys, vec!["theme", "compaction.enabled", "packages[2]"]);
    }

    /// Pi 1.6 takes `quietStartup` as a boolean or `"header"`; the check named `"header"` a
    /// wrong value, which stopped the chat (QA r98).
    #[test]
    fn quiet_startup_takes_a_boolean_or_header() {
        for accepted in [json!(true), json!(false), json!("header")] {
            let document = json!({ "quietStartup": accepted });
            let report = check_document(document.as_object().unwrap());
            assert_eq!(report, CheckReport::default(), "{accepted}");
        }
        let report = check_document(json!({"quietStartup": "footer"}).as_object().unwrap());
        assert_eq!(report.violations.len(), 1);
        assert_eq!(
            report.violations[0].expected,
            "`true`, `false` or \"header\""
        );
        let kind = lookup(&["quietStartup".to_owned()]).map(|field| &field.kind);
        assert_eq!(parse_raw_value(kind, "header"), json!("header"));
        assert_eq!(parse_raw_value(kind, "true"), json!(true));
        let typed: crate::Settings =
            serde_json::from_value(json!({"quietStartup": "header"})).unwrap();
        assert_eq!(typed.quiet_startup, crate::QuietStartup::Header);
        assert_eq!(
            serde_json::to_value(typed.quiet_startup).unwrap(),
            json!("header")
        );
    }

    /// QA 2026-12-07: a hook whose event was misspelled (`before_compactt`) was taken, and the
    /// guard it was never ran. An event must be one the engine calls hooks for.
    #[test]
    fn a_hook_event_must_be_one_the_engine_calls() {
        let hook = |event: &str| json!({"hooks": [{"command": ["true"], "events": [event]}]});
        for event in HOOK_EVENTS {
            let report = check_document(hook(event).as_object().unwrap());
            assert_eq!(report, CheckReport::default(), "{event}");
        }
        let report = check_document(hook("before_compactt").as_object().unwrap());
        assert_eq!(report.violations.len(), 1);
        assert_eq!(report.violations[0].key, "hooks");
        assert!(
            report.violations[0]
                .expected
                .ends_with("(`before_compactt` is none of them)"),
            "{:?}",
            report.violations
        );
        let report = check_document(json!({"hooks": [{"command": []}]}).as_object().unwrap());
        assert!(
            report.violations[0]
                .expected
                .starts_with("an array of {command")
        );
    }

    #[test]
    fn compaction_model_overrides_are_known_and_checked() {
        let document = json!({"compaction": {"modelOverrides": {
            "anthropic/claude-sonnet-4-5": {"reserveTokens": 1000, "keepRecentTokens": 0},
            "openai/gpt-4.1": {"reserveTokens": -1, "other": 1},
            "x/y": 5,
        }}});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(
            report.unknown_keys,
            [r#"compaction.modelOverrides["openai/gpt-4.1"].other"#]
        );
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                r#"compaction.modelOverrides["openai/gpt-4.1"].reserveTokens"#,
                r#"compaction.modelOverrides["x/y"]"#,
            ]
        );
        let report = check_document(
            json!({"compaction": {"modelOverrides": []}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(report.violations.len(), 1);
        // It sizes requests: an untrusted project's waits for trust.
        assert!(!project_may_set(&["compaction", "modelOverrides"]));
    }

    #[test]
    fn anthropic_context_management_is_known_and_checked() {
        let key = |dotted: &str| dotted.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            lookup(&key("llm.anthropic.contextManagement.enabled"))
                .and_then(|field| field.default.clone()),
            Some(json!(false))
        );
        assert!(lookup(&key("llm.anthropic.contextManagement.keepToolUses")).is_some());
        assert_eq!(
            lookup(&key("llm.anthropic.cacheRetention")).and_then(|field| field.default.clone()),
            Some(json!("short"))
        );
        assert!(lookup(&key("llm.anthropic.contextManagement.keep")).is_none());
        assert_eq!(
            lookup(&key("llm.anthropic.compaction.enabled"))
                .and_then(|field| field.default.clone()),
            Some(json!(false))
        );
        assert!(lookup(&key("llm.anthropic.compaction.pauseAfterCompaction")).is_some());
        assert_eq!(
            lookup(&key("llm.openaiResponses.compaction.enabled"))
                .and_then(|field| field.default.clone()),
            Some(json!(false))
        );
        assert!(lookup(&key("llm.openaiResponses.compaction.compactThreshold")).is_some());
        let document = json!({"llm": {"anthropic": {"contextManagement": {
            "enabled": true, "triggerInputTokens": -1, "excludeTools": ["memory", 3],
            "clearThinking": true, "keepThinkingTurns": 2, "trigger": 5},
            "cacheRetention": "1h"}}});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(
            report.unknown_keys,
            vec!["llm.anthropic.contextManagement.trigger"]
        );
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(
            keys,
            vec![
                "llm.anthropic.contextManagement.triggerInputTokens",
                "llm.anthropic.contextManagement.excludeTools",
                "llm.anthropic.cacheRetention"
            ]
        );
    }

    #[test]
    fn context_strategy_and_its_keys_are_known_and_checked() {
        let key = |dotted: &str| dotted.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            lookup(&key("contextStrategy")).and_then(|field| field.default.clone()),
            Some(json!("recommended"))
        );
        assert_eq!(
            lookup(&key("compaction.thresholdTokens")).and_then(|field| field.default.clone()),
            Some(json!(0))
        );
        assert_eq!(
            lookup(&key("transforms.pruneDigestNames")).and_then(|field| field.default.clone()),
            Some(json!(0))
        );
        let good = json!({"contextStrategy": "recommended",
            "compaction": {"thresholdTokens": 40000},
            "transforms": {"pruneDigestNames": 8, "pruneDigestChars": 160}});
        let report = check_document(good.as_object().unwrap());
        assert!(report.violations.is_empty() && report.unknown_keys.is_empty());
        let bad = json!({"contextStrategy": "cheapest",
            "compaction": {"thresholdTokens": -1},
            "transforms": {"pruneDigestNames": "many"}});
        let report = check_document(bad.as_object().unwrap());
        let mut keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec![
                "compaction.thresholdTokens",
                "contextStrategy",
                "transforms.pruneDigestNames"
            ]
        );
    }

    #[test]
    fn cache_prefix_is_a_known_boolean_off_by_default() {
        let key = ["compaction".to_owned(), "cachePrefix".to_owned()];
        assert_eq!(
            lookup(&key).map(|field| (field.kind.clone(), field.default.clone())),
            Some((ValueKind::Bool, Some(json!(false))))
        );
        let document = json!({"compaction": {"cachePrefix": "yes"}});
        let report = check_document(document.as_object().unwrap());
        assert!(report.unknown_keys.is_empty());
        assert_eq!(report.violations.len(), 1);
        assert_eq!(report.violations[0].key, "compaction.cachePrefix");
    }

    /// Pi 1.6 runs with `16384.0`, `3.0` and `1e4` (whole numbers to JSON and to
    /// `Number.isSafeInteger`); they stopped `chat` and `serve` (QA r99). `16384.5` is no integer.
    #[test]
    fn whole_numbers_written_as_floats_are_integers() {
        let document = json!({"compaction": {"reserveTokens": 16384.0, "keepRecentTokens": 1e4},
            "thinkingBudgets": {"low": 2048.0}, "retry": {"maxRetries": 4.0},
            "hooks": [{"command": ["true"], "timeoutMs": 5000.0}],
            "llm": {"models": [{"provider": "p", "id": "m", "contextWindow": 32000.0, "maxOutput": 4096.0}]}});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(report, CheckReport::default());
        let report = check_document(
            json!({"compaction": {"reserveTokens": 16384.5}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(report.violations.len(), 1);
        let manager = crate::SettingsManager::in_memory(document.as_object().cloned().unwrap());
        let settings = manager.settings();
        assert_eq!(settings.compaction.reserve_tokens, 16_384);
        assert_eq!(settings.compaction.keep_recent_tokens, 10_000);
        assert!(!settings.compaction.adaptive.reserve_tokens);
        assert_eq!(settings.thinking_budgets.low, Some(2_048));
        assert_eq!(settings.retry.max_retries, 4);
        assert_eq!(settings.hooks[0].timeout_ms, 5_000);
        assert_eq!(
            settings.llm.models.as_ref().unwrap()[0].context_window,
            32_000
        );
    }

    #[test]
    fn the_base_url_needs_a_scheme_and_the_api_a_known_name() {
        let report = |document: Value| check_document(document.as_object().unwrap()).violations;
        // QA r101: `localhost:8080/v1` was sent as it was, retried 4 times as a network error.
        for bad in [
            "localhost:8080/v1",
            "127.0.0.1:9",
            "http://",
            "https:///v1",
            "ftp://h",
        ] {
            let found = report(json!({"llm": {"baseUrl": bad}}));
            assert_eq!(found.len(), 1, "{bad}");
            assert_eq!(found[0].key, "llm.baseUrl");
            assert!(
                found[0].expected.contains("`http://` or `https://`"),
                "{found:?}"
            );
        }
        for good in [
            "http://localhost:8080/v1",
            "HTTPS://api.example.com",
            "http://[::1]:9/v1",
        ] {
            assert_eq!(
                report(json!({"llm": {"baseUrl": good}})),
                Vec::new(),
                "{good}"
            );
        }
        let found = report(json!({"llm": {"api": "anthropic"}}));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key, "llm.api");
        assert!(
            found[0].expected.contains("anthropic-messages")
                && found[0].expected.contains("google-generative-ai"),
            "{found:?}"
        );
        assert_eq!(
            report(json!({"llm": {"api": "openai-responses"}})),
            Vec::new()
        );
    }

    #[test]
    fn raw_values() {
        assert_eq!(
            parse_raw_value(Some(&ValueKind::String), "123"),
            json!("123")
        );
        assert_eq!(
            parse_raw_value(Some(&ValueKind::Bool), "false"),
            json!(false)
        );
        assert_eq!(parse_raw_value(None, "hello"), json!("hello"));
        // A JSON string is the string it spells (QA r99: `"dark"` was stored with its quotes).
        assert_eq!(
            parse_raw_value(Some(&ValueKind::String), r#""dark""#),
            json!("dark")
        );
        assert_eq!(
            parse_raw_value(Some(&ValueKind::String), r#"say "hi""#),
            json!(r#"say "hi""#)
        );
        let integer = ValueKind::Integer { min: 0, max: 10 };
        assert_eq!(parse_raw_value(Some(&integer), "1e1"), json!(10));
        assert_eq!(parse_raw_value(Some(&integer), "2.5"), json!(2.5));
        assert_eq!(parse_raw_value(None, "[1]"), json!([1]));
    }
}
