//! OpenAI Chat Completions with tools, for conversations: a system prompt, the model's view (user,
//! assistant and tool-result messages in Pi's format) and tool definitions in; one assistant
//! message with text, reasoning and tool calls out. Pure: no I/O.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{
    AssistantMessage, ContentBlock, JsonObject, TextContent, ThinkingContent, ToolCall,
};
use serde_json::{Value, json};

use super::WireRequest;
use super::conversation::{self, Part, Turn};
use super::openai_chat::{chat_completions_request, chat_usage};
use super::reasoning_details;
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;
use crate::stream::think_tags::THINK_TAGS;

/// The error of a reply stopped by the provider's content filter.
pub(crate) const CONTENT_FILTER: &str = "The provider's content filter stopped the reply";

/// The fields compatible servers put reasoning in, in the order Pi 1.6.0 reads them
/// (`reasoning_content`: DeepSeek, Kimi, llama.cpp; `reasoning`: vLLM, Ollama, OpenRouter).
/// A reply's thinking block is signed with the field it came in, and goes back in it.
pub(crate) const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// The reasoning of a message or a stream delta: the first field with text (chutes.ai sends the
/// same text in two fields; some servers send an empty `reasoning_content` beside a full
/// `reasoning`), and that text.
pub(crate) fn reasoning_of(value: &Value) -> Option<(&'static str, &str)> {
    REASONING_FIELDS.iter().find_map(|field| {
        value
            .get(*field)
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(|text| (*field, text))
    })
}

pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let mut body = json!({
        "model": config.model,
        "messages": messages(config, request),
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
    super::openai_prompt_cache::add_key(config, request, &mut body);
    chat_completions_request(config, body, request.max_tokens, request.reasoning)
}

/// Said in place of a user's images to a model that takes text only (Pi 1.6.0's words).
const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";

/// Said in place of a tool result's images to a model that takes text only (Pi 1.6.0's words).
const TOOL_IMAGE_OMITTED: &str = "(tool image omitted: model does not support images)";

/// What a model whose `requiresAssistantAfterToolResult` is set is told between tool results and
/// the user message after them (Pi 1.6.0's words).
const TOOL_RESULTS_PROCESSED: &str = "I have processed the tool results.";

/// The `messages` array: the system prompt (in the role the model takes), then the conversation
/// (see [`conversation::turns`]). A `tool` message holds only text, so the images of a run of
/// tool results follow it in one user message, as Pi sends them. To a model that takes no images,
/// each is named in its place.
fn messages(config: &ProviderConfig, request: &ChatRequest) -> Vec<Value> {
    let images = config.takes_images();
    let bridge = crate::chat_compat::requires_assistant_after_tool_result(config);
    let named = crate::chat_compat::requires_tool_result_name(config);
    let role = crate::chat_compat::instruction_role(config);
    let mut out = vec![json!({"role": role, "content": request.system_prompt})];
    let mut result_images: Vec<Value> = Vec::new();
    for turn in conversation::turns(&request.messages) {
        if !matches!(turn, Turn::ToolResult { .. }) {
            flush_result_images(config, &mut out, &mut result_images);
        }
        match turn {
            Turn::User(parts) => {
                let after_results = out.last().is_some_and(|last| last["role"] == "tool");
                if bridge && after_results {
                    out.push(json!({"role": "assistant", "content": TOOL_RESULTS_PROCESSED}));
                }
                out.push(json!({
                    "role": "user",
                    "content": user_content(&without_images(parts, images, USER_IMAGE_OMITTED)),
                }));
            }
            Turn::Assistant(reply) => out.extend(assistant(config, &reply)),
            Turn::ToolResult {
                id, name, parts, ..
            } => {
                let parts = without_images(parts, images, TOOL_IMAGE_OMITTED);
                let mut message = json!({
                    "role": "tool",
                    "tool_call_id": conversation::chat_completions_id(&id, &config.provider),
                    "content": tool_result_text(&parts),
                });
                if named && !name.is_empty() {
                    message["name"] = json!(name);
                }
                out.push(message);
                result_images.extend(parts.iter().filter_map(image_part));
            }
        }
    }
    flush_result_images(config, &mut out, &mut result_images);
    out
}

/// `parts` as sent: when the model takes no images, each run of them is one `placeholder`.
fn without_images<'a>(
    parts: Vec<Part<'a>>,
    images: bool,
    placeholder: &'static str,
) -> Vec<Part<'a>> {
    if images {
        return parts;
    }
    let mut out: Vec<Part<'a>> = Vec::with_capacity(parts.len());
    for part in parts {
        let part = match part {
            Part::Image { .. } => Part::Text(std::borrow::Cow::Borrowed(placeholder)),
            Part::Text(_) | Part::Document { .. } => part,
        };
        let repeated = matches!((&part, out.last()),
            (Part::Text(text), Some(Part::Text(previous))) if text == placeholder && previous == placeholder);
        if !repeated {
            out.push(part);
        }
    }
    out
}

