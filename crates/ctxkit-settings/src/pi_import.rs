//! What of a Pi `models.json` ctxkit's settings can hold, for `ctxkit config import-pi`: each
//! provider Pi routes to a host of its own becomes an `llm.providers` entry and each model it
//! declares an `llm.models` entry, both checked by the settings' own schema; what they cannot hold
//! is listed with why. Nothing a value names is run or read: a `!command` key and a `$NAME`
//! reference are left out and said, as ctxkit runs nothing a file names.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::pi_files::{UnreadablePiModels, objects_of, read_models};
use crate::settings::schema;
use crate::settings::validate::{self, CheckReport};

/// Pi's window for a model whose entry gives none.
const PI_DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// Pi's output limit for a model whose entry gives none.
const PI_DEFAULT_MAX_TOKENS: u64 = 16_384;

/// The fields of a Pi model entry that `llm.models` holds under another name or the same one.
const MODEL_FIELDS: [&str; 8] = [
    "id",
    "name",
    "contextWindow",
    "maxTokens",
    "reasoning",
    "input",
    "cost",
    "compat",
];

/// What an import would write, and what it leaves out.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PiImport {
    /// `llm.providers` entries by provider name, in the file's order:
    /// `{baseUrl, api?, apiKey?, headers?}`.
    pub endpoints: Vec<(String, Value)>,
    /// `llm.models` entries, in the file's order.
    pub models: Vec<Value>,
    /// What the settings cannot hold.
    pub left_out: Vec<LeftOut>,
}

/// One part of the file the settings cannot hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Where in the file: `providers.lab.apiKey`.
    pub what: String,
    /// Why, and what to do instead.
    pub why: String,
}

impl LeftOut {
    /// A whole provider left out, with the `models` of it that go with it.
    pub fn provider(name: &str, models: usize, why: String) -> Self {
        let with_models = match models {
            0 => String::new(),
            1 => " (and its model)".to_owned(),
            _ => format!(" (and its {models} models)"),
        };
        Self {
            what: format!("providers.{name}{with_models}"),
            why,
        }
    }
}

/// Reads the Pi `models.json` at `path` as Pi reads it (a BOM, `//` comments, trailing commas)
/// into what ctxkit's settings can hold. A missing file imports nothing.
pub fn import_pi_models(path: &Path) -> Result<PiImport, UnreadablePiModels> {
    let providers = read_models(path).map_err(|reason| UnreadablePiModels {
        file: path.to_owned(),
        reason,
    })?;
    let mut import = PiImport::default();
    for (name, entry) in objects_of(providers) {
        import_provider(&name, &entry, &mut import);
    }
    Ok(import)
}

fn import_provider(name: &str, entry: &Map<String, Value>, import: &mut PiImport) {
    let mut endpoint = credentials(name, entry, &mut import.left_out);
    note_unread(name, entry, &mut import.left_out);
    let base_url = text(entry, "baseUrl");
    let api = text(entry, "api").or_else(|| shared_model_api(entry));
    match &base_url {
        Some(base_url) => {
            endpoint.insert("baseUrl".to_owned(), json!(base_url));
            if let Some(api) = &api {
                endpoint.insert("api".to_owned(), json!(api));
            }
            if let Some(why) = refusal("llm.providers", &json!({ name: endpoint.clone() })) {
                // Its models would have no host to go to: they are left out with it.
                let models = entry
                    .get("models")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                import.left_out.push(LeftOut::provider(name, models, why));
                return;
            }
            import
                .endpoints
                .push((name.to_owned(), Value::Object(endpoint)));
        }
        None if !endpoint.is_empty() => import.left_out.push(LeftOut {
            what: format!("providers.{name}"),
            why: format!(
                "no `baseUrl`: ctxkit asks `{name}` at its own host, with the key `ctxkit login \
                 {name}` saves or the provider's variable"
            ),
        }),
        None => {}
    }
    let provider = ProviderDefaults {
        name,
        base_url: base_url.as_deref(),
        api: api.as_deref(),
        compat: entry.get("compat").and_then(Value::as_object),
    };
    let models = entry.get("models").and_then(Value::as_array);
    for (index, model) in models.into_iter().flatten().enumerate() {
        import_model(&provider, index, model, import);
    }
}

/// The `api` every model of a provider without one sets, when they all set the same (Pi takes
/// `api` at the provider or the model): ctxkit's endpoint holds one wire format for them all.
fn shared_model_api(entry: &Map<String, Value>) -> Option<String> {
    let models = entry.get("models").and_then(Value::as_array)?;
    let mut apis = models
        .iter()
        .filter_map(Value::as_object)
        .map(|model| text(model, "api"));
    let first = apis.next()??;
    apis.all(|api| api.as_deref() == Some(first.as_str()))
        .then_some(first)
}

