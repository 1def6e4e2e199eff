//! Gemini `generateContent` with tools, for conversations: `functionCall` parts from the model,
//! `functionResponse` parts back in one user turn, thought signatures echoed on the part that
//! carried them (Pi keeps them as `thoughtSignature` on tool calls, `textSignature` on text,
//! `thinkingSignature` on thinking). Pure: no I/O.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock, JsonObject};
use serde_json::{Value, json};

use super::WireRequest;
use super::conversation::{self, Part, Turn};
use super::gemini::{finish, gemini_usage, generation};
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;

pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let mut body = json!({
        "systemInstruction": { "parts": [{ "text": request.system_prompt }] },
        "contents": contents(config, request),
        "generationConfig": generation(config, request.max_tokens, request.reasoning, true),
    });
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parametersJsonSchema": tool.parameters,
                })
            })
            .collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
    }
    finish(config, body, "generateContent")
}

fn contents(config: &ProviderConfig, request: &ChatRequest) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for turn in conversation::turns(&request.messages) {
        match turn {
            Turn::User(parts) => {
                let parts = user_parts(&parts);
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "parts": parts}));
                }
            }
            Turn::Assistant(reply) => {
                let parts = model_parts(config, &reply);
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Turn::ToolResult {
                name,
                parts,
                is_error,
                ..
            } => {
                let text = conversation::joined_text(&parts);
                let response = if is_error {
                    json!({ "error": text })
                } else {
                    json!({ "output": text })
                };
                let part = json!({"functionResponse": {"name": name, "response": response}});
                // All responses of a turn go in one user turn.
                let previous = out.last_mut().filter(|content| {
                    content["role"] == "user"
                        && content["parts"].as_array().is_some_and(|parts| {
                            parts
                                .iter()
                                .any(|part| part.get("functionResponse").is_some())
                        })
                });
                match previous.and_then(|content| content["parts"].as_array_mut()) {
                    Some(parts) => parts.push(part),
                    None => out.push(json!({"role": "user", "parts": [part]})),
                }
            }
        }
    }
    out
}

fn user_parts(parts: &[Part<'_>]) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) | Part::Document { text, .. } => json!({"text": text}),
            Part::Image { mime_type, data } => {
                json!({"inlineData": {"mimeType": mime_type, "data": data}})
            }
        })
        .collect()
}

/// A reply's parts. Signatures and thoughts go back only to the provider and model that made
/// them; thinking from elsewhere is left out, as Pi 1.6 leaves it out (as text it would read as
/// part of the visible reply).
fn model_parts(config: &ProviderConfig, reply: &AssistantMessage) -> Vec<Value> {
    let same = conversation::from_this_model(reply, config);
    let signature = |extra: &JsonObject, key: &str| {
        extra
            .get(key)
            .and_then(Value::as_str)
            .filter(|_| same)
            .map(str::to_owned)
    };
    let mut parts = Vec::new();
    for block in &reply.content {
        let (mut part, signature) = match block {
            ContentBlock::Text(text) => {
                let signature = signature(&text.extra, "textSignature");
                if text.text.trim().is_empty() && signature.is_none() {
                    continue;
                }
                (json!({"text": text.text}), signature)
            }
            ContentBlock::Thinking(thinking) if same => {
                let signature = thinking.thinking_signature.clone();
                if thinking.thinking.trim().is_empty() && signature.is_none() {
                    continue;
                }
                (
                    json!({"thought": true, "text": thinking.thinking}),
                    signature,
                )
            }
            ContentBlock::Thinking(_) => continue,
            ContentBlock::ToolCall(call) => (
                json!({"functionCall": {
                    "name": call.name,
                    "args": conversation::arguments_object(&call.arguments),
                }}),
                signature(&call.extra, "thoughtSignature"),
            ),
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => continue,
        };
        if let Some(signature) = signature {
            part["thoughtSignature"] = json!(signature);
        }
        parts.push(part);
    }
    parts
}

