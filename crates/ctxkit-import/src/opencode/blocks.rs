//! Content shared by OpenCode's two message models: files, usage, and tool results as OpenCode
//! sends them to its model.

use ctxkit_protocol::{
    AgentMessage, ContentBlock, ImageContent, JsonObject, MessageContent, ToolResultMessage, Usage,
    value_as_u64,
};
use serde_json::Value;

use super::storage::str_of;
use crate::builder::Builder;
use crate::report::IssueKind;

/// What OpenCode sends for a tool result whose output it cleared after a compaction.
pub(super) const CLEARED_OUTPUT: &str = "[Old tool result content cleared]";
/// What OpenCode sends for a tool call that never finished.
pub(crate) const INTERRUPTED_TOOL: &str = "[Tool execution was interrupted]";

/// The part types OpenCode 1.x and 2.x write (the `Part` union of `message-v2.ts`).
const PART_TYPES: &[&str] = &[
    "text",
    "subtask",
    "reasoning",
    "file",
    "tool",
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "agent",
    "retry",
    "compaction",
];

/// Reports each part of the `ordinal`-th message whose type OpenCode's `Part` union does not name:
/// the message keeps it (`opencodeParts`), but no block shows it.
pub(super) fn report_unknown_parts(builder: &mut Builder, ordinal: usize, parts: &[JsonObject]) {
    for part in parts {
        let kind = str_of(part, "type").unwrap_or("(none)");
        if !PART_TYPES.contains(&kind) {
            builder.issue(
                ordinal,
                IssueKind::UnknownPart {
                    part_type: kind.to_owned(),
                },
            );
        }
    }
}

/// A file part: an inline image, or a text naming the file (OpenCode reads text files into
/// synthetic text parts of its own).
pub(super) fn file_block(part: &JsonObject, builder: &mut Builder, ordinal: usize) -> ContentBlock {
    let url = str_of(part, "url").unwrap_or_default();
    let file = File {
        mime: str_of(part, "mime").unwrap_or_default(),
        url,
        name: str_of(part, "filename").unwrap_or(url),
    };
    file_content(&file, builder, ordinal)
}

/// A file: its type, where it is (often a data URL) and its name.
pub(super) struct File<'a> {
    pub(super) mime: &'a str,
    pub(super) url: &'a str,
    pub(super) name: &'a str,
}

/// An inline image, or a text naming the file.
pub(super) fn file_content(file: &File<'_>, builder: &mut Builder, ordinal: usize) -> ContentBlock {
    let File { mime, url, name } = *file;
    let inline = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"));
    match inline {
        Some((data_mime, data))
            if mime.starts_with("image/") || data_mime.starts_with("image/") =>
        {
            ContentBlock::Image(ImageContent {
                data: data.to_owned(),
                mime_type: if mime.is_empty() { data_mime } else { mime }.to_owned(),
                extra: JsonObject::new(),
            })
        }
        Some(_) | None => {
            if mime.starts_with("image/") {
                builder.issue(ordinal, IssueKind::ImageNotInline);
            }
            ContentBlock::text(format!("[file: {name} ({mime})]"))
        }
    }
}

/// `{input, output, reasoning, cache: {read, write}}` as usage, with the dollars OpenCode
/// recorded for the same call (`cost`, a number) as its total (OpenCode keeps no split).
pub(super) fn usage_of(tokens: &JsonObject, cost: Option<f64>) -> Usage {
    let number = |value: Option<&Value>| value.and_then(value_as_u64).unwrap_or(0);
    let cache = tokens.get("cache");
    let input = number(tokens.get("input"));
    let output = number(tokens.get("output")).saturating_add(number(tokens.get("reasoning")));
    let cache_read = number(cache.and_then(|cache| cache.get("read")));
    let cache_write = number(cache.and_then(|cache| cache.get("write")));
    Usage {
        cost: cost
            .filter(|total| total.is_finite() && *total >= 0.0)
            .map(|total| ctxkit_protocol::UsageCost {
                total,
                ..ctxkit_protocol::UsageCost::default()
            }),
        ..Usage::from_parts(input, output, cache_read, cache_write)
    }
}

/// The `cost` a message, step or part records (dollars), when it is a number.
pub(super) fn cost_of(object: &JsonObject) -> Option<f64> {
    object.get("cost").and_then(Value::as_f64)
}

/// What a compaction summary's call recorded, as ctxkit records its own summaries' (`details`
/// `summarizer` and `usage`, read by `ctxkit info`): the message's tokens and cost, by its model.
pub(super) fn summary_details(info: &JsonObject, parts: &[JsonObject]) -> Option<Value> {
    let finish = parts
        .iter()
        .rev()
        .find(|part| str_of(part, "type") == Some("step-finish"));
    let usage = match finish.and_then(|part| part.get("tokens")?.as_object()) {
        Some(tokens) => usage_of(tokens, finish.and_then(cost_of)),
        None => usage_of(info.get("tokens")?.as_object()?, cost_of(info)),
    };
    let mut details = JsonObject::new();
    if let (Some(provider), Some(model)) = (str_of(info, "providerID"), str_of(info, "modelID")) {
        details.insert(
            "summarizer".to_owned(),
            format!("{provider}/{model}").into(),
        );
    }
    details.insert(
        "usage".to_owned(),
        Value::Array(vec![serde_json::to_value(usage).ok()?]),
    );
    Some(Value::Object(details))
}

/// A tool part's result, as OpenCode sends it: the output (cleared after a compaction), the
/// error, or an interruption note for a call that never finished.
pub(super) fn tool_result(part: &JsonObject, timestamp: Option<i64>) -> AgentMessage {
    let state = part.get("state").and_then(Value::as_object);
    let status = state.and_then(|state| str_of(state, "status"));
    let (text, is_error) = match (status, state) {
        (Some("completed"), Some(state)) => {
            let cleared = state
                .get("time")
                .and_then(|time| time.get("compacted"))
                .is_some_and(|compacted| !compacted.is_null());
            if cleared {
                (CLEARED_OUTPUT.to_owned(), false)
            } else {
                (
                    str_of(state, "output").unwrap_or_default().to_owned(),
                    false,
                )
            }
        }
        (Some("error"), Some(state)) => {
            (str_of(state, "error").unwrap_or_default().to_owned(), true)
        }
        _ => (INTERRUPTED_TOOL.to_owned(), true),
    };
    let mut blocks = vec![ContentBlock::text(text)];
    let attachments = state
        .and_then(|state| state.get("attachments"))
        .and_then(Value::as_array);
    let mut ignored = Builder::default();
    for attachment in attachments
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        blocks.push(file_block(attachment, &mut ignored, 0));
    }
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: str_of(part, "callID").unwrap_or_default().to_owned(),
        tool_name: str_of(part, "tool").unwrap_or_default().to_owned(),
        content: MessageContent::Blocks(blocks),
        details: state
            .and_then(|state| state.get("metadata"))
            .filter(|metadata| !metadata.is_null())
            .cloned(),
        is_error,
        timestamp,
        extra: JsonObject::new(),
    })
}
