//! Token counts that say where they came from: an [`Estimator`] chosen by setting (the reference's
//! chars/4, ctxkit's heuristic, or an exact cl100k/o200k count) applied to text, one message, a
//! message list (with the chat format's per-message overhead) and a context (reported usage plus
//! counted trailing messages).

use std::fmt;
use std::str::FromStr;

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};

use crate::encoding::Encoding;
use crate::estimate::{estimate_tokens, last_valid_usage, utf16_len};
use crate::heuristic::estimate_text_tokens;

/// Tokens framing each message in OpenAI's chat format (`<|start|>{role}<|message|>…<|end|>`
/// without the role), from OpenAI's cookbook "How to count tokens with tiktoken"
/// (`tokens_per_message = 3`). The role itself is counted as text on top.
pub const MESSAGE_OVERHEAD_TOKENS: u64 = 3;

/// Tokens priming the reply (`<|start|>assistant<|message|>`), once per request; same source.
pub const REPLY_PRIMING_TOKENS: u64 = 3;

/// Tokens framing one tool call beyond its name and arguments. Providers do not publish this;
/// 3 is ctxkit's assumption (the same frame as a message).
pub const TOOL_CALL_OVERHEAD_TOKENS: u64 = 3;

/// Tokens of one image: the reference's 4800 characters / 4. Providers charge by size; a fixed
/// figure keeps counts independent of image data.
pub const IMAGE_TOKENS: u64 = 1200;

/// A text-only estimate, no tokenizer involved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Heuristic {
    /// The reference's estimate: ceil(UTF-16 code units / 4).
    Pi,
    /// ctxkit's estimate of the cl100k count ([`estimate_text_tokens`]).
    Ctxkit,
}

impl Heuristic {
    /// The setting value naming this heuristic.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pi => "pi",
            Self::Ctxkit => "ctxkit",
        }
    }

    /// Estimated tokens of `text`.
    pub fn estimate(self, text: &str) -> u64 {
        match self {
            Self::Pi => utf16_len(text).div_ceil(4) as u64,
            Self::Ctxkit => estimate_text_tokens(text),
        }
    }
}

/// Where a token count came from, from most to least exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenSource {
    /// Reported by the provider (an assistant message's usage).
    Reported,
    /// Counted exactly by a tokenizer.
    Tokenizer(Encoding),
    /// Estimated from the text.
    Estimate(Heuristic),
}

impl fmt::Display for TokenSource {
    /// `reported`, `tokenizer:cl100k_base`, `estimate:pi`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reported => formatter.write_str("reported"),
            Self::Tokenizer(encoding) => write!(formatter, "tokenizer:{}", encoding.name()),
            Self::Estimate(heuristic) => write!(formatter, "estimate:{}", heuristic.name()),
        }
    }
}

/// A number of tokens and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TokenCount {
    pub tokens: u64,
    pub source: TokenSource,
}

/// How to count tokens, selectable by setting (`pi`, `ctxkit`, `cl100k`, `o200k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Estimator {
    /// The reference's chars/4, exactly (no chat-format overhead); the default.
    #[default]
    Pi,
    /// ctxkit's heuristic, an estimate of the cl100k count including chat-format overhead.
    Ctxkit,
    /// Exact cl100k_base count including chat-format overhead.
    Cl100k,
    /// Exact o200k_base count including chat-format overhead.
    O200k,
}

/// A setting named an estimator that does not exist. Returned by `Estimator::from_str`; the
/// caller reports the value and the accepted names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown token estimator `{value}` (expected one of: pi, ctxkit, cl100k, o200k)")]
pub struct UnknownEstimator {
    pub value: String,
}

impl Estimator {
    /// Every estimator, in setting order.
    pub const ALL: [Self; 4] = [Self::Pi, Self::Ctxkit, Self::Cl100k, Self::O200k];

    /// The setting value naming this estimator.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pi => "pi",
            Self::Ctxkit => "ctxkit",
            Self::Cl100k => "cl100k",
            Self::O200k => "o200k",
        }
    }

    /// The source of the counts this estimator produces.
    pub fn source(self) -> TokenSource {
        match self {
            Self::Pi => TokenSource::Estimate(Heuristic::Pi),
            Self::Ctxkit => TokenSource::Estimate(Heuristic::Ctxkit),
            Self::Cl100k => TokenSource::Tokenizer(Encoding::Cl100kBase),
            Self::O200k => TokenSource::Tokenizer(Encoding::O200kBase),
        }
    }

    /// Whether counts include the chat format's framing (every estimator but the reference's).
    fn frames_messages(self) -> bool {
        match self {
            Self::Pi => false,
            Self::Ctxkit | Self::Cl100k | Self::O200k => true,
        }
    }

    fn tokens(self, text: &str) -> u64 {
        match self {
            Self::Pi => Heuristic::Pi.estimate(text),
            Self::Ctxkit => Heuristic::Ctxkit.estimate(text),
            Self::Cl100k => Encoding::Cl100kBase.count(text),
            Self::O200k => Encoding::O200kBase.count(text),
        }
    }
}

