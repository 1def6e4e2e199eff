//! The working view the layers edit: each message borrowed from the input until a layer changes it,
//! with its token estimate kept beside it so no unchanged message is estimated twice.

use std::borrow::Cow;
use std::hash::{BuildHasherDefault, Hasher};

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock};
use ctxkit_tokens::{estimate_tokens, utf16_len};

use ctxkit_tokens::stringified_len;

use crate::measured::{MeasuredMessage, Memo, Size, quarter};

/// One message of the view and the reference's token estimate of it.
#[derive(Debug)]
pub(crate) struct Slot<'a> {
    pub message: Cow<'a, AgentMessage>,
    pub tokens: u64,
    /// For assistant messages, the characters behind `tokens`, so that removing blocks updates the
    /// estimate without serializing the tool-call arguments again.
    assistant_chars: Option<usize>,
    /// The measures kept with the input message, when the caller keeps them.
    memo: Option<&'a Memo>,
    /// The message's position in the input (a measured view says where each message came from); a
    /// synthetic message has the position of the input message it was made for.
    pub origin: usize,
}

impl<'a> Slot<'a> {
    /// An unchanged input message.
    pub fn borrowed(message: &'a AgentMessage) -> Self {
        Self::sized(message, Size::of(message), None)
    }

    /// The unchanged input message at `origin`, measured for several views.
    pub fn measured(measured: &'a MeasuredMessage, origin: usize) -> Self {
        let memo = measured.memo();
        let message = measured.message();
        Self {
            origin,
            ..Self::sized(message, memo.size(message), Some(memo))
        }
    }

    /// A message the view adds that no input message is (orphan repair's answer to a call left
    /// without a result), placed with the input message at `origin`.
    pub fn synthetic(message: AgentMessage, origin: usize) -> Self {
        Self {
            tokens: estimate_tokens(&message),
            message: Cow::Owned(message),
            assistant_chars: None,
            memo: None,
            origin,
        }
    }

    fn sized(message: &'a AgentMessage, size: Size, memo: Option<&'a Memo>) -> Self {
        Self {
            message: Cow::Borrowed(message),
            tokens: size.tokens,
            assistant_chars: size.assistant_chars,
            memo,
            origin: 0,
        }
    }

    /// The measures of the message, while it is still the input's (a changed copy has none).
    pub fn memo(&self) -> Option<&'a Memo> {
        match self.message {
            Cow::Borrowed(_) => self.memo,
            Cow::Owned(_) => None,
        }
    }

    /// Replaces the message with a changed copy and estimates it again.
    pub fn replace(&mut self, message: AgentMessage) {
        self.tokens = estimate_tokens(&message);
        self.assistant_chars = None;
        self.message = Cow::Owned(message);
    }

    /// Replaces the message with a changed copy whose estimate is `tokens`.
    pub fn replace_estimated(&mut self, message: AgentMessage, tokens: u64) {
        self.tokens = tokens;
        self.assistant_chars = None;
        self.message = Cow::Owned(message);
    }

    /// Replaces an assistant message by `assistant`, the same message without blocks that counted
    /// `removed_chars` (see [`block_chars`]).
    pub fn replace_assistant(&mut self, assistant: AssistantMessage, removed_chars: usize) {
        match self.assistant_chars {
            Some(chars) => {
                let chars = chars.saturating_sub(removed_chars);
                self.tokens = quarter(chars);
                self.assistant_chars = Some(chars);
                self.message = Cow::Owned(AgentMessage::Assistant(assistant));
            }
            None => self.replace(AgentMessage::Assistant(assistant)),
        }
    }
}

/// Characters (UTF-16 units) of one assistant content block as the reference's estimate counts
/// them: text, thinking, tool name plus its arguments as `JSON.stringify` writes them (measured by
/// [`stringified_len`]); images and unknown blocks nothing. `estimate_tokens` of an assistant is
/// `ceil(sum / 4)`; the unit tests check that the two agree on every message they build.
pub(crate) fn block_chars(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(text) => utf16_len(&text.text),
        ContentBlock::Thinking(thinking) => utf16_len(&thinking.thinking),
        ContentBlock::ToolCall(call) => utf16_len(&call.name) + stringified_len(&call.arguments),
        ContentBlock::Image(_) | ContentBlock::Unknown(_) => 0,
    }
}

pub(crate) fn assistant_chars(assistant: &AssistantMessage) -> usize {
    assistant.content.iter().map(block_chars).sum()
}

/// Total estimate of a view.
pub(crate) fn total_tokens(slots: &[Slot<'_>]) -> u64 {
    slots.iter().map(|slot| slot.tokens).sum()
}

/// A copy of `assistant` with other content; every other field is kept. Listing the fields makes a
/// new protocol field a compile error here rather than a silent loss.
pub(crate) fn assistant_with_content(
    assistant: &AssistantMessage,
    content: Vec<ContentBlock>,
) -> AssistantMessage {
    let AssistantMessage {
        content: _,
        api,
        provider,
        model,
        usage,
        stop_reason,
        error_message,
        timestamp,
        extra,
    } = assistant;
    AssistantMessage {
        content,
        api: api.clone(),
        provider: provider.clone(),
        model: model.clone(),
        usage: usage.clone(),
        stop_reason: stop_reason.clone(),
        error_message: error_message.clone(),
        timestamp: *timestamp,
        extra: extra.clone(),
    }
}

/// A small, fast hasher for tool call ids (FxHash's multiply-rotate over 8-byte words). Ids come from
/// the session, not from an adversary choosing collisions, so SipHash's protection buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0_u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0_u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A set of tool call ids.
pub(crate) type IdSet<'a> = std::collections::HashSet<&'a str, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use serde_json::json;

    #[test]
    fn assistant_estimate_matches_the_reference() {
        let messages = [
            assistant(vec![]),
            assistant(vec![text("abc")]),
            assistant(vec![thinking("😀 ünïcode"), text("ß"), call("c1")]),
            assistant(vec![
                json!({"type": "toolCall", "id": "x", "name": "édit", "arguments":
                    {"10": 1e21, "2": [0.1, -0.0, 3], "path": "a\"b\u{2028}", "nested": {"k": null, "t": true}}}),
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
                json!({"type": "future", "payload": "ignored"}),
            ]),
        ];
        for message in &messages {
            let slot = Slot::borrowed(message);
            assert_eq!(slot.tokens, estimate_tokens(message), "{message:?}");
        }
    }

    #[test]
    fn removing_blocks_keeps_the_estimate_exact() {
        let message = assistant(vec![
            thinking("think "),
            text("abcde"),
            call("c1"),
            call("c2"),
        ]);
        let AgentMessage::Assistant(original) = &message else {
            panic!("expected an assistant")
        };
        for keep in 0..4 {
            let mut slot = Slot::borrowed(&message);
            let kept: Vec<ContentBlock> = original.content[keep..].to_vec();
            let changed = assistant_with_content(original, kept);
            let removed = original.content[..keep].iter().map(block_chars).sum();
            slot.replace_assistant(changed, removed);
            assert_eq!(
                slot.tokens,
                estimate_tokens(&slot.message),
                "keep from {keep}"
            );
        }
    }

    #[test]
    fn id_hasher_spreads_similar_ids() {
        let hash = |id: &str| {
            let mut hasher = IdHasher::default();
            hasher.write(id.as_bytes());
            hasher.finish()
        };
        assert_ne!(hash("toolu_01"), hash("toolu_02"));
        assert_ne!(hash("a"), hash("a\0"));
        assert_ne!(hash("call_123456789"), hash("call_123456788"));
    }
}
