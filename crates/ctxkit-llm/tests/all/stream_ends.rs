//! A stream is complete only when its format's documented end arrived: Anthropic's `message_delta`
//! (the stop reason) and `message_stop`, Chat Completions' `finish_reason` or `[DONE]`, Responses'
//! `response.completed`, Gemini's `finishReason`. A stream that ends cleanly without it (a proxy
//! or a server that stopped mid-reply) is an `error` reply that keeps what arrived, so the agent
//! never runs the calls of a cut reply. A Gemini prompt blocked by its filter ends the stream with
//! its reason.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use crate::chat_streaming::{sse, stream, stream_response, texts};

async fn answer(server: &MockServer, endpoint: &str, body: String) {
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(stream_response(body))
        .mount(server)
        .await;
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "qwen3-coder",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn call_chunks(index: u64, id: &str, command: &str) -> Vec<Value> {
    vec![
        chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": "bash", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": index, "function": {"arguments": format!("{{\"command\": \"{command}\"}}")}}]}),
            Value::Null,
        ),
    ]
}

#[tokio::test]
async fn a_chat_completions_stream_cut_between_two_calls_is_an_error_reply() {
    let server = MockServer::start().await;
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    events.extend(call_chunks(0, "call_0", "touch PWNED"));
    events.extend(call_chunks(1, "call_1", "echo second").into_iter().take(1));
    // No `finish_reason`, no `[DONE]`: the body just ends.
    answer(&server, "/chat/completions", sse(&events)).await;
    let (reply, _) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    let error = reply.error_message.unwrap();
    assert!(error.contains("`finish_reason` or `[DONE]`"), "{error}");
    // What arrived is kept, as for a broken connection.
    assert_eq!(reply.content.len(), 2, "{:?}", reply.content);
}

#[tokio::test]
async fn chat_completions_ends_with_a_finish_reason_or_done() {
    let text = |content: &str, finish: Value| {
        vec![
            chunk(
                json!({"role": "assistant", "content": content}),
                Value::Null,
            ),
            chunk(json!({}), finish),
        ]
    };
    // `[DONE]` without a reason (vllm-mlx, some proxies): complete, the stop reason inferred.
    let server = MockServer::start().await;
    let mut events = text("Done.", Value::Null);
    events.extend(call_chunks(0, "call_0", "ls"));
    answer(
        &server,
        "/chat/completions",
        format!("{}data: [DONE]\n\n", sse(&events)),
    )
    .await;
    let (reply, _) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"), "{reply:?}");
    // A reason, then the usage chunk, then the body ends without `[DONE]`: complete.
    let server = MockServer::start().await;
    let mut events = text("Done.", json!("stop"));
    events.push(
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 30, "completion_tokens": 3, "total_tokens": 33}}),
    );
    answer(&server, "/chat/completions", sse(&events)).await;
    let (reply, _) = stream("ollama/qwen3-coder:30b", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"), "{reply:?}");
    assert_eq!(reply.usage.unwrap().total_tokens, 33);
    // An empty reason in every chunk (an old Ollama) is no reason: `[DONE]` ends it.
    let server = MockServer::start().await;
    let events = text("Done.", json!(""));
    answer(&server, "/chat/completions", sse(&events)).await;
    let (reply, _) = stream("ollama/qwen3-coder:30b", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    let server = MockServer::start().await;
    answer(
        &server,
        "/chat/completions",
        format!("{}data: [DONE]\n\n", sse(&events)),
    )
    .await;
    let (reply, _) = stream("ollama/qwen3-coder:30b", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"), "{reply:?}");
}

fn anthropic_start() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "This answer is"}}),
    ]
}

#[tokio::test]
async fn an_anthropic_stream_without_message_stop_is_an_error_reply() {
    let server = MockServer::start().await;
    answer(&server, "/v1/messages", sse(&anthropic_start())).await;
    let (reply, shown) = stream("anthropic/claude-sonnet-4-5", &server).await;
    // The last `s` could begin the key (`sk-test-…`): it is shown once the stream has ended. A
    // stream cut before its end is sent again, as Pi 1.6.0 retries one (the test policy's two
    // retries), and the last attempt's reply is kept as the error it is.
    assert_eq!(texts(&shown), ["This answer i", "s"].repeat(3));
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    assert!(
        reply
            .error_message
            .as_deref()
            .unwrap()
            .contains("`message_stop`")
    );
    assert_eq!(reply.usage.unwrap().input, 25);
    // `message_stop` without the stop reason of a `message_delta` is cut short too.
    let server = MockServer::start().await;
    let mut events = anthropic_start();
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_stop"}));
    answer(&server, "/v1/messages", sse(&events)).await;
    let (reply, _) = stream("anthropic/claude-sonnet-4-5", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    assert!(
        reply
            .error_message
            .as_deref()
            .unwrap()
            .contains("stop reason")
    );
}

#[tokio::test]
async fn a_responses_stream_without_its_terminal_event_is_an_error_reply() {
    let server = MockServer::start().await;
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "bash"}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_1", "output_index": 0, "delta": "{\"command\": \"ls\"}"}),
        json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": "{\"command\": \"ls\"}", "call_id": "call_1", "name": "bash"}}),
    ];
    // A `[DONE]` is not the Responses API's end.
    answer(
        &server,
        "/responses",
        format!("{}data: [DONE]\n\n", sse(&events)),
    )
    .await;
    let (reply, _) = stream("openai/gpt-5-mini", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    assert!(
        reply
            .error_message
            .as_deref()
            .unwrap()
            .contains("`response.completed`")
    );
}

