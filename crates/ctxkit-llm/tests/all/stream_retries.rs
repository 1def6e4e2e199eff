//! A streamed request that fails before any of its reply arrived is tried again, by the rules of a
//! 5xx (limits, backoff, cancellation): a passing provider error inside a 200 stream (Anthropic's
//! `overloaded_error`, Responses' `server_error`, a Chat Completions error chunk, Gemini's
//! `UNAVAILABLE`), a connection dropped before the reply began, a stream of the right format
//! cut before its content. An error retrying would not mend still ends the reply at once.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctxkit_llm::{ChatDelta, LlmError};
use ctxkit_protocol::{AssistantMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use crate::chat::{request, user};
use crate::chat_streaming::{sse, stream_response, texts};
use crate::common::{client, client_with, options};

fn anthropic_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 1}}})
}

fn anthropic_reply(text: &str) -> String {
    sse(&[
        anthropic_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ])
}

fn responses_created() -> Value {
    json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}})
}

fn responses_reply(text: &str) -> String {
    sse(&[
        responses_created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": text}]}}),
        json!({"type": "response.completed", "sequence_number": 4, "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}}}),
    ])
}

fn chat_chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "qwen3-coder",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn chat_reply(text: &str) -> String {
    format!(
        "{}data: [DONE]\n\n",
        sse(&[
            chat_chunk(json!({"role": "assistant", "content": text}), Value::Null),
            chat_chunk(json!({}), json!("stop")),
        ])
    )
}

fn gemini_reply(text: &str) -> String {
    sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}]}),
    ])
}

/// The first request answered with `first`, every later one with `then`.
async fn first_then(endpoint: &str, first: String, then: String) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(stream_response(first))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(stream_response(then))
        .mount(&server)
        .await;
    server
}

async fn streamed(
    client: &ctxkit_llm::ModelClient,
) -> (Result<AssistantMessage, LlmError>, Vec<ChatDelta>) {
    let mut shown = Vec::new();
    let mut sink = |delta: ChatDelta| shown.push(delta);
    let reply = client
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut sink,
        )
        .await;
    (reply, shown)
}

fn retries(shown: &[ChatDelta]) -> Vec<String> {
    shown
        .iter()
        .filter_map(|delta| match delta {
            ChatDelta::Retrying(notice) => Some(notice.reason.clone()),
            ChatDelta::Text(_)
            | ChatDelta::Thinking(_)
            | ChatDelta::ToolCall { .. }
            | ChatDelta::BlockEnd => None,
        })
        .collect()
}

fn text_of(reply: &AssistantMessage) -> &str {
    match reply.content.first() {
        Some(ContentBlock::Text(text)) => &text.text,
        other => panic!("{other:?} in {reply:?}"),
    }
}

