//! Anthropic's on-demand compaction (beta `compact-2026-09-04`): the span ctxkit's planner chose,
//! sent as an ordinary Messages request with a top-level `compaction: {type: "summarize"}`, answers
//! with `stop_reason: "compaction"` and one signed `compaction` block holding a readable summary.
//! Later requests to the same model send that block first, as an assistant message, in place of
//! the summarized messages (the docs' "swap"); every other model reads the summary text. The
//! request, the response (a JSON body or an event stream) and the replay rule. Pure.

use ctxkit_protocol::{AgentMessage, ON_DEMAND_COMPACTION_FIELD, Usage};
use serde_json::{Value, json};

use super::{WireRequest, anthropic_tools, provider_compaction};
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;

/// The beta of on-demand compaction: sent with the compaction request and with every request that
/// carries one of its blocks.
pub(crate) const ON_DEMAND_BETA: &str = "compact-2026-09-04";

/// The largest block (bytes of its JSON) ctxkit accepts from the API or sends back from a file.
pub(crate) const MAX_BLOCK_BYTES: usize = 1 << 20;

/// What the compaction request returned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OnDemandReply {
    pub(crate) summary: String,
    /// The block exactly as received.
    pub(crate) block: Value,
    pub(crate) usage: Usage,
}

/// The compaction request of `request` (the span's messages with the conversation's system prompt,
/// tools and reasoning): the conversation request's own shape, plus the parameter and the beta.
pub(crate) fn build(config: &ProviderConfig, request: &ChatRequest) -> WireRequest {
    let mut wire = anthropic_tools::build(config, request);
    wire.body["compaction"] = json!({"type": "summarize"});
    add_beta(&mut wire, config, ON_DEMAND_BETA);
    wire
}

/// Adds `beta` to the request's `anthropic-beta` header (or the configured one, when the request
/// has none yet).
pub(crate) fn add_beta(wire: &mut WireRequest, config: &ProviderConfig, beta: &str) {
    let header = wire
        .headers
        .iter_mut()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"));
    match header {
        Some((_, value)) => *value = provider_compaction::beta_header(Some(value), &[beta]),
        None => {
            let configured = config
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
                .map(|(_, value)| value.as_str());
            wire.headers.push((
                "anthropic-beta".to_owned(),
                provider_compaction::beta_header(configured, &[beta]),
            ));
        }
    }
}

/// A block ctxkit sends back or keeps: an object of type `compaction` with a readable summary,
/// at most [`MAX_BLOCK_BYTES`].
pub(crate) fn is_usable_block(block: &Value) -> bool {
    provider_compaction::is_compaction(block)
        && block
            .get("content")
            .and_then(Value::as_str)
            .is_some_and(|summary| !summary.trim().is_empty())
        && block.to_string().len() <= MAX_BLOCK_BYTES
}

/// The on-demand block `message` (a view message) carries, when it may go to this model: written
/// by the same provider, API and model, and usable. Another model gets the summary text.
pub(crate) fn replayable<'a>(
    config: &ProviderConfig,
    message: &'a AgentMessage,
) -> Option<&'a Value> {
    let AgentMessage::User(user) = message else {
        return None;
    };
    let carried = user.extra.get(ON_DEMAND_COMPACTION_FIELD)?;
    let same =
        |key: &str, expected: &str| carried.get(key).and_then(Value::as_str) == Some(expected);
    let block = carried.get("block")?;
    (same("provider", &config.provider)
        && same("api", config.api.as_str())
        && same("model", &config.model)
        && is_usable_block(block))
    .then_some(block)
}

/// The compaction response: a JSON body, or the event stream a streamed request gets.
pub(crate) fn parse(text: &str) -> Result<OnDemandReply, String> {
    let trimmed = text.trim_start();
    let (stop_reason, blocks, usage) = if trimmed.starts_with('{') {
        let value: Value =
            serde_json::from_str(trimmed).map_err(|_| "the response is not JSON".to_owned())?;
        let blocks = value
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .ok_or("the response has no `content` array")?;
        (
            value
                .get("stop_reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            blocks,
            anthropic_tools::message_usage(value.get("usage").unwrap_or(&Value::Null)),
        )
    } else {
        read_stream(text)?
    };
    if stop_reason.as_deref() != Some("compaction") {
        return Err(format!(
            "the API answered with stop reason `{}` instead of a compaction",
            stop_reason.as_deref().unwrap_or("none")
        ));
    }
    let [block] = blocks.as_slice() else {
        return Err(format!(
            "the compaction response holds {} content blocks instead of one",
            blocks.len()
        ));
    };
    if !provider_compaction::is_compaction(block) {
        return Err("the compaction response's block is not of type `compaction`".to_owned());
    }
    if block.to_string().len() > MAX_BLOCK_BYTES {
        return Err(format!(
            "the compaction block is larger than {MAX_BLOCK_BYTES} bytes"
        ));
    }
    if !is_usable_block(block) {
        return Err("the compaction block has no readable summary".to_owned());
    }
    let summary = block
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(OnDemandReply {
        summary,
        block: block.clone(),
        usage,
    })
}

/// Stop reason, blocks and usage of an event stream (`message_start`, `content_block_start`,
/// `compaction_delta`s, `message_delta`, `message_stop`; an `error` event fails).
fn read_stream(text: &str) -> Result<(Option<String>, Vec<Value>, Usage), String> {
    let mut stop_reason = None;
    let mut blocks: Vec<Value> = Vec::new();
    let mut usage = Usage::default();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(event) = serde_json::from_str::<Value>(data.trim()) else {
            return Err("the event stream holds an event that is not JSON".to_owned());
        };
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(value) = event.pointer("/message/usage") {
                    usage = anthropic_tools::message_usage(value);
                }
            }
            Some("content_block_start") => {
                blocks.push(event.get("content_block").cloned().unwrap_or(Value::Null));
            }
            Some("content_block_delta") => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                if delta.get("type").and_then(Value::as_str) == Some("compaction_delta")
                    && let Some(block) = blocks.last_mut().filter(|block| block.is_object())
                {
                    add_delta(block, delta);
                }
            }
            Some("message_delta") => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    stop_reason = Some(reason.to_owned());
                }
                if let Some(value) = event.get("usage") {
                    let update = anthropic_tools::message_usage(value);
                    usage.output = update.output;
                    usage.extra.extend(update.extra);
                }
            }
            Some("error") => {
                return Err(format!(
                    "the API reported an error in the stream: {}",
                    event.get("error").unwrap_or(&Value::Null)
                ));
            }
            Some(_) | None => {}
        }
    }
    Ok((stop_reason, blocks, usage))
}

/// A `compaction_delta`: `content` is appended to the summary, any other field (the signature)
/// replaces the block's.
fn add_delta(block: &mut Value, delta: &Value) {
    let Some(fields) = delta.as_object() else {
        return;
    };
    for (key, value) in fields {
        match key.as_str() {
            "type" => {}
            "content" => {
                let before = block.get("content").and_then(Value::as_str).unwrap_or("");
                let after = format!("{before}{}", value.as_str().unwrap_or(""));
                block["content"] = Value::String(after);
            }
            _ if value.is_null() => {}
            _ => block[key.as_str()] = value.clone(),
        }
    }
}

#[cfg(test)]
#[path = "anthropic_compaction_tests.rs"]
mod tests;
