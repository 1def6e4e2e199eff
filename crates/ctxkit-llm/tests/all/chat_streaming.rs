//! Streamed conversations in the four wire formats against mock servers sending each provider's
//! event stream: text shown as it arrives, calls assembled, usage from the final event; an error
//! inside the stream kept with the provider's wording (an overflow is recognised); a cancelled
//! stream kept as an aborted reply with what arrived.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_llm::ChatDelta;
use ctxkit_overflow::is_context_overflow;
use ctxkit_protocol::ContentBlock;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client, sent_bodies};

pub fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|data| match data.get("type").and_then(Value::as_str) {
            Some(name) => format!("event: {name}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        })
        .collect()
}

pub fn stream_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

pub async fn stream(
    model: &str,
    server: &MockServer,
) -> (ctxkit_protocol::AssistantMessage, Vec<ChatDelta>) {
    let mut shown = Vec::new();
    let mut sink = |delta: ChatDelta| shown.push(delta);
    let reply = client(model, server)
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut sink,
        )
        .await
        .unwrap();
    (reply, shown)
}

pub fn texts(shown: &[ChatDelta]) -> Vec<&str> {
    shown
        .iter()
        .filter_map(|delta| match delta {
            ChatDelta::Text(text) => Some(text.as_str()),
            ChatDelta::Thinking(_)
            | ChatDelta::ToolCall { .. }
            | ChatDelta::BlockEnd
            | ChatDelta::Retrying(_) => None,
        })
        .collect()
}

#[tokio::test]
async fn chat_completions_streams_text_and_reads_usage() {
    let server = MockServer::start().await;
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk",
        "created": 1, "model": "qwen3-coder", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let body = format!(
        "{}data: [DONE]\n\n",
        sse(&[
            chunk(json!({"role": "assistant", "content": ""}), Value::Null),
            chunk(json!({"content": "Two"}), Value::Null),
            chunk(json!({"content": " files."}), Value::Null),
            chunk(json!({}), json!("stop")),
            json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": 30, "completion_tokens": 3, "total_tokens": 33}}),
        ])
    );
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, shown) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(texts(&shown), vec!["Two", " files."]);
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "Two files."));
    assert_eq!(reply.usage.as_ref().unwrap().total_tokens, 33);
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn anthropic_streams_a_tool_call() {
    let server = MockServer::start().await;
    let body = sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\":"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"ls\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, shown) = stream("anthropic/claude-sonnet-4-5", &server).await;
    assert_eq!(texts(&shown), vec!["Checking."]);
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    let ContentBlock::ToolCall(call) = &reply.content[1] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments, json!({"command": "ls"}));
    assert_eq!(reply.usage.as_ref().unwrap().output, 40);
    assert_eq!(sent_bodies(&server).await[0]["stream"], true);
}

#[tokio::test]
async fn responses_streams_text() {
    let server = MockServer::start().await;
    let body = sse(&[
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        json!({"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}}),
        json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Two"}),
        json!({"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": " files."}),
        json!({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": "Two files."}]}}),
        json!({"type": "response.completed", "sequence_number": 6, "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": 20, "output_tokens": 3, "total_tokens": 23}}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, shown) = stream("openai/gpt-5-mini", &server).await;
    assert_eq!(texts(&shown), vec!["Two", " files."]);
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "Two files."));
    assert_eq!(reply.usage.as_ref().unwrap().total_tokens, 23);
}

#[tokio::test]
async fn gemini_streams_from_the_sse_endpoint() {
    let server = MockServer::start().await;
    let body = sse(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Two"}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "c2ln"}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:streamGenerateContent"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, shown) = stream("google/gemini-2.5-flash", &server).await;
    assert_eq!(texts(&shown), vec!["Two"]);
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    let ContentBlock::ToolCall(call) = &reply.content[1] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.extra["thoughtSignature"], "c2ln");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests[0].url.query(), Some("alt=sse"));
}

#[tokio::test]
async fn an_overflow_inside_the_stream_is_an_error_reply_read_as_an_overflow() {
    let server = MockServer::start().await;
    let body = sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 213000 tokens > 200000 maximum"}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, _) = stream("anthropic/claude-sonnet-4-5", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert!(is_context_overflow(&reply, Some(200_000)), "{reply:?}");
}

#[tokio::test]
async fn a_server_that_answers_whole_is_read_and_shown() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "Whole."}, "finish_reason": "stop"}]})))
        .mount(&server)
        .await;
    let (reply, shown) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(texts(&shown), vec!["Whole."]);
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_stream_in_another_format_names_the_setting() {
    let server = MockServer::start().await;
    let chunk = json!({"id": "c", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]});
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(stream_response(format!(
            "{}data: [DONE]\n\n",
            sse(&[chunk])
        )))
        .mount(&server)
        .await;
    let (reply, _) = stream("openai/gpt-5-mini", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    let error = reply.error_message.unwrap();
    assert!(
        error.contains("no openai-responses events") && error.contains("llm.api"),
        "{error}"
    );
}

