//! `ctxkit chat` in a real terminal (tmux) against a provider that first answers 429 with
//! `Retry-After`: the spinner line says that the request is retried, when, and why, and the answer
//! that follows is shown.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use serde_json::json;

use crate::chat::{Tmux, start_chat};

/// A Chat Completions server: the first request gets a 429 asking for a 3 s wait, the next ones a
/// streamed answer.
fn rate_limited_once() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (index, socket) in listener.incoming().flatten().enumerate() {
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
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
            let mut socket = socket;
            if index == 0 {
                let body = r#"{"error":{"message":"rate limited","type":"requests"}}"#;
                let _ = write!(
                    socket,
                    "HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                continue;
            }
            let chunk = json!({"choices": [{"index": 0,
                "delta": {"role": "assistant", "content": "Answer after the wait."},
                "finish_reason": "stop"}]});
            let usage =
                json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}});
            let _ = write!(
                socket,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {chunk}\n\ndata: {usage}\n\ndata: [DONE]\n\n"
            );
        }
    });
    url
}

#[test]
fn a_rate_limited_request_says_so_on_the_spinner_line_then_answers() {
    if !Tmux::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is missing in CI; `.ci/run` installs it"
        );
        #[allow(clippy::print_stderr, reason = "the skip must be visible")]
        {
            eprintln!("SKIPPED: tmux is not installed");
        }
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let settings = json!({
        "defaultProvider": "mock",
        "defaultModel": "mock/coder",
        "llm": {
            "api": "openai-completions",
            "baseUrl": rate_limited_once(),
            "apiKey": "mock-key",
            "models": [{"provider": "mock", "id": "coder", "contextWindow": 32000, "maxOutput": 2048}]
        }
    });
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let tmux = start_chat(&project, home.path(), "");
    tmux.wait_idle(1);
    tmux.line("hello");
    let screen = tmux.wait_for("Retrying in 3 s (1 of 3): 429 rate limited");
    assert!(!screen.contains("Answer after the wait."), "{screen}");
    let screen = tmux.wait_for("Answer after the wait.");
    assert!(
        !screen.contains("Retrying in"),
        "the spinner line is gone: {screen}"
    );
    tmux.wait_idle(2);
}
