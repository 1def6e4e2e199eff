//! OpenCode's newer message model (`session_message` rows) → v3 entries, the way OpenCode turns
//! those messages into model messages: `user` (text and files), `synthetic` (a user message it
//! wrote), `shell` (a command the user ran, shown to the model as a user message with its output),
//! `assistant` (one row per step: text, reasoning and tool calls, each tool's state holding its
//! result), `compaction` (the summary the later context starts from), `system` and `skill` (text
//! OpenCode writes for its model: an instructions update, a skill's body), `model-switched`,
//! `agent-switched`, `location-switched` and `idle`. Facts: `docs/import-formats.md`.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, CompactionEntry, ContentBlock, CustomEntry, CustomMessageEntry,
    EntryKind, JsonObject, MessageContent, ModelChangeEntry, ThinkingContent, ToolCall,
    ToolResultMessage, UserMessage,
};
use serde_json::Value;

use super::blocks::{CLEARED_OUTPUT, File, INTERRUPTED_TOOL, cost_of, file_content, usage_of};
use super::convert::{Chain, time_of};
use super::storage::{NextMessage, str_of};
use crate::report::IssueKind;
use crate::{SourceFormat, custom_type};

const FORMAT: SourceFormat = SourceFormat::OpenCode;

/// Files OpenCode leaves out of the model message (their text is sent another way).
const UNSENT_FILE_TYPES: [&str; 2] = ["text/plain", "application/x-directory"];

/// Adds the entries of one `session_message` row (the `ordinal`-th message) to the chain.
pub(super) fn convert(chain: &mut Chain, ordinal: usize, message: &NextMessage, time: &str) {
    let data = &message.data;
    let created = time_of(data, "created").or(Some(message.time_created));
    match message.kind.as_str() {
        "user" => {
            let blocks = user_blocks(chain, ordinal, data);
            push_user(chain, ordinal, message, time, blocks, created);
        }
        "synthetic" => {
            let text = str_of(data, "text").unwrap_or_default();
            let blocks = vec![ContentBlock::text(text)];
            push_user(chain, ordinal, message, time, blocks, created);
        }
        "shell" => {
            let blocks = vec![ContentBlock::text(shell_text(data))];
            push_user(chain, ordinal, message, time, blocks, created);
        }
        "assistant" => assistant(chain, ordinal, message, time, created),
        "compaction" if is_finished_compaction(data) => compaction(chain, ordinal, message, time),
        "model-switched" => {
            chain.push(ordinal, &message.id, time, model_change(message));
        }
        "skill" => {
            let text = str_of(data, "text").unwrap_or_default();
            let blocks = vec![ContentBlock::text(text)];
            push_user(chain, ordinal, message, time, blocks, created);
        }
        "system" => {
            let kind = system_text(message);
            chain.push(ordinal, &message.id, time, kind);
        }
        // A compaction that never finished or has no summary, an agent or location switch, the
        // session going idle: data, not conversation.
        "compaction" | "agent-switched" | "location-switched" | "idle" => {
            let kind_name = message.kind.replace('-', "_");
            chain.push(ordinal, &message.id, time, custom(&kind_name, message));
        }
        other => {
            chain.builder.issue(
                ordinal,
                IssueKind::UnknownRecord {
                    record_type: format!("session_message/{other}"),
                },
            );
            chain.push(
                ordinal,
                &message.id,
                time,
                custom("session_message", message),
            );
        }
    }
}

/// A `user` row's text and the files OpenCode sends with it.
fn user_blocks(chain: &mut Chain, ordinal: usize, data: &JsonObject) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    if let Some(text) = str_of(data, "text").filter(|text| !text.is_empty()) {
        blocks.push(ContentBlock::text(text));
    }
    for file in list(data, "files") {
        let mime = str_of(file, "mime").unwrap_or_default();
        if UNSENT_FILE_TYPES.contains(&mime) {
            continue;
        }
        let url = str_of(file, "uri").unwrap_or_default();
        let file = File {
            mime,
            url,
            name: str_of(file, "name").unwrap_or(url),
        };
        blocks.push(file_content(&file, &mut chain.builder, ordinal));
    }
    blocks
}

/// A `system` row: an update OpenCode sends its model as a system message (changed instructions);
/// v3 has no system message mid-conversation, so it is a `custom_message` the model is sent, the
/// row kept as its details.
fn system_text(message: &NextMessage) -> EntryKind {
    let text = str_of(&message.data, "text").unwrap_or_default();
    let mut row = kept_as(message);
    EntryKind::CustomMessage(CustomMessageEntry {
        custom_type: custom_type(FORMAT, "system"),
        content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
        display: false,
        details: row.remove("opencodeMessage"),
        extra: JsonObject::new(),
    })
}

