//! Checking a message a client appends against the protocol types before it is stored: a known
//! role, and the fields readers of that role depend on (Pi reads them unguarded). The store keeps
//! unknown roles and loose shapes it finds in files, but a server never writes them.

use ctxkit_engine::Engine;
use ctxkit_protocol::AgentMessage;
use serde_json::Value;

use crate::errors::engine_error;
use crate::{MethodError, codes};

/// The message as the protocol type, or why it is not one.
pub(crate) fn validate_message(value: Value) -> Result<AgentMessage, String> {
    let Some(object) = value.as_object() else {
        return Err("`message` must be an object".to_owned());
    };
    let Some(role) = object
        .get("role")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return Err("`message.role` must be a string".to_owned());
    };
    let required: &[(&str, Shape)] = match role.as_str() {
        "user" => &[("content", Shape::Content), ("timestamp", Shape::Timestamp)],
        "assistant" => &[("content", Shape::Array), ("timestamp", Shape::Timestamp)],
        "toolResult" => &[
            ("toolCallId", Shape::String),
            ("content", Shape::Array),
            ("timestamp", Shape::Timestamp),
        ],
        "bashExecution" => &[("command", Shape::String), ("output", Shape::String)],
        "custom" => &[("customType", Shape::String), ("content", Shape::Content)],
        "branchSummary" => &[("summary", Shape::String), ("fromId", Shape::String)],
        "compactionSummary" => &[("summary", Shape::String), ("tokensBefore", Shape::Count)],
        other => {
            return Err(format!(
                "unknown role `{other}`; expected user, assistant, toolResult, bashExecution, \
                 custom, branchSummary or compactionSummary"
            ));
        }
    };
    for (field, shape) in required {
        let article = if role.starts_with(['a', 'e', 'i', 'o']) {
            "an"
        } else {
            "a"
        };
        match object.get(*field) {
            None => {
                return Err(format!(
                    "{article} `{role}` message needs `{field}` ({})",
                    shape.describe()
                ));
            }
            Some(found) if !shape.matches(found) => {
                let shown: String = found.to_string().chars().take(40).collect();
                return Err(format!(
                    "the `{field}` of {article} `{role}` message must be {}, not `{shown}`",
                    shape.describe()
                ));
            }
            Some(_) => {}
        }
    }
    if role == "assistant" {
        check_usage(object.get("usage"))?;
    }
    crate::validate_blocks::check_blocks(object, &role)?;
    let message: AgentMessage = serde_json::from_value(value)
        .map_err(|error| format!("`message` is not a valid `{role}` message: {error}"))?;
    if matches!(message, AgentMessage::Unknown(_)) {
        return Err(format!("`message` is not a valid `{role}` message"));
    }
    if let AgentMessage::User(user) = &message
        && user.content.is_blank()
    {
        // `view.get` hands the view on as a provider accepts it, and Anthropic refuses it.
        return Err(
            "a `user` message needs text or an image: its `content` is empty (a provider \
             refuses an empty user message)"
                .to_owned(),
        );
    }
    Ok(message)
}

/// Refuses a tool result that answers no open call at the session's leaf
/// ([`ctxkit_session::Session::answers_open_call`]): ctxkit's view would leave it out, but Pi
/// 1.6.0 sends every stored result, so the file would no longer continue in Pi (the provider
/// refuses a result without its call). Other messages pass.
pub(crate) async fn check_tool_result_pairs(
    engine: &Engine,
    message: &AgentMessage,
) -> Result<(), MethodError> {
    let AgentMessage::ToolResult(result) = message else {
        return Ok(());
    };
    let answers = engine
        .with_session(|session| session.answers_open_call(&result.tool_call_id))
        .await
        .map_err(|error| engine_error(error.into()))?;
    if answers {
        return Ok(());
    }
    let shown: String = result.tool_call_id.chars().take(80).collect();
    Err(MethodError::new(
        codes::INVALID_PARAMS,
        format!(
            "invalid params: `message.toolCallId` `{shown}` answers no open tool call: a tool \
             result follows the assistant message holding its call (only other results between), \
             once; append that message first"
        ),
    ))
}

