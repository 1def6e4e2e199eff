//! The agent over the real HTTP client and a provider that misbehaves: a stream that goes quiet
//! ends the prompt with one line within the idle limit and the session keeps what arrived; a 429
//! is announced as a `ProviderRetry` event with the delay the provider asked for.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxkit_agent::{AgentEvent, PromptOutcome};
use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet};
use ctxkit_llm::{
    ChatDelta, EnvSettings, LlmOptions, ModelClient, ModelRole, RetryPolicy, Timeouts,
    resolve_model,
};
use ctxkit_protocol::{AgentMessage, ContentBlock};
use ctxkit_secrets::ApiKey;
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use serde_json::json;

use crate::support::Recorder;

/// Reads one HTTP request (head and `content-length` body).
fn read_request(reader: &mut BufReader<TcpStream>) {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
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

/// A Chat Completions server: the first request gets `first` (raw HTTP) and the connection is
/// closed; the second gets the start of a stream, then silence for a minute.
fn provider(first: Option<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut answers = first.into_iter();
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            read_request(&mut reader);
            if let Some(answer) = answers.next() {
                let _ = socket.write_all(answer.as_bytes());
                continue;
            }
            let chunk =
                json!({"choices": [{"index": 0, "delta": {"content": "Half of the answer"}}]});
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
            let _ = socket.write_all(format!("{head}data: {chunk}\n\n").as_bytes());
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
    });
    format!("http://{address}")
}

async fn agent_over(base_url: String, dir: &tempfile::TempDir) -> (ctxkit_agent::Agent, Engine) {
    let options = LlmOptions {
        model: Some("vllm/qwen3-coder".to_owned()),
        base_url: Some(base_url),
        api_key: Some(ApiKey::new("sk-test-0123")),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(5),
            max_agent_delay: Duration::from_secs(5),
            max_delay: Some(Duration::from_secs(5)),
            restart_broken_replies: true,
        },
        timeouts: Timeouts {
            connect: Duration::from_secs(1),
            first_byte: Duration::from_secs(2),
            idle: Duration::from_millis(300),
        },
        ..LlmOptions::default()
    };
    let config = resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap();
    let session = Session::create(&dir.path().display().to_string(), &dir.path().join("s"));
    let engine = Engine::new(
        session,
        EngineOptions {
            settings: EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!({}))),
            model: None,
            summarizer: Arc::new(OfflineSummarizer::default()),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    let agent = ctxkit_agent::Agent::new(
        engine.clone(),
        Arc::new(ModelClient::new(config).unwrap()),
        ctxkit_agent::ToolRegistry::coding(),
        ctxkit_agent::AgentOptions {
            system_prompt: "You are a coding agent.".to_owned(),
            max_tokens: Some(1024),
            reasoning: None,
            cwd: dir.path().to_owned(),
            bash_timeout: Duration::from_secs(10),
            shell: Default::default(),
            pass_env: Vec::new(),
            auto_resize_images: true,
            max_tool_output_bytes: None,
        },
    )
    .await;
    (agent, engine)
}

#[tokio::test]
async fn a_provider_that_goes_quiet_fails_the_prompt_in_one_line_and_the_session_keeps_everything()
{
    let body = r#"{"error":{"message":"Slow down please"}}"#;
    let too_many = format!(
        "HTTP/1.1 429 Too Many Requests\r\nretry-after: 0.2\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let (mut agent, engine) = agent_over(provider(Some(too_many)), &dir).await;
    let observed = Recorder::default();
    let started = Instant::now();
    let outcome = agent
        .prompt(
            "explain the parser".to_owned(),
            &mut ctxkit_agent::ApproveAll,
            &observed,
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(
        outcome,
        PromptOutcome::Failed(
            "Provider `vllm` sent nothing of its reply for 0.3 s (`llm.timeouts.idleSeconds`)"
                .to_owned()
        )
    );

    let events = observed.0.lock().unwrap().clone();
    let retries: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ProviderRetry(notice) => Some(notice.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 1, "{events:?}");
    assert_eq!(retries[0].delay, Duration::from_millis(200));
    assert_eq!(
        retries[0].describe(),
        "Retrying in 0.2 s (1 of 2): 429 Slow down please"
    );
    assert!(events.iter().any(|event| matches!(
        event,
        AgentEvent::Delta(ChatDelta::Text(text)) if text == "Half of the answer"
    )));
    // The retry notice is an event of its own, never a delta.
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, AgentEvent::Delta(ChatDelta::Retrying(_))))
    );

    // The session file holds the prompt and the reply as far as it came, stored as an error reply.
    let path = engine
        .with_session(|session| session.path().map(std::path::Path::to_owned))
        .await
        .unwrap();
    let session = Session::open(&path).unwrap();
    let messages: Vec<AgentMessage> = session
        .entries()
        .iter()
        .filter_map(|entry| entry.parse_message()?.ok())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].as_user().is_some());
    let reply = messages[1].as_assistant().unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(
        reply.error_message.as_deref(),
        Some("Provider `vllm` sent nothing of its reply for 0.3 s (`llm.timeouts.idleSeconds`)")
    );
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Half of the answer"),
        "{:?}",
        reply.content
    );
}