impl fmt::Display for Estimator {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

impl FromStr for Estimator {
    type Err = UnknownEstimator;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|estimator| estimator.name() == value)
            .ok_or_else(|| UnknownEstimator {
                value: value.to_owned(),
            })
    }
}

/// The role a message is sent as (Pi's `convertToLlm`): extension, shell and summary messages
/// become user messages.
fn wire_role(message: &AgentMessage) -> Option<&'static str> {
    match message {
        AgentMessage::User(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_) => Some("user"),
        AgentMessage::Assistant(_) => Some("assistant"),
        AgentMessage::ToolResult(_) => Some("tool"),
        AgentMessage::Unknown(_) => None,
    }
}

/// Tokens of the text and images of user, tool-result and custom content.
fn content_tokens(estimator: Estimator, content: &MessageContent) -> u64 {
    match content {
        MessageContent::Text(text) => estimator.tokens(text),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| block_tokens(estimator, block))
            .sum(),
    }
}

fn block_tokens(estimator: Estimator, block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text(text) => estimator.tokens(&text.text),
        ContentBlock::Thinking(thinking) => estimator.tokens(&thinking.thinking),
        ContentBlock::ToolCall(call) => {
            estimator.tokens(&call.name)
                + estimator.tokens(&call.arguments.to_string())
                + TOOL_CALL_OVERHEAD_TOKENS
        }
        ContentBlock::Image(_) => IMAGE_TOKENS,
        ContentBlock::Unknown(_) => 0,
    }
}

/// Tokens of one message's parts (the same parts the reference measures, every image counted).
fn message_body_tokens(estimator: Estimator, message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::User(user) => content_tokens(estimator, &user.content),
        AgentMessage::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|block| block_tokens(estimator, block))
            .sum(),
        AgentMessage::ToolResult(result) => content_tokens(estimator, &result.content),
        AgentMessage::Custom(custom) => content_tokens(estimator, &custom.content),
        AgentMessage::BashExecution(bash) => {
            estimator.tokens(&bash.command) + estimator.tokens(&bash.output)
        }
        AgentMessage::BranchSummary(summary) => estimator.tokens(&summary.summary),
        AgentMessage::CompactionSummary(summary) => estimator.tokens(&summary.summary),
        AgentMessage::Unknown(_) => 0,
    }
}

/// Tokens of one message. With [`Estimator::Pi`] this is the reference's `estimateTokens`
/// exactly; the others add [`MESSAGE_OVERHEAD_TOKENS`] and the role's tokens, count tool calls
/// with [`TOOL_CALL_OVERHEAD_TOKENS`] and every image (user images too) as [`IMAGE_TOKENS`].
/// Messages of an unknown role count 0.
pub fn count_message_tokens(message: &AgentMessage, estimator: Estimator) -> TokenCount {
    let tokens = if estimator.frames_messages() {
        match wire_role(message) {
            Some(role) => {
                MESSAGE_OVERHEAD_TOKENS
                    + estimator.tokens(role)
                    + message_body_tokens(estimator, message)
            }
            None => 0,
        }
    } else {
        estimate_tokens(message)
    };
    TokenCount {
        tokens,
        source: estimator.source(),
    }
}

/// Tokens of a whole request's messages: the sum of [`count_message_tokens`] plus, for every
/// estimator but the reference's, [`REPLY_PRIMING_TOKENS`] once (when there is any message).
pub fn count_messages_tokens(messages: &[AgentMessage], estimator: Estimator) -> TokenCount {
    let body: u64 = messages
        .iter()
        .map(|message| count_message_tokens(message, estimator).tokens)
        .sum();
    let priming = if estimator.frames_messages() && !messages.is_empty() {
        REPLY_PRIMING_TOKENS
    } else {
        0
    };
    TokenCount {
        tokens: body + priming,
        source: estimator.source(),
    }
}