/// The provider's `apiKey` and `headers` that are literals; the others go to `left_out`.
fn credentials(
    name: &str,
    entry: &Map<String, Value>,
    left_out: &mut Vec<LeftOut>,
) -> Map<String, Value> {
    let mut leave_out = |field: &str, why: String| {
        left_out.push(LeftOut {
            what: format!("providers.{name}.{field}"),
            why,
        });
    };
    let mut endpoint = Map::new();
    if let Some(key) = entry.get("apiKey").and_then(Value::as_str) {
        match literal(key) {
            Ok(key) => {
                endpoint.insert("apiKey".to_owned(), json!(key));
            }
            Err(why) => leave_out("apiKey", why),
        }
    }
    let mut headers = Map::new();
    let usable = |header: &str, value: &str| {
        is_header_name(header)
            && !value
                .chars()
                .any(|character| character.is_control() && character != '\t')
    };
    for (header, value) in entry
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match value.as_str().map(literal) {
            Some(Ok(value)) if usable(header, &value) => {
                headers.insert(header.clone(), json!(value));
            }
            Some(Ok(_)) => leave_out(
                &format!("headers.{header}"),
                "not an HTTP header (a name of letters, digits and `-`, a value of one line)"
                    .to_owned(),
            ),
            Some(Err(why)) => leave_out(&format!("headers.{header}"), why),
            None => leave_out(&format!("headers.{header}"), "not a string".to_owned()),
        }
    }
    if !headers.is_empty() {
        endpoint.insert("headers".to_owned(), Value::Object(headers));
    }
    endpoint
}

/// The provider's fields ctxkit has no place for, each with what to do instead.
fn note_unread(name: &str, entry: &Map<String, Value>, left_out: &mut Vec<LeftOut>) {
    let notes = [
        (
            entry.contains_key("oauth"),
            "oauth",
            "an account login: ctxkit has none; save an API key with `ctxkit login`",
        ),
        (
            entry.get("authHeader").and_then(Value::as_bool) == Some(true),
            "authHeader",
            "ctxkit sends the key as the wire format does; add `Authorization` under the entry's \
             `headers` if the host wants a bearer token",
        ),
        (
            entry.contains_key("modelOverrides"),
            "modelOverrides",
            "changes to built-in models are not carried; declare the whole model in `llm.models`",
        ),
    ];
    for (_, field, why) in notes.into_iter().filter(|(present, ..)| *present) {
        left_out.push(LeftOut {
            what: format!("providers.{name}.{field}"),
            why: why.to_owned(),
        });
    }
}

/// What a provider gives its models.
struct ProviderDefaults<'a> {
    name: &'a str,
    base_url: Option<&'a str>,
    api: Option<&'a str>,
    compat: Option<&'a Map<String, Value>>,
}

fn import_model(
    provider: &ProviderDefaults<'_>,
    index: usize,
    model: &Value,
    import: &mut PiImport,
) {
    let name = provider.name;
    let Some(fields) = model.as_object() else {
        return;
    };
    let id = text(fields, "id");
    let what = format!(
        "providers.{name}.models[{}]",
        id.as_deref()
            .map_or_else(|| index.to_string(), |id| format!("\"{id}\""))
    );
    let mut left_out = |why: String| {
        import.left_out.push(LeftOut {
            what: what.clone(),
            why,
        });
    };
    let Some(id) = id else {
        left_out("no `id`".to_owned());
        return;
    };
    // ctxkit sends every model of a provider to the provider's one endpoint.
    if let Some(own) = text(fields, "baseUrl").filter(|own| Some(own.as_str()) != provider.base_url)
    {
        left_out(format!(
            "its own `baseUrl` ({own}): ctxkit sends every model of `{name}` to one host"
        ));
        return;
    }
    if let Some(own) = text(fields, "api").filter(|own| Some(own.as_str()) != provider.api) {
        left_out(format!(
            "its own `api` ({own}): ctxkit asks every model of `{name}` in one wire format"
        ));
        return;
    }
    let mut entry = json!({
        "provider": name,
        "id": id,
        "contextWindow": fields.get("contextWindow").cloned().unwrap_or(json!(PI_DEFAULT_CONTEXT_WINDOW)),
        "maxOutput": fields.get("maxTokens").cloned().unwrap_or(json!(PI_DEFAULT_MAX_TOKENS)),
    });
    for field in ["name", "reasoning", "input", "cost"] {
        if let Some(value) = fields.get(field) {
            entry[field] = value.clone();
        }
    }
    let compat = merged_compat(
        provider.compat,
        fields.get("compat").and_then(Value::as_object),
    );
    if !compat.is_empty() {
        entry["compat"] = Value::Object(compat);
    }
    let unread: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|field| !MODEL_FIELDS.contains(field) && !["baseUrl", "api"].contains(field))
        .collect();
    let dropped = drop_unknown_compat(&mut entry);
    let mut not_carried: Vec<String> = unread.iter().map(|field| format!("`{field}`")).collect();
    not_carried.extend(dropped.iter().map(|flag| format!("`compat.{flag}`")));
    match refusal("llm.models", &json!([entry])) {
        Some(why) => left_out(why),
        None => {
            if !not_carried.is_empty() {
                left_out(format!(
                    "imported without {}, which ctxkit does not read",
                    not_carried.join(", ")
                ));
            }
            import.models.push(entry);
        }
    }
}

