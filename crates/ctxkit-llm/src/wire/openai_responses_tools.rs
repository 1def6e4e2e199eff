//! OpenAI Responses with tools, for conversations: `function_call` and `function_call_output`
//! items, reasoning items sent back whole (with their encrypted content, as nothing is stored on
//! the server; one without it is left out). A call's id is `call_id|item id`, as Pi stores it.
//! Pure: no I/O.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock, JsonObject, ThinkingContent};
use serde_json::{Value, json};

use super::conversation::{self, Part, Turn};
use super::openai_responses::{check_shape, finish, response_usage};
use super::{WireRequest, provider_compaction, text_signature};
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;

pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let mut body = json!({
        "model": config.model,
        "instructions": request.system_prompt,
        "input": input(config, request),
        "store": false,
        "stream": false,
    });
    if let Some(max_tokens) = request.max_tokens {
        body["max_output_tokens"] = json!(max_tokens);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                })
            })
            .collect();
    }
    if let Some(compaction) = &config.openai_compaction {
        body["context_management"] = compaction.request_field();
    }
    super::openai_prompt_cache::add_key(config, request, &mut body);
    let mut wire = finish(config, body, request.reasoning);
    if request.reasoning.is_some() {
        wire.body["reasoning"]["summary"] = json!("auto");
    }
    // Nothing is stored on the server, so reasoning can only be passed back in its encrypted
    // form, which comes only when asked for. A reasoning model reasons without a level too.
    let reasons = config
        .model_info
        .as_ref()
        .is_some_and(|model| model.reasoning);
    if request.reasoning.is_some() || reasons {
        wire.body["include"] = json!(["reasoning.encrypted_content"]);
    }
    wire
}

fn input(config: &ProviderConfig, request: &ChatRequest) -> Vec<Value> {
    let mut out = Vec::new();
    for turn in conversation::turns(&request.messages) {
        match turn {
            Turn::User(parts) => {
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": input_parts(&parts)}));
                }
            }
            Turn::Assistant(reply) => {
                // The latest compaction item of this provider stands in for everything before
                // it, as the API asks; the session keeps that history for every other use.
                if let Some(item) = reply.provider_compaction().filter(|item| {
                    provider_compaction::is_compaction(item)
                        && conversation::same_source(&reply, &config.provider, config.api.as_str())
                }) {
                    out.clear();
                    out.push(item.clone());
                }
                assistant_items(config, &reply, &mut out);
            }
            Turn::ToolResult { id, parts, .. } => out.push(json!({
                "type": "function_call_output",
                "call_id": call_id(&id),
                "output": conversation::joined_text(&parts),
            })),
        }
    }
    out
}

fn input_parts(parts: &[Part<'_>]) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) | Part::Document { text, .. } => {
                json!({"type": "input_text", "text": text})
            }
            Part::Image { mime_type, data } => json!({
                "type": "input_image",
                "detail": "auto",
                "image_url": format!("data:{mime_type};base64,{data}"),
            }),
        })
        .collect()
}

fn call_id(id: &str) -> &str {
    id.split('|').next().unwrap_or(id)
}

/// A reasoning item stored as a thinking block's signature.
fn reasoning_item(thinking: &ThinkingContent) -> Option<Value> {
    thinking
        .thinking_signature
        .as_deref()
        .and_then(|signature| serde_json::from_str::<Value>(signature).ok())
        .filter(|item| item["type"] == "reasoning")
}

/// Whether a reasoning item can be sent back: under `store: false` only with its encrypted
/// content (the API looks any other up by id and answers 404 "Item with id 'rs_…' not found").
fn replayable(item: &Value) -> bool {
    item.get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|content| !content.is_empty())
}

/// The reasoning item a thinking block sends back, if any: only to the model that wrote it, and
/// only one that carries its encrypted content.
fn sent_reasoning(
    config: &ProviderConfig,
    reply: &AssistantMessage,
    thinking: &ThinkingContent,
) -> Option<Value> {
    reasoning_item(thinking)
        .filter(|item| conversation::from_this_model(reply, config) && replayable(item))
}

