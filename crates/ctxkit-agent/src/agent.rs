//! The agent loop over the engine: `before_prompt` → append the user message → turns of { model
//! view → model → append the reply → approve and run its tool calls → append their results →
//! `after_tool_batch` (a threshold compaction before the next model call) } → `after_run`, and
//! again without a new user message while the engine says `retry` (it compacted after an overflow,
//! wherever in the turn the overflow happened).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_engine::{CheckReport, Engine, EngineError};
use ctxkit_llm::{ChatDelta, ReasoningLevel, RetryNotice};
use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, ToolCall, UserMessage,
};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::approve::Approver;
use crate::model::ChatModel;
use crate::tool::{ToolOutcome, ToolRegistry};
use crate::warming::CacheWarmer;
use crate::workspace::{Access, Workspace};

mod call_ids;
mod cancelled_compaction;
mod forked_outputs;
mod model_call;
mod prompt_room;
mod steering;
mod tool_calls;
mod user_bash;

pub use cancelled_compaction::AfterCancelledCompaction;
pub use steering::Steering;

use model_call::RoomCheck;

/// How an agent runs, apart from its engine, model and tools.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The system prompt; the engine's system texts (summaries, pins) are appended to it.
    pub system_prompt: String,
    /// Output tokens for each reply; `None` leaves the provider's default.
    pub max_tokens: Option<u64>,
    /// The reasoning ("thinking") level requested; `None` asks for none.
    pub reasoning: Option<ReasoningLevel>,
    /// Where tools run.
    pub cwd: PathBuf,
    /// The default `bash` time limit.
    pub bash_timeout: Duration,
    /// The shell `bash` commands run in (`shellPath`, `shellCommandPrefix`).
    pub shell: crate::tools::Shell,
    /// Secret environment variables (provider keys, tokens) `bash` commands may see
    /// (`chat.passEnv`); every other one is removed from their environment.
    pub pass_env: Vec<String>,
    /// Images `read` returns are fitted to 2000 × 2000 pixels and 4.5 MB (`images.autoResize`).
    pub auto_resize_images: bool,
    /// The most bytes one tool output keeps (the rest is saved and named). `None`: Pi's 50 KB,
    /// cut to about a quarter of a small model's window (`tools::limit::output_bytes_for_window`:
    /// 8 KB for an 8,000-token model, which a 50 KB output would overflow).
    pub max_tool_output_bytes: Option<usize>,
}

/// What the loop is doing, for a UI or a protocol client.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// An engine check ran (before the prompt, after a tool batch, after a run): its compaction
    /// events have been emitted on the engine's bus.
    Checked(CheckReport),
    /// A model request is about to be sent.
    ModelCall,
    /// Part of the reply as it streams in (the whole reply follows as [`AgentEvent::Reply`]).
    Delta(ChatDelta),
    /// The model's reply, as stored; `overflow` when it is a context-overflow error.
    Reply {
        reply: AssistantMessage,
        overflow: bool,
    },
    ToolStart {
        call: ToolCall,
    },
    ToolEnd {
        call: ToolCall,
        outcome: ToolOutcome,
    },
    /// The engine compacted after an overflow; the turn runs again without a new user message.
    Retry,
    /// The model request failed before its reply started (a 429, a 5xx, a network error, a
    /// timeout) and is sent again after `notice.delay`.
    ProviderRetry(RetryNotice),
    /// A message the user typed while the agent worked is sent with the next model call (it is
    /// stored as a user message right after this event); `follow_up` when it waited for the model
    /// to stop (`Steering::take_follow_ups`).
    Steered {
        text: String,
        follow_up: bool,
    },
    /// The user cancelled an automatic compaction (before the prompt, between two model calls):
    /// what the run does now (its engine events, the cancel among them, came first).
    CompactionCancelled(AfterCancelledCompaction),
}

