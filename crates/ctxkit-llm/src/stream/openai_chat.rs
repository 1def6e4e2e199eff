//! OpenAI Chat Completions chunks: `choices[0].delta` with `content`, `reasoning_content` (or
//! `reasoning`) and `tool_calls` pieces keyed by `index`; `finish_reason` on the last choice; usage
//! in a final chunk with no choices (`stream_options.include_usage`); `[DONE]`; an `error` object
//! when the server fails mid-stream.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::JsonObject;
use serde_json::Value;

use super::{Assembly, ChatDelta, DeltaSink, StreamError, error_text};
use crate::wire::openai_chat_tools;

#[derive(Debug, Default)]
pub(crate) struct State {
    text: Option<usize>,
    thinking: Option<usize>,
    /// Provider call index → position.
    calls: Vec<(u64, usize)>,
    /// `[DONE]` arrived.
    done: bool,
}

impl State {
    /// Reads `[DONE]`: the stream is complete.
    pub(crate) fn done(&mut self) -> bool {
        self.done = true;
        true
    }

    /// The stream's end is a `finish_reason`, then `[DONE]`. Compatible servers do not all send
    /// both (some leave `finish_reason` null before `[DONE]`, some close after the usage chunk),
    /// so either one is the end.
    pub(crate) fn missing_end(&self, assembly: &Assembly) -> Option<&'static str> {
        (!self.done && assembly.stop.is_none()).then_some("a `finish_reason` or `[DONE]`")
    }

    pub(crate) fn event(
        &mut self,
        assembly: &mut Assembly,
        data: &Value,
        sink: &mut DeltaSink<'_>,
    ) -> Result<bool, StreamError> {
        if let Some(error) = data.get("error") {
            return Err(StreamError(error_text(error)));
        }
        if data.get("usage").is_some_and(Value::is_object) {
            assembly.usage = crate::wire::openai_chat::chat_usage(data);
        }
        let Some(choice) = data.pointer("/choices/0") else {
            return Ok(false);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|key| delta.get(*key).and_then(Value::as_str))
            .unwrap_or("");
        if !reasoning.is_empty() {
            let position = match self.thinking {
                Some(position) => position,
                None => {
                    let position = assembly.start_thinking(None, JsonObject::new());
                    self.thinking = Some(position);
                    position
                }
            };
            assembly.append(position, reasoning, sink);
        }
        let text = delta.get("content").and_then(Value::as_str).unwrap_or("");
        if !text.is_empty() {
            if self.thinking.is_some() && self.text.is_none() {
                sink(ChatDelta::BlockEnd);
            }
            let position = match self.text {
                Some(position) => position,
                None => {
                    let position = assembly.start_text(JsonObject::new());
                    self.text = Some(position);
                    position
                }
            };
            assembly.append(position, text, sink);
        }
        let calls = delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for call in calls {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let position = match self.calls.iter().find(|(at, _)| *at == index) {
                Some((_, position)) => *position,
                None => {
                    let id = call
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|id| !id.is_empty())
                        .map_or_else(|| format!("call_{index}"), str::to_owned);
                    let name = call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    let position = assembly.start_call(id, name, JsonObject::new(), sink);
                    self.calls.push((index, position));
                    position
                }
            };
            if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
                assembly.append_arguments(position, arguments);
            }
        }
        // Ollama once sent `""` in every chunk: not a reason.
        if let Some(reason) = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|reason| !reason.is_empty())
        {
            if self.text.is_some() || self.thinking.is_some() {
                sink(ChatDelta::BlockEnd);
            }
            let (stop, error) = match reason {
                "length" => (StopReason::Length, None),
                "tool_calls" | "function_call" => (StopReason::ToolUse, None),
                "content_filter" => (
                    StopReason::Error,
                    Some(openai_chat_tools::CONTENT_FILTER.to_owned()),
                ),
                _ => (StopReason::Stop, None),
            };
            assembly.stop = Some(stop);
            assembly.error = error;
        }
        Ok(false)
    }
}
