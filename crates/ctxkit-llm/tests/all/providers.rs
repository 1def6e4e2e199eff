//! One normal answer and one documented error body per provider, asserting what was sent.

use ctxkit_llm::LlmError;
use ctxkit_protocol::Usage;
use ctxkit_summarizer::Summarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{KEY, client, client_with, options, request, sent_bodies};

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input + output + cache_read + cache_write,
        ..Usage::default()
    }
}

#[tokio::test]
async fn anthropic_messages() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "## Goal"},
                {"type": "text", "text": "Ship it"}
            ],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 120, "output_tokens": 30,
                      "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("anthropic/claude-sonnet-4-5", &server);
    assert_eq!(client.name(), "anthropic/claude-sonnet-4-5");
    assert!(client.supports_reasoning());
    let response = client
        .summarize(request(Some("low")), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "## Goal\nShip it");
    // Summaries are priced as replies are (issue 41), at the model's list price here.
    let mut recorded = response.usage.unwrap();
    let cost = recorded.cost.take().unwrap();
    assert!(cost.total > 0.0, "{cost:?}");
    assert_eq!(recorded, usage(120, 30, 7, 3));
    let body = &sent_bodies(&server).await[0];
    // A one-off summary is sent without prompt caching, as Pi sends it.
    assert_eq!(body["system"], "You summarize.");
    assert!(!body.to_string().contains("cache_control"));
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "<conversation>hello</conversation>"
    );
    assert_eq!(body["max_tokens"], 3048);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
}

#[tokio::test]
async fn anthropic_overflow_error_is_kept_raw_and_not_retried() {
    let server = MockServer::start().await;
    let error_body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(error_body))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("anthropic/claude-sonnet-4-5", &server);
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
    assert!(error.is_context_overflow());
    assert!(matches!(&error, LlmError::Http { status: 400, body, .. } if body == error_body));
    let message = error.to_string();
    // The body stays raw in the error (overflow is judged on it); people read the message.
    assert_eq!(
        message,
        "Provider `anthropic` returned HTTP 400: prompt is too long: 213462 tokens > 200000 maximum"
    );
    assert!(!message.contains(KEY) && !format!("{error:?} {client:?}").contains(KEY));
}

#[tokio::test]
async fn openai_chat_completions_through_a_base_url() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("x-title", "ctxkit"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "openai/gpt-oss-120b",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Summary text"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                      "prompt_tokens_details": {"cached_tokens": 40}}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let mut options = options("groq/openai/gpt-oss-120b", &server);
    options.headers.insert("X-Title".into(), "ctxkit".into());
    let client = client_with(&options);
    let response = client
        .summarize(request(Some("medium")), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "Summary text");
    let mut recorded = response.usage.unwrap();
    assert!(recorded.cost.take().is_some());
    // Pi 1.6.0 writes the reasoning tokens of every Chat Completions reply, 0 when none reported.
    let mut expected = usage(60, 20, 40, 0);
    expected.extra.insert("reasoning".into(), json!(0));
    assert_eq!(recorded, expected);
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["model"], "openai/gpt-oss-120b");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You summarize."})
    );
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["reasoning_effort"], "medium");
}

#[tokio::test]
async fn openai_chat_without_reasoning_support_sends_no_effort() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "length", "message": {"content": "cut"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1000}
        })))
        .mount(&server)
        .await;
    let client = client("groq/llama-3.3-70b-versatile", &server);
    assert!(!client.supports_reasoning());
    // A summary cut at the token cap is a failure (Pi 0.87), not a summary.
    let error = client
        .summarize(request(Some("high")), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("token cap"), "{}", error.message);
    assert!(
        sent_bodies(&server).await[0]
            .get("reasoning_effort")
            .is_none()
    );
}

#[tokio::test]
async fn openai_responses() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "First", "annotations": []},
                             {"type": "output_text", "text": "Second", "annotations": []}]}
            ],
            "usage": {"input_tokens": 500, "input_tokens_details": {"cached_tokens": 100},
                      "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 20},
                      "total_tokens": 550}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("openai/gpt-5-mini", &server);
    let response = client
        .summarize(request(Some("minimal")), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "First\nSecond");
    let mut recorded = response.usage.unwrap();
    assert!(recorded.cost.take().is_some());
    assert_eq!(recorded, usage(400, 50, 100, 0));
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["instructions"], "You summarize.");
    assert_eq!(body["input"][0]["content"][0]["type"], "input_text");
    assert_eq!(body["max_output_tokens"], 1000);
    assert_eq!(body["reasoning"], json!({"effort": "minimal"}));
    assert_eq!(body["store"], false);
}

#[tokio::test]
async fn openai_responses_context_error() {
    let server = MockServer::start().await;
    let error_body = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(error_body))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("openai/gpt-4o", &server);
    let error = client
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error
            .message
            .starts_with("Provider `openai` returned HTTP 400: ")
    );
    assert!(error.message.contains("exceeds the context window"));
}

