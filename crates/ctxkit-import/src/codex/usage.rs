//! Which reply each model call's usage belongs to. Codex writes an `event_msg` `token_count`
//! when a model response completes, with the call's `info.last_token_usage` and the thread's
//! running `info.total_token_usage`; it writes the same event again when only rate limits change
//! (totals unchanged), and with `info: null` before it knows any usage. Versions of 2025 wrote the
//! event before the response's items, later ones after them and before the tool outputs.
//!
//! So the reply items of one response (reasoning, messages, tool calls) form a run that a tool
//! output, a user message or a compaction ends, and a new count belongs to the run it falls in
//! (the run written before it, when that has none yet) or else to the next run. The usage goes on
//! the run's last reply, as Pi records one usage per call. A count no run takes (a call that wrote
//! no reply, such as a turn aborted before any item) is left out; a run no count reaches (an
//! aborted response) has none, and the count of all zeros Codex writes after a compaction is no
//! call. No call is counted twice. Facts and sources:
//! `docs/import-formats.md`.

use std::collections::HashMap;

use ctxkit_protocol::{JsonObject, value_as_u64};
use serde_json::Value;

use super::legacy::{Line, RolloutLine, classify};
use crate::pricing::UsageCounts;
use crate::source::str_field;

/// The usage of each call, by the key of the line holding the last reply of its response.
#[derive(Debug, Default)]
pub(super) struct CallUsage {
    by_line: HashMap<String, UsageCounts>,
    /// The reply lines of the response being read: the key of the last, and its count if seen.
    run: Option<(String, Option<UsageCounts>)>,
    /// A count seen while no run could take it: it belongs to the next run.
    waiting: Option<UsageCounts>,
    /// The last non-null count's `info`, to tell a new call from a repeated event.
    last_info: Option<Value>,
}

impl CallUsage {
    /// Reads the next line of the rollout, in file order.
    pub(super) fn observe(&mut self, line: &RolloutLine<'_>) {
        match classify(&line.record) {
            Line::Item(payload) if is_reply(payload) => self.reply(&line.key),
            Line::Item(_) | Line::Compacted(_) => self.end_run(),
            Line::Event(payload) if str_field(payload, "type") == Some("token_count") => {
                self.count(payload);
            }
            Line::Event(_)
            | Line::Meta(_)
            | Line::TurnContext(_)
            | Line::State
            | Line::Communication(_)
            | Line::TokenUsage(_)
            | Line::Bookkeeping(_)
            | Line::Unknown(_) => {}
        }
    }

    /// Closes the last response, once every line was observed.
    pub(super) fn finish(&mut self) {
        self.end_run();
    }

    /// The usage of the call whose last reply is on the line `key`.
    pub(super) fn take(&mut self, key: &str) -> Option<UsageCounts> {
        self.by_line.remove(key)
    }

    fn reply(&mut self, key: &str) {
        match &mut self.run {
            Some((last, _)) => key.clone_into(last),
            None => self.run = Some((key.to_owned(), self.waiting.take())),
        }
    }

    fn count(&mut self, payload: &JsonObject) {
        let Some(info) = payload.get("info").filter(|info| info.is_object()) else {
            return;
        };
        let info_counts = |info: &Value| {
            (
                info.get("total_token_usage").cloned(),
                info.get("last_token_usage").cloned(),
            )
        };
        if self.last_info.as_ref().map(info_counts) == Some(info_counts(info)) {
            return;
        }
        self.last_info = Some(info.clone());
        // After a compaction Codex writes a count of all zeros (the thread's new start): no call.
        let Some(counts) = info
            .get("last_token_usage")
            .and_then(call_counts)
            .filter(|counts| *counts != UsageCounts::default())
        else {
            return;
        };
        if let Some((_, slot @ None)) = &mut self.run {
            *slot = Some(counts);
        } else {
            self.end_run();
            self.waiting = Some(counts);
        }
    }

    fn end_run(&mut self) {
        if let Some((key, Some(counts))) = self.run.take() {
            self.by_line.insert(key, counts);
        }
    }
}

/// Whether a `ResponseItem` becomes a reply of the model.
fn is_reply(payload: &JsonObject) -> bool {
    match str_field(payload, "type") {
        Some("message") => str_field(payload, "role") == Some("assistant"),
        Some(kind) => REPLY_ITEMS.contains(&kind),
        None => false,
    }
}

const REPLY_ITEMS: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
];

/// OpenAI's usage as Pi splits it: `input_tokens` includes the cached ones, so the uncached
/// input is the difference; `output_tokens` already includes reasoning.
fn call_counts(usage: &Value) -> Option<UsageCounts> {
    let usage = usage.as_object()?;
    let number = |key: &str| usage.get(key).and_then(value_as_u64);
    let input = number("input_tokens")?;
    let cache_read = number("cached_input_tokens").unwrap_or(0).min(input);
    Some(UsageCounts {
        input: input - cache_read,
        output: number("output_tokens").unwrap_or(0),
        cache_read,
        cache_write: 0,
    })
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::*;

    fn observe_all(records: &[Value]) -> CallUsage {
        let mut usage = CallUsage::default();
        for (line, record) in records.iter().enumerate() {
            usage.observe(&RolloutLine {
                line,
                key: line.to_string(),
                record: Cow::Owned(record.as_object().unwrap().clone()),
            });
        }
        usage.finish();
        usage
    }

    fn count(input: u64, total: u64) -> Value {
        json!({"type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": input, "cached_input_tokens": 0, "output_tokens": u64::from(input > 0)},
            "total_token_usage": {"total_tokens": total}}}})
    }

    fn item(kind: &str) -> Value {
        json!({"type": "response_item", "payload": {"type": kind, "call_id": "c"}})
    }

    #[test]
    fn a_repeat_a_null_and_the_zeros_after_a_compaction_count_no_call() {
        let mut usage = observe_all(&[
            item("function_call"),
            count(10, 11),
            count(10, 11),
            item("function_call_output"),
            json!({"type": "event_msg", "payload": {"type": "token_count", "info": null}}),
            count(20, 32),
            item("function_call"),
            json!({"type": "compacted", "payload": {"message": "summary"}}),
            count(0, 40),
            item("reasoning"),
        ]);
        assert_eq!(usage.take("0").map(|counts| counts.input), Some(10));
        // The count before the call goes on it; the zeros after the compaction go nowhere.
        assert_eq!(usage.take("6").map(|counts| counts.input), Some(20));
        assert!(usage.by_line.is_empty());
        assert_eq!(usage.waiting, None);
    }

    #[test]
    fn cached_input_is_taken_out_of_the_input() {
        let counts = call_counts(&json!({"input_tokens": 100, "cached_input_tokens": 60,
            "output_tokens": 7, "reasoning_output_tokens": 5}));
        assert_eq!(
            counts,
            Some(UsageCounts {
                input: 40,
                output: 7,
                cache_read: 60,
                cache_write: 0
            })
        );
    }
}
