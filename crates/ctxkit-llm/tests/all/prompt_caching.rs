//! Anthropic prompt caching against a mock Messages server: breakpoints on the system prompt, the
//! last tool and the last block of the last user message by default (text, image or tool result),
//! `ttl: "1h"` for `long`, none for `none`, and never more than the API's four.

use ctxkit_llm::{
    AnthropicCompaction, AnthropicContextEditing, CacheRetention, ChatRequest, LlmOptions,
};
use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client_with, options, sent_bodies};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

fn reply() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Done."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 5,
                  "cache_creation_input_tokens": 2048, "cache_read_input_tokens": 4096}
    }))
}

fn assistant(text: &str) -> AgentMessage {
    serde_json::from_value(
        json!({"role": "assistant", "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
        "stopReason": "stop", "timestamp": 2}),
    )
    .unwrap()
}

fn user_with_image(text: &str) -> AgentMessage {
    serde_json::from_value(json!({"role": "user", "content": [
        {"type": "text", "text": text},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], "timestamp": 3}))
    .unwrap()
}

/// The request body the mock got for `chat_request`, sent with `settings`.
async fn sent(settings: LlmOptions, chat_request: ChatRequest, server: &MockServer) -> Value {
    let client = client_with(&settings);
    let answer = client
        .chat(&chat_request, &CancellationToken::new())
        .await
        .unwrap();
    let usage = answer.usage.unwrap();
    assert_eq!((usage.cache_write, usage.cache_read), (2048, 4096));
    sent_bodies(server).await.pop().unwrap()
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(reply())
        .mount(&server)
        .await;
    server
}

/// Every `cache_control` value in `value`, in document order.
/// Three breakpoints in `body`, each asking for the one-hour lifetime.
fn assert_three_hour_breakpoints(body: &Value) {
    let found = breakpoints(body);
    assert_eq!(found.len(), 3, "{body}");
    assert!(
        found
            .iter()
            .all(|control| *control == json!({"type": "ephemeral", "ttl": "1h"})),
        "{body}"
    );
}

