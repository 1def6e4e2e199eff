//! Every value the schema accepts reads into the typed settings. The typed read falls back to a
//! section's defaults when serde refuses what the check took, and a section on its defaults can
//! send a request elsewhere (`llm.baseUrl` gone); these tests hold that the fallback is never
//! reached, key by key, at each kind's edges.

use serde_json::{Map, Value, json};

use super::document::{self, KeyPath};
use super::schema::{self, Field, ValueKind};
use super::validate;
use crate::Settings;

/// Values `kind` accepts, at its edges: the smallest and largest numbers, empty and full lists,
/// objects with only their required fields and with every field.
fn accepted(kind: &ValueKind) -> Vec<Value> {
    match kind {
        ValueKind::Bool => vec![json!(true), json!(false)],
        ValueKind::BoolOr(words) => {
            let mut values = vec![json!(true), json!(false)];
            values.extend(words.iter().map(|word| json!(word)));
            values
        }
        ValueKind::Integer { min, max } => {
            let mut values = vec![json!(min), json!(max), json!(min / 2 + max / 2)];
            // A whole number written as a float, as JSON from other tools often is.
            if max.unsigned_abs() < 1 << 53 {
                values.push(json!(*max as f64));
            }
            values
        }
        ValueKind::String => vec![json!(""), json!("x"), json!(" ünï cödé ")],
        ValueKind::HttpUrl => vec![json!("http://127.0.0.1:1/v1"), json!("https://h")],
        ValueKind::Enum(words) => words.iter().map(|word| json!(word)).collect(),
        ValueKind::StringList => vec![json!([]), json!(["a", "", "ü"])],
        ValueKind::PackageList => vec![
            json!([]),
            json!(["npm:x", {"source": "y"}, {"source": "z", "extensions": [], "skills": ["a"],
                "prompts": [], "themes": [], "autoload": false}]),
        ],
        ValueKind::StringMap => vec![json!({}), json!({"X-A": "b", "": ""})],
        ValueKind::ModelList => model_lists(),
        ValueKind::HookList => vec![
            json!([]),
            json!([{"command": ["x"]}, {"command": ["x", "y"], "events": ["before_compact"],
                "timeoutMs": 0, "passEnv": ["A"]}, {"command": ["z"], "timeoutMs": 9_007_199_254_740_991_i64}]),
        ],
        ValueKind::EntryMap {
            fields, required, ..
        } => entry_maps(fields, required),
        ValueKind::Object(fields) => objects(fields, &[]),
    }
}

fn model_lists() -> Vec<Value> {
    let full = json!({
        "provider": "p", "id": "m.1", "name": "M", "contextWindow": 9_007_199_254_740_991_i64,
        "maxOutput": 0, "reasoning": true, "input": ["text", "image"], "cacheRetention": "long",
        "cost": {"input": 0, "output": 1.5, "cacheRead": 0.1, "cacheWrite": 2,
            "tiers": [{"inputTokensAbove": 200_000, "input": 6, "output": 22.5}]},
        "compat": {"forceAdaptiveThinking": true, "supportsDeveloperRole": false,
            "maxTokensField": "max_tokens", "thinkingFormat": crate::tree::THINKING_FORMATS[0]},
    });
    vec![
        json!([]),
        json!([{"provider": "p", "id": "m", "contextWindow": 0}, full]),
        json!([{"provider": "p", "id": "m", "contextWindow": 128_000.0, "maxOutput": 1e4}]),
    ]
}

/// An empty map, one entry with only the required fields, and one entry (its name with dots, as
/// model ids have) with every field.
fn entry_maps(fields: &[Field], required: &[String]) -> Vec<Value> {
    let mut values = vec![json!({})];
    for entry in objects(fields, required) {
        values.push(json!({ "gpt-4.1": entry }));
    }
    values
}

/// Objects of `fields`: the `required` ones alone (each at its first accepted value), then every
/// field at each of its accepted values.
fn objects(fields: &[Field], required: &[String]) -> Vec<Value> {
    let first = |field: &Field| accepted(&field.kind).into_iter().next();
    let minimal: Map<String, Value> = fields
        .iter()
        .filter(|field| required.contains(&field.key))
        .filter_map(|field| Some((field.key.clone(), first(field)?)))
        .collect();
    let widest = fields
        .iter()
        .map(|field| accepted(&field.kind).len())
        .max()
        .unwrap_or(0);
    let mut values = vec![Value::Object(minimal.clone())];
    for index in 0..widest {
        let mut full = minimal.clone();
        for field in fields {
            let samples = accepted(&field.kind);
            if let Some(sample) = samples.get(index).or_else(|| samples.last()) {
                full.insert(field.key.clone(), sample.clone());
            }
        }
        values.push(Value::Object(full));
    }
    values
}

/// The document the typed read deserializes for `key` set to `value`.
fn document_with(key: &str, value: &Value) -> Map<String, Value> {
    let path = KeyPath::parse(key).unwrap();
    let mut document = Map::new();
    document::set_path(&mut document, &path, value.clone());
    document
}

#[test]
fn every_accepted_value_of_every_key_reads_into_the_typed_settings() {
    let mut checked = 0;
    for (key, field) in schema::leaves() {
        for value in accepted(&field.kind) {
            let document = document_with(&key, &value);
            let report = validate::check_document(&document);
            assert!(
                report.violations.is_empty() && report.unknown_keys.is_empty(),
                "the sample for `{key}` is not accepted: {value} ({report:?})"
            );
            let read = super::numbers::with_whole_numbers(Value::Object(document));
            if let Err(error) = serde_json::from_value::<Settings>(read) {
                panic!("`{key}` = {value} is accepted but does not read: {error}");
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} values checked");
}

/// Every key at once, each at its last (fullest) accepted value: the sections read together.
#[test]
fn every_key_set_at_once_reads() {
    let mut document = Map::new();
    for (key, field) in schema::leaves() {
        if let Some(value) = accepted(&field.kind).pop() {
            document::set_path(&mut document, &KeyPath::parse(&key).unwrap(), value);
        }
    }
    let report = validate::check_document(&document);
    assert!(report.violations.is_empty(), "{report:?}");
    let read = super::numbers::with_whole_numbers(Value::Object(document));
    serde_json::from_value::<Settings>(read).unwrap();
}