/// The provider's `compat` with the model's over it, field by field (as Pi merges them).
fn merged_compat(
    provider: Option<&Map<String, Value>>,
    model: Option<&Map<String, Value>>,
) -> Map<String, Value> {
    let mut merged = provider.cloned().unwrap_or_default();
    for (flag, value) in model.into_iter().flatten() {
        merged.insert(flag.clone(), value.clone());
    }
    merged
}

/// Removes the `compat` flags the schema does not know from a model `entry`; their names.
fn drop_unknown_compat(entry: &mut Value) -> Vec<String> {
    let mut report = CheckReport::default();
    if let Some(field) = llm_field("models") {
        validate::check_value("m", &field.kind, &json!([entry.clone()]), &mut report);
    }
    let mut dropped = Vec::new();
    for key in report.unknown_keys {
        if let Some(flag) = key.strip_prefix("m[0].compat.")
            && let Some(compat) = entry.get_mut("compat").and_then(Value::as_object_mut)
        {
            compat.remove(flag);
            dropped.push(flag.to_owned());
        }
    }
    if entry
        .get("compat")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
        && let Some(entry) = entry.as_object_mut()
    {
        entry.remove("compat");
    }
    dropped
}

/// Why the settings' check refuses `value` at `llm.<key>`, if it does: the first problem.
fn refusal(key: &str, value: &Value) -> Option<String> {
    let name = key.strip_prefix("llm.").unwrap_or(key);
    let field = llm_field(name)?;
    let mut report = CheckReport::default();
    validate::check_value(key, &field.kind, value, &mut report);
    if let Some(violation) = report.violations.first() {
        // The field within the entry: `contextWindow`, not `llm.models[0].contextWindow`.
        let field = violation
            .key
            .split_once("].")
            .map_or(violation.key.as_str(), |(_, field)| field);
        return Some(format!(
            "`{field}` is {}, and the settings take {}",
            violation.found, violation.expected
        ));
    }
    report
        .unknown_keys
        .first()
        .map(|key| format!("`{key}` is not a setting ctxkit reads"))
}

fn llm_field(name: &str) -> Option<&'static schema::Field> {
    schema::lookup(&["llm".to_owned(), name.to_owned()])
}

/// Whether `name` is an HTTP header name: a token of letters, digits and `!#$%&'*+-.^_`|~`.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|character| {
            character.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(character)
        })
}

/// A string field, trimmed, when not blank.
fn text(fields: &Map<String, Value>, name: &str) -> Option<String> {
    fields
        .get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The literal a Pi config value (`apiKey`, a header) stands for, read as Pi 1.6.0 reads it: `!`
/// first runs a command, `$NAME` and `${NAME}` read a variable, `$$` and `$!` are `$` and `!`.
/// Why not, for a value that runs or reads something.
fn literal(value: &str) -> Result<String, String> {
    if value.starts_with('!') {
        return Err(
            "runs a command for its value: ctxkit runs nothing a file names; set the value \
             itself, or save the key with `ctxkit login`"
                .to_owned(),
        );
    }
    let mut out = String::new();
    let mut chars = value.char_indices().peekable();
    while let Some((index, current)) = chars.next() {
        if current != '$' {
            out.push(current);
            continue;
        }
        match chars.peek().map(|(_, next)| *next) {
            Some(next @ ('$' | '!')) => {
                out.push(next);
                chars.next();
            }
            Some(next) if next == '{' || next == '_' || next.is_ascii_alphabetic() => {
                if let Some(name) = variable_name(&value[index + 1..]) {
                    return Err(format!(
                        "reads the variable `{name}`: ctxkit reads no variable a file names; \
                         set the value itself, or use the provider's own variable"
                    ));
                }
                out.push(current);
            }
            _ => out.push(current),
        }
    }
    Ok(out)
}

/// The variable a `$` reference starting `rest` names (`NAME…` or `{NAME}`), as Pi matches it.
fn variable_name(rest: &str) -> Option<&str> {
    let is_name = |name: &str| {
        name.chars()
            .next()
            .is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
            && name
                .chars()
                .all(|character| character == '_' || character.is_ascii_alphanumeric())
    };
    if let Some(braced) = rest.strip_prefix('{') {
        let name = &braced[..braced.find('}')?];
        return is_name(name).then_some(name);
    }
    let end = rest
        .find(|character: char| character != '_' && !character.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let name = &rest[..end];
    is_name(name).then_some(name)
}

#[cfg(test)]
#[path = "pi_import_tests.rs"]
mod tests;
