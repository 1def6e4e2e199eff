//! Fitting a request's output limit into the model's context window (Pi 1.6's provider layer): the
//! input is estimated at 3.5 characters per token, a safety margin is kept, and the output limit is
//! what is left, at most the model's own limit. This estimator is the provider layer's own; the
//! compaction estimate stays at 4 characters per token (`ctxkit-tokens`). Unlike Pi, the fixed
//! margin shrinks with the window (`ctxkit_overflow::output_margin`): Pi's 4,096 tokens are a
//! quarter of a 16k window, and left such a model replies of one token.

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent, js_stringify};
use ctxkit_summarizer::ToolDefinition;
use serde_json::{Value, json};

/// Characters per token of the provider layer's input estimate.
pub const CHARS_PER_TOKEN: f64 = 3.5;
/// Characters an image counts for.
const IMAGE_CHARS: usize = 4800;
/// The proportional part of the safety margin: 15% of the estimated input.
const SAFETY_RATIO: f64 = 0.15;
/// Below this much room the proportional margin is dropped (only the fixed one is kept) and the
/// room is capped at this size.
const MIN_OUTPUT_WITH_RATIO_MARGIN: u64 = 32_768;

/// The output limit for a request of `input_tokens` (estimated with [`estimate_request_tokens`]):
/// the smaller of `requested` (the model's own limit when the request names none) and the room
/// the window leaves after the input and the margin, but at least 1. A window of 0 (unknown)
/// leaves `requested` as it is.
pub fn fit_output_limit(requested: u64, context_window: u64, input_tokens: u64) -> u64 {
    if context_window == 0 {
        return requested.max(1);
    }
    let window = i128::from(context_window);
    let input = i128::from(input_tokens);
    let fixed = i128::from(ctxkit_overflow::output_margin(context_window));
    let ratio_margin = (input_tokens as f64 * SAFETY_RATIO).ceil() as i128;
    let margin = ratio_margin.max(fixed);
    let mut room = window - input - margin;
    if room < i128::from(MIN_OUTPUT_WITH_RATIO_MARGIN) {
        room = (window - input - fixed).min(i128::from(MIN_OUTPUT_WITH_RATIO_MARGIN));
    }
    let room = u64::try_from(room.max(1)).unwrap_or(1);
    requested.min(room).max(1)
}

/// The estimated input of a request: the system prompt with its tool definitions, then each
/// message, each rounded up on its own. When the last successful assistant reply reports usage,
/// that usage stands for everything up to it, unless a message with a later timestamp (such as a
/// summary inserted afterwards) comes before it.
pub fn estimate_request_tokens(
    system_prompt: &str,
    tools: &[ToolDefinition],
    messages: &[AgentMessage],
) -> u64 {
    let system = tokens_of(utf16(system_prompt)) + tools_tokens(tools);
    match last_usage(messages) {
        Some((index, usage_tokens)) => {
            usage_tokens
                + messages[index + 1..]
                    .iter()
                    .map(message_tokens)
                    .sum::<u64>()
        }
        None => system + messages.iter().map(message_tokens).sum::<u64>(),
    }
}

fn tokens_of(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn utf16(text: &str) -> usize {
    text.encode_utf16().count()
}

fn tools_tokens(tools: &[ToolDefinition]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    let listed: Vec<Value> = tools
        .iter()
        .map(|tool| json!({"name": tool.name, "description": tool.description, "parameters": tool.parameters}))
        .collect();
    tokens_of(utf16(&js_stringify(&Value::Array(listed))))
}

fn content_chars(content: &MessageContent) -> usize {
    match content {
        MessageContent::Text(text) => utf16(text),
        MessageContent::Blocks(blocks) => blocks.iter().map(block_chars).sum(),
    }
}

fn block_chars(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(text) => utf16(&text.text),
        ContentBlock::Thinking(thinking) => utf16(&thinking.thinking),
        ContentBlock::ToolCall(call) => utf16(&call.name) + utf16(&js_stringify(&call.arguments)),
        ContentBlock::Image(_) | ContentBlock::Unknown(_) => IMAGE_CHARS,
    }
}

fn message_tokens(message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::User(user) => tokens_of(content_chars(&user.content)),
        AgentMessage::ToolResult(result) => tokens_of(content_chars(&result.content)),
        AgentMessage::Assistant(assistant) => {
            tokens_of(assistant.content.iter().map(block_chars).sum())
        }
        // Other roles reach a provider as user text: count what they serialize to.
        AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => {
            let converted = ctxkit_protocol_text(message);
            tokens_of(utf16(&converted))
        }
    }
}

/// The text of a message the provider receives as user text (its JSON when nothing better is
/// known): an estimate only.
fn ctxkit_protocol_text(message: &AgentMessage) -> String {
    serde_json::to_value(message)
        .ok()
        .and_then(|value| value.get("content").or(value.get("summary")).cloned())
        .map(|value| match value {
            Value::String(text) => text,
            other @ (Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::Array(_)
            | Value::Object(_)) => other.to_string(),
        })
        .unwrap_or_default()
}

