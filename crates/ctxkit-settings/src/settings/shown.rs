//! A settings value as ctxkit shows it to the user (`ctxkit config get|list`, the trust review):
//! text, JSON for `--json` records, secrets masked. The editor's only view of a value: no raw
//! document leaves this crate for another to walk.

use serde::Serialize;
use serde_json::Value;

/// What `config list` and the trust review put in place of a secret.
const MASK: &str = "<redacted>";

/// A value of a settings file (or a key's default), numbers as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SettingValue(Value);

impl SettingValue {
    pub(crate) fn new(value: Value) -> Self {
        Self(value)
    }

    /// The JSON value.
    pub(crate) fn into_value(self) -> Value {
        self.0
    }

    /// A string value: one that does not come from a settings file (`CTXKIT_STORE` in
    /// `config list`).
    pub fn text(text: String) -> Self {
        Self(Value::String(text))
    }

    /// The value with the string at `field` of an object replaced by `show` of it (the store's
    /// URL inside `config get store`).
    #[must_use]
    pub fn with_field_shown(self, field: &str, show: impl Fn(&str) -> String) -> Self {
        let mut value = self.0;
        if let Some(Value::String(text)) = value.get_mut(field) {
            *text = show(text);
        }
        Self(value)
    }

    /// The value when it is a string.
    pub fn as_text(&self) -> Option<&str> {
        self.0.as_str()
    }

    /// `null`: what a hook record shows for a field the hook lacks.
    pub(crate) fn null() -> Self {
        Self(Value::Null)
    }

    /// Strings as they are, everything else as compact JSON (`config get`, `config list`). A
    /// string that would not read as itself is quoted as JSON: a blank one or one with space
    /// around it (four spaces showed as nothing), and one spelling another value (`"true"`
    /// printed as the boolean would; QA r99).
    pub fn display_text(&self) -> String {
        match &self.0 {
            Value::String(text) if reads_as_itself(text) => text.clone(),
            Value::String(_) => self.0.to_string(),
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::Array(_)
            | Value::Object(_) => self.0.to_string(),
        }
    }

    /// A non-empty array, as compact JSON; `None` for anything else (a hook's `events`: absent or
    /// empty means every event).
    pub fn non_empty_array_text(&self) -> Option<String> {
        match &self.0 {
            Value::Array(items) if !items.is_empty() => Some(self.0.to_string()),
            Value::Array(_)
            | Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Object(_) => None,
        }
    }

    /// The value of the dotted `key` with API keys and request header values (which may hold
    /// tokens) masked at any depth, so a listing can be pasted into a bug report or a log.
    /// `config get KEY` still shows a value asked for by name ([`Self::asked_for`]).
    pub fn redacted(self, key: &str) -> Self {
        Self(redact(key, self.0))
    }

    /// The value `config get KEY` prints: a secret asked for by its own key (`llm.apiKey`,
    /// `llm.headers.X-Token`) as it is, every secret below the key (`config get llm`,
    /// `config get llm.headers`) masked as [`Self::redacted`] masks it.
    pub fn asked_for(self, key: &str) -> Self {
        if names_secret(key) {
            self
        } else {
            self.redacted(key)
        }
    }
}

/// Whether `text` printed bare reads as the string it is: not blank, no space around it, not the
/// JSON of a number, a boolean, `null`, an array or an object.
fn reads_as_itself(text: &str) -> bool {
    !text.trim().is_empty() && text.trim() == text && serde_json::from_str::<Value>(text).is_err()
}

