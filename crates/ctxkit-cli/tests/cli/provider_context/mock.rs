//! A mock Anthropic Messages server written from the public docs: streamed replies as server-sent
//! events (`message_start` … `message_stop`), whole replies for `stream: false`, usage with cache
//! reads and writes, and message threads (beta `message-threads-2026-08-12`): a `create` opens a
//! thread, a `continue` must name the thread's last reply (`previous_message_id`) and carries only
//! the new messages, without `system` and `tools`; a thread the server no longer has (expired, on
//! demand here) is rejected with `thread_not_found`, a reply continued twice with
//! `thread_already_continued`. On-demand compaction (beta `compact-2026-09-04`): a request with
//! `compaction: {type: "summarize"}` is answered with `stop_reason: "compaction"` and one signed
//! `compaction` block.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const MODEL: &str = "claude-opus-4-1";

/// What the mock knows and how it answers.
#[derive(Default)]
pub struct State {
    /// Reply id → how many messages its thread held with that reply.
    threads: Mutex<HashMap<String, usize>>,
    continued: Mutex<HashSet<String>>,
    replies: AtomicUsize,
    /// Streamed answers so far: `Answer N.` counts these only, so a cache refresh that fires
    /// before the next prompt (a loaded machine) does not change the next answer's text.
    answers: AtomicUsize,
    /// Forget every thread before the next request.
    pub expire: AtomicBool,
    /// The prompt size every reply reports (read from the cache but for a few tokens).
    pub prompt_tokens: AtomicU64,
}

#[derive(Clone, Default)]
pub struct Anthropic(pub Arc<State>);

impl Anthropic {
    pub async fn mount(&self, server: &MockServer) {
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(self.clone())
            .mount(server)
            .await;
    }

    fn error(status: u16, code: &str) -> ResponseTemplate {
        ResponseTemplate::new(status).set_body_json(json!({"type": "error",
            "error": {"type": "invalid_request_error", "message": code, "details": {"error_code": code}}}))
    }

    /// Checks a thread request; how many messages the thread held before it.
    fn thread(&self, body: &Value) -> Result<usize, Box<ResponseTemplate>> {
        let state = &self.0;
        if state.expire.swap(false, Ordering::SeqCst) {
            state.threads.lock().unwrap().clear();
        }
        match body["thread"]["type"].as_str() {
            Some("continue") => {
                let previous = body["thread"]["previous_message_id"]
                    .as_str()
                    .unwrap_or_default();
                if state.continued.lock().unwrap().contains(previous) {
                    return Err(Box::new(Self::error(400, "thread_already_continued")));
                }
                let held = state.threads.lock().unwrap().get(previous).copied();
                let Some(held) = held else {
                    return Err(Box::new(Self::error(404, "thread_not_found")));
                };
                assert!(body.get("system").is_none() && body.get("tools").is_none());
                state.continued.lock().unwrap().insert(previous.to_owned());
                Ok(held)
            }
            Some("create") | None => Ok(0),
            Some(other) => Err(Box::new(Self::error(
                400,
                &format!("unknown thread type {other}"),
            ))),
        }
    }
}

fn event(data: &Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

impl Respond for Anthropic {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let held = match self.thread(&body) {
            Ok(held) => held,
            Err(rejection) => return *rejection,
        };
        let number = self.0.replies.fetch_add(1, Ordering::SeqCst) + 1;
        let id = format!("msg_{number}");
        if body.get("thread").is_some() {
            let sent = body["messages"].as_array().map_or(0, Vec::len);
            self.0
                .threads
                .lock()
                .unwrap()
                .insert(id.clone(), held + sent + 1);
        }
        let prompt = self.0.prompt_tokens.load(Ordering::SeqCst).max(10);
        let usage = json!({"input_tokens": 3, "cache_read_input_tokens": prompt - 3,
            "cache_creation_input_tokens": 0, "output_tokens": 1});
        if body.get("compaction").is_some() {
            let summary = format!(
                "ON-DEMAND {number}: {} messages summarized.",
                body["messages"].as_array().map_or(0, Vec::len)
            );
            return ResponseTemplate::new(200).set_body_json(json!({"id": id, "type": "message",
                "role": "assistant", "model": MODEL, "content": [{"type": "compaction",
                "content": summary, "encrypted_content": format!("signed:{summary}")}],
                "stop_reason": "compaction", "usage": usage}));
        }
        if body["stream"] != true {
            return ResponseTemplate::new(200).set_body_json(json!({"id": id, "type": "message",
                "role": "assistant", "model": MODEL, "content": [{"type": "text", "text": ""}],
                "stop_reason": "max_tokens", "usage": usage}));
        }
        let answer = self.0.answers.fetch_add(1, Ordering::SeqCst) + 1;
        let text = format!("Answer {answer}.");
        let events = [
            json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
                "content": [], "model": MODEL, "stop_reason": null, "usage": usage}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": 12}}),
            json!({"type": "message_stop"}),
        ];
        let stream: String = events.iter().map(event).collect();
        ResponseTemplate::new(200).set_body_raw(stream, "text/event-stream")
    }
}

/// A request the mock received: its body.
pub fn is_conversation(body: &Value) -> bool {
    body.get("compaction").is_none()
        && body["stream"] == true
        && (body.get("thread").is_some() || body.get("tools").is_some())
}

/// A cache refresh: the conversation request again, whole, with one output token.
pub fn is_refresh(body: &Value) -> bool {
    body["stream"] != true && body["max_tokens"] == 1
}

/// An on-demand compaction request.
pub fn is_compaction(body: &Value) -> bool {
    body["compaction"] == json!({"type": "summarize"})
}