/// The position and context tokens of the last successful assistant reply with usage that still
/// describes the prefix before it: no message before it is stamped later, and no summary before it
/// is stamped in the same millisecond or later (a compaction written right after the reply it kept
/// ends in the same millisecond; the reference counts that reply's usage as stale too).
fn last_usage(messages: &[AgentMessage]) -> Option<(usize, u64)> {
    let mut latest_timestamp = i64::MIN;
    let mut latest_summary = None;
    let mut found = None;
    for (index, message) in messages.iter().enumerate() {
        let timestamp = message.timestamp();
        if let AgentMessage::Assistant(assistant) = message
            && !assistant.is_aborted_or_error()
            && let Some(usage) = &assistant.usage
        {
            let at = assistant.timestamp.unwrap_or(i64::MIN);
            let after_summaries = latest_summary.is_none_or(|summary| at > summary);
            let tokens = usage.context_tokens();
            if tokens > 0 && at >= latest_timestamp && after_summaries {
                found = Some((index, tokens));
            }
        }
        if let Some(timestamp) = timestamp {
            latest_timestamp = latest_timestamp.max(timestamp);
            if matches!(
                message,
                AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_)
            ) {
                latest_summary = latest_summary.max(Some(timestamp));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_example_gives_2904() {
        // A 17,000-token window, a 4096-token model limit, 35,000 characters of input: Pi keeps
        // 4,096 (2,904 left); ctxkit keeps a sixteenth of the window, 1,062.
        let input = tokens_of(35_000);
        assert_eq!(input, 10_000);
        assert_eq!(fit_output_limit(4096, 17_000, input), 4096);
        assert_eq!(fit_output_limit(8192, 17_000, input), 5938);
    }

    #[test]
    fn large_windows_keep_the_proportional_margin() {
        // 200k window, 100k input: margin 15k, room 85k, the model's 64k limit wins.
        assert_eq!(fit_output_limit(64_000, 200_000, 100_000), 64_000);
        // 200k window, 150k input: margin 22.5k → room 27.5k < 32768, so only 4096 is kept:
        // 200k − 150k − 4096 = 45904, capped at 32768.
        assert_eq!(fit_output_limit(64_000, 200_000, 150_000), 32_768);
        // 200k window, 120k input: margin 18k, room 62k.
        assert_eq!(fit_output_limit(128_000, 200_000, 120_000), 62_000);
    }

    #[test]
    fn a_16k_window_at_its_threshold_leaves_the_models_output_limit() {
        // The model: 16,384 tokens, `maxOutput` 2048, a context of 12,992.
        assert_eq!(fit_output_limit(2048, 16_384, 12_992), 2048);
        // Pi's fixed margin of 4,096 left it 1 token (16,384 − 12,992 − 4,096 < 0).
    }

    #[test]
    fn an_overfull_window_still_asks_for_one_token_and_an_unknown_window_changes_nothing() {
        assert_eq!(fit_output_limit(4096, 8_000, 50_000), 1);
        assert_eq!(fit_output_limit(4096, 0, 50_000), 4096);
        assert_eq!(fit_output_limit(0, 0, 0), 1);
    }

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn estimates_count_each_message_rounded_up_and_images_as_4800_characters() {
        let messages = [
            message(json!({"role": "user", "content": "abcd"})),
            message(
                json!({"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}]}),
            ),
        ];
        // system "abc" → 1, "abcd" → 2, image 4800/3.5 → 1372.
        assert_eq!(estimate_request_tokens("abc", &[], &messages), 1 + 2 + 1372);
    }

    #[test]
    fn usage_counts_only_while_no_later_message_comes_before_the_reply() {
        let usage = json!({"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1000,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
        let reply = |timestamp: i64| {
            message(
                json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                "api": "x", "provider": "p", "model": "m", "usage": usage, "stopReason": "stop",
                "timestamp": timestamp}),
            )
        };
        let after = message(json!({"role": "user", "content": "abcdefg", "timestamp": 30}));
        // The reply is the newest message before it: its usage stands for the prefix.
        let trusted = [
            message(json!({"role": "user", "content": "q", "timestamp": 10})),
            reply(20),
            after.clone(),
        ];
        assert_eq!(estimate_request_tokens("", &[], &trusted), 1000 + 2);
        // A summary stamped later than the reply sits before it: the usage is not trusted.
        let distrusted = [
            message(
                json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 5, "timestamp": 25}),
            ),
            reply(20),
            after.clone(),
        ];
        assert!(estimate_request_tokens("", &[], &distrusted) < 100);
        // A summary written in the reply's millisecond was written after it: not trusted either.
        let same_millisecond = [
            message(
                json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 5, "timestamp": 20}),
            ),
            reply(20),
            after,
        ];
        assert!(estimate_request_tokens("", &[], &same_millisecond) < 100);
    }
}
