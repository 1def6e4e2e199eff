//! `llm.models`: the user's models, as Pi's `models.json` declares them — provider, id, window,
//! output limit, reasoning, prices (`cost`, dollars per million tokens, with Pi 1.6's request-wide
//! `tiers`) and the prompt cache's
//! lifetime (`cacheRetention`), and of Pi's `compat` flags `forceAdaptiveThinking` and the Chat
//! Completions flags that change a request ([`COMPAT_FLAGS`], `maxTokensField`,
//! `thinkingFormat`). Each problem names its own key (`llm.models[1].cost.cacheRead`).
//! A key of Pi's `models.json` that ctxkit does not read (`baseUrl`, `headers`, `api`, `maxTokens`,
//! …) is reported as unknown, as inside `cost` and `compaction.modelOverrides`: an entry's
//! `baseUrl` or `headers` does not route or authenticate anything here, and saying so beats a
//! request that silently goes elsewhere. `name` (a display label) is kept without a word.

use serde_json::Value;

use super::validate::CheckReport;

/// The price fields of `cost`, as Pi's `models.json` names them.
const PRICE_FIELDS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

/// The values `cacheRetention` takes (Pi's).
const CACHE_RETENTIONS: [&str; 3] = ["none", "short", "long"];

/// Checks every entry of `llm.models`; keys ctxkit does not read (in an entry or its `cost`) are
/// reported as unknown.
pub(super) fn check_models(key: &str, value: &Value, report: &mut CheckReport) {
    let Some(models) = value.as_array() else {
        report.refuse(
            key,
            "an array of {provider, id, contextWindow, maxOutput?, reasoning?, cost?, cacheRetention?}",
            value,
        );
        return;
    };
    for (index, model) in models.iter().enumerate() {
        check_model(&format!("{key}[{index}]"), model, report);
    }
}

fn check_model(key: &str, model: &Value, report: &mut CheckReport) {
    let Some(fields) = model.as_object() else {
        report.refuse(key, "an object {provider, id, contextWindow, …}", model);
        return;
    };
    for required in ["provider", "id"] {
        match fields.get(required) {
            Some(Value::String(_)) => {}
            other => report.refuse(
                &format!("{key}.{required}"),
                "a string",
                other.unwrap_or(&Value::Null),
            ),
        }
    }
    if fields
        .get("contextWindow")
        .is_none_or(|tokens| !is_count(tokens))
    {
        let found = fields.get("contextWindow").unwrap_or(&Value::Null);
        report.refuse(
            &format!("{key}.contextWindow"),
            "an integer ≥ 0 (tokens)",
            found,
        );
    }
    for (name, field) in fields {
        let field_key = format!("{key}.{name}");
        match name.as_str() {
            "provider" | "id" | "contextWindow" | "name" => {}
            "maxOutput" if !is_count(field) => {
                report.refuse(&field_key, "an integer ≥ 0 (tokens)", field);
            }
            "reasoning" if !field.is_boolean() => {
                report.refuse(&field_key, "a boolean (`true` or `false`)", field);
            }
            "cost" => check_cost(&field_key, field, report),
            "compat" => check_compat(&field_key, field, report),
            "cacheRetention"
                if !field
                    .as_str()
                    .is_some_and(|retention| CACHE_RETENTIONS.contains(&retention)) =>
            {
                report.refuse(&field_key, "one of `none`, `short`, `long`", field);
            }
            "input" if !is_input_list(field) => {
                report.refuse(&field_key, "a list of `text` and `image`", field);
            }
            "maxOutput" | "reasoning" | "cacheRetention" | "input" => {}
            // Other keys of Pi's `models.json` (`api`, `baseUrl`, `headers`, …) are kept in the
            // file, and not read.
            _ => report.unknown_keys.push(field_key),
        }
    }
}

