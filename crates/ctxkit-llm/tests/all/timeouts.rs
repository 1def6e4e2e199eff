//! Time limits and retry notices against servers that misbehave at the socket level: a stream that
//! goes quiet, a server that accepts and never answers, a listener whose backlog is full, a port
//! nobody listens on, a 429 with `Retry-After`; and one connection pool shared by the conversation
//! and the summaries against a server that serves one connection at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ctxkit_llm::{
    ChatDelta, EnvSettings, HttpClient, LlmError, LlmOptions, ModelClient, ModelRole, Retried,
    RetryNotice, RetryPolicy, TimeoutPhase, Timeouts, resolve_model,
};
use ctxkit_protocol::ContentBlock;
use ctxkit_summarizer::Summarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{KEY, options, without_duration};

/// Options for `vllm/qwen3-coder` (Chat Completions) at `base_url`, with quick retries and the
/// given limits.
fn local_options(base_url: String, retries: u32, timeouts: Timeouts) -> LlmOptions {
    LlmOptions {
        model: Some("vllm/qwen3-coder".to_owned()),
        base_url: Some(base_url),
        api_key: Some(ctxkit_secrets::ApiKey::new(KEY)),
        retry: RetryPolicy {
            max_retries: retries,
            base_delay: Duration::from_millis(5),
            max_agent_delay: Duration::from_secs(5),
            max_delay: Some(Duration::from_secs(5)),
            restart_broken_replies: true,
        },
        timeouts,
        ..LlmOptions::default()
    }
}

fn limits(connect_ms: u64, first_byte_ms: u64, idle_ms: u64) -> Timeouts {
    Timeouts {
        connect: Duration::from_millis(connect_ms),
        first_byte: Duration::from_millis(first_byte_ms),
        idle: Duration::from_millis(idle_ms),
    }
}

fn resolved(options: &LlmOptions) -> ctxkit_llm::ProviderConfig {
    resolve_model(options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap()
}

/// Streams one conversation request; the reply (or error) and every delta shown.
async fn stream(
    client: &ModelClient,
) -> (
    Result<ctxkit_protocol::AssistantMessage, LlmError>,
    Vec<ChatDelta>,
) {
    let mut shown = Vec::new();
    let mut sink = |delta: ChatDelta| shown.push(delta);
    let result = client
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut sink,
        )
        .await;
    (result, shown)
}

fn notices(shown: &[ChatDelta]) -> Vec<RetryNotice> {
    shown
        .iter()
        .filter_map(|delta| match delta {
            ChatDelta::Retrying(notice) => Some(notice.clone()),
            ChatDelta::Text(_)
            | ChatDelta::Thinking(_)
            | ChatDelta::ToolCall { .. }
            | ChatDelta::BlockEnd => None,
        })
        .collect()
}

/// Reads one HTTP request (head and `content-length` body); `false` at end of stream.
fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
    let mut length = 0;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
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
    reader.read_exact(&mut body).is_ok()
}

/// A server that sends the start of a Chat Completions stream, then stays silent for a minute.
fn quiet_after_one_piece() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((socket, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(socket.try_clone().unwrap());
        read_request(&mut reader);
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "Partial answer"}}]});
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
        let mut socket = socket;
        let _ = socket.write_all(format!("{head}data: {chunk}\n\n").as_bytes());
        std::thread::sleep(Duration::from_secs(60));
    });
    format!("http://{address}")
}

#[tokio::test]
async fn a_stream_that_goes_quiet_ends_within_the_idle_limit_keeping_what_arrived() {
    let options = local_options(quiet_after_one_piece(), 2, limits(1000, 2000, 300));
    let client = ModelClient::new(resolved(&options)).unwrap();
    let started = Instant::now();
    let (result, shown) = stream(&client).await;
    let elapsed = started.elapsed();
    let reply = result.unwrap();
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    // The server stays quiet for a minute: ending within 20 s (a margin a loaded machine keeps)
    // can only be the idle limit; the message below names it.
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(
        reply.error_message.as_deref(),
        Some("Provider `vllm` sent nothing of its reply for 0.3 s (`llm.timeouts.idleSeconds`)")
    );
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Partial answer"),
        "{:?}",
        reply.content
    );
    assert_eq!(shown[0], ChatDelta::Text("Partial answer".into()));
    // A reply that had started is not sent again: its text was already shown.
    assert!(notices(&shown).is_empty());
}

