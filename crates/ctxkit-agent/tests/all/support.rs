//! A world for scenarios: a session in a temp directory, an engine with the offline summarizer and
//! settings as a user without settings gets them, a scripted provider that rejects requests over a
//! size, and an agent over them.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_agent::testing::{ScriptedModel, request_chars};
use ctxkit_agent::{
    Agent, AgentEvent, AgentObserver, AgentOptions, ApproveAll, PromptOutcome, ToolRegistry,
};
use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::{AgentMessage, AssistantMessage, MessageContent};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use futures::future::BoxFuture;
use serde_json::json;

pub const WINDOW: u64 = 8_192;

/// What the scripted model does with a request it accepts.
/// It gets the model (to build replies), the request and the input tokens the provider counted.
pub type Behaviour = dyn Fn(&ScriptedModel, &ChatRequest, u64) -> AssistantMessage + Send + Sync;

pub struct World {
    pub dir: tempfile::TempDir,
    pub engine: Engine,
    pub model: ScriptedModel,
    pub agent: Agent,
    pub observed: Arc<Recorder>,
}

/// Keeps every agent event.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<AgentEvent>>);

impl AgentObserver for Recorder {
    fn event<'a>(&'a self, event: AgentEvent) -> BoxFuture<'a, ()> {
        self.0.lock().unwrap().push(event);
        Box::pin(async {})
    }
}

impl Recorder {
    /// What `pick` takes from each event it matches, in order.
    pub fn picked<T>(&self, pick: impl Fn(&AgentEvent) -> Option<T>) -> Vec<T> {
        self.0.lock().unwrap().iter().filter_map(pick).collect()
    }

    pub fn retries(&self) -> usize {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|event| matches!(event, AgentEvent::Retry))
            .count()
    }
}

/// A provider that rejects requests whose characters, counted `factor` times as heavily as
/// ctxkit's estimate (4 characters a token), exceed the window.
pub fn provider(factor: f64, behaviour: Arc<Behaviour>) -> ScriptedModel {
    provider_with_limit(factor, WINDOW, behaviour)
}

/// A provider as [`provider`] whose real limit is `limit` tokens, whatever the window it reports.
pub fn provider_with_limit(factor: f64, limit: u64, behaviour: Arc<Behaviour>) -> ScriptedModel {
    let info = ModelInfo {
        provider: "mock".to_owned(),
        id: "coder".to_owned(),
        context_window: WINDOW,
        cache: None,
    };
    let scripted = ScriptedModel::new(info.clone(), |_, _| ctxkit_agent::testing::empty_reply());
    let model = scripted.clone();
    ScriptedModel::new(info, move |request, _| {
        let counted = request_chars(request) as f64 * factor / 4.0;
        if counted > limit as f64 {
            return model.overflow();
        }
        behaviour(&model, request, counted as u64)
    })
}

impl World {
    pub async fn new(model: ScriptedModel) -> Self {
        Self::with_settings(
            model,
            ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!(
                {}
            ))),
        )
        .await
    }

    pub async fn with_settings(model: ScriptedModel, settings: EngineSettings) -> Self {
        Self::with_summarizer(model, settings, Arc::new(OfflineSummarizer::default())).await
    }

    pub async fn with_summarizer(
        model: ScriptedModel,
        settings: EngineSettings,
        summarizer: Arc<dyn ctxkit_summarizer::Summarizer>,
    ) -> Self {
        Self::over_file(model, settings, summarizer, |_| {}).await
    }

    /// A world whose session file already holds what `write` appended (a file an older version
    /// left, say) before the engine opens it.
    pub async fn over_file(
        model: ScriptedModel,
        settings: EngineSettings,
        summarizer: Arc<dyn ctxkit_summarizer::Summarizer>,
        write: impl FnOnce(&mut Session),
    ) -> Self {
        Self::assemble(model, settings, summarizer, write, ToolRegistry::coding()).await
    }

    /// A world whose model is offered every coding tool but `name` (`defaultTools: ["-name"]`).
    pub async fn without_tool(model: ScriptedModel, settings: EngineSettings, name: &str) -> Self {
        let mut tools = ToolRegistry::coding();
        assert!(tools.remove(name), "no tool `{name}`");
        let summarizer = Arc::new(OfflineSummarizer::default());
        Self::assemble(model, settings, summarizer, |_| {}, tools).await
    }

    async fn assemble(
        model: ScriptedModel,
        settings: EngineSettings,
        summarizer: Arc<dyn ctxkit_summarizer::Summarizer>,
        write: impl FnOnce(&mut Session),
        tools: ToolRegistry,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mut session =
            Session::create(&work.display().to_string(), &dir.path().join("sessions"));
        write(&mut session);
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
            Arc::new(model.clone()),
            tools,
            AgentOptions {
                system_prompt: "You are a coding agent.".to_owned(),
                max_tokens: Some(1024),
                reasoning: None,
                cwd: work,
                bash_timeout: Duration::from_secs(10),
                shell: Default::default(),
                pass_env: Vec::new(),
                auto_resize_images: true,
                // Pi's 50 KB: the scenarios reach the overflow paths through one large output.
                max_tool_output_bytes: Some(50 * 1024),
            },
        )
        .await;
        Self {
            dir,
            engine,
            model,
            agent,
            observed: Arc::default(),
        }
    }

    pub fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    pub async fn prompt(&mut self, text: &str) -> PromptOutcome {
        let observed = Arc::clone(&self.observed);
        self.agent
            .prompt(text.to_owned(), &mut ApproveAll, observed.as_ref())
            .await
            .unwrap()
    }

    /// The session file, loaded again from disk.
    pub async fn reload(&self) -> Session {
        let path = self
            .engine
            .with_session(|session| session.path().map(Path::to_owned))
            .await
            .unwrap();
        let session = Session::open(&path).unwrap();
        assert!(
            session.diagnostics().is_empty(),
            "{:?}",
            session.diagnostics()
        );
        session
    }

    pub async fn compactions(&self) -> usize {
        self.reload()
            .await
            .entries()
            .iter()
            .filter(|entry| entry.type_name() == "compaction")
            .count()
    }

    /// Every user text stored in the file, in order.
    pub async fn user_texts(&self) -> Vec<String> {
        let session = self.reload().await;
        session
            .entries()
            .iter()
            .filter_map(|entry| {
                let message = entry.parse_message()?.ok()?;
                Some(text_of(&message.as_user()?.content))
            })
            .collect()
    }

    /// The characters of the last request the provider accepted or rejected.
    pub fn last_request_chars(&self) -> usize {
        request_chars(self.model.requests().last().unwrap())
    }
}

pub fn text_of(content: &MessageContent) -> String {
    content.joined_text("\n")
}

/// The last message of a request.
pub fn last(request: &ChatRequest) -> &AgentMessage {
    request.messages.last().unwrap()
}

/// Tool results in the request after its last user message.
pub fn results_this_turn(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .rev()
        .take_while(|message| !matches!(message, AgentMessage::User(_)))
        .filter(|message| matches!(message, AgentMessage::ToolResult(_)))
        .count()
}

/// Text of a size, for padding replies and files.
pub fn filler(label: &str, chars: usize) -> String {
    let line = format!("{label}: the quick brown fox jumps over the lazy dog 0123456789\n");
    line.repeat(chars / line.len() + 1)[..chars].to_owned()
}