/// The token counts of an assistant's `usage`: each present one a whole number, 0 or more
/// (sums saturate; the file's reader keeps what it can and reads anything else as 0, so `"15000"` or `-5` was
/// stored as no tokens and the threshold check lost the provider's count without a word).
fn check_usage(usage: Option<&Value>) -> Result<(), String> {
    let Some(usage) = usage.filter(|usage| !usage.is_null()) else {
        return Ok(());
    };
    let Some(fields) = usage.as_object() else {
        return Err("`message.usage` must be an object of token counts".to_owned());
    };
    const COUNTS: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
    for name in COUNTS {
        let Some(found) = fields.get(name).filter(|found| !found.is_null()) else {
            continue;
        };
        if found.as_u64().is_none() {
            let shown: String = found.to_string().chars().take(40).collect();
            return Err(format!(
                "`message.usage.{name}` must be a whole number of tokens, 0 or more, not `{shown}`"
            ));
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Shape {
    String,
    /// A whole number, 0 or more (a token count).
    Count,
    /// Milliseconds since 1970, as a number whose integral part a double holds exactly.
    Timestamp,
    Array,
    /// A string or an array of content blocks.
    Content,
}

impl Shape {
    fn matches(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Count => value.as_u64().is_some(),
            Self::Timestamp => {
                ctxkit_protocol::value_as_i64(value).is_some_and(|millis| millis >= 0)
            }
            Self::Array => value.is_array(),
            Self::Content => value.is_string() || value.is_array(),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::String => "a string",
            Self::Count => "a whole number, 0 or more",
            Self::Timestamp => "a number of milliseconds since 1970, from 0 to below 9e15",
            Self::Array => "an array of content blocks",
            Self::Content => "a string or an array of content blocks",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// QA (2026-12-05): unreadable counts were stored as 0 without a word.
    #[test]
    fn an_assistant_usage_must_hold_token_counts() {
        let reply = |usage: Value| json!({"role": "assistant", "content": [], "timestamp": 1, "usage": usage});
        for usage in [
            json!({"input": "15000"}),
            json!({"input": -5}),
            json!({"output": 1e30}),
            json!({"input": 1.5}),
            json!([1, 2]),
        ] {
            let refused = validate_message(reply(usage.clone())).unwrap_err();
            assert!(refused.contains("`message.usage"), "{usage}: {refused}");
        }
        for usage in [
            json!({"input": 15000, "output": 20}),
            json!(null),
            json!({}),
        ] {
            assert!(validate_message(reply(usage.clone())).is_ok(), "{usage}");
        }
    }

    /// QA (2026-12-07): an empty user message was stored and handed on by `view.get`, which a
    /// client sends as it is (Anthropic refuses it).
    #[test]
    fn a_user_message_needs_text_or_an_image() {
        let user = |content: Value| json!({"role": "user", "content": content, "timestamp": 1});
        for blank in [
            json!(""),
            json!("  \n"),
            json!([]),
            json!([{"type": "text", "text": " "}]),
            // QA (2026-12-07): an image without data was stored, where blank text was refused.
            json!([{"type": "image", "data": "", "mimeType": "image/png"}]),
        ] {
            let refused = validate_message(user(blank.clone())).unwrap_err();
            assert!(
                refused.contains("needs text or an image"),
                "{blank}: {refused}"
            );
        }
        let image = json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}]);
        for content in [json!("fix it"), image] {
            assert!(validate_message(user(content.clone())).is_ok(), "{content}");
        }
    }

    #[test]
    fn refuses_what_the_attack_stored() {
        for bad in [
            json!({"role": "bogus"}),
            json!({"role": 5}),
            json!({"role": "user"}),
            json!({"role": "user", "content": "x"}),
            json!({"role": "user", "content": 5, "timestamp": 1}),
            json!({"role": "assistant", "content": "x", "timestamp": 1}),
            json!("user"),
        ] {
            assert!(validate_message(bad.clone()).is_err(), "{bad}");
        }
        let needs = validate_message(json!({"role": "assistant", "timestamp": 1})).unwrap_err();
        assert!(
            needs.starts_with("an `assistant` message needs `content`"),
            "{needs}"
        );
        let needs = validate_message(json!({"role": "user", "timestamp": 1})).unwrap_err();
        assert!(
            needs.starts_with("a `user` message needs `content`"),
            "{needs}"
        );
        // A fraction of a millisecond (Python's `time.time() * 1000`) is cut off, never lost.
        let fraction =
            json!({"role": "user", "content": "hi", "timestamp": 1_796_356_873_858.717_8});
        let AgentMessage::User(user) = validate_message(fraction).unwrap() else {
            panic!("a user message");
        };
        assert_eq!(user.timestamp, Some(1_796_356_873_858));
        let far = validate_message(json!({"role": "user", "content": "hi", "timestamp": 1e20}));
        assert!(far.unwrap_err().contains("below 9e15"));
        // Sweep 9: out of range read as if the field were missing, and a negative time was stored.
        for (timestamp, shown) in [(json!(9e15), "9000000000000000.0"), (json!(-5), "-5")] {
            let refused =
                validate_message(json!({"role": "user", "content": "hi", "timestamp": timestamp}))
                    .unwrap_err();
            assert!(
                refused.starts_with("the `timestamp` of a `user` message must be")
                    && refused.ends_with(&format!("not `{shown}`")),
                "{refused}"
            );
        }
        let good = json!({"role": "user", "content": "hi", "timestamp": 1});
        assert!(matches!(validate_message(good), Ok(AgentMessage::User(_))));
    }
}
