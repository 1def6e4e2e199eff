//! Claude Code message records → v3 messages: user records (splitting out `tool_result` blocks),
//! assistant records, and Anthropic content blocks.

use ctxkit_protocol::{
    ANTHROPIC_BLOCK_FIELD, AgentMessage, AssistantMessage, ContentBlock, EntryKind, ImageContent,
    JsonObject, MessageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    UserMessage, foreign_block_text, value_as_u64,
};
use serde_json::Value;

use super::{message_of, planned};
use crate::builder::{Builder, Planned, millis, wrapped_input};
use crate::report::IssueKind;
use crate::source::{SourceLine, str_field};

/// A user record: one `toolResult` message per `tool_result` block, then a user message with the
/// remaining blocks (if any).
pub(super) fn user_entries(
    line: &SourceLine,
    source_key: &str,
    timestamp: &str,
    builder: &mut Builder,
    entries: &mut Vec<Planned>,
) {
    let record = &line.record;
    let ms = millis(timestamp);
    let content = message_of(record).and_then(|message| message.get("content"));
    let blocks: Vec<Value> = match content {
        Some(Value::String(text)) => {
            let id = builder.ids.derive(source_key);
            let message = AgentMessage::User(UserMessage {
                content: MessageContent::Text(text.clone()),
                timestamp: ms,
                extra: JsonObject::new(),
            });
            entries.push(planned(
                line,
                id,
                timestamp,
                EntryKind::Message(Box::new(message)),
            ));
            return;
        }
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(_) | None => Vec::new(),
    };
    let mut rest = Vec::new();
    let mut results = 0;
    for block in blocks {
        let Value::Object(block) = block else {
            continue;
        };
        if str_field(&block, "type") == Some("tool_result") {
            let key = if results == 0 {
                source_key.to_owned()
            } else {
                format!("{source_key}#{results}")
            };
            results += 1;
            let id = builder.ids.derive(&key);
            // The record's `toolUseResult` is the first result's.
            let details = (results == 1)
                .then(|| record.get("toolUseResult").cloned())
                .flatten();
            let message = tool_result(&block, details, ms, builder, line.line);
            entries.push(planned(
                line,
                id,
                timestamp,
                EntryKind::Message(Box::new(message)),
            ));
        } else {
            rest.push(content_block(&block, builder, line.line));
        }
    }
    if !rest.is_empty() || entries.is_empty() {
        let key = if results == 0 {
            source_key.to_owned()
        } else {
            format!("{source_key}#user")
        };
        let id = builder.ids.derive(&key);
        let message = AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(rest),
            timestamp: ms,
            extra: JsonObject::new(),
        });
        entries.push(planned(
            line,
            id,
            timestamp,
            EntryKind::Message(Box::new(message)),
        ));
    }
}

/// A `tool_result` block as a `toolResult` message (its tool name is filled in from its call later).
fn tool_result(
    block: &JsonObject,
    details: Option<Value>,
    ms: Option<i64>,
    builder: &mut Builder,
    line: usize,
) -> AgentMessage {
    let content = match block.get("content") {
        Some(Value::String(text)) => MessageContent::Blocks(vec![ContentBlock::text(text.clone())]),
        Some(Value::Array(items)) => MessageContent::Blocks(
            items
                .iter()
                .filter_map(Value::as_object)
                .map(|item| content_block(item, builder, line))
                .collect(),
        ),
        Some(_) | None => MessageContent::Blocks(Vec::new()),
    };
    if let Some(file) = persisted_output_file(&content) {
        builder.issue(line, IssueKind::OutputLeftBehind { file });
    }
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: str_field(block, "tool_use_id")
            .unwrap_or_default()
            .to_owned(),
        tool_name: String::new(),
        content,
        details,
        is_error: block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        timestamp: ms,
        extra: JsonObject::new(),
    })
}

/// The file a `<persisted-output>` preview names ("Full output saved to: <file>"): Claude Code
/// (≥ 2.1.8x) stores a large tool result in the transcript only as a preview of its start.
fn persisted_output_file(content: &MessageContent) -> Option<String> {
    let MessageContent::Blocks(blocks) = content else {
        return None;
    };
    let text = blocks.first()?.as_text()?;
    let rest = text.strip_prefix("<persisted-output>")?;
    let (_, named) = rest.split_once("Full output saved to: ")?;
    let file = named.lines().next()?.trim();
    (!file.is_empty()).then(|| file.to_owned())
}