#[tokio::test]
async fn a_passing_error_inside_the_stream_before_the_reply_is_retried_in_every_format() {
    let cases = [
        (
            "anthropic/claude-sonnet-4-5",
            "/v1/messages",
            sse(&[
                anthropic_start(),
                json!({"type": "ping"}),
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ]),
            anthropic_reply("fine after retry"),
            "Overloaded",
        ),
        (
            "openai/gpt-5-mini",
            "/responses",
            sse(&[
                responses_created(),
                json!({"type": "response.failed", "sequence_number": 1, "response": {"id": "resp_1", "status": "failed",
                    "error": {"code": "server_error", "message": "The server had an error processing your request. You can retry your request."}}}),
            ]),
            responses_reply("fine after retry"),
            "The server had an error processing your request. You can retry your request.",
        ),
        (
            "vllm/qwen3-coder",
            "/chat/completions",
            sse(&[
                chat_chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                json!({"error": {"type": "server_error", "message": "upstream busy"}}),
            ]),
            chat_reply("fine after retry"),
            "upstream busy",
        ),
        (
            "google/gemini-2.5-flash",
            "/models/gemini-2.5-flash:streamGenerateContent",
            sse(&[
                json!({"error": {"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}}),
            ]),
            gemini_reply("fine after retry"),
            "The model is overloaded.",
        ),
    ];
    for (model, endpoint, first, then, reason) in cases {
        let server = first_then(endpoint, first, then).await;
        let (reply, shown) = streamed(&client(model, &server)).await;
        let reply = reply.unwrap();
        assert_eq!(text_of(&reply), "fine after retry", "{model}");
        assert_eq!(reply.stop_reason.as_deref(), Some("stop"), "{model}");
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            2,
            "{model}"
        );
        assert_eq!(retries(&shown), vec![reason.to_owned()], "{model}");
        assert_eq!(texts(&shown), vec!["fine after retry"], "{model}");
    }
}

/// QA r105 (5): Anthropic's `overloaded_error` after an empty `content_block_start` (nothing of
/// the reply yet) ended the reply (`Error: Overloaded`, exit 7) where Pi retries it; so did a
/// connection dropped at that point. Both are retried now, as before the block start.
#[tokio::test]
async fn a_passing_error_after_an_empty_block_start_is_retried() {
    let overloaded = sse(&[
        anthropic_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let server = first_then(
        "/v1/messages",
        overloaded,
        anthropic_reply("fine after retry"),
    )
    .await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let reply = reply.unwrap();
    assert_eq!(text_of(&reply), "fine after retry");
    assert_eq!(reply.content.len(), 1, "{reply:?}");
    assert_eq!(retries(&shown), vec!["Overloaded".to_owned()]);
    assert_eq!(texts(&shown), vec!["fine after retry"]);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_passing_error_that_outlasts_the_retries_says_how_often_it_was_tried() {
    let server = MockServer::start().await;
    let overloaded = sse(&[
        anthropic_start(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(overloaded))
        .mount(&server)
        .await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let error = reply.unwrap_err();
    assert!(matches!(error, LlmError::StreamFailed { .. }), "{error:?}");
    let text = crate::common::without_duration(&error.to_string());
    assert!(
        text.starts_with(
            "Provider `anthropic` failed before its reply began: Overloaded; tried 3 times over"
        ),
        "{text}"
    );
    // Two retries (the test policy's), then the error.
    assert_eq!(retries(&shown).len(), 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn an_error_retrying_would_not_mend_ends_the_reply_at_once() {
    let refused = sse(&[
        anthropic_start(),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: text content blocks must be non-empty"}}),
    ]);
    let server = first_then("/v1/messages", refused, anthropic_reply("never")).await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(
        reply.error_message.as_deref(),
        Some("messages: text content blocks must be non-empty")
    );
    assert!(retries(&shown).is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// QA 2026-12-07: an `overloaded_error` after the reply began ended it (exit 7 in `-p`), where
/// Pi 1.6.0 sends the request again. It is sent again whole, announced as a restart; the reply is
/// the new attempt's.
#[tokio::test]
async fn a_passing_error_after_the_reply_began_sends_the_request_again() {
    let mut events = vec![
        anthropic_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half"}}),
    ];
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = first_then("/v1/messages", sse(&events), anthropic_reply("Whole")).await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    assert_eq!(text_of(&reply), "Whole");
    assert_eq!(texts(&shown), vec!["Half", "Whole"]);
    let notices: Vec<_> = shown
        .iter()
        .filter_map(|delta| match delta {
            ChatDelta::Retrying(notice) => Some(notice.clone()),
            ChatDelta::Text(_)
            | ChatDelta::Thinking(_)
            | ChatDelta::ToolCall { .. }
            | ChatDelta::BlockEnd => None,
        })
        .collect();
    assert_eq!(notices.len(), 1);
    assert!(notices[0].restarted, "{notices:?}");
    assert!(
        notices[0]
            .describe()
            .starts_with("The reply broke off; sending the request again in"),
        "{}",
        notices[0].describe()
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

/// A reply broken off every time is sent again `retry.maxRetries` times, then kept as the error
/// reply it is, with what its last attempt showed.
#[tokio::test]
async fn a_reply_broken_off_every_time_is_kept_after_the_retries() {
    let events = vec![
        anthropic_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let broken = sse(&events);
    let server = first_then("/v1/messages", broken.clone(), broken).await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(text_of(&reply), "Half");
    // The test policy's two retries.
    assert_eq!(retries(&shown).len(), 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

/// A server that answers its first connection with `first` (raw bytes after the status line and
/// headers) and closes it, and every later one with `then` whole; the connections it accepted.
fn dropping_server(first: String, then: String, chunked: bool) -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            let seen = counter.fetch_add(1, Ordering::SeqCst);
            read_request(&mut socket);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n";
            let answer = if seen == 0 && chunked {
                // One chunk, then the connection closes before the terminating chunk.
                format!(
                    "{head}transfer-encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n",
                    first.len()
                )
            } else if seen == 0 {
                format!("{head}connection: close\r\n\r\n{first}")
            } else {
                format!("{head}content-length: {}\r\n\r\n{then}", then.len())
            };
            let _ = socket.write_all(answer.as_bytes());
            let _ = socket.flush();
            if seen == 0 {
                let _ = socket.shutdown(std::net::Shutdown::Both);
            } else {
                // Keep the socket open until the client has read the whole answer.
                let _ = socket.read(&mut [0_u8; 1]);
            }
        }
    });
    (format!("http://{address}"), accepted)
}

/// Reads one request: its headers, then as many body bytes as `content-length` says.
fn read_request(socket: &mut std::net::TcpStream) {
    let mut received = Vec::new();
    let mut buffer = [0_u8; 65536];
    loop {
        let Ok(count) = socket.read(&mut buffer) else {
            return;
        };
        if count == 0 {
            return;
        }
        received.extend_from_slice(&buffer[..count]);
        let text = String::from_utf8_lossy(&received).to_lowercase();
        let Some(end) = text.find("\r\n\r\n") else {
            continue;
        };
        let length = text
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if received.len() >= end + 4 + length {
            return;
        }
    }
}

#[tokio::test]
async fn a_connection_dropped_before_the_reply_began_is_retried_in_every_format() {
    let cases = [
        (
            "anthropic/claude-sonnet-4-5",
            sse(&[anthropic_start(), json!({"type": "ping"})]),
            anthropic_reply("fine after retry"),
        ),
        (
            "openai/gpt-5-mini",
            sse(&[responses_created()]),
            responses_reply("fine after retry"),
        ),
        (
            "vllm/qwen3-coder",
            sse(&[chat_chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            )]),
            chat_reply("fine after retry"),
        ),
        (
            "google/gemini-2.5-flash",
            String::new(),
            gemini_reply("fine after retry"),
        ),
    ];
    for (model, first, then) in cases {
        for chunked in [true, false] {
            let (url, accepted) = dropping_server(first.clone(), then.clone(), chunked);
            let server = MockServer::start().await;
            let mut settings = options(model, &server);
            settings.base_url = Some(url);
            let (reply, shown) = streamed(&client_with(&settings)).await;
            let reply = reply.unwrap_or_else(|error| panic!("{model} {chunked}: {error}"));
            assert_eq!(text_of(&reply), "fine after retry", "{model} {chunked}");
            assert_eq!(accepted.load(Ordering::SeqCst), 2, "{model} {chunked}");
            assert_eq!(retries(&shown).len(), 1, "{model} {chunked}: {shown:?}");
        }
    }
}

#[tokio::test]
async fn a_stream_cut_before_its_reply_is_not_blamed_on_the_wire_format() {
    // Every attempt is cut after `message_start`: the error says the stream ended, never that
    // it held no anthropic-messages events.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(sse(&[
            anthropic_start(),
            json!({"type": "ping"}),
        ])))
        .mount(&server)
        .await;
    let (reply, _) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    let error = reply.unwrap_err().to_string();
    assert!(
        error.contains("the stream ended before its reply began") && !error.contains("llm.api"),
        "{error}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

/// QA r103: a gateway answering 200 with a JSON error body (`{"error": {"code": 502, …}}`, no
/// `choices`) failed at once as an unreadable answer; it is retried as the 502 it carries, and a
/// lasting error in such a body is still not retried.
#[tokio::test]
async fn a_success_answer_whose_body_is_a_passing_error_is_retried() {
    let cases = [
        (
            "vllm/qwen3-coder",
            "/chat/completions",
            json!({"error": {"message": "upstream provider error", "code": 502}}),
            chat_reply("done after retry"),
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "/v1/messages",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            anthropic_reply("done after retry"),
        ),
    ];
    for (model, endpoint, body, then) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(endpoint))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(&body))
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(endpoint))
            .respond_with(stream_response(then))
            .mount(&server)
            .await;
        let (reply, shown) = streamed(&client(model, &server)).await;
        let reply = reply.unwrap();
        assert_eq!(text_of(&reply), "done after retry", "{model}");
        assert_eq!(retries(&shown).len(), 1, "{model}: {shown:?}");
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    let server = MockServer::start().await;
    let lasting = json!({"error": {"message": "Invalid model name", "type": "invalid_request_error", "code": 400}});
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(&lasting))
        .mount(&server)
        .await;
    let (reply, shown) = streamed(&client("vllm/qwen3-coder", &server)).await;
    let error = reply.unwrap_err().to_string();
    assert!(error.contains("Invalid model name"), "{error}");
    assert!(retries(&shown).is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// A stream that breaks off after `Half`, as an `overloaded_error` event.
fn broken_anthropic() -> String {
    sse(&[
        anthropic_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ])
}

/// Answers in turn: each of `answers` once (status, body), then `last` to every later request.
async fn in_turn(answers: &[(u16, String)], last: String) -> MockServer {
    let server = MockServer::start().await;
    for (priority, (status, body)) in answers.iter().enumerate() {
        let template = if *status == 200 {
            stream_response(body.clone())
        } else {
            wiremock::ResponseTemplate::new(*status).set_body_string(body.clone())
        };
        Mock::given(method("POST"))
            .respond_with(template)
            .up_to_n_times(1)
            .with_priority(u8::try_from(priority + 1).unwrap())
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .respond_with(stream_response(last))
        .with_priority(u8::try_from(answers.len() + 1).unwrap())
        .mount(&server)
        .await;
    server
}

/// The verifier (2026-12-07): each restart had a budget of its own, 16 requests where Pi makes 4.
/// The retries before a stream began and the restarts share `max_retries` (the test policy's 2).
#[tokio::test]
async fn retries_and_restarts_share_one_budget() {
    let overloaded = (
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.to_owned(),
    );
    let server = in_turn(
        &[overloaded.clone(), (200, broken_anthropic()), overloaded],
        anthropic_reply("Whole"),
    )
    .await;
    let (reply, shown) = streamed(&client("anthropic/claude-sonnet-4-5", &server)).await;
    assert!(reply.is_err(), "{reply:?}");
    assert_eq!(retries(&shown).len(), 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

/// `retry.enabled: false` keeps the provider client's retries and sends no broken reply again,
/// as Pi's client never resends a stream that began (the verifier, 2026-12-07).
#[tokio::test]
async fn no_restart_when_broken_replies_are_not_sent_again() {
    let server = first_then("/v1/messages", broken_anthropic(), anthropic_reply("Whole")).await;
    let mut options = options("anthropic/claude-sonnet-4-5", &server);
    options.retry.restart_broken_replies = false;
    let (reply, shown) = streamed(&client_with(&options)).await;
    assert_eq!(reply.unwrap().stop_reason.as_deref(), Some("error"));
    assert!(retries(&shown).is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// A cancel while a broken reply waits to be sent again ends it as an interruption, not as the
/// error that broke it (the verifier, 2026-12-07: Esc said "Error: Overloaded", `-p` exited 7).
/// The restart's notice carries what the dropped attempt used.
#[tokio::test]
async fn a_cancel_while_a_restart_waits_is_an_interruption() {
    let server = first_then("/v1/messages", broken_anthropic(), anthropic_reply("Whole")).await;
    let mut options = options("anthropic/claude-sonnet-4-5", &server);
    options.retry.base_delay = std::time::Duration::from_secs(30);
    let client = client_with(&options);
    let cancel = CancellationToken::new();
    let mut shown = Vec::new();
    let mut sink = |delta: ChatDelta| {
        if let ChatDelta::Retrying(notice) = &delta {
            assert!(notice.restarted);
            assert_eq!(
                notice.dropped_usage.as_ref().map(|usage| usage.input),
                Some(5)
            );
            cancel.cancel();
        }
        shown.push(delta);
    };
    let reply = client
        .chat_streaming(&request(vec![user("hi")]), &cancel.clone(), &mut sink)
        .await
        .unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("aborted"), "{reply:?}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}
