//! Anthropic Messages events: `message_start` (input usage), `content_block_start`/`_delta`/
//! `_stop` (text, thinking with its `signature_delta`, `tool_use` with `input_json_delta`),
//! `message_delta` (stop reason, output usage), `message_stop`, `error`.

use ctxkit_protocol::{ContentBlock, JsonObject};
use serde_json::Value;

use super::{Assembly, ChatDelta, DeltaSink, StreamError};
use crate::wire::{anthropic_context, anthropic_tools, provider_compaction};

/// Provider block index → position in the reply.
#[derive(Debug, Default)]
pub(crate) struct State {
    blocks: super::Positions,
    /// The provider block index of the compaction block, which is not part of the content.
    compaction_index: Option<u64>,
    /// `message_stop` arrived.
    stopped: bool,
}

impl State {
    fn position(&self, data: &Value) -> Option<usize> {
        self.blocks.of(data, "index")
    }

    /// The stream's end is `message_delta` with the stop reason, then `message_stop`.
    pub(crate) fn missing_end(&self, assembly: &Assembly) -> Option<&'static str> {
        if !self.stopped {
            Some("`message_stop`")
        } else if assembly.stop.is_none() {
            Some("a stop reason (`message_delta`)")
        } else {
            None
        }
    }

    pub(crate) fn event(
        &mut self,
        assembly: &mut Assembly,
        data: &Value,
        sink: &mut DeltaSink<'_>,
    ) -> Result<bool, StreamError> {
        let text_at = |value: &Value, key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match data.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(id) = data.pointer("/message/id").and_then(Value::as_str) {
                    assembly.response_id = Some(id.to_owned());
                }
                if let Some(usage) = data.pointer("/message/usage") {
                    assembly.usage = anthropic_tools::message_usage(usage);
                }
                if let Some(context_management) = data.pointer("/message/context_management") {
                    assembly.provider_edits = anthropic_context::applied_edits(context_management);
                }
            }
            Some("content_block_start") => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                let block = data.get("content_block").unwrap_or(&Value::Null);
                if provider_compaction::is_compaction(block) {
                    // Kept whole, its summary filled in by `compaction_delta`s.
                    self.compaction_index = Some(index);
                    assembly.provider_compaction = Some(block.clone());
                    return Ok(false);
                }
                let position = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let position = assembly.start_text(JsonObject::new());
                        assembly.append(position, &text_at(block, "text"), sink);
                        position
                    }
                    Some("thinking") => {
                        let position = assembly.start_thinking(None, JsonObject::new());
                        assembly.append(position, &text_at(block, "thinking"), sink);
                        position
                    }
                    Some("redacted_thinking") => {
                        assembly
                            .content
                            .push(anthropic_tools::redacted(text_at(block, "data")));
                        assembly.content.len() - 1
                    }
                    Some("tool_use") => assembly.start_call(
                        text_at(block, "id"),
                        text_at(block, "name"),
                        JsonObject::new(),
                        sink,
                    ),
                    Some(_) | None => return Ok(false),
                };
                self.blocks.insert(index, position);
            }
            Some("content_block_delta") => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                if delta.get("type").and_then(Value::as_str) == Some("compaction_delta") {
                    if self.compaction_index.is_some()
                        && self.compaction_index == data.get("index").and_then(Value::as_u64)
                        && let Some(block) = assembly.provider_compaction.as_mut()
                    {
                        add_compaction_delta(block, delta);
                    }
                    return Ok(false);
                }
                let Some(position) = self.position(data) else {
                    return Ok(false);
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => assembly.append(position, &text_at(delta, "text"), sink),
                    Some("thinking_delta") => {
                        assembly.append(position, &text_at(delta, "thinking"), sink);
                    }
                    Some("signature_delta") => {
                        if let Some(ContentBlock::Thinking(block)) =
                            assembly.content.get_mut(position)
                        {
                            let signature = block.thinking_signature.get_or_insert_default();
                            signature.push_str(&text_at(delta, "signature"));
                        }
                    }
                    Some("input_json_delta") => {
                        assembly.append_arguments(position, &text_at(delta, "partial_json"));
                    }
                    Some(_) | None => {}
                }
            }
            Some("content_block_stop") => {
                if let Some(position) = self.position(data)
                    && matches!(
                        assembly.content.get(position),
                        Some(ContentBlock::Text(_) | ContentBlock::Thinking(_))
                    )
                {
                    sink(ChatDelta::BlockEnd);
                }
            }
            Some("message_delta") => {
                // The edits applied to this request come with the final delta.
                if let Some(context_management) = data.get("context_management") {
                    let edits = anthropic_context::applied_edits(context_management);
                    if !edits.is_empty() {
                        assembly.provider_edits = edits;
                    }
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    let (stop, error) = anthropic_tools::stop_reason(Some(reason));
                    assembly.stop = Some(stop);
                    assembly.raw_stop_reason = Some(reason.to_owned());
                    assembly.error = error;
                }
                if let Some(usage) = data.get("usage") {
                    let update = anthropic_tools::message_usage(usage);
                    assembly.usage.output = update.output;
                    // Some servers report input only at the end.
                    if update.input > 0 {
                        assembly.usage.input = update.input;
                    }
                    if update.cache_read > 0 {
                        assembly.usage.cache_read = update.cache_read;
                    }
                    if update.cache_write > 0 {
                        assembly.usage.cache_write = update.cache_write;
                    }
                    assembly.usage.extra.extend(update.extra);
                }
            }
            Some("message_stop") => {
                self.stopped = true;
                return Ok(true);
            }
            Some("error") => {
                return Err(StreamError::provider(
                    data.get("error").unwrap_or(&Value::Null),
                ));
            }
            Some(_) | None => {}
        }
        Ok(false)
    }
}

/// A `compaction_delta`: its `content` is appended to the summary, its `encrypted_content` (when
/// present) replaces the block's.
fn add_compaction_delta(block: &mut Value, delta: &Value) {
    if let Some(text) = delta.get("content").and_then(Value::as_str) {
        let summary = match block.get("content").and_then(Value::as_str) {
            Some(before) => format!("{before}{text}"),
            None => text.to_owned(),
        };
        block["content"] = Value::String(summary);
    }
    if let Some(encrypted) = delta
        .get("encrypted_content")
        .filter(|value| !value.is_null())
    {
        block["encrypted_content"] = encrypted.clone();
    }
}
