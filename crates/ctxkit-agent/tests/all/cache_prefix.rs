//! Cache-prefix summary requests (`compaction.cachePrefix`) against a mock server speaking
//! Anthropic Messages and OpenAI Chat Completions: the agent's last request goes out again byte for
//! byte (system prompt, tools, messages), followed by the reply it got and the summary instruction;
//! cache reads reported for it are kept on the compaction; and the fresh prompt is sent when the
//! request cannot be continued.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ctxkit_agent::{
    Agent, AgentOptions, ApproveAll, ChatModel, IgnoreEvents, ModelClient, PromptOutcome,
    ToolRegistry,
};
use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_llm::{ChatRequest, EnvSettings, LlmOptions, ModelRole, RetryPolicy, resolve_model};
use ctxkit_protocol::AssistantMessage;
use ctxkit_secrets::ApiKey;
use ctxkit_session::Session;
use ctxkit_summarizer::Summarizer;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::method};

/// The wire format a test speaks.
#[derive(Clone, Copy)]
enum Wire {
    Anthropic,
    OpenAiChat,
    OpenAiResponses,
}

impl Wire {
    fn model(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic/claude-sonnet-4-5",
            Self::OpenAiChat => "groq/llama-3.3-70b-versatile",
            Self::OpenAiResponses => "openai/gpt-5-mini",
        }
    }

    /// A whole (not streamed) answer with `text`, reporting `cache_read` input tokens read from the
    /// provider's cache.
    fn answer(self, text: &str, cache_read: u64) -> Value {
        match self {
            Self::Anthropic => json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 40, "output_tokens": 30,
                          "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": 0},
            }),
            Self::OpenAiChat => json!({
                "id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 40 + cache_read, "completion_tokens": 30,
                          "prompt_tokens_details": {"cached_tokens": cache_read}},
            }),
            Self::OpenAiResponses => json!({
                "id": "resp_1", "object": "response", "status": "completed",
                "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                            "content": [{"type": "output_text", "text": text}]}],
                "usage": {"input_tokens": 40 + cache_read, "output_tokens": 30,
                          "input_tokens_details": {"cached_tokens": cache_read}},
            }),
        }
    }

    /// The conversation part of a request body: system prompt, tools, messages.
    fn parts(self, body: &Value) -> (Value, Value, Vec<Value>) {
        if let Self::OpenAiResponses = self {
            let input = body["input"].as_array().unwrap().clone();
            return (body["instructions"].clone(), body["tools"].clone(), input);
        }
        let messages = body["messages"].as_array().unwrap().clone();
        match self {
            Self::Anthropic => (body["system"].clone(), body["tools"].clone(), messages),
            // The system prompt is the first message.
            Self::OpenAiChat => (
                messages[0].clone(),
                body["tools"].clone(),
                messages[1..].to_vec(),
            ),
            Self::OpenAiResponses => unreachable!("read above"),
        }
    }
}

/// Answers the first `conversation` requests as the agent's model (reporting `conversation_read`
/// tokens read from the cache), every later one as a summarizer.
struct Scripted {
    wire: Wire,
    conversation: usize,
    conversation_read: u64,
    seen: AtomicUsize,
}

impl Respond for Scripted {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let index = self.seen.fetch_add(1, Ordering::SeqCst);
        let body = if index < self.conversation {
            self.wire.answer(
                &format!("Answer {index}: the parser is in src/parse.rs."),
                self.conversation_read,
            )
        } else {
            self.wire.answer(
                "## Goal\nFix the parser.\n\n## Next Steps\n1. Run the tests.",
                1800,
            )
        };
        ResponseTemplate::new(200).set_body_json(body)
    }
}

fn client(model: &str, server: &MockServer) -> ModelClient {
    let options = LlmOptions {
        model: Some(model.to_owned()),
        base_url: Some(server.uri()),
        api_key: Some(ApiKey::new("sk-test-0123")),
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(5),
            max_agent_delay: Duration::from_secs(5),
            max_delay: Some(Duration::from_secs(1)),
            restart_broken_replies: true,
        },
        timeout: Some(Duration::from_secs(5)),
        ..LlmOptions::default()
    };
    let config = resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap();
    ModelClient::new(config).unwrap()
}

/// The HTTP client answering whole replies (the agent streams with a real client; the request's
/// system prompt, tools and messages are the same either way).
struct Whole(ModelClient);

