//! A mock of the Anthropic Messages API with on-demand compaction (beta `compact-2026-09-04`),
//! written from the public docs: a request with `compaction: {type: "summarize"}` answers with
//! `stop_reason: "compaction"` and one signed `compaction` block (JSON, or the event stream when
//! `stream` is on); a compaction request that leaves a `tool_use` without its `tool_result` is
//! refused with 400 and the API's error shape, as is a request carrying a block without the beta,
//! anywhere but first, or with a signature the mock did not make. Chat requests stream text (or a
//! `bash` call for a prompt that says `RUN: <command>`) with scripted input usage. Every request is
//! recorded with its `anthropic-beta` header.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub(crate) const MODEL_ID: &str = "test-model";
pub(crate) const BETA: &str = "compact-2026-09-04";

/// How the mock answers compaction requests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Compaction {
    /// A signed block summarizing the request.
    Summarize,
    /// 529 `overloaded_error`.
    Fail,
    /// This content array with `stop_reason: "compaction"` (a hostile or malformed answer).
    Answer(Value),
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) beta: String,
    pub(crate) body: Value,
    /// The status it was answered with.
    pub(crate) status: u16,
}

impl Recorded {
    pub(crate) fn is_compaction(&self) -> bool {
        self.body.get("compaction").is_some()
    }

    pub(crate) fn is_chat(&self) -> bool {
        !self.is_compaction() && self.body.get("tools").is_some()
    }
}

#[derive(Debug)]
struct State {
    compaction: Compaction,
    /// Compactions are answered with the event stream even when the request asks for JSON.
    stream_compactions: bool,
    /// The input tokens the next chat replies report.
    input_tokens: u64,
    compactions: usize,
    replies: usize,
    requests: Vec<Recorded>,
}

/// The running mock.
#[derive(Clone)]
pub(crate) struct Anthropic {
    pub(crate) url: String,
    state: Arc<Mutex<State>>,
}

impl Anthropic {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            compaction: Compaction::Summarize,
            stream_compactions: false,
            input_tokens: 1_000,
            compactions: 0,
            replies: 0,
            requests: Vec::new(),
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for socket in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || serve(socket, &state));
            }
        });
        Self { url, state }
    }

    pub(crate) fn set_compaction(&self, compaction: Compaction) {
        self.state.lock().unwrap().compaction = compaction;
    }

    pub(crate) fn stream_compactions(&self) {
        self.state.lock().unwrap().stream_compactions = true;
    }

    pub(crate) fn set_input_tokens(&self, tokens: u64) {
        self.state.lock().unwrap().input_tokens = tokens;
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    pub(crate) fn chat_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(Recorded::is_chat)
            .collect()
    }

    pub(crate) fn compaction_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(Recorded::is_compaction)
            .collect()
    }
}

