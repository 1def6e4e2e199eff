//! The known settings, derived from the typed tree ([`crate::Settings`]): each key's type, default,
//! description and trust marker come from its field (schemars reads the doc comment, the serde
//! default, the range and the `x-*` markers). Unknown keys are not an error (other tools and newer
//! versions write them); they are kept and reported as warnings.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The type a setting accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    /// `true` / `false`.
    Bool,
    /// A whole number within `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// Any string.
    String,
    /// One of a fixed list of strings.
    Enum(Vec<String>),
    /// An array of strings.
    StringList,
    /// The `packages` array: strings or `{source, extensions?, skills?, prompts?, themes?}`.
    PackageList,
    /// An object whose values are all strings (`llm.headers`).
    StringMap,
    /// An array of `{provider, id, contextWindow, maxOutput?, reasoning?}` (`llm.models`).
    ModelList,
    /// An array of `{command: [program, args…], events?: [names], timeoutMs?}` (`hooks`).
    HookList,
    /// An object keyed `provider/modelId` whose entries have these fields
    /// (`compaction.modelOverrides`, Pi 1.6).
    ModelBudgets(Vec<Field>),
    /// An object with known fields.
    Object(Vec<Field>),
}

/// One known setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The key within its parent object.
    pub key: String,
    /// What it accepts.
    pub kind: ValueKind,
    /// Its default (`None`: unset; objects have none of their own).
    pub default: Option<Value>,
    /// Its doc comment, on one line.
    pub description: String,
    /// An untrusted project may set it, and every key below it (`x-project`).
    pub project: bool,
    /// Its value is a credential: masked by `config list`, refused in project settings (`x-secret`).
    pub secret: bool,
    /// Read from the user's own (global) settings only, as Pi reads it (`x-user-only`).
    pub user_only: bool,
}

/// The JSON schema of the settings files (draft 2020-12), generated from [`crate::Settings`] with
/// every section inlined.
pub fn json_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|settings| settings.inline_subschemas = true)
            .into_generator();
        generator
            .into_root_schema_for::<crate::Settings>()
            .to_value()
    })
}

/// Every top-level setting, in the tree's order.
pub fn top_level() -> &'static [Field] {
    static TREE: OnceLock<Vec<Field>> = OnceLock::new();
    TREE.get_or_init(|| object_fields(json_schema()))
}

fn object_fields(schema: &Value) -> Vec<Field> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(key, property)| field_from(key, property))
                .collect()
        })
        .unwrap_or_default()
}

fn field_from(key: &str, property: &Value) -> Field {
    let flag = |name: &str| property.get(name).and_then(Value::as_bool) == Some(true);
    let kind = kind_of(property);
    let default = match kind {
        ValueKind::Object(_) => None,
        ValueKind::Bool
        | ValueKind::Integer { .. }
        | ValueKind::String
        | ValueKind::Enum(_)
        | ValueKind::StringList
        | ValueKind::PackageList
        | ValueKind::StringMap
        | ValueKind::ModelList
        | ValueKind::HookList
        | ValueKind::ModelBudgets(_) => property
            .get("default")
            .filter(|value| !value.is_null())
            .cloned(),
    };
    let description = property
        .get("description")
        .and_then(Value::as_str)
        .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    Field {
        key: key.to_owned(),
        kind,
        default,
        description,
        project: flag("x-project"),
        secret: flag("x-secret"),
        user_only: flag("x-user-only"),
    }
}

/// The schema without its `null` alternative (an `Option` field).
fn non_null(property: &Value) -> &Value {
    for combinator in ["anyOf", "oneOf"] {
        if let Some(alternatives) = property.get(combinator).and_then(Value::as_array) {
            let others: Vec<&Value> = alternatives
                .iter()
                .filter(|alternative| alternative.get("type") != Some(&Value::from("null")))
                .collect();
            if let [only] = others.as_slice()
                && others.len() < alternatives.len()
            {
                return only;
            }
        }
    }
    property
}

fn types_of(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| *name != "null")
            .collect(),
        _ => Vec::new(),
    }
}

fn enum_values(property: &Value) -> Option<Vec<String>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        );
    }
    let variants = property.get("oneOf")?.as_array()?;
    variants
        .iter()
        .map(|variant| {
            variant
                .get("const")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| enum_values(variant)?.into_iter().next())
        })
        .collect()
}

