//! Codex `ResponseItem`s → v3 entry kinds: messages, reasoning, tool calls and outputs, web searches,
//! and the items that carry no conversation (kept as `custom` entries without a warning).

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, CustomMessageEntry, EntryKind, ImageContent,
    JsonObject, MessageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    UserMessage,
};
use serde_json::Value;

use super::{FORMAT, State};
use crate::builder::{Builder, arguments_from_text, custom_kind, millis, wrapped_input};
use crate::custom_type;
use crate::report::IssueKind;
use crate::source::str_field;

/// `ResponseItem` types Codex records that carry nothing a model is shown as conversation: kept as
/// `custom` entries, not reported as unknown.
const QUIET_ITEMS: &[&str] = &[
    "ghost_snapshot",
    "tool_search_call",
    "tool_search_output",
    "compaction",
    "compaction_summary",
    "item_reference",
    "additional_tools",
    "context_compaction",
    "compaction_trigger",
];

/// `ResponseItem` types (the `type` of a bare item in older rollouts).
pub(super) const RESPONSE_ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "ghost_snapshot",
    "tool_search_call",
    "tool_search_output",
    "compaction",
    "compaction_summary",
];

fn message(message: AgentMessage) -> Vec<EntryKind> {
    vec![EntryKind::Message(Box::new(message))]
}

/// The entries a `ResponseItem` becomes: a message for conversation items, quiet `custom` data
/// for bookkeeping items, and a reported `custom` entry for unknown ones.
pub(super) fn response_item(
    payload: &JsonObject,
    record: &JsonObject,
    timestamp: &str,
    state: &State,
    builder: &mut Builder,
    line: usize,
) -> Vec<EntryKind> {
    let ms = millis(timestamp);
    let reply = Reply { state, ms };
    match str_field(payload, "type") {
        Some("message") => {
            let blocks = content_items(payload.get("content"), builder, line);
            match str_field(payload, "role") {
                Some("user") => message(AgentMessage::User(UserMessage {
                    content: MessageContent::Blocks(blocks),
                    timestamp: ms,
                    extra: JsonObject::new(),
                })),
                Some("assistant") => message(reply.with(blocks, "stop")),
                role => vec![EntryKind::CustomMessage(CustomMessageEntry {
                    custom_type: custom_type(FORMAT, role.unwrap_or("message")),
                    content: MessageContent::Blocks(blocks),
                    display: false,
                    details: None,
                    extra: JsonObject::new(),
                })],
            }
        }
        Some("reasoning") => message(reply.with(vec![reasoning(payload)], "stop")),
        Some("function_call") => {
            message(reply.with(vec![function_call(payload, builder, line)], "toolUse"))
        }
        Some("custom_tool_call") => message(reply.with(vec![custom_tool_call(payload)], "toolUse")),
        Some("local_shell_call") => message(reply.with(vec![local_shell_call(payload)], "toolUse")),
        Some("function_call_output" | "custom_tool_call_output") => {
            let output = tool_output(payload.get("output"), builder, line);
            message(AgentMessage::ToolResult(ToolResultMessage {
                tool_call_id: str_field(payload, "call_id").unwrap_or_default().to_owned(),
                tool_name: String::new(),
                content: MessageContent::Blocks(output.content),
                details: output.details,
                is_error: output.is_error,
                timestamp: ms,
                extra: JsonObject::new(),
            }))
        }
        Some("web_search_call") => message(reply.keeping(web_search_text(payload), payload)),
        Some("image_generation_call") => {
            message(reply.keeping(image_generation_text(payload), payload))
        }
        Some("agent_message") => message(agent_message(
            payload,
            agent_message_text(payload.get("content")),
            ms,
        )),
        Some(kind) if QUIET_ITEMS.contains(&kind) => {
            vec![custom_kind(FORMAT, kind, record)]
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

/// Assistant messages of the model the rollout is at.
struct Reply<'state> {
    state: &'state State,
    ms: Option<i64>,
}

impl Reply<'_> {
    fn with(&self, content: Vec<ContentBlock>, stop: &str) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            content,
            api: Some("openai-responses".to_owned()),
            provider: Some(
                self.state
                    .provider
                    .clone()
                    .unwrap_or_else(|| "openai".to_owned()),
            ),
            model: self.state.model.clone(),
            usage: None,
            stop_reason: Some(stop.to_owned()),
            error_message: None,
            timestamp: self.ms,
            extra: JsonObject::new(),
        })
    }
}