/// The mock's signature of a block: only blocks it wrote, for this model, verify.
pub(crate) fn sign(model: &str, content: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in model.bytes().chain([0]).chain(content.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("mock-signature-{hash:016x}")
}

fn serve(socket: TcpStream, state: &Mutex<State>) {
    let (beta, body) = crate::small_windows::mock::read_request(&socket);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut state = state.lock().unwrap();
    let answer = answer(&beta, &body, &mut state);
    let status = match &answer {
        Reply::Json(status, _) => *status,
        Reply::Events(_) => 200,
    };
    state.requests.push(Recorded { beta, body, status });
    drop(state);
    let mut socket = socket;
    let _ = match answer {
        Reply::Json(status, value) => {
            let text = value.to_string();
            write!(
                socket,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            )
        }
        Reply::Events(events) => {
            let text: String = events
                .iter()
                .map(|event| {
                    format!(
                        "event: {}\ndata: {event}\n\n",
                        event["type"].as_str().unwrap_or("")
                    )
                })
                .collect();
            write!(
                socket,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n{text}"
            )
        }
    };
}

enum Reply {
    Json(u16, Value),
    Events(Vec<Value>),
}

fn error(status: u16, kind: &str, message: String) -> Reply {
    Reply::Json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

fn invalid(message: String) -> Reply {
    error(400, "invalid_request_error", message)
}

fn answer(beta: &str, body: &Value, state: &mut State) -> Reply {
    let has_beta = beta.split(',').any(|value| value.trim() == BETA);
    let empty = Vec::new();
    let messages = body["messages"].as_array().unwrap_or(&empty);
    if let Err(message) = check_blocks(messages, has_beta) {
        return invalid(message);
    }
    if body.get("compaction").is_some() {
        if !has_beta {
            return invalid(format!("compaction: requires the `{BETA}` beta"));
        }
        if body["compaction"] != json!({"type": "summarize"}) {
            return invalid("compaction.type: must be `summarize`".to_owned());
        }
        if let Some(message) = open_tool_use(messages) {
            return invalid(message);
        }
        return compaction(body, messages, state);
    }
    if body.get("tools").is_none() {
        // A summary request of ctxkit's own summarizer.
        return Reply::Json(
            200,
            message(
                json!([{"type": "text", "text": "## Goal\nMOCK-SUMMARY"}]),
                "end_turn",
                500,
            ),
        );
    }
    state.replies += 1;
    let last_user_text = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(|message| message["content"].to_string())
        .unwrap_or_default();
    let answering_tools = last_user_text.contains("tool_result");
    let command = last_user_text
        .split("RUN: ")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .filter(|_| !answering_tools);
    let input = state.input_tokens;
    Reply::Events(match command {
        Some(command) => tool_use_stream(state.replies, command, input),
        None => text_stream(
            &format!(
                "ANSWER-{} done. {}",
                state.replies,
                "The parser reads the tokens and builds the tree. ".repeat(5)
            ),
            input,
        ),
    })
}

/// A compaction block anywhere but first in the first (assistant) message, without the beta, or
/// not signed by the mock for this model, is refused.
fn check_blocks(messages: &[Value], has_beta: bool) -> Result<(), String> {
    for (index, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        for (position, block) in blocks.iter().enumerate() {
            if block["type"] != "compaction" {
                continue;
            }
            if !has_beta {
                return Err(format!(
                    "messages.{index}.content.{position}: compaction blocks require the `{BETA}` beta"
                ));
            }
            if index != 0 || position != 0 || message["role"] != "assistant" {
                return Err(format!(
                    "messages.{index}.content.{position}: a compaction block must open the first message"
                ));
            }
            let content = block["content"].as_str().unwrap_or("");
            if block["encrypted_content"] != sign(MODEL_ID, content) {
                return Err(format!(
                    "messages.{index}.content.{position}: invalid compaction block signature"
                ));
            }
        }
    }
    Ok(())
}

/// The API's complaint about a `tool_use` whose `tool_result` is not in the next message.
fn open_tool_use(messages: &[Value]) -> Option<String> {
    for (index, message) in messages.iter().enumerate() {
        if message["role"] != "assistant" {
            continue;
        }
        let empty = Vec::new();
        let answered: Vec<&Value> = messages
            .get(index + 1)
            .and_then(|next| next["content"].as_array())
            .unwrap_or(&empty)
            .iter()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| &block["tool_use_id"])
            .collect();
        for block in message["content"].as_array().unwrap_or(&empty) {
            if block["type"] == "tool_use" && !answered.contains(&&block["id"]) {
                return Some(format!(
                    "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    block["id"].as_str().unwrap_or("")
                ));
            }
        }
    }
    None
}

fn compaction(body: &Value, messages: &[Value], state: &mut State) -> Reply {
    let content = match &state.compaction {
        Compaction::Summarize => None,
        Compaction::Fail => {
            return error(529, "overloaded_error", "Overloaded".to_owned());
        }
        Compaction::Answer(content) => Some(content.clone()),
    };
    state.compactions += 1;
    let blocks = content.unwrap_or_else(|| {
        let summary = format!(
            "ON-DEMAND-SUMMARY-{}: {} messages summarized.",
            state.compactions,
            messages.len()
        );
        json!([{"type": "compaction", "content": summary, "encrypted_content": sign(MODEL_ID, &summary)}])
    });
    if body["stream"] != true && !state.stream_compactions {
        return Reply::Json(200, message(blocks, "compaction", 900));
    }
    let mut events = vec![start(900)];
    for (index, block) in blocks
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let mut opening = block.clone();
        opening["content"] = json!("");
        if let Some(object) = opening.as_object_mut() {
            object.remove("encrypted_content");
        }
        events
            .push(json!({"type": "content_block_start", "index": index, "content_block": opening}));
        events.push(json!({"type": "content_block_delta", "index": index, "delta": {
            "type": "compaction_delta", "content": block["content"], "encrypted_content": block["encrypted_content"]}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "compaction", "stop_sequence": null}, "usage": {"output_tokens": 60}}));
    events.push(json!({"type": "message_stop"}));
    Reply::Events(events)
}

fn message(content: Value, stop_reason: &str, input: u64) -> Value {
    json!({"id": "msg_mock", "type": "message", "role": "assistant", "model": MODEL_ID,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 60}})
}

fn start(input: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant",
        "content": [], "model": MODEL_ID, "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 1}}})
}

fn text_stream(text: &str, input: u64) -> Vec<Value> {
    vec![
        start(input),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]
}

fn tool_use_stream(reply: usize, command: &str, input: u64) -> Vec<Value> {
    let arguments = json!({"command": command}).to_string();
    vec![
        start(input),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": format!("toolu_{reply}"), "name": "bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": arguments}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]
}

/// Posts `body` to the mock with `beta` and returns the status and the answer.
pub(crate) fn post(url: &str, beta: &str, body: &Value) -> (u16, Value) {
    let address = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    let text = body.to_string();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: {address}\r\nanthropic-beta: {beta}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}
