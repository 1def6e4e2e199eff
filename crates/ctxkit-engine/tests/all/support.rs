//! A scripted summarizer, message builders and an engine harness.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineEvent, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use ctxkit_settings::CompactionConfig;
use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

/// One scripted summarizer answer.
#[derive(Debug, Clone)]
pub enum Answer {
    Text(&'static str),
    Fail(&'static str),
    /// Waits until cancelled (or `release` is notified), then answers "RELEASED".
    Hang,
}

/// Answers from a script; records every request.
pub struct Scripted {
    answers: Mutex<VecDeque<Answer>>,
    pub requests: Mutex<Vec<SummaryRequest>>,
    pub started: tokio::sync::Notify,
    pub release: tokio::sync::Notify,
    /// Continues conversations of the test model (cache-prefix requests).
    pub continues: std::sync::atomic::AtomicBool,
    /// The conversations continued, one per continuing request.
    pub continued: Mutex<Vec<ctxkit_summarizer::ConversationPrefix>>,
    /// Compacts spans of the test model on demand: with this summary, or failing with this error.
    pub on_demand: Mutex<Option<Result<&'static str, &'static str>>>,
    /// The spans sent on demand.
    pub on_demand_spans: Mutex<Vec<ctxkit_summarizer::ConversationPrefix>>,
}

impl Scripted {
    pub fn new(answers: impl IntoIterator<Item = Answer>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            started: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
            continues: std::sync::atomic::AtomicBool::new(false),
            continued: Mutex::new(Vec::new()),
            on_demand: Mutex::new(None),
            on_demand_spans: Mutex::new(Vec::new()),
        })
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    pub fn last_request(&self) -> SummaryRequest {
        self.requests.lock().unwrap().last().cloned().unwrap()
    }
}

impl Summarizer for Scripted {
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn can_continue(&self, prefix: &ctxkit_summarizer::ConversationPrefix) -> bool {
        self.continues.load(std::sync::atomic::Ordering::SeqCst)
            && prefix.provider == PROVIDER
            && prefix.model == MODEL
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        self.requests.lock().unwrap().push(request);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Answer::Text("SUMMARY"));
        self.started.notify_one();
        Box::pin(async move {
            let text = match answer {
                Answer::Text(text) => text,
                Answer::Fail(message) => {
                    return Err(SummarizerError::new(message.to_owned()));
                }
                Answer::Hang => {
                    tokio::select! {
                        () = cancel.cancelled() => return Err(SummarizerError::new("aborted")),
                        () = self.release.notified() => "RELEASED",
                    }
                }
            };
            Ok(SummaryResponse {
                text: text.to_owned(),
                usage: None,
            })
        })
    }
    fn summarize_continuing(
        &self,
        request: SummaryRequest,
        prefix: ctxkit_summarizer::ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        self.continued.lock().unwrap().push(prefix);
        // A model asked in the conversation answers in the instruction's format.
        let answer = self.summarize(request, cancel);
        Box::pin(async move {
            let mut response = answer.await?;
            if !response.text.starts_with('#') {
                response.text = format!("## Goal\n{}", response.text);
            }
            Ok(response)
        })
    }

    fn can_compact_on_demand(&self, prefix: &ctxkit_summarizer::ConversationPrefix) -> bool {
        self.on_demand.lock().unwrap().is_some()
            && prefix.provider == PROVIDER
            && prefix.model == MODEL
    }

    fn compact_on_demand(
        &self,
        span: ctxkit_summarizer::ConversationPrefix,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<ctxkit_summarizer::OnDemandCompaction, SummarizerError>> {
        self.on_demand_spans.lock().unwrap().push(span);
        let answer = (*self.on_demand.lock().unwrap()).unwrap_or(Err("not scripted"));
        Box::pin(async move {
            let summary = answer.map_err(|message| SummarizerError::new(message.to_owned()))?;
            Ok(ctxkit_summarizer::OnDemandCompaction {
                summary: summary.to_owned(),
                block: json!({"type": "compaction", "content": summary, "encrypted_content": "sig"}),
                provider: PROVIDER.to_owned(),
                api: "anthropic-messages".to_owned(),
                model: MODEL.to_owned(),
                usage: None,
            })
        })
    }
}

pub const PROVIDER: &str = "faux";
pub const MODEL: &str = "faux-1";

pub fn model(window: u64) -> ModelInfo {
    ModelInfo {
        provider: PROVIDER.to_owned(),
        id: MODEL.to_owned(),
        context_window: window,
        cache: None,
    }
}

/// Settings with a reserve of `reserve` and a tiny keep budget.
pub fn settings(reserve: u64) -> EngineSettings {
    EngineSettings {
        compaction: CompactionConfig {
            reserve_tokens: reserve,
            keep_recent_tokens: 1,
            ..CompactionConfig::default()
        },
        ..EngineSettings::default()
    }
}

pub struct Harness {
    pub engine: Engine,
    pub events: UnboundedReceiver<EngineEvent>,
    pub summarizer: Arc<Scripted>,
    pub dir: tempfile::TempDir,
}

impl Harness {
    pub fn new(window: u64, reserve: u64, answers: impl IntoIterator<Item = Answer>) -> Self {
        Self::with(
            settings(reserve),
            Some(model(window)),
            HookSet::new(),
            answers,
        )
    }

