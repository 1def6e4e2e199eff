//! Google Gemini `generateContent`: `systemInstruction`, `thinkingConfig.thinkingBudget`, the key
//! in the `x-goog-api-key` header (never in the URL, where error messages could show it).

use serde_json::{Value, json};

use super::{
    Completion, CompletionRequest, ReasoningLevel, WireRequest, u64_at, usage, with_budget,
};
use crate::config::ProviderConfig;
use crate::overflow::StopReason;

fn budget(level: ReasoningLevel) -> u64 {
    match level {
        ReasoningLevel::Minimal => 128,
        ReasoningLevel::Low => 2048,
        ReasoningLevel::Medium => 8192,
        ReasoningLevel::High | ReasoningLevel::XHigh => 24_576,
    }
}

pub(super) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    let mut generation = json!({ "maxOutputTokens": request.max_tokens });
    if let Some(level) = request.reasoning {
        // Gemini counts thinking tokens in `maxOutputTokens`.
        let (max_tokens, budget) = with_budget(config, request.max_tokens, budget(level));
        generation["maxOutputTokens"] = json!(max_tokens);
        generation["thinkingConfig"] =
            json!({ "thinkingBudget": budget, "includeThoughts": false });
    }
    let body = json!({
        "systemInstruction": { "parts": [{ "text": request.system_prompt }] },
        "contents": [{ "role": "user", "parts": [{ "text": request.user_text }] }],
        "generationConfig": generation,
    });
    let headers = config
        .api_key
        .as_ref()
        .map(|key| ("x-goog-api-key".to_owned(), key.expose_secret().to_owned()))
        .into_iter()
        .collect();
    WireRequest {
        url: format!(
            "{}/models/{}:generateContent",
            config.base_url, config.model
        ),
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
    let cached = u64_at(value, "/usageMetadata/cachedContentTokenCount");
    let usage = usage(
        u64_at(value, "/usageMetadata/promptTokenCount").saturating_sub(cached),
        u64_at(value, "/usageMetadata/candidatesTokenCount")
            + u64_at(value, "/usageMetadata/thoughtsTokenCount"),
        cached,
        0,
    );
    Ok(Completion {
        text,
        usage,
        stop_reason,
    })
}