/// The text of a tool result: its text parts (the images go after the run of results).
fn tool_result_text(parts: &[Part<'_>]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text(text) | Part::Document { text, .. } => Some(text.as_ref()),
            Part::Image { .. } => None,
        })
        .collect();
    let text = texts.join("\n");
    if !text.trim().is_empty() {
        text
    } else if parts.iter().any(|part| matches!(part, Part::Image { .. })) {
        "(see attached image)".to_owned()
    } else {
        "(no tool output)".to_owned()
    }
}

/// The user message that carries the images of the tool results just sent, if they had any
/// (after an assistant message saying they were processed, when the model requires one).
fn flush_result_images(config: &ProviderConfig, out: &mut Vec<Value>, images: &mut Vec<Value>) {
    if images.is_empty() {
        return;
    }
    if crate::chat_compat::requires_assistant_after_tool_result(config) {
        out.push(json!({"role": "assistant", "content": TOOL_RESULTS_PROCESSED}));
    }
    let mut content = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
    content.append(images);
    out.push(json!({"role": "user", "content": content}));
}

fn image_part(part: &Part<'_>) -> Option<Value> {
    match part {
        Part::Image { mime_type, data } => Some(json!({
            "type": "image_url",
            "image_url": {"url": format!("data:{mime_type};base64,{data}")},
        })),
        Part::Text(_) | Part::Document { .. } => None,
    }
}