/// A prompt the user typed while Claude Code was working: an `attachment` record of type
/// `queued_command` (Claude Code writes no `user` record for it and shows it to its model as a user
/// message). The attachment is kept as `claudeAttachment`.
pub(super) fn queued_prompt(record: &JsonObject, timestamp: &str) -> Option<EntryKind> {
    let attachment = record.get("attachment").and_then(Value::as_object)?;
    if str_field(attachment, "type") != Some("queued_command")
        || attachment.get("isMeta").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let content = match attachment.get("prompt")? {
        Value::String(text) => MessageContent::Text(text.clone()),
        Value::Array(blocks) => MessageContent::Blocks(
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .map(ContentBlock::text)
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => return None,
    };
    let mut extra = JsonObject::new();
    extra.insert(
        "claudeAttachment".to_owned(),
        Value::Object(attachment.clone()),
    );
    Some(EntryKind::Message(Box::new(AgentMessage::User(
        UserMessage {
            content,
            timestamp: millis(timestamp),
            extra,
        },
    ))))
}

/// One Anthropic content block as a v3 block; a block of another type is a text naming it, the
/// block kept beside the text, and reported.
fn content_block(block: &JsonObject, builder: &mut Builder, line: usize) -> ContentBlock {
    match str_field(block, "type") {
        Some("text") => ContentBlock::text(str_field(block, "text").unwrap_or_default()),
        Some("thinking") => ContentBlock::Thinking(ThinkingContent {
            thinking: str_field(block, "thinking").unwrap_or_default().to_owned(),
            thinking_signature: str_field(block, "signature").map(str::to_owned),
            extra: JsonObject::new(),
        }),
        Some("redacted_thinking") => {
            let mut extra = JsonObject::new();
            extra.insert("redacted".to_owned(), Value::Bool(true));
            ContentBlock::Thinking(ThinkingContent {
                thinking: String::new(),
                thinking_signature: str_field(block, "data").map(str::to_owned),
                extra,
            })
        }
        Some("tool_use") => ContentBlock::ToolCall(ToolCall {
            id: str_field(block, "id").unwrap_or_default().to_owned(),
            name: str_field(block, "name").unwrap_or_default().to_owned(),
            arguments: match block.get("input") {
                Some(input @ Value::Object(_)) => input.clone(),
                Some(other) => wrapped_input(other.clone()),
                None => Value::Object(JsonObject::new()),
            },
            extra: JsonObject::new(),
        }),
        Some("image") => {
            let image_source = block.get("source").and_then(Value::as_object);
            match image_source.and_then(|image| {
                Some((str_field(image, "data")?, str_field(image, "media_type")?))
            }) {
                Some((data, mime_type)) => ContentBlock::Image(ImageContent {
                    data: data.to_owned(),
                    mime_type: mime_type.to_owned(),
                    extra: JsonObject::new(),
                }),
                None => {
                    builder.issue(line, IssueKind::ImageNotInline);
                    let location = image_source
                        .and_then(|image| {
                            str_field(image, "url").or_else(|| str_field(image, "file_id"))
                        })
                        .unwrap_or("unknown");
                    ContentBlock::Text(TextContent {
                        text: format!("[image: {location}]"),
                        extra: JsonObject::new(),
                    })
                }
            }
        }
        Some("server_tool_use" | "web_search_tool_result") => {
            block_beside_text(server_tool_text(block), block)
        }
        other => {
            builder.issue(
                line,
                IssueKind::BlockBesideText {
                    block_type: other.unwrap_or("(none)").to_owned(),
                },
            );
            block_beside_text(foreign_block_text(block), block)
        }
    }
}

/// A text block standing for an Anthropic block v3 has no block for, the block kept beside it
/// (`ctxkit_protocol::ANTHROPIC_BLOCK_FIELD`): every v3 reader reads the text, and Pi 1.6.0, which
/// sends every non-text block of a user message as an image, sends no broken block.
fn block_beside_text(text: String, block: &JsonObject) -> ContentBlock {
    let mut extra = JsonObject::new();
    extra.insert(
        ANTHROPIC_BLOCK_FIELD.to_owned(),
        Value::Object(block.clone()),
    );
    ContentBlock::Text(TextContent { text, extra })
}

/// A server tool's call or result (Anthropic's web search) as the text the conversation shows: the
/// query, then the pages found. The block itself is kept beside the text.
fn server_tool_text(block: &JsonObject) -> String {
    if str_field(block, "type") == Some("server_tool_use") {
        let input = block.get("input");
        return match input
            .and_then(|input| input.get("query"))
            .and_then(Value::as_str)
        {
            Some(query) => format!("[web search: \"{query}\"]"),
            None => format!(
                "[{}: {}]",
                str_field(block, "name").unwrap_or("server tool"),
                input.map(ToString::to_string).unwrap_or_default()
            ),
        };
    }
    match block.get("content") {
        Some(Value::Array(results)) => {
            let mut text = String::from("[web search results]");
            for result in results.iter().filter_map(Value::as_object) {
                text.push_str(&format!(
                    "\n- {} ({})",
                    str_field(result, "title").unwrap_or_default(),
                    str_field(result, "url").unwrap_or_default()
                ));
            }
            text
        }
        Some(Value::Object(error)) => format!(
            "[web search failed: {}]",
            str_field(error, "error_code").unwrap_or("error")
        ),
        Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) | None => {
            "[web search results]".to_owned()
        }
    }
}

