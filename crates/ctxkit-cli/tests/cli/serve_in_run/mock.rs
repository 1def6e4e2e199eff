//! The mock provider of the scenario: each wire format's event streams, its overflow error, a
//! scripted model and a one-request-per-connection HTTP server.

use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{COMMAND_MARKER, FILE_MARKER, MODEL_ID, WINDOW};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Chat,
    Anthropic,
    Responses,
    Gemini,
}

fn event(data: &Value) -> String {
    match data.get("type").and_then(Value::as_str) {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

impl Format {
    pub fn api(self) -> &'static str {
        match self {
            Self::Chat => "openai-completions",
            Self::Anthropic => "anthropic-messages",
            Self::Responses => "openai-responses",
            Self::Gemini => "google-generative-ai",
        }
    }

    /// The stream of a text reply to a request of `input` tokens.
    pub(crate) fn text(self, text: &str, input: usize) -> String {
        let events = match self {
            Self::Chat => vec![
                json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL_ID,
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
                json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL_ID,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": input, "completion_tokens": 20, "total_tokens": input + 20}}),
            ],
            Self::Anthropic => vec![
                anthropic_start(input),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 20}}),
                json!({"type": "message_stop"}),
            ],
            Self::Responses => vec![
                json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
                json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
                json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text}),
                json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": text}]}}),
                json!({"type": "response.completed", "sequence_number": 4, "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": input, "output_tokens": 20, "total_tokens": input + 20}}}),
            ],
            Self::Gemini => vec![
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": 20, "totalTokenCount": input + 20}}),
            ],
        };
        let mut stream: String = events.iter().map(event).collect();
        if self == Self::Chat {
            stream.push_str("data: [DONE]\n\n");
        }
        stream
    }

    /// The stream of a reply calling `tool` once per argument object in `calls`.
    pub(crate) fn tool_calls(self, tool: &str, calls: &[Value], input: usize) -> String {
        let mut events = Vec::new();
        match self {
            Self::Chat => {
                for (index, arguments) in calls.iter().enumerate() {
                    events.push(json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0,
                        "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": index,
                        "id": format!("call_{tool}_{index}"), "type": "function",
                        "function": {"name": tool, "arguments": arguments.to_string()}}]}, "finish_reason": null}]}));
                }
                events.push(json!({"id": "c", "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
                events.push(json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": input, "completion_tokens": 30, "total_tokens": input + 30}}));
            }
            Self::Anthropic => {
                events.push(anthropic_start(input));
                for (index, arguments) in calls.iter().enumerate() {
                    events.push(json!({"type": "content_block_start", "index": index, "content_block":
                        {"type": "tool_use", "id": format!("toolu_{tool}_{index}"), "name": tool, "input": {}}}));
                    events.push(
                        json!({"type": "content_block_delta", "index": index, "delta":
                        {"type": "input_json_delta", "partial_json": arguments.to_string()}}),
                    );
                    events.push(json!({"type": "content_block_stop", "index": index}));
                }
                events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}));
                events.push(json!({"type": "message_stop"}));
            }
            Self::Responses => {
                events.push(json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_0", "object": "response", "status": "in_progress", "output": []}}));
                for (index, arguments) in calls.iter().enumerate() {
                    let item = |status: &str, text: &str| {
                        json!({"type": "function_call", "id": format!("fc_{index}"), "call_id": format!("call_{tool}_{index}"),
                            "name": tool, "arguments": text, "status": status})
                    };
                    events.push(json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": index, "item": item("in_progress", "")}));
                    events.push(json!({"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": format!("fc_{index}"), "output_index": index, "delta": arguments.to_string()}));
                    events.push(json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": index, "item": item("completed", &arguments.to_string())}));
                }
                events.push(json!({"type": "response.completed", "sequence_number": 9, "response": {"id": "resp_0", "status": "completed",
                    "usage": {"input_tokens": input, "output_tokens": 30, "total_tokens": input + 30}}}));
            }
            Self::Gemini => {
                let parts: Vec<Value> = calls
                    .iter()
                    .map(|arguments| json!({"functionCall": {"name": tool, "args": arguments}}))
                    .collect();
                events.push(json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": 30, "totalTokenCount": input + 30}}));
            }
        }
        let mut stream: String = events.iter().map(event).collect();
        if self == Self::Chat {
            stream.push_str("data: [DONE]\n\n");
        }
        stream
    }

    /// A whole (not streamed) summary answer.
    pub(crate) fn summary(self, text: &str) -> Value {
        match self {
            Self::Chat => json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 50, "total_tokens": 350}}),
            Self::Anthropic => {
                json!({"id": "msg_s", "type": "message", "role": "assistant", "model": MODEL_ID,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 300, "output_tokens": 50}})
            }
            Self::Responses => {
                json!({"id": "resp_s", "object": "response", "status": "completed", "output": [
                {"type": "message", "id": "msg_s", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                "usage": {"input_tokens": 300, "output_tokens": 50, "total_tokens": 350}})
            }
            Self::Gemini => {
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 50, "totalTokenCount": 350}})
            }
        }
    }

    /// The provider's own overflow error: HTTP status and body.
    fn overflow(self, tokens: usize) -> (u16, Value) {
        match self {
            Self::Chat | Self::Responses => (
                400,
                json!({"error": {"message": format!("This model's maximum context length is {WINDOW} tokens. \
                    However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
                    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
            ),
            Self::Anthropic => (
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": format!("prompt is too long: {tokens} tokens > {WINDOW} maximum")}}),
            ),
            Self::Gemini => (
                400,
                json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": format!(
                    "The input token count ({tokens}) exceeds the maximum number of tokens allowed ({WINDOW}).")}}),
            ),
        }
    }

    /// The last message of a request body (the newest input), as text.
    pub(crate) fn last_message(self, body: &Value) -> String {
        let list = match self {
            Self::Chat | Self::Anthropic => &body["messages"],
            Self::Responses => &body["input"],
            Self::Gemini => &body["contents"],
        };
        list.as_array()
            .and_then(|messages| messages.last())
            .map(Value::to_string)
            .unwrap_or_default()
    }
}

