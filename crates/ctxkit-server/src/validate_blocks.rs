//! The content blocks of a message a client appends, checked one by one: what a provider would
//! refuse, or what the view would hand on as it is (`view.get` promises a list a provider accepts),
//! is refused with the block it is in. QA (serve): two calls of one id and a result for each, a
//! call without an id or a name, arguments that are a string, a block of an unknown type, a text
//! without text, an image of `text/html` or with data that is not base64, and a stop reason no
//! reader knows were all stored and handed on.

use std::collections::HashSet;

use base64::Engine as _;
use serde_json::{Map, Value};

/// The stop reasons Pi writes and reads.
const STOP_REASONS: [&str; 5] = ["stop", "length", "toolUse", "error", "aborted"];

/// Checks the blocks of `message` (an object whose `role` and fields' shapes were checked).
pub(crate) fn check_blocks(message: &Map<String, Value>, role: &str) -> Result<(), String> {
    if let Some(reason) = message.get("stopReason").filter(|reason| !reason.is_null()) {
        let known = reason
            .as_str()
            .is_some_and(|reason| STOP_REASONS.contains(&reason));
        if !known {
            return Err(format!(
                "`message.stopReason` must be one of {}, not `{}`",
                STOP_REASONS.join(", "),
                shown(reason)
            ));
        }
    }
    let Some(Value::Array(blocks)) = message.get("content") else {
        return Ok(());
    };
    let mut call_ids = HashSet::new();
    for (index, block) in blocks.iter().enumerate() {
        check_block(block, role, &mut call_ids)
            .map_err(|reason| format!("`message.content[{index}]`: {reason}"))?;
    }
    Ok(())
}

fn check_block<'a>(
    block: &'a Value,
    role: &str,
    call_ids: &mut HashSet<&'a str>,
) -> Result<(), String> {
    let Some(fields) = block.as_object() else {
        return Err(format!("a block must be an object, not `{}`", shown(block)));
    };
    let kind = fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "text" => string_field(fields, "text", true),
        "image" => check_image(fields),
        "thinking" if role == "assistant" => string_field(fields, "thinking", true),
        "toolCall" if role == "assistant" => {
            string_field(fields, "id", false)?;
            string_field(fields, "name", false)?;
            if !fields.get("arguments").is_some_and(Value::is_object) {
                return Err("a `toolCall`'s `arguments` must be an object".to_owned());
            }
            let id = fields.get("id").and_then(Value::as_str).unwrap_or_default();
            if !call_ids.insert(id) {
                return Err(format!(
                    "a second `toolCall` with the id `{}`: each call of a reply has its own id",
                    shown(&Value::String(id.to_owned()))
                ));
            }
            Ok(())
        }
        other => {
            let expected = if role == "assistant" {
                "text, thinking, toolCall or image"
            } else {
                "text or image"
            };
            Err(format!(
                "a block of type `{}` in {} `{role}` message; expected {expected}",
                shown(&Value::String(other.to_owned())),
                if role == "assistant" { "an" } else { "a" }
            ))
        }
    }
}

/// The image types every provider takes (Anthropic's four; OpenAI and Gemini take them too).
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// `fields[name]` is a string, and not empty or blank unless `empty_allowed`.
fn string_field(
    fields: &Map<String, Value>,
    name: &str,
    empty_allowed: bool,
) -> Result<(), String> {
    match fields.get(name).and_then(Value::as_str) {
        Some(text) if empty_allowed || !text.trim().is_empty() => Ok(()),
        Some(_) => Err(format!("`{name}` must not be empty")),
        None => Err(format!("`{name}` must be a string")),
    }
}

