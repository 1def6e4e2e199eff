//! Conversations with tools against a mock OpenAI-compatible server speaking Chat Completions:
//! a tool call, a final answer, retries, an overflow error kept raw, cancellation.

use std::time::Duration;

use ctxkit_llm::{ChatRequest, LlmError};
use ctxkit_overflow::is_context_overflow;
use ctxkit_protocol::{AgentMessage, ContentBlock};
use ctxkit_summarizer::ToolDefinition;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{KEY, client, sent_bodies};

const MODEL: &str = "vllm/qwen3-coder";

pub fn request(messages: Vec<AgentMessage>) -> ChatRequest {
    ChatRequest {
        system_prompt: "You are a coding agent.".into(),
        messages,
        tools: vec![ToolDefinition {
            name: "bash".into(),
            description: "Run a shell command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}},
                "required": ["command"]}),
        }],
        max_tokens: None,
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

pub fn user(text: &str) -> AgentMessage {
    serde_json::from_value(json!({"role": "user", "content": text, "timestamp": 1})).unwrap()
}

fn completion(message: serde_json::Value, finish: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen3-coder",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
    }))
}

#[tokio::test]
async fn a_tool_call_then_an_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_abc", "type": "function",
                 "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
            "tool_calls",
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "Two files."}),
            "stop",
        ))
        .mount(&server)
        .await;
    let client = client(MODEL, &server);
    let cancel = CancellationToken::new();
    let first = client
        .chat(&request(vec![user("what is here?")]), &cancel)
        .await
        .unwrap();
    assert_eq!(first.stop_reason.as_deref(), Some("toolUse"));
    assert_eq!(first.provider.as_deref(), Some("vllm"));
    assert_eq!(first.model.as_deref(), Some("qwen3-coder"));
    assert_eq!(first.api.as_deref(), Some("openai-completions"));
    assert!(first.timestamp.is_some());
    assert_eq!(first.usage.as_ref().unwrap().total_tokens, 940);
    // An unpriced model still carries a cost (zeros): Pi reads `usage.cost.total` unguarded.
    let cost = first.usage.as_ref().unwrap().cost.as_ref().unwrap();
    assert_eq!(cost.total, 0.0);
    let ContentBlock::ToolCall(call) = &first.content[0] else {
        panic!("{:?}", first.content)
    };
    assert_eq!(call.arguments, json!({"command": "ls"}));

    let result: AgentMessage = serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": "call_abc", "toolName": "bash",
        "content": [{"type": "text", "text": "a.rs\nb.rs"}], "isError": false, "timestamp": 3
    }))
    .unwrap();
    let conversation = vec![
        user("what is here?"),
        AgentMessage::Assistant(first),
        result,
    ];
    let second = client.chat(&request(conversation), &cancel).await.unwrap();
    assert_eq!(second.stop_reason.as_deref(), Some("stop"));
    assert!(matches!(&second.content[0], ContentBlock::Text(t) if t.text == "Two files."));

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["model"], "qwen3-coder");
    assert_eq!(bodies[0]["tools"][0]["function"]["name"], "bash");
    assert_eq!(
        bodies[1]["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"command\":\"ls\"}"
    );
    assert_eq!(
        bodies[1]["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "a.rs\nb.rs"})
    );
}

#[tokio::test]
async fn an_overflow_error_is_not_retried_and_its_reply_reads_as_an_overflow() {
    let server = MockServer::start().await;
    let body = json!({"error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}});
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(body))
        .expect(1)
        .mount(&server)
        .await;
    let client = client(MODEL, &server);
    let error = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.is_context_overflow(), "{error}");
    assert!(matches!(error, LlmError::Http { status: 400, .. }));
    let reply = client.failed_reply(&error);
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    let text = reply.error_message.as_deref().unwrap();
    assert!(
        text.starts_with("400 ") && text.contains("maximum context length is 8192 tokens"),
        "{text}"
    );
    assert_eq!(reply.provider.as_deref(), Some("vllm"));
    assert!(is_context_overflow(&reply, Some(8192)));
}

#[tokio::test]
async fn server_errors_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        ))
        .mount(&server)
        .await;
    let reply = client(MODEL, &server)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    assert_eq!(sent_bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn cancelling_gives_an_aborted_reply() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(
            completion(json!({"role": "assistant", "content": "late"}), "stop")
                .set_delay(Duration::from_secs(120)),
        )
        .mount(&server)
        .await;
    let client = client(MODEL, &server);
    let cancel = CancellationToken::new();
    let started = std::time::Instant::now();
    let sent = request(vec![user("hi")]);
    let (result, ()) = tokio::join!(
        client.chat(&sent, &cancel),
        crate::common::cancel_once_received(&server, &cancel),
    );
    let error = result.unwrap_err();
    // The answer takes two minutes: ending within 30 s (a loaded machine's margin) is the cancel.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(matches!(error, LlmError::Cancelled { .. }), "{error}");
    let reply = client.failed_reply(&error);
    assert_eq!(reply.stop_reason.as_deref(), Some("aborted"));
}

/// Issue 17, defect 8: an unreadable 200 answer echoing the key (plainly and JSON-escaped) was
/// printed verbatim; every answer is redacted before anything reads it.
#[tokio::test]
async fn an_unreadable_success_echoing_the_key_is_redacted() {
    let server = MockServer::start().await;
    let escaped: String = KEY
        .chars()
        .map(|character| format!("\\u{:04x}", u32::from(character)))
        .collect();
    let body = format!("<html>proxy says: {KEY} / {escaped}</html>");
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_string(body))
        .mount(&server)
        .await;
    let client = client(MODEL, &server);
    let error = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(matches!(error, LlmError::InvalidResponse { .. }), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!shown.contains(&escaped), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

/// A provider (or a proxy before it) whose error echoes the request's headers, retried until the
/// retries run out: the error that says how many attempts were made, and the failed reply the
/// session stores, name no key, plain or JSON-escaped.
#[tokio::test]
async fn a_retried_error_echoing_the_request_headers_names_no_key() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": format!(
        "upstream overloaded; request headers: authorization: Bearer {KEY}, x-api-key: {KEY}"
    )}, "echo": {"Authorization": format!("Bearer {KEY}")}});
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_json(body))
        .mount(&server)
        .await;
    let client = client(MODEL, &server);
    let error = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    let reply = client.failed_reply(&error);
    let shown = format!(
        "{error} {error:?} {} {}",
        error.brief(),
        serde_json::to_string(&reply).unwrap()
    );
    assert!(shown.contains("tried 3 times"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

/// QA r107: Anthropic refuses the reply's room, stating its exact count of the input
/// (`150000 + 64000 > 200000`). The input fits alone with a smaller reply: the request goes once
/// more with `max_tokens` 200,000 − 150,000 − 4,096 (the margin) = 45,904, and the reply comes back,
/// no compaction needed.
#[tokio::test]
async fn a_refused_reply_room_is_sent_again_with_the_room_the_count_leaves() {
    let server = MockServer::start().await;
    let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "input length and `max_tokens` exceed context limit: 150000 + 64000 > 200000, decrease input length or `max_tokens` and try again"}});
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(400).set_body_json(refusal))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "收到。"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 150000, "output_tokens": 5}
        })))
        .mount(&server)
        .await;
    let client = client("anthropic/claude-sonnet-4-5", &server);
    let reply = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    let bodies = sent_bodies(&server).await;
    let sent: Vec<_> = bodies
        .iter()
        .map(|body| body["max_tokens"].clone())
        .collect();
    assert_eq!(sent, [json!(64_000), json!(45_904)]);
}
