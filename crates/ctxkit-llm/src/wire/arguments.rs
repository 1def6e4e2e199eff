//! A finished tool call's arguments as the session format stores them: always an object. Text
//! that is not one is stored as `{}` with an `argumentsError` holding the reason and the text
//! received (Pi 1.6.0's form, which its agent and ctxkit's refuse to run), never as a JSON string:
//! a string `input` sent back to Anthropic is refused with 400, so a Pi resuming such a session
//! failed on every later request (QA 2026-12-07).

use ctxkit_protocol::{JsonObject, ToolCall};
use serde_json::Value;

/// The deepest arguments kept as JSON. A session entry holds them four levels down and a
/// protocol answer deeper still, while a JSON line may nest 127 levels: arguments nested 123
/// deep made a reply no session could store, and the run ended with it lost.
const MAX_ARGUMENT_NESTING: usize = 64;

/// Arguments text from the wire: `""` is `{}`; text with a raw control character or an invalid
/// escape inside a string is read repaired, as Pi reads it (`"C:\Users"`, a raw newline), and a
/// lone surrogate escape (`\ud83d` without its pair) as U+FFFD, as JavaScript writes it; the error
/// text to store otherwise.
pub(crate) fn read_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(JsonObject::new()));
    }
    let parsed = serde_json::from_str::<Value>(text).or_else(|error| {
        let surrogates = ctxkit_protocol::repair_lone_surrogates(text);
        let repaired = repaired_strings(&surrogates);
        if repaired == text {
            return Err(error);
        }
        serde_json::from_str::<Value>(&repaired)
    });
    match parsed {
        Ok(value) => match problem(&value) {
            None => Ok(value),
            Some(reason) => Err(received(&reason, text)),
        },
        Err(error) => Err(received(&error.to_string(), text)),
    }
}

/// Arguments that arrived as JSON, when they are an object nested no deeper than the session
/// format holds; the error text to store otherwise.
pub(crate) fn checked_arguments(value: Value) -> Result<Value, String> {
    match problem(&value) {
        None => Ok(value),
        Some(reason) => Err(received(&reason, &value.to_string())),
    }
}

/// Why `value` cannot be stored as a call's arguments, if it cannot.
fn problem(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("Tool arguments must be a JSON object".to_owned());
    }
    nests_deeper_than(value, MAX_ARGUMENT_NESTING)
        .then(|| format!("Tool arguments nest deeper than {MAX_ARGUMENT_NESTING} levels"))
}

/// Stores `arguments` on `call`: the object, or `{}` with the error beside it.
pub(crate) fn set_arguments(call: &mut ToolCall, arguments: Result<Value, String>) {
    match arguments {
        Ok(value) => {
            call.arguments = value;
            call.extra.shift_remove(ToolCall::ARGUMENTS_ERROR_KEY);
        }
        Err(error) => {
            call.arguments = Value::Object(JsonObject::new());
            call.extra.insert(
                ToolCall::ARGUMENTS_ERROR_KEY.to_owned(),
                Value::String(error),
            );
        }
    }
}

/// Pi's `argumentsError` text: the reason, then what was received.
fn received(reason: &str, text: &str) -> String {
    format!("{reason}\n\nReceived arguments:\n{text}")
}

/// `text` with every raw control character inside a string escaped and every backslash before
/// a character JSON does not escape doubled (Pi 1.6.0's repair of a model's arguments).
fn repaired_strings(text: &str) -> String {
    let mut repaired = String::with_capacity(text.len() + 8);
    let mut in_string = false;
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        if !in_string {
            repaired.push(character);
            in_string = character == '"';
            continue;
        }
        match character {
            '"' => {
                repaired.push('"');
                in_string = false;
            }
            '\\' => match characters.peek().copied() {
                Some(next @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                    characters.next();
                    repaired.push('\\');
                    repaired.push(next);
                }
                Some('u') if unicode_escape_follows(&characters) => repaired.push('\\'),
                Some(_) | None => repaired.push_str("\\\\"),
            },
            control if u32::from(control) < 0x20 => repaired.push_str(&escaped(control)),
            other => repaired.push(other),
        }
    }
    repaired
}