/// Context size of a message list: the last usage reported by a reply that was neither aborted
/// nor an error, plus the messages after it counted by the estimator; without such usage, the
/// whole list counted by the estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContextTokenCount {
    /// `usage_tokens + trailing.tokens`.
    pub tokens: u64,
    /// Tokens of the last valid usage (source [`TokenSource::Reported`]); 0 without one.
    pub usage_tokens: u64,
    /// Index of the message carrying that usage.
    pub last_usage_index: Option<usize>,
    /// The messages after it (or all of them), with the estimator's source.
    pub trailing: TokenCount,
}

impl ContextTokenCount {
    /// The least exact source in the total: the estimator's when anything was counted by it,
    /// else `Reported`.
    pub fn source(&self) -> TokenSource {
        match self.last_usage_index {
            Some(_) if self.trailing.tokens == 0 => TokenSource::Reported,
            Some(_) | None => self.trailing.source,
        }
    }
}

/// Estimator-aware context tokens. With [`Estimator::Pi`] the numbers equal the reference's
/// `estimateContextTokens`.
pub fn context_token_count(messages: &[AgentMessage], estimator: Estimator) -> ContextTokenCount {
    let mut counter = ContextTokenCounter::new(estimator);
    for message in messages {
        counter.add(message);
    }
    counter.finish()
}

/// [`context_token_count`] over messages given one at a time, so a long branch is counted without
/// holding its messages: [`ContextTokenCounter::add`] each in order, then
/// [`ContextTokenCounter::finish`]. Keeps one number per message.
#[derive(Debug, Clone)]
pub struct ContextTokenCounter {
    estimator: Estimator,
    per_message: Vec<u64>,
    last_usage: Option<(usize, u64)>,
}

impl ContextTokenCounter {
    pub fn new(estimator: Estimator) -> Self {
        Self {
            estimator,
            per_message: Vec::new(),
            last_usage: None,
        }
    }

    /// Counts the next message.
    pub fn add(&mut self, message: &AgentMessage) {
        let index = self.per_message.len();
        self.per_message
            .push(count_message_tokens(message, self.estimator).tokens);
        if let Some((_, tokens)) = last_valid_usage(std::slice::from_ref(message)) {
            self.last_usage = Some((index, tokens));
        }
    }

    /// The tokens of each message added, in order.
    pub fn per_message(&self) -> &[u64] {
        &self.per_message
    }

