//! The engine: one session, its settings, a summarizer and hooks behind a cheap-to-clone handle.
//!
//! Every operation that reads or writes the session takes the state lock, and a compaction holds it
//! from plan to append, so compactions are single-flight and a prompt that arrives during one waits
//! for it. Cancellation and `is_compacting` live outside the lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ctxkit_compaction::Prompts;
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use ctxkit_summarizer::Summarizer;
use ctxkit_transform::MeasuredMessage;
use tokio::sync::{MutexGuard, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::check::ModelInfo;
use crate::command_hooks::CommandHook;
use crate::error::Result;
use crate::events::{ContextUsage, EngineEvent, EventBus};
use crate::hooks::HookSet;
use crate::project::ProjectDir;
use crate::settings::{CompactionBudgets as _, EngineSettings};

/// What an engine is built from.
pub struct EngineOptions {
    pub settings: EngineSettings,
    /// The conversation's model; `None` disables automatic compaction (no window to measure).
    pub model: Option<ModelInfo>,
    /// Writes compaction and branch summaries.
    pub summarizer: Arc<dyn Summarizer>,
    pub prompts: Prompts,
    /// Rust hooks, called before the command hooks configured in settings.
    pub hooks: HookSet,
    /// The session's reasoning level, passed to summarizers that support one.
    pub thinking_level: Option<String>,
    /// The directory the user or client chose for the work: command hooks run there and
    /// `compaction.fileContext` reads beneath it. `None`: the process's working directory. Never
    /// the session's recorded `cwd`, which a session file someone sent chooses.
    pub project: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EngineOptions")
            .field("settings", &self.settings)
            .field("model", &self.model)
            .field("summarizer", &self.summarizer.name())
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

pub(crate) struct State {
    pub(crate) session: Session,
    pub(crate) settings: EngineSettings,
    pub(crate) model: Option<ModelInfo>,
    pub(crate) thinking_level: Option<String>,
    /// Overflow compactions since the last successful reply (a user message does not reset it, so
    /// an overflow after the next prompt keeps less instead of repeating the same compaction).
    pub(crate) overflow_attempts: u32,
    /// Where the previous overflow compaction of the streak cut (its first kept entry): the next
    /// one cuts later. Reset with `overflow_attempts`.
    pub(crate) overflow_cut: Option<ctxkit_session::EntryIndex>,
    /// The provider's over-count: the largest ratio seen between what the provider counted (a
    /// reply's usage) and ctxkit's estimate of the request; 1 until seen. Overflow recovery plans
    /// with it as a margin. This and the next two are reset when the model changes.
    pub(crate) over_count: f64,
    /// The largest context the provider accepted (a successful reply's usage).
    pub(crate) accepted_max: u64,
    /// The provider refused a request it would have counted under the window.
    pub(crate) limit_below_window: bool,
    /// The provider's real limit, when below the window, as stated in its overflow error: the
    /// threshold, recovery and the output room plan with it.
    pub(crate) limit_tokens: Option<u64>,
    /// ctxkit's estimate of the last model request recorded and not yet answered.
    pub(crate) last_request_estimate: Option<crate::recovery::RequestEstimate>,
    /// The system prompt and tools of the last recorded request (estimated tokens): what every
    /// request carries besides the messages.
    pub(crate) request_overhead: u64,
    /// Context messages already read, by entry id, one slot per context-message kind: entries never
    /// change, so a message is parsed once however many model calls see it. Looked up by `&str`, so a
    /// call allocates nothing for the messages it has seen. Cleared when the session is replaced
    /// (fork).
    pub(crate) messages: HashMap<Box<str>, [Option<Arc<MeasuredMessage>>; 5]>,
    /// The agent's last model request, continued by cache-prefix summaries.
    pub(crate) last_request: Option<crate::cache_prefix::RecordedRequest>,
    /// What the session's requests say about the hour-long prompt cache
    /// (`transforms.longCacheWhenItPays`).
    pub(crate) cache_lifetime: ctxkit_transform::LifetimeLearner,
}

pub(crate) struct Inner {
    pub(crate) state: tokio::sync::Mutex<State>,
    pub(crate) bus: EventBus,
    /// Replaced by [`Engine::set_summarizer`]; a summary in flight keeps the one it started with.
    pub(crate) summarizer: std::sync::RwLock<Arc<dyn Summarizer>>,
    pub(crate) prompts: Prompts,
    pub(crate) hooks: HookSet,
    /// Where hooks run and the file context is read (`EngineOptions::project`).
    pub(crate) project: ProjectDir,
    pub(crate) compacting: AtomicBool,
    /// Counts `cancel_compaction` calls, so a manual compaction still waiting for the turn or the
    /// lock can tell it was cancelled before it started.
    pub(crate) cancel_requests: AtomicU64,
    pub(crate) compaction_cancel: Mutex<Option<CancellationToken>>,
    pub(crate) branch_summary_cancel: Mutex<Option<CancellationToken>>,
    /// The running turn's cancellation, `None` when idle.
    pub(crate) turn: watch::Sender<Option<CancellationToken>>,
    /// Why the running turn was interrupted, once it was (the first reason given wins).
    pub(crate) interrupt_cause: Mutex<Option<InterruptCause>>,
    /// A compaction summary written in the background (`compaction.background`).
    pub(crate) background: Mutex<Option<crate::background::Background>>,
    /// Background summaries started so far.
    pub(crate) background_started: AtomicU64,
}

/// The context engine; clones share one engine.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Engine")
            .field("compacting", &self.is_compacting())
            .finish_non_exhaustive()
    }
}

