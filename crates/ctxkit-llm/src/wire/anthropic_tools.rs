//! Anthropic Messages with tools, for conversations: `tool_use` blocks out, `tool_result` blocks
//! back in one user message, thinking blocks sent back with their signatures (redacted thinking
//! as `redacted_thinking`). Pure: no I/O.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock, JsonObject};
use serde_json::{Value, json};

use super::conversation::{self, Part, Turn};
use super::{
    WireRequest, anthropic, anthropic_cache, anthropic_compaction, anthropic_context,
    provider_compaction, u64_at, usage,
};
use crate::CacheRetention;
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;

/// The output limit when neither the request nor the model table gives one (the API requires it).
const DEFAULT_MAX_TOKENS: u64 = 8192;

pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let messages = messages(config, request);
    let last = messages.len().checked_sub(1);
    build_marked(config, request, messages, last)
}

/// A cache-prefix summary request whose first `continued` messages are the conversation request
/// it continues: the breakpoints are that request's, so it goes out again byte for byte and is read
/// from the cache; nothing after it is marked, since a one-off summary's own part is not worth a
/// cache write (Pi sends its summaries with no caching at all).
pub(crate) fn build_continuing(
    config: &ProviderConfig,
    request: &ChatRequest,
    continued: usize,
) -> WireRequest {
    let continued = request
        .messages
        .get(..continued)
        .unwrap_or(&request.messages);
    let conversation = ChatRequest {
        messages: continued.to_vec(),
        ..request.clone()
    };
    let last = messages(config, &conversation).len().checked_sub(1);
    build_marked(config, request, messages(config, request), last)
}

/// The request of `messages`, with breakpoints on the system prompt, the last tool, the user
/// message at `marked` and the last cut tool result before it.
fn build_marked(
    config: &ProviderConfig,
    request: &ChatRequest,
    mut messages: Vec<Value>,
    marked: Option<usize>,
) -> WireRequest {
    let retention = CacheRetention::for_request(config.cache_retention, request.cache_retention);
    if let Some(index) = marked {
        anthropic_cache::mark_user_message(&mut messages, index, retention);
        if let Some(end) = request.cache.stable_prefix_end.as_deref() {
            anthropic_cache::mark_stable_prefix(&mut messages, index, end, retention);
        }
    }
    let max_tokens = request
        .max_tokens
        .or_else(|| config.model_info.as_ref().map(|model| model.max_output))
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": config.model,
        "max_tokens": max_tokens,
        "system": anthropic_cache::system(&request.system_prompt, retention),
        "messages": messages,
        "stream": false,
    });
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        anthropic_cache::mark_tools(&mut tools, retention);
        body["tools"] = Value::Array(tools);
    }
    let mut wire = anthropic::finish(config, body, max_tokens, request.reasoning);
    let mut edits = Vec::new();
    let mut betas = Vec::new();
    if let Some(editing) = &config.context_editing {
        edits.extend(editing.edits());
        betas.push(anthropic_context::BETA);
    }
    if let Some(compaction) = &config.anthropic_compaction {
        edits.push(compaction.edit());
        betas.push(provider_compaction::ANTHROPIC_BETA);
    }
    if replayed_block(config, request).is_some() {
        betas.push(anthropic_compaction::ON_DEMAND_BETA);
    }
    if !edits.is_empty() {
        wire.body["context_management"] = json!({ "edits": edits });
    }
    if !betas.is_empty() {
        let configured = config
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
            .map(|(_, value)| value.as_str());
        wire.headers.push((
            "anthropic-beta".to_owned(),
            provider_compaction::beta_header(configured, &betas),
        ));
    }
    wire
}

/// The messages of `request` followed by `reply`, as the next request would send them (a
/// reply's unanswered calls get no placeholder result here: nothing after the reply is kept).
pub(crate) fn messages_with_reply(
    config: &ProviderConfig,
    request: &ChatRequest,
    reply: &AssistantMessage,
) -> Vec<Value> {
    let mut next = request.clone();
    next.messages
        .push(ctxkit_protocol::AgentMessage::Assistant(reply.clone()));
    let sent = messages(config, request).len();
    let mut out = messages(config, &next);
    out.truncate(sent + 1);
    out
}