#[tokio::test]
async fn a_gemini_stream_without_a_finish_reason_is_an_error_reply() {
    let server = MockServer::start().await;
    let events = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "This answer is"}]}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}}),
    ];
    answer(
        &server,
        "/models/gemini-2.5-flash:streamGenerateContent",
        sse(&events),
    )
    .await;
    let (reply, _) = stream("google/gemini-2.5-flash", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    assert!(
        reply
            .error_message
            .as_deref()
            .unwrap()
            .contains("`finishReason`")
    );
}

#[tokio::test]
async fn a_summary_stream_cut_short_is_an_error() {
    use ctxkit_summarizer::Summarizer;
    let server = MockServer::start().await;
    answer(&server, "/v1/messages", sse(&anthropic_start())).await;
    let error = crate::common::client("anthropic/claude-sonnet-4-5", &server)
        .summarize(
            crate::common::request(None),
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        error.message.contains("`message_stop`"),
        "{}",
        error.message
    );
}

/// Gemini refuses a prompt with `promptFeedback.blockReason` and no candidates (vercel/ai#4235's
/// body): the reply is an error naming the reason, not a stream "of another format".
#[tokio::test]
async fn a_gemini_prompt_blocked_by_its_filter_says_why() {
    let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 12559, "totalTokenCount": 12559},
        "modelVersion": "gemini-2.5-flash"});
    let server = MockServer::start().await;
    answer(
        &server,
        "/models/gemini-2.5-flash:streamGenerateContent",
        sse(std::slice::from_ref(&blocked)),
    )
    .await;
    let (reply, _) = stream("google/gemini-2.5-flash", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    assert_eq!(
        reply.error_message.as_deref(),
        Some("Prompt blocked: PROHIBITED_CONTENT")
    );
    assert_eq!(reply.usage.unwrap().input, 12559);
    // The same answer whole (a server that ignores streaming, or `chat`).
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:generateContent"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(blocked))
        .mount(&server)
        .await;
    let reply = crate::common::client("google/gemini-2.5-flash", &server)
        .chat(
            &crate::chat::request(vec![crate::chat::user("hi")]),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        reply.error_message.as_deref(),
        Some("Prompt blocked: PROHIBITED_CONTENT")
    );
}

/// A summary of a prompt Gemini blocks fails with the block reason, streamed (`summarize`) or
/// answered whole (`complete`, `generateContent` without SSE): not "no `candidates`".
#[tokio::test]
async fn a_blocked_gemini_summary_says_why_streamed_or_whole() {
    let blocked = json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 12559, "totalTokenCount": 12559},
        "modelVersion": "gemini-2.5-flash"});
    let server = MockServer::start().await;
    answer(
        &server,
        "/models/gemini-2.5-flash:streamGenerateContent",
        sse(std::slice::from_ref(&blocked)),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:generateContent"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(&blocked))
        .mount(&server)
        .await;
    let client = crate::common::client("google/gemini-2.5-flash", &server);
    let cancel = tokio_util::sync::CancellationToken::new();
    let streamed = ctxkit_summarizer::Summarizer::summarize(
        &client,
        crate::common::request(None),
        cancel.clone(),
    )
    .await
    .unwrap_err();
    let request = ctxkit_llm::CompletionRequest {
        system_prompt: "s".into(),
        user_text: "u".into(),
        max_tokens: 10,
        reasoning: None,
    };
    let whole = client.complete(&request, &cancel).await.unwrap_err();
    for error in [streamed.to_string(), whole.to_string()] {
        assert!(
            error.ends_with("'s reply failed: Prompt blocked: PROHIBITED_CONTENT"),
            "{error}"
        );
    }
}

/// QA (2026-12-05): a wrong `llm.baseUrl` answered by a web page (200, text/html) was reported as
/// a stream in another format, with advice to change `llm.api`. It is named as a web page, and
/// `llm.baseUrl` as what to check.
#[tokio::test]
async fn a_web_page_instead_of_a_stream_says_to_check_the_base_url() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_raw(
            "<!doctype html><html><body>Welcome</body></html>",
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    let (reply, _) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{reply:?}");
    let error = reply.error_message.unwrap();
    assert!(error.contains("web page (text/html)"), "{error}");
    assert!(error.contains("`llm.baseUrl`"), "{error}");
}