fn anthropic_start(input: usize) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "content": [], "model": MODEL_ID, "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 1}}})
}

/// A mock provider: its wire format and how it counts, in tenths of a byte per token (40: request
/// bytes / 4, about ctxkit's estimate plus the JSON framing; 35: 14% more; 27: 48% more).
#[derive(Debug, Clone, Copy)]
pub struct Provider {
    pub format: Format,
    pub bytes_per_token: usize,
}

/// What the mock saw: chat requests and summary requests, the refused ones, the largest sizes.
#[derive(Debug, Default)]
pub struct Counts {
    pub chat_requests: usize,
    pub refused: usize,
    pub summaries: usize,
    pub largest_summary: usize,
    pub refused_summaries: usize,
    pub largest_accepted: usize,
}

/// The scripted model: the first request of a turn reads two files, the reply to their contents
/// runs two commands, the reply to the commands' output answers. Summary requests (no tools) get
/// a whole answer. A request over the window is refused with the format's overflow error.
fn respond(
    provider: Provider,
    body: &Value,
    prompt: usize,
    counts: &Mutex<Counts>,
) -> (u16, String, String) {
    let Provider {
        format,
        bytes_per_token,
    } = provider;
    let tokens = (body.to_string().len() * 10).div_ceil(bytes_per_token);
    let mut counts = counts.lock().unwrap();
    if body.get("tools").is_none() {
        counts.summaries += 1;
        counts.largest_summary = counts.largest_summary.max(tokens);
        if tokens > WINDOW {
            counts.refused_summaries += 1;
            let (status, error) = format.overflow(tokens);
            return (status, "application/json".to_owned(), error.to_string());
        }
        let text = format.summary("## Goal\nSUMMARY-FROM-MOCK of the earlier work");
        return (200, "application/json".to_owned(), text.to_string());
    }
    counts.chat_requests += 1;
    if tokens > WINDOW {
        counts.refused += 1;
        let (status, error) = format.overflow(tokens);
        return (status, "application/json".to_owned(), error.to_string());
    }
    counts.largest_accepted = counts.largest_accepted.max(tokens);
    let last = format.last_message(body);
    let stream = if last.contains(COMMAND_MARKER) {
        format.text(&format!("ANSWER-{prompt}: the build is fine."), tokens)
    } else if last.contains(FILE_MARKER) {
        let calls = [
            json!({"command": format!("cat logs/build-{prompt}-a.log")}),
            json!({"command": format!("cat logs/build-{prompt}-b.log")}),
        ];
        format.tool_calls("bash", &calls, tokens)
    } else {
        let calls = [
            json!({"path": format!("src/module-{prompt}-a.rs")}),
            json!({"path": format!("src/module-{prompt}-b.rs")}),
        ];
        format.tool_calls("read", &calls, tokens)
    };
    (200, "text/event-stream".to_owned(), stream)
}

/// A one-connection-at-a-time HTTP mock; `prompt` is the number of the running prompt.
pub fn start_provider(
    provider: Provider,
    prompt: Arc<Mutex<usize>>,
    counts: Arc<Mutex<Counts>>,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let (prompt, counts) = (Arc::clone(&prompt), Arc::clone(&counts));
            std::thread::spawn(move || {
                let Some(body) = read_body(&socket) else {
                    return;
                };
                let number = *prompt.lock().unwrap();
                let (status, kind, text) = respond(provider, &body, number, &counts);
                let mut socket = socket;
                let reason = if status == 200 { "OK" } else { "Bad Request" };
                let _ = write!(
                    socket,
                    "HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = socket.flush();
            });
        }
    });
    url
}

fn read_body(socket: &std::net::TcpStream) -> Option<Value> {
    let (_, body) = crate::chat_stream::read_http_request(socket);
    serde_json::from_slice(&body).ok()
}
