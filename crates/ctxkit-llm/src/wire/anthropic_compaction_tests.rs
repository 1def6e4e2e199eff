//! On-demand compaction: the request's parameter and beta, the response in both wire shapes, the
//! blocks refused, and the replay rule.

use ctxkit_protocol::{JsonObject, MessageContent, UserMessage};

use super::*;
use crate::wire::test_support::config;

const MODEL: &str = "anthropic/claude-sonnet-4-5";

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.to_owned()),
        timestamp: None,
        extra: JsonObject::new(),
    })
}

/// The view's compaction summary carrying `block` from `model`.
fn carrying(block: Value, model: &str) -> AgentMessage {
    let mut message = user("The conversation history before this point was compacted");
    if let AgentMessage::User(user) = &mut message {
        user.extra.insert(
            ON_DEMAND_COMPACTION_FIELD.to_owned(),
            json!({"provider": "anthropic", "api": "anthropic-messages", "model": model, "block": block}),
        );
    }
    message
}

fn chat(messages: Vec<AgentMessage>) -> ChatRequest {
    ChatRequest {
        system_prompt: "sys".into(),
        messages,
        tools: Vec::new(),
        max_tokens: None,
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

fn beta(wire: &WireRequest) -> Option<&str> {
    wire.headers
        .iter()
        .find(|(name, _)| name == "anthropic-beta")
        .map(|(_, value)| value.as_str())
}

#[test]
fn the_request_is_the_conversation_with_the_parameter_and_the_beta() {
    let config = config(MODEL);
    let wire = build(&config, &chat(vec![user("fix the parser")]));
    assert_eq!(wire.body["compaction"], json!({"type": "summarize"}));
    assert_eq!(wire.body["messages"][0]["role"], "user");
    assert_eq!(beta(&wire), Some(ON_DEMAND_BETA));
}

#[test]
fn a_json_response_gives_the_block_as_received() {
    let block =
        json!({"type": "compaction", "content": "Fixed the parser.", "encrypted_content": "sig"});
    let body = json!({"id": "m", "type": "message", "role": "assistant", "content": [block],
        "stop_reason": "compaction", "usage": {"input_tokens": 900, "output_tokens": 40}});
    let reply = parse(&body.to_string()).unwrap();
    assert_eq!(reply.summary, "Fixed the parser.");
    assert_eq!(reply.block, block);
    assert_eq!((reply.usage.input, reply.usage.output), (900, 40));
}

#[test]
fn a_streamed_response_is_put_together_from_its_deltas() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 700, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "Fixed "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "the parser.", "encrypted_content": "sig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "compaction"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ];
    let text: String = events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect();
    let reply = parse(&text).unwrap();
    assert_eq!(
        reply.block,
        json!({"type": "compaction", "content": "Fixed the parser.", "encrypted_content": "sig"})
    );
    assert_eq!((reply.usage.input, reply.usage.output), (700, 30));
}

#[test]
fn answers_that_are_not_one_readable_block_are_refused() {
    let answer =
        |content: Value, stop: &str| json!({"content": content, "stop_reason": stop}).to_string();
    let good = json!({"type": "compaction", "content": "S"});
    // An ordinary reply, two blocks, a block of another type, an empty summary, an oversized one.
    assert!(parse(&answer(json!([{"type": "text", "text": "hi"}]), "end_turn")).is_err());
    assert!(parse(&answer(json!([good, good]), "compaction")).is_err());
    assert!(
        parse(&answer(
            json!([{"type": "text", "content": "S"}]),
            "compaction"
        ))
        .is_err()
    );
    assert!(
        parse(&answer(
            json!([{"type": "compaction", "content": " "}]),
            "compaction"
        ))
        .is_err()
    );
    let huge = "x".repeat(MAX_BLOCK_BYTES);
    let error = parse(&answer(
        json!([{"type": "compaction", "content": huge}]),
        "compaction",
    ))
    .unwrap_err();
    assert!(error.contains("larger than"), "{error}");
    assert!(parse("not json").is_err());
    assert!(parse(&answer(json!([good]), "compaction")).is_ok());
}

#[test]
fn the_block_goes_back_first_to_its_own_model_only() {
    let block =
        json!({"type": "compaction", "content": "Fixed the parser.", "encrypted_content": "sig"});
    let request = chat(vec![
        carrying(block.clone(), "claude-sonnet-4-5"),
        user("next"),
    ]);
    let own = config(MODEL);
    let wire = anthropic_tools::build(&own, &request);
    assert_eq!(
        wire.body["messages"][0],
        json!({"role": "assistant", "content": [block]})
    );
    assert_eq!(wire.body["messages"][1]["role"], "user");
    assert!(beta(&wire).is_some_and(|value| value.contains(ON_DEMAND_BETA)));

    // Another Anthropic model reads the summary text, and no beta is asked for.
    let other = config("anthropic/claude-opus-4-1");
    let wire = anthropic_tools::build(&other, &request);
    assert_eq!(wire.body["messages"][0]["role"], "user");
    assert!(
        wire.body["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("compacted")
    );
    assert_eq!(beta(&wire), None);
}

#[test]
fn a_hostile_block_in_a_file_is_not_sent() {
    let own = config(MODEL);
    for block in [
        json!({"type": "tool_use", "id": "x", "name": "bash", "input": {}}),
        json!({"type": "compaction"}),
        json!("compaction"),
        json!({"type": "compaction", "content": "x".repeat(MAX_BLOCK_BYTES)}),
    ] {
        let wire = anthropic_tools::build(&own, &chat(vec![carrying(block, "claude-sonnet-4-5")]));
        assert_eq!(wire.body["messages"][0]["role"], "user");
    }
}

#[test]
fn a_reply_right_after_the_block_joins_its_message() {
    let block = json!({"type": "compaction", "content": "S"});
    let reply = crate::wire::conversation::reply(
        vec![crate::wire::conversation::text_block(
            "Going on.".into(),
            JsonObject::new(),
        )],
        ctxkit_protocol::Usage::default(),
        ctxkit_overflow::StopReason::Stop,
        None,
    );
    let request = chat(vec![
        carrying(block.clone(), "claude-sonnet-4-5"),
        AgentMessage::Assistant(reply),
        user("next"),
    ]);
    let wire = anthropic_tools::build(&config(MODEL), &request);
    let messages = wire.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0]["content"],
        json!([block, {"type": "text", "text": "Going on."}])
    );
}