fn kind_of(property: &Value) -> ValueKind {
    match property.get("x-check").and_then(Value::as_str) {
        Some("packages") => return ValueKind::PackageList,
        Some("models") => return ValueKind::ModelList,
        Some("hooks") => return ValueKind::HookList,
        Some("stringMap") => return ValueKind::StringMap,
        Some("modelBudgets") => {
            let entry = property
                .get("additionalProperties")
                .map(non_null)
                .unwrap_or(&Value::Null);
            return ValueKind::ModelBudgets(object_fields(entry));
        }
        Some(_) | None => {}
    }
    if let Some(values) = enum_values(property) {
        return ValueKind::Enum(values);
    }
    let inner = non_null(property);
    if !std::ptr::eq(inner, property) {
        return kind_of(inner);
    }
    if property.get("properties").is_some() {
        return ValueKind::Object(object_fields(property));
    }
    match types_of(property).first().copied() {
        Some("boolean") => ValueKind::Bool,
        Some("integer") => ValueKind::Integer {
            min: property
                .get("minimum")
                .and_then(Value::as_i64)
                .unwrap_or(i64::MIN),
            max: property
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(i64::MAX),
        },
        Some("array") => ValueKind::StringList,
        _ => ValueKind::String,
    }
}

/// What an untrusted project's `.ctxkit/settings.json` may change before the user trusts it
/// (`ctxkit trust`): the keys marked `x-project` in the tree, settings that can neither run code
/// nor send a key or the conversation somewhere the user did not choose. An entry covers its key
/// and every key below it. An allowlist: a key not on it is held back until the project is
/// trusted, whether the schema knows it or not (a setting added later, a misspelt one).
/// `docs/security.md` has the reasons.
pub fn project_safe_keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        fn walk(prefix: &str, fields: &[Field], out: &mut Vec<String>) {
            for field in fields {
                let key = join(prefix, &field.key);
                if field.project {
                    out.push(key);
                } else if let ValueKind::Object(children) = &field.kind {
                    walk(&key, children, out);
                }
            }
        }
        let mut out = Vec::new();
        walk("", top_level(), &mut out);
        out
    })
}

/// Every known dotted key, sections included, depth first in the tree's order.
pub fn all_keys() -> Vec<String> {
    fn walk(prefix: &str, fields: &[Field], out: &mut Vec<String>) {
        for field in fields {
            let key = join(prefix, &field.key);
            out.push(key.clone());
            if let ValueKind::Object(children) = &field.kind {
                walk(&key, children, out);
            }
        }
    }
    let mut out = Vec::new();
    walk("", top_level(), &mut out);
    out
}

/// The keys whose values are credentials (`x-secret`): `config list` masks them and
/// `config set --project` refuses them (project settings are usually committed).
pub fn secret_keys() -> Vec<String> {
    leaves()
        .into_iter()
        .filter(|(_, field)| field.secret)
        .map(|(key, _)| key)
        .collect()
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Whether an untrusted project may set the key at `segments` ([`project_safe_keys`]).
pub fn project_may_set(segments: &[&str]) -> bool {
    project_safe_keys().iter().any(|entry| {
        let mut parts = entry.split('.');
        segments.len() >= entry.split('.').count()
            && segments.iter().all(|segment| match parts.next() {
                Some(part) => part == *segment,
                None => true,
            })
    })
}

/// Whether some key below `segments` is on [`project_safe_keys`] (an object to look into).
pub fn project_may_set_below(segments: &[&str]) -> bool {
    let prefix = segments.join(".") + ".";
    project_safe_keys()
        .iter()
        .any(|entry| entry.starts_with(&prefix))
}

/// Looks a dotted key up in the schema; `None` when any segment is unknown.
pub fn lookup(segments: &[String]) -> Option<&'static Field> {
    let mut fields = top_level();
    let mut found: Option<&'static Field> = None;
    for segment in segments {
        if let Some(parent) = found {
            let ValueKind::Object(children) = &parent.kind else {
                return None;
            };
            fields = children;
        }
        found = Some(fields.iter().find(|field| field.key == *segment)?);
    }
    found
}

