//! Google Gemini `generateContent`: `systemInstruction`, `thinkingConfig` (a budget, or a level:
//! `gemini_thinking`), the key in the `x-goog-api-key` header (never in the URL, where error
//! messages could show it).

use ctxkit_overflow::StopReason;
use serde_json::{Value, json};

use super::{
    Completion, CompletionRequest, ReasoningLevel, WireRequest, u64_at, usage, with_budget,
};
use crate::config::ProviderConfig;

fn budget(level: ReasoningLevel) -> u64 {
    match level {
        ReasoningLevel::Minimal => 128,
        ReasoningLevel::Low => 2048,
        ReasoningLevel::Medium => 8192,
        ReasoningLevel::High | ReasoningLevel::XHigh => 24_576,
    }
}

pub(super) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    let body = json!({
        "systemInstruction": { "parts": [{ "text": request.system_prompt }] },
        "contents": [{ "role": "user", "parts": [{ "text": request.user_text }] }],
        "generationConfig": generation(config, Some(request.max_tokens), request.reasoning, false),
    });
    finish(config, body, "generateContent")
}

/// `generationConfig`: the output limit (thinking counts in it) and the thinking budget.
pub(crate) fn generation(
    config: &ProviderConfig,
    max_tokens: Option<u64>,
    reasoning: Option<ReasoningLevel>,
    include_thoughts: bool,
) -> Value {
    let mut generation = json!({});
    if let Some(max_tokens) = max_tokens {
        generation["maxOutputTokens"] = json!(max_tokens);
    }
    // Gemini 3 and later: a level, the output limit as asked (`gemini_thinking`).
    if let Some(thinking_level) = super::gemini_thinking::thinking_level(config, reasoning) {
        let mut thinking = json!({ "thinkingLevel": thinking_level });
        if reasoning.is_some() {
            thinking["includeThoughts"] = json!(include_thoughts);
        }
        generation["thinkingConfig"] = thinking;
        return generation;
    }
    if let Some(level) = reasoning {
        let (total, budget) = with_budget(
            config,
            max_tokens.unwrap_or(0),
            config
                .thinking_budgets
                .of(level)
                .unwrap_or_else(|| budget(level)),
        );
        if max_tokens.is_some() {
            generation["maxOutputTokens"] = json!(total);
        }
        generation["thinkingConfig"] =
            json!({ "thinkingBudget": budget, "includeThoughts": include_thoughts });
    }
    generation
}

/// A request to `method` (`generateContent`, `streamGenerateContent?alt=sse`) with the key header.
pub(crate) fn finish(config: &ProviderConfig, body: Value, method: &str) -> WireRequest {
    let headers = config
        .api_key
        .as_ref()
        .map(|key| ("x-goog-api-key".to_owned(), key.expose_secret().to_owned()))
        .into_iter()
        .collect();
    WireRequest {
        url: format!("{}/models/{}:{method}", config.base_url, config.model),
        headers,
        body,
    }
}

pub(super) fn parse(value: &Value) -> Result<Completion, &'static str> {
    let candidate = value.pointer("/candidates/0").ok_or("no `candidates`")?;
    let text = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let stop_reason = match candidate.get("finishReason").and_then(Value::as_str) {
        Some("MAX_TOKENS") => StopReason::Length,
        Some("STOP") | None => StopReason::Stop,
        Some(_) => StopReason::Error,
    };
    let usage = gemini_usage(value);
    Ok(Completion {
        text,
        usage,
        stop_reason,
    })
}

/// The usage of a response (or stream chunk); thinking tokens count as output.
pub(crate) fn gemini_usage(value: &Value) -> ctxkit_protocol::Usage {
    let cached = u64_at(value, "/usageMetadata/cachedContentTokenCount");
    usage(
        u64_at(value, "/usageMetadata/promptTokenCount").saturating_sub(cached),
        u64_at(value, "/usageMetadata/candidatesTokenCount")
            + u64_at(value, "/usageMetadata/thoughtsTokenCount"),
        cached,
        0,
    )
}
