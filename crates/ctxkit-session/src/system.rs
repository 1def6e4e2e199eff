//! System messages inside a transcript (Pi 0.87): each one patches the prompt state — content is
//! appended to the base prompt, `sections` are set or (with `null`) removed by name, tools are added
//! and removed by name. Replaying them gives the one system message a compaction records.

use ctxkit_protocol::{AgentMessage, JsonObject};
use serde_json::Value;

/// The text of a content value: a string as is, text blocks joined by a newline.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .map(|block| block.get("text").and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(_) | None => String::new(),
    }
}

/// Replays every system message of `messages` into one (Pi's `getCurrentSystemMessage`); `None`
/// when there is none and no tool is declared.
pub fn current_system_message<'a>(
    messages: impl IntoIterator<Item = &'a AgentMessage>,
) -> Option<AgentMessage> {
    let mut content = Vec::new();
    let mut sections = JsonObject::new();
    // Key order is insertion order (serde_json `preserve_order`), as in a JavaScript `Map`.
    let mut tools = JsonObject::new();
    let mut timestamp: Option<Value> = None;
    for message in messages {
        let AgentMessage::Unknown(object) = message else {
            continue;
        };
        if object.get("role").and_then(Value::as_str) != Some("system") {
            continue;
        }
        if timestamp.is_none() {
            timestamp = object
                .get("timestamp")
                .filter(|value| !value.is_null())
                .cloned();
        }
        let text = content_text(object.get("content"));
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(Value::Object(patch)) = object.get("sections") {
            for (name, value) in patch {
                if value.is_null() {
                    sections.shift_remove(name);
                } else {
                    sections.insert(name.clone(), value.clone());
                }
            }
        }
        for removed in tool_list(object, "toolsRemoved") {
            if let Some(name) = removed.get("name").and_then(Value::as_str) {
                tools.shift_remove(name);
            }
        }
        for added in tool_list(object, "toolsAdded") {
            if let Some(name) = added.get("name").and_then(Value::as_str) {
                tools.insert(name.to_owned(), added.clone());
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    let mut replay = JsonObject::new();
    replay.insert("role".to_owned(), Value::from("system"));
    replay.insert("content".to_owned(), Value::from(content.join("\n\n")));
    if !sections.is_empty() {
        replay.insert("sections".to_owned(), Value::Object(sections));
    }
    if !tools.is_empty() {
        replay.insert(
            "toolsAdded".to_owned(),
            Value::Array(tools.into_iter().map(|(_, tool)| tool).collect()),
        );
    }
    replay.insert(
        "timestamp".to_owned(),
        timestamp.unwrap_or_else(|| Value::from(0)),
    );
    Some(AgentMessage::Unknown(replay))
}

fn tool_list<'a>(object: &'a JsonObject, key: &str) -> &'a [Value] {
    object
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn system_messages_replay_into_one() {
        let messages = [
            message(
                json!({"role": "system", "content": "base", "sections": {"a": "A", "b": "B"},
                           "toolsAdded": [{"name": "read"}, {"name": "bash"}], "timestamp": 5}),
            ),
            message(json!({"role": "user", "content": "hi", "timestamp": 6})),
            message(
                json!({"role": "system", "content": [{"type": "text", "text": "more"}],
                           "sections": {"a": null, "c": "C"}, "toolsRemoved": [{"name": "read"}],
                           "toolsAdded": [{"name": "grep"}], "timestamp": 7}),
            ),
        ];
        let replay = serde_json::to_value(current_system_message(&messages).unwrap()).unwrap();
        assert_eq!(
            replay,
            json!({"role": "system", "content": "base\n\nmore", "sections": {"b": "B", "c": "C"},
                   "toolsAdded": [{"name": "bash"}, {"name": "grep"}], "timestamp": 5})
        );
        assert!(current_system_message(&messages[1..2]).is_none());
    }
}
