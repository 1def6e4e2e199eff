//! OpenAI Chat Completions chunks: `choices[0].delta` with `content`, reasoning (in the first of
//! `reasoning_content`, `reasoning`, `reasoning_text` with text; the block is signed with its
//! field, as Pi signs it; OpenRouter's `reasoning_details` items replace that signature, as
//! JSON) and `tool_calls` pieces keyed by `index` (a piece naming another id than the call
//! at its index starts a new call: Ollama sends each parallel call at `index: 0`); `finish_reason`
//! on the last choice; usage in a final chunk with no choices (`stream_options.include_usage`),
//! else inside the choice (`choices[0].usage`: Moonshot);
//! `[DONE]`; an `error` object when the server fails mid-stream.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{ContentBlock, JsonObject};
use serde_json::Value;

use super::think_tags::{Piece, Splitter, THINK_TAGS};
use super::{Assembly, ChatDelta, DeltaSink, StreamError};
use crate::wire::{openai_chat_tools, reasoning_details};

#[derive(Debug, Default)]
pub(crate) struct State {
    text: Option<usize>,
    thinking: Option<usize>,
    /// The calls so far: provider index, position, the provider's id (when it sent one).
    calls: Vec<Slot>,
    /// `[DONE]` arrived.
    done: bool,
    /// The `reasoning_details` items so far (OpenRouter), kept as the thinking block's signature.
    details: Vec<Value>,
    /// A content that opens with `<think>` (a local server without a reasoning parser).
    tags: Splitter,
}

/// One call of the reply: where its pieces go.
#[derive(Debug)]
struct Slot {
    index: u64,
    position: usize,
    id: Option<String>,
}

impl State {
    /// The position of the call a `tool_calls` piece continues, or of the call it starts. Pieces
    /// are keyed by `index`, but some servers give every call of a reply the same index (Ollama:
    /// `index: 0` for each of its parallel calls, each whole in one piece) or none: a piece that
    /// names another id than the call at its index starts a new call.
    fn call_position(
        &mut self,
        assembly: &mut Assembly,
        call: &Value,
        sink: &mut DeltaSink<'_>,
    ) -> usize {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let current = self.calls.iter_mut().rev().find(|slot| slot.index == index);
        if let Some(slot) = current {
            match (&slot.id, id) {
                (Some(known), Some(id)) if known != id => {}
                (None, Some(id)) => {
                    // The id came after the call's first piece: the call takes it.
                    slot.id = Some(id.to_owned());
                    if let Some(ContentBlock::ToolCall(block)) =
                        assembly.content.get_mut(slot.position)
                    {
                        id.clone_into(&mut block.id);
                    }
                    return slot.position;
                }
                (Some(_) | None, _) => return slot.position,
            }
        }
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let block_id = id.map_or_else(|| format!("call_{index}"), str::to_owned);
        let position = assembly.start_call(block_id, name, JsonObject::new(), sink);
        self.calls.push(Slot {
            index,
            position,
            id: id.map(str::to_owned),
        });
        position
    }

    /// The thinking block's position, started (signed with `signature`) if there is none yet.
    fn thinking_position(&mut self, assembly: &mut Assembly, signature: &str) -> usize {
        *self.thinking.get_or_insert_with(|| {
            assembly.start_thinking(Some(signature.to_owned()), JsonObject::new())
        })
    }

    /// Keeps a delta's `reasoning_details` items (the thinking block they sign started if there
    /// is none); [`State::settle`] signs the block with them once the stream ends.
    fn read_details(&mut self, assembly: &mut Assembly, delta: &Value) {
        let Some(items) = delta.get("reasoning_details").and_then(Value::as_array) else {
            return;
        };
        for item in items
            .iter()
            .filter(|item| reasoning_details::is_detail(item))
        {
            reasoning_details::append(&mut self.details, item);
            self.thinking_position(assembly, "");
        }
    }

    /// Appends content pieces: thinking read between `<think>` tags, then text.
    fn take(&mut self, assembly: &mut Assembly, pieces: Vec<Piece>, sink: &mut DeltaSink<'_>) {
        for piece in pieces {
            match piece {
                Piece::Thinking(thinking) => {
                    let position = self.thinking_position(assembly, THINK_TAGS);
                    assembly.append(position, &thinking, sink);
                }
                Piece::Text(text) => {
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
                    assembly.append(position, &text, sink);
                }
            }
        }
    }

    /// Signs the thinking block with the `reasoning_details` items read, as JSON (written once,
    /// however many pieces streamed), so they go back with the message as Pi sends them; content
    /// held while it could be the start of a `<think>` tag is written (a stream cut short).
    pub(crate) fn settle(&mut self, assembly: &mut Assembly) {
        let held = self.tags.finish();
        self.take(assembly, held, &mut |_| {});
        if self.details.is_empty() {
            return;
        }
        let signature = Value::from(std::mem::take(&mut self.details)).to_string();
        if let Some(ContentBlock::Thinking(block)) = self
            .thinking
            .and_then(|position| assembly.content.get_mut(position))
        {
            block.thinking_signature = Some(signature);
        }
    }

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
            return Err(StreamError::provider(error));
        }
        super::note_response_id(assembly, data.get("id"));
        if data.get("usage").is_some_and(Value::is_object) {
            assembly.usage = crate::wire::openai_chat::chat_usage(data);
        }
        let Some(choice) = data.pointer("/choices/0") else {
            return Ok(false);
        };
        // Moonshot (Kimi) puts the usage inside the choice; read there when the chunk has none,
        // as Pi 1.6.0 falls back to it.
        if !data.get("usage").is_some_and(Value::is_object)
            && choice.get("usage").is_some_and(Value::is_object)
        {
            assembly.usage = crate::wire::openai_chat::chat_usage(choice);
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some((field, reasoning)) = openai_chat_tools::reasoning_of(delta) {
            let held = self.tags.content_is_text();
            self.take(assembly, held, sink);
            let position = self.thinking_position(assembly, field);
            assembly.append(position, reasoning, sink);
        }
        self.read_details(assembly, delta);
        let text = delta.get("content").and_then(Value::as_str).unwrap_or("");
        let pieces = self.tags.split(text);
        self.take(assembly, pieces, sink);
        let calls = delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !calls.is_empty() {
            let held = self.tags.finish();
            self.take(assembly, held, sink);
        }
        for call in calls {
            let position = self.call_position(assembly, call, sink);
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
            let held = self.tags.finish();
            self.take(assembly, held, sink);
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
            assembly.raw_stop_reason = Some(reason.to_owned());
            assembly.error = error;
        }
        Ok(false)
    }
}