/// The on-demand compaction block the request opens with, when its first message (the
/// compaction summary) carries one this model may read.
fn replayed_block<'a>(config: &ProviderConfig, request: &'a ChatRequest) -> Option<&'a Value> {
    request
        .messages
        .first()
        .and_then(|first| anthropic_compaction::replayable(config, first))
}

fn messages(config: &ProviderConfig, request: &ChatRequest) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // An on-demand compaction goes first, as the assistant message the API returned it in, in
    // place of the summary text; a reply right after it joins that message.
    let mut conversation = request.messages.as_slice();
    let opens_with_block = match replayed_block(config, request) {
        Some(block) => {
            out.push(json!({"role": "assistant", "content": [block]}));
            conversation = conversation.get(1..).unwrap_or_default();
            true
        }
        None => false,
    };
    for turn in conversation::turns(conversation) {
        match turn {
            Turn::User(parts) => {
                let blocks = content_blocks(&parts);
                if !blocks.is_empty() {
                    out.push(json!({"role": "user", "content": blocks}));
                }
            }
            Turn::Assistant(reply) => {
                let blocks = assistant_blocks(config, &reply);
                let joins_block = opens_with_block && out.len() == 1;
                match out
                    .last_mut()
                    .and_then(|last| last["content"].as_array_mut())
                {
                    _ if blocks.is_empty() => {}
                    Some(content) if joins_block => content.extend(blocks),
                    Some(_) | None => out.push(json!({"role": "assistant", "content": blocks})),
                }
            }
            Turn::ToolResult {
                id,
                parts,
                is_error,
                ..
            } => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": conversation::portable_id(&id),
                    "content": content_blocks(&parts),
                });
                if is_error {
                    block["is_error"] = json!(true);
                }
                // Results of one turn go together in one user message, right after the calls.
                let previous = out.last_mut().filter(|message| {
                    message["role"] == "user"
                        && message["content"]
                            .as_array()
                            .and_then(|blocks| blocks.first())
                            .is_some_and(|first| first["type"] == "tool_result")
                });
                match previous.and_then(|message| message["content"].as_array_mut()) {
                    Some(blocks) => blocks.push(block),
                    None => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    out
}

fn content_blocks(parts: &[Part<'_>]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|part| match part {
            Part::Text(text) if text.trim().is_empty() => None,
            Part::Text(text) => Some(json!({"type": "text", "text": text})),
            Part::Image { mime_type, data } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            })),
            Part::Document { block, .. } => Some(Value::Object((*block).clone())),
        })
        .collect()
}

/// A reply's blocks: thinking goes back only to the model that wrote it, signed (redacted
/// thinking as its opaque data; unsigned thinking as text); another model's thinking is left out,
/// as Pi 1.6 leaves it out (its signatures are that model's, and its text would read as part of
/// the visible reply).
fn assistant_blocks(config: &ProviderConfig, reply: &AssistantMessage) -> Vec<Value> {
    let same = conversation::same_source(reply, &config.provider, config.api.as_str());
    let same_model = conversation::from_this_model(reply, config);
    let mut blocks = Vec::new();
    // The provider's compaction goes back first, as it came: the API then reads the conversation
    // from it on. Another provider, or this one with compaction (and so its beta) turned off, gets
    // the session's summary text instead.
    if let Some(compaction) = reply.provider_compaction().filter(|block| {
        same && config.anthropic_compaction.is_some() && provider_compaction::is_compaction(block)
    }) {
        blocks.push(compaction.clone());
    }
    for block in &reply.content {
        match block {
            ContentBlock::Text(text) if text.text.trim().is_empty() => {}
            ContentBlock::Text(text) => blocks.push(json!({"type": "text", "text": text.text})),
            ContentBlock::Thinking(_) if !same_model => {}
            ContentBlock::Thinking(thinking) => {
                let signature = thinking
                    .thinking_signature
                    .as_deref()
                    .filter(|signature| !signature.trim().is_empty());
                let redacted = thinking.extra.get("redacted") == Some(&Value::Bool(true));
                match signature {
                    Some(data) if redacted => {
                        blocks.push(json!({"type": "redacted_thinking", "data": data}));
                    }
                    Some(signature) => blocks.push(json!({
                        "type": "thinking",
                        "thinking": thinking.thinking,
                        "signature": signature,
                    })),
                    None if redacted || thinking.thinking.trim().is_empty() => {}
                    None => blocks.push(json!({"type": "text", "text": thinking.thinking})),
                }
            }
            ContentBlock::ToolCall(call) => blocks.push(json!({
                "type": "tool_use",
                "id": conversation::portable_id(&call.id),
                "name": call.name,
                "input": conversation::arguments_object(&call.arguments),
            })),
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => {}
        }
    }
    blocks
}