/// Compact JSON, strings quoted.
impl std::fmt::Display for SettingValue {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

/// Whether the dotted `key` is itself a secret: an API key, the server's token, or one request
/// header's value.
fn names_secret(key: &str) -> bool {
    let mut segments = key.rsplit('.');
    let name = segments.next().unwrap_or(key);
    name.eq_ignore_ascii_case("apiKey")
        || key == "server.token"
        || segments.next() == Some("headers")
}

/// A value found where `key` wanted another type, as a warning quotes it: a secret stays masked
/// however it was mistyped (`"apiKey": ["sk-…"]`, `"headers": "Bearer …"`, `"token": 5`).
pub(crate) fn found_text(key: &str, value: &Value) -> String {
    if names_secret(key) && !value.is_null() {
        return Value::String(MASK.to_owned()).to_string();
    }
    // A number too large for JSON's doubles is kept as a marked string: shown as written (QA
    // 2026-12-07: `found "\u0001ctxkit:number:999…"`).
    super::numbers::restore(redact(key, value.clone()).to_string())
}

fn redact(key: &str, value: Value) -> Value {
    let name = key.rsplit('.').next().unwrap_or(key);
    let secret_name = name.eq_ignore_ascii_case("apiKey") || key == "server.token";
    if secret_name && !value.is_null() {
        return Value::String(MASK.to_owned());
    }
    match value {
        Value::Object(object) if name == "headers" => Value::Object(
            object
                .into_iter()
                .map(|(header, _)| (header, Value::String(MASK.to_owned())))
                .collect(),
        ),
        // Headers written as anything but an object are still header values.
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_)
            if name == "headers" =>
        {
            Value::String(MASK.to_owned())
        }
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .map(|(field, value)| {
                    // The whole dotted key: `server.token` inside `server` is the server's token.
                    let value = redact(&format!("{key}.{field}"), value);
                    (field, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| redact(&format!("{key}[]"), item))
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// QA 2026-12-07: a number too large for a double showed its internal mark in the warning.
    #[test]
    fn a_number_kept_as_written_is_shown_as_written() {
        let protected: Value = serde_json::from_str(&super::super::numbers::protect(
            r#"{"a": 99999999999999999999999}"#,
        ))
        .unwrap();
        assert_eq!(
            found_text("compaction.reserveTokens", &protected["a"]),
            "99999999999999999999999"
        );
    }

    /// Attack: a secret of the wrong type was masked in the value `config get` printed but quoted
    /// whole by the warning beside it (`found ["sk-…"]`), and headers written as a string showed.
    #[test]
    fn a_mistyped_secret_is_masked_in_the_value_and_in_the_warning() {
        assert_eq!(
            found_text("llm.apiKey", &json!(["sk-ant-1"])),
            r#""<redacted>""#
        );
        assert_eq!(found_text("server.token", &json!(12345)), r#""<redacted>""#);
        assert_eq!(
            found_text("llm.headers", &json!("Bearer t")),
            r#""<redacted>""#
        );
        assert_eq!(
            found_text("llm.headers.X-Token", &json!(5)),
            r#""<redacted>""#
        );
        assert_eq!(
            found_text("llm", &json!({"headers": "Bearer t", "apiKey": [1]})),
            r#"{"headers":"<redacted>","apiKey":"<redacted>"}"#
        );
        assert_eq!(
            found_text("compaction.reserveTokens", &json!("x")),
            r#""x""#
        );
        assert_eq!(
            SettingValue::new(json!("Bearer t"))
                .redacted("llm.headers")
                .display_text(),
            MASK
        );
    }

    #[test]
    fn keys_and_header_values_are_masked_at_any_depth_and_strings_show_bare() {
        let value = SettingValue::new(json!({
            "providers": [{"apiKey": "sk-1", "headers": {"X-Token": "t"}, "name": "a"}],
            "baseUrl": "http://x"
        }));
        assert_eq!(
            value.redacted("llm").to_string(),
            r#"{"providers":[{"apiKey":"<redacted>","headers":{"X-Token":"<redacted>"},"name":"a"}],"baseUrl":"http://x"}"#
        );
        assert_eq!(
            SettingValue::new(json!("tok"))
                .redacted("server.token")
                .display_text(),
            MASK
        );
        assert_eq!(SettingValue::new(json!("light")).display_text(), "light");
        // What would read as another value, or as nothing, is quoted (QA r99).
        for (text, shown) in [
            ("true", r#""true""#),
            ("12", r#""12""#),
            ("    ", r#""    ""#),
            ("", r#""""#),
            (" dark", r#"" dark""#),
            ("a b", "a b"),
        ] {
            assert_eq!(SettingValue::new(json!(text)).display_text(), shown);
        }
        assert_eq!(SettingValue::new(json!("light")).to_string(), "\"light\"");
        assert_eq!(SettingValue::new(json!([])).non_empty_array_text(), None);
        assert_eq!(
            SettingValue::new(json!(["a"]))
                .non_empty_array_text()
                .as_deref(),
            Some(r#"["a"]"#)
        );
    }

    /// QA finding 4: `config get llm` printed `llm.apiKey` and the header values in full, while
    /// `config list` masked them.
    #[test]
    fn a_parent_is_shown_masked_and_a_secret_asked_for_by_name_as_it_is() {
        let llm = json!({"apiKey": "sk-1", "headers": {"X-Token": "t"}, "baseUrl": "http://x"});
        assert_eq!(
            SettingValue::new(llm).asked_for("llm").to_string(),
            r#"{"apiKey":"<redacted>","headers":{"X-Token":"<redacted>"},"baseUrl":"http://x"}"#
        );
        assert_eq!(
            SettingValue::new(json!({"X-Token": "t"}))
                .asked_for("llm.headers")
                .to_string(),
            r#"{"X-Token":"<redacted>"}"#
        );
        for (key, value) in [
            ("llm.apiKey", "sk-1"),
            ("llm.headers.X-Token", "t"),
            ("server.token", "tok"),
        ] {
            assert_eq!(
                SettingValue::new(json!(value))
                    .asked_for(key)
                    .display_text(),
                value
            );
        }
        let server = json!({"token": "tok", "maxRequestBytes": 1});
        assert_eq!(
            SettingValue::new(server).asked_for("server").to_string(),
            r#"{"token":"<redacted>","maxRequestBytes":1}"#
        );
    }
}
