//! QA F2 as attacks: a provider answering a redirect to another origin. reqwest drops only
//! `Authorization` and `Cookie` when it follows one, so Anthropic's `x-api-key`, Gemini's
//! `x-goog-api-key`, every `llm.headers` value and the conversation would reach the new host.
//! Model requests never follow a redirect: the answer is an error naming where it pointed.

use std::collections::BTreeMap;

use ctxkit_llm::{LlmError, LlmOptions, ModelClient};
use ctxkit_summarizer::Summarizer;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{KEY, client_with, options};

const HEADER_SECRET: &str = "team-header-SECRET777";

/// `model` at `provider`, with `llm.headers` holding a secret, no retries.
fn redirected_client(model: &str, provider: &MockServer) -> ModelClient {
    let options = LlmOptions {
        headers: BTreeMap::from([("x-team".to_owned(), HEADER_SECRET.to_owned())]),
        retry: ctxkit_llm::RetryPolicy {
            max_retries: 0,
            ..ctxkit_llm::RetryPolicy::default()
        },
        ..options(model, provider)
    };
    client_with(&options)
}

/// A provider that answers every request with `status` to `location`.
async fn redirecting(status: u16, location: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).insert_header("location", location))
        .mount(&server)
        .await;
    server
}

/// The host a redirect names: it records whatever reaches it and would answer anything.
async fn elsewhere() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    server
}

fn assert_redirect_error(error: &LlmError, status: u16, location: &str) {
    let LlmError::Redirected {
        status: got,
        location: named,
        ..
    } = error
    else {
        panic!("expected a redirect error, got {error:?}");
    };
    assert_eq!(*got, status);
    assert_eq!(named, location);
    let message = error.to_string();
    assert!(message.contains("does not follow"), "{message}");
    assert!(!error.is_retryable());
    assert!(
        !message.contains(KEY) && !message.contains(HEADER_SECRET),
        "{message}"
    );
}

#[tokio::test]
async fn no_key_header_or_conversation_follows_a_redirect_to_another_origin() {
    let elsewhere = elsewhere().await;
    for (model, path) in [
        ("anthropic/claude-sonnet-4-5", "/v1/messages"),
        (
            "google/gemini-2.5-flash",
            "/v1beta/models/x:streamGenerateContent",
        ),
        ("vllm/qwen3-coder", "/v1/chat/completions"),
    ] {
        for status in [301, 302, 303, 307, 308] {
            let location = format!("{}{path}", elsewhere.uri());
            let provider = redirecting(status, &location).await;
            let client = redirected_client(model, &provider);
            let cancel = CancellationToken::new();
            let mut sink = |_| {};
            let streamed = client
                .chat_streaming(&request(vec![user("my secret plan")]), &cancel, &mut sink)
                .await;
            let whole = client
                .chat(&request(vec![user("my secret plan")]), &cancel)
                .await;
            let summary = client.summarize(crate::common::request(None), cancel).await;
            let arrived = elsewhere.received_requests().await.unwrap();
            if let Some(first) = arrived.first() {
                panic!(
                    "{model}, {status}: {} request(s) followed the redirect, headers {:?}",
                    arrived.len(),
                    first.headers
                );
            }
            assert_redirect_error(&streamed.unwrap_err(), status, &location);
            assert_redirect_error(&whole.unwrap_err(), status, &location);
            let summary = summary.unwrap_err();
            assert!(summary.to_string().contains("does not follow"), "{summary}");
            assert_eq!(provider.received_requests().await.unwrap().len(), 3);
        }
    }
}

#[tokio::test]
async fn a_redirects_address_is_shown_without_its_credentials() {
    let provider = redirecting(307, "https://user:hunter2-pass@evil.example/v1/messages").await;
    let client = redirected_client("anthropic/claude-sonnet-4-5", &provider);
    let error = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(!message.contains("hunter2-pass"), "{message}");
    assert!(message.contains("evil.example/v1/messages"), "{message}");
    // A redirect that echoes the key it was sent shows it redacted too.
    let echo = redirecting(302, &format!("https://evil.example/?key={KEY}")).await;
    let error = redirected_client("anthropic/claude-sonnet-4-5", &echo)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(!error.to_string().contains(KEY), "{error}");
    assert!(
        error.brief().starts_with("302 redirect to"),
        "{}",
        error.brief()
    );
}
