//! The known settings, derived from the typed tree ([`crate::Settings`]): each key's type, default,
//! description and trust marker come from its field (schemars reads the doc comment, the serde
//! default, the range and the `x-*` markers). Unknown keys are not an error (other tools and newer
//! versions write them); they are kept and reported as warnings.

use std::sync::OnceLock;

use serde_json::Value;

/// The type a setting accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    /// `true` / `false`.
    Bool,
    /// `true`, `false` or one of these words (`quietStartup`: `"header"`).
    BoolOr(Vec<String>),
    /// A whole number within `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// Any string.
    String,
    /// A string that is an `http://` or `https://` URL (`llm.baseUrl`).
    HttpUrl,
    /// One of a fixed list of strings.
    Enum(Vec<String>),
    /// An array of strings.
    StringList,
    /// The `packages` array: strings or
    /// `{source, extensions?, skills?, prompts?, themes?, autoload?}`.
    PackageList,
    /// An object whose values are all strings (`llm.headers`).
    StringMap,
    /// An array of `{provider, id, contextWindow, maxOutput?, reasoning?}` (`llm.models`).
    ModelList,
    /// An array of `{command: [program, args…], events?: [names], timeoutMs?}` (`hooks`).
    HookList,
    /// An object keyed as `keyed` says whose entries have these fields
    /// (`compaction.modelOverrides`, keyed `provider/modelId`, Pi 1.6; `llm.providers`, keyed
    /// `provider`).
    EntryMap {
        keyed: &'static str,
        fields: Vec<Field>,
        /// The fields every entry must have (`llm.providers`' `baseUrl`).
        required: Vec<String>,
    },
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
    /// A project's entries are kept untrusted, but what they name (skills, prompt templates,
    /// themes, extensions, packages) loads only once the project is trusted (`x-after-trust`).
    pub loads_after_trust: bool,
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
        | ValueKind::BoolOr(_)
        | ValueKind::Integer { .. }
        | ValueKind::String
        | ValueKind::HttpUrl
        | ValueKind::Enum(_)
        | ValueKind::StringList
        | ValueKind::PackageList
        | ValueKind::StringMap
        | ValueKind::ModelList
        | ValueKind::HookList
        | ValueKind::EntryMap { .. } => property
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
        loads_after_trust: flag("x-after-trust"),
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
        Some("httpUrl") => return ValueKind::HttpUrl,
        Some("boolOr") => {
            let words = property
                .get("x-words")
                .and_then(Value::as_array)
                .map(|words| {
                    words
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            return ValueKind::BoolOr(words);
        }
        Some(check @ ("modelBudgets" | "providerMap")) => {
            let entry = property
                .get("additionalProperties")
                .map(non_null)
                .unwrap_or(&Value::Null);
            let keyed = if check == "modelBudgets" {
                "provider/modelId"
            } else {
                "provider"
            };
            let required = entry
                .get("required")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            return ValueKind::EntryMap {
                keyed,
                fields: object_fields(entry),
                required,
            };
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

/// Whether the key at `segments` is read from the user's own settings alone (`x-user-only`):
/// a project's value never applies, trusted or not.
pub fn user_only(segments: &[&str]) -> bool {
    let owned: Vec<String> = segments
        .iter()
        .map(|segment| (*segment).to_owned())
        .collect();
    lookup(&owned).is_some_and(|field| field.user_only)
}

/// Whether the key at `segments` is a section of the tree, an object with keys of its own
/// (`compaction`, `chat`), rather than a value or a free-form map (`llm.headers`).
pub fn is_section(segments: &[&str]) -> bool {
    let owned: Vec<String> = segments
        .iter()
        .map(|segment| (*segment).to_owned())
        .collect();
    lookup(&owned).is_some_and(
        |field| matches!(&field.kind, ValueKind::Object(children) if !children.is_empty()),
    )
}

/// Whether some key below `segments` is on [`project_safe_keys`] (an object to look into).
pub fn project_may_set_below(segments: &[&str]) -> bool {
    let prefix = segments.join(".") + ".";
    project_safe_keys()
        .iter()
        .any(|entry| entry.starts_with(&prefix))
}

/// The doc comment of the dotted `key`, on one line; `None` for a key the schema does not know.
pub fn description_of(key: &str) -> Option<&'static str> {
    let segments: Vec<String> = key.split('.').map(str::to_owned).collect();
    lookup(&segments).map(|field| field.description.as_str())
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
                | ValueKind::BoolOr(_)
                | ValueKind::Integer { .. }
                | ValueKind::String
                | ValueKind::HttpUrl
                | ValueKind::Enum(_)
                | ValueKind::StringList
                | ValueKind::PackageList
                | ValueKind::StringMap
                | ValueKind::ModelList
                | ValueKind::HookList
                | ValueKind::EntryMap { .. } => out.push((key, field)),
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
        let mut default = field
            .default
            .as_ref()
            .map_or_else(|| "—".to_owned(), |value| format!("`{value}`"));
        // An empty settings file gets the recommended strategy's value where it sets one.
        if let Some(value) = recommended_value(&segments) {
            default =
                format!("{default}; `{value}` under `contextStrategy` `recommended` (the default)");
        }
        let project = match (project_may_set(&segments), field.loads_after_trust) {
            (true, true) => "kept; loads after trust",
            (true, false) => "yes",
            (false, _) => "no",
        };
        out.push_str(&format!(
            "| `{key}` | {} | {default} | {project} | {} |\n",
            accepts(&field.kind),
            field.description.replace('|', "\\|"),
        ));
    }
    out
}

/// The value the recommended strategy's layer gives the key `segments`, if it sets one.
fn recommended_value(segments: &[&str]) -> Option<Value> {
    let layer = Value::Object(crate::Settings::recommended_layer());
    segments
        .iter()
        .try_fold(&layer, |value, segment| value.get(segment))
        .cloned()
}

fn accepts(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Bool => "boolean".to_owned(),
        ValueKind::BoolOr(words) => {
            let words: Vec<String> = words.iter().map(|word| format!("`{word}`")).collect();
            format!("boolean, {}", words.join(", "))
        }
        ValueKind::Integer { min, max } if *max == i64::MAX => format!("integer ≥ {min}"),
        ValueKind::Integer { min, max } => format!("integer {min}–{max}"),
        ValueKind::String => "string".to_owned(),
        ValueKind::HttpUrl => "`http://` or `https://` URL".to_owned(),
        ValueKind::Enum(values) => {
            let values: Vec<String> = values.iter().map(|value| format!("`{value}`")).collect();
            values.join(", ")
        }
        ValueKind::StringList => "array of strings".to_owned(),
        ValueKind::PackageList => "array of package sources".to_owned(),
        ValueKind::StringMap => "object of strings".to_owned(),
        ValueKind::ModelList => "array of models".to_owned(),
        ValueKind::HookList => "array of hooks".to_owned(),
        ValueKind::EntryMap { keyed, .. } => format!("object keyed `{keyed}`"),
        ValueKind::Object(_) => "object".to_owned(),
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
}
