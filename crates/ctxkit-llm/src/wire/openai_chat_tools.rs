//! OpenAI Chat Completions with tools, for conversations: a system prompt, the model's view (user,
//! assistant and tool-result messages in Pi's format) and tool definitions in; one assistant
//! message with text, reasoning and tool calls out. Pure: no I/O.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, TextContent,
    ThinkingContent, ToolCall,
};
use serde_json::{Value, json};

use super::WireRequest;
use super::openai_chat::{chat_completions_request, chat_usage};
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;
use crate::overflow::StopReason;

/// The text sent for a tool call that has no result in the conversation (an interrupted turn):
/// the API refuses a `tool_calls` message that is not answered.
pub(crate) const NO_RESULT: &str = "No result provided";

pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let mut body = json!({
        "model": config.model,
        "messages": messages(request),
        "stream": false,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
    }
    chat_completions_request(config, body, request.max_tokens, request.reasoning)
}

/// The `messages` array: the system prompt, then every message in order. Failed replies are never
/// sent; a tool result whose call is not the latest reply's is dropped; a call without a result is
/// answered with [`NO_RESULT`].
fn messages(request: &ChatRequest) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": request.system_prompt})];
    let mut pending: Vec<String> = Vec::new();
    for message in &request.messages {
        match message {
            AgentMessage::User(user) => {
                close_pending(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": user_content(&user.content)}));
            }
            AgentMessage::Assistant(reply) => {
                if reply.is_aborted_or_error() {
                    continue;
                }
                close_pending(&mut out, &mut pending);
                if let Some(value) = assistant(reply, &mut pending) {
                    out.push(value);
                }
            }
            AgentMessage::ToolResult(result) => {
                let Some(position) = pending.iter().position(|id| *id == result.tool_call_id)
                else {
                    continue;
                };
                pending.remove(position);
                out.push(json!({
                    "role": "tool",
                    "tool_call_id": result.tool_call_id,
                    "content": tool_text(&result.content),
                }));
            }
            AgentMessage::Custom(custom) => {
                close_pending(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": user_content(&custom.content)}));
            }
            AgentMessage::BranchSummary(summary) => {
                close_pending(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": summary.summary}));
            }
            AgentMessage::CompactionSummary(summary) => {
                close_pending(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": summary.summary}));
            }
            AgentMessage::BashExecution(bash) => {
                if bash.exclude_from_context == Some(true) {
                    continue;
                }
                close_pending(&mut out, &mut pending);
                let text = format!("Ran `{}`\n{}", bash.command, bash.output);
                out.push(json!({"role": "user", "content": text}));
            }
            AgentMessage::Unknown(_) => {}
        }
    }
    close_pending(&mut out, &mut pending);
    out
}

fn close_pending(out: &mut Vec<Value>, pending: &mut Vec<String>) {
    for id in pending.drain(..) {
        out.push(json!({"role": "tool", "tool_call_id": id, "content": NO_RESULT}));
    }
}

/// A reply's text and tool calls (reasoning is not sent back); `None` when it holds neither.
fn assistant(reply: &AssistantMessage, pending: &mut Vec<String>) -> Option<Value> {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in &reply.content {
        match block {
            ContentBlock::Text(text) if !text.text.is_empty() => texts.push(text.text.as_str()),
            ContentBlock::ToolCall(call) => {
                pending.push(call.id.clone());
                calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments_text(&call.arguments)},
                }));
            }
            ContentBlock::Text(_)
            | ContentBlock::Image(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::Unknown(_) => {}
        }
    }
    if texts.is_empty() && calls.is_empty() {
        return None;
    }
    let content = if texts.is_empty() {
        Value::Null
    } else {
        Value::String(texts.join("\n"))
    };
    let mut value = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        value["tool_calls"] = Value::Array(calls);
    }
    Some(value)
}

/// Arguments as the JSON text the API expects; text that was not valid JSON goes back unchanged.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(text) => text.clone(),
        Value::Null => "{}".to_owned(),
        Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            arguments.to_string()
        }
    }
}

/// A string when the content is only text, else an array of text and image parts.
fn user_content(content: &MessageContent) -> Value {
    let blocks = match content {
        MessageContent::Text(text) => return Value::String(text.clone()),
        MessageContent::Blocks(blocks) => blocks,
    };
    let only_text = blocks
        .iter()
        .all(|block| matches!(block, ContentBlock::Text(_)));
    if only_text {
        return Value::String(block_texts(blocks));
    }
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(json!({"type": "text", "text": text.text})),
            ContentBlock::Image(image) => Some(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)},
            })),
            ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) | ContentBlock::Unknown(_) => {
                None
            }
        })
        .collect();
    Value::Array(parts)
}

fn block_texts(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            ContentBlock::Image(image) => Some(format!("[image: {}]", image.mime_type)),
            ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) | ContentBlock::Unknown(_) => {
                None
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tool messages carry text only; images are named.
fn tool_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => block_texts(blocks),
    }
}

/// The reply of a success response, without provider, model or timestamp.
pub(crate) fn parse(value: &Value) -> Result<AssistantMessage, &'static str> {
    let choice = value.pointer("/choices/0").ok_or("no `choices`")?;
    let message = choice.get("message").ok_or("no `message` in the choice")?;
    let mut content = Vec::new();
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|key| message.get(*key).and_then(Value::as_str))
        .filter(|text| !text.is_empty());
    if let Some(thinking) = reasoning {
        content.push(ContentBlock::Thinking(ThinkingContent {
            thinking: thinking.to_owned(),
            thinking_signature: None,
            extra: JsonObject::new(),
        }));
    }
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(_) | None => String::new(),
    };
    if !text.is_empty() {
        content.push(ContentBlock::Text(TextContent {
            text,
            extra: JsonObject::new(),
        }));
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, call) in calls.iter().enumerate() {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or("a tool call without `function.name`")?;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{index}"), str::to_owned);
        let arguments = match call.pointer("/function/arguments") {
            Some(Value::String(text)) if text.trim().is_empty() => json!({}),
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(other) => other.clone(),
            None => json!({}),
        };
        content.push(ContentBlock::ToolCall(ToolCall {
            id,
            name: name.to_owned(),
            arguments,
            extra: JsonObject::new(),
        }));
    }
    let has_calls = !calls.is_empty();
    let (stop_reason, error_message) = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => (StopReason::Length, None),
        Some("tool_calls" | "function_call") => (StopReason::ToolUse, None),
        Some("content_filter") => (
            StopReason::Error,
            Some("The provider's content filter stopped the reply".to_owned()),
        ),
        Some(_) | None if has_calls => (StopReason::ToolUse, None),
        Some(_) | None => (StopReason::Stop, None),
    };
    let usage = chat_usage(value);
    Ok(AssistantMessage {
        content,
        api: None,
        provider: None,
        model: None,
        usage: Some(usage),
        stop_reason: Some(stop_reason.as_str().to_owned()),
        error_message,
        timestamp: None,
        extra: JsonObject::new(),
    })
}

#[cfg(test)]
#[path = "openai_chat_tools_tests.rs"]
mod tests;
