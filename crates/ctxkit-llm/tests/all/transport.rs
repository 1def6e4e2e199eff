//! Retries, Retry-After, timeouts and cancellation.

use std::time::{Duration, Instant};

use ctxkit_llm::{LlmError, RetryPolicy};
use ctxkit_summarizer::Summarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{client, client_with, options, request, without_duration};

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
    assert_eq!(
        without_duration(&error.message),
        "Provider `anthropic` returned HTTP 529: Overloaded; tried 3 times over _ s"
    );
}

/// A provider that answers 429 (then 503) every time: the error a person finally reads says how
/// many attempts were made and over how long, after the provider's own message, as the error
/// returned (a summary's, `compact`'s) and as the failed reply a chat stores and shows.
#[tokio::test]
async fn an_error_after_its_retries_says_how_often_and_how_long_it_was_tried() {
    for (status, body, message) in [
        (
            429,
            r#"{"error":{"message":"Rate limit reached for requests","type":"requests"}}"#,
            "Rate limit reached for requests",
        ),
        (503, "", "(no body)"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(status).set_body_string(body))
            .expect(3)
            .mount(&server)
            .await;
        let client = client("openai/gpt-4o", &server);
        let expected =
            format!("Provider `openai` returned HTTP {status}: {message}; tried 3 times over _ s");
        let summary = client
            .summarize(request(None), CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(without_duration(&summary.message), expected);
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(status).set_body_string(body))
            .expect(3)
            .mount(&server)
            .await;
        let sent = crate::chat::request(vec![crate::chat::user("hi")]);
        let error = client
            .chat(&sent, &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(without_duration(&error.to_string()), expected);
        // The stored reply keeps the provider's `<status> <body>` first (overflow detection reads
        // it), and shows as the error does.
        let reply = client.failed_reply(&error);
        let stored = reply.error_message.unwrap();
        assert!(stored.starts_with(&format!("{status} ")), "{stored}");
        let shown = ctxkit_llm::reply_failure("openai", &stored);
        assert_eq!(shown.message, error.to_string());
    }
}

/// QA r97: a `Retry-After` above the cap showed the raw JSON body and "the allowed 60s". The
/// error gives the provider's message as other HTTP errors do, and names the setting that allows a
/// longer wait; the failed reply a chat stores says the same.
#[tokio::test]
async fn a_retry_after_above_the_cap_gives_the_message_and_names_the_setting() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "90")
                .set_body_string(
                    r#"{"error": {"message": "Rate limit reached", "type": "server_error"}}"#,
                ),
        )
        .expect(1)
        .mount(&server)
        .await;
    let client = client("openai/gpt-4o", &server);
    let sent = crate::chat::request(vec![crate::chat::user("hi")]);
    let error = client
        .chat(&sent, &CancellationToken::new())
        .await
        .unwrap_err();
    let expected = "Provider `openai` returned HTTP 429: Rate limit reached; it asked to retry \
        after 90 s, more than the 5 s `retry.provider.maxRetryDelayMs` allows (raise it, or 0 for \
        no cap, to wait that long)";
    assert_eq!(error.to_string(), expected);
    let reply = client.failed_reply(&error);
    assert_eq!(reply.error_message.as_deref(), Some(expected));
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