/// A reply's text, tool calls and reasoning (see [`sent_reasoning`]); `None` when it holds
/// neither text nor calls (Pi 1.6.0 sends no reasoning-only message either).
fn assistant(config: &ProviderConfig, reply: &AssistantMessage) -> Option<Value> {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in &reply.content {
        match block {
            ContentBlock::Text(text) if !text.text.is_empty() => texts.push(text.text.as_str()),
            ContentBlock::ToolCall(call) => {
                calls.push(json!({
                    "id": conversation::chat_completions_id(&call.id, &config.provider),
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
    let thinking_text = thinking_as_text(config, reply);
    // Reasoning the server sent between `<think>` tags goes back between them (a chat template
    // reads it there), for this model's replies whose thinking the view kept.
    let tagged = tagged_thinking(config, reply).filter(|_| thinking_text.is_none());
    let joined;
    if let Some(thinking) = &tagged {
        joined = format!("<think>{thinking}</think>\n\n{}", texts.join("\n"));
        texts = vec![joined.as_str()];
    }
    if texts.is_empty() && calls.is_empty() && thinking_text.is_none() {
        return None;
    }
    let content = if let Some(thinking) = thinking_text {
        // Pi 1.6.0 sends the reasoning as the first text part, then the reply's non-blank texts.
        let parts = std::iter::once(thinking)
            .chain(
                texts
                    .iter()
                    .filter(|text| !text.trim().is_empty())
                    .map(|text| (*text).to_owned()),
            )
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        Value::Array(parts)
    } else if !texts.is_empty() {
        Value::String(texts.join("\n"))
    } else if crate::chat_compat::requires_assistant_after_tool_result(config) {
        Value::String(String::new())
    } else {
        Value::Null
    };
    let mut value = json!({"role": "assistant", "content": content});
    if conversation::from_this_model(reply, config) {
        if let Some(details) = sent_details(reply) {
            value["reasoning_details"] = Value::Array(details);
        } else if let Some((field, reasoning)) = sent_reasoning(reply) {
            // Reasoning sent as text is not sent again in its field.
            if !value["content"].is_array() {
                value[field] = Value::String(reasoning);
            }
        }
    }
    if !calls.is_empty() {
        value["tool_calls"] = Value::Array(calls);
    }
    // DeepSeek's thinking mode refuses a reply without the field; one whose reasoning is not sent
    // (an earlier turn's, dropped by the view's transforms; another model's) gets it empty, as
    // Pi 1.6.0 sends it.
    if crate::chat_compat::requires_reasoning_content(config)
        && value.get("reasoning_content").is_none()
    {
        value["reasoning_content"] = Value::String(String::new());
    }
    Some(value)
}

/// A reply's reasoning as text, for a model whose `requiresThinkingAsText` is set: its non-blank
/// thinking blocks joined by a blank line; `None` for another model's reply or one without.
fn thinking_as_text(config: &ProviderConfig, reply: &AssistantMessage) -> Option<String> {
    if !crate::chat_compat::requires_thinking_as_text(config)
        || !conversation::from_this_model(reply, config)
    {
        return None;
    }
    let blocks = non_blank_thinking(reply, |_| true);
    (!blocks.is_empty()).then(|| blocks.join("\n\n"))
}

/// The thinking of one of this model's replies that the server sent between `<think>` tags
/// (signed [`THINK_TAGS`]), its non-blank blocks joined; `None` for any other reply.
fn tagged_thinking(config: &ProviderConfig, reply: &AssistantMessage) -> Option<String> {
    if !conversation::from_this_model(reply, config) {
        return None;
    }
    let blocks = non_blank_thinking(reply, |thinking| {
        thinking.thinking_signature.as_deref() == Some(THINK_TAGS)
    });
    (!blocks.is_empty()).then(|| blocks.concat())
}

/// The text of `reply`'s thinking blocks that are not blank and that `wanted` takes, in order.
fn non_blank_thinking(
    reply: &AssistantMessage,
    wanted: impl Fn(&ThinkingContent) -> bool,
) -> Vec<&str> {
    reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(thinking)
                if !thinking.thinking.trim().is_empty() && wanted(thinking) =>
            {
                Some(thinking.thinking.as_str())
            }
            ContentBlock::Thinking(_)
            | ContentBlock::Text(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect()
}

/// The `reasoning_details` a reply sends back: those its first thinking block signed with them
/// holds, else the encrypted items an older Pi kept on its tool calls (`thoughtSignature`).
fn sent_details(reply: &AssistantMessage) -> Option<Vec<Value>> {
    let signed = reply.content.iter().find_map(|block| match block {
        ContentBlock::Thinking(thinking) => thinking
            .thinking_signature
            .as_deref()
            .and_then(reasoning_details::from_signature),
        ContentBlock::Text(_)
        | ContentBlock::ToolCall(_)
        | ContentBlock::Image(_)
        | ContentBlock::Unknown(_) => None,
    });
    if signed.is_some() {
        return signed;
    }
    let legacy: Vec<Value> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => call
                .extra
                .get("thoughtSignature")
                .and_then(Value::as_str)
                .and_then(reasoning_details::from_tool_call_signature),
            ContentBlock::Text(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect();
    (!legacy.is_empty()).then_some(legacy)
}

/// The reasoning a reply sends back in a field of its own, and the field: the one its first
/// non-empty thinking block is signed with when that names a reasoning field, the non-empty
/// blocks' text joined by `\n`.
fn sent_reasoning(reply: &AssistantMessage) -> Option<(&'static str, String)> {
    let thinking: Vec<&ThinkingContent> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                Some(thinking)
            }
            ContentBlock::Thinking(_)
            | ContentBlock::Text(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect();
    let signature = thinking.first()?.thinking_signature.as_deref()?;
    let field = REASONING_FIELDS
        .into_iter()
        .find(|field| *field == signature)?;
    let text: Vec<&str> = thinking
        .iter()
        .map(|block| block.thinking.as_str())
        .collect();
    Some((field, text.join("\n")))
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
fn user_content(parts: &[Part<'_>]) -> Value {
    if parts
        .iter()
        .all(|part| matches!(part, Part::Text(_) | Part::Document { .. }))
    {
        return Value::String(conversation::joined_text(parts));
    }
    let parts: Vec<Value> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text(text) | Part::Document { text, .. } => {
                Some(json!({"type": "text", "text": text}))
            }
            Part::Image { .. } => image_part(part),
        })
        .collect();
    Value::Array(parts)
}

/// A whole content's thinking between `<think>` tags, if it opens with them, and its text.
fn split_think_tags(content: &str) -> (String, String) {
    let mut splitter = crate::stream::think_tags::Splitter::default();
    let mut pieces = splitter.split(content);
    pieces.extend(splitter.finish());
    let (mut thinking, mut text) = (String::new(), String::new());
    for piece in pieces {
        match piece {
            crate::stream::think_tags::Piece::Thinking(part) => thinking.push_str(&part),
            crate::stream::think_tags::Piece::Text(part) => text.push_str(&part),
        }
    }
    (thinking, text)
}

/// The reply of a success response, without provider, model or timestamp.
pub(crate) fn parse(value: &Value) -> Result<AssistantMessage, &'static str> {
    let choice = value.pointer("/choices/0").ok_or("no `choices`")?;
    let message = choice.get("message").ok_or("no `message` in the choice")?;
    let mut content = Vec::new();
    let details: Vec<Value> = message
        .get("reasoning_details")
        .and_then(Value::as_array)
        .map(|items| {
            let mut details = Vec::new();
            for item in items
                .iter()
                .filter(|item| reasoning_details::is_detail(item))
            {
                reasoning_details::append(&mut details, item);
            }
            details
        })
        .unwrap_or_default();
    let reasoning = reasoning_of(message);
    if reasoning.is_some() || !details.is_empty() {
        let (field, thinking) = reasoning.unwrap_or(("", ""));
        let signature = if details.is_empty() {
            field.to_owned()
        } else {
            Value::Array(details).to_string()
        };
        content.push(ContentBlock::Thinking(ThinkingContent {
            thinking: thinking.to_owned(),
            thinking_signature: Some(signature),
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
    // Reasoning between `<think>` tags opening the content, when no field carried any.
    let (tagged, text) = if content.is_empty() {
        split_think_tags(&text)
    } else {
        (String::new(), text)
    };
    if !tagged.is_empty() {
        content.push(ContentBlock::Thinking(ThinkingContent {
            thinking: tagged,
            thinking_signature: Some(THINK_TAGS.to_owned()),
            extra: JsonObject::new(),
        }));
    }
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
        Some("content_filter") => (StopReason::Error, Some(CONTENT_FILTER.to_owned())),
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