/// Whether `u` and four hex digits come next.
fn unicode_escape_follows(characters: &std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    let mut ahead = characters.clone();
    ahead.next() == Some('u') && (0..4).all(|_| ahead.next().is_some_and(|c| c.is_ascii_hexdigit()))
}

fn escaped(control: char) -> String {
    match control {
        '\u{8}' => "\\b".to_owned(),
        '\u{c}' => "\\f".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        other => format!("\\u{:04x}", u32::from(other)),
    }
}

/// Whether objects and arrays in `value` nest more than `limit` levels (a scalar is level 0).
fn nests_deeper_than(value: &Value, limit: usize) -> bool {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(fields) => Box::new(fields.values()),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => return false,
    };
    limit == 0
        || children
            .into_iter()
            .any(|child| nests_deeper_than(child, limit - 1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_is_read_and_empty_text_is_an_empty_object() {
        assert_eq!(read_arguments(r#"{"path": "a"}"#), Ok(json!({"path": "a"})));
        assert_eq!(read_arguments("  "), Ok(json!({})));
    }

    /// Pi 1.6.0 reads a raw newline or tab inside a string, and a Windows path's lone
    /// backslashes, repaired; ctxkit refused such a call.
    #[test]
    fn strings_with_raw_control_characters_or_bad_escapes_are_read_repaired() {
        assert_eq!(
            read_arguments("{\"content\": \"line 1\nline 2\ttab\"}"),
            Ok(json!({"content": "line 1\nline 2\ttab"}))
        );
        assert_eq!(
            read_arguments(r#"{"path": "C:\Users\me\notes.txt", "x": "\u00e9\"q\""}"#),
            Ok(json!({"path": "C:\\Users\\me\notes.txt", "x": "é\"q\""}))
        );
        assert_eq!(read_arguments(r#"{"a": "end\"#).map(|_| ()).ok(), None);
        // A lone surrogate escape, as Pi's JSON.parse takes it (QA 2026-12-07: refused).
        assert_eq!(
            read_arguments(r#"{"content": "a\ud83d b"}"#),
            Ok(json!({"content": "a\u{fffd} b"}))
        );
    }

    /// QA 2026-12-07: text that is no object was stored as a JSON string.
    #[test]
    fn text_that_is_no_object_gives_pis_error_text() {
        let error = read_arguments(r#"{"path": "."#).unwrap_err();
        assert!(error.starts_with("EOF while parsing"), "{error}");
        assert!(
            error.ends_with("\n\nReceived arguments:\n{\"path\": \"."),
            "{error}"
        );
        assert_eq!(
            read_arguments("[1, 2]").unwrap_err(),
            "Tool arguments must be a JSON object\n\nReceived arguments:\n[1, 2]"
        );
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused() {
        assert!(!nests_deeper_than(&json!({"a": [1]}), 2));
        assert!(nests_deeper_than(&json!({"a": [[1]]}), 2));
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let deep = format!(r#"{{"path": "a.txt", "x": {}}}"#, nested(123));
        let error = read_arguments(&deep).unwrap_err();
        assert!(error.starts_with("Tool arguments nest deeper than 64 levels"));
        let fine = format!(r#"{{"path": "a.txt", "x": {}}}"#, nested(40));
        assert!(read_arguments(&fine).unwrap().is_object());
    }

    #[test]
    fn set_arguments_puts_the_error_beside_an_empty_object() {
        let mut call: ToolCall = serde_json::from_value(json!({
            "type": "toolCall", "id": "c", "name": "read", "arguments": {}
        }))
        .unwrap();
        set_arguments(&mut call, Err("bad".to_owned()));
        assert_eq!(call.arguments, json!({}));
        assert_eq!(call.arguments_error(), Some("bad"));
        set_arguments(&mut call, Ok(json!({"path": "a"})));
        assert_eq!(call.arguments_error(), None);
    }
}