/// Receives the loop's events in order; the loop waits for each.
pub trait AgentObserver: Send + Sync {
    fn event<'a>(&'a self, event: AgentEvent) -> BoxFuture<'a, ()>;
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct IgnoreEvents;

impl AgentObserver for IgnoreEvents {
    fn event<'a>(&'a self, _event: AgentEvent) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// How a prompt (or a continued run) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptOutcome {
    /// The model ended its turn.
    Answered,
    /// The user interrupted the model or a tool.
    Interrupted,
    /// The compaction before the prompt was cancelled and the prompt could not go out without it
    /// (the user stopped the run too, or it does not fit the window), so it was not stored: its
    /// text is given back.
    NotSent(String),
    /// The turn ended without an answer; the one-line reason (a provider error, an overflow that
    /// compaction could not fix). Everything up to here is stored.
    Failed(String),
}

/// How one turn ended.
enum TurnEnd {
    /// The model stopped without calling tools.
    Stopped,
    Interrupted,
    /// The last reply was an error (maybe an overflow, which `after_run` recovers).
    Error(String),
    /// The user cancelled the compaction between two model calls and stopped the run too: it
    /// stops without another check (which would compact again).
    CompactionCancelled,
    /// The user cancelled the compaction between two model calls and the next request does not
    /// fit without it: the run stops without another check; the reason.
    DoesNotFit(String),
}

