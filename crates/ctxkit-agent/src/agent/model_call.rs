//! One model call of a turn: the request built from the engine's view, the check that the reply
//! gets its output room (compacting to make it), the streamed call whose deltas reach the observer
//! in order, and the request recorded with the engine.

use ctxkit_engine::EngineError;
use ctxkit_llm::{CacheRetention, ChatDelta, ChatRequest};
use ctxkit_protocol::{AgentMessage, AssistantMessage};
use ctxkit_summarizer::{CacheHints, ConversationPrefix};
use ctxkit_transform::CacheLifetime;
use std::sync::atomic::Ordering;
use tokio_util::sync::CancellationToken;

use super::no_room::NoRoomCause;
use super::{Agent, AgentEvent, AgentObserver};

impl Agent {
    /// The next request: the engine's view of the branch after the system prompt the agent was
    /// given (with what the view adds to it), and the tools.
    /// When the last room check found that only the shortened view leaves the reply room
    /// ([`Agent::without_room`]), that view.
    pub(super) async fn build_request(&self) -> Result<ChatRequest, EngineError> {
        let view = if self.shorten_next_view.swap(false, Ordering::Relaxed) {
            ViewKind::Shortened
        } else {
            ViewKind::Configured
        };
        self.build_request_of(view, &[]).await
    }

    /// [`Self::build_request`] with `pending` (a prompt not stored yet) after the view. Its input
    /// is what the engine projects (`Engine::projected_input_tokens`: the last request's count
    /// plus the change of the view since, the transforms' cuts subtracted), which every check of
    /// its room measures and its output limit is fitted to.
    pub(super) async fn build_request_with(
        &self,
        pending: &[AgentMessage],
    ) -> Result<ChatRequest, EngineError> {
        self.build_request_of(ViewKind::Configured, pending).await
    }

    /// [`Self::build_request_with`] from the view of `kind`.
    pub(super) async fn build_request_of(
        &self,
        kind: ViewKind,
        pending: &[AgentMessage],
    ) -> Result<ChatRequest, EngineError> {
        let mut view = match kind {
            ViewKind::Configured => self.engine.model_view().await?,
            ViewKind::Shortened => self.engine.model_view_shortened().await?,
        };
        // Measured after the view, whose estimate the engine keeps for it.
        let projected_input_tokens = self.engine.projected_input_tokens(pending).await?;
        view.messages.extend_from_slice(pending);
        // Markers and summaries point at `recall`; without it they must not.
        if !self
            .tools
            .names()
            .any(|name| name == ctxkit_protocol::RECALL_TOOL)
        {
            view = view.without_recall();
        }
        // The session's id keys its prompt cache (OpenAI's `prompt_cache_key`, as Pi sends it).
        let session_id = self
            .engine
            .with_session(|session| session.id().to_owned())
            .await;
        let mut system_prompt = self.options.system_prompt.clone();
        for text in &view.system {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(text);
        }
        Ok(ChatRequest {
            system_prompt,
            messages: view.messages,
            tools: self.tools.definitions(),
            max_tokens: self.options.max_tokens,
            reasoning: self.options.reasoning,
            cache_retention: retention_asked(view.cache_lifetime),
            cache: CacheHints {
                key: Some(session_id),
                stable_prefix_end: view.last_cut_tool_result,
            },
            projected_input_tokens,
        })
    }

    /// Tells the engine what was sent (before the reply is appended): cache-prefix summaries
    /// continue it, and overflow recovery weighs the reply's usage against its estimate.
    pub(super) async fn record_request(&self, request: ChatRequest) {
        let info = self.model.info();
        self.engine
            .record_model_request(ConversationPrefix {
                provider: info.provider,
                model: info.id,
                system_prompt: request.system_prompt,
                request_messages: request.messages.len(),
                messages: request.messages,
                tools: request.tools,
                reasoning: request.reasoning.map(|level| level.as_str().to_owned()),
                cache: request.cache,
            })
            .await;
    }

    /// The estimated tokens of `request` when the model says its reply would get less output room
    /// than the floor (`ChatModel::output_room`); `None` when the room is enough or unknown.
    pub(super) fn output_shortfall(&self, request: &ChatRequest) -> Option<u64> {
        let room = self.model.output_room(request)?;
        if room.room >= room.floor {
            return None;
        }
        Some(ctxkit_llm::request_input_tokens(request))
    }

