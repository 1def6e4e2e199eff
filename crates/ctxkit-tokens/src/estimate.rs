//! The reference's estimator (Pi 0.87), exactly: ceil(UTF-16 code units / 4) per message, images as
//! 4800 characters (user content included), system messages by their content, sections and added
//! tools, and context tokens from the last valid assistant usage plus estimates after it.

use std::borrow::Borrow;

use ctxkit_protocol::{AgentMessage, ContentBlock, JsonObject, MessageContent};
use serde_json::Value;

/// Characters an image counts as (1200 tokens).
const IMAGE_CHARS: usize = 4800;

/// Length in UTF-16 code units, JavaScript's `String.length`.
pub fn utf16_len(text: &str) -> usize {
    // ASCII-only text (the common case) has one unit per byte.
    if text.is_ascii() {
        return text.len();
    }
    // One unit per character (every byte but continuation bytes), two for characters outside the
    // basic plane (their first byte is 0xF0 or above). Branch-free, so it vectorizes.
    text.bytes()
        .map(|byte| usize::from(byte & 0xC0 != 0x80) + usize::from(byte >= 0xF0))
        .sum()
}

fn ceil_quarter(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Text and image characters of user, tool-result and custom content.
fn content_chars(content: &MessageContent) -> usize {
    match content {
        MessageContent::Text(text) => utf16_len(text),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| match block {
                ContentBlock::Text(text) => utf16_len(&text.text),
                ContentBlock::Image(_) => IMAGE_CHARS,
                ContentBlock::Thinking(_)
                | ContentBlock::ToolCall(_)
                | ContentBlock::Unknown(_) => 0,
            })
            .sum(),
    }
}

/// The reference's token estimate of one message (`estimateTokens`).
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::User(user) => ceil_quarter(content_chars(&user.content)),
        AgentMessage::Assistant(assistant) => {
            let chars: usize = assistant
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::Text(text) => utf16_len(&text.text),
                    ContentBlock::Thinking(thinking) => utf16_len(&thinking.thinking),
                    ContentBlock::ToolCall(call) => {
                        utf16_len(&call.name) + crate::stringified_len(&call.arguments)
                    }
                    ContentBlock::Image(_) | ContentBlock::Unknown(_) => 0,
                })
                .sum();
            ceil_quarter(chars)
        }
        AgentMessage::ToolResult(result) => ceil_quarter(content_chars(&result.content)),
        AgentMessage::Custom(custom) => ceil_quarter(content_chars(&custom.content)),
        AgentMessage::BashExecution(bash) => {
            ceil_quarter(utf16_len(&bash.command) + utf16_len(&bash.output))
        }
        AgentMessage::BranchSummary(summary) => ceil_quarter(utf16_len(&summary.summary)),
        AgentMessage::CompactionSummary(summary) => ceil_quarter(utf16_len(&summary.summary)),
        AgentMessage::Unknown(object) => match object.get("role").and_then(Value::as_str) {
            Some("system") => ceil_quarter(system_chars(object)),
            Some(_) | None => 0,
        },
    }
}

/// Characters of a system message: its content, every non-empty section, and its added tools as
/// JSON (removed tools are not counted).
fn system_chars(message: &JsonObject) -> usize {
    let content = match message.get("content") {
        Some(Value::String(text)) => utf16_len(text),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => block
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or(0, utf16_len),
                Some("image") => IMAGE_CHARS,
                Some(_) | None => 0,
            })
            .sum(),
        Some(_) | None => 0,
    };
    let sections: usize = match message.get("sections") {
        Some(Value::Object(sections)) => sections
            .values()
            .filter_map(Value::as_str)
            .map(utf16_len)
            .sum(),
        Some(_) | None => 0,
    };
    let tools = match message.get("toolsAdded") {
        Some(Value::Null | Value::Bool(false)) | None => 0,
        Some(tools) => crate::stringified_len(tools),
    };
    content + sections + tools
}

/// Context size of a message list: the last assistant usage that is neither aborted nor error, plus
/// estimates of every message after it; with no such usage, the sum of estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextTokens {
    pub tokens: u64,
    pub usage_tokens: u64,
    pub trailing_tokens: u64,
    pub last_usage_index: Option<usize>,
}

/// The last assistant reply that is neither aborted nor error and reports non-zero usage: its position
/// and its context tokens.
pub fn last_valid_usage<M: Borrow<AgentMessage>>(messages: &[M]) -> Option<(usize, u64)> {
    messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, message)| {
            let assistant = message.borrow().as_assistant()?;
            if assistant.is_aborted_or_error() {
                return None;
            }
            let tokens = assistant.usage.as_ref()?.context_tokens();
            (tokens > 0).then_some((index, tokens))
        })
}

/// The reference's `estimateContextTokens`, over messages or anything borrowing one.
pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextTokens {
    let last_usage = last_valid_usage(messages);
    match last_usage {
        None => {
            let estimated = messages
                .iter()
                .map(|message| estimate_tokens(message.borrow()))
                .sum();
            ContextTokens {
                tokens: estimated,
                usage_tokens: 0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((index, usage_tokens)) => {
            let trailing_tokens = messages[index + 1..]
                .iter()
                .map(|message| estimate_tokens(message.borrow()))
                .sum();
            ContextTokens {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(value: serde_json::Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn counts_utf16_units_like_javascript() {
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("👩‍💻"), 5);
        assert_eq!(utf16_len("abc"), 3);
        for text in [
            "é日本語 x",
            "\u{10FFFF}\u{FFFF}\u{80}\u{7FF}\u{800}",
            "mixed 😀 ascii — dash",
        ] {
            let expected: usize = text.chars().map(char::len_utf16).sum();
            assert_eq!(utf16_len(text), expected, "{text}");
        }
    }

    #[test]
    fn estimates_every_role() {
        assert_eq!(
            estimate_tokens(&message(json!({"role": "user", "content": "12345"}))),
            2
        );
        let assistant = message(json!({"role": "assistant", "content": [
            {"type": "text", "text": "abcd"},
            {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a"}}
        ]}));
        // 4 + 4 + len({"path":"a"}) = 4 + 4 + 12 = 20 chars.
        assert_eq!(estimate_tokens(&assistant), 5);
        let result = message(
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "read",
            "content": [{"type": "image", "data": "", "mimeType": "image/png"}], "isError": false}),
        );
        assert_eq!(estimate_tokens(&result), 1200);
        assert_eq!(estimate_tokens(&message(json!({"role": "futureRole"}))), 0);
    }

    #[test]
    fn context_tokens_use_the_last_valid_usage() {
        let messages = vec![
            message(json!({"role": "user", "content": "x".repeat(40)})),
            message(
                json!({"role": "assistant", "content": [], "stopReason": "stop",
                "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}}),
            ),
            message(
                json!({"role": "assistant", "content": [], "stopReason": "aborted",
                "usage": {"input": 999, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 999}}),
            ),
            message(json!({"role": "user", "content": "y".repeat(8)})),
        ];
        let tokens = estimate_context_tokens(&messages);
        assert_eq!(
            tokens,
            ContextTokens {
                tokens: 112,
                usage_tokens: 110,
                trailing_tokens: 2,
                last_usage_index: Some(1)
            }
        );
        assert!(crate::should_compact(112, 100, 0, true));
        assert!(!crate::should_compact(100, 100, 0, true));
        assert!(!crate::should_compact(112, 100, 0, false));
    }
}
