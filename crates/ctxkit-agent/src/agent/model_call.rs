//! One model call of a turn: the check that the reply gets its output room (compacting to make
//! it), and the streamed call whose deltas reach the observer in order.

use ctxkit_engine::EngineError;
use ctxkit_llm::{ChatDelta, ChatRequest};
use ctxkit_protocol::AssistantMessage;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentEvent, AgentObserver};

impl Agent {
    /// The estimated tokens of `request` when the model says its reply would get less output room
    /// than the floor (`ChatModel::output_room`); `None` when the room is enough or unknown.
    pub(super) fn output_shortfall(&self, request: &ChatRequest) -> Option<u64> {
        let room = self.model.output_room(request)?;
        if room.room >= room.floor {
            return None;
        }
        Some(ctxkit_llm::estimate_request_tokens(
            &request.system_prompt,
            &request.tools,
            &request.messages,
        ))
    }

    /// Compacts to make output room for a request of `tokens` estimated tokens (see
    /// [`Self::output_shortfall`]).
    pub(super) async fn make_output_room(
        &self,
        tokens: u64,
        observer: &dyn AgentObserver,
    ) -> Result<RoomCheck, EngineError> {
        let report = self.engine.make_output_room(tokens).await?;
        let compacted = report
            .compaction
            .as_ref()
            .is_some_and(|end| end.error.is_none() && !end.aborted);
        let cancelled = report.compaction.as_ref().is_some_and(|end| end.aborted);
        observer.event(AgentEvent::Checked(report)).await;
        Ok(if cancelled {
            RoomCheck::Cancelled
        } else if compacted {
            RoomCheck::Compacted
        } else {
            RoomCheck::Enough
        })
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
                Some(delta) = receiver.recv() => observer.event(delta_event(delta)).await,
                reply = &mut call => break reply,
            }
        };
        while let Ok(delta) = receiver.try_recv() {
            observer.event(delta_event(delta)).await;
        }
        reply
    }
}

/// What the check of a request's output room did.
pub(super) enum RoomCheck {
    /// Nothing could be compacted: send the request as it is.
    Enough,
    /// A compaction made room: build the request again.
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
