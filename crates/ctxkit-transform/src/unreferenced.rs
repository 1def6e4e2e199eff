//! Markers without their references, for an agent that offers no `recall` (Pi 1.6's
//! `defaultTools` with `-recall`): a marker that says `full output: ctxkit://tool-result/<id>`
//! points the model at a tool it does not have. The view is built as always (the engine reads
//! its markers back by their references) and only the request loses them.

use std::borrow::Cow;

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};
use serde_json::Value;

use crate::marker::is_referenceable;

/// The two reference parts a marker ends with, before the id and its `]`: a tool result's and a
/// tool call's.
const REFERENCE_PARTS: [&str; 2] = [
    "; full output: ctxkit://tool-result/",
    "; full call: ctxkit://tool-call/",
];

/// `text` with every marker's reference part (`; full output: ctxkit://tool-result/<id>`, `; full
/// call: ctxkit://tool-call/<id>`) taken out, the marker's `]` kept: `[... 95 lines (4213 chars)
/// omitted; mentions: a, b]`. Borrowed when there is none.
pub fn without_references(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut searched = 0;
    while let Some((at, part)) = next_reference(&text[searched..]) {
        let start = searched + at;
        let id_start = start + part.len();
        let Some(id_len) = text[id_start..].find(']') else {
            break;
        };
        let id = &text[id_start..id_start + id_len];
        if is_referenceable(id) {
            out.push_str(&text[copied..start]);
            copied = id_start + id_len;
        }
        searched = id_start;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The first reference part in `text`: where it starts and which one.
fn next_reference(text: &str) -> Option<(usize, &'static str)> {
    REFERENCE_PARTS
        .iter()
        .filter_map(|part| text.find(part).map(|at| (at, *part)))
        .min_by_key(|(at, _)| *at)
}

/// Every message's text (tool results, user messages, the strings in tool calls' arguments)
/// without marker references; messages with none are left as they are.
pub fn strip_references(messages: &mut [AgentMessage]) {
    for message in messages {
        match message {
            AgentMessage::ToolResult(result) => strip_content(&mut result.content),
            AgentMessage::User(user) => strip_content(&mut user.content),
            AgentMessage::Assistant(reply) => {
                for block in &mut reply.content {
                    strip_block(block);
                }
            }
            AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {}
        }
    }
}

fn strip_content(content: &mut MessageContent) {
    match content {
        MessageContent::Text(text) => strip_string(text),
        MessageContent::Blocks(blocks) => {
            for block in blocks {
                strip_block(block);
            }
        }
    }
}

fn strip_block(block: &mut ContentBlock) {
    match block {
        ContentBlock::Text(text) => strip_string(&mut text.text),
        ContentBlock::ToolCall(call) => strip_value(&mut call.arguments),
        ContentBlock::Image(_) | ContentBlock::Thinking(_) | ContentBlock::Unknown(_) => {}
    }
}

fn strip_value(value: &mut Value) {
    match value {
        Value::String(text) => strip_string(text),
        Value::Array(items) => items.iter_mut().for_each(strip_value),
        Value::Object(fields) => fields.values_mut().for_each(strip_value),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn strip_string(text: &mut String) {
    if let Cow::Owned(stripped) = without_references(text) {
        *text = stripped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::{
        Reference, TOOL_CALL_REFERENCE_PREFIX, TOOL_RESULT_REFERENCE_PREFIX, chars_marker,
        image_marker, lines_marker,
    };

    #[test]
    fn a_marker_keeps_its_counts_and_names_without_its_reference() {
        let marker = lines_marker(
            95,
            4213,
            &["src/a.rs", "E0042"],
            Reference::ToolResult("c1"),
        );
        assert_eq!(
            without_references(&format!("head\n{marker}\ntail")),
            "head\n[... 95 lines (4213 chars) omitted; mentions: src/a.rs, E0042]\ntail"
        );
        let call = chars_marker(700, &[], Reference::ToolCall("c2"));
        assert_eq!(without_references(&call), "[... 700 chars omitted]");
        assert_eq!(
            without_references(&image_marker("image/png", "c3")),
            "[image omitted (image/png)]"
        );
        let two = format!("{marker} and {call}");
        assert_eq!(
            without_references(&two),
            "[... 95 lines (4213 chars) omitted; mentions: src/a.rs, E0042] and [... 700 chars \
             omitted]"
        );
    }

    #[test]
    fn text_without_a_marker_is_borrowed() {
        for text in [
            "plain text",
            "; full output: ctxkit://tool-result/no end",
            "; full output: ctxkit://tool-result/has space]",
        ] {
            assert!(
                matches!(without_references(text), Cow::Borrowed(_)),
                "{text}"
            );
        }
        assert!(REFERENCE_PARTS[0].ends_with(TOOL_RESULT_REFERENCE_PREFIX));
        assert!(REFERENCE_PARTS[1].ends_with(TOOL_CALL_REFERENCE_PREFIX));
    }
}