/// The boolean flags of Pi's `compat` that ctxkit reads.
const COMPAT_FLAGS: [&str; 9] = [
    "forceAdaptiveThinking",
    "supportsDeveloperRole",
    "supportsUsageInStreaming",
    "supportsStore",
    "supportsReasoningEffort",
    "requiresToolResultName",
    "requiresAssistantAfterToolResult",
    "requiresThinkingAsText",
    "requiresReasoningContentOnAssistantMessages",
];

/// The values of `compat.maxTokensField` (Pi's).
const MAX_TOKENS_FIELDS: [&str; 2] = ["max_completion_tokens", "max_tokens"];

/// `compat`: Pi's flags ctxkit reads ([`COMPAT_FLAGS`], booleans; `maxTokensField`;
/// `thinkingFormat`, one of Pi's names); the others are unknown.
fn check_compat(key: &str, compat: &Value, report: &mut CheckReport) {
    let Some(flags) = compat.as_object() else {
        report.refuse(
            key,
            "an object {forceAdaptiveThinking?, supportsDeveloperRole?, maxTokensField?, …}",
            compat,
        );
        return;
    };
    let is_one_of =
        |flag: &Value, names: &[&str]| flag.as_str().is_some_and(|name| names.contains(&name));
    for (name, flag) in flags {
        let flag_key = format!("{key}.{name}");
        match name.as_str() {
            "maxTokensField" if !is_one_of(flag, &MAX_TOKENS_FIELDS) => {
                report.refuse(
                    &flag_key,
                    "one of `max_completion_tokens`, `max_tokens`",
                    flag,
                );
            }
            "thinkingFormat" if !is_one_of(flag, &crate::tree::THINKING_FORMATS) => {
                report.refuse(
                    &flag_key,
                    format!(
                        "one of {}",
                        crate::tree::THINKING_FORMATS
                            .map(|name| format!("`{name}`"))
                            .join(", ")
                    ),
                    flag,
                );
            }
            "maxTokensField" | "thinkingFormat" => {}
            flag_name if COMPAT_FLAGS.contains(&flag_name) && !flag.is_boolean() => {
                report.refuse(&flag_key, "a boolean (`true` or `false`)", flag);
            }
            flag_name if COMPAT_FLAGS.contains(&flag_name) => {}
            _ => report.unknown_keys.push(flag_key),
        }
    }
}

/// What a model takes, as Pi's models list it: `["text"]`, `["text", "image"]`.
/// A count of tokens: a whole number ≥ 0, `32000.0` as well as `32000` (`numbers::whole_number`).
fn is_count(value: &Value) -> bool {
    super::numbers::whole_number(value).is_some_and(|count| count >= 0)
}

fn is_input_list(field: &Value) -> bool {
    field.as_array().is_some_and(|kinds| {
        kinds
            .iter()
            .all(|kind| matches!(kind.as_str(), Some("text" | "image")))
    })
}

fn check_cost(key: &str, cost: &Value, report: &mut CheckReport) {
    let Some(prices) = cost.as_object() else {
        report.refuse(
            key,
            "an object {input, output, cacheRead, cacheWrite} in dollars per million tokens",
            cost,
        );
        return;
    };
    for (name, price) in prices {
        let price_key = format!("{key}.{name}");
        if name == "tiers" {
            check_tiers(&price_key, price, report);
        } else {
            check_price(price_key, price, report);
        }
    }
}

