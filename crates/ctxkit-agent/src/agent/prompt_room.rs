//! Whether a prompt goes out, decided before it is stored: its first request (the prompt with it)
//! gets its output room first, compacting to make it, as every model call does. The check runs
//! before the prompt is appended so that when the user cancels that compaction and the request
//! cannot go out without it, nothing is left in the session: the prompt's text is given back (QA
//! r97: it stayed stored, unanswered and unsent, and the next prompt followed it as a second user
//! message in a row).

use ctxkit_engine::EngineError;
use ctxkit_protocol::AgentMessage;
use tokio_util::sync::CancellationToken;

use super::model_call::RoomCheck;
use super::no_room::NoRoomCause;
use super::{AfterCancelledCompaction, Agent, AgentEvent, AgentObserver};

/// What becomes of a prompt not stored yet.
pub(super) enum PromptGoes {
    /// It is stored and sent; its first request needs no output-room check of its own (it had
    /// one, or the user cancelled the compaction it would start again).
    Out,
    /// The user cancelled the compaction it needed, or that compaction made no room (it failed,
    /// there was nothing to compact), and it cannot go out without it: it is not stored.
    NotSent,
}

impl Agent {
    /// Decides whether `prompt` goes out: `cancelled_before` when the user cancelled the
    /// compaction before the prompt (the engine's `before_prompt`), `stop` the run's own
    /// cancellation (the user's interrupt).
    pub(super) async fn prompt_goes(
        &self,
        prompt: &AgentMessage,
        cancelled_before: bool,
        stop: &CancellationToken,
        observer: &dyn AgentObserver,
    ) -> Result<PromptGoes, EngineError> {
        let pending = std::slice::from_ref(prompt);
        if !cancelled_before {
            let request = self.build_request_with(pending).await?;
            let Some(tokens) = self.output_shortfall(&request) else {
                return Ok(PromptGoes::Out);
            };
            // No compaction could make room for a prompt larger than the window: none is made.
            // The view is let go of here, before a compaction reads the same messages.
            if let Some(stop) = self.prompt_alone_too_large(request, prompt) {
                observer.event(AgentEvent::NoOutputRoom(stop)).await;
                return Ok(PromptGoes::NotSent);
            }
            // A compaction written, or none: the prompt goes out only if its reply now gets its
            // floor. A cancelled one is decided below.
            let cause = match self.make_output_room(tokens, observer).await? {
                RoomCheck::Compacted => Some(NoRoomCause::CompactedTooLittle),
                RoomCheck::NotCompacted(cause) => Some(cause),
                RoomCheck::Cancelled => None,
            };
            if let Some(cause) = cause {
                let stop = self.without_room(cause, pending, observer).await?;
                return Ok(match stop {
                    None => PromptGoes::Out,
                    Some(_) => PromptGoes::NotSent,
                });
            }
        }
        let next = self
            .after_cancelled_compaction(stop, pending, observer)
            .await?;
        Ok(match next {
            AfterCancelledCompaction::GoesOn => PromptGoes::Out,
            AfterCancelledCompaction::Interrupted | AfterCancelledCompaction::DoesNotFit { .. } => {
                PromptGoes::NotSent
            }
        })
    }
}
