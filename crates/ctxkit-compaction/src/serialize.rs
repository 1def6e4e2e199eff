//! The conversation as plain text for a summarizer (so the model reads it rather than continuing it):
//! `[User]:`, `[Assistant]:`, `[Assistant tool calls]:`, `[Tool result]:` parts separated by blank
//! lines, tool results cut to 2000 UTF-16 units. Reasoning is left out (Pi 1.6): replayed thinking is
//! not what the model saw live, and it can make the request larger than the context it summarizes.

use ctxkit_protocol::{
    AgentMessage, ContentBlock, MessageContent, js_object_entries, js_stringify,
};
use serde_json::Value;

use ctxkit_tokens::utf16_len;

/// Tool results longer than this (in UTF-16 units) are truncated in serialized conversations.
pub const TOOL_RESULT_MAX_UNITS: usize = 2000;

/// Serializes provider-form messages (see `ctxkit_session::convert_to_llm`).
pub fn serialize_conversation(messages: &[AgentMessage]) -> String {
    let mut text = String::new();
    for message in messages {
        append_message(&mut text, message);
    }
    text
}

/// Appends the parts of one provider-form message to `text`, each after a blank line unless it is
/// the first: [`serialize_conversation`] one message at a time, so a long span is serialized
/// without a second copy of its messages.
pub(crate) fn append_message(text: &mut String, message: &AgentMessage) {
    let mut push = |part: String| {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&part);
    };
    match message {
        AgentMessage::User(user) => {
            let joined = joined_text(&user.content);
            if !joined.is_empty() {
                push(format!("[User]: {joined}"));
            }
        }
        AgentMessage::Assistant(assistant) => {
            let mut texts = Vec::new();
            let mut calls = Vec::new();
            for block in &assistant.content {
                match block {
                    ContentBlock::Text(block) => texts.push(block.text.as_str()),
                    ContentBlock::ToolCall(call) => calls.push(format!(
                        "{}({})",
                        call.name,
                        arguments_text(&call.arguments)
                    )),
                    ContentBlock::Thinking(_)
                    | ContentBlock::Image(_)
                    | ContentBlock::Unknown(_) => {}
                }
            }
            if !texts.is_empty() {
                push(format!("[Assistant]: {}", texts.join("\n")));
            }
            if !calls.is_empty() {
                push(format!("[Assistant tool calls]: {}", calls.join("; ")));
            }
        }
        AgentMessage::ToolResult(result) => {
            let joined = joined_text(&result.content);
            if !joined.is_empty() {
                push(format!(
                    "[Tool result]: {}",
                    truncate_for_summary(&joined, TOOL_RESULT_MAX_UNITS)
                ));
            }
        }
        AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => {}
    }
}

/// Text blocks concatenated without separator (a plain string as it is).
fn joined_text(content: &MessageContent) -> String {
    content.joined_text("")
}

/// `key=JSON, …` in JavaScript's property order, values as `JSON.stringify` writes them.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Object(object) => js_object_entries(object)
            .into_iter()
            .map(|(key, value)| format!("{key}={}", js_stringify(value)))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            String::new()
        }
    }
}

/// `text` cut to `max_units` UTF-16 units with a marker counting the rest (the full length minus
/// `max_units`, as Pi 1.6 counts it). Never splits a surrogate pair: a cut that would fall inside one
/// keeps the whole character out, and the count is not adjusted for it.
pub fn truncate_for_summary(text: &str, max_units: usize) -> String {
    let total = utf16_len(text);
    if total <= max_units {
        return text.to_owned();
    }
    let mut units = 0;
    let mut end = 0;
    for (offset, character) in text.char_indices() {
        let width = character.len_utf16();
        if units + width > max_units {
            break;
        }
        units += width;
        end = offset + character.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        total - max_units
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(values: Vec<Value>) -> Vec<AgentMessage> {
        values
            .into_iter()
            .map(|value| serde_json::from_value(value).unwrap())
            .collect()
    }

    #[test]
    fn serializes_each_role() {
        let text = serialize_conversation(&messages(vec![
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "ok"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "x.rs", "limit": 5}},
                {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "ls \"a\""}}
            ]}),
            json!({"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "fn x"}], "isError": false}),
            json!({"role": "user", "content": ""}),
        ]));
        assert_eq!(
            text,
            "[User]: ab\n\n[Assistant]: ok\n\n\
             [Assistant tool calls]: read(path=\"x.rs\", limit=5); bash(command=\"ls \\\"a\\\"\")\n\n[Tool result]: fn x"
        );
    }

    #[test]
    fn reasoning_is_left_out_and_a_reasoning_only_reply_adds_nothing() {
        let text = serialize_conversation(&messages(vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "secret plan"}]}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "more"},
                {"type": "text", "text": "done"}
            ]}),
        ]));
        assert_eq!(text, "[User]: go\n\n[Assistant]: done");
    }

    #[test]
    fn truncation_counts_utf16_and_keeps_pairs_whole() {
        assert_eq!(
            truncate_for_summary("abcdef", 4),
            "abcd\n\n[... 2 more characters truncated]"
        );
        assert_eq!(
            truncate_for_summary("ab😀cd", 3),
            "ab\n\n[... 3 more characters truncated]"
        );
        assert_eq!(
            truncate_for_summary("ab😀cd", 4),
            "ab😀\n\n[... 2 more characters truncated]"
        );
        assert_eq!(truncate_for_summary("short", 2000), "short");
    }
}