/// A server that sends the start of a Chat Completions stream, then only keep-alives (an SSE
/// comment, as OpenRouter's `: OPENROUTER PROCESSING`, and a chunk with an empty delta) every
/// 50 ms for a minute.
fn keep_alives_after_one_piece() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((socket, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(socket.try_clone().unwrap());
        read_request(&mut reader);
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "Partial answer"}}]});
        let empty = json!({"choices": [{"index": 0, "delta": {"content": ""}}], "usage": null});
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
        let mut socket = socket;
        let _ = socket.write_all(format!("{head}data: {chunk}\n\n").as_bytes());
        for _ in 0..1200 {
            std::thread::sleep(Duration::from_millis(50));
            let alive = format!(": OPENROUTER PROCESSING\n\ndata: {empty}\n\n");
            if socket.write_all(alive.as_bytes()).is_err() {
                return;
            }
        }
    });
    format!("http://{address}")
}

/// QA r103: keep-alives reset the idle limit, so a stream that sent nothing else hung for ever.
#[tokio::test]
async fn a_stream_of_keep_alives_alone_ends_within_the_idle_limit_keeping_what_arrived() {
    let options = local_options(keep_alives_after_one_piece(), 2, limits(1000, 2000, 300));
    let client = ModelClient::new(resolved(&options)).unwrap();
    let started = Instant::now();
    let (result, shown) = stream(&client).await;
    let elapsed = started.elapsed();
    let reply = result.unwrap();
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(
        reply.error_message.as_deref(),
        Some("Provider `vllm` sent nothing of its reply for 0.3 s (`llm.timeouts.idleSeconds`)")
    );
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Partial answer"),
        "{:?}",
        reply.content
    );
    assert!(notices(&shown).is_empty());
}

/// A server that accepts every connection, reads the request and never answers; counts requests.
fn never_answers() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { return };
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(socket);
                while read_request(&mut reader) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    (format!("http://{address}"), requests)
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_first_byte_limit_is_retried_then_reported() {
    let (url, requests) = never_answers();
    // The idle limit is a minute, so the three attempts (0.2 s each and short backoffs) ending
    // within 20 s can only be the first-byte limit, however loaded the machine.
    let options = local_options(url, 2, limits(1000, 200, 60_000));
    let client = ModelClient::new(resolved(&options)).unwrap();
    let started = Instant::now();
    let (result, shown) = stream(&client).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Timeout {
                phase: TimeoutPhase::FirstByte,
                retried: Retried { retries: 2, .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        without_duration(&error.to_string()),
        "Provider `vllm` sent no response for 0.2 s (`llm.timeouts.firstByteSeconds`); tried 3 times over _ s"
    );
    assert_eq!(requests.load(Ordering::SeqCst), 3);
    let notices = notices(&shown);
    assert_eq!(notices.len(), 2);
    assert_eq!(notices[0].reason, "no response for 0.2 s");
    assert_eq!((notices[0].attempt, notices[0].max_retries), (1, 2));
    assert_eq!(notices[1].attempt, 2);
    // The stored reply says the same in one line.
    let reply = client.failed_reply(&error);
    assert_eq!(reply.error_message, Some(error.to_string()));

    // A summary through the same server fails the same way instead of waiting forever.
    let summary = client
        .summarize(crate::common::request(None), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        summary.message.contains("sent no response for 0.2 s"),
        "{}",
        summary.message
    );
}

/// A listener whose accept queue is full (backlog 0, one connection waiting): the kernel drops
/// further connection attempts, so connecting hangs until the client gives up.
fn full_backlog() -> (tokio::net::TcpListener, SocketAddr, Vec<TcpStream>) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let address = listener.local_addr().unwrap();
    let mut waiting = Vec::new();
    loop {
        match TcpStream::connect_timeout(&address, Duration::from_millis(300)) {
            Ok(stream) => waiting.push(stream),
            Err(_) => break,
        }
        assert!(waiting.len() < 64, "the backlog never filled");
    }
    (listener, address, waiting)
}

