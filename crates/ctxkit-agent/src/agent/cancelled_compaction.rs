//! A run whose automatic compaction the user cancelled (Esc, Ctrl-C, `compact.cancel`) goes on
//! without it, as Pi 1.6's does: cancelling a compaction cancels only the compaction. The run
//! stops instead when the user stopped it too (Esc again while the compaction was ending), or when
//! the request cannot fit the model's window without the compaction (the provider would refuse it,
//! and its overflow recovery would start the compaction the user just cancelled).

use ctxkit_engine::EngineError;
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::AgentMessage;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentEvent, AgentObserver, TurnEnd};

/// What a run does after the user cancelled its automatic compaction
/// ([`AgentEvent::CompactionCancelled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterCancelledCompaction {
    /// The next request (or the prompt) goes out uncompacted.
    GoesOn,
    /// The user stopped the run too: nothing more is sent.
    Interrupted,
    /// The next request, about `tokens` estimated tokens with the prompt when there is one
    /// (`prompt`: the prompt is not stored, and goes back to the user), leaves no room for a reply
    /// in the model's `window`: nothing more is sent.
    DoesNotFit {
        tokens: u64,
        window: u64,
        prompt: bool,
    },
}

impl AfterCancelledCompaction {
    /// The one-line reason a run that cannot fit stops with; `None` for the other ends.
    pub fn reason(&self) -> Option<String> {
        match self {
            Self::DoesNotFit { tokens, window, .. } => Some(format!(
                "The context (about {tokens} tokens) does not fit the model's {window}-token \
                 context window without the compaction that was cancelled, so nothing was sent"
            )),
            Self::GoesOn | Self::Interrupted => None,
        }
    }
}

impl Agent {
    /// Decides, and tells `observer`, what the run does after its automatic compaction was
    /// cancelled: `stop` is the run's own cancellation (the user's interrupt), `pending` the prompt
    /// not stored yet, which the request will carry.
    pub(super) async fn after_cancelled_compaction(
        &self,
        stop: &CancellationToken,
        pending: &[AgentMessage],
        observer: &dyn AgentObserver,
    ) -> Result<AfterCancelledCompaction, EngineError> {
        let next = if stop.is_cancelled() {
            AfterCancelledCompaction::Interrupted
        } else {
            let request = self.build_request_with(pending).await?;
            self.fit(&request, !pending.is_empty())
        };
        observer
            .event(AgentEvent::CompactionCancelled(next.clone()))
            .await;
        Ok(next)
    }

    /// After the user cancelled an automatic compaction inside a turn: `None` when the turn goes on
    /// uncompacted, else how it ends.
    pub(super) async fn go_on_uncompacted(
        &self,
        cancel: &CancellationToken,
        observer: &dyn AgentObserver,
    ) -> Result<Option<TurnEnd>, EngineError> {
        let next = self
            .after_cancelled_compaction(cancel, &[], observer)
            .await?;
        Ok(match next {
            AfterCancelledCompaction::GoesOn => None,
            AfterCancelledCompaction::Interrupted => Some(TurnEnd::CompactionCancelled),
            AfterCancelledCompaction::DoesNotFit { .. } => {
                Some(TurnEnd::DoesNotFit(next.reason().unwrap_or_default()))
            }
        })
    }

    /// Whether `request` leaves room for a reply: its estimate and the estimate's safety margin
    /// (`ctxkit_overflow::output_margin`) under the model's window (the provider's own limit once
    /// it stated one). An unknown window fits.
    fn fit(&self, request: &ChatRequest, prompt: bool) -> AfterCancelledCompaction {
        let window = self.model.info().context_window;
        if window == 0 {
            return AfterCancelledCompaction::GoesOn;
        }
        let tokens = ctxkit_llm::request_input_tokens(request);
        if tokens.saturating_add(ctxkit_overflow::output_margin(window)) < window {
            AfterCancelledCompaction::GoesOn
        } else {
            AfterCancelledCompaction::DoesNotFit {
                tokens,
                window,
                prompt,
            }
        }
    }
}
