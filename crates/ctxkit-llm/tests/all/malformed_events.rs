//! A stream event whose data is not valid JSON ends the stream as an `error` reply that says so
//! and keeps what arrived before it, in every wire format: skipping it would store a reply with a
//! piece missing (text, or a fragment of a tool call's arguments) as complete. What providers
//! legitimately send besides their events (comments, `event:` names, empty data, pings, Chat
//! Completions' `[DONE]`) is still read past.

use serde_json::{Value, json};
use wiremock::MockServer;
use wiremock::matchers::{method, path};

use crate::chat_streaming::{sse, stream, stream_response, texts};

/// A `data:` line whose JSON was cut in the middle (QA r97: a proxy dropped the rest of it).
const CUT_EVENT: &str = "data: {\"id\": \"c\", \"choices\": [{\"delta\": {\"content\": \"oops\n\n";

/// The stream of `events` with the cut event after the first `before` of them.
fn with_cut_event(events: &[Value], before: usize) -> String {
    let (head, tail) = events.split_at(before);
    format!("{}{CUT_EVENT}{}", sse(head), sse(tail))
}

async fn answer(server: &MockServer, endpoint: &str, body: String) {
    wiremock::Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(stream_response(body))
        .mount(server)
        .await;
}

/// Streams `body` from `endpoint` to `model`; asserts the reply is an error naming the bad event
/// and holding only `kept`.
async fn assert_cut_at_the_bad_event(model: &str, endpoint: &str, body: String, kept: &str) {
    let server = MockServer::start().await;
    answer(&server, endpoint, body).await;
    let (reply, shown) = stream(model, &server).await;
    assert_eq!(
        reply.stop_reason.as_deref(),
        Some("error"),
        "{model}: {reply:?}"
    );
    let error = reply.error_message.clone().unwrap_or_default();
    assert!(error.contains("not valid JSON"), "{model}: {error}");
    assert!(error.contains("cut short"), "{model}: {error}");
    assert!(error.contains("oops"), "{model}: {error}");
    assert_eq!(texts(&shown).concat(), kept, "{model}");
    let text: String = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ctxkit_protocol::ContentBlock::Text(text) => Some(text.text.as_str()),
            ctxkit_protocol::ContentBlock::Thinking(_)
            | ctxkit_protocol::ContentBlock::ToolCall(_)
            | ctxkit_protocol::ContentBlock::Image(_)
            | ctxkit_protocol::ContentBlock::Unknown(_) => None,
        })
        .collect();
    assert_eq!(text, kept, "{model}");
}

fn chat_chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "qwen3-coder",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn chat_events() -> Vec<Value> {
    vec![
        chat_chunk(json!({"role": "assistant", "content": "one "}), Value::Null),
        chat_chunk(json!({"content": "two "}), Value::Null),
        chat_chunk(json!({"content": "three"}), Value::Null),
        chat_chunk(json!({}), json!("stop")),
    ]
}

#[tokio::test]
async fn a_chat_completions_event_that_is_not_json_cuts_the_reply() {
    let body = format!("{}data: [DONE]\n\n", with_cut_event(&chat_events(), 2));
    assert_cut_at_the_bad_event("vllm/qwen3-coder", "/chat/completions", body, "one two ").await;
}

fn anthropic_events() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "one two "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "three"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]
}

#[tokio::test]
async fn an_anthropic_event_that_is_not_json_cuts_the_reply() {
    let body = with_cut_event(&anthropic_events(), 3);
    assert_cut_at_the_bad_event(
        "anthropic/claude-sonnet-4-5",
        "/v1/messages",
        body,
        "one two ",
    )
    .await;
}

fn responses_events() -> Vec<Value> {
    vec![
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "one two "}),
        json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "three"}),
        json!({"type": "response.completed", "sequence_number": 4, "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": 20, "output_tokens": 3, "total_tokens": 23}}}),
    ]
}

#[tokio::test]
async fn a_responses_event_that_is_not_json_cuts_the_reply() {
    let body = with_cut_event(&responses_events(), 3);
    assert_cut_at_the_bad_event("openai/gpt-5-mini", "/responses", body, "one two ").await;
}

fn gemini_events() -> Vec<Value> {
    let part = |text: &str| json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]});
    vec![
        part("one two "),
        part("three"),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 3, "totalTokenCount": 15}}),
    ]
}

#[tokio::test]
async fn a_gemini_event_that_is_not_json_cuts_the_reply() {
    let body = with_cut_event(&gemini_events(), 1);
    assert_cut_at_the_bad_event(
        "google/gemini-2.5-flash",
        "/models/gemini-2.5-flash:streamGenerateContent",
        body,
        "one two ",
    )
    .await;
}

/// What servers send between events is read past: comments (OpenRouter's `: OPENROUTER
/// PROCESSING`), empty `data:` lines, a `ping` whose data is not JSON, and a `[DONE]` in a format
/// that does not end with it.
#[tokio::test]
async fn keep_alives_comments_and_empty_data_are_read_past_in_every_format() {
    let noise = ": OPENROUTER PROCESSING\n\ndata:\n\ndata: \n\nevent: ping\ndata: ping\n\n";
    let formats: [(&str, &str, Vec<Value>, &str); 4] = [
        (
            "vllm/qwen3-coder",
            "/chat/completions",
            chat_events(),
            "data: [DONE]\n\n",
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "/v1/messages",
            anthropic_events(),
            "",
        ),
        (
            "openai/gpt-5-mini",
            "/responses",
            responses_events(),
            "data: [DONE]\n\n",
        ),
        (
            "google/gemini-2.5-flash",
            "/models/gemini-2.5-flash:streamGenerateContent",
            gemini_events(),
            "",
        ),
    ];
    for (model, endpoint, events, end) in formats {
        let (head, tail) = events.split_at(1);
        let body = format!("{noise}{}{noise}{}{end}", sse(head), sse(tail));
        let server = MockServer::start().await;
        answer(&server, endpoint, body).await;
        let (reply, shown) = stream(model, &server).await;
        assert_eq!(
            reply.stop_reason.as_deref(),
            Some("stop"),
            "{model}: {reply:?}"
        );
        assert_eq!(texts(&shown).concat(), "one two three", "{model}");
    }
}