impl ChatModel for Whole {
    fn info(&self) -> ModelInfo {
        ChatModel::info(&self.0)
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage> {
        ChatModel::chat(&self.0, request, cancel)
    }
}

struct Run {
    server: MockServer,
    engine: Engine,
    agent: Agent,
    _dir: tempfile::TempDir,
}

/// An agent talking to `wire`'s mock, summaries written by `summary_model` (the agent's model when
/// `None`), with `compaction.cachePrefix` as given.
async fn run(wire: Wire, cache_prefix: bool, summary_model: Option<&str>) -> Run {
    run_reading(wire, cache_prefix, summary_model, 0, "recommended").await
}

/// [`run`] with the conversation's replies reporting `conversation_read` cached input tokens,
/// under the context strategy `strategy`.
async fn run_reading(
    wire: Wire,
    cache_prefix: bool,
    summary_model: Option<&str>,
    conversation_read: u64,
    strategy: &str,
) -> Run {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Scripted {
            wire,
            conversation: 2,
            conversation_read,
            seen: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    let model = client(wire.model(), &server);
    let summarizer: Arc<dyn Summarizer> =
        Arc::new(client(summary_model.unwrap_or(wire.model()), &server));
    let settings = EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!({
        "contextStrategy": strategy,
        "compaction": {"cachePrefix": cache_prefix, "keepRecentTokens": 1}
    })));
    let dir = tempfile::tempdir().unwrap();
    let session = Session::create(&dir.path().display().to_string(), &dir.path().join("s"));
    let engine = Engine::new(
        session,
        EngineOptions {
            settings,
            model: None,
            summarizer,
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    let agent = Agent::new(
        engine.clone(),
        Arc::new(Whole(model)),
        ToolRegistry::coding(),
        AgentOptions {
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
    Run {
        server,
        engine,
        agent,
        _dir: dir,
    }
}

impl Run {
    /// Two prompts, then `/compact`; the bodies the mock received and the compaction's details.
    async fn converse_and_compact(&mut self) -> (Vec<Value>, Value) {
        for text in ["Where is the parser?", "Fix the parser, please."] {
            let outcome = self
                .agent
                .prompt(text.to_owned(), &mut ApproveAll, &IgnoreEvents)
                .await
                .unwrap();
            assert_eq!(outcome, PromptOutcome::Answered);
        }
        let end = self
            .engine
            .compact(Some("the parser".into()))
            .await
            .unwrap();
        assert!(end.error.is_none(), "{:?}", end.error);
        let bodies: Vec<Value> = self
            .server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|request| request.body_json().unwrap())
            .collect();
        let details = self
            .engine
            .with_session(|session| {
                let entry = session.leaf_entry().unwrap();
                assert_eq!(entry.type_name(), "compaction");
                let raw: Value = serde_json::from_str(&entry.raw().unwrap()).unwrap();
                raw["details"].clone()
            })
            .await;
        (bodies, details)
    }
}

async fn continues_the_last_request(wire: Wire) -> Vec<Value> {
    let mut run = run(wire, true, None).await;
    let (bodies, details) = run.converse_and_compact().await;
    assert!(bodies.len() >= 3, "{}", bodies.len());
    let (system, tools, request) = wire.parts(&bodies[1]);
    let summary = &bodies[2];
    let (summary_system, summary_tools, summary_messages) = wire.parts(summary);
    // The last request again, byte for byte (cache breakpoints included, whatever they are) …
    assert_eq!(summary_system.to_string(), system.to_string());
    assert_eq!(summary_tools.to_string(), tools.to_string());
    assert!(tools.as_array().is_some_and(|tools| !tools.is_empty()));
    assert_eq!(
        Value::Array(summary_messages[..request.len()].to_vec()).to_string(),
        Value::Array(request.clone()).to_string()
    );
    // … then the reply it got, then the instruction, and nothing else.
    assert_eq!(summary_messages.len(), request.len() + 2);
    assert_eq!(summary_messages[request.len()]["role"], "assistant");
    let instruction = &summary_messages[request.len() + 1];
    assert_eq!(instruction["role"], "user");
    let text = match wire {
        Wire::Anthropic => instruction["content"][0]["text"].as_str().unwrap(),
        Wire::OpenAiChat => instruction["content"].as_str().unwrap(),
        Wire::OpenAiResponses => instruction["content"][0]["text"].as_str().unwrap(),
    };
    assert!(text.starts_with(&Prompts::default().continuation), "{text}");
    assert!(text.contains("## Goal") && text.ends_with("Additional focus: the parser"));
    assert!(!text.contains("<conversation>"));
    // The turn-prefix request of the split turn continues the same conversation.
    for body in &bodies[3..] {
        let (other_system, other_tools, other_messages) = wire.parts(body);
        assert_eq!(other_system, system);
        assert_eq!(other_tools, tools);
        assert_eq!(
            other_messages[..request.len() + 1],
            summary_messages[..request.len() + 1]
        );
    }
    // Cache reads of the summary request are kept with the compaction.
    assert_eq!(details["cachePrefix"], json!({"used": true}));
    assert_eq!(details["usage"][0]["cacheRead"], 1800);
    bodies
}

#[tokio::test]
async fn anthropic_summary_requests_continue_the_cached_conversation() {
    let bodies = continues_the_last_request(Wire::Anthropic).await;
    // A changed `tool_choice` would invalidate Anthropic's cached messages: the instruction alone.
    assert!(bodies[2].get("tool_choice").is_none());
    // Prompt caching (on by default): the conversation's breakpoints, the last on its last user
    // block, stay where they were, so the summary request reads the conversation from the cache; its
    // own part (the reply, the instruction) gets none.
    let ephemeral = json!({"type": "ephemeral"});
    let conversation = bodies[1]["messages"].as_array().unwrap();
    let last_block = |message: &Value| message["content"].as_array().unwrap().last().cloned();
    let conversation_last = last_block(conversation.last().unwrap()).unwrap();
    assert_eq!(conversation_last["cache_control"], ephemeral);
    let summary = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(
        last_block(&summary[conversation.len() - 1]).unwrap(),
        conversation_last
    );
    let instruction = last_block(summary.last().unwrap()).unwrap();
    assert!(instruction.get("cache_control").is_none());
    assert_eq!(bodies[2]["system"][0]["cache_control"], ephemeral);
    let tools = bodies[2]["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
    assert_eq!(
        bodies[2].to_string().matches("\"cache_control\"").count(),
        3
    );
}

#[tokio::test]
async fn openai_compatible_summary_requests_continue_the_cached_conversation() {
    let bodies = continues_the_last_request(Wire::OpenAiChat).await;
    assert_eq!(bodies[2]["tool_choice"], "none");
    assert!(bodies[1].get("tool_choice").is_none());
}

/// The summary request of a run that could not continue the conversation: the fresh prompt.
fn assert_fresh(wire: Wire, body: &Value) {
    let (system, tools, messages) = wire.parts(body);
    let system = match wire {
        // Fresh summaries are sent without prompt caching, as Pi sends them.
        Wire::Anthropic => system,
        Wire::OpenAiChat => system["content"].clone(),
        Wire::OpenAiResponses => system,
    };
    assert_eq!(system, json!(Prompts::default().system));
    assert!(tools.is_null());
    assert_eq!(messages.len(), 1);
    // The span serialized: the history request's tags, or the turn-prefix request's heading.
    let text = messages[0].to_string();
    assert!(text.contains("<conversation>") || text.contains("# Conversation"));
}

#[tokio::test]
async fn fresh_prompts_when_the_request_cannot_be_continued() {
    for wire in [Wire::Anthropic, Wire::OpenAiChat] {
        // The setting is off: fresh, and nothing recorded.
        let mut off = run(wire, false, None).await;
        let (bodies, details) = off.converse_and_compact().await;
        assert_fresh(wire, &bodies[2]);
        assert!(details.get("cachePrefix").is_none());

        // Summaries by another model: its cache does not hold the conversation.
        let other = match wire {
            Wire::Anthropic => "anthropic/claude-haiku-4-5",
            Wire::OpenAiChat => "groq/llama-3.1-8b-instant",
            Wire::OpenAiResponses => "openai/gpt-5-nano",
        };
        let mut cheaper = run(wire, true, Some(other)).await;
        let (bodies, details) = cheaper.converse_and_compact().await;
        assert_fresh(wire, &bodies[2]);
        assert_eq!(details["cachePrefix"]["used"], false);
        let reason = details["cachePrefix"]["reason"].as_str().unwrap();
        assert!(
            reason.contains(other) && reason.contains(wire.model()),
            "{reason}"
        );
    }
}

/// A conversation near the window (the provider counted 175,000 tokens of a 200,000-token
/// window, under the reference's threshold) leaves no safe room for a summary after it: the
/// request goes fresh and says why.
#[tokio::test]
async fn fresh_prompts_when_the_conversation_leaves_no_room_for_the_summary() {
    let mut near = run_reading(Wire::Anthropic, true, None, 175_000, "reference").await;
    let (bodies, details) = near.converse_and_compact().await;
    assert_fresh(Wire::Anthropic, &bodies[2]);
    assert_eq!(details["cachePrefix"]["used"], false);
    let reason = details["cachePrefix"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("would not fit the window of 200000"),
        "{reason}"
    );
    // Far from the window the same conversation is continued.
    let mut far = run_reading(Wire::Anthropic, true, None, 20_000, "reference").await;
    let (_, details) = far.converse_and_compact().await;
    assert_eq!(details["cachePrefix"], json!({"used": true}));
}

#[tokio::test]
async fn fresh_prompt_when_no_request_was_made_in_this_process() {
    let wire = Wire::Anthropic;
    let mut run = run(wire, true, None).await;
    // The second request is too long to stand as its own checkpoint, so the split turn's prefix
    // is summarized too.
    let long_request = format!(
        "Fix the parser, please. {}",
        "The details follow. ".repeat(120)
    );
    for text in ["Where is the parser?", long_request.as_str()] {
        run.agent
            .prompt(text.to_owned(), &mut ApproveAll, &IgnoreEvents)
            .await
            .unwrap();
    }
    // Another process (`ctxkit compact`) opens the session: it sent no model request to continue.
    let Run {
        server,
        engine,
        agent,
        _dir,
    } = run;
    let settings = engine.settings().await;
    drop(agent);
    let path = engine
        .with_session(|session| session.path().unwrap().to_owned())
        .await;
    drop(engine);
    let engine = Engine::new(
        Session::open(&path).unwrap(),
        EngineOptions {
            settings,
            model: None,
            summarizer: Arc::new(client(wire.model(), &server)),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    engine.compact(None).await.unwrap();
    let bodies = server.received_requests().await.unwrap();
    // The history request, and the turn-prefix request of the split turn.
    assert_eq!(bodies.len(), 4);
    for body in &bodies[2..] {
        assert_fresh(wire, &body.body_json().unwrap());
    }
    let details = engine
        .with_session(|session| {
            let raw: Value =
                serde_json::from_str(&session.leaf_entry().unwrap().raw().unwrap()).unwrap();
            raw["details"]["cachePrefix"].clone()
        })
        .await;
    assert_eq!(details["used"], false);
    assert!(
        details["reason"]
            .as_str()
            .unwrap()
            .contains("no model request"),
        "{details}"
    );
}

#[tokio::test]
async fn a_client_gives_the_engine_its_model_s_cache_terms() {
    let server = MockServer::start().await;
    let cache = |model: &str| ChatModel::info(&client(model, &server)).cache;
    let anthropic = cache("anthropic/claude-sonnet-4-5").unwrap();
    assert_eq!(
        (anthropic.write_percent, anthropic.reads_any_prefix),
        (125, false)
    );
    let openai = cache("openai/gpt-5").unwrap();
    assert_eq!((openai.write_percent, openai.reads_any_prefix), (100, true));
    assert_eq!(cache("openai/a-model-nobody-priced"), None);
}

/// The key every request of `run`'s session went out with, after two prompts and a compaction
/// whose summary requests continue the conversation; `None` for a request without one.
async fn cache_keys(wire: Wire) -> (String, Vec<Option<String>>) {
    let mut run = run(wire, true, None).await;
    let (bodies, details) = run.converse_and_compact().await;
    assert_eq!(details["cachePrefix"], json!({"used": true}));
    assert!(bodies.len() >= 3, "{}", bodies.len());
    let session = run
        .engine
        .with_session(|session| session.id().to_owned())
        .await;
    let keys = bodies
        .iter()
        .map(|body| body["prompt_cache_key"].as_str().map(str::to_owned))
        .collect();
    (session, keys)
}

#[tokio::test]
async fn openai_requests_of_a_session_carry_its_id_as_their_prompt_cache_key() {
    // Conversation requests and the summary requests continuing them: one key, the session's id,
    // as Pi 1.6.0 sends it, so they reach the same cache.
    let (first, keys) = cache_keys(Wire::OpenAiResponses).await;
    assert!(
        keys.iter()
            .all(|key| key.as_deref() == Some(first.as_str())),
        "{first}: {keys:?}"
    );
    // Another session, another key.
    let (second, keys) = cache_keys(Wire::OpenAiResponses).await;
    assert_ne!(first, second);
    assert!(
        keys.iter()
            .all(|key| key.as_deref() == Some(second.as_str())),
        "{keys:?}"
    );
    // Chat Completions to a server other than OpenAI's (Groq here) is sent none.
    let (_, keys) = cache_keys(Wire::OpenAiChat).await;
    assert!(keys.iter().all(Option::is_none), "{keys:?}");
}