/// Why a turn was interrupted: said in the tool results it leaves, which the model and the user
/// read later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptCause {
    /// The user (Ctrl-C, `agent.cancel`).
    User,
    /// The server is stopping (a signal, `shutdown`).
    ServerStopping,
    /// The client disconnected (its input ended).
    ClientGone,
}

impl InterruptCause {
    /// How a cancelled command's result ends.
    pub fn command_cancelled(self) -> &'static str {
        match self {
            Self::User => "Command cancelled by the user",
            Self::ServerStopping => "Command cancelled: the server is stopping",
            Self::ClientGone => "Command cancelled: the client disconnected",
        }
    }

    /// The result of a call not run because the turn was interrupted.
    pub fn call_not_run(self) -> &'static str {
        match self {
            Self::User => "Not run: the user interrupted the turn",
            Self::ServerStopping => "Not run: the server stopped the turn as it is stopping",
            Self::ClientGone => "Not run: the client disconnected",
        }
    }
}

/// A running agent turn; dropping it marks the turn finished. A manual compaction cancels the
/// turn's token and waits for the drop before it starts.
#[derive(Debug)]
pub struct TurnGuard {
    engine: Engine,
    cancel: CancellationToken,
}

impl TurnGuard {
    /// Fires when the turn must stop.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        self.engine.inner.turn.send_replace(None);
    }
}

/// Marks a compaction or branch summary as running, with its cancellation in `slot`, until dropped:
/// the flags are reset even when the caller drops the operation's future (a timeout, a `select!`).
pub(crate) struct Running<'a> {
    inner: &'a Inner,
    slot: &'a Mutex<Option<CancellationToken>>,
}

impl<'a> Running<'a> {
    pub(crate) fn start(
        inner: &'a Inner,
        slot: &'a Mutex<Option<CancellationToken>>,
        cancel: &CancellationToken,
    ) -> Self {
        if let Ok(mut slot) = slot.lock() {
            *slot = Some(cancel.clone());
        }
        inner.compacting.store(true, Ordering::SeqCst);
        Self { inner, slot }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.slot.lock() {
            *slot = None;
        }
        self.inner.compacting.store(false, Ordering::SeqCst);
    }
}