/// What the model is told of a command the user ran (a `shell` row), in the words of the version
/// that wrote it: late-2026 rows (`shellID`, the output an object `{output}`) as `Shell command:`
/// and the output, older ones (`callID`, the output a string) as the command "executed by the user"
/// and its `Output:`.
fn shell_text(data: &JsonObject) -> String {
    let command = str_of(data, "command").unwrap_or_default();
    if let Some(Value::Object(output)) = data.get("output") {
        let output = str_of(output, "output").unwrap_or_default();
        return format!("Shell command: {command}\n\n{output}");
    }
    if data.contains_key("shellID") {
        return format!("Shell command: {command}\n\n");
    }
    let mut text = format!("The following shell command was executed by the user:\n\n{command}");
    if let Some(output) = str_of(data, "output").filter(|output| !output.is_empty()) {
        text.push_str("\n\nOutput:\n");
        text.push_str(output);
    }
    text
}

/// Newer rows say whether the compaction finished (`status`); only a finished one with a summary
/// starts the history OpenCode reads.
fn is_finished_compaction(data: &JsonObject) -> bool {
    str_of(data, "summary").is_some_and(|summary| !summary.is_empty())
        && str_of(data, "status").is_none_or(|status| status == "completed")
}

/// A finished `compaction` row: a `compaction` entry, its tokens those of the last reply.
fn compaction(chain: &mut Chain, ordinal: usize, message: &NextMessage, time: &str) {
    let tokens = chain.last_tokens;
    if tokens.is_none() {
        chain
            .builder
            .issue(ordinal, IssueKind::CompactionWithoutTokenCount);
    }
    let compaction = CompactionEntry {
        summary: compaction_summary(&message.data),
        first_kept_entry_id: String::new(),
        tokens_before: tokens.unwrap_or(0),
        details: None,
        from_hook: None,
        extra: kept_as(message),
    };
    chain.push_compaction(ordinal, &message.id, time, compaction, None);
}

/// A finished compaction's summary. Late-2026 rows add `recent` (the turns after the summarized
/// part, written out as text), which OpenCode sends its model after the summary, so the summary
/// carries it too, in a `<recent-context>` block.
fn compaction_summary(data: &JsonObject) -> String {
    let summary = str_of(data, "summary").unwrap_or_default();
    match str_of(data, "recent").filter(|recent| !recent.trim().is_empty()) {
        Some(recent) => format!("{summary}\n\n<recent-context>\n{recent}\n</recent-context>"),
        None => summary.to_owned(),
    }
}

