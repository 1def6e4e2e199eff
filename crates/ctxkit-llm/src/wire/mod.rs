//! The four wire formats as pure functions: a request in, the URL, headers and JSON body out;
//! a response body in, text, usage and stop reason out. No I/O here.

mod anthropic;
pub(crate) mod anthropic_cache;
pub(crate) mod anthropic_compaction;
pub(crate) mod anthropic_context;
pub(crate) mod anthropic_threads;
pub(crate) mod anthropic_tools;
pub(crate) mod arguments;
pub(crate) mod conversation;
pub(crate) mod gemini;
pub(crate) mod gemini_thinking;
pub(crate) mod gemini_tools;
pub(crate) mod openai_chat;
pub(crate) mod openai_chat_tools;
pub(crate) mod openai_prompt_cache;
pub(crate) mod openai_responses;
pub(crate) mod openai_responses_tools;
pub(crate) mod provider_compaction;
pub(crate) mod reasoning_details;
pub(crate) mod text_signature;
mod unique_call_ids;

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock, Usage};
use serde_json::Value;

use crate::config::ProviderConfig;
use crate::error::LlmError;
use crate::models::Api;

/// A reasoning ("thinking") level, as in the reference's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningLevel {
    Minimal,
    Low,
    Medium,
    High,
    XHigh,
}

impl ReasoningLevel {
    /// Reads `minimal`, `low`, `medium`, `high`, `xhigh`, and Pi 1.6's `max` as the highest level
    /// ctxkit sends (`xhigh`: as Pi clamps `max` down to what a model takes, `high` for OpenAI's
    /// APIs); `off` and anything else are `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "minimal" => Some(Self::Minimal),
            "low" => Some(Self::Low),
            "medium" => Some(Self::Medium),
            "high" => Some(Self::High),
            "xhigh" | "max" => Some(Self::XHigh),
            _ => None,
        }
    }

    /// The name [`ReasoningLevel::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
        }
    }

    /// The effort name of OpenAI's APIs (`xhigh` is sent as `high`, which every model accepts).
    pub(crate) fn openai_effort(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High | Self::XHigh => "high",
        }
    }
}

/// One single-turn request: a system prompt and one user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub system_prompt: String,
    pub user_text: String,
    /// Output tokens for the answer, not counting reasoning.
    pub max_tokens: u64,
    pub reasoning: Option<ReasoningLevel>,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Text blocks joined by `\n`; reasoning text is left out.
    pub text: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
}

impl Completion {
    /// A conversation reply read as an answer: its text blocks joined by `\n` (thinking, tool calls
    /// and images left out), its usage, and its stop reason (`stop` when it has none).
    pub(crate) fn from_reply(reply: &AssistantMessage) -> Self {
        let text = reply
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                ContentBlock::Thinking(_)
                | ContentBlock::ToolCall(_)
                | ContentBlock::Image(_)
                | ContentBlock::Unknown(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        Self {
            text,
            usage: reply.usage.clone().unwrap_or_default(),
            stop_reason: reply
                .stop_reason
                .as_deref()
                .and_then(StopReason::parse)
                .unwrap_or(StopReason::Stop),
        }
    }
}

/// What to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WireRequest {
    pub url: String,
    /// Provider headers, including the key header (never shown: see `client`).
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

pub(crate) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    match config.api {
        Api::AnthropicMessages => anthropic::build(config, request),
        Api::OpenAiChat => openai_chat::build(config, request),
        Api::OpenAiResponses => openai_responses::build(config, request),
        Api::Gemini => gemini::build(config, request),
    }
}

pub(crate) fn parse(config: &ProviderConfig, body: &str) -> Result<Completion, LlmError> {
    let invalid = |message: &str| LlmError::InvalidResponse {
        provider: config.provider.clone(),
        message: message.to_owned(),
        body: body.to_owned(),
    };
    let value: Value = serde_json::from_str(body).map_err(|_| invalid("not JSON"))?;
    // A prompt Gemini refuses has no candidates: say why, as the streamed answer does.
    if config.api == Api::Gemini
        && let Some(blocked) = gemini_tools::blocked_prompt(&value)
    {
        return Err(LlmError::ReplyFailed {
            provider: config.provider.clone(),
            message: blocked,
        });
    }
    let parsed = match config.api {
        Api::AnthropicMessages => anthropic::parse(&value),
        Api::OpenAiChat => openai_chat::parse(&value),
        Api::OpenAiResponses => openai_responses::parse(&value),
        Api::Gemini => gemini::parse(&value),
    };
    parsed.map_err(invalid)
}

/// Output limit plus a reasoning budget, capped at the model's limit; the budget shrinks to keep
/// room for the answer when the cap bites (as the reference does).
pub(crate) fn with_budget(config: &ProviderConfig, max_tokens: u64, budget: u64) -> (u64, u64) {
    let cap = config
        .model_info
        .as_ref()
        .map_or(u64::MAX, |model| model.max_output);
    let total = max_tokens.saturating_add(budget).min(cap);
    let budget = if total <= budget {
        total.saturating_sub(1024)
    } else {
        budget
    };
    (total, budget)
}

pub(crate) fn u64_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Usage with `total_tokens` filled in.
pub(crate) fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage::from_parts(input, output, cache_read, cache_write)
}

pub(crate) fn bearer(config: &ProviderConfig) -> Vec<(String, String)> {
    config
        .api_key
        .as_ref()
        .map(|key| {
            (
                "authorization".to_owned(),
                format!("Bearer {}", key.expose_secret()),
            )
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
mod test_support;