#[tokio::test]
async fn gemini_generate_content() {
    // Summaries stream: Gemini's server-sent-events endpoint, text continued across chunks.
    let server = MockServer::start().await;
    let chunks = [
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "thinking...", "thought": true}, {"text": "Line one\n"}]}, "index": 0}],
            "modelVersion": "gemini-2.5-flash"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Line two"}]},
                "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 40,
                              "thoughtsTokenCount": 10, "cachedContentTokenCount": 50,
                              "totalTokenCount": 350},
            "modelVersion": "gemini-2.5-flash"}),
    ];
    let body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\r\n\r\n"))
        .collect();
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:streamGenerateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("google/gemini-2.5-flash", &server);
    let response = client
        .summarize(request(Some("high")), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "Line one\nLine two");
    let mut recorded = response.usage.unwrap();
    assert!(recorded.cost.take().is_some());
    assert_eq!(recorded, usage(250, 50, 50, 0));
    let body = &sent_bodies(&server).await[0];
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"],
        "You summarize."
    );
    assert_eq!(body["contents"][0]["role"], "user");
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 25_576);
    assert_eq!(
        body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        24_576
    );
    let url = server.received_requests().await.unwrap()[0].url.to_string();
    assert!(!url.contains(KEY));
    assert!(url.ends_with("?alt=sse"), "{url}");
}

#[tokio::test]
async fn gemini_overflow_error() {
    let server = MockServer::start().await;
    let error_body = r#"{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}"#;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(error_body))
        .expect(1)
        .mount(&server)
        .await;
    let client = client("google/gemini-2.5-flash", &server);
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
    assert!(error.is_context_overflow());
}

#[tokio::test]
async fn a_silent_overflow_fails_the_summary() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "garbage"}}],
            "usage": {"prompt_tokens": 131_073, "completion_tokens": 5}
        })))
        .mount(&server)
        .await;
    let client = client("groq/llama-3.3-70b-versatile", &server);
    let error = client
        .summarize(request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "Provider `groq` silently overflowed the context window: 131073 input tokens for a window of 131072"
    );
}

#[tokio::test]
async fn byte_size_and_bodyless_overflows_are_recognised() {
    for (status, body) in [(
        413,
        r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
    )] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(status).set_body_string(body))
            .expect(1)
            .mount(&server)
            .await;
        let client = client("openrouter/cerebras/qwen-3-235b", &server);
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
        assert!(error.is_context_overflow(), "{status} {body:?}");
    }
}

#[tokio::test]
async fn summary_limits_are_clamped_to_the_model_and_tool_calls_fail() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"content": null,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        })))
        .mount(&server)
        .await;
    // llama-3.3-70b-versatile answers at most 32768 tokens (the model table).
    let client = client("groq/llama-3.3-70b-versatile", &server);
    let mut asked = request(None);
    asked.max_tokens = Some(1_000_000);
    let error = client
        .summarize(asked, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("call a tool"), "{}", error.message);
    assert_eq!(sent_bodies(&server).await[0]["max_tokens"], 32_768);
}

/// Pi 1.6: a summary request without a limit of its own gets the model's output limit fitted into
/// the window: input at 3.5 characters per token, a margin of max(4096, 15% of the input), and
/// below 32768 tokens of room only the 4096 margin.
#[tokio::test]
async fn summaries_without_a_limit_fit_the_models_output_limit_into_its_window() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "summary"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        })))
        .mount(&server)
        .await;
    // llama-3.3-70b-versatile: a window of 131072 tokens, at most 32768 out (the model table).
    let client = client("groq/llama-3.3-70b-versatile", &server);
    let mut small = request(None);
    small.max_tokens = None;
    client
        .summarize(small, CancellationToken::new())
        .await
        .unwrap();
    // A small request: the model's own limit.
    assert_eq!(sent_bodies(&server).await[0]["max_tokens"], 32_768);
    let mut large = request(None);
    large.max_tokens = None;
    // "You summarize." is 4 tokens, the text 399994 / 3.5 = 114284: input 114288. The 15% margin
    // (17144) leaves no room, so only 4096 is kept: 131072 − 114288 − 4096 = 12688.
    large.user_text = "x".repeat(399_994);
    client
        .summarize(large, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(sent_bodies(&server).await[1]["max_tokens"], 12_688);
}

/// Pi 1.6: any HTTP 413 is a request-size overflow, from any provider and whatever its body says;
/// a 413 mentioned inside another status's body is not.
#[test]
fn any_413_is_an_overflow_but_not_a_413_inside_a_body() {
    let http = |provider: &str, status: u16, body: &str| LlmError::Http {
        provider: provider.into(),
        status,
        body: body.into(),
        retry_after: None,
        retried: ctxkit_llm::Retried::NONE,
    };
    for provider in ["github-copilot", "openai", "my-proxy"] {
        assert!(
            http(provider, 413, r#"{"message":"failed to parse request"}"#).is_context_overflow()
        );
        assert!(http(provider, 413, "").is_context_overflow());
    }
    assert!(
        !http("openai", 400, r#"{"error":"upstream said 413: too big"}"#).is_context_overflow()
    );
    assert!(!http("openai", 400, "").is_context_overflow());
    assert!(http("cerebras", 400, "").is_context_overflow());
    assert!(
        http(
            "litellm",
            400,
            "ContextWindowExceededError: context window exceeded"
        )
        .is_context_overflow()
    );
    assert!(
        http(
            "zai",
            400,
            r#"{"code":"1261","message":"Prompt exceeds max length"}"#
        )
        .is_context_overflow()
    );
}
