//! Message builders shared by the unit tests.

use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

fn message(value: Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

pub fn user(text: &str) -> AgentMessage {
    message(json!({"role": "user", "content": text, "timestamp": 1}))
}

pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

pub fn thinking(text: &str) -> Value {
    json!({"type": "thinking", "thinking": text, "thinkingSignature": "sig"})
}

pub fn call(id: &str) -> Value {
    json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": format!("src/{id}.rs"), "limit": 10}})
}

pub fn assistant(blocks: Vec<Value>) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": blocks, "api": "anthropic-messages",
        "provider": "anthropic", "model": "m", "stopReason": "toolUse", "timestamp": 2}),
    )
}

pub fn tool_result(id: &str, text: &str) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 3}),
    )
}

/// The error result orphan repair answers the call `id` of an [`assistant`] with.
pub fn no_result(id: &str) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": "No result provided"}], "isError": true, "timestamp": 2}),
    )
}

/// An [`assistant`] that failed (`stopReason` `error`).
pub fn failed_assistant(blocks: Vec<Value>) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": blocks, "api": "anthropic-messages",
        "provider": "anthropic", "model": "m", "stopReason": "error",
        "errorMessage": "overloaded", "timestamp": 2}),
    )
}

pub fn tool_result_blocks(id: &str, blocks: Vec<Value>) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": blocks, "isError": false, "timestamp": 3}),
    )
}

/// A long result: `lines` lines `line N of <id>`.
pub fn long_output(id: &str, lines: usize) -> String {
    (0..lines)
        .map(|line| format!("line {line} of {id}\n"))
        .collect()
}

/// The text of a tool result (all text blocks joined); empty for other messages.
pub fn output_text(message: &AgentMessage) -> String {
    let AgentMessage::ToolResult(result) = message else {
        return String::new();
    };
    result
        .content
        .blocks()
        .iter()
        .filter_map(|block| block.as_text().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The roles of a view, for compact assertions.
pub fn roles(messages: &[AgentMessage]) -> Vec<&str> {
    messages.iter().map(AgentMessage::role).collect()
}

/// A working view over `messages`.
pub fn slots(messages: &[AgentMessage]) -> Vec<crate::view::Slot<'_>> {
    messages.iter().map(crate::view::Slot::borrowed).collect()
}

/// The messages of a working view, checking that every kept token estimate is current.
pub fn unslot(slots: Vec<crate::view::Slot<'_>>) -> Vec<AgentMessage> {
    slots
        .into_iter()
        .map(|slot| {
            assert_eq!(slot.tokens, ctxkit_tokens::estimate_tokens(&slot.message));
            slot.message.into_owned()
        })
        .collect()
}

/// The defaults with the plain prune rule (every result but the recent ones cut at every call),
/// for tests of the layers themselves.
pub fn plain() -> crate::TransformSettings {
    crate::TransformSettings {
        prune_when_it_pays: false,
        ..crate::TransformSettings::default()
    }
}
