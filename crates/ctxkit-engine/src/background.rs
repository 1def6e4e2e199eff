//! Background compaction: from `compaction.backgroundPercent` of the window the summary of the
//! current plan is written while the agent goes on, so the compaction at the threshold only has to
//! append it. It is used only if the branch has not moved past what it summarized (same latest
//! compaction, its first kept entry still on the branch); otherwise it is dropped and the threshold
//! compaction summarizes as usual. With `compaction.provider: "on-demand"` the background request
//! is the provider's compaction of the span (the docs' background compaction: the block is
//! swapped in at the threshold, the turns added since stay after it).

use ctxkit_compaction::{CompactOptions, CompactionResult, NoPlanReason, prepare_compaction};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::settings::CompactionBudgets as _;
use crate::state::State;

/// A summary being written (or written) in the background.
pub(crate) struct Background {
    /// The latest compaction on the branch when the plan was made.
    boundary: Option<String>,
    first_kept_entry_id: String,
    cancel: CancellationToken,
    task: JoinHandle<Option<CompactionResult>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The id of the latest compaction on the current branch.
fn latest_compaction_id(state: &State) -> Option<String> {
    state
        .session
        .branch_path(None)
        .iter()
        .rev()
        .find(|entry| entry.type_name() == "compaction")
        .map(|entry| entry.id().to_owned())
}

impl Engine {
    /// Background summaries started since the engine was made, replaced ones included (for
    /// measurements such as the simulator's, which bills each summarizer call).
    pub fn background_summaries_started(&self) -> u64 {
        self.inner
            .background_started
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// After a reply: starts a background summary when the context is past
    /// `backgroundPercent` of the window (of the threshold with `thresholdTokens`) but under the compaction threshold, and none is running
    /// for this part of the branch. Hooks may supply summaries themselves, so with hooks nothing
    /// is precomputed.
    pub(crate) fn maybe_start_background(&self, state: &mut State, tokens: u64) {
        let config = state.compaction_config().into_owned();
        let window = state.context_window();
        if !config.enabled || !config.background || window == 0 || !self.inner.hooks.is_empty() {
            return;
        }
        let planning = state.planning();
        // The checks' own threshold (the reserve at least the output room a request needs): above
        // it a check compacts now, so a summary started there is one the run either waits for at
        // once or, after the user cancelled that compaction, pays for again (QA 2026-12-07: a
        // 16k window's summary was sent again 6 ms after Esc cancelled it).
        let reserve = planning.reserve_tokens.max(state.output_reserve());
        let planned = ctxkit_tokens::compaction_threshold(window, reserve);
        // After a compaction the provider counted more of than ctxkit's estimate, the check
        // compacts past the planned threshold (`compact::spacing`): the summary starts at the same
        // share of that one, so it leaves unsummarized what the share meant, not the extra room.
        let (start, threshold) = match crate::compact::spaced_threshold(state) {
            Some(spaced) if spaced > planned => (
                spaced.saturating_mul(config.background_percent) / 100,
                spaced,
            ),
            Some(_) | None => (config.background_start(window), planned),
        };
        if tokens < start || tokens > threshold {
            return;
        }
        let boundary = latest_compaction_id(state);
        let Ok(mut slot) = self.inner.background.lock() else {
            return;
        };
        if slot
            .as_ref()
            .is_some_and(|running| running.boundary == boundary)
        {
            return;
        }
        let plan = match prepare_compaction(&state.session, None, planning) {
            Ok(Ok(plan))
                if !(plan.messages_to_summarize.is_empty()
                    && plan.turn_prefix_messages.is_empty()) =>
            {
                plan
            }
            Ok(Ok(_))
            | Ok(Err(
                NoPlanReason::AlreadyCompacted
                | NoPlanReason::NothingToCompact
                | NoPlanReason::NothingToSummarize,
            ))
            | Err(_) => return,
        };
        let cancel = CancellationToken::new();
        let summarizer = self.summarizer();
        let prompts = self.inner.prompts.clone();
        let options = CompactOptions {
            focus: None,
            thinking_level: state.thinking_level.clone(),
            file_context: String::new(),
            cache_prefix: crate::cache_prefix::cache_prefix(state),
            append_below_tokens: config.append_below_tokens(state.context_window()),
        };
        let first_kept_entry_id = plan.first_kept_entry_id.clone();
        let on_demand = crate::on_demand::plan_on_demand(state, &plan);
        tracing::info!(tokens, first_kept = %first_kept_entry_id, "background summary started");
        let task_cancel = cancel.clone();
        let task = tokio::spawn(async move {
            crate::on_demand::summarize(
                summarizer.as_ref(),
                &prompts,
                &plan,
                &options,
                on_demand,
                &task_cancel,
            )
            .await
            .ok()
        });
        self.inner
            .background_started
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        *slot = Some(Background {
            boundary,
            first_kept_entry_id,
            cancel,
            task,
        });
    }

    /// At a threshold compaction: the background summary, waited for if still being written, when
    /// it still fits the branch; `None` (and the background work dropped) otherwise. The wait
    /// watches the compaction's `cancel`: cancelled, the background work is dropped (its request
    /// cancelled) and the compaction ends as any cancelled one does.
    pub(crate) async fn take_background(
        &self,
        state: &State,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionResult>, EngineError> {
        let taken = self
            .inner
            .background
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        let Some(background) = taken else {
            return Ok(None);
        };
        let still_fits = background.boundary == latest_compaction_id(state)
            && state
                .session
                .branch_path(None)
                .iter()
                .any(|entry| entry.id() == background.first_kept_entry_id);
        if !still_fits {
            tracing::info!("background summary dropped: the branch moved past it");
            return Ok(None);
        }
        let mut background = background;
        tokio::select! {
            // Dropping `background` cancels its request.
            () = cancel.cancelled() => Err(EngineError::Cancelled),
            finished = &mut background.task => Ok(finished.ok().flatten()),
        }
    }
}