/// Every leaf key of the schema (dotted) with its field, depth first in the tree's order.
pub fn leaves() -> Vec<(String, &'static Field)> {
    fn walk(prefix: &str, fields: &'static [Field], out: &mut Vec<(String, &'static Field)>) {
        for field in fields {
            let key = join(prefix, &field.key);
            match &field.kind {
                ValueKind::Object(children) => walk(&key, children, out),
                ValueKind::Bool
                | ValueKind::Integer { .. }
                | ValueKind::String
                | ValueKind::Enum(_)
                | ValueKind::StringList
                | ValueKind::PackageList
                | ValueKind::StringMap
                | ValueKind::ModelList
                | ValueKind::HookList
                | ValueKind::ModelBudgets(_) => out.push((key, field)),
            }
        }
    }
    let mut out = Vec::new();
    walk("", top_level(), &mut out);
    out
}

/// The settings table of `docs/settings.md`: every leaf key of the tree with what it accepts, its
/// default, whether an untrusted project may set it, and its doc comment.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| key | accepts | default | untrusted project | description |\n|---|---|---|---|---|\n",
    );
    for (key, field) in leaves() {
        let segments: Vec<&str> = key.split('.').collect();
        let default = field
            .default
            .as_ref()
            .map_or_else(|| "—".to_owned(), |value| format!("`{value}`"));
        let project = if project_may_set(&segments) {
            "yes"
        } else {
            "no"
        };
        out.push_str(&format!(
            "| `{key}` | {} | {default} | {project} | {} |\n",
            accepts(&field.kind),
            field.description.replace('|', "\\|"),
        ));
    }
    out
}

fn accepts(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Bool => "boolean".to_owned(),
        ValueKind::Integer { min, max } if *max == i64::MAX => format!("integer ≥ {min}"),
        ValueKind::Integer { min, max } => format!("integer {min}–{max}"),
        ValueKind::String => "string".to_owned(),
        ValueKind::Enum(values) => {
            let values: Vec<String> = values.iter().map(|value| format!("`{value}`")).collect();
            values.join(", ")
        }
        ValueKind::StringList => "array of strings".to_owned(),
        ValueKind::PackageList => "array of package sources".to_owned(),
        ValueKind::StringMap => "object of strings".to_owned(),
        ValueKind::ModelList => "array of models".to_owned(),
        ValueKind::HookList => "array of hooks".to_owned(),
        ValueKind::ModelBudgets(_) => "object keyed `provider/modelId`".to_owned(),
        ValueKind::Object(_) => "object".to_owned(),
    }
}

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

/// Checks `value` against `kind`; nested unknown keys and violations go into `report`.
pub fn check_value(key: &str, kind: &ValueKind, value: &Value, report: &mut CheckReport) {
    let mut violation = |expected: String| {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected,
            found: value.to_string(),
        });
    };
    match kind {
        ValueKind::Bool => {
            if !value.is_boolean() {
                violation("a boolean (`true` or `false`)".to_owned());
            }
        }
        ValueKind::Integer { min, max } => {
            let in_range = value
                .as_i64()
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
            let hook_valid = |hook: &Value| {
                hook.get("command")
                    .and_then(Value::as_array)
                    .is_some_and(|command| {
                        !command.is_empty() && command.iter().all(Value::is_string)
                    })
                    && hook.get("events").is_none_or(|events| {
                        events
                            .as_array()
                            .is_some_and(|events| events.iter().all(Value::is_string))
                    })
                    && hook
                        .get("timeoutMs")
                        .is_none_or(|timeout| timeout.as_u64().is_some())
                    && hook.get("passEnv").is_none_or(|names| {
                        names
                            .as_array()
                            .is_some_and(|names| names.iter().all(Value::is_string))
                    })
            };
            if !value
                .as_array()
                .is_some_and(|hooks| hooks.iter().all(hook_valid))
            {
                violation(
                    "an array of {command: [program, args…], events?, timeoutMs?}".to_owned(),
                );
            }
        }
        ValueKind::ModelBudgets(fields) => check_model_budgets(key, fields, value, report),
        ValueKind::Object(fields) => check_object(key, fields, value, report),
    }
}