/// An agent: an engine (the session), a model, tools and options.
pub struct Agent {
    engine: Engine,
    model: Arc<dyn ChatModel>,
    tools: ToolRegistry,
    options: AgentOptions,
    /// Tools the user approved for the rest of the agent's life.
    always_allowed: HashSet<String>,
    /// Where the tools may go, and the secrets their results must not show.
    workspace: Arc<Workspace>,
    /// Accesses outside the project approved everywhere for the rest of the agent's life (a
    /// caller without a person to ask, [`Agent::allow_outside`]).
    outside_allowed: HashSet<Access>,
    /// Accesses outside the project the user answered "always" to, each under the folder of the
    /// path asked about (QA: "always" on a note written to `/tmp/x/` let the model overwrite
    /// `~/.bashrc` unasked).
    outside_allowed_under: Vec<(Access, std::path::PathBuf)>,
    /// Keeps the prompt cache of the last request warm (`cacheWarming`); none by default.
    warmer: Option<Arc<CacheWarmer>>,
    /// Messages typed while the agent works, delivered after each tool batch; none by default.
    steering: Option<Arc<dyn Steering>>,
    /// The session's tool call ids, so a reply that reuses one gets its own.
    call_ids: call_ids::CallIds,
    /// The output folders of the sessions the current one was forked from, with what they were
    /// read for (its folder and parent): read once, not at every tool call.
    forked_outputs: Option<forked_outputs::ForkedOutputs>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Agent")
            .field("model", &self.model.info())
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Agent {
    /// An agent over `engine`; the engine is told the model (its window drives compaction).
    pub async fn new(
        engine: Engine,
        model: Arc<dyn ChatModel>,
        tools: ToolRegistry,
        options: AgentOptions,
    ) -> Self {
        engine.set_model(Some(model.info())).await;
        let workspace = Arc::new(Workspace::new(&options.cwd));
        Self {
            engine,
            model,
            tools,
            options,
            always_allowed: HashSet::new(),
            workspace,
            outside_allowed: HashSet::new(),
            outside_allowed_under: Vec::new(),
            warmer: None,
            steering: None,
            call_ids: call_ids::CallIds::default(),
            forked_outputs: None,
        }
    }

    /// Judges the tools' paths against `workspace` from now on (by default: the project at the
    /// options' `cwd`, ctxkit's home of this process protected).
    pub fn set_workspace(&mut self, workspace: Workspace) {
        self.workspace = Arc::new(workspace);
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Lets tools `access` paths outside the project without asking (a caller without a person
    /// to ask that allows it up front, or the user's "always" answer).
    pub fn allow_outside(&mut self, access: Access) {
        self.outside_allowed.insert(access);
    }

    /// Lets tools `access` paths under `folder`, outside the project, without asking (the user's
    /// "always" to a question about a path in it).
    pub fn allow_outside_under(&mut self, access: Access, folder: &std::path::Path) {
        let entry = (access, folder.to_owned());
        if !self.outside_allowed_under.contains(&entry) {
            self.outside_allowed_under.push(entry);
        }
    }

    /// The most bytes one tool output keeps: [`AgentOptions::max_tool_output_bytes`], else Pi's
    /// 50 KB cut to about a quarter of a small model's window.
    pub(crate) fn max_output_bytes(&self) -> usize {
        self.options.max_tool_output_bytes.unwrap_or_else(|| {
            crate::tools::limit::output_bytes_for_window(self.model.info().context_window)
        })
    }

    /// Whether `access` to `path`, outside the project, was approved for good.
    fn outside_approved_for(&self, access: Access, path: &std::path::Path) -> bool {
        self.outside_allowed.contains(&access)
            || self
                .outside_allowed_under
                .iter()
                .any(|(allowed, folder)| *allowed == access && path.starts_with(folder))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Works on another engine (another session) from now on.
    pub async fn set_engine(&mut self, engine: Engine) {
        engine.set_model(Some(self.model.info())).await;
        self.engine = engine;
        self.call_ids.reset();
    }

    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// Talks to another model from now on; the engine measures against its window.
    pub async fn set_model(&mut self, model: Arc<dyn ChatModel>) {
        self.engine.set_model(Some(model.info())).await;
        self.model = model;
    }

    /// Talks to another model from now on and records the switch in the session (a
    /// `model_change` entry, as Pi's `/model` does): the user's switch, where
    /// [`Agent::set_model`] is a surface's own. Nothing changes when the entry cannot be written.
    pub async fn switch_model(&mut self, model: Arc<dyn ChatModel>) -> Result<String, EngineError> {
        let id = self.engine.switch_model(model.info()).await?;
        self.model = model;
        Ok(id)
    }

    /// The output tokens asked for each reply from the next request on (`None`: the provider's
    /// default): a surface that switches models sets the new model's.
    pub fn set_max_tokens(&mut self, tokens: Option<u64>) {
        self.options.max_tokens = tokens;
    }

    /// The reasoning level asked for from the next request on (`None`: none).
    pub fn set_reasoning(&mut self, level: Option<ReasoningLevel>) {
        self.options.reasoning = level;
    }

    /// The system prompt from the next request on (the chat's `/reload`).
    pub fn set_system_prompt(&mut self, prompt: String) {
        self.options.system_prompt = prompt;
    }

    /// The `bash` tool's default time limit and whether images are fitted, from the next tool
    /// call on (the chat's `/reload`).
    pub fn set_tool_limits(&mut self, bash_timeout: std::time::Duration, auto_resize_images: bool) {
        self.options.bash_timeout = bash_timeout;
        self.options.auto_resize_images = auto_resize_images;
    }

    /// The shell `bash` commands and the user's `!cmd` run in, and the secret variables they
    /// are given, from the next command on (the chat's `/reload`).
    pub fn set_shell(&mut self, shell: crate::tools::Shell, pass_env: Vec<String>) {
        self.options.shell = shell;
        self.options.pass_env = pass_env;
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Keeps the prompt cache of each request warm with `warmer` from now on (shared with the
    /// session's later agents, so a new request replaces the warming of the last one).
    pub fn set_cache_warmer(&mut self, warmer: Arc<CacheWarmer>) {
        self.warmer = Some(warmer);
    }

    /// Stops asking before `tool` runs.
    pub fn allow_always(&mut self, tool: &str) {
        self.always_allowed.insert(tool.to_owned());
    }

    /// Asks before `tool` runs again, whatever was allowed always before (the chat's
    /// `chat.confirmBash` turned on by `/reload`).
    pub fn ask_again(&mut self, tool: &str) {
        self.always_allowed.remove(tool);
    }

    /// Sends one user prompt and runs the agent until the model ends its turn.
    pub async fn prompt(
        &mut self,
        text: String,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        self.prompt_content(vec![ContentBlock::text(text)], approver, observer)
            .await
    }

    /// [`Self::prompt`] with a prompt of several blocks (text and images: files the user
    /// attached). A prompt not sent gives back the text of its text blocks.
    pub async fn prompt_content(
        &mut self,
        content: Vec<ContentBlock>,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        // A new prompt ends the warming between runs: its own requests start their own.
        if let Some(warmer) = &self.warmer {
            warmer.cancel();
        }
        // A turn from the start: the user's interrupt while the compaction before the prompt is
        // being cancelled (Esc twice) stops the prompt too.
        let guard = self.engine.begin_turn();
        let report = self.engine.before_prompt().await?;
        let aborted = report.compaction.as_ref().is_some_and(|end| end.aborted);
        observer.event(AgentEvent::Checked(report)).await;
        let text: Vec<&str> = content.iter().filter_map(ContentBlock::as_text).collect();
        let text = text.join("\n");
        let message = AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(content),
            timestamp: Some(now_ms()),
            extra: JsonObject::new(),
        });
        let goes = self
            .prompt_goes(&message, aborted, &guard.cancel_token(), observer)
            .await?;
        drop(guard);
        match goes {
            prompt_room::PromptGoes::Out => {}
            prompt_room::PromptGoes::NotSent => return Ok(PromptOutcome::NotSent(text)),
        }
        self.engine.append(message).await?;
        // The first request's output room was checked with the prompt.
        self.run_turns(approver, observer, true).await
    }

    /// Runs turns on the session as it is (after a user message, or to continue after an
    /// interruption) until the model ends its turn or the engine gives up.
    pub async fn run(
        &mut self,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        self.run_turns(approver, observer, false).await
    }

    /// [`Self::run`]; `room_checked` when its first request's output room was checked already
    /// (with the prompt, before it was stored).
    async fn run_turns(
        &mut self,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
        mut room_checked: bool,
    ) -> Result<PromptOutcome, EngineError> {
        loop {
            let guard = self.engine.begin_turn();
            let cancel = guard.cancel_token();
            let end = self.turn(&cancel, room_checked, approver, observer).await;
            room_checked = false;
            drop(guard);
            if let Some(warmer) = &self.warmer {
                warmer.settled();
            }
            let end = end?;
            match end {
                TurnEnd::CompactionCancelled => return Ok(PromptOutcome::Interrupted),
                TurnEnd::DoesNotFit(reason) => return Ok(PromptOutcome::Failed(reason)),
                TurnEnd::Stopped | TurnEnd::Interrupted | TurnEnd::Error(_) => {}
            }
            let report = self.engine.after_run().await?;
            let retry = report.retry;
            let cancelled = report.compaction.as_ref().is_some_and(|end| end.aborted);
            let failure = report
                .compaction
                .as_ref()
                .and_then(|end| end.error.clone())
                .filter(|_| !retry);
            observer.event(AgentEvent::Checked(report)).await;
            if retry {
                observer.event(AgentEvent::Retry).await;
                continue;
            }
            return Ok(match end {
                // A cancelled compaction after the answer leaves the answer as it was.
                TurnEnd::Stopped => PromptOutcome::Answered,
                TurnEnd::Interrupted => PromptOutcome::Interrupted,
                // The user cancelled the compaction that would have let the turn go on.
                TurnEnd::Error(_) if cancelled => PromptOutcome::Interrupted,
                TurnEnd::Error(error) => PromptOutcome::Failed(failure.unwrap_or(error)),
                TurnEnd::CompactionCancelled => PromptOutcome::Interrupted,
                TurnEnd::DoesNotFit(reason) => PromptOutcome::Failed(reason),
            });
        }
    }

    /// Model calls and tool runs until the model stops calling tools or the user interrupts.
    async fn turn(
        &mut self,
        cancel: &CancellationToken,
        room_checked: bool,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<TurnEnd, EngineError> {
        // What was sent before the run started goes with its first request.
        self.deliver_steering(observer).await?;
        // Whether the request about to be built already had a compaction for its output room.
        let mut made_room = room_checked;
        loop {
            let request = self.build_request().await?;
            // A request whose reply would get less room than its floor compacts first (once). The
            // request (the whole view) is let go before the compaction runs, which reads the same
            // messages from the session: a view of a million messages is not held beside it.
            if !made_room {
                made_room = true;
                if let Some(tokens) = self.output_shortfall(&request) {
                    drop(request);
                    match self.make_output_room(tokens, observer).await? {
                        RoomCheck::Cancelled => {
                            if let Some(end) = self.go_on_uncompacted(cancel, observer).await? {
                                return Ok(end);
                            }
                            continue;
                        }
                        // Built again: from the compacted view, or as it was when nothing could
                        // be compacted (and then sent without a second check).
                        RoomCheck::Enough | RoomCheck::Compacted => continue,
                    }
                }
            }
            made_room = false;
            observer.event(AgentEvent::ModelCall).await;
            if let Some(warmer) = &self.warmer {
                let leaf = self
                    .engine
                    .with_session(|session| session.leaf_id().map(str::to_owned))
                    .await;
                warmer.start(&self.engine, &self.model, &request, leaf);
            }
            let started = std::time::Instant::now();
            let mut reply = self.call_model(&request, cancel, observer).await;
            self.call_ids.make_unique(&self.engine, &mut reply).await;
            tracing::debug!(
                messages = request.messages.len(),
                stop_reason = reply.stop_reason.as_deref().unwrap_or(""),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "model call"
            );
            model_call::log_provider_context_changes(&reply);
            let overflow = ctxkit_engine::overflowed(&reply, &self.model.info());
            // Before the reply is appended: the engine notes where the session stood.
            self.record_request(request).await;
            let calls = tool_calls::calls_of(&reply);
            let asks_for_tools = reply.asks_for_tools();
            let stop_reason = reply.stop_reason.clone();
            let error = reply.error_message.clone();
            observer
                .event(AgentEvent::Reply {
                    reply: reply.clone(),
                    overflow,
                })
                .await;
            self.engine.append(AgentMessage::Assistant(reply)).await?;
            match stop_reason.as_deref() {
                Some("aborted") => return Ok(TurnEnd::Interrupted),
                Some("error") => {
                    return Ok(TurnEnd::Error(
                        error.unwrap_or_else(|| "The model request failed".to_owned()),
                    ));
                }
                Some(_) | None => {}
            }
            if cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            if !asks_for_tools {
                // What was typed during the reply, then the follow-ups, go on with the run.
                if self.deliver_at_stop(observer).await? {
                    continue;
                }
                return Ok(TurnEnd::Stopped);
            }
            self.run_batch(calls, cancel, approver, observer).await?;
            // An interrupted batch ends the run: no check before a model call that will not come.
            if cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            // The next model call carries the results: compact first when they push the context
            // over the threshold (a failed compaction is reported and the run goes on).
            let report = self.engine.after_tool_batch().await?;
            let cancelled = report.compaction.as_ref().is_some_and(|end| end.aborted);
            observer.event(AgentEvent::Checked(report)).await;
            if cancelled {
                if let Some(end) = self.go_on_uncompacted(cancel, observer).await? {
                    return Ok(end);
                }
                // The request goes out as it is: no compaction for its output room either.
                made_room = true;
            }
            self.deliver_steering(observer).await?;
        }
    }
}
