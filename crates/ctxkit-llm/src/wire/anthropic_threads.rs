//! Anthropic message threads (beta `message-threads-2026-08-12`) on the wire: a conversation
//! request opens a thread (`thread: {"type": "create"}`); the next one, when everything it would
//! send before its new messages is what the thread already holds, sends only those new messages
//! (`thread: {"type": "continue", "previous_message_id": …}`), without `system` and `tools` (the
//! thread keeps its own). What the thread holds is compared by a digest of what was sent:
//! the fixed request fields, the endpoint and the messages, cache breakpoints left out (they move
//! from one request to the next without changing what a message says). Token counts and prompt
//! caching are the same as with a full request; only the bytes sent change. Pure: no I/O.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The beta header value that turns threads on.
pub(crate) const BETA: &str = "message-threads-2026-08-12";

/// Rejections of a `continue` that a new thread fixes (Anthropic's `error.details.error_code`):
/// the thread expired, another request continued it first, or a fixed field changed.
const NEW_THREAD_ERRORS: &[&str] = &[
    "thread_not_found",
    "thread_already_continued",
    "thread_continue_in_flight",
    "thread_fingerprint_mismatch",
];

/// A digest of what a thread holds or of what a request would continue from.
pub(crate) type PrefixDigest = [u8; 32];

/// The two digests a `continue` is checked against: the fixed fields (endpoint, model, system
/// prompt, tools, thinking, betas…) and the messages. Kept apart so the log can say which changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadPrefix {
    pub settings: PrefixDigest,
    pub messages: PrefixDigest,
}

/// What a failed thread request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ThreadRejection {
    /// The thread cannot be continued (the code says why): resend as a new thread.
    NewThread(String),
    /// The endpoint cannot thread this request or does not know `thread`: resend in full without
    /// one, and send no more threads to it in this conversation.
    Unsupported(String),
    /// Not about the thread: passed on.
    Other,
}

/// The digests of `body` (a full conversation request to `url`, with `beta` its `anthropic-beta`
/// header) with its first `count` messages.
pub(crate) fn prefix(url: &str, beta: Option<&str>, body: &Value, count: usize) -> ThreadPrefix {
    let fixed = json!([
        url,
        beta,
        body.get("model"),
        body.get("system"),
        body.get("tools"),
        body.get("thinking"),
        body.get("output_config"),
        body.get("tool_choice"),
        body.get("context_management"),
    ]);
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| &messages[..count.min(messages.len())])
        .unwrap_or(&[]);
    ThreadPrefix {
        settings: digest(&without_breakpoints(&fixed)),
        messages: digest(&without_breakpoints(&Value::Array(messages.to_vec()))),
    }
}

/// How many messages `body` holds.
pub(crate) fn message_count(body: &Value) -> usize {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// `body` opening a new thread.
pub(crate) fn create(body: &Value) -> Value {
    let mut body = body.clone();
    body["thread"] = json!({"type": "create"});
    body
}

/// `body` continuing the thread after the reply `previous_message_id`: only the messages after
/// the first `held` (which the thread holds), no `system`, no `tools`.
pub(crate) fn continuation(body: &Value, held: usize, previous_message_id: &str) -> Value {
    let mut body = body.clone();
    if let Some(object) = body.as_object_mut() {
        object.remove("system");
        object.remove("tools");
    }
    if let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) {
        messages.drain(..held.min(messages.len()));
    }
    body["thread"] = json!({"type": "continue", "previous_message_id": previous_message_id});
    body
}

/// What the `status` and `body` of a rejected thread request ask for.
pub(crate) fn rejection(status: u16, body: &str) -> ThreadRejection {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let code = parsed
        .as_ref()
        .and_then(|value| value.pointer("/error/details/error_code"))
        .and_then(Value::as_str);
    match code {
        Some(code) if NEW_THREAD_ERRORS.contains(&code) => {
            ThreadRejection::NewThread(code.to_owned())
        }
        Some("thread_unsupported_request") => {
            ThreadRejection::Unsupported("thread_unsupported_request".to_owned())
        }
        Some(_) => ThreadRejection::Other,
        // An endpoint that does not know the field rejects it without a code ("thread: Extra
        // inputs are not permitted").
        None if status == 400 && body.contains("thread") => {
            ThreadRejection::Unsupported(format!("{status} without a code"))
        }
        None => ThreadRejection::Other,
    }
}