#[tokio::test]
async fn summaries_stream_and_a_failed_summary_stream_is_an_error() {
    use ctxkit_summarizer::Summarizer;
    let server = MockServer::start().await;
    let events = |tail: Vec<Value>| {
        let mut all = vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 900, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "## Goal\nShip it."}}),
        ];
        all.extend(tail);
        sse(&all)
    };
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(events(vec![
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
            json!({"type": "message_stop"}),
        ])))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(stream_response(events(vec![json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}})])))
        .mount(&server)
        .await;
    let client = client("anthropic/claude-sonnet-4-5", &server);
    let summary = client
        .summarize(crate::common::request(None), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.text, "## Goal\nShip it.");
    assert_eq!(summary.usage.unwrap().output, 12);
    assert_eq!(sent_bodies(&server).await[0]["stream"], true);
    let error = client
        .summarize(crate::common::request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.message.contains("Overloaded"), "{}", error.message);
}

/// A server that sends the start of a Chat Completions stream, then stalls until dropped.
fn stalling_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((mut socket, _)) = listener.accept() else {
            return;
        };
        let mut buffer = [0_u8; 65536];
        let _ = socket.read(&mut buffer);
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "Partial answer"}}]});
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let _ = socket.write_all(format!("{head}data: {chunk}\n\n").as_bytes());
        std::thread::sleep(Duration::from_secs(120));
    });
    format!("http://{address}")
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_the_partial_reply_as_aborted() {
    let mut options = crate::common::options("vllm/qwen3-coder", &MockServer::start().await);
    options.base_url = Some(stalling_server());
    let client = crate::common::client_with(&options);
    let cancel = CancellationToken::new();
    let shown = Arc::new(Mutex::new(Vec::new()));
    let trigger = cancel.clone();
    let seen = Arc::clone(&shown);
    let mut sink = move |delta: ChatDelta| {
        seen.lock().unwrap().push(delta);
        trigger.cancel();
    };
    let started = std::time::Instant::now();
    let reply = client
        .chat_streaming(&request(vec![user("hi")]), &cancel, &mut sink)
        .await
        .unwrap();
    // The server stalls for two minutes: ending within 30 s (a loaded machine's margin) is the
    // cancel.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(reply.stop_reason.as_deref(), Some("aborted"));
    assert_eq!(reply.error_message.as_deref(), Some("Request was aborted"));
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "Partial answer"));
    assert_eq!(
        shown.lock().unwrap()[0],
        ChatDelta::Text("Partial answer".into())
    );
}

/// Ollama's parallel calls: each whole in one piece, every one at `index: 0` with its own id
/// (ollama/ollama#15457, #7881).
#[tokio::test]
async fn parallel_calls_at_one_index_with_their_own_ids_stay_apart() {
    let server = MockServer::start().await;
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "qwen3-coder:30b", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let call = |id: &str, path: &str| {
        chunk(
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "index": 0,
                "type": "function", "function": {"name": "write",
                "arguments": format!("{{\"path\":\"{path}\",\"content\":\"x\"}}")}}]}),
            Value::Null,
        )
    };
    let body = format!(
        "{}data: [DONE]\n\n",
        sse(&[
            call("call_a1", "hello.py"),
            call("call_b2", "world.py"),
            chunk(
                json!({"role": "assistant", "content": ""}),
                json!("tool_calls")
            ),
        ])
    );
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, shown) = stream("ollama/qwen3-coder:30b", &server).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    let calls: Vec<_> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => {
                Some((call.id.as_str(), call.arguments["path"].clone()))
            }
            ContentBlock::Text(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a1", json!("hello.py")),
            ("call_b2", json!("world.py"))
        ]
    );
    let started = shown
        .iter()
        .filter(|delta| matches!(delta, ChatDelta::ToolCall { .. }))
        .count();
    assert_eq!(started, 2);
}

/// OpenAI's shape: the id in a call's first piece only, the rest keyed by index; a piece that
/// repeats the id continues the call.
#[tokio::test]
async fn pieces_without_an_id_or_with_the_same_id_continue_the_call() {
    let server = MockServer::start().await;
    let piece = |call: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": null}]})
    };
    let body = format!(
        "{}data: [DONE]\n\n",
        sse(&[
            piece(
                json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": ""}}),
            ),
            piece(json!({"index": 0, "function": {"arguments": "{\"command\":"}})),
            piece(json!({"index": 0, "id": "call_1", "function": {"arguments": " \"ls\"}"}})),
        ])
    );
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, _) = stream("vllm/qwen3-coder", &server).await;
    assert_eq!(reply.content.len(), 1, "{:?}", reply.content);
    let ContentBlock::ToolCall(call) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments, json!({"command": "ls"}));
}
