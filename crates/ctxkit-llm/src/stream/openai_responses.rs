//! OpenAI Responses events: `response.output_item.added`/`.done` per item (message, reasoning,
//! function call; the finished item replaces what the deltas built, so reasoning keeps its
//! encrypted content), `response.output_text.delta`, `response.reasoning_summary_text.delta`,
//! `response.function_call_arguments.delta`, then `response.completed` (usage),
//! `response.incomplete`, `response.failed` or `error`.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{ContentBlock, JsonObject};
use serde_json::Value;

use super::{Assembly, ChatDelta, DeltaSink, StreamError};
use crate::wire::openai_responses::response_usage;
use crate::wire::openai_responses_tools::output_item;
use crate::wire::provider_compaction;

/// Provider output index → position in the reply.
#[derive(Debug, Default)]
pub(crate) struct State {
    items: super::Positions,
    /// `response.completed` or `response.incomplete` arrived.
    ended: bool,
}

impl State {
    /// The stream's end is `response.completed` or `response.incomplete` (`response.failed` is
    /// an error of its own).
    pub(crate) fn missing_end(&self) -> Option<&'static str> {
        (!self.ended).then_some("`response.completed`")
    }

    fn position(&self, data: &Value) -> Option<usize> {
        self.items.of(data, "output_index")
    }

    pub(crate) fn event(
        &mut self,
        assembly: &mut Assembly,
        data: &Value,
        sink: &mut DeltaSink<'_>,
    ) -> Result<bool, StreamError> {
        let delta = data.get("delta").and_then(Value::as_str).unwrap_or("");
        super::note_response_id(assembly, data.pointer("/response/id"));
        match data.get("type").and_then(Value::as_str) {
            Some("response.output_item.added") => {
                let index = data
                    .get("output_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let item = data.get("item").unwrap_or(&Value::Null);
                let text_of = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
                let position = match item.get("type").and_then(Value::as_str) {
                    Some("message") => assembly.start_text(JsonObject::new()),
                    Some("reasoning") => assembly.start_thinking(None, JsonObject::new()),
                    Some("function_call") => assembly.start_call(
                        format!("{}|{}", text_of("call_id"), text_of("id")),
                        text_of("name").to_owned(),
                        JsonObject::new(),
                        sink,
                    ),
                    Some(_) | None => return Ok(false),
                };
                self.items.insert(index, position);
            }
            Some(
                "response.output_text.delta"
                | "response.refusal.delta"
                | "response.reasoning_summary_text.delta"
                | "response.reasoning_text.delta",
            ) => {
                if let Some(position) = self.position(data) {
                    assembly.append(position, delta, sink);
                }
            }
            Some("response.reasoning_summary_part.done") => {
                if let Some(position) = self.position(data) {
                    assembly.append(position, "\n\n", sink);
                }
            }
            Some("response.function_call_arguments.delta") => {
                if let Some(position) = self.position(data) {
                    assembly.append_arguments(position, delta);
                }
            }
            Some("response.output_item.done") => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if provider_compaction::is_compaction(item) {
                    assembly.provider_compaction = Some(item.clone());
                    return Ok(false);
                }
                let Some(position) = self.position(data) else {
                    return Ok(false);
                };
                if let Ok(Some(block)) = output_item(item) {
                    let shown = matches!(block, ContentBlock::Text(_) | ContentBlock::Thinking(_));
                    assembly.set(position, block);
                    if shown {
                        sink(ChatDelta::BlockEnd);
                    }
                }
            }
            Some("response.completed" | "response.incomplete") => {
                let response = data.get("response").unwrap_or(&Value::Null);
                assembly.usage = response_usage(response);
                assembly.stop = Some(
                    if response.get("status").and_then(Value::as_str) == Some("incomplete") {
                        StopReason::Length
                    } else {
                        StopReason::Stop
                    },
                );
                self.ended = true;
                return Ok(true);
            }
            Some("response.failed") => {
                let response = data.get("response").unwrap_or(&Value::Null);
                assembly.usage = response_usage(response);
                let error = response.get("error").unwrap_or(&Value::Null);
                return Err(StreamError::provider(error));
            }
            Some("error") => return Err(StreamError::provider(data)),
            Some(_) | None => {}
        }
        Ok(false)
    }
}
