//! A provider's answer of any bytes to a streamed conversation request, in each of the four wire
//! formats, as a broken server, a proxy or a hostile one would send it: whatever it holds, the
//! client returns within a time limit, and the credentials it sent (the key, a token header)
//! appear nowhere in what it returns or shows — not in the reply a session would store, not in an
//! error, not in what the screen is shown between two block ends.
//!
//! The input's first line names the format (`anthropic`, `openai-chat`, `openai-responses`,
//! `gemini`), then optionally `summary` to ask for a compaction summary (`Summarizer::summarize`)
//! rather than a conversation reply, and ` whole` to answer as JSON rather than as a stream; the
//! rest is the answer's body. `@KEY@` stands for the key and `@TOKEN@` for the header's token, so the mutator can put
//! them anywhere and cut them in two.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_llm::{
    ChatDelta, ChatRequest, EnvSettings, LlmOptions, ModelClient, ModelRole, RetryPolicy,
    resolve_model,
};
use ctxkit_protocol::AgentMessage;
use ctxkit_secrets::ApiKey;
use ctxkit_summarizer::{Summarizer, SummaryPurpose, SummaryRequest, SummarySpan};
use tokio_util::sync::CancellationToken;

/// The key the client sends.
const KEY: &str = "sk-fuzz-KEY-4b7e1a90c3d2";
/// The token of a credential header the client sends.
const TOKEN: &str = "gw-fuzz-TOKEN-5a8c2e7f";
/// How long one answer may take to be read.
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// What the local server answers next: its content type and body.
type Answer = Arc<Mutex<(&'static str, Vec<u8>)>>;

struct World {
    runtime: tokio::runtime::Runtime,
    address: String,
    answer: Answer,
}

thread_local! {
    static WORLD: RefCell<Option<World>> = const { RefCell::new(None) };
}

fn build_world() -> World {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let answer: Answer = Arc::new(Mutex::new(("text/event-stream", Vec::new())));
    let serving = Arc::clone(&answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer_one(stream, &serving);
        }
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    World {
        runtime,
        address,
        answer,
    }
}

/// Reads one request (headers, then the body its length names) and answers it, closing the
/// connection.
fn answer_one(stream: TcpStream, answer: &Answer) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let (content_type, bytes) = answer.lock().unwrap().clone();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        bytes.len()
    )?;
    stream.write_all(&bytes)?;
    stream.flush()
}

/// The model that speaks each format, and the format's name in the input.
const FORMATS: &[(&str, &str)] = &[
    ("anthropic", "anthropic/claude-sonnet-4-5"),
    ("openai-chat", "vllm/qwen3-coder"),
    ("openai-responses", "openai/gpt-5-mini"),
    ("gemini", "google/gemini-2.5-flash"),
];

fn client(model: &str, address: &str) -> ModelClient {
    let options = LlmOptions {
        model: Some(model.to_owned()),
        base_url: Some(address.to_owned()),
        api_key: Some(ApiKey::new(KEY)),
        headers: BTreeMap::from([("X-Gateway-Token".to_owned(), format!("Bearer {TOKEN}"))]),
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        timeout: Some(TIME_LIMIT),
        ..LlmOptions::default()
    };
    let config = resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap();
    ModelClient::new(config).unwrap()
}

fn request() -> ChatRequest {
    let user: AgentMessage = serde_json::from_value(
        serde_json::json!({"role": "user", "content": "hi", "timestamp": 1}),
    )
    .unwrap();
    ChatRequest {
        system_prompt: "You are a coding agent.".into(),
        messages: vec![user],
        tools: Vec::new(),
        max_tokens: None,
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

/// What was shown, in the pieces a screen keeps apart: each block's text or thinking.
fn shown_pieces(shown: &[ChatDelta]) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut thinking = false;
    for delta in shown {
        let (text, is_thinking) = match delta {
            ChatDelta::Text(text) => (text.as_str(), false),
            ChatDelta::Thinking(text) => (text.as_str(), true),
            ChatDelta::ToolCall { name } => {
                pieces.push(name.clone());
                pieces.push(String::new());
                continue;
            }
            ChatDelta::BlockEnd | ChatDelta::Retrying(_) => {
                pieces.push(String::new());
                continue;
            }
        };
        if is_thinking != thinking {
            pieces.push(String::new());
            thinking = is_thinking;
        }
        if let Some(last) = pieces.last_mut() {
            last.push_str(text);
        }
    }
    pieces
}

fn assert_no_credential(what: &str, text: &str) {
    for secret in [KEY, TOKEN] {
        assert!(!text.contains(secret), "{what} holds `{secret}`: {text}");
    }
}

/// Answers a streamed conversation request with the body of `data`; see the module's
/// documentation.
pub fn provider_stream(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (first, body) = text.split_once('\n').unwrap_or((&text, ""));
    let mut words = first.split_whitespace();
    let format = words.next().unwrap_or_default();
    let Some((_, model)) = FORMATS.iter().find(|(name, _)| *name == format) else {
        return;
    };
    let words: Vec<&str> = words.collect();
    let summary = words.contains(&"summary");
    let content_type = if words.contains(&"whole") {
        "application/json"
    } else {
        "text/event-stream"
    };
    let body = body.replace("@KEY@", KEY).replace("@TOKEN@", TOKEN);
    WORLD.with(|cell| {
        let mut cell = cell.borrow_mut();
        let world = cell.get_or_insert_with(build_world);
        *world.answer.lock().unwrap() = (content_type, body.into_bytes());
        let client = client(model, &world.address);
        if summary {
            return check_summary(&world.runtime, &client);
        }
        let mut shown = Vec::new();
        let reply = world.runtime.block_on(async {
            let mut sink = |delta: ChatDelta| shown.push(delta);
            let (request, cancel) = (request(), CancellationToken::new());
            let call = client.chat_streaming(&request, &cancel, &mut sink);
            tokio::time::timeout(TIME_LIMIT, call)
                .await
                .expect("the answer is read within the time limit")
        });
        match reply {
            Ok(reply) => {
                assert_no_credential("the reply", &serde_json::to_string(&reply).unwrap());
                if reply.stop_reason.as_deref() == Some("error") {
                    assert!(reply.error_message.is_some(), "an error reply says why");
                }
            }
            Err(error) => {
                assert_no_credential("the error", &error.to_string());
                assert_no_credential("the error", &format!("{error:?}"));
            }
        }
        for piece in shown_pieces(&shown) {
            assert_no_credential("what was shown", &piece);
        }
    });
}

/// Asks `client` for a summary: the summary or the error holds neither credential.
fn check_summary(runtime: &tokio::runtime::Runtime, client: &ModelClient) {
    let request = SummaryRequest {
        purpose: SummaryPurpose::History,
        system_prompt: "You summarize.".into(),
        user_text: "<conversation>hello</conversation>".into(),
        max_tokens: Some(1000),
        reasoning: None,
        source: SummarySpan::default(),
    };
    let call = client.summarize(request, CancellationToken::new());
    let answer = runtime.block_on(async {
        tokio::time::timeout(TIME_LIMIT, call)
            .await
            .expect("the summary is read within the time limit")
    });
    match answer {
        Ok(summary) => assert_no_credential("the summary", &summary.text),
        Err(error) => assert_no_credential("the error", &format!("{error} {error:?}")),
    }
}
