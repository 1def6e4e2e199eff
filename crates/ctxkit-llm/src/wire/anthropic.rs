//! Anthropic Messages: `system` at the top level, reasoning as `thinking.budget_tokens` or, for
//! the models that require it, adaptive thinking at an `output_config.effort`; usage with cache
//! reads and writes.

use ctxkit_overflow::StopReason;
use serde_json::{Value, json};

use super::{Completion, CompletionRequest, ReasoningLevel, WireRequest, with_budget};
use crate::config::ProviderConfig;

const VERSION: &str = "2023-06-01";

fn budget(level: ReasoningLevel) -> u64 {
    match level {
        ReasoningLevel::Minimal => 1024,
        ReasoningLevel::Low => 2048,
        ReasoningLevel::Medium => 8192,
        ReasoningLevel::High => 16_384,
        ReasoningLevel::XHigh => 32_768,
    }
}

pub(super) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    let body = json!({
        "model": config.model,
        "max_tokens": request.max_tokens,
        "system": request.system_prompt,
        "messages": [{
            "role": "user",
            "content": [{ "type": "text", "text": request.user_text }],
        }],
    });
    finish(config, body, request.max_tokens, request.reasoning)
}

/// The effort an adaptive-thinking model is asked for at `level`, as Pi maps it: `minimal` and
/// `low` ask `low`; `xhigh` asks what the model takes above `high` (`xhigh` or `max`), else `high`.
fn effort(level: ReasoningLevel, xhigh_effort: Option<&str>) -> &str {
    match level {
        ReasoningLevel::Minimal | ReasoningLevel::Low => "low",
        ReasoningLevel::Medium => "medium",
        ReasoningLevel::High => "high",
        ReasoningLevel::XHigh => xhigh_effort.unwrap_or("high"),
    }
}

/// A request from its `body`: the reasoning (adaptive thinking at an effort for the models that
/// require it, else a thinking budget raising `max_tokens` to make room), the version and key
/// headers, the endpoint.
pub(crate) fn finish(
    config: &ProviderConfig,
    mut body: Value,
    max_tokens: u64,
    reasoning: Option<ReasoningLevel>,
) -> WireRequest {
    let adaptive = config
        .model_info
        .as_ref()
        .filter(|model| model.adaptive_thinking);
    if let (Some(level), Some(model)) = (reasoning, adaptive) {
        // Claude decides how much to think; the reply keeps `max_tokens` as it is. Summarized
        // display, as Pi asks (newer models otherwise leave their thinking out).
        body["thinking"] = json!({ "type": "adaptive", "display": "summarized" });
        body["output_config"] = json!({ "effort": effort(level, model.xhigh_effort.as_deref()) });
    } else if let Some(level) = reasoning {
        let (max_tokens, budget) = with_budget(
            config,
            max_tokens,
            config
                .thinking_budgets
                .of(level)
                .unwrap_or_else(|| budget(level)),
        );
        body["max_tokens"] = json!(max_tokens);
        if budget >= 1024 {
            body["thinking"] = json!({ "type": "enabled", "budget_tokens": budget });
        }
    }
    let mut headers = vec![("anthropic-version".to_owned(), VERSION.to_owned())];
    if let Some(key) = &config.api_key {
        headers.push(("x-api-key".to_owned(), key.expose_secret().to_owned()));
    }
    WireRequest {
        url: format!("{}/v1/messages", config.base_url),
        headers,
        body,
    }
}

pub(super) fn parse(value: &Value) -> Result<Completion, &'static str> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` array")?;
    let text = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let stop_reason = match value.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::Length,
        Some("tool_use") => StopReason::ToolUse,
        Some("refusal") => StopReason::Error,
        _ => StopReason::Stop,
    };
    let usage = super::anthropic_tools::message_usage(value.get("usage").unwrap_or(&Value::Null));
    Ok(Completion {
        text,
        usage,
        stop_reason,
    })
}