/// Whether a record's model is one of Claude Code's placeholders (`<synthetic>`): the record is a
/// notice Claude Code wrote itself (a rate limit, an API error, "No response requested."), not a
/// reply of a model.
pub(super) fn is_placeholder_model(name: &str) -> bool {
    name.starts_with('<')
}

/// An assistant record's message. A notice of Claude Code's own (`is_placeholder_model`) is the
/// reply of `model_in_use`, the last real model of its chain (none before the first real reply),
/// as Pi records a request that failed under the model it asked; the placeholder is kept as
/// `claudeModel`. Named as the model, it became the model a continued session asked its provider for.
pub(super) fn assistant_kind(
    record: &JsonObject,
    timestamp: &str,
    model_in_use: Option<&str>,
    builder: &mut Builder,
    line: usize,
) -> EntryKind {
    let message = message_of(record);
    let content: Vec<ContentBlock> = match message.and_then(|message| message.get("content")) {
        Some(Value::String(text)) => vec![ContentBlock::text(text.clone())],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(Value::as_object)
            .map(|block| content_block(block, builder, line))
            .collect(),
        Some(_) | None => Vec::new(),
    };
    let has_tool_call = content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let is_error = record.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
    let stop_reason = match message.and_then(|message| str_field(message, "stop_reason")) {
        _ if is_error => "error",
        Some("tool_use") => "toolUse",
        Some("max_tokens") => "length",
        Some(_) => "stop",
        None if has_tool_call => "toolUse",
        None => "stop",
    };
    let mut extra = JsonObject::new();
    // The provider's id of the reply, as Pi 1.6 records it: a transcript that writes its history
    // again (new uuids, the same `message.id` and usage) holds one paid call twice, and the spend
    // counts it once by this id (QA 2026-12-07: $15.11 for a session that cost $10.74).
    if let Some(id) = message.and_then(|message| str_field(message, "id")) {
        extra.insert("responseId".to_owned(), Value::String(id.to_owned()));
    }
    let model = match message.and_then(|message| str_field(message, "model")) {
        Some(placeholder) if is_placeholder_model(placeholder) => {
            extra.insert(
                "claudeModel".to_owned(),
                Value::String(placeholder.to_owned()),
            );
            model_in_use
        }
        model => model,
    };
    let usage = message
        .and_then(|message| message.get("usage"))
        .and_then(Value::as_object)
        .map(|usage| {
            let number = |key: &str| usage.get(key).and_then(value_as_u64).unwrap_or(0);
            let counts = crate::pricing::UsageCounts {
                input: number("input_tokens"),
                output: number("output_tokens"),
                cache_read: number("cache_read_input_tokens"),
                cache_write: number("cache_creation_input_tokens"),
            };
            crate::pricing::priced_usage(counts, "anthropic", model)
        });
    let error_message = if is_error {
        content
            .iter()
            .find_map(|block| block.as_text().map(str::to_owned))
    } else {
        None
    };
    EntryKind::Message(Box::new(AgentMessage::Assistant(AssistantMessage {
        content,
        api: Some("anthropic-messages".to_owned()),
        provider: Some("anthropic".to_owned()),
        model: model.map(str::to_owned),
        usage,
        stop_reason: Some(stop_reason.to_owned()),
        error_message,
        timestamp: millis(timestamp),
        extra,
    })))
}
