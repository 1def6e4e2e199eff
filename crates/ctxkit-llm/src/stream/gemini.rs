//! Gemini `streamGenerateContent?alt=sse`: each event is a partial response whose parts continue
//! the reply (text, thoughts, whole function calls with their thought signatures); the last one
//! has `finishReason` and the usage; an `error` object when the server fails mid-stream; a
//! `promptFeedback.blockReason` without candidates when Gemini refuses the prompt itself.

use serde_json::Value;

use super::{Assembly, ChatDelta, DeltaSink, StreamError};
use crate::wire::gemini::gemini_usage;
use crate::wire::gemini_tools::{Blocks, blocked_prompt, stop_reason};

#[derive(Debug, Default)]
pub(crate) struct State {
    blocks: Blocks,
}

impl State {
    /// The stream's end is a chunk whose candidate has a `finishReason`.
    pub(crate) fn missing_end(&self, assembly: &Assembly) -> Option<&'static str> {
        assembly.stop.is_none().then_some("a `finishReason`")
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
        super::note_response_id(assembly, data.get("responseId"));
        if data.get("usageMetadata").is_some() {
            assembly.usage = gemini_usage(data);
        }
        if let Some(blocked) = blocked_prompt(data) {
            return Err(StreamError::lasting(blocked));
        }
        let Some(candidate) = data.pointer("/candidates/0") else {
            return Ok(false);
        };
        let calls_before = self.blocks.content.len();
        let added = self
            .blocks
            .add_parts(candidate)
            .map_err(StreamError::lasting)?;
        for (thought, text) in added {
            sink(if thought {
                ChatDelta::Thinking(text)
            } else {
                ChatDelta::Text(text)
            });
        }
        for block in self.blocks.content.iter().skip(calls_before) {
            if let ctxkit_protocol::ContentBlock::ToolCall(call) = block {
                sink(ChatDelta::ToolCall {
                    name: call.name.clone(),
                });
            }
        }
        assembly.content.clone_from(&self.blocks.content);
        let finish = candidate.get("finishReason").and_then(Value::as_str);
        if let Some(raw) = finish {
            let (stop, error) = stop_reason(finish, self.blocks.has_calls());
            assembly.stop = Some(stop);
            assembly.raw_stop_reason = Some(raw.to_owned());
            assembly.error = error;
            sink(ChatDelta::BlockEnd);
        }
        Ok(false)
    }
}