impl Reply<'_> {
    /// A reply that says what `item` did in `text`, the item kept whole as `codexItem`.
    fn keeping(&self, text: String, item: &JsonObject) -> AgentMessage {
        let mut reply = self.with(vec![ContentBlock::text(text)], "stop");
        if let AgentMessage::Assistant(assistant) = &mut reply {
            assistant
                .extra
                .insert("codexItem".to_owned(), Value::Object(item.clone()));
        }
        reply
    }
}

/// A message one agent of a multi-agent run sent another (an `agent_message` item, or an
/// `inter_agent_communication` line): Codex shows it to the model of the thread that holds it
/// naming its author and recipient; v3 has no role for another agent, so it is a user message
/// that names them, the record kept as `codexItem`. Encrypted parts are kept only there.
fn agent_message(payload: &JsonObject, text: String, ms: Option<i64>) -> AgentMessage {
    let author = str_field(payload, "author").unwrap_or("another agent");
    let recipient = str_field(payload, "recipient").unwrap_or("this agent");
    let mut extra = JsonObject::new();
    extra.insert("codexItem".to_owned(), Value::Object(payload.clone()));
    AgentMessage::User(UserMessage {
        content: MessageContent::Blocks(vec![ContentBlock::text(format!(
            "[message from {author} to {recipient}]\n{text}"
        ))]),
        timestamp: ms,
        extra,
    })
}

/// The readable text of an agent message's content: a string, or its `input_text` items.
fn agent_message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.get("text")?.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Some(_) | None => String::new(),
    }
}

/// An `inter_agent_communication` line (`author`, `recipient`, `content`, `trigger_turn`): the
/// message as [`agent_message`] gives it.
pub(super) fn communication(payload: &JsonObject, timestamp: &str) -> EntryKind {
    let text = agent_message_text(payload.get("content"));
    EntryKind::Message(Box::new(agent_message(payload, text, millis(timestamp))))
}

/// What an `image_generation_call` made: the prompt the image was drawn from. The image itself
/// (`result`, base64 PNG) stays in the kept item: v3 replies hold no images.
fn image_generation_text(payload: &JsonObject) -> String {
    match str_field(payload, "revised_prompt") {
        Some(prompt) => format!("[generated an image: \"{prompt}\"]"),
        None => "[generated an image]".to_owned(),
    }
}

/// A `reasoning` item: its summary and content texts as one thinking block, the encrypted
/// content kept.
fn reasoning(payload: &JsonObject) -> ContentBlock {
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
    ContentBlock::Thinking(ThinkingContent {
        thinking: text.join("\n\n"),
        thinking_signature: None,
        extra,
    })
}

/// A `function_call`: its `arguments` JSON text parsed (reported and wrapped when it does not).
fn function_call(payload: &JsonObject, builder: &mut Builder, line: usize) -> ContentBlock {
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
    tool_call(id, name, arguments)
}

/// A `custom_tool_call` (free-form input, such as a patch): the input wrapped.
fn custom_tool_call(payload: &JsonObject) -> ContentBlock {
    let id = str_field(payload, "call_id").unwrap_or_default().to_owned();
    let name = str_field(payload, "name").unwrap_or_default().to_owned();
    let input = payload.get("input").cloned().unwrap_or(Value::Null);
    tool_call(id, name, wrapped_input(input))
}

/// A `local_shell_call`: a `local_shell` call with the action as its arguments.
fn local_shell_call(payload: &JsonObject) -> ContentBlock {
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
    tool_call(id, "local_shell".to_owned(), arguments)
}

fn tool_call(id: String, name: String, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id,
        name,
        arguments,
        extra: JsonObject::new(),
    })
}

/// A tool output as the result shows it.
struct ToolOutput {
    content: Vec<ContentBlock>,
    is_error: bool,
    /// What the record holds besides the text (a 2025 shell output's `metadata`).
    details: Option<Value>,
}

impl ToolOutput {
    fn blocks(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            is_error: false,
            details: None,
        }
    }
}