/// The reply of a success response.
pub(crate) fn parse(value: &Value) -> Result<AssistantMessage, &'static str> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` array")?;
    let mut content = Vec::new();
    let mut compaction = None;
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                content.push(conversation::text_block(text.to_owned(), JsonObject::new()));
            }
            Some("thinking") => content.push(conversation::thinking_block(
                str_at(block, "thinking"),
                block
                    .get("signature")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                JsonObject::new(),
            )),
            Some("redacted_thinking") => content.push(redacted(str_at(block, "data"))),
            Some("compaction") => compaction = Some(block.clone()),
            Some("tool_use") => content.push(conversation::tool_call_block(
                str_at(block, "id"),
                block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a `tool_use` block without `name`")?
                    .to_owned(),
                Ok(block.get("input").cloned().unwrap_or_else(|| json!({}))),
                JsonObject::new(),
            )),
            Some(_) | None => {}
        }
    }
    let (stop_reason, error) = stop_reason(value.get("stop_reason").and_then(Value::as_str));
    let mut reply = conversation::reply(
        content,
        message_usage(value.get("usage").unwrap_or(&Value::Null)),
        stop_reason,
        error,
    );
    if let Some(context_management) = value.get("context_management") {
        reply.set_provider_context_edits(&anthropic_context::applied_edits(context_management));
    }
    if let Some(block) = compaction {
        reply.set_provider_compaction(block);
    }
    Ok(reply)
}

/// A redacted thinking block as Pi stores it: the opaque data as the signature.
pub(crate) fn redacted(data: String) -> ContentBlock {
    let mut extra = JsonObject::new();
    extra.insert("redacted".to_owned(), Value::Bool(true));
    conversation::thinking_block("[Reasoning redacted]".to_owned(), Some(data), extra)
}

pub(crate) fn stop_reason(reason: Option<&str>) -> (StopReason, Option<String>) {
    match reason {
        Some("max_tokens" | "model_context_window_exceeded") => (StopReason::Length, None),
        Some("tool_use") => (StopReason::ToolUse, None),
        Some("refusal") => (
            StopReason::Error,
            Some("The model refused to answer".to_owned()),
        ),
        Some(_) | None => (StopReason::Stop, None),
    }
}

/// Usage of a `usage` object (a response's, or a stream's `message_start`/`message_delta`).
/// A compaction's own call is reported apart, in `iterations` (the top-level numbers are the
/// answer's): kept raw on the usage, so the file says what the compaction cost.
pub(crate) fn message_usage(usage_value: &Value) -> ctxkit_protocol::Usage {
    let mut usage = usage(
        u64_at(usage_value, "/input_tokens"),
        u64_at(usage_value, "/output_tokens"),
        u64_at(usage_value, "/cache_read_input_tokens"),
        u64_at(usage_value, "/cache_creation_input_tokens"),
    );
    // The split of the cache writes by lifetime, when the API reports it.
    if let Some(long) = usage_value
        .pointer("/cache_creation/ephemeral_1h_input_tokens")
        .and_then(Value::as_u64)
    {
        usage
            .extra
            .insert(ctxkit_models::LONG_CACHE_WRITES.to_owned(), json!(long));
    }
    if let Some(iterations) = usage_value
        .get("iterations")
        .filter(|value| value.is_array())
    {
        usage
            .extra
            .insert("iterations".to_owned(), iterations.clone());
    }
    usage
}

fn str_at(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}
