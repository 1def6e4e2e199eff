//! `reasoning_details`, the structured reasoning OpenRouter (and gateways like it) send on Chat
//! Completions: a list of `reasoning.text`, `reasoning.summary` and `reasoning.encrypted` items
//! that must come back with the assistant message (Gemini and Anthropic models behind the
//! gateway refuse a tool turn without them). As Pi 1.6.0 keeps them: the list, as JSON text, is
//! the thinking block's signature; streamed pieces of text or summary are joined into one item.

use ctxkit_protocol::JsonObject;
use serde_json::Value;

/// Whether `detail` is one item Pi accepts: an object of a known type with its text field, and
/// `id`, `format`, `index` of the right type when present.
pub(crate) fn is_detail(detail: &Value) -> bool {
    let Some(object) = detail.as_object() else {
        return false;
    };
    let common = object
        .get("id")
        .is_none_or(|id| id.is_null() || id.is_string())
        && object.get("format").is_none_or(Value::is_string)
        && object.get("index").is_none_or(Value::is_number);
    if !common {
        return false;
    }
    let text_field = |name: &str| object.get(name).is_some_and(Value::is_string);
    match object.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => text_field("summary"),
        Some("reasoning.encrypted") => text_field("data"),
        Some("reasoning.text") => {
            text_field("text")
                && object
                    .get("signature")
                    .is_none_or(|signature| signature.is_null() || signature.is_string())
        }
        _ => false,
    }
}

/// Adds a streamed item: a text or summary piece after one of its kind continues it (the first
/// `id`, `format`, `index` and text signature that arrive are kept); anything else is a new item.
pub(crate) fn append(details: &mut Vec<Value>, detail: &Value) {
    let kind = detail.get("type").and_then(Value::as_str);
    let joined = match kind {
        Some("reasoning.text") => Some("text"),
        Some("reasoning.summary") => Some("summary"),
        _ => None,
    };
    let last = details.last_mut().and_then(Value::as_object_mut);
    let (Some(field), Some(last)) = (joined, last) else {
        details.push(detail.clone());
        return;
    };
    if last.get("type").and_then(Value::as_str) != kind {
        details.push(detail.clone());
        return;
    }
    let piece = detail.get(field).and_then(Value::as_str).unwrap_or("");
    if let Some(Value::String(text)) = last.get_mut(field) {
        text.push_str(piece);
    }
    if field == "text" {
        fill(last, detail, "signature", is_set);
    }
    fill(last, detail, "id", |value| !value.is_null());
    fill(last, detail, "index", |value| !value.is_null());
    fill(last, detail, "format", is_set);
}

/// Takes `detail`'s `name` into `last` when `last` has none that `usable` accepts and `detail`
/// has one (JavaScript's `??=` and `||=`).
fn fill(last: &mut JsonObject, detail: &Value, name: &str, usable: fn(&Value) -> bool) {
    if last.get(name).is_some_and(usable) {
        return;
    }
    if let Some(value) = detail.get(name).filter(|value| usable(value)) {
        last.insert(name.to_owned(), value.clone());
    }
}

/// A value JavaScript would take as set (`||=`): not null, not an empty string.
fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Bool(flag) => *flag,
        Value::Number(_) | Value::Array(_) | Value::Object(_) => true,
    }
}

/// The items a thinking block's signature holds, when it is a non-empty list of valid ones.
pub(crate) fn from_signature(signature: &str) -> Option<Vec<Value>> {
    let parsed: Value = serde_json::from_str(signature).ok()?;
    let items = parsed.as_array()?;
    (!items.is_empty() && items.iter().all(is_detail)).then(|| items.clone())
}

/// An encrypted item an older Pi kept as a tool call's `thoughtSignature`.
pub(crate) fn from_tool_call_signature(signature: &str) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature).ok()?;
    let usable = is_detail(&parsed)
        && parsed.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
        && parsed
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty())
        && parsed
            .get("data")
            .and_then(Value::as_str)
            .is_some_and(|data| !data.is_empty());
    usable.then_some(parsed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn items_are_checked_as_pi_checks_them() {
        assert!(is_detail(
            &json!({"type": "reasoning.text", "text": "a", "signature": null, "index": 0})
        ));
        assert!(is_detail(
            &json!({"type": "reasoning.encrypted", "data": "x", "id": "r1", "format": "google-gemini-v1"})
        ));
        assert!(is_detail(
            &json!({"type": "reasoning.summary", "summary": "s"})
        ));
        assert!(!is_detail(
            &json!({"type": "reasoning.summary", "text": "s"})
        ));
        assert!(!is_detail(
            &json!({"type": "reasoning.text", "text": "a", "index": "0"})
        ));
        assert!(!is_detail(&json!({"type": "other", "text": "a"})));
        assert!(!is_detail(&json!("reasoning.text")));
    }

    #[test]
    fn streamed_pieces_of_one_kind_are_one_item_and_encrypted_ones_stay_apart() {
        let mut details = Vec::new();
        for piece in [
            json!({"type": "reasoning.text", "text": "Let me ", "index": 0, "format": "unknown"}),
            json!({"type": "reasoning.text", "text": "think.", "signature": "sig", "id": "t1"}),
            json!({"type": "reasoning.encrypted", "data": "AAA", "id": "e1"}),
            json!({"type": "reasoning.encrypted", "data": "BBB", "id": "e2"}),
            json!({"type": "reasoning.summary", "summary": "One"}),
            json!({"type": "reasoning.summary", "summary": " line."}),
        ] {
            append(&mut details, &piece);
        }
        assert_eq!(
            details,
            [
                json!({"type": "reasoning.text", "text": "Let me think.", "index": 0,
                    "format": "unknown", "signature": "sig", "id": "t1"}),
                json!({"type": "reasoning.encrypted", "data": "AAA", "id": "e1"}),
                json!({"type": "reasoning.encrypted", "data": "BBB", "id": "e2"}),
                json!({"type": "reasoning.summary", "summary": "One line."}),
            ]
        );
    }

    #[test]
    fn a_signature_is_read_back_only_when_every_item_is_valid() {
        let list = json!([{"type": "reasoning.encrypted", "data": "x"}]).to_string();
        assert_eq!(from_signature(&list).map(|items| items.len()), Some(1));
        assert_eq!(from_signature("[]"), None);
        assert_eq!(from_signature("reasoning_content"), None);
        assert_eq!(
            from_signature(&json!([{"type": "reasoning.encrypted"}]).to_string()),
            None
        );
        let legacy = json!({"type": "reasoning.encrypted", "data": "x", "id": "r"}).to_string();
        assert!(from_tool_call_signature(&legacy).is_some());
        let no_id = json!({"type": "reasoning.encrypted", "data": "x"}).to_string();
        assert!(from_tool_call_signature(&no_id).is_none());
    }
}