/// A tool output: a string, a list of content items, or (older rollouts) `{content, success}`.
fn tool_output(output: Option<&Value>, builder: &mut Builder, line: usize) -> ToolOutput {
    match output {
        Some(Value::String(text)) => exec_output(text)
            .unwrap_or_else(|| ToolOutput::blocks(vec![ContentBlock::text(text.clone())])),
        Some(items @ Value::Array(_)) => {
            ToolOutput::blocks(content_items(Some(items), builder, line))
        }
        Some(Value::Object(object)) => {
            let failed = object.get("success").and_then(Value::as_bool) == Some(false);
            let inner = tool_output(object.get("content"), builder, line);
            ToolOutput {
                is_error: failed || inner.is_error,
                ..inner
            }
        }
        Some(Value::Null | Value::Bool(_) | Value::Number(_)) | None => {
            ToolOutput::blocks(Vec::new())
        }
    }
}

/// A shell command's output as 2025 versions recorded it, a JSON string `{"output": "…",
/// "metadata": {"exit_code": 0, "duration_seconds": 0.1}}`, read as newer versions show it to the
/// model: `Exit code: …`, `Wall time: … seconds`, `Output:`, then the output with its own line
/// breaks; failed when the exit code is not 0 (as Pi's `bash` reports it), the metadata kept as
/// `details.codexMetadata`. `None` for any other text.
fn exec_output(text: &str) -> Option<ToolOutput> {
    if !text.starts_with("{\"output\"") {
        return None;
    }
    let Value::Object(record) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let output = record.get("output")?.as_str()?;
    let metadata = record.get("metadata")?.as_object()?;
    let exit_code = metadata.get("exit_code").and_then(Value::as_i64);
    let mut shown = String::new();
    if let Some(code) = exit_code {
        shown.push_str(&format!("Exit code: {code}\n"));
    }
    if let Some(seconds) = metadata.get("duration_seconds").and_then(Value::as_f64) {
        shown.push_str(&format!("Wall time: {seconds} seconds\n"));
    }
    shown.push_str("Output:\n");
    shown.push_str(output);
    let mut details = JsonObject::new();
    details.insert("codexMetadata".to_owned(), Value::Object(metadata.clone()));
    Some(ToolOutput {
        content: vec![ContentBlock::text(shown)],
        is_error: exit_code.is_some_and(|code| code != 0),
        details: Some(Value::Object(details)),
    })
}

/// Responses API content items (`input_text`, `output_text`, `input_image`) as v3 blocks; other
/// items (such as the `encrypted_content` of late-2026 tool outputs) are kept whole and reported.
pub(super) fn content_items(
    items: Option<&Value>,
    builder: &mut Builder,
    line: usize,
) -> Vec<ContentBlock> {
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
            other => {
                builder.issue(
                    line,
                    IssueKind::UnmappedBlock {
                        block_type: other.unwrap_or("(none)").to_owned(),
                    },
                );
                ContentBlock::Unknown(item.clone())
            }
        })
        .collect()
}

/// `data:<mime>;base64,<data>` → `(mime, data)`.
fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime, data))
}

/// What a `web_search_call` did, as the text the conversation shows: the query searched, or the page
/// opened or searched in.
fn web_search_text(payload: &JsonObject) -> String {
    let action = payload.get("action").and_then(Value::as_object);
    let field = |key: &str| action.and_then(|action| str_field(action, key));
    match action.and_then(|action| str_field(action, "type")) {
        Some("open_page") => format!("[web search: opened {}]", field("url").unwrap_or("a page")),
        Some("find_in_page") => format!(
            "[web search: looked for \"{}\" in {}]",
            field("pattern").unwrap_or_default(),
            field("url").unwrap_or("a page")
        ),
        Some(_) | None => match field("query").or_else(|| str_field(payload, "query")) {
            Some(query) => format!("[web search: \"{query}\"]"),
            None => match action.and_then(|action| action.get("queries")?.as_array()) {
                Some(queries) => {
                    let queries: Vec<String> = queries
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|query| format!("\"{query}\""))
                        .collect();
                    format!("[web search: {}]", queries.join(", "))
                }
                None => "[web search]".to_owned(),
            },
        },
    }
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
}
