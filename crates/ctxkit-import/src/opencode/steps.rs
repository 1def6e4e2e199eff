//! The steps of an OpenCode 1.x assistant message (its parts between `step-start`s): each is one
//! model call, so each becomes one reply with its own usage, stop reason and time.

use ctxkit_protocol::{
    AssistantMessage, ContentBlock, JsonObject, ThinkingContent, ToolCall, value_as_u64,
};
use serde_json::Value;

use super::blocks::{cost_of, usage_of};
use super::convert::{part_type, time_of};
use super::storage::str_of;

/// One reply per step: parts up to the next `step-start`.
pub(super) fn split_steps(parts: &[JsonObject]) -> Vec<Vec<&JsonObject>> {
    let mut steps: Vec<Vec<&JsonObject>> = vec![Vec::new()];
    for part in parts {
        if part_type(part) == "step-start" && steps.last().is_some_and(|step| !step.is_empty()) {
            steps.push(Vec::new());
        }
        if let Some(step) = steps.last_mut() {
            step.push(part);
        }
    }
    steps
}

/// When each step began (milliseconds): the message's creation for the first, then the earliest
/// time a step's parts record, at least a millisecond after the step before. A model call is
/// known by its reply's time and token counts (`ctxkit_session::session_spend`): steps sharing
/// the message's time were one call whenever their usage repeated.
pub(super) fn step_times(created: Option<i64>, steps: &[Vec<&JsonObject>]) -> Vec<Option<i64>> {
    let mut previous: Option<i64> = None;
    let mut times = Vec::with_capacity(steps.len());
    for (number, step) in steps.iter().enumerate() {
        let own = if number == 0 {
            created
        } else {
            step.iter().filter_map(|part| part_start(part)).min()
        };
        let time = match (own, previous) {
            (Some(own), Some(previous)) => Some(own.max(previous.saturating_add(1))),
            (None, Some(previous)) => Some(previous.saturating_add(1)),
            (own, None) => own,
        };
        previous = time;
        times.push(time);
    }
    times
}

/// When a part began: `time.start` of text and reasoning, `state.time.start` of a tool.
fn part_start(part: &JsonObject) -> Option<i64> {
    let time = part
        .get("time")
        .or_else(|| part.get("state")?.get("time"))?;
    time.get("start")
        .and_then(value_as_u64)
        .and_then(|ms| i64::try_from(ms).ok())
}

/// The assistant reply of one step; `last` (the message's last step) holds the message's cost
/// its other steps do not record.
pub(super) fn step_reply(
    info: &JsonObject,
    step: &[&JsonObject],
    last: Option<Option<f64>>,
) -> AssistantMessage {
    let mut content = Vec::new();
    let mut kept = Vec::new();
    let mut finish = None;
    let mut usage = None;
    for part in step {
        match part_type(part) {
            "text" => content.push(ContentBlock::text(str_of(part, "text").unwrap_or_default())),
            "reasoning" => content.push(ContentBlock::Thinking(ThinkingContent {
                thinking: str_of(part, "text").unwrap_or_default().to_owned(),
                thinking_signature: None,
                extra: JsonObject::new(),
            })),
            "tool" => {
                let state = part.get("state").and_then(Value::as_object);
                content.push(ContentBlock::ToolCall(ToolCall {
                    id: str_of(part, "callID").unwrap_or_default().to_owned(),
                    name: str_of(part, "tool").unwrap_or_default().to_owned(),
                    arguments: state
                        .and_then(|state| state.get("input"))
                        .filter(|input| input.is_object())
                        .cloned()
                        .unwrap_or_else(|| Value::Object(JsonObject::new())),
                    extra: JsonObject::new(),
                }));
            }
            "step-finish" => {
                finish = str_of(part, "reason").map(str::to_owned);
                usage = part
                    .get("tokens")
                    .and_then(Value::as_object)
                    .map(|tokens| usage_of(tokens, cost_of(part)));
                kept.push(Value::Object((*part).clone()));
            }
            _ => kept.push(Value::Object((*part).clone())),
        }
    }
    let calls_tools = content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let (stop, error_message) = step_stop(info, finish.as_deref(), last.is_some(), calls_tools);
    if usage.is_none()
        && let Some(cost_left) = last
    {
        usage = info
            .get("tokens")
            .and_then(Value::as_object)
            .map(|tokens| usage_of(tokens, cost_left));
    }
    let mut extra = JsonObject::new();
    if !kept.is_empty() {
        extra.insert("opencodeParts".to_owned(), Value::Array(kept));
    }
    AssistantMessage {
        content,
        api: None,
        provider: str_of(info, "providerID").map(str::to_owned),
        model: str_of(info, "modelID").map(str::to_owned),
        usage,
        stop_reason: Some(stop.to_owned()),
        error_message,
        timestamp: time_of(info, "created"),
        extra,
    }
}

/// A step's stop reason and error message: the message's error (on its last step), else the
/// step's finish reason (the message's on its last step), else whether it calls tools.
fn step_stop(
    info: &JsonObject,
    finish: Option<&str>,
    last: bool,
    calls_tools: bool,
) -> (&'static str, Option<String>) {
    let error = info
        .get("error")
        .and_then(Value::as_object)
        .filter(|_| last);
    match error {
        Some(error) => {
            let message = error
                .get("data")
                .and_then(|data| data.get("message"))
                .and_then(Value::as_str)
                .or_else(|| str_of(error, "name"))
                .map(str::to_owned);
            let stop = if str_of(error, "name") == Some("MessageAbortedError") {
                "aborted"
            } else {
                "error"
            };
            (stop, message)
        }
        None => {
            let stop = match finish.or(if last { str_of(info, "finish") } else { None }) {
                Some("length") => "length",
                Some("tool-calls") => "toolUse",
                _ if calls_tools => "toolUse",
                Some(_) | None => "stop",
            };
            (stop, None)
        }
    }
}