    /// The count of the messages added.
    pub fn finish(&self) -> ContextTokenCount {
        let source = self.estimator.source();
        match self.last_usage {
            None => {
                let body: u64 = self.per_message.iter().sum();
                let priming = if self.estimator.frames_messages() && !self.per_message.is_empty() {
                    REPLY_PRIMING_TOKENS
                } else {
                    0
                };
                let trailing = TokenCount {
                    tokens: body + priming,
                    source,
                };
                ContextTokenCount {
                    tokens: trailing.tokens,
                    usage_tokens: 0,
                    last_usage_index: None,
                    trailing,
                }
            }
            Some((index, usage_tokens)) => {
                let tokens = self
                    .per_message
                    .get(index + 1..)
                    .unwrap_or_default()
                    .iter()
                    .sum();
                ContextTokenCount {
                    tokens: usage_tokens + tokens,
                    usage_tokens,
                    last_usage_index: Some(index),
                    trailing: TokenCount { tokens, source },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::estimate_context_tokens;
    use serde_json::json;

    fn message(value: serde_json::Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    fn conversation() -> Vec<AgentMessage> {
        vec![
            message(json!({"role": "user", "content": "Please read src/main.rs and fix the bug."})),
            message(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should read the file first."},
                {"type": "text", "text": "Reading it now."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/main.rs"}}
            ], "stopReason": "toolUse",
               "usage": {"input": 50, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 70}})),
            message(
                json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": false,
                "content": [{"type": "text", "text": "fn main() {\n    println!(\"hi\");\n}\n"},
                            {"type": "image", "data": "", "mimeType": "image/png"}]}),
            ),
            message(json!({"role": "futureRole", "text": "ignored"})),
        ]
    }

    #[test]
    fn estimator_names_round_trip() {
        for estimator in Estimator::ALL {
            assert_eq!(estimator.name().parse::<Estimator>(), Ok(estimator));
            assert_eq!(estimator.to_string(), estimator.name());
        }
        assert_eq!(Estimator::default(), Estimator::Pi);
        let error = "gpt2".parse::<Estimator>().unwrap_err();
        assert_eq!(error.value, "gpt2");
        assert!(
            error
                .to_string()
                .starts_with("unknown token estimator `gpt2`")
        );
    }

    #[test]
    fn sources_are_labelled() {
        assert_eq!(Estimator::Pi.source().to_string(), "estimate:pi");
        assert_eq!(Estimator::Ctxkit.source().to_string(), "estimate:ctxkit");
        assert_eq!(
            Estimator::Cl100k.source().to_string(),
            "tokenizer:cl100k_base"
        );
        assert_eq!(
            Estimator::O200k.source().to_string(),
            "tokenizer:o200k_base"
        );
        assert_eq!(TokenSource::Reported.to_string(), "reported");
    }

    #[test]
    fn counts_text_with_every_estimator() {
        let text = "hello world";
        assert_eq!(Estimator::Pi.tokens(text), 3);
        assert_eq!(Estimator::Ctxkit.tokens(text), 2);
        assert_eq!(Estimator::Cl100k.tokens(text), 2);
        assert_eq!(Estimator::O200k.tokens(text), 2);
    }

    #[test]
    fn pi_matches_the_reference_estimator() {
        let messages = conversation();
        for message in &messages {
            assert_eq!(
                count_message_tokens(message, Estimator::Pi).tokens,
                estimate_tokens(message)
            );
        }
        let reference = estimate_context_tokens(&messages);
        let counted = context_token_count(&messages, Estimator::Pi);
        assert_eq!(counted.tokens, reference.tokens);
        assert_eq!(counted.usage_tokens, reference.usage_tokens);
        assert_eq!(counted.trailing.tokens, reference.trailing_tokens);
        assert_eq!(counted.last_usage_index, reference.last_usage_index);
        let without_usage = &messages[..1];
        assert_eq!(
            count_messages_tokens(without_usage, Estimator::Pi).tokens,
            estimate_context_tokens(without_usage).tokens
        );
    }

    #[test]
    fn tokenizer_counts_include_chat_framing() {
        let messages = conversation();
        let encoding = Encoding::Cl100kBase;
        let user = count_message_tokens(&messages[0], Estimator::Cl100k);
        assert_eq!(
            user.tokens,
            MESSAGE_OVERHEAD_TOKENS
                + 1
                + encoding.count("Please read src/main.rs and fix the bug.")
        );
        let assistant = count_message_tokens(&messages[1], Estimator::Cl100k).tokens;
        let expected = MESSAGE_OVERHEAD_TOKENS
            + encoding.count("assistant")
            + encoding.count("I should read the file first.")
            + encoding.count("Reading it now.")
            + encoding.count("read")
            + encoding.count(r#"{"path":"src/main.rs"}"#)
            + TOOL_CALL_OVERHEAD_TOKENS;
        assert_eq!(assistant, expected);
        let tool = count_message_tokens(&messages[2], Estimator::Cl100k).tokens;
        assert!(tool > IMAGE_TOKENS + MESSAGE_OVERHEAD_TOKENS);
        assert_eq!(
            count_message_tokens(&messages[3], Estimator::Cl100k).tokens,
            0
        );
        let total = count_messages_tokens(&messages, Estimator::Cl100k);
        assert_eq!(
            total.tokens,
            user.tokens + assistant + tool + REPLY_PRIMING_TOKENS
        );
        assert_eq!(count_messages_tokens(&[], Estimator::Cl100k).tokens, 0);
    }

    #[test]
    fn context_uses_reported_usage_then_the_estimator() {
        let messages = conversation();
        let counted = context_token_count(&messages, Estimator::O200k);
        assert_eq!(counted.usage_tokens, 70);
        assert_eq!(counted.last_usage_index, Some(1));
        let trailing = count_message_tokens(&messages[2], Estimator::O200k).tokens;
        assert_eq!(
            counted.trailing,
            TokenCount {
                tokens: trailing,
                source: Estimator::O200k.source()
            }
        );
        assert_eq!(counted.tokens, 70 + trailing);
        assert_eq!(counted.source(), Estimator::O200k.source());
        let reported_only = context_token_count(&messages[..2], Estimator::Ctxkit);
        assert_eq!(reported_only.tokens, 70);
        assert_eq!(reported_only.source(), TokenSource::Reported);
        let estimated = context_token_count(&messages[..1], Estimator::Ctxkit);
        assert_eq!(estimated.last_usage_index, None);
        assert_eq!(estimated.source(), TokenSource::Estimate(Heuristic::Ctxkit));
    }
}
