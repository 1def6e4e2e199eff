//! Anthropic message threads against a mock Messages server that keeps threads as the API
//! documents them: a `create` opens one, a `continue` names the reply it goes on from and sends
//! only the new messages, and a thread the server forgot (expired) is rejected with
//! `thread_not_found`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ctxkit_llm::{LlmOptions, MessageThreads, ModelClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client_with, options};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

/// The mock's threads: reply id → how many messages the thread held with that reply.
#[derive(Default)]
struct Threads {
    held: Mutex<HashMap<String, usize>>,
    replies: AtomicUsize,
    /// Forget every thread before the next request (expiry on demand).
    expire: AtomicBool,
}

#[derive(Clone, Default)]
struct ThreadServer(Arc<Threads>);

impl Respond for ThreadServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let threads = &self.0;
        let body: Value = request.body_json().unwrap();
        if threads.expire.swap(false, Ordering::SeqCst) {
            threads.held.lock().unwrap().clear();
        }
        let sent = body["messages"].as_array().map_or(0, Vec::len);
        let held_before = match body["thread"]["type"].as_str() {
            Some("continue") => {
                let previous = body["thread"]["previous_message_id"].as_str().unwrap();
                let Some(held) = threads.held.lock().unwrap().remove(previous) else {
                    return ResponseTemplate::new(404).set_body_json(json!({"type": "error",
                        "error": {"type": "not_found_error", "message": "thread not found",
                        "details": {"error_code": "thread_not_found"}}}));
                };
                assert!(body.get("system").is_none() && body.get("tools").is_none());
                held
            }
            _ => 0,
        };
        let number = threads.replies.fetch_add(1, Ordering::SeqCst) + 1;
        let id = format!("msg_{number}");
        threads
            .held
            .lock()
            .unwrap()
            .insert(id.clone(), held_before + sent + 1);
        let events = [
            json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("answer {number}")}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
            json!({"type": "message_stop"}),
        ];
        let text: String = events
            .iter()
            .map(|data| {
                format!(
                    "event: {}\ndata: {data}\n\n",
                    data["type"].as_str().unwrap()
                )
            })
            .collect();
        ResponseTemplate::new(200).set_body_raw(text, "text/event-stream")
    }
}

async fn server() -> (MockServer, ThreadServer) {
    let server = MockServer::start().await;
    let threads = ThreadServer::default();
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(threads.clone())
        .mount(&server)
        .await;
    (server, threads)
}

fn threaded(server: &MockServer) -> LlmOptions {
    let mut settings = options(MODEL, server);
    settings.anthropic_message_threads = Some(true);
    settings
}

async fn say(client: &ModelClient, messages: &mut Vec<ctxkit_protocol::AgentMessage>, text: &str) {
    messages.push(user(text));
    let reply = client
        .chat_streaming(
            &request(messages.clone()),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert!(!reply.is_aborted_or_error(), "{reply:?}");
    messages.push(ctxkit_protocol::AgentMessage::Assistant(reply));
}

async fn sent(server: &MockServer) -> Vec<(Value, Option<String>)> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| {
            let beta = request
                .headers
                .get("anthropic-beta")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            (request.body_json().unwrap(), beta)
        })
        .collect()
}

#[tokio::test]
async fn turns_continue_the_thread_with_only_their_new_messages() {
    let (server, _) = server().await;
    let threads = MessageThreads::new();
    let client = client_with(&threaded(&server)).with_message_threads(&threads, "session-1");
    let mut messages = Vec::new();
    for text in ["one", "two", "three"] {
        say(&client, &mut messages, text).await;
    }
    let sent = sent(&server).await;
    assert_eq!(sent[0].0["thread"], json!({"type": "create"}));
    assert_eq!(sent[0].0["messages"].as_array().unwrap().len(), 1);
    assert_eq!(
        sent[1].0["thread"],
        json!({"type": "continue", "previous_message_id": "msg_1"})
    );
    assert_eq!(sent[1].0["messages"].as_array().unwrap().len(), 1);
    assert_eq!(sent[1].0["messages"][0]["content"][0]["text"], "two");
    assert!(sent[1].0.get("system").is_none());
    assert_eq!(sent[2].0["thread"]["previous_message_id"], "msg_2");
    for (_, beta) in &sent {
        assert!(
            beta.as_deref()
                .is_some_and(|beta| beta.contains("message-threads-2026-08-12"))
        );
    }
}