/// An image block: an `image/…` media type and base64 data.
fn check_image(fields: &Map<String, Value>) -> Result<(), String> {
    string_field(fields, "mimeType", false)?;
    let media_type = fields
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !IMAGE_TYPES.contains(&media_type) {
        return Err(format!(
            "an image's `mimeType` must be one of {}, not `{}`",
            IMAGE_TYPES.join(", "),
            shown(&Value::String(media_type.to_owned()))
        ));
    }
    string_field(fields, "data", true)?;
    let data = fields
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if base64::engine::general_purpose::STANDARD
        .decode(data)
        .is_err()
    {
        return Err("an image's `data` must be base64 (the standard alphabet, padded)".to_owned());
    }
    Ok(())
}

/// At most 40 characters of `value` as JSON, for a message.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            value.to_string()
        }
    };
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks_of(role: &str, content: Value) -> Result<(), String> {
        let message = json!({"role": role, "content": content, "timestamp": 1});
        check_blocks(message.as_object().unwrap(), role)
    }

    #[test]
    fn what_a_provider_refuses_is_refused_with_its_block() {
        let call = |id: &str, name: &str, arguments: Value| json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments});
        for (content, said) in [
            (
                json!([call("d1", "ls", json!({})), call("d1", "ls", json!({}))]),
                "content[1]`: a second `toolCall` with the id `d1`",
            ),
            (
                json!([call("d1", "ls", json!("x"))]),
                "`arguments` must be an object",
            ),
            (json!([call("", "ls", json!({}))]), "`id` must not be empty"),
            (
                json!([call(" ", "ls", json!({}))]),
                "`id` must not be empty",
            ),
            (
                json!([call("d1", "  ", json!({}))]),
                "`name` must not be empty",
            ),
            (
                json!([call("d1", "", json!({}))]),
                "`name` must not be empty",
            ),
            (json!([{"type": "hologram"}]), "a block of type `hologram`"),
            (json!([{"type": "text"}]), "`text` must be a string"),
            (json!(["text"]), "a block must be an object"),
        ] {
            let refused = blocks_of("assistant", content.clone()).unwrap_err();
            assert!(refused.contains(said), "{content}: {refused}");
        }
        for (content, said) in [
            (
                json!([{"type": "image", "data": "!!!", "mimeType": "image/png"}]),
                "must be base64",
            ),
            (
                json!([{"type": "image", "data": "aGk=", "mimeType": "text/html"}]),
                "must be one of image/png",
            ),
            (
                json!([{"type": "image", "data": "aGk=", "mimeType": "image/svg+xml"}]),
                "must be one of image/png",
            ),
            (
                json!([{"type": "toolCall", "id": "a", "name": "b", "arguments": {}}]),
                "a block of type `toolCall` in a `user` message",
            ),
        ] {
            let refused = blocks_of("user", content.clone()).unwrap_err();
            assert!(refused.contains(said), "{content}: {refused}");
        }
        let stop = json!({"role": "assistant", "content": [], "stopReason": "exploded"});
        let refused = check_blocks(stop.as_object().unwrap(), "assistant").unwrap_err();
        assert!(
            refused.contains("`message.stopReason` must be one of"),
            "{refused}"
        );
    }

    #[test]
    fn what_pi_writes_passes() {
        let reply = json!([
            {"type": "thinking", "thinking": "", "thinkingSignature": "sig"},
            {"type": "text", "text": ""},
            {"type": "toolCall", "id": "a", "name": "read", "arguments": {"path": "x"}},
            {"type": "toolCall", "id": "b", "name": "read", "arguments": {}}
        ]);
        assert_eq!(blocks_of("assistant", reply), Ok(()));
        let image = json!([{"type": "text", "text": "see"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}]);
        assert_eq!(blocks_of("toolResult", image.clone()), Ok(()));
        assert_eq!(blocks_of("user", image), Ok(()));
        for reason in STOP_REASONS {
            let reply = json!({"role": "assistant", "content": [], "stopReason": reason});
            assert_eq!(
                check_blocks(reply.as_object().unwrap(), "assistant"),
                Ok(())
            );
        }
    }
}