/// A `model-switched` row's `model_change`.
fn model_change(message: &NextMessage) -> EntryKind {
    let model = message.data.get("model");
    let field = |key: &str| {
        model
            .and_then(|model| model.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    EntryKind::ModelChange(ModelChangeEntry {
        provider: field("providerID"),
        model_id: field("id"),
        extra: kept_as(message),
    })
}

fn list<'a>(object: &'a JsonObject, key: &str) -> impl Iterator<Item = &'a JsonObject> {
    object
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// The row kept whole beside the converted entry.
fn kept_as(message: &NextMessage) -> JsonObject {
    let mut row = message.data.clone();
    row.insert("id".to_owned(), Value::String(message.id.clone()));
    row.insert("type".to_owned(), Value::String(message.kind.clone()));
    let mut extra = JsonObject::new();
    extra.insert("opencodeMessage".to_owned(), Value::Object(row));
    extra
}

fn custom(kind: &str, message: &NextMessage) -> EntryKind {
    let mut data = kept_as(message);
    EntryKind::Custom(CustomEntry {
        custom_type: custom_type(FORMAT, kind),
        data: data.remove("opencodeMessage"),
        extra: JsonObject::new(),
    })
}

fn push_user(
    chain: &mut Chain,
    ordinal: usize,
    message: &NextMessage,
    time: &str,
    blocks: Vec<ContentBlock>,
    timestamp: Option<i64>,
) {
    let user = AgentMessage::User(UserMessage {
        content: MessageContent::Blocks(blocks),
        timestamp,
        extra: kept_as(message),
    });
    chain.push(
        ordinal,
        &message.id,
        time,
        EntryKind::Message(Box::new(user)),
    );
}

/// One step: the reply (text, reasoning, tool calls), then a result for each tool.
fn assistant(
    chain: &mut Chain,
    ordinal: usize,
    message: &NextMessage,
    time: &str,
    timestamp: Option<i64>,
) {
    let data = &message.data;
    let (content, tools) = reply_content(data);
    let model = data.get("model");
    let model_field = |key: &str| {
        model
            .and_then(|model| model.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (stop, error_message) = stop_of(data, !tools.is_empty());
    let usage = data
        .get("tokens")
        .and_then(Value::as_object)
        .map(|tokens| usage_of(tokens, cost_of(data)));
    if let Some(usage) = &usage {
        chain.last_tokens = Some(usage.input_tokens());
    }
    let reply = AssistantMessage {
        content,
        api: None,
        provider: model_field("providerID"),
        model: model_field("id"),
        usage,
        stop_reason: Some(stop.to_owned()),
        error_message,
        timestamp,
        extra: kept_as(message),
    };
    chain.push(
        ordinal,
        &message.id,
        time,
        EntryKind::Message(Box::new(AgentMessage::Assistant(reply))),
    );
    for tool in tools {
        let call_id = str_of(tool, "id").unwrap_or_default();
        let result = tool_result(tool, chain, ordinal, timestamp);
        chain.push(
            ordinal,
            &format!("{}:{call_id}", message.id),
            time,
            EntryKind::Message(Box::new(result)),
        );
    }
}

/// A step's content blocks (text, reasoning, tool calls with their input) and its tool items.
fn reply_content(data: &JsonObject) -> (Vec<ContentBlock>, Vec<&JsonObject>) {
    let mut content = Vec::new();
    let mut tools = Vec::new();
    for item in list(data, "content") {
        match str_of(item, "type") {
            Some("text") => {
                content.push(ContentBlock::text(str_of(item, "text").unwrap_or_default()))
            }
            Some("reasoning") => content.push(ContentBlock::Thinking(ThinkingContent {
                thinking: str_of(item, "text").unwrap_or_default().to_owned(),
                thinking_signature: None,
                extra: JsonObject::new(),
            })),
            Some("tool") => {
                let input = item
                    .get("state")
                    .and_then(|state| state.get("input"))
                    .filter(|input| input.is_object())
                    .cloned()
                    .unwrap_or_else(|| Value::Object(JsonObject::new()));
                content.push(ContentBlock::ToolCall(ToolCall {
                    id: str_of(item, "id").unwrap_or_default().to_owned(),
                    name: str_of(item, "name").unwrap_or_default().to_owned(),
                    arguments: input,
                    extra: JsonObject::new(),
                }));
                tools.push(item);
            }
            Some(_) | None => {}
        }
    }
    (content, tools)
}

/// A step's stop reason and error message: from its `error`, else its `finish`.
fn stop_of(data: &JsonObject, has_tools: bool) -> (&'static str, Option<String>) {
    let error = data.get("error").filter(|error| !error.is_null());
    match error {
        Some(error) => (
            "error",
            Some(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_owned(),
            ),
        ),
        None => match str_of(data, "finish") {
            Some("length") => ("length", None),
            Some("tool-calls") => ("toolUse", None),
            _ if has_tools => ("toolUse", None),
            Some(_) | None => ("stop", None),
        },
    }
}

/// A tool's result as OpenCode sends it: the text of its output (cleared once pruned) and its
/// files, the error's message, or an interruption note for a call that never finished.
fn tool_result(
    tool: &JsonObject,
    chain: &mut Chain,
    ordinal: usize,
    timestamp: Option<i64>,
) -> AgentMessage {
    let state = tool.get("state").and_then(Value::as_object);
    let pruned = tool
        .get("time")
        .and_then(|time| time.get("pruned"))
        .is_some_and(|pruned| !pruned.is_null());
    let output = || {
        let text: Vec<&str> = state
            .into_iter()
            .flat_map(|state| list(state, "content"))
            .filter(|item| str_of(item, "type") == Some("text"))
            .filter_map(|item| str_of(item, "text"))
            .collect();
        text.join("\n")
    };
    let mut blocks = Vec::new();
    let is_error = match state.and_then(|state| str_of(state, "status")) {
        Some("completed") if pruned => {
            blocks.push(ContentBlock::text(CLEARED_OUTPUT));
            false
        }
        Some("completed") => {
            blocks.push(ContentBlock::text(output()));
            let files = state
                .into_iter()
                .flat_map(|state| list(state, "content"))
                .filter(|item| str_of(item, "type") == Some("file"))
                .chain(
                    state
                        .into_iter()
                        .flat_map(|state| list(state, "attachments")),
                );
            for file in files {
                let url = str_of(file, "uri").unwrap_or_default();
                let file = File {
                    mime: str_of(file, "mime").unwrap_or_default(),
                    url,
                    name: str_of(file, "name").unwrap_or(url),
                };
                blocks.push(file_content(&file, &mut chain.builder, ordinal));
            }
            false
        }
        Some("error") => {
            let message = state
                .and_then(|state| state.get("error"))
                .and_then(|error| error.get("message").or(Some(error)))
                .and_then(Value::as_str)
                .unwrap_or_default();
            blocks.push(ContentBlock::text(message));
            // Late-2026 rows keep what the tool wrote before it failed; OpenCode sends it too.
            let partial = output();
            if !partial.is_empty() {
                blocks.push(ContentBlock::text(partial));
            }
            true
        }
        Some(_) | None => {
            blocks.push(ContentBlock::text(INTERRUPTED_TOOL));
            true
        }
    };
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: str_of(tool, "id").unwrap_or_default().to_owned(),
        tool_name: str_of(tool, "name").unwrap_or_default().to_owned(),
        content: MessageContent::Blocks(blocks),
        details: state
            .and_then(|state| state.get("structured"))
            .filter(|structured| {
                structured
                    .as_object()
                    .is_some_and(|object| !object.is_empty())
            })
            .cloned(),
        is_error,
        timestamp,
        extra: JsonObject::new(),
    })
}
