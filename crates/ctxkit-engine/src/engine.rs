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
use tokio::sync::{MutexGuard, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::check::ModelInfo;
use crate::command_hooks::CommandHook;
use crate::error::Result;
use crate::events::{ContextUsage, EngineEvent, EventBus};
use crate::hooks::HookSet;
use crate::project::ProjectDir;
use crate::settings::EngineSettings;
use crate::state::State;

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
    /// The session's facts while a compaction or branch summary runs (`Running`), read without
    /// the state's lock it holds.
    pub(crate) facts_while_running: Mutex<Option<crate::facts::SessionFacts>>,
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
    /// A compaction asked for during the turn (`/compact`, `compact`) stopped it first.
    Compaction,
    /// The chat is ending: its terminal closed (SIGHUP) or it was told to stop (SIGTERM).
    ChatClosed,
}

impl InterruptCause {
    /// How a cancelled command's result ends.
    pub fn command_cancelled(self) -> &'static str {
        match self {
            Self::User => "Command cancelled by the user",
            Self::ServerStopping => "Command cancelled: the server is stopping",
            Self::ClientGone => "Command cancelled: the client disconnected",
            Self::Compaction => "Command cancelled: a compaction stopped the turn",
            Self::ChatClosed => "Command cancelled: the chat was closed",
        }
    }

    /// The result of a call not run because the turn was interrupted.
    pub fn call_not_run(self) -> &'static str {
        match self {
            Self::User => "Not run: the user interrupted the turn",
            Self::ServerStopping => "Not run: the server stopped the turn as it is stopping",
            Self::ClientGone => "Not run: the client disconnected",
            Self::Compaction => "Not run: a compaction stopped the turn",
            Self::ChatClosed => "Not run: the chat was closed",
        }
    }
}

/// A running agent turn; dropping it marks the turn finished and fires its token, so whatever the
/// turn started with it (a `bash` command on a blocking thread, a model request) stops when the
/// turn's future is dropped before it ends (a caller's timeout, a `select!`, an aborted task). A
/// manual compaction cancels the turn's token and waits for the drop before it starts.
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
        // A turn that ended has nothing left to stop; one whose future was dropped midway has.
        self.cancel.cancel();
    }
}

/// Marks a compaction or branch summary as running, with its cancellation in `slot`, until dropped:
/// the flags are reset even when the caller drops the operation's future (a timeout, a `select!`).
pub(crate) struct Running<'a> {
    inner: &'a Inner,
    slot: &'a Mutex<Option<CancellationToken>>,
}

impl<'a> Running<'a> {
    /// Marks the run of `session` (held by the caller, so nothing else writes it meanwhile).
    pub(crate) fn start(
        inner: &'a Inner,
        slot: &'a Mutex<Option<CancellationToken>>,
        cancel: &CancellationToken,
        session: &Session,
    ) -> Self {
        if let Ok(mut slot) = slot.lock() {
            *slot = Some(cancel.clone());
        }
        if let Ok(mut facts) = inner.facts_while_running.lock() {
            *facts = Some(crate::facts::SessionFacts::of(session));
        }
        inner.compacting.store(true, Ordering::SeqCst);
        Self { inner, slot }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.inner.stop_running(self.slot);
    }
}

impl Inner {
    /// Marks the compaction or branch summary whose cancellation is in `slot` as no longer running.
    pub(crate) fn stop_running(&self, slot: &Mutex<Option<CancellationToken>>) {
        if let Ok(mut slot) = slot.lock() {
            *slot = None;
        }
        self.compacting.store(false, Ordering::SeqCst);
        if let Ok(mut facts) = self.facts_while_running.lock() {
            *facts = None;
        }
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
                    overflow_written: 0,
                    over_count: 1.0,
                    accepted_max: 0,
                    limit_below_window: false,
                    limit_tokens: None,
                    refused_count: None,
                    last_request_estimate: None,
                    request_overhead: 0,
                    unrecorded_overhead: crate::context_status::UnrecordedOverhead::Omitted,
                    messages: HashMap::new(),
                    last_request: None,
                    cache_lifetime: ctxkit_transform::LifetimeLearner::default(),
                    calibration: crate::projection::Calibration::default(),
                }),
                bus: EventBus::default(),
                summarizer: std::sync::RwLock::new(options.summarizer),
                prompts: options.prompts,
                hooks,
                project,
                compacting: AtomicBool::new(false),
                facts_while_running: Mutex::new(None),
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

    /// Whether the running compaction or branch summary was asked to stop and has not ended yet:
    /// a UI's second interrupt meanwhile is meant for the turn (`interrupt_turn`), not for it.
    pub fn is_cancelling(&self) -> bool {
        let cancelled = |slot: &Mutex<Option<CancellationToken>>| {
            slot.lock()
                .ok()
                .and_then(|token| token.as_ref().map(CancellationToken::is_cancelled))
                .unwrap_or(false)
        };
        cancelled(&self.inner.compaction_cancel) || cancelled(&self.inner.branch_summary_cancel)
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

    /// Plans with `limit`, a limit the provider stated below the model's window (learned by the
    /// model client, from an overflow error of a request the engine did not see: a summary's, or
    /// an earlier agent's), as with one stated in an overflow the engine recovers.
    pub async fn note_stated_limit(&self, limit: u64) {
        self.lock().await.note_stated_limit(limit);
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
        // Said in what the turn leaves (a `bash` result read "cancelled by the user").
        self.interrupt_turn_because(InterruptCause::Compaction);
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
        crate::projection::note_reply(&mut state, &message);
        let id = state.session.append_message(message)?;
        if clears_recovery {
            state.overflow_attempts = 0;
            state.overflow_cut = None;
            state.overflow_written = 0;
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