/// `compaction.modelOverrides`: each entry an object whose known budgets are safe integers ≥ 0 (as
/// Pi 1.6 requires); other keys inside an entry are reported as unknown.
fn check_model_budgets(key: &str, budgets: &[Field], value: &Value, report: &mut CheckReport) {
    let Some(entries) = value.as_object() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an object keyed `provider/modelId`".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (model, entry) in entries {
        check_object(&format!("{key}[{model:?}]"), budgets, entry, report);
    }
}

fn check_object(key: &str, fields: &[Field], value: &Value, report: &mut CheckReport) {
    let Some(object) = value.as_object() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an object".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (name, nested) in object {
        let nested_key = format!("{key}.{name}");
        match fields.iter().find(|field| field.key == *name) {
            Some(_) if nested.is_null() => {}
            Some(field) => check_value(&nested_key, &field.kind, nested, report),
            None => report.unknown_keys.push(nested_key),
        }
    }
}

fn check_packages(key: &str, value: &Value, report: &mut CheckReport) {
    let Some(items) = value.as_array() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an array of package sources".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (index, item) in items.iter().enumerate() {
        let item_key = format!("{key}[{index}]");
        let valid = match item {
            Value::String(_) => true,
            Value::Object(object) => {
                object.get("source").is_some_and(Value::is_string)
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
            report.violations.push(Violation {
                key: item_key,
                expected: "a source string or {\"source\": …, \"extensions\"?: [..], \"skills\"?: [..], \"prompts\"?: [..], \"themes\"?: [..]}".to_owned(),
                found: item.to_string(),
            });
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
            None => report.unknown_keys.push(key.clone()),
        }
    }
    report
}

/// Interprets the text of `ctxkit config set KEY VALUE` for `kind`: strings and enums are taken
/// verbatim, everything else (and unknown keys) is parsed as JSON, unknown keys falling back to
/// a plain string when the text is not JSON.
pub fn parse_raw_value(kind: Option<&ValueKind>, raw: &str) -> Value {
    match kind {
        Some(ValueKind::String | ValueKind::Enum(_)) => Value::from(raw),
        Some(
            ValueKind::Bool
            | ValueKind::Integer { .. }
            | ValueKind::StringList
            | ValueKind::PackageList
            | ValueKind::StringMap
            | ValueKind::ModelList
            | ValueKind::HookList
            | ValueKind::ModelBudgets(_)
            | ValueKind::Object(_),
        )
        | None => serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `docs/settings.md` holds the table the tree gives, row for row. To rewrite it after changing
    /// the tree: `CTXKIT_BLESS_SETTINGS_DOCS=1 cargo test -p ctxkit-settings docs_table`.
    #[test]
    fn the_docs_table_is_the_tree() {
        const START: &str = "<!-- settings table: generated from the tree, checked by a test -->\n";
        const END: &str = "<!-- end of the settings table -->";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/settings.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find(START).expect("the table's start marker") + START.len();
        let end = text.find(END).expect("the table's end marker");
        let table = markdown_table();
        if std::env::var_os("CTXKIT_BLESS_SETTINGS_DOCS").is_some() {
            let updated = format!("{}{table}{}", &text[..start], &text[end..]);
            std::fs::write(&path, updated).unwrap();
            return;
        }
        let documented: Vec<&str> = text[start..end].lines().collect();
        let derived: Vec<&str> = table.lines().collect();
        for (documented, derived) in documented.iter().zip(&derived) {
            assert_eq!(
                documented, derived,
                "docs/settings.md differs from the tree"
            );
        }
        assert_eq!(
            documented.len(),
            derived.len(),
            "docs/settings.md has another number of rows"
        );
    }

    #[test]
    fn lookup_nested() {
        let key = [
            "retry".to_owned(),
            "provider".to_owned(),
            "maxRetryDelayMs".to_owned(),
        ];
        assert_eq!(
            lookup(&key).and_then(|field| field.default.clone()),
            Some(json!(60000))
        );
        assert!(lookup(&["theme".to_owned(), "x".to_owned()]).is_none());
        assert!(lookup(&["nope".to_owned()]).is_none());
    }

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
        assert!(project_may_set(&["compaction", "modelOverrides"]));
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
        assert_eq!(parse_raw_value(None, "[1]"), json!([1]));
    }
}