/// The `anthropic-beta` value with the threads beta added to `configured` (the request's own).
pub(crate) fn beta_header(configured: Option<&str>) -> String {
    super::provider_compaction::beta_header(configured, &[BETA])
}

fn digest(value: &Value) -> PrefixDigest {
    Sha256::digest(value.to_string().as_bytes()).into()
}

/// `value` without `cache_control` fields, at any depth.
fn without_breakpoints(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| key.as_str() != "cache_control")
                .map(|(key, value)| (key.clone(), without_breakpoints(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(messages: Value) -> Value {
        json!({"model": "claude", "max_tokens": 100, "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "read"}], "messages": messages})
    }

    #[test]
    fn moving_a_breakpoint_keeps_the_prefix_and_changing_text_does_not() {
        let first = body(
            json!([{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]),
        );
        let second = body(json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]}
        ]));
        let url = "https://api.anthropic.com/v1/messages";
        assert_eq!(prefix(url, None, &first, 1), prefix(url, None, &second, 1));
        let edited = body(json!([{"role": "user", "content": [{"type": "text", "text": "hj"}]}]));
        let (before, after) = (prefix(url, None, &first, 1), prefix(url, None, &edited, 1));
        assert_eq!(before.settings, after.settings);
        assert_ne!(before.messages, after.messages);
    }

    #[test]
    fn tools_endpoint_and_betas_are_part_of_the_settings_digest() {
        let base = body(json!([]));
        let url = "https://api.anthropic.com/v1/messages";
        let mut other_tools = base.clone();
        other_tools["tools"] = json!([{"name": "write"}]);
        assert_ne!(
            prefix(url, None, &base, 0).settings,
            prefix(url, None, &other_tools, 0).settings
        );
        assert_ne!(
            prefix(url, None, &base, 0).settings,
            prefix("https://gateway/v1/messages", None, &base, 0).settings
        );
        assert_ne!(
            prefix(url, None, &base, 0).settings,
            prefix(url, Some(BETA), &base, 0).settings
        );
    }

    #[test]
    fn a_continuation_sends_only_the_new_messages_without_system_and_tools() {
        let full = body(
            json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]),
        );
        let next = continuation(&full, 2, "msg_1");
        assert_eq!(next["messages"], json!([{"role": "user", "content": "c"}]));
        assert!(next.get("system").is_none() && next.get("tools").is_none());
        assert_eq!(
            next["thread"],
            json!({"type": "continue", "previous_message_id": "msg_1"})
        );
        assert_eq!(create(&full)["thread"], json!({"type": "create"}));
        assert_eq!(create(&full)["messages"], full["messages"]);
    }

    #[test]
    fn rejections_are_told_apart_by_their_code() {
        let coded = |code: &str| {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "no",
                "details": {"error_code": code}}})
            .to_string()
        };
        assert_eq!(
            rejection(404, &coded("thread_not_found")),
            ThreadRejection::NewThread("thread_not_found".into())
        );
        assert_eq!(
            rejection(400, &coded("thread_fingerprint_mismatch")),
            ThreadRejection::NewThread("thread_fingerprint_mismatch".into())
        );
        assert!(matches!(
            rejection(400, &coded("thread_unsupported_request")),
            ThreadRejection::Unsupported(_)
        ));
        assert!(matches!(
            rejection(
                400,
                r#"{"error":{"message":"thread: Extra inputs are not permitted"}}"#
            ),
            ThreadRejection::Unsupported(_)
        ));
        assert_eq!(
            rejection(400, r#"{"error":{"message":"prompt is too long"}}"#),
            ThreadRejection::Other
        );
        assert_eq!(rejection(500, "thread broke"), ThreadRejection::Other);
        assert_eq!(rejection(400, "not json, no code"), ThreadRejection::Other);
    }
}