fn breakpoints(value: &Value) -> Vec<Value> {
    match value {
        Value::Object(object) => object
            .iter()
            .flat_map(|(key, inner)| match key.as_str() {
                "cache_control" => vec![inner.clone()],
                _ => breakpoints(inner),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(breakpoints).collect(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => Vec::new(),
    }
}

fn conversation() -> ChatRequest {
    request(vec![
        user("Where is the parser?"),
        assistant("In src/parse.rs."),
        user("Fix it, please."),
    ])
}

#[tokio::test]
async fn short_by_default_on_the_system_prompt_the_last_tool_and_the_last_user_block() {
    let server = server().await;
    let body = sent(options(MODEL, &server), conversation(), &server).await;
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["system"][0]["text"], "You are a coding agent.");
    assert_eq!(body["system"][0]["cache_control"], ephemeral);
    assert_eq!(body["tools"][0]["cache_control"], ephemeral);
    assert_eq!(body["messages"][2]["content"][0]["text"], "Fix it, please.");
    assert_eq!(
        body["messages"][2]["content"][0]["cache_control"],
        ephemeral
    );
    assert!(breakpoints(&body["messages"][0]).is_empty());
    assert!(breakpoints(&body["messages"][1]).is_empty());
    assert_eq!(breakpoints(&body).len(), 3);
}

#[tokio::test]
async fn long_asks_for_an_hour() {
    let server = server().await;
    let mut settings = options(MODEL, &server);
    settings.anthropic_cache_retention = CacheRetention::Long;
    let body = sent(settings, conversation(), &server).await;
    assert_three_hour_breakpoints(&body);
}

#[tokio::test]
async fn a_request_may_ask_for_the_hour_unless_the_model_caches_nothing() {
    let server = server().await;
    let mut asked = conversation();
    asked.cache_retention = Some(CacheRetention::Long);
    let body = sent(options(MODEL, &server), asked.clone(), &server).await;
    assert_three_hour_breakpoints(&body);
    let mut settings = options(MODEL, &server);
    settings.anthropic_cache_retention = CacheRetention::None;
    let body = sent(settings, asked, &server).await;
    assert!(breakpoints(&body).is_empty(), "{body}");
}

#[tokio::test]
async fn none_sends_no_breakpoint_and_the_plain_system_prompt() {
    let server = server().await;
    let mut settings = options(MODEL, &server);
    settings.anthropic_cache_retention = CacheRetention::None;
    let body = sent(settings, conversation(), &server).await;
    assert!(breakpoints(&body).is_empty(), "{body}");
    assert_eq!(body["system"], "You are a coding agent.");
}

#[tokio::test]
async fn an_image_takes_the_breakpoint_and_editing_and_compaction_add_none() {
    let server = server().await;
    let mut settings = options(MODEL, &server);
    settings.anthropic_context_editing = Some(AnthropicContextEditing::default());
    settings.anthropic_compaction = Some(AnthropicCompaction::default());
    let chat_request = request(vec![
        user("Where is the parser?"),
        assistant("In src/parse.rs."),
        user_with_image("Does it match this screenshot?"),
    ]);
    let body = sent(settings, chat_request, &server).await;
    assert!(body.get("context_management").is_some());
    let last = &body["messages"][2]["content"];
    assert_eq!(last[1]["type"], "image");
    assert_eq!(last[1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(last[0].get("cache_control").is_none());
    assert_eq!(breakpoints(&body).len(), 3);
}

/// The cost of the cache writes of a reply to `conversation()` sent with `retention`, the server
/// answering with `usage` (whole, or streamed), and the hour-long writes the reply records.
async fn cache_write_cost(
    retention: CacheRetention,
    usage: Value,
    streamed: bool,
) -> (f64, Option<Value>) {
    let server = MockServer::start().await;
    let answer = if streamed {
        let events = [
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": usage}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}}),
            json!({"type": "message_stop"}),
        ];
        crate::chat_streaming::stream_response(crate::chat_streaming::sse(&events))
    } else {
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn", "stop_sequence": null, "usage": usage}))
    };
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(answer)
        .mount(&server)
        .await;
    let mut settings = options(MODEL, &server);
    settings.anthropic_cache_retention = retention;
    let client = client_with(&settings);
    let cancel = CancellationToken::new();
    let reply = if streamed {
        client
            .chat_streaming(&conversation(), &cancel, &mut |_| {})
            .await
    } else {
        client.chat(&conversation(), &cancel).await
    };
    let usage = reply.unwrap().usage.unwrap();
    let cost = usage.cost.unwrap().cache_write;
    (cost, usage.extra.get("cacheWrite1h").cloned())
}

/// Anthropic bills a five-minute cache write at 1.25 times the input price and an hour-long one
/// at twice it (sonnet: $3.75 and $6 per million): by the split the API reports, else by the
/// lifetime the request asked for.
#[tokio::test]
async fn cache_writes_are_priced_by_their_lifetime() {
    let close = |cost: f64, expected: f64| (cost - expected).abs() < 1e-12;
    let plain =
        json!({"input_tokens": 12, "output_tokens": 5, "cache_creation_input_tokens": 2048});
    let (cost, long) = cache_write_cost(CacheRetention::Long, plain.clone(), false).await;
    assert!(close(cost, 2048.0 * 6.0 / 1e6), "{cost}");
    assert_eq!(long, Some(json!(2048)));
    let (cost, long) = cache_write_cost(CacheRetention::Long, plain.clone(), true).await;
    assert!(close(cost, 2048.0 * 6.0 / 1e6), "{cost}");
    assert_eq!(long, Some(json!(2048)));
    let (cost, long) = cache_write_cost(CacheRetention::Short, plain, false).await;
    assert!(close(cost, 2048.0 * 3.75 / 1e6), "{cost}");
    assert_eq!(long, None);
    let split = json!({"input_tokens": 12, "output_tokens": 5, "cache_creation_input_tokens": 2048,
        "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 1048}});
    for streamed in [false, true] {
        let (cost, long) = cache_write_cost(CacheRetention::Long, split.clone(), streamed).await;
        assert!(close(cost, (1000.0 * 3.75 + 1048.0 * 6.0) / 1e6), "{cost}");
        assert_eq!(long, Some(json!(1048)));
    }
}
