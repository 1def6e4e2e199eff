//! OpenAI Responses: `instructions` for the system prompt, `reasoning.effort`, nothing stored.

use serde_json::{Value, json};

use super::{Completion, CompletionRequest, ReasoningLevel, WireRequest, bearer, u64_at, usage};
use crate::config::ProviderConfig;
use ctxkit_overflow::StopReason;

pub(super) fn build(config: &ProviderConfig, request: &CompletionRequest) -> WireRequest {
    let body = json!({
        "model": config.model,
        "instructions": request.system_prompt,
        "input": [{
            "role": "user",
            "content": [{ "type": "input_text", "text": request.user_text }],
        }],
        "max_output_tokens": request.max_tokens,
        "store": false,
    });
    finish(config, body, request.reasoning)
}

/// A request from its `body`: the reasoning effort, the endpoint, the bearer header.
pub(crate) fn finish(
    config: &ProviderConfig,
    mut body: Value,
    reasoning: Option<ReasoningLevel>,
) -> WireRequest {
    if let Some(level) = reasoning {
        body["reasoning"] = json!({ "effort": level.openai_effort() });
    }
    WireRequest {
        url: format!("{}/responses", config.base_url),
        headers: bearer(config),
        body,
    }
}

pub(super) fn parse(value: &Value) -> Result<Completion, &'static str> {
    check_shape(value)?;
    let output = value
        .get("output")
        .and_then(Value::as_array)
        .ok_or("no `output` array")?;
    let text = output
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let stop_reason = match value.get("status").and_then(Value::as_str) {
        Some("incomplete") => StopReason::Length,
        Some("failed" | "cancelled") => StopReason::Error,
        _ => StopReason::Stop,
    };
    let usage = response_usage(value);
    Ok(Completion {
        text,
        usage,
        stop_reason,
    })
}

/// A Chat Completions answer to a Responses request names the setting to change.
pub(crate) fn check_shape(value: &Value) -> Result<(), &'static str> {
    if value.get("output").is_none() && value.get("choices").is_some() {
        return Err(
            "the server answered in the Chat Completions shape (`choices`), not the Responses API's; set `ctxkit config set llm.api openai-completions`",
        );
    }
    Ok(())
}

/// The usage of a response; cached input tokens count as cache reads, not input.
pub(crate) fn response_usage(value: &Value) -> ctxkit_protocol::Usage {
    let cached = u64_at(value, "/usage/input_tokens_details/cached_tokens");
    usage(
        u64_at(value, "/usage/input_tokens").saturating_sub(cached),
        u64_at(value, "/usage/output_tokens"),
        cached,
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_completions_answer_says_which_setting_to_change() {
        let answer =
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}]});
        let error = parse(&answer).err().unwrap_or_default();
        assert!(error.contains("llm.api openai-completions"), "{error}");
    }
}