#[tokio::test]
async fn a_connection_that_cannot_be_opened_hits_the_connect_limit() {
    let (_listener, address, _waiting) = full_backlog();
    let options = local_options(format!("http://{address}"), 1, limits(200, 5000, 5000));
    let client = ModelClient::new(resolved(&options)).unwrap();
    let started = Instant::now();
    let (result, shown) = stream(&client).await;
    let elapsed = started.elapsed();
    let error = result.unwrap_err();
    // A connection to a full backlog hangs for minutes: within 20 s is the connect limit.
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    assert_eq!(
        without_duration(&error.to_string()),
        "Could not connect to provider `vllm` within 0.2 s (`llm.timeouts.connectSeconds`); tried 2 times over _ s"
    );
    assert_eq!(notices(&shown)[0].reason, "no connection within 0.2 s");
}

#[tokio::test]
async fn a_refused_connection_is_retried_visibly_then_reported_with_the_count() {
    let address = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The listener is gone: the port refuses connections.
    let options = local_options(format!("http://{address}"), 3, Timeouts::default());
    let client = ModelClient::new(resolved(&options)).unwrap();
    let (result, shown) = stream(&client).await;
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Network {
                retried: Retried { retries: 3, .. },
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        without_duration(&error.to_string()).ends_with("; tried 4 times over _ s"),
        "{error}"
    );
    let notices = notices(&shown);
    assert_eq!(notices.len(), 3);
    assert!(
        notices[0].reason.starts_with("connection refused"),
        "{}",
        notices[0].reason
    );
    assert_eq!(
        notices
            .iter()
            .map(|notice| notice.delay)
            .collect::<Vec<_>>(),
        [5, 10, 20].map(Duration::from_millis)
    );
}

#[tokio::test]
async fn a_429_with_retry_after_is_announced_with_the_delay_asked_for() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string(r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let chunk =
        json!({"choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": "stop"}]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            format!("data: {chunk}\n\ndata: [DONE]\n\n"),
            "text/event-stream",
        ))
        .mount(&server)
        .await;
    let client = ModelClient::new(resolved(&options("vllm/qwen3-coder", &server))).unwrap();
    let started = Instant::now();
    let (result, shown) = stream(&client).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    let reply = result.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    let notices = notices(&shown);
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].delay, Duration::from_secs(1));
    assert_eq!(notices[0].status, Some(429));
    assert_eq!(
        notices[0].describe(),
        "Retrying in 1 s (1 of 2): 429 Rate limit reached"
    );
    // The notice came before the reply's text.
    assert!(matches!(shown[0], ChatDelta::Retrying(_)));
}

/// A server that serves one connection at a time, keep-alive: it answers every request on a
/// connection until the client closes it, and only then accepts the next one.
fn one_connection_at_a_time() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut writer = socket.try_clone().unwrap();
            let mut reader = BufReader::new(socket);
            while read_request(&mut reader) {
                let body = json!({
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "## Goal\nShip it."}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5}
                })
                .to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                if writer.write_all(response.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    (format!("http://{address}"), accepted)
}

#[tokio::test]
async fn a_summary_shares_the_conversations_connection_instead_of_waiting_for_a_second_one() {
    let (url, accepted) = one_connection_at_a_time();
    let options = local_options(url, 0, limits(1000, 500, 1000));
    let http = HttpClient::new(Duration::from_secs(1)).unwrap();
    let chat = ModelClient::with_http(resolved(&options), http.clone()).unwrap();
    let summaries = ModelClient::with_http(
        resolve_model(&options, &EnvSettings::default(), ModelRole::Compaction)
            .unwrap()
            .unwrap(),
        http,
    )
    .unwrap();
    let cancel = CancellationToken::new();
    chat.chat(&request(vec![user("hi")]), &cancel)
        .await
        .unwrap();
    // The conversation's connection stays open (keep-alive); the summary goes over it.
    let summary = summaries
        .summarize(crate::common::request(None), cancel.clone())
        .await
        .unwrap();
    assert_eq!(summary.text, "## Goal\nShip it.");
    // Counted, not timed: the server took one connection for both requests (a second one would
    // have waited in its backlog and run into the first-byte limit, a 0.5 s that a loaded machine
    // can also take).
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // Two clients with pools of their own: the second waits behind the first's open connection
    // and runs into the first-byte limit (what a summary did before the pool was shared).
    let own = ModelClient::new(resolved(&options)).unwrap();
    let error = own
        .summarize(crate::common::request(None), cancel)
        .await
        .unwrap_err();
    assert!(
        error.message.contains("sent no response for 0.5 s"),
        "{}",
        error.message
    );
}
