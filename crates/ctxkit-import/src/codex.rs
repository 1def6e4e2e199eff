//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) → v3 entries.
//!
//! Every line is `{timestamp, type, payload}`. A rollout is linear, so entries form one chain; ids
//! derive from the session id and the line number. `response_item` messages, reasoning, function
//! calls and their outputs become messages, `compacted` becomes a `compaction` entry (tokens from the
//! last `token_count` event), `turn_context` a `model_change` when the model changes, and every other
//! record a `custom` entry. Facts and sources: `docs/import-formats.md`.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, CompactionEntry, ContentBlock, CustomMessageEntry, EntryKind,
    ImageContent, JsonObject, MessageContent, ModelChangeEntry, SessionEntry, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, UserMessage, value_as_u64,
};
use serde_json::Value;

use crate::builder::{
    Builder, Planned, arguments_from_text, custom_kind, header, millis, normalize_timestamp,
    wrapped_input,
};
use crate::error::ImportError;
use crate::report::IssueKind;
use crate::source::{SourceFile, str_field};
use crate::{ImportedSession, SourceFormat, custom_type};

const FORMAT: SourceFormat = SourceFormat::Codex;

/// Running state while walking the rollout.
#[derive(Debug, Default)]
struct State {
    model: Option<String>,
    provider: Option<String>,
    /// Context tokens of the last `token_count` event.
    last_tokens: Option<u64>,
}

