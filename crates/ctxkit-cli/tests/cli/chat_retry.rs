//! `ctxkit chat` in a real terminal (tmux) against providers that misbehave: one that first
//! answers 429 with `Retry-After` (the spinner line says that the request is retried, when, and
//! why, and the answer that follows is shown), one that goes quiet in the middle of a reply (the
//! turn ends in one line within `llm.timeouts.idleSeconds`, the text that arrived is kept).

use std::io::Write;
use std::net::{TcpListener, TcpStream};

use serde_json::json;

use crate::chat::{start_chat, tmux_missing};
use crate::chat_stream::read_http_request;

/// A Chat Completions server: the first request gets a 429 asking for a 3 s wait, the next ones a
/// streamed answer.
fn rate_limited_once() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (index, socket) in listener.incoming().flatten().enumerate() {
            let mut socket = read_request(socket);
            if index == 0 {
                let body = r#"{"error":{"message":"rate limited","type":"requests"}}"#;
                let _ = write!(
                    socket,
                    "HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                continue;
            }
            // The retry takes a while, so the screen during it can be seen.
            std::thread::sleep(std::time::Duration::from_secs(3));
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

/// Reads one request from `socket`; the socket to answer on.
fn read_request(socket: TcpStream) -> TcpStream {
    read_http_request(&socket);
    socket
}

/// A Chat Completions server that streams the start of a reply, then sends nothing for a minute.
fn quiet_mid_reply() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut socket = read_request(socket);
                let chunk = json!({"choices": [{"index": 0,
                    "delta": {"role": "assistant", "content": "The first half arrived."}}]});
                let _ = write!(
                    socket,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {chunk}\n\n"
                );
                std::thread::sleep(std::time::Duration::from_secs(60));
            });
        }
    });
    url
}

/// A temp home whose settings point `ctxkit chat` at `base_url` (Chat Completions), with `llm`
/// settings added.
fn home_for(base_url: &str, llm: &serde_json::Value) -> (tempfile::TempDir, std::path::PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut settings = json!({
        "defaultProvider": "mock",
        "defaultModel": "mock/coder",
        "llm": {
            "api": "openai-completions",
            "baseUrl": base_url,
            "apiKey": "mock-key",
            "models": [{"provider": "mock", "id": "coder", "contextWindow": 32000, "maxOutput": 2048}]
        }
    });
    for (key, value) in llm.as_object().unwrap() {
        settings["llm"][key] = value.clone();
    }
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    (home, project)
}

#[test]
fn a_reply_that_goes_quiet_ends_in_one_line_and_keeps_what_arrived() {
    if tmux_missing() {
        return;
    }
    let (home, project) = home_for(&quiet_mid_reply(), &json!({"timeouts": {"idleSeconds": 1}}));
    let tmux = start_chat(&project, home.path(), "");
    tmux.wait_idle(1);
    let started = std::time::Instant::now();
    tmux.line("explain");
    let screen = tmux.wait_for(
        "Error: Provider `mock` sent nothing of its reply for 1 s (`llm.timeouts.idleSeconds`)",
    );
    // The server stays quiet for a minute: the error within 30 s (a loaded machine's margin) is
    // the 1 s idle limit.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(screen.contains("The first half arrived."), "{screen}");
    tmux.wait_idle(2);
    let session = std::fs::read_dir(home.path().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|dir| std::fs::read_dir(dir.path()).unwrap().flatten())
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .collect::<String>();
    assert!(
        session.contains("The first half arrived.") && session.contains("llm.timeouts.idleSeconds"),
        "{session}"
    );
}

#[test]
fn a_rate_limited_request_says_so_on_the_spinner_line_then_answers() {
    if tmux_missing() {
        return;
    }
    let (home, project) = home_for(&rate_limited_once(), &json!({}));
    let tmux = start_chat(&project, home.path(), "");
    tmux.wait_idle(1);
    tmux.line("hello");
    let screen = tmux.wait_for("Retrying in 3 s (1 of 3): 429 rate limited");
    assert!(!screen.contains("Answer after the wait."), "{screen}");
    // Issue 41: once the wait is over, the line says the retry is under way, not the wait.
    let screen = tmux.wait_for("Thinking… (retry 1 of 3)");
    assert!(!screen.contains("Retrying in"), "{screen}");
    let screen = tmux.wait_for("Answer after the wait.");
    assert!(
        !screen.contains("Retrying in"),
        "the spinner line is gone: {screen}"
    );
    tmux.wait_idle(2);
}

/// QA r97: the line saying a request did not fit showed the provider's raw 400 JSON body, cut at
/// 160 characters, and the terminal broke it at its last column, inside a number (`50` / `00`).
/// It gives the provider's message as other errors do, its lines broken between words.
#[test]
fn the_overflow_line_gives_the_providers_message_broken_between_words() {
    if tmux_missing() {
        return;
    }
    let world = crate::chat::World::new(16_000, json!({}));
    let message = "This model's maximum context length is 5000 tokens. However, your messages \
                   resulted in 6308 tokens. Please reduce the length of the messages.";
    for _ in 0..4 {
        world.answer(
            wiremock::ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": message, "type": "invalid_request_error", "param": "messages",
            "code": "context_length_exceeded"}})),
        );
    }
    let tmux = world.start("--yes");
    tmux.resize(80, 40);
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("The request did not fit");
    let screen = tmux.wait_idle(2);
    let start = screen.find("The request did not fit").unwrap();
    let shown: Vec<&str> = screen[start..].lines().take(4).collect();
    assert!(!screen.contains(r#"{"error""#), "{screen}");
    // Every break between two of its lines falls between words: the message reads back whole
    // with the lines joined by spaces.
    let joined = shown.join(" ");
    let expected = format!(
        "The request did not fit the model's context window: Provider `mock` returned HTTP 400: \
         {message}"
    );
    assert!(joined.starts_with(&expected), "{screen}");
    assert!(
        shown.iter().all(|line| line.chars().count() < 80),
        "{screen}"
    );
}