/// `cost.tiers`: `[{inputTokensAbove, input?, output?, cacheRead?, cacheWrite?}]` (Pi 1.6).
fn check_tiers(key: &str, tiers: &Value, report: &mut CheckReport) {
    let Some(tiers) = tiers.as_array() else {
        report.refuse(
            key,
            "an array of {inputTokensAbove, input?, output?, cacheRead?, cacheWrite?}",
            tiers,
        );
        return;
    };
    for (index, tier) in tiers.iter().enumerate() {
        let tier_key = format!("{key}[{index}]");
        let Some(fields) = tier.as_object() else {
            report.refuse(
                &tier_key,
                "an object {inputTokensAbove, input?, output?, …}",
                tier,
            );
            continue;
        };
        if fields
            .get("inputTokensAbove")
            .is_none_or(|tokens| !is_count(tokens))
        {
            let found = fields.get("inputTokensAbove").unwrap_or(&Value::Null);
            report.refuse(
                &format!("{tier_key}.inputTokensAbove"),
                "an integer ≥ 0 (tokens)",
                found,
            );
        }
        for (name, price) in fields
            .iter()
            .filter(|(name, _)| *name != "inputTokensAbove")
        {
            check_price(format!("{tier_key}.{name}"), price, report);
        }
    }
}