/// Converts a Codex rollout.
pub fn convert_codex(source: &SourceFile) -> Result<ImportedSession, ImportError> {
    if source.lines.is_empty() {
        return Err(ImportError::Empty {
            path: source.path.clone(),
        });
    }
    let meta = source.lines.iter().find_map(|line| {
        (str_field(&line.record, "type") == Some("session_meta"))
            .then(|| line.record.get("payload").and_then(Value::as_object))
            .flatten()
    });
    let session_id = meta
        .and_then(|meta| str_field(meta, "id"))
        .map(str::to_owned)
        .or_else(|| {
            source
                .path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let cwd = meta
        .and_then(|meta| str_field(meta, "cwd"))
        .unwrap_or_default();
    let start = meta
        .and_then(|meta| str_field(meta, "timestamp"))
        .or_else(|| {
            source
                .lines
                .iter()
                .find_map(|line| str_field(&line.record, "timestamp"))
        })
        .unwrap_or_default();
    let mut state = State {
        provider: meta
            .and_then(|meta| str_field(meta, "model_provider"))
            .map(str::to_owned),
        ..State::default()
    };

    let mut builder = Builder::new(source);
    let mut planned: Vec<Planned> = Vec::new();
    let mut last_timestamp = normalize_timestamp(start).unwrap_or_default();
    for line in &source.lines {
        let record = &line.record;
        let timestamp = str_field(record, "timestamp")
            .and_then(normalize_timestamp)
            .unwrap_or_else(|| last_timestamp.clone());
        last_timestamp.clone_from(&timestamp);
        let payload = record.get("payload").and_then(Value::as_object);
        let kinds = match (str_field(record, "type"), payload) {
            (Some("session_meta"), Some(_)) => vec![custom_kind(FORMAT, "session_meta", record)],
            (Some("response_item"), Some(payload)) => {
                response_item(payload, record, &timestamp, &state, &mut builder, line.line)
            }
            (Some("compacted"), Some(payload)) => {
                if state.last_tokens.is_none() {
                    builder.issue(line.line, IssueKind::CompactionWithoutTokenCount);
                }
                let summary = str_field(payload, "message").unwrap_or_default();
                if summary.is_empty() {
                    builder.issue(line.line, IssueKind::CompactionWithoutSummary);
                }
                let mut extra = JsonObject::new();
                if let Some(history) = payload.get("replacement_history") {
                    extra.insert("replacementHistory".to_owned(), history.clone());
                }
                vec![EntryKind::Compaction(CompactionEntry {
                    summary: summary.to_owned(),
                    first_kept_entry_id: String::new(),
                    tokens_before: state.last_tokens.unwrap_or(0),
                    details: None,
                    from_hook: None,
                    extra,
                })]
            }
            (Some("turn_context"), Some(payload)) => {
                let mut kinds = Vec::new();
                let model = str_field(payload, "model").map(str::to_owned);
                if model.is_some() && model != state.model {
                    kinds.push(EntryKind::ModelChange(ModelChangeEntry {
                        provider: state
                            .provider
                            .clone()
                            .unwrap_or_else(|| "openai".to_owned()),
                        model_id: model.clone().unwrap_or_default(),
                        extra: JsonObject::new(),
                    }));
                    state.model = model;
                }
                kinds.push(custom_kind(FORMAT, "turn_context", record));
                kinds
            }
            (Some("event_msg"), Some(payload)) => {
                if str_field(payload, "type") == Some("token_count")
                    && let Some(tokens) = token_count(payload)
                {
                    state.last_tokens = Some(tokens);
                }
                vec![custom_kind(FORMAT, "event_msg", record)]
            }
            (other, _) => {
                builder.issue(
                    line.line,
                    IssueKind::UnknownRecord {
                        record_type: other.unwrap_or("(none)").to_owned(),
                    },
                );
                vec![custom_kind(FORMAT, "unknown", record)]
            }
        };
        for (index, kind) in kinds.into_iter().enumerate() {
            let key = if index == 0 {
                format!("{session_id}:{}", line.line)
            } else {
                format!("{session_id}:{}#{index}", line.line)
            };
            let id = builder.ids.derive(&key);
            let kind = match kind {
                // Codex keeps nothing verbatim across a compaction (the replacement history is
                // rebuilt from user messages): an id not on the path before it keeps nothing.
                EntryKind::Compaction(mut compaction) => {
                    compaction.first_kept_entry_id.clone_from(&id);
                    EntryKind::Compaction(compaction)
                }
                other @ (EntryKind::Message(_)
                | EntryKind::ThinkingLevelChange(_)
                | EntryKind::ModelChange(_)
                | EntryKind::BranchSummary(_)
                | EntryKind::Custom(_)
                | EntryKind::CustomMessage(_)
                | EntryKind::Label(_)
                | EntryKind::SessionInfo(_)
                | EntryKind::ContextEdit(_)
                | EntryKind::Usage(_)
                | EntryKind::Unknown { .. }) => other,
            };
            let parent_id = planned.last().map(|previous| previous.entry.id.clone());
            planned.push(Planned {
                line: line.line,
                entry: SessionEntry {
                    id,
                    parent_id,
                    timestamp: timestamp.clone(),
                    kind,
                },
            });
        }
    }
    let header = header(FORMAT, &session_id, start, cwd);
    Ok(builder.finish(FORMAT, header, planned, source.lines.len()))
}

/// Context tokens of a `token_count` event: the last request's total, else its input.
fn token_count(payload: &JsonObject) -> Option<u64> {
    let last = payload.get("info")?.get("last_token_usage")?.as_object()?;
    last.get("total_tokens")
        .or_else(|| last.get("input_tokens"))
        .and_then(value_as_u64)
}

fn message(message: AgentMessage) -> Vec<EntryKind> {
    vec![EntryKind::Message(Box::new(message))]
}

fn response_item(
    payload: &JsonObject,
    record: &JsonObject,
    timestamp: &str,
    state: &State,
    builder: &mut Builder,
    line: usize,
) -> Vec<EntryKind> {
    let ms = millis(timestamp);
    let assistant = |content: Vec<ContentBlock>, stop: &str| {
        AgentMessage::Assistant(AssistantMessage {
            content,
            api: Some("openai-responses".to_owned()),
            provider: Some(
                state
                    .provider
                    .clone()
                    .unwrap_or_else(|| "openai".to_owned()),
            ),
            model: state.model.clone(),
            usage: None,
            stop_reason: Some(stop.to_owned()),
            error_message: None,
            timestamp: ms,
            extra: JsonObject::new(),
        })
    };
    match str_field(payload, "type") {
        Some("message") => {
            let blocks = content_items(payload.get("content"), builder, line);
            match str_field(payload, "role") {
                Some("user") => message(AgentMessage::User(UserMessage {
                    content: MessageContent::Blocks(blocks),
                    timestamp: ms,
                    extra: JsonObject::new(),
                })),
                Some("assistant") => message(assistant(blocks, "stop")),
                role => vec![EntryKind::CustomMessage(CustomMessageEntry {
                    custom_type: custom_type(FORMAT, role.unwrap_or("message")),
                    content: MessageContent::Blocks(blocks),
                    display: false,
                    details: None,
                    extra: JsonObject::new(),
                })],
            }
        }
        Some("reasoning") => {
            let mut text: Vec<&str> = Vec::new();
            for key in ["summary", "content"] {
                if let Some(Value::Array(items)) = payload.get(key) {
                    text.extend(items.iter().filter_map(|item| item.get("text")?.as_str()));
                }
            }
            let mut extra = JsonObject::new();
            if let Some(encrypted) = payload
                .get("encrypted_content")
                .filter(|value| !value.is_null())
            {
                extra.insert("encryptedContent".to_owned(), encrypted.clone());
            }
            message(assistant(
                vec![ContentBlock::Thinking(ThinkingContent {
                    thinking: text.join("\n\n"),
                    thinking_signature: None,
                    extra,
                })],
                "stop",
            ))
        }
        Some("function_call") => {
            let id = str_field(payload, "call_id").unwrap_or_default().to_owned();
            let arguments = match payload.get("arguments") {
                Some(Value::String(text)) => arguments_from_text(text).unwrap_or_else(|| {
                    builder.issue(
                        line,
                        IssueKind::UnparsedToolArguments {
                            tool_call_id: id.clone(),
                        },
                    );
                    wrapped_input(Value::String(text.clone()))
                }),
                Some(value @ Value::Object(_)) => value.clone(),
                Some(other) => wrapped_input(other.clone()),
                None => Value::Object(JsonObject::new()),
            };
            let name = str_field(payload, "name").unwrap_or_default().to_owned();
            message(assistant(vec![tool_call(id, name, arguments)], "toolUse"))
        }
        Some("custom_tool_call") => {
            let id = str_field(payload, "call_id").unwrap_or_default().to_owned();
            let name = str_field(payload, "name").unwrap_or_default().to_owned();
            let input = payload.get("input").cloned().unwrap_or(Value::Null);
            message(assistant(
                vec![tool_call(id, name, wrapped_input(input))],
                "toolUse",
            ))
        }
        Some("local_shell_call") => {
            let id = str_field(payload, "call_id")
                .or_else(|| str_field(payload, "id"))
                .unwrap_or_default()
                .to_owned();
            let action = payload.get("action").cloned().unwrap_or(Value::Null);
            let arguments = match action {
                value @ Value::Object(_) => value,
                other @ (Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::String(_)
                | Value::Array(_)) => wrapped_input(other),
            };
            message(assistant(
                vec![tool_call(id, "local_shell".to_owned(), arguments)],
                "toolUse",
            ))
        }
        Some("function_call_output" | "custom_tool_call_output") => {
            let (content, is_error) = tool_output(payload.get("output"), builder, line);
            message(AgentMessage::ToolResult(ToolResultMessage {
                tool_call_id: str_field(payload, "call_id").unwrap_or_default().to_owned(),
                tool_name: String::new(),
                content: MessageContent::Blocks(content),
                details: None,
                is_error,
                timestamp: ms,
                extra: JsonObject::new(),
            }))
        }
        other => {
            builder.issue(
                line,
                IssueKind::UnknownRecord {
                    record_type: format!("response_item/{}", other.unwrap_or("(none)")),
                },
            );
            vec![custom_kind(FORMAT, "response_item", record)]
        }
    }
}

fn tool_call(id: String, name: String, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id,
        name,
        arguments,
        extra: JsonObject::new(),
    })
}

