//! Issue 42: a provider that answers without end. Before, a run grew past 1 GiB in seconds; now an
//! answer is cut at `llm.maxReplyBytes` (here 1 MiB) with an error that names the setting, and
//! what arrived is kept. One server per attack: endless text, endless thinking, an endless tool
//! call's arguments (Chat Completions streams), and an endless whole (not streamed) answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ctxkit_llm::{
    ChatDelta, EnvSettings, LlmOptions, ModelClient, ModelRole, RetryPolicy, resolve_model,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::chat::{request, user};
use crate::common::KEY;

const LIMIT: u64 = 1 << 20;

fn read_request(reader: &mut BufReader<TcpStream>) {
    let mut length = 0;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
}

/// A server that answers the first request with `head`, then `piece` again and again until the
/// client goes away.
fn endless(head: &'static str, piece: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((socket, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(socket.try_clone().unwrap());
        read_request(&mut reader);
        let mut socket = socket;
        if socket.write_all(head.as_bytes()).is_err() {
            return;
        }
        let block = piece.repeat(64);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if socket.write_all(block.as_bytes()).is_err() {
                return;
            }
        }
    });
    format!("http://{address}")
}

const STREAM: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
const WHOLE: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"choices\":[{\"message\":{\"content\":\"";

fn event(delta: serde_json::Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": delta}]})
    )
}

fn client(base_url: String) -> ModelClient {
    let options = LlmOptions {
        model: Some("vllm/qwen3-coder".to_owned()),
        base_url: Some(base_url),
        api_key: Some(ctxkit_secrets::ApiKey::new(KEY)),
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(5),
            max_agent_delay: Duration::from_secs(5),
            max_delay: Some(Duration::from_secs(1)),
            restart_broken_replies: true,
        },
        max_reply_bytes: Some(LIMIT),
        ..LlmOptions::default()
    };
    let config = resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap();
    ModelClient::new(config).unwrap()
}

#[tokio::test]
async fn an_endless_answer_is_cut_at_the_reply_limit() {
    let attacks = [
        (
            "endless text",
            endless(STREAM, event(json!({"content": "word "}))),
        ),
        (
            "endless thinking",
            endless(STREAM, event(json!({"reasoning_content": "hmm "}))),
        ),
        (
            "an endless tool call",
            endless(
                STREAM,
                event(
                    json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "aaaa"}}]}),
                ),
            ),
        ),
    ];
    for (name, url) in attacks {
        let client = client(url);
        let started = Instant::now();
        let mut shown = 0usize;
        let mut sink = |delta: ChatDelta| {
            if let ChatDelta::Text(text) | ChatDelta::Thinking(text) = delta {
                shown += text.len();
            }
        };
        let reply = client
            .chat_streaming(
                &request(vec![user("hi")]),
                &CancellationToken::new(),
                &mut sink,
            )
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(20), "{name}");
        assert_eq!(reply.stop_reason.as_deref(), Some("error"), "{name}");
        let message = reply.error_message.clone().unwrap_or_default();
        assert!(message.contains("`llm.maxReplyBytes`"), "{name}: {message}");
        let kept = serde_json::to_string(&reply.content).unwrap().len() as u64;
        assert!(kept <= LIMIT * 2, "{name}: {kept} bytes kept");
        assert!(shown as u64 <= LIMIT, "{name}: {shown} bytes shown");
    }
}

#[tokio::test]
async fn an_endless_whole_answer_is_refused_at_the_reply_limit() {
    let url = endless(WHOLE, "word ".to_owned());
    let client = client(url);
    let error = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("`llm.maxReplyBytes`"), "{error}");
}
