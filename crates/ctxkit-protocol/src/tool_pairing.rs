//! Which tool results a provider accepts, as one rule: the model's view (`ctxkit-transform`'s
//! orphan repair, what serve's `view.get` hands a client) and the request ctxkit builds itself
//! (`ctxkit-llm`'s converter) both follow it, so a client that sends its view sends what ctxkit
//! sends. A tool result answers a call of the assistant message it follows (only other tool
//! results between them), once: a second result of a call, and a result after a user message or an
//! assistant message without that call, are not sent (OpenAI refuses a `tool` message that answers
//! no open call with a 400).

use crate::{AssistantMessage, ContentBlock};

/// The text of the error result that answers a call left without one (the turn was interrupted, or
/// the conversation went on from the reply that made the call), as Pi 1.6.0's request conversion
/// writes it: the model's view and ctxkit's requests both answer such a call with it.
pub const NO_TOOL_RESULT: &str = "No result provided";

/// A call with no result yet: its id and its tool's name.
pub type OpenCall<'a> = (&'a str, &'a str);

/// The calls of the latest assistant message still waiting for their result.
#[derive(Debug, Default)]
pub struct OpenToolCalls<'a> {
    open: Vec<OpenCall<'a>>,
}

impl<'a> OpenToolCalls<'a> {
    /// An assistant message comes: the calls still open close without a result (returned, in
    /// order), and this message's calls open.
    pub fn assistant(&mut self, reply: &'a AssistantMessage) -> Vec<OpenCall<'a>> {
        let closed = self.close();
        self.open.extend(
            reply
                .content
                .iter()
                .filter_map(ContentBlock::as_tool_call)
                .map(|call| (call.id.as_str(), call.name.as_str())),
        );
        closed
    }

    /// Any other message than an assistant message or a tool result comes: the calls still open
    /// close without a result (returned, in order).
    pub fn close(&mut self) -> Vec<OpenCall<'a>> {
        std::mem::take(&mut self.open)
    }

    /// A tool result comes: whether it answers an open call, which is then answered. `false`: the
    /// result is not sent (its call was answered already, or is not open).
    pub fn answer(&mut self, tool_call_id: &str) -> bool {
        let Some(position) = self.open.iter().position(|(id, _)| *id == tool_call_id) else {
            return false;
        };
        self.open.remove(position);
        true
    }

    /// Whether no call is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calling(ids: &[&str]) -> AssistantMessage {
        let content: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| serde_json::json!({"type": "toolCall", "id": id, "name": "read", "arguments": {}}))
            .collect();
        serde_json::from_value(serde_json::json!({"role": "assistant", "content": content}))
            .unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn a_call_is_answered_once_and_only_while_open() {
        let first = calling(&["a", "b"]);
        let plain = calling(&[]);
        let mut open = OpenToolCalls::default();
        assert!(open.assistant(&first).is_empty());
        assert!(open.answer("b"));
        assert!(!open.answer("b"), "a second result of `b`");
        assert_eq!(open.assistant(&plain), vec![("a", "read")]);
        assert!(!open.answer("a"), "a result after a plain reply");
        assert!(open.is_empty());
    }
}