/// Why Gemini refused the prompt itself (`promptFeedback.blockReason`, sent without candidates
/// in place of a reply: `PROHIBITED_CONTENT`, `SAFETY`, `BLOCKLIST`, …), as the reply's error.
pub(crate) fn blocked_prompt(value: &Value) -> Option<String> {
    value
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
        .map(|reason| format!("Prompt blocked: {reason}"))
}

/// The reply of a success response (or of a stream's chunks merged by [`Blocks`]).
pub(crate) fn parse(value: &Value) -> Result<AssistantMessage, &'static str> {
    if let Some(blocked) = blocked_prompt(value) {
        let usage = gemini_usage(value);
        return Ok(conversation::reply(
            Vec::new(),
            usage,
            StopReason::Error,
            Some(blocked),
        ));
    }
    let candidate = value.pointer("/candidates/0").ok_or("no `candidates`")?;
    let mut blocks = Blocks::default();
    blocks.add_parts(candidate)?;
    let (stop_reason, error) = stop_reason(
        candidate.get("finishReason").and_then(Value::as_str),
        blocks.has_calls(),
    );
    Ok(conversation::reply(
        blocks.content,
        gemini_usage(value),
        stop_reason,
        error,
    ))
}

/// Content assembled from parts: consecutive text (or thought) parts join one block; a
/// signature stays on the block whose part carried it.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    pub content: Vec<ContentBlock>,
    calls: usize,
}

impl Blocks {
    pub(crate) fn has_calls(&self) -> bool {
        self.calls > 0
    }

    /// Adds the parts of a candidate's `content`, returning what was appended to text blocks
    /// (`(is_thought, text)`) for a stream to show.
    pub(crate) fn add_parts(
        &mut self,
        candidate: &Value,
    ) -> Result<Vec<(bool, String)>, &'static str> {
        let mut added = Vec::new();
        let parts = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for part in parts {
            let signature = part
                .get("thoughtSignature")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(call) = part.get("functionCall") {
                let name = call
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a `functionCall` without `name`")?;
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(
                        || {
                            let now = chrono::Utc::now().timestamp_millis();
                            format!("{name}_{now}_{}", self.calls)
                        },
                        str::to_owned,
                    );
                let mut extra = JsonObject::new();
                if let Some(signature) = signature {
                    extra.insert("thoughtSignature".to_owned(), json!(signature));
                }
                self.calls += 1;
                self.content.push(conversation::tool_call_block(
                    id,
                    name.to_owned(),
                    Ok(call.get("args").cloned().unwrap_or_else(|| json!({}))),
                    extra,
                ));
                continue;
            }
            let Some(text) = part.get("text").and_then(Value::as_str) else {
                continue;
            };
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            self.add_text(thought, text, signature);
            added.push((thought, text.to_owned()));
        }
        Ok(added)
    }

    fn add_text(&mut self, thought: bool, text: &str, signature: Option<String>) {
        match (self.content.last_mut(), thought) {
            (Some(ContentBlock::Thinking(block)), true) => {
                block.thinking.push_str(text);
                if signature.is_some() {
                    block.thinking_signature = signature;
                }
            }
            (Some(ContentBlock::Text(block)), false) => {
                block.text.push_str(text);
                if let Some(signature) = signature {
                    block
                        .extra
                        .insert("textSignature".to_owned(), json!(signature));
                }
            }
            (_, true) => self.content.push(conversation::thinking_block(
                text.to_owned(),
                signature,
                JsonObject::new(),
            )),
            (_, false) => {
                let mut extra = JsonObject::new();
                if let Some(signature) = signature {
                    extra.insert("textSignature".to_owned(), json!(signature));
                }
                self.content
                    .push(conversation::text_block(text.to_owned(), extra));
            }
        }
    }
}

pub(crate) fn stop_reason(reason: Option<&str>, has_calls: bool) -> (StopReason, Option<String>) {
    match reason {
        Some("MAX_TOKENS") => (StopReason::Length, None),
        Some("STOP") | None if has_calls => (StopReason::ToolUse, None),
        Some("STOP") | None => (StopReason::Stop, None),
        Some(other) => (
            StopReason::Error,
            Some(format!("Gemini stopped the reply: {other}")),
        ),
    }
}