#[tokio::test]
async fn an_expired_thread_is_sent_again_whole_as_a_new_thread() {
    let (server, mock) = server().await;
    let threads = MessageThreads::new();
    let client = client_with(&threaded(&server)).with_message_threads(&threads, "session-1");
    let mut messages = Vec::new();
    say(&client, &mut messages, "one").await;
    mock.0.expire.store(true, Ordering::SeqCst);
    say(&client, &mut messages, "two").await;
    say(&client, &mut messages, "three").await;
    let sent = sent(&server).await;
    assert_eq!(sent.len(), 4, "create, rejected continue, create, continue");
    assert_eq!(sent[1].0["thread"]["type"], "continue");
    assert_eq!(sent[2].0["thread"], json!({"type": "create"}));
    assert_eq!(sent[2].0["messages"].as_array().unwrap().len(), 3);
    assert_eq!(sent[3].0["thread"]["previous_message_id"], "msg_2");
}

#[tokio::test]
async fn a_changed_earlier_message_sends_the_whole_request() {
    let (server, _) = server().await;
    let threads = MessageThreads::new();
    let client = client_with(&threaded(&server)).with_message_threads(&threads, "session-1");
    let mut messages = Vec::new();
    say(&client, &mut messages, "one").await;
    say(&client, &mut messages, "two").await;
    // A compaction: the first two messages become a summary.
    messages.drain(..2);
    messages.insert(0, user("summary of one"));
    say(&client, &mut messages, "three").await;
    let sent = sent(&server).await;
    assert_eq!(sent[2].0["thread"], json!({"type": "create"}));
    assert_eq!(sent[2].0["messages"].as_array().unwrap().len(), 4);
    assert!(sent[2].0.get("system").is_some());
}

#[tokio::test]
async fn sessions_and_models_never_share_a_thread() {
    let (server, _) = server().await;
    let threads = MessageThreads::new();
    let first = client_with(&threaded(&server)).with_message_threads(&threads, "session-1");
    let mut messages = Vec::new();
    say(&first, &mut messages, "one").await;
    // The same conversation in another session (a fork) opens its own thread.
    let fork = client_with(&threaded(&server)).with_message_threads(&threads, "session-2");
    let mut forked = messages.clone();
    say(&fork, &mut forked, "two").await;
    // The same session on another model opens its own thread too.
    let mut other = threaded(&server);
    other.model = Some("anthropic/claude-opus-4-5".into());
    let other = client_with(&other).with_message_threads(&threads, "session-1");
    say(&other, &mut messages, "two").await;
    let sent = sent(&server).await;
    assert_eq!(sent[1].0["thread"], json!({"type": "create"}));
    assert_eq!(sent[2].0["thread"], json!({"type": "create"}));
}

#[tokio::test]
async fn threads_are_off_away_from_anthropic_unless_set_and_without_caching() {
    let (server, _) = server().await;
    let threads = MessageThreads::new();
    // The mock is not api.anthropic.com: off by default.
    let default = client_with(&options(MODEL, &server)).with_message_threads(&threads, "a");
    let mut no_cache = threaded(&server);
    no_cache.anthropic_cache_retention = ctxkit_llm::CacheRetention::None;
    let no_cache = client_with(&no_cache).with_message_threads(&threads, "b");
    // On, but the client is bound to no conversation.
    let unbound = client_with(&threaded(&server));
    for client in [&default, &no_cache, &unbound] {
        let mut messages = Vec::new();
        say(client, &mut messages, "one").await;
        say(client, &mut messages, "two").await;
    }
    for (body, beta) in sent(&server).await {
        assert!(body.get("thread").is_none(), "{body}");
        assert!(!beta.unwrap_or_default().contains("message-threads"));
    }
}

#[test]
fn threads_are_on_by_default_on_anthropics_endpoint_for_the_agent_model_only() {
    let settings = LlmOptions {
        model: Some(MODEL.into()),
        api_key: Some(ctxkit_secrets::ApiKey::new("k")),
        ..LlmOptions::default()
    };
    let env = ctxkit_llm::EnvSettings::default();
    let resolve = |settings: &LlmOptions, role| {
        ctxkit_llm::resolve_model(settings, &env, role)
            .unwrap()
            .unwrap()
    };
    assert!(resolve(&settings, ctxkit_llm::ModelRole::Agent).message_threads);
    assert!(!resolve(&settings, ctxkit_llm::ModelRole::Compaction).message_threads);
    let off = LlmOptions {
        anthropic_message_threads: Some(false),
        ..settings
    };
    assert!(!resolve(&off, ctxkit_llm::ModelRole::Agent).message_threads);
}