    pub fn with(
        settings: EngineSettings,
        model: Option<ModelInfo>,
        hooks: HookSet,
        answers: impl IntoIterator<Item = Answer>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::create(&dir.path().display().to_string(), dir.path());
        Self::over(session, dir, settings, model, hooks, answers)
    }

    /// An engine working in the test's folder over a session that records `cwd` (a session file
    /// someone sent, continued here), answering with `answers`.
    pub fn recorded_in(
        cwd: &str,
        settings: EngineSettings,
        answers: impl IntoIterator<Item = Answer>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::create(cwd, dir.path());
        Self::over(
            session,
            dir,
            settings,
            Some(model(100_000)),
            HookSet::new(),
            answers,
        )
    }

    /// An engine over a session the test opened itself (default settings, a 100k window).
    pub fn with_session(session: Session) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::over(
            session,
            dir,
            settings(2_000),
            Some(model(100_000)),
            HookSet::new(),
            [],
        )
    }

    fn over(
        session: Session,
        dir: tempfile::TempDir,
        settings: EngineSettings,
        model: Option<ModelInfo>,
        hooks: HookSet,
        answers: impl IntoIterator<Item = Answer>,
    ) -> Self {
        let summarizer = Scripted::new(answers);
        let engine = Engine::new(
            session,
            EngineOptions {
                settings,
                model,
                summarizer: summarizer.clone(),
                prompts: Prompts::default(),
                hooks,
                thinking_level: None,
                // The hooks' files (`event.json`, `hook.pid`) are written in the test's folder.
                project: Some(dir.path().to_path_buf()),
            },
        );
        let events = engine.subscribe();
        Self {
            engine,
            events,
            summarizer,
            dir,
        }
    }

    /// Events emitted so far, context-usage updates left out.
    pub fn drain(&mut self) -> Vec<EngineEvent> {
        let mut events = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            if !matches!(event, EngineEvent::ContextUsage(_)) {
                events.push(event);
            }
        }
        events
    }

    /// A user message then a successful reply whose usage total is `total`.
    pub async fn turn(&self, text: &str, total: u64) -> (String, String) {
        let user = self.engine.append(user(text)).await.unwrap();
        let reply = self.engine.append(reply("ok", total)).await.unwrap();
        (user, reply)
    }

    pub async fn entry_types(&self) -> Vec<String> {
        self.engine
            .with_session(|session| {
                session
                    .entries()
                    .iter()
                    .map(|entry| entry.type_name().to_owned())
                    .collect()
            })
            .await
    }

    pub async fn compactions(&self) -> usize {
        self.entry_types()
            .await
            .iter()
            .filter(|kind| *kind == "compaction")
            .count()
    }
}

/// Now in epoch ms, after a short sleep so consecutive calls differ from compaction timestamps.
pub fn now_ms() -> i64 {
    std::thread::sleep(Duration::from_millis(3));
    chrono::Utc::now().timestamp_millis()
}

pub fn user(text: &str) -> AgentMessage {
    serde_json::from_value(json!({"role": "user", "content": text, "timestamp": now_ms()})).unwrap()
}

pub fn reply(text: &str, total: u64) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "stopReason": "stop",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

pub fn reply_with(stop_reason: &str, error: Option<&str>, input: u64, output: u64) -> AgentMessage {
    let mut value = json!({
        "role": "assistant",
        "content": [],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output},
        "stopReason": stop_reason,
        "timestamp": now_ms(),
    });
    if let Some(error) = error {
        value["errorMessage"] = json!(error);
    }
    serde_json::from_value(value).unwrap()
}

pub fn error_reply(message: &str) -> AgentMessage {
    reply_with("error", Some(message), 0, 0)
}