/// Whether a reply's item ids (`msg_…`, `fc_…`) go back: only beside the reasoning they were
/// issued with, as the API refuses an item whose reasoning item is missing ("Item 'fc_…' of type
/// 'function_call' was provided without its required 'reasoning' item"). The one rule for every
/// way reasoning is left out: another model wrote it, it has no encrypted content, or the view's
/// transforms dropped it (`dropOldThinking`, pruning), which leaves no trace in the reply. So a
/// reply goes back with its ids only when it holds reasoning and all of it is sent; without
/// them, under `store: false`, the items are read as they are.
fn sends_item_ids(config: &ProviderConfig, reply: &AssistantMessage) -> bool {
    let mut thinking = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(thinking) => reasoning_item(thinking).map(|_| thinking),
            ContentBlock::Text(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .peekable();
    thinking.peek().is_some()
        && thinking.all(|thinking| sent_reasoning(config, reply, thinking).is_some())
}

/// A reply's items: its reasoning items (see [`sent_reasoning`]), messages and function calls,
/// with their item ids when [`sends_item_ids`] allows them.
fn assistant_items(config: &ProviderConfig, reply: &AssistantMessage, out: &mut Vec<Value>) {
    let with_ids = sends_item_ids(config, reply);
    for block in &reply.content {
        match block {
            ContentBlock::Thinking(thinking) => {
                out.extend(sent_reasoning(config, reply, thinking));
            }
            ContentBlock::Text(text) if text.text.is_empty() => {}
            ContentBlock::Text(text) => {
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text.text, "annotations": []}],
                    "status": "completed",
                });
                let signature = text
                    .extra
                    .get("textSignature")
                    .and_then(Value::as_str)
                    .map(text_signature::decode);
                if let Some(signature) = signature {
                    if with_ids && signature.id.starts_with("msg_") {
                        item["id"] = json!(signature.id);
                    }
                    // The message's phase goes back with it, as OpenAI asks (Pi 1.6.0).
                    if let Some(phase) = signature.phase {
                        item["phase"] = json!(phase);
                    }
                }
                out.push(item);
            }
            ContentBlock::ToolCall(call) => {
                let mut item = json!({
                    "type": "function_call",
                    "call_id": call_id(&call.id),
                    "name": call.name,
                    "arguments": conversation::arguments_object(&call.arguments).to_string(),
                });
                if let Some((_, item_id)) = call.id.split_once('|')
                    && with_ids
                    && item_id.starts_with("fc_")
                {
                    item["id"] = json!(item_id);
                }
                out.push(item);
            }
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => {}
        }
    }
}

/// The reply of a success response.
pub(crate) fn parse(value: &Value) -> Result<AssistantMessage, &'static str> {
    check_shape(value)?;
    let output = value
        .get("output")
        .and_then(Value::as_array)
        .ok_or("no `output` array")?;
    let mut content = Vec::new();
    let mut compaction = None;
    for item in output {
        if provider_compaction::is_compaction(item) {
            compaction = Some(item.clone());
        } else if let Some(block) = output_item(item)? {
            content.push(block);
        }
    }
    let has_calls = content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let (stop_reason, error) = match value.get("status").and_then(Value::as_str) {
        Some("incomplete") => (StopReason::Length, None),
        Some("failed" | "cancelled") => (
            StopReason::Error,
            Some(
                value
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("The response failed")
                    .to_owned(),
            ),
        ),
        Some(_) | None if has_calls => (StopReason::ToolUse, None),
        Some(_) | None => (StopReason::Stop, None),
    };
    let mut reply = conversation::reply(content, response_usage(value), stop_reason, error);
    if let Some(item) = compaction {
        reply.set_provider_compaction(item);
    }
    Ok(reply)
}

/// One finished output item as a block: a reasoning item becomes thinking (its summary as text,
/// the whole item as the signature), a message text, a function call a tool call.
pub(crate) fn output_item(item: &Value) -> Result<Option<ContentBlock>, &'static str> {
    let text_of = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
    match item.get("type").and_then(Value::as_str) {
        Some("reasoning") => {
            let summary = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n\n");
            Ok(Some(conversation::thinking_block(
                summary,
                Some(item.to_string()),
                JsonObject::new(),
            )))
        }
        Some("message") => {
            let text = item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                    Some("output_text") => part.get("text").and_then(Value::as_str),
                    Some("refusal") => part.get("refusal").and_then(Value::as_str),
                    Some(_) | None => None,
                })
                .collect::<String>();
            let mut extra = JsonObject::new();
            if let Some(id) = item.get("id").and_then(Value::as_str) {
                let phase = item.get("phase").and_then(Value::as_str);
                extra.insert(
                    "textSignature".to_owned(),
                    json!(text_signature::encode(id, phase)),
                );
            }
            Ok(Some(conversation::text_block(text, extra)))
        }
        Some("function_call") => {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .ok_or("a `function_call` without `name`")?;
            Ok(Some(conversation::tool_call_block(
                format!("{}|{}", text_of("call_id"), text_of("id")),
                name.to_owned(),
                super::arguments::read_arguments(text_of("arguments")),
                JsonObject::new(),
            )))
        }
        Some(_) | None => Ok(None),
    }
}

#[cfg(test)]
#[path = "openai_responses_tools_tests.rs"]
mod tests;
