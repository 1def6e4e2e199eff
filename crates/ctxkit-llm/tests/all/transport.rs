//! Retries, Retry-After, timeouts and cancellation.

use std::time::{Duration, Instant};

use ctxkit_llm::{LlmError, RetryPolicy};
use ctxkit_summarizer::Summarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{client, client_with, options, request};

fn ok_chat() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "done"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}
    }))
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_string(r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ok_chat())
        .mount(&server)
        .await;
    let client = client("openrouter/some/model", &server);
    let response = client
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "done");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_exhausted() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(529).set_body_string(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ))
        .expect(3)
        .mount(&server)
        .await;
    let client = client("anthropic/claude-haiku-4-5", &server);
    let error = client
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error
            .message
            .starts_with("Provider `anthropic` returned HTTP 529: "),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("anthropic/claude-haiku-4-5", &server);
    let error = client
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("HTTP 401") && error.message.contains("invalid x-api-key"));
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ok_chat().set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let mut options = options("ollama/qwen3:8b", &server);
    options.timeout = Some(Duration::from_millis(100));
    options.retry = RetryPolicy::none();
    let client = client_with(&options);
    let request = ctxkit_llm::CompletionRequest {
        system_prompt: "s".into(),
        user_text: "u".into(),
        max_tokens: 10,
        reasoning: None,
    };
    let error = client
        .complete(&request, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Timeout { .. }), "{error:?}");
}

#[tokio::test]
async fn cancellation_drops_the_request_promptly() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ok_chat().set_delay(Duration::from_secs(120)))
        .mount(&server)
        .await;
    let client = client("ollama/qwen3:8b", &server);
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let (result, ()) = tokio::join!(
        client.summarize(request(None), cancel.clone()),
        crate::common::cancel_once_received(&server, &cancel),
    );
    let error = result.unwrap_err();
    // The answer takes two minutes: ending within 30 s (a loaded machine's margin) is the cancel.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(error.message, "Request to provider `ollama` was cancelled");
}

/// Gemini's 429 body (as the API sends it, no `Retry-After` header).
fn gemini_quota(delay: &str) -> ResponseTemplate {
    ResponseTemplate::new(429).set_body_json(json!({"error": {"code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                 "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                {"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}}))
}

/// Gemini says how long to wait in the body (`google.rpc.RetryInfo`'s `retryDelay`): the retry
/// waits that long, and a wait above the longest allowed fails at once, as a `Retry-After` does.
#[tokio::test]
async fn a_gemini_429_is_retried_after_its_retry_delay() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(gemini_quota("0.3s"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let done = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]},
        "finishReason": "STOP", "index": 0}]});
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(format!("data: {done}\n\n"), "text/event-stream"),
        )
        .mount(&server)
        .await;
    let gemini = client("google/gemini-2.5-flash", &server);
    let mut delays = Vec::new();
    let mut sink = |delta: ctxkit_llm::ChatDelta| {
        if let ctxkit_llm::ChatDelta::Retrying(notice) = delta {
            delays.push(notice.delay);
        }
    };
    let started = Instant::now();
    let reply = gemini
        .chat_streaming(
            &crate::chat::request(vec![crate::chat::user("hi")]),
            &CancellationToken::new(),
            &mut sink,
        )
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    assert_eq!(delays, [Duration::from_millis(300)]);
    // Longer than the longest wait (5 s here): no retry.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(gemini_quota("120s"))
        .expect(1)
        .mount(&server)
        .await;
    let error = client("google/gemini-2.5-flash", &server)
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("120"), "{}", error.message);
}
