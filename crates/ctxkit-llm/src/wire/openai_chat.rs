//! OpenAI Chat Completions, also spoken by OpenRouter, Groq, xAI, Mistral, Ollama, vLLM, the
//! llama.cpp server and LM Studio: a system message, `reasoning_effort`, cached prompt tokens.

use ctxkit_overflow::StopReason;
use serde_json::{Value, json};

use super::{Completion, CompletionRequest, ReasoningLevel, WireRequest, bearer, u64_at, usage};
use crate::config::ProviderConfig;
use crate::models::MaxTokensField;

pub(super) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    let body = json!({
        "model": config.model,
        "messages": [
            { "role": crate::chat_compat::instruction_role(config), "content": request.system_prompt },
            { "role": "user", "content": request.user_text },
        ],
        "stream": false,
    });
    chat_completions_request(config, body, Some(request.max_tokens), request.reasoning)
}

/// A Chat Completions request from its `body` (model, messages, tools): the output limit under the
/// field name the model takes, `store: false` where the model takes it, the reasoning in the
/// model's format (`chat_compat`), the endpoint and the bearer header.
pub(crate) fn chat_completions_request(
    config: &ProviderConfig,
    mut body: Value,
    max_tokens: Option<u64>,
    reasoning: Option<ReasoningLevel>,
) -> WireRequest {
    if let Some(max_tokens) = max_tokens {
        let field = match crate::chat_compat::max_tokens_field(config) {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body[field] = json!(max_tokens);
    }
    if crate::chat_compat::sends_store(config) {
        body["store"] = json!(false);
    }
    crate::chat_compat::apply_reasoning(config, &mut body, reasoning);
    WireRequest {
        url: format!("{}/chat/completions", config.base_url),
        headers: bearer(config),
        body,
    }
}

pub(super) fn parse(value: &Value) -> Result<Completion, &'static str> {
    let choice = value.pointer("/choices/0").ok_or("no `choices`")?;
    let text = match choice.pointer("/message/content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let stop_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("length") => StopReason::Length,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("content_filter") => StopReason::Error,
        _ => StopReason::Stop,
    };
    let usage = chat_usage(value);
    Ok(Completion {
        text,
        usage,
        stop_reason,
    })
}

/// The usage of a Chat Completions response; cached prompt tokens count as cache reads, not input.
/// The reasoning tokens (a part of the output: `completion_tokens_details.reasoning_tokens`, or a
/// top-level `reasoning_tokens`) are kept as `usage.reasoning`, which Pi 1.6.0 writes for every
/// Chat Completions reply (0 when the server reports none).
pub(crate) fn chat_usage(value: &Value) -> ctxkit_protocol::Usage {
    let cached = u64_at(value, "/usage/prompt_tokens_details/cached_tokens");
    let prompt = u64_at(value, "/usage/prompt_tokens");
    let mut usage = usage(
        prompt.saturating_sub(cached),
        u64_at(value, "/usage/completion_tokens"),
        cached,
        0,
    );
    let reasoning = match u64_at(value, "/usage/completion_tokens_details/reasoning_tokens") {
        0 => u64_at(value, "/usage/reasoning_tokens"),
        tokens => tokens,
    };
    usage.extra.insert("reasoning".to_owned(), json!(reasoning));
    usage
}