fn check_price(key: String, price: &Value, report: &mut CheckReport) {
    let name = key.rsplit('.').next().unwrap_or_default();
    if !PRICE_FIELDS.contains(&name) {
        report.unknown_keys.push(key);
    } else if !price.as_f64().is_some_and(|dollars| dollars >= 0.0) {
        report.refuse(&key, "a number ≥ 0 (dollars per million tokens)", price);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(models: Value) -> CheckReport {
        let mut report = CheckReport::default();
        check_models("llm.models", &models, &mut report);
        report
    }

    #[test]
    fn prices_and_cache_lifetime_are_taken() {
        let report = check(json!([{
            "provider": "gateway", "id": "m", "contextWindow": 16384, "maxOutput": 2048,
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "cacheRetention": "long"
        }]));
        assert_eq!(report, CheckReport::default());
    }

    #[test]
    fn compat_takes_force_adaptive_thinking_and_names_other_flags() {
        let taken = check(json!([{
            "provider": "anthropic", "id": "claude-next", "contextWindow": 200000,
            "compat": {"forceAdaptiveThinking": true}
        }]));
        assert_eq!(taken, CheckReport::default());
        let report = check(json!([{
            "provider": "anthropic", "id": "claude-next", "contextWindow": 200000,
            "compat": {"forceAdaptiveThinking": "yes", "supportsMidConvoEffort": true}
        }]));
        assert_eq!(
            report.unknown_keys,
            ["llm.models[0].compat.supportsMidConvoEffort"]
        );
        assert!(format!("{report:?}").contains("llm.models[0].compat.forceAdaptiveThinking"));
    }

    /// Pi 1.6.0's Chat Completions flags that change a request are read and checked; a flag
    /// ctxkit does not act on is named as unknown.
    #[test]
    fn compat_takes_the_chat_completions_flags_and_checks_their_types() {
        let taken = check(json!([{
            "provider": "local", "id": "qwen3", "contextWindow": 32768,
            "compat": {"supportsDeveloperRole": false, "supportsUsageInStreaming": false,
                "supportsStore": true, "supportsReasoningEffort": false,
                "maxTokensField": "max_tokens", "thinkingFormat": "qwen-chat-template",
                "requiresToolResultName": true, "requiresAssistantAfterToolResult": true,
                "requiresThinkingAsText": true, "requiresReasoningContentOnAssistantMessages": true}
        }]));
        assert_eq!(taken, CheckReport::default());
        let report = check(json!([{
            "provider": "local", "id": "qwen3", "contextWindow": 32768,
            "compat": {"supportsStore": "no", "maxTokensField": "max_output_tokens",
                "thinkingFormat": "qwen3", "requiresToolResultName": 1,
                "supportsStrictMode": true}
        }]));
        let refused: Vec<(&str, &str)> = report
            .violations
            .iter()
            .map(|violation| (violation.key.as_str(), violation.expected.as_str()))
            .collect();
        let boolean = "a boolean (`true` or `false`)";
        let formats = "one of `openai`, `openrouter`, `deepseek`, `together`, `baseten`, `zai`, \
            `qwen`, `chat-template`, `qwen-chat-template`, `string-thinking`, `ant-ling`";
        let fields = "one of `max_completion_tokens`, `max_tokens`";
        assert_eq!(
            refused,
            [
                ("llm.models[0].compat.supportsStore", boolean),
                ("llm.models[0].compat.maxTokensField", fields),
                ("llm.models[0].compat.thinkingFormat", formats),
                ("llm.models[0].compat.requiresToolResultName", boolean),
            ]
        );
        assert_eq!(
            report.unknown_keys,
            ["llm.models[0].compat.supportsStrictMode"]
        );
    }

    #[test]
    fn a_bad_price_or_lifetime_names_its_own_key() {
        let report = check(json!([
            {"provider": "a", "id": "m", "contextWindow": 1000},
            {"provider": "a", "id": "n", "contextWindow": 1000,
             "cost": {"input": 1, "cacheRead": "cheap", "perRequest": 1}, "cacheRetention": "forever"}
        ]));
        let keys: Vec<&str> = report.violations.iter().map(|v| v.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "llm.models[1].cost.cacheRead",
                "llm.models[1].cacheRetention"
            ]
        );
        assert_eq!(report.unknown_keys, ["llm.models[1].cost.perRequest"]);
        assert_eq!(report.violations[0].found, r#""cheap""#);
    }

    #[test]
    fn price_tiers_are_checked_like_the_prices() {
        let report = check(json!([{
            "provider": "a", "id": "m", "contextWindow": 1000,
            "cost": {"input": 1, "tiers": [
                {"inputTokensAbove": 200000, "input": 2, "output": 4},
                {"input": -1, "perRequest": 1},
                "cheap"
            ]}
        }]));
        let keys: Vec<&str> = report.violations.iter().map(|v| v.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "llm.models[0].cost.tiers[1].inputTokensAbove",
                "llm.models[0].cost.tiers[1].input",
                "llm.models[0].cost.tiers[2]"
            ]
        );
        assert_eq!(
            report.unknown_keys,
            ["llm.models[0].cost.tiers[1].perRequest"]
        );
        let not_an_array = check(json!([{"provider": "a", "id": "m", "contextWindow": 1,
            "cost": {"tiers": {"inputTokensAbove": 1}}}]));
        assert_eq!(not_an_array.violations[0].key, "llm.models[0].cost.tiers");
    }

    /// `input` is read (images go only to a model that lists `image`), and was warned about as
    /// unknown on every command; a value that is not such a list is refused.
    #[test]
    fn input_is_read_and_checked() {
        let report = check(json!([{"provider": "p", "id": "m", "contextWindow": 1000,
            "input": ["text", "image"]}]));
        assert!(report.unknown_keys.is_empty(), "{report:?}");
        assert!(report.violations.is_empty(), "{report:?}");
        let wrong = check(json!([{"provider": "p", "id": "m", "contextWindow": 1000,
            "input": "image"}]));
        assert_eq!(wrong.violations[0].key, "llm.models[0].input");
    }

    /// QA finding 5b: `baseUrl`, `headers` and `api` in an entry were accepted without a word
    /// (ctxkit does not read them), while unknown keys in `compaction.modelOverrides` warned.
    #[test]
    fn keys_ctxkit_does_not_read_in_an_entry_are_unknown() {
        let report = check(json!([{
            "provider": "p", "id": "m", "name": "M", "contextWindow": 1000,
            "baseUrl": "http://x", "headers": {"a": "b"}, "api": "openai-completions",
            "maxTokens": 10, "maxOutput": 10, "reasoning": true, "cacheRetention": "short",
            "input": ["text", "image"]
        }]));
        assert!(report.violations.is_empty(), "{report:?}");
        assert_eq!(
            report.unknown_keys,
            [
                "llm.models[0].baseUrl",
                "llm.models[0].headers",
                "llm.models[0].api",
                "llm.models[0].maxTokens"
            ]
        );
    }
}