/// A tool output: a string, a list of content items, or (older rollouts) `{content, success}`.
fn tool_output(
    output: Option<&Value>,
    builder: &mut Builder,
    line: usize,
) -> (Vec<ContentBlock>, bool) {
    match output {
        Some(Value::String(text)) => (vec![ContentBlock::text(text.clone())], false),
        Some(items @ Value::Array(_)) => (content_items(Some(items), builder, line), false),
        Some(Value::Object(object)) => {
            let failed = object.get("success").and_then(Value::as_bool) == Some(false);
            let (content, _) = tool_output(object.get("content"), builder, line);
            (content, failed)
        }
        Some(Value::Null | Value::Bool(_) | Value::Number(_)) | None => (Vec::new(), false),
    }
}

/// Responses API content items (`input_text`, `output_text`, `input_image`) as v3 blocks.
fn content_items(items: Option<&Value>, builder: &mut Builder, line: usize) -> Vec<ContentBlock> {
    let Some(Value::Array(items)) = items else {
        return match items {
            Some(Value::String(text)) => vec![ContentBlock::text(text.clone())],
            Some(_) | None => Vec::new(),
        };
    };
    items
        .iter()
        .filter_map(Value::as_object)
        .map(|item| match str_field(item, "type") {
            Some("input_text" | "output_text" | "text") => {
                ContentBlock::text(str_field(item, "text").unwrap_or_default())
            }
            Some("input_image") => {
                let url = str_field(item, "image_url").unwrap_or_default();
                match data_url(url) {
                    Some((mime_type, data)) => ContentBlock::Image(ImageContent {
                        data: data.to_owned(),
                        mime_type: mime_type.to_owned(),
                        extra: JsonObject::new(),
                    }),
                    None => {
                        builder.issue(line, IssueKind::ImageNotInline);
                        ContentBlock::Text(TextContent {
                            text: format!("[image: {url}]"),
                            extra: JsonObject::new(),
                        })
                    }
                }
            }
            Some(_) | None => ContentBlock::Unknown(item.clone()),
        })
        .collect()
}

/// `data:<mime>;base64,<data>` → `(mime, data)`.
fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_split_into_mime_type_and_data() {
        assert_eq!(
            data_url("data:image/png;base64,AAA"),
            Some(("image/png", "AAA"))
        );
        assert_eq!(data_url("https://example.com/a.png"), None);
    }

    #[test]
    fn token_counts_prefer_the_last_request_total() {
        let payload = serde_json::json!({"type": "token_count", "info": {"last_token_usage":
            {"input_tokens": 10, "total_tokens": 15}}});
        assert_eq!(token_count(payload.as_object().unwrap()), Some(15));
    }
}