impl Engine {
    /// An engine over `session`. Command hooks from `settings.hooks` run after `options.hooks`.
    pub fn new(mut session: Session, options: EngineOptions) -> Self {
        session.set_durability(crate::settings::durability(&options.settings.session));
        let mut hooks = options.hooks;
        let project = ProjectDir::new(options.project);
        for config in &options.settings.hooks {
            hooks.push(Arc::new(CommandHook::new(config.clone(), project.clone())));
        }
        let (turn, _) = watch::channel(None);
        // The surface's level, else the settings' `defaultThinkingLevel`.
        let thinking_level = options
            .thinking_level
            .or_else(|| options.settings.default_thinking_level.clone());
        Self {
            inner: Arc::new(Inner {
                state: tokio::sync::Mutex::new(State {
                    session,
                    settings: options.settings,
                    model: options.model,
                    thinking_level,
                    overflow_attempts: 0,
                    overflow_cut: None,
                    over_count: 1.0,
                    accepted_max: 0,
                    limit_below_window: false,
                    limit_tokens: None,
                    last_request_estimate: None,
                    request_overhead: 0,
                    messages: HashMap::new(),
                    last_request: None,
                    cache_lifetime: ctxkit_transform::LifetimeLearner::default(),
                }),
                bus: EventBus::default(),
                summarizer: std::sync::RwLock::new(options.summarizer),
                prompts: options.prompts,
                hooks,
                project,
                compacting: AtomicBool::new(false),
                cancel_requests: AtomicU64::new(0),
                compaction_cancel: Mutex::new(None),
                branch_summary_cancel: Mutex::new(None),
                background: Mutex::new(None),
                background_started: AtomicU64::new(0),
                turn,
                interrupt_cause: Mutex::new(None),
            }),
        }
    }