    /// Compacts to make output room for a request of `tokens` estimated tokens (see
    /// [`Self::output_shortfall`]).
    pub(super) async fn make_output_room(
        &self,
        tokens: u64,
        observer: &dyn AgentObserver,
    ) -> Result<RoomCheck, EngineError> {
        let report = self.engine.make_output_room(tokens).await?;
        let check = match report.compaction.as_ref() {
            Some(end) if end.aborted => RoomCheck::Cancelled,
            // A summary, a hook's, or the `truncate` fallback's entry without one.
            Some(end) if end.entry_id.is_some() => RoomCheck::Compacted,
            Some(_) | None => RoomCheck::NotCompacted(NoRoomCause::of(&report)),
        };
        observer.event(AgentEvent::Checked(report)).await;
        Ok(check)
    }

    /// One streamed model call; its deltas go to the observer as they arrive, in order.
    pub(super) async fn call_model(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        observer: &dyn AgentObserver,
    ) -> AssistantMessage {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut sink = move |delta: ChatDelta| {
            // The receiver lives until every delta is forwarded below.
            let _ = sender.send(delta);
        };
        let call = self.model.chat_streaming(request, cancel, &mut sink);
        tokio::pin!(call);
        let reply = loop {
            tokio::select! {
                biased;
                Some(delta) = receiver.recv() => self.pass_on(delta, observer).await,
                reply = &mut call => break reply,
            }
        };
        while let Ok(delta) = receiver.try_recv() {
            self.pass_on(delta, observer).await;
        }
        reply
    }

    /// Shows a streamed piece, and records what an attempt dropped for a restart used (a `usage`
    /// entry of kind `retry`: paid for, and in no reply the session keeps; the verifier,
    /// 2026-12-07: `/cost` left broken attempts out).
    async fn pass_on(&self, delta: ChatDelta, observer: &dyn AgentObserver) {
        if let ChatDelta::Retrying(notice) = &delta
            && let Some(usage) = notice.dropped_usage.clone()
        {
            let info = self.model.info();
            if let Err(error) = self.engine.record_usage("retry", &info, *usage).await {
                tracing::warn!(%error, "the usage of a dropped attempt was not recorded");
            }
        }
        observer.event(delta_event(delta)).await;
    }
}

/// Which view of the session a request is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ViewKind {
    /// The transforms as configured.
    Configured,
    /// Every long tool output cut to its marker, the turn in progress' too
    /// (`Engine::model_view_shortened`).
    Shortened,
}

/// What the check of a request's output room did.
pub(super) enum RoomCheck {
    /// No compaction was written, and why: the request goes out only if its reply now gets its
    /// floor ([`Agent::without_room`]).
    NotCompacted(NoRoomCause),
    /// A compaction was written: build the request again.
    Compacted,
    /// The user cancelled the compaction.
    Cancelled,
}

/// The event of a streamed piece: a retry notice is an event of its own.
fn delta_event(delta: ChatDelta) -> AgentEvent {
    match delta {
        ChatDelta::Retrying(notice) => AgentEvent::ProviderRetry(notice),
        ChatDelta::Text(_)
        | ChatDelta::Thinking(_)
        | ChatDelta::ToolCall { .. }
        | ChatDelta::BlockEnd => AgentEvent::Delta(delta),
    }
}

/// What the provider did to the request's context, as the reply says (logged, not shown).
pub(super) fn log_provider_context_changes(reply: &AssistantMessage) {
    for edit in reply.provider_context_edits() {
        tracing::info!(
            edit = edit.kind.as_str(),
            cleared_tool_uses = edit.cleared_tool_uses,
            cleared_thinking_turns = edit.cleared_thinking_turns,
            cleared_input_tokens = edit.cleared_input_tokens,
            "the provider cleared context from the request"
        );
    }
    if reply.provider_compaction().is_some() {
        tracing::info!(
            readable = reply.provider_compaction_summary().is_some(),
            "the provider compacted the conversation"
        );
    }
}

/// The prompt-cache lifetime a request asks for instead of the model's: the hour when the engine
/// says the session's pauses pay for it (`transforms.longCacheWhenItPays`).
fn retention_asked(lifetime: CacheLifetime) -> Option<CacheRetention> {
    match lifetime {
        CacheLifetime::Configured => None,
        CacheLifetime::Long => Some(CacheRetention::Long),
    }
}
