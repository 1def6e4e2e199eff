//! Attacks: a provider, or a proxy in front of one, that echoes the key it was sent back inside a
//! streamed reply — in its text, its thinking, a tool call's arguments, split across two events,
//! in an error event, or in a whole answer to a streaming request. The key reaches neither the
//! reply (which a session stores and later requests send again) nor what the screen is shown.
//! Each failed before replies were redacted. The model's own words are not second-guessed: a URL
//! with a password or a `Bearer` line it writes in code stays as written (a whole reply lost the
//! password until then).

use std::collections::BTreeMap;

use ctxkit_llm::{ChatDelta, ModelClient};
use ctxkit_protocol::{AssistantMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::chat_streaming::{sse, stream, stream_response};
use crate::common::{KEY, client, client_with, options};

/// Code a model writes that looks like credentials but holds none of the user's.
const MODEL_CODE: &str =
    "DATABASE_URL=postgres://app:hunter2pw@localhost/db\nAuthorization: Bearer ${API_TOKEN}";

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 1}}})
}

fn text_delta(index: u64, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})
}

fn message_end(stop: &str) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
}

async fn anthropic_stream(events: Vec<Value>) -> (AssistantMessage, Vec<ChatDelta>) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(sse(&events)))
        .mount(&server)
        .await;
    stream("anthropic/claude-sonnet-4-5", &server).await
}

/// The key, in any of its forms, is nowhere in `reply` (serialized as a session stores it) or in
/// `shown`.
fn assert_no_key(reply: &AssistantMessage, shown: &[ChatDelta]) {
    let stored = serde_json::to_string(reply).unwrap();
    assert!(
        !stored.contains("SECRET"),
        "the session would hold the key: {stored}"
    );
    let screen = format!("{shown:?}");
    assert!(
        !screen.contains("SECRET"),
        "the screen showed the key: {screen}"
    );
    let pieces: String = shown
        .iter()
        .map(|delta| match delta {
            ChatDelta::Text(text) | ChatDelta::Thinking(text) => text.as_str(),
            ChatDelta::ToolCall { .. } | ChatDelta::BlockEnd | ChatDelta::Retrying(_) => "",
        })
        .collect();
    assert!(
        !pieces.contains("SECRET"),
        "the screen showed the key in pieces: {pieces}"
    );
}

#[tokio::test]
async fn a_key_echoed_in_text_thinking_and_a_tool_call_is_redacted() {
    let escaped = KEY.replace('-', "\\u002d");
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": format!("The header said {KEY}.")}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        text_delta(1, &format!("Your key is {KEY}.")),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": format!("{{\"command\": \"echo {escaped}\"}}")}}),
        json!({"type": "content_block_stop", "index": 2}),
    ];
    events.extend(message_end("tool_use"));
    let (reply, shown) = anthropic_stream(events).await;
    assert_no_key(&reply, &shown);
    assert!(
        matches!(&reply.content[1], ContentBlock::Text(t) if t.text == "Your key is <redacted>.")
    );
    let ContentBlock::ToolCall(call) = &reply.content[2] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments, json!({"command": "echo <redacted>"}));
}

#[tokio::test]
async fn a_key_split_across_two_events_is_neither_stored_nor_shown() {
    let (head, tail) = KEY.split_at(9);
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        text_delta(0, &format!("Key: {head}")),
        text_delta(0, &format!("{tail} done")),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    events.extend(message_end("end_turn"));
    let (reply, shown) = anthropic_stream(events).await;
    assert_no_key(&reply, &shown);
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "Key: <redacted> done"));
}

#[tokio::test]
async fn a_key_in_an_error_event_is_redacted() {
    let events = vec![
        message_start(),
        json!({"type": "error", "error": {"type": "authentication_error",
            "message": format!("invalid x-api-key {KEY}; sent Authorization: Bearer abcdEFGH12345678")}}),
    ];
    let (reply, shown) = anthropic_stream(events).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_no_key(&reply, &shown);
    let error = reply.error_message.unwrap_or_default();
    assert!(error.contains("invalid x-api-key <redacted>"), "{error}");
    assert!(!error.contains("abcdEFGH12345678"), "{error}");
}