    /// Every event from now on, in order.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<EngineEvent> {
        self.inner.bus.subscribe()
    }

    /// Calls `sink` with every event from now on, in order, on the thread that emits it and before
    /// the engine goes on: whatever `sink` sends is ordered before anything the caller of the
    /// engine's method does after it returns (a server answers a request after its events).
    pub fn add_sink(&self, sink: crate::events::EventSink) {
        self.inner.bus.add_sink(sink);
    }

    pub(crate) async fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().await
    }

    /// Whether a compaction or branch summary is running.
    pub fn is_compacting(&self) -> bool {
        self.inner.compacting.load(Ordering::SeqCst)
    }

    /// Runs `read` on the session (after any running compaction).
    pub async fn with_session<T>(&self, read: impl FnOnce(&Session) -> T) -> T {
        read(&self.lock().await.session)
    }

    /// The project the work happens in (`EngineOptions::project`).
    pub fn project(&self) -> std::path::PathBuf {
        self.inner.project.get()
    }

    /// Moves the work to `dir` (a server run that names its project): hooks run there and the
    /// file context is read beneath it from now on.
    pub fn set_project(&self, dir: std::path::PathBuf) {
        self.inner.project.set(dir);
    }

    /// Switches the conversation's model. Nothing runs now; the next check uses the new window.
    pub async fn set_model(&self, model: Option<ModelInfo>) {
        self.lock().await.replace_model(model);
    }

    /// The conversation's model.
    pub async fn model(&self) -> Option<ModelInfo> {
        self.lock().await.model.clone()
    }

    /// The compaction budgets in force: the settings with the current model's
    /// `compaction.modelOverrides` entry, the budgets nobody set adapted to its window, and under
    /// `compaction.thresholdTokens` the keep budget divided by the provider's over-count
    /// (`State::planning`).
    pub async fn planning(&self) -> ctxkit_compaction::CompactionSettings {
        self.lock().await.planning()
    }

    /// What a threshold or manual compaction would cover now, or why it would write nothing (the
    /// dry run, `/context`, "nothing to compact"). Pure: nothing is written, no model is asked.
    pub async fn plan(&self) -> Result<crate::planning::CompactionPlan> {
        let state = self.lock().await;
        crate::planning::plan(&state.session, state.planning())
    }

    /// The current settings.
    pub async fn settings(&self) -> EngineSettings {
        self.lock().await.settings.clone()
    }

    /// Marks a turn as running until the guard drops.
    pub fn begin_turn(&self) -> TurnGuard {
        if let Ok(mut cause) = self.inner.interrupt_cause.lock() {
            *cause = None;
        }
        let cancel = CancellationToken::new();
        self.inner.turn.send_replace(Some(cancel.clone()));
        TurnGuard {
            engine: self.clone(),
            cancel,
        }
    }

    /// Cancels the running turn, if any, without waiting for it (Ctrl-C in a UI): the user's
    /// interrupt.
    pub fn interrupt_turn(&self) {
        self.interrupt_turn_because(InterruptCause::User);
    }

    /// Cancels the running turn, if any, for `cause`, which what the turn leaves behind (a
    /// cancelled command's result, the calls not run) says.
    pub fn interrupt_turn_because(&self, cause: InterruptCause) {
        if let Some(cancel) = self.inner.turn.borrow().as_ref() {
            if let Ok(mut recorded) = self.inner.interrupt_cause.lock() {
                recorded.get_or_insert(cause);
            }
            cancel.cancel();
        }
    }

    /// Why the running (or last) turn was interrupted; the user's interrupt when no cause was
    /// given (a UI's own cancel of the turn's token).
    pub fn interrupt_cause(&self) -> InterruptCause {
        self.inner
            .interrupt_cause
            .lock()
            .ok()
            .and_then(|cause| *cause)
            .unwrap_or(InterruptCause::User)
    }

    /// Cancels a running turn and waits until its guard is dropped.
    pub(crate) async fn stop_turn(&self) {
        let mut receiver = self.inner.turn.subscribe();
        if let Some(cancel) = receiver.borrow().clone() {
            cancel.cancel();
        }
        // An error means the sender is gone, which cannot happen while `self` holds it.
        let _ = receiver.wait_for(Option::is_none).await;
    }

    /// Persists a message at the leaf. A reply that is not an error ends overflow recovery; a reply
    /// emits a context-usage event. A reply that carries the provider's compaction is followed by a
    /// compaction entry recording it (see `provider_compaction`).
    pub async fn append(&self, message: AgentMessage) -> Result<String> {
        let mut state = self.lock().await;
        let clears_recovery = message
            .as_assistant()
            .is_some_and(|assistant| !assistant.is_aborted_or_error());
        let is_reply = message.as_assistant().is_some();
        let compacted = message
            .as_assistant()
            .filter(|reply| clears_recovery && reply.provider_compaction().is_some())
            .cloned();
        if let Some(reply) = message.as_assistant().filter(|_| clears_recovery) {
            crate::recovery::learn_from_reply(&mut state, reply);
        }
        let id = state.session.append_message(message)?;
        if clears_recovery {
            state.overflow_attempts = 0;
            state.overflow_cut = None;
        }
        if let Some(reply) = compacted {
            crate::provider_compaction::record(&mut state, &id, &reply)?;
        }
        // The entry is written; the usage event is best effort and never fails the append.
        if is_reply && let Ok(Some(usage)) = crate::messages::context_usage(&mut state) {
            if let Some(tokens) = usage.tokens {
                self.maybe_start_background(&mut state, tokens);
            }
            self.inner.bus.emit(EngineEvent::ContextUsage(usage));
        }
        Ok(id)
    }

    /// Context usage (the reference's `getContextUsage`): `None` without a model or window.
    pub async fn context_usage(&self) -> Result<Option<ContextUsage>> {
        crate::messages::context_usage(&mut *self.lock().await)
    }

    /// The model's messages on the current branch, before transforms.
    pub async fn transcript(&self) -> Result<Vec<AgentMessage>> {
        crate::messages::transcript(&self.lock().await.session)
    }
}

impl State {
    /// Switches the model; what was learnt about the old one's provider is forgotten.
    pub(crate) fn replace_model(&mut self, model: Option<ModelInfo>) {
        if self.model != model {
            // What one model's provider counts says nothing about another's.
            self.over_count = 1.0;
            self.accepted_max = 0;
            self.limit_below_window = false;
            self.limit_tokens = None;
            self.last_request_estimate = None;
        }
        self.model = model;
        self.log_cache_terms();
    }

    /// Says in the log which prompt-cache terms the pruning rule weighs, and where they come from.
    pub(crate) fn log_cache_terms(&self) {
        let named = &self.settings.transforms;
        let from = if named.cache_read_percent.is_some()
            && named.cache_write_percent.is_some()
            && named.cache_reads_any_prefix.is_some()
        {
            "the settings"
        } else if self
            .model
            .as_ref()
            .is_some_and(|model| model.cache.is_some())
        {
            "the model's prices where the settings name none"
        } else {
            "Anthropic's where the settings name none: the model's prices are unknown"
        };
        let transforms = &self.model_settings().transforms;
        tracing::debug!(
            read_percent = transforms.cache_read_percent_or_default(),
            write_percent = transforms.cache_write_percent_or_default(),
            reads_any_prefix = transforms.cache_reads_any_prefix.unwrap_or(false),
            "the pruning rule weighs these prompt-cache terms, from {from}"
        );
    }