#[tokio::test]
async fn a_whole_answer_to_a_stream_request_is_redacted() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": format!("echo: {KEY}")}, "finish_reason": "stop"}]})))
        .mount(&server)
        .await;
    let (reply, shown) = stream("vllm/qwen3-coder", &server).await;
    assert_no_key(&reply, &shown);
}

#[tokio::test]
async fn code_that_looks_like_credentials_is_kept_as_the_model_wrote_it() {
    let arguments = json!({"path": ".env.example", "content": MODEL_CODE}).to_string();
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        text_delta(0, MODEL_CODE),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "write", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": arguments}}),
        json!({"type": "content_block_stop", "index": 1}),
    ];
    events.extend(message_end("tool_use"));
    let (reply, _) = anthropic_stream(events).await;
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == MODEL_CODE));
    let ContentBlock::ToolCall(call) = &reply.content[1] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments["content"], MODEL_CODE);
}

#[tokio::test]
async fn a_whole_reply_keeps_the_models_code_and_loses_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": format!("{MODEL_CODE}\n{KEY}")},
            "finish_reason": "stop"}]})))
        .mount(&server)
        .await;
    let reply = client("vllm/qwen3-coder", &server)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(&reply.content[0], ContentBlock::Text(t) if t.text == format!("{MODEL_CODE}\n<redacted>")),
        "{:?}",
        reply.content
    );
}

/// A client that also sends a gateway token (`Bearer …`) and a title header.
fn client_with_headers(server: &MockServer) -> ModelClient {
    let mut options = options("vllm/qwen3-coder", server);
    options.headers = BTreeMap::from([
        (
            "X-Gateway-Token".to_owned(),
            "Bearer gw-tok-SECRET-4455".to_owned(),
        ),
        ("X-Title".to_owned(), "ctxkit-demo-app".to_owned()),
    ]);
    options.retry.max_retries = 0;
    client_with(&options)
}

#[tokio::test]
async fn a_header_token_echoed_alone_is_redacted_from_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": "token gw-tok-SECRET-4455 is not valid for ctxkit-demo-app"}}),
        ))
        .mount(&server)
        .await;
    let error = client_with_headers(&server)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(!shown.contains("ctxkit-demo-app"), "{shown}");
}

#[tokio::test]
async fn a_reply_loses_the_header_token_and_keeps_what_other_headers_say() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "gw-tok-SECRET-4455 from ctxkit-demo-app"},
            "finish_reason": "stop"}]})))
        .mount(&server)
        .await;
    let reply = client_with_headers(&server)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "<redacted> from ctxkit-demo-app"),
        "{:?}",
        reply.content
    );
}

#[tokio::test]
async fn a_summary_and_a_failed_summary_lose_the_key() {
    use ctxkit_summarizer::Summarizer;
    let server = MockServer::start().await;
    let mut summary = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        text_delta(0, &format!("## Goal\nCall the gateway with {KEY}.")),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    summary.extend(message_end("end_turn"));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(sse(&summary)))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(sse(&[
            message_start(),
            json!({"type": "error", "error": {"type": "api_error", "message": format!("bad key {KEY}")}}),
        ])))
        .mount(&server)
        .await;
    let client = client("anthropic/claude-sonnet-4-5", &server);
    let summary = client
        .summarize(crate::common::request(None), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.text, "## Goal\nCall the gateway with <redacted>.");
    let error = client
        .summarize(crate::common::request(None), CancellationToken::new())
        .await
        .unwrap_err();
    let shown = format!("{} {error:?}", error.message);
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(shown.contains("bad key <redacted>"), "{shown}");
}