    /// The model's context window, 0 when unknown.
    pub(crate) fn context_window(&self) -> u64 {
        self.model.as_ref().map_or(0, |model| model.context_window)
    }

    /// The window requests must fit: the model's, or the provider's real limit when lower (0 when
    /// unknown).
    pub(crate) fn limit_window(&self) -> u64 {
        let window = self.context_window();
        match self.limit_tokens {
            Some(limit) if window == 0 || limit < window => limit,
            Some(_) | None => window,
        }
    }

    /// The limit the threshold is measured against, when below the window: the stated one, else
    /// (after a refusal under the window that stated none) the largest request accepted, at least
    /// half the window.
    pub(crate) fn threshold_limit(&self) -> Option<u64> {
        let window = self.context_window();
        self.limit_tokens.or_else(|| {
            (self.limit_below_window && window > 0)
                .then(|| self.accepted_max.max(window / 2).min(window))
        })
    }

    /// What a request needs after its input (output floor and margin, `ctxkit_overflow`): the
    /// threshold is never above the limit minus this.
    pub(crate) fn output_reserve(&self) -> u64 {
        let window = self.limit_window();
        if window == 0 {
            0
        } else {
            ctxkit_overflow::output_room(window, 0)
        }
    }

    /// The compaction settings for the current model (its `compaction.modelOverrides` entry
    /// applied).
    pub(crate) fn compaction_config(
        &self,
    ) -> std::borrow::Cow<'_, ctxkit_settings::CompactionConfig> {
        match &self.model {
            Some(model) => self
                .settings
                .compaction
                .for_model(&model.provider, &model.id),
            None => std::borrow::Cow::Borrowed(&self.settings.compaction),
        }
    }

    /// The settings for the current model: its compaction overrides (see
    /// [`State::compaction_config`]) and its prompt cache's terms where the transform settings
    /// leave them out.
    pub(crate) fn model_settings(&self) -> std::borrow::Cow<'_, EngineSettings> {
        use std::borrow::Cow;
        let cache = self.model.as_ref().and_then(|model| model.cache.as_ref());
        let transforms = self.settings.transforms.with_cache_terms(cache);
        match (self.compaction_config(), transforms) {
            (Cow::Borrowed(_), Cow::Borrowed(_)) => Cow::Borrowed(&self.settings),
            (compaction, transforms) => Cow::Owned(EngineSettings {
                compaction: compaction.into_owned(),
                transforms: transforms.into_owned(),
                ..self.settings.clone()
            }),
        }
    }

    /// The compaction budgets for the current model and its window. Under
    /// `compaction.thresholdTokens`, which is read against the provider's count, the keep budget is
    /// read in that count too: divided by the over-count learned so far. Kept in ctxkit's estimate
    /// it left the context closer to the threshold the more the provider counts, and at a ratio of
    /// 3 each compaction bought only a few requests (docs/simulator.md, twenty-seventh round).
    pub(crate) fn planning(&self) -> ctxkit_compaction::CompactionSettings {
        let config = self.compaction_config();
        let mut planning = config.planning(self.context_window());
        if config.threshold_tokens > 0 && self.over_count > 1.0 {
            planning.keep_recent_tokens =
                (planning.keep_recent_tokens as f64 / self.over_count) as u64;
        }
        planning
    }

    /// The window's own reserve for the current model: what `planning` reserves when
    /// `compaction.thresholdTokens` does not fold a threshold into it, and at least the reply's
    /// room. The threshold says when to compact; how long a summary runs and how much room a reply
    /// needs are the window's.
    pub(crate) fn window_reserve(&self) -> u64 {
        ctxkit_settings::CompactionConfig {
            threshold_tokens: 0,
            ..self.compaction_config().into_owned()
        }
        .planning(self.context_window())
        .reserve_tokens
        .max(self.output_reserve())
    }
}
