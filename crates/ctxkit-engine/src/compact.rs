//! Compaction in the agent loop: the checks after a run and before a prompt, overflow recovery
//! (compact, then retry exactly once), manual compaction, cancellation, and the fallback when
//! summarization fails.

use std::sync::atomic::Ordering;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, NoPlanReason, Preparation, check_after_compaction,
    prepare_compaction,
};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::{NewCompaction, SummarySource};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::check::{CheckInput, Decision, SkipReason, Trigger, decide};
use crate::engine::{Engine, Running, State, latest_compaction_ms, shared_transcript, transcript};
use crate::error::{EngineError, Result};
use crate::events::{CompactionEnd, CompactionReason, EngineEvent};
use crate::hooks::{AfterCompact, BeforeCompact};
use crate::settings::FallbackPolicy;

/// Overflow compactions in a row (without a successful reply between them) before recovery gives
/// up. Each keeps half of what the one before kept, so a provider that counts more tokens than
/// ctxkit's estimate is still caught up with.
pub const MAX_OVERFLOW_ATTEMPTS: u32 = 6;

/// Reported when replies keep overflowing after [`MAX_OVERFLOW_ATTEMPTS`] compactions in a row.
pub const RECOVERY_EXHAUSTED: &str = "Context overflow recovery failed after repeated compactions; the request still does not fit. Try a shorter message or a model with a larger context window.";

/// What a check did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub decision: Decision,
    /// The end of the compaction the check ran, or of the exhausted recovery.
    pub compaction: Option<CompactionEnd>,
    /// The loop must now run the model again without a new user message (overflow recovery).
    pub retry: bool,
}

/// A compaction entry that was written.
struct Written {
    entry_id: String,
    first_kept_entry_id: String,
    /// Estimated like `tokens_after`.
    tokens_before: u64,
    tokens_after: u64,
    from_hook: bool,
    fallback_error: Option<String>,
    advice: Option<String>,
}

impl Engine {
    /// The check after an agent run (aborted replies are skipped). Call it when a run ends; when
    /// the report says `retry`, run the model again on the new view.
    pub async fn after_run(&self) -> Result<CheckReport> {
        self.check(Trigger::AfterRun).await
    }

    /// The check before a prompt, awaited before the user message is appended. Waits for a
    /// compaction in flight instead of starting a second one.
    pub async fn before_prompt(&self) -> Result<CheckReport> {
        self.check(Trigger::BeforePrompt).await
    }

    async fn check(&self, trigger: Trigger) -> Result<CheckReport> {
        let mut state = self.lock().await;
        let transcript = shared_transcript(&mut state)?;
        let planning = state.planning();
        let decision = decide(&CheckInput {
            trigger,
            enabled: state.settings.compaction.enabled,
            reserve_tokens: planning.reserve_tokens,
            model: state.model.as_ref(),
            transcript: &transcript,
            latest_compaction_ms: latest_compaction_ms(&state.session),
            fresh_from: Some(fresh_from(&state.session)),
            overflow_recovery_attempted: state.overflow_attempts >= MAX_OVERFLOW_ATTEMPTS,
        });
        tracing::debug!(
            ?trigger,
            ?decision,
            attempts = state.overflow_attempts,
            "compaction check"
        );
        let skip = |decision| {
            Ok(CheckReport {
                decision,
                compaction: None,
                retry: false,
            })
        };
        let reason = match decision {
            Decision::Skip(_) => return skip(decision),
            Decision::RecoveryExhausted => {
                if trigger == Trigger::BeforePrompt {
                    return skip(Decision::Skip(SkipReason::OverflowHandled));
                }
                let end = CompactionEnd {
                    error: Some(RECOVERY_EXHAUSTED.to_owned()),
                    ..empty_end(CompactionReason::Overflow)
                };
                // Every `compaction_end` follows a `compaction_start`, so a UI pairs them.
                self.inner.bus.emit(EngineEvent::CompactionStart {
                    reason: CompactionReason::Overflow,
                });
                self.inner.bus.emit(EngineEvent::CompactionEnd(end.clone()));
                return Ok(CheckReport {
                    decision,
                    compaction: Some(end),
                    retry: false,
                });
            }
            Decision::Overflow => {
                // An overflow already handled when it happened (compacted and retried, or
                // reported) is not handled again before the next prompt: that prompt moves the
                // turn boundary, so a new overflow after it can compact what this one could not.
                if trigger == Trigger::BeforePrompt && state.overflow_attempts > 0 {
                    return skip(Decision::Skip(SkipReason::OverflowHandled));
                }
                state.overflow_attempts += 1;
                CompactionReason::Overflow
            }
            Decision::Threshold { .. } => {
                // Over the threshold with nothing to summarize (everything fits in the keep
                // budget): no compaction starts, so a UI shows nothing.
                let plan = prepare_compaction(&state.session, None, planning)?;
                if !plan.is_ok_and(|plan| !is_empty_span(&plan)) {
                    return skip(Decision::Skip(SkipReason::NothingToCompact));
                }
                CompactionReason::Threshold
            }
        };
        let retry_allowed = trigger == Trigger::AfterRun;
        let end = match self
            .run_locked(&mut state, reason, None, retry_allowed)
            .await
        {
            Ok(end) | Err((end, _)) => end,
        };
        Ok(CheckReport {
            decision,
            retry: end.will_retry,
            compaction: Some(end),
        })
    }

    /// Compacts now, with optional focus text. A running turn is cancelled first and waited for; a
    /// compaction in flight is waited for. On cancel or failure nothing is written. With nothing to
    /// summarize it answers `NothingToCompact` (or `AlreadyCompacted`) without starting (no events).
    ///
    /// Must not be awaited by the task that holds the running turn's [`TurnGuard`](crate::TurnGuard):
    /// it waits for that guard to be dropped.
    pub async fn compact(&self, focus: Option<String>) -> Result<CompactionEnd> {
        let requests = self.inner.cancel_requests.load(Ordering::SeqCst);
        self.stop_turn().await;
        let mut state = self.lock().await;
        if self.inner.cancel_requests.load(Ordering::SeqCst) != requests {
            // Cancelled while waiting for the turn or a compaction in flight.
            let end = CompactionEnd {
                aborted: true,
                ..empty_end(CompactionReason::Manual)
            };
            self.inner.bus.emit(EngineEvent::CompactionStart {
                reason: CompactionReason::Manual,
            });
            self.inner.bus.emit(EngineEvent::CompactionEnd(end));
            return Err(EngineError::Cancelled);
        }
        let focus = focus.filter(|text| !text.trim().is_empty());
        // Nothing to summarize: said by the result alone, no compaction starts (no events).
        let planning = state.planning();
        match prepare_compaction(&state.session, None, planning)? {
            Ok(plan) if !is_empty_span(&plan) => {}
            Ok(_) | Err(NoPlanReason::NothingToCompact | NoPlanReason::NothingToSummarize) => {
                return Err(EngineError::NothingToCompact);
            }
            Err(NoPlanReason::AlreadyCompacted) => return Err(EngineError::AlreadyCompacted),
        }
        self.run_locked(&mut state, CompactionReason::Manual, focus, false)
            .await
            .map_err(|(_, error)| error)
    }

    /// Cancels the running compaction, if any; nothing is written.
    pub fn cancel_compaction(&self) {
        self.inner.cancel_requests.fetch_add(1, Ordering::SeqCst);
        if let Ok(slot) = self.inner.compaction_cancel.lock()
            && let Some(cancel) = slot.as_ref()
        {
            cancel.cancel();
        }
    }

    async fn run_locked(
        &self,
        state: &mut State,
        reason: CompactionReason,
        focus: Option<String>,
        retry_allowed: bool,
    ) -> std::result::Result<CompactionEnd, (CompactionEnd, EngineError)> {
        let cancel = CancellationToken::new();
        let running = Running::start(&self.inner, &self.inner.compaction_cancel, &cancel);
        self.inner.bus.emit(EngineEvent::CompactionStart { reason });
        let outcome = self.write_compaction(state, reason, focus, &cancel).await;
        drop(running);
        match &outcome {
            Ok(written) => tracing::info!(
                ?reason,
                tokens_before = written.tokens_before,
                tokens_after = written.tokens_after,
                first_kept = %written.first_kept_entry_id,
                fallback = written.fallback_error.is_some(),
                "compaction written"
            ),
            Err(error) => tracing::info!(?reason, %error, "compaction not written"),
        }
        let (end, error) = match outcome {
            Ok(written) => {
                let will_retry =
                    reason == CompactionReason::Overflow && retry_allowed && can_continue(state);
                let end = CompactionEnd {
                    will_retry,
                    tokens_before: Some(written.tokens_before),
                    tokens_after: Some(written.tokens_after),
                    first_kept_entry_id: Some(written.first_kept_entry_id),
                    entry_id: Some(written.entry_id),
                    from_hook: written.from_hook,
                    fallback: written.fallback_error.is_some(),
                    error: written.fallback_error,
                    advice: written.advice,
                    ..empty_end(reason)
                };
                (end, None)
            }
            Err(error) => {
                let end = match (&error, reason) {
                    (EngineError::Cancelled, _) => CompactionEnd {
                        aborted: true,
                        ..empty_end(reason)
                    },
                    // Nothing to compact is a silent stop for threshold compaction; an overflow
                    // says why it cannot be recovered.
                    (
                        EngineError::AlreadyCompacted | EngineError::NothingToCompact,
                        CompactionReason::Threshold,
                    ) => empty_end(reason),
                    (_, CompactionReason::Overflow) => CompactionEnd {
                        error: Some(format!("Context overflow recovery failed: {error}")),
                        ..empty_end(reason)
                    },
                    (_, CompactionReason::Threshold) => CompactionEnd {
                        error: Some(format!("Auto-compaction failed: {error}")),
                        ..empty_end(reason)
                    },
                    (_, CompactionReason::Manual) => CompactionEnd {
                        error: Some(format!("Compaction failed: {error}")),
                        ..empty_end(reason)
                    },
                };
                (end, Some(error))
            }
        };
        self.inner.bus.emit(EngineEvent::CompactionEnd(end.clone()));
        if let Ok(Some(usage)) = crate::engine::context_usage(state) {
            self.inner.bus.emit(EngineEvent::ContextUsage(usage));
        }
        match error {
            None => Ok(end),
            Some(error) => Err((end, error)),
        }
    }

    async fn write_compaction(
        &self,
        state: &mut State,
        reason: CompactionReason,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Written> {
        let planning = state.planning();
        let plan = match reason {
            CompactionReason::Overflow => overflow_plan(state, state.overflow_attempts)?,
            CompactionReason::Threshold | CompactionReason::Manual => {
                let plan = match prepare_compaction(&state.session, None, planning)? {
                    Ok(plan) => plan,
                    Err(NoPlanReason::AlreadyCompacted) => {
                        return Err(EngineError::AlreadyCompacted);
                    }
                    Err(NoPlanReason::NothingToCompact | NoPlanReason::NothingToSummarize) => {
                        return Err(EngineError::NothingToCompact);
                    }
                };
                // The whole context fits in keepRecentTokens: the reference still asks the model
                // for a summary of nothing and writes it, which only makes the context longer.
                if is_empty_span(&plan) {
                    return Err(EngineError::NothingToCompact);
                }
                plan
            }
        };
        let mut from_hook = false;
        let mut fallback_error = None;
        let mut hooked = None;
        if !self.inner.hooks.is_empty() {
            let event = BeforeCompact {
                reason,
                preparation: (&plan).into(),
                branch_entries: branch_entries(state),
                custom_instructions: focus.clone(),
            };
            match self
                .inner
                .hooks
                .before_compact(&self.inner.bus, &event, cancel)
                .await
            {
                Some(answer) if answer.cancel => return Err(EngineError::Cancelled),
                Some(answer) => hooked = answer.compaction,
                None => {}
            }
            // A cancel that arrived while the hooks ran wins over what they answered.
            if cancel.is_cancelled() {
                return Err(EngineError::Cancelled);
            }
        }
        // A threshold compaction takes the summary written in the background when it still fits.
        let background = match (&hooked, reason) {
            (None, CompactionReason::Threshold) => self.take_background(state).await,
            (Some(_), _) | (None, CompactionReason::Overflow | CompactionReason::Manual) => None,
        };
        let compaction = match (hooked, background) {
            (None, Some(result)) => NewCompaction {
                summary: result.summary,
                first_kept_entry_id: result.first_kept_entry_id,
                tokens_before: plan.tokens_before,
                details: Some(result.details),
                source: SummarySource::Ctxkit,
            },
            (Some(supplied), _) => {
                from_hook = true;
                NewCompaction {
                    summary: supplied.summary,
                    first_kept_entry_id: supplied.first_kept_entry_id,
                    tokens_before: supplied.tokens_before,
                    details: supplied.details,
                    source: SummarySource::Hook,
                }
            }
            (None, None) => {
                let options = CompactOptions {
                    focus,
                    thinking_level: state.thinking_level.clone(),
                    file_context: if state.settings.compaction.file_context {
                        ctxkit_compaction::read_file_context(
                            &plan,
                            std::path::Path::new(state.session.cwd()),
                        )
                    } else {
                        String::new()
                    },
                };
                let summarized = ctxkit_compaction::compact(
                    &plan,
                    self.inner.summarizer.as_ref(),
                    &self.inner.prompts,
                    &options,
                    cancel,
                )
                .await;
                if cancel.is_cancelled() {
                    return Err(EngineError::Cancelled);
                }
                match summarized.map_err(EngineError::from) {
                    Ok(result) => NewCompaction {
                        summary: result.summary,
                        first_kept_entry_id: result.first_kept_entry_id,
                        tokens_before: result.tokens_before,
                        details: Some(result.details),
                        source: SummarySource::Ctxkit,
                    },
                    Err(error @ EngineError::Summarization(_)) => {
                        let policy = match reason {
                            CompactionReason::Overflow => {
                                state.settings.compaction.overflow_fallback
                            }
                            CompactionReason::Threshold | CompactionReason::Manual => {
                                state.settings.compaction.fallback
                            }
                        };
                        match policy {
                            FallbackPolicy::Error => return Err(error),
                            FallbackPolicy::Truncate => {
                                let message = error.to_string();
                                let truncated = truncate_fallback(state, &plan, &message)?;
                                fallback_error = Some(message);
                                truncated
                            }
                        }
                    }
                    Err(error) => return Err(error),
                }
            }
        };
        let first_kept_entry_id = compaction.first_kept_entry_id.clone();
        let tokens_before = compaction.tokens_before;
        // Reported before → after with one estimator on both sides (the entry keeps the
        // reference's `tokensBefore`, which may come from provider usage).
        let estimated_before = transcript(&state.session)?
            .iter()
            .map(ctxkit_compaction::estimate_tokens)
            .sum();
        let summary = compaction.summary.clone();
        let entry_id = state.session.append_compaction(compaction)?;
        // The compaction is written: what follows can only be reported, never turn it into a
        // failure the caller would retry (and write twice).
        let mut notes = Vec::new();
        if let Err(error) = crate::pins::reinject_after_compaction(state, &first_kept_entry_id) {
            notes.push(format!(
                "Pinned context could not be added back after the compaction: {error}"
            ));
        }
        let window = state.model.as_ref().map_or(0, |model| model.context_window);
        let guard = check_after_compaction(&state.session, &entry_id, window, &planning)
            .unwrap_or_else(|error| {
                notes.push(format!(
                    "The context after the compaction could not be measured: {error}"
                ));
                ctxkit_compaction::LoopGuard::Unknown { tokens_after: 0 }
            });
        let tokens_after = match &guard {
            ctxkit_compaction::LoopGuard::Clear { tokens_after, .. }
            | ctxkit_compaction::LoopGuard::StillOver { tokens_after, .. }
            | ctxkit_compaction::LoopGuard::Unknown { tokens_after } => *tokens_after,
        };
        let after = AfterCompact {
            reason,
            entry_id: entry_id.clone(),
            summary,
            first_kept_entry_id: first_kept_entry_id.clone(),
            tokens_before,
            from_hook,
        };
        self.inner
            .hooks
            .after_compact(&self.inner.bus, &after)
            .await;
        Ok(Written {
            entry_id,
            first_kept_entry_id,
            tokens_before: estimated_before,
            tokens_after,
            from_hook,
            fallback_error,
            advice: guard
                .advice()
                .into_iter()
                .chain(notes)
                .reduce(|advice, note| format!("{advice}\n{note}")),
        })
    }
}

/// The index of the first context message whose entry was written after the latest compaction on
/// the branch (entries are appended, so file order is write order); 0 without a compaction.
fn fresh_from(session: &ctxkit_session::Session) -> usize {
    let path = session.branch_path(None);
    let Some(compaction) = path
        .iter()
        .rev()
        .find(|entry| entry.type_name() == "compaction")
    else {
        return 0;
    };
    let Some(compaction_at) = session.index().position(compaction.id()) else {
        return 0;
    };
    let context = session.build_context();
    context
        .messages
        .iter()
        .position(|message| message.entry > compaction_at)
        .unwrap_or(context.messages.len())
}

fn is_empty_span(plan: &Preparation) -> bool {
    plan.messages_to_summarize.is_empty() && plan.turn_prefix_messages.is_empty()
}

/// The plan of the `attempt`th overflow compaction in a row (1-based). The first keeps
/// `keepRecentTokens`, each further one half as much as the one before. The current turn (from the
/// last user message) is kept whole while anything before it is left to summarize; after that the
/// turn itself is split and its beginning summarized (a huge tool result in the turn goes into the
/// summary). When not even that leaves anything to summarize, the overflow cannot be recovered by
/// compacting.
fn overflow_plan(state: &State, attempt: u32) -> Result<Preparation> {
    let planning = state.planning();
    tracing::debug!(
        attempt,
        keep = planning.keep_recent_tokens,
        "overflow compaction"
    );
    let keep = planning
        .keep_recent_tokens
        .checked_shr(attempt.saturating_sub(1))
        .unwrap_or(0)
        .max(1);
    let plan_keeping = |budget: u64| -> Result<Option<Preparation>> {
        let settings = CompactionSettings {
            keep_recent_tokens: budget,
            ..planning
        };
        Ok(match prepare_compaction(&state.session, None, settings)? {
            Ok(plan) if !is_empty_span(&plan) => Some(plan),
            Ok(_)
            | Err(
                NoPlanReason::AlreadyCompacted
                | NoPlanReason::NothingToCompact
                | NoPlanReason::NothingToSummarize,
            ) => None,
        })
    };
    let turn_tokens = current_turn_tokens(&state.session)?;
    // Keeping a turn that alone fills the window cannot make room: split it at once.
    let window = state.context_window();
    let turn_fits = window == 0 || turn_tokens < window;
    if turn_fits && let Some(plan) = plan_keeping(keep.max(turn_tokens))? {
        return Ok(plan);
    }
    let mut budget = keep.min(turn_tokens).max(1);
    loop {
        if let Some(plan) = plan_keeping(budget)? {
            return Ok(plan);
        }
        if budget == 1 {
            return Err(EngineError::OverflowUnrecoverable {
                turn_tokens,
                context_window: state.context_window(),
            });
        }
        budget /= 2;
    }
}

/// Estimated tokens of the messages from the last user message on the branch to the leaf.
fn current_turn_tokens(session: &ctxkit_session::Session) -> Result<u64> {
    let messages = transcript(session)?;
    let start = messages
        .iter()
        .rposition(|message| matches!(message, AgentMessage::User(_)))
        .unwrap_or(0);
    Ok(messages[start..]
        .iter()
        .map(ctxkit_compaction::estimate_tokens)
        .sum())
}

fn empty_end(reason: CompactionReason) -> CompactionEnd {
    CompactionEnd {
        reason,
        aborted: false,
        will_retry: false,
        tokens_before: None,
        tokens_after: None,
        first_kept_entry_id: None,
        entry_id: None,
        from_hook: false,
        fallback: false,
        error: None,
        advice: None,
    }
}

/// Every entry on the current branch as stored (unreadable lines as strings).
pub(crate) fn branch_entries(state: &State) -> Vec<Value> {
    state
        .session
        .branch_path(None)
        .iter()
        .map(|entry| {
            serde_json::from_str(entry.raw()).unwrap_or_else(|_| Value::String(entry.raw().into()))
        })
        .collect()
}

/// Whether a retry can run: the model's view ends in something other than a reply (error and
/// aborted replies are not sent to the model). A silent or length-stop overflow leaves the
/// offending reply last, so no retry runs and none is announced.
fn can_continue(state: &State) -> bool {
    let Ok(messages) = transcript(&state.session) else {
        return false;
    };
    let last = messages.iter().rev().find(|message| match message {
        AgentMessage::Assistant(reply) => !reply.is_aborted_or_error(),
        // Pinned context re-added after the compaction is not something the model answers.
        AgentMessage::Custom(custom) => custom.custom_type != crate::pins::PINNED_MESSAGE_TYPE,
        AgentMessage::User(_)
        | AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => true,
    });
    // A summary reaches the model as a user message: after a compaction that split the turn, the
    // model continues from the summary of the turn's beginning.
    matches!(
        last,
        Some(
            AgentMessage::User(_)
                | AgentMessage::ToolResult(_)
                | AgentMessage::Custom(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::BranchSummary(_)
        )
    )
}

/// The `truncate` fallback: keep about `truncateKeepPercent` of the context (never starting at a
/// tool result) and record a compaction that says summarization failed and why. An earlier
/// summary is carried over verbatim.
fn truncate_fallback(state: &State, plan: &Preparation, error: &str) -> Result<NewCompaction> {
    let percent = state.settings.compaction.truncate_keep_percent.min(100);
    let keep = (plan.tokens_before.saturating_mul(percent) / 100).max(1);
    let settings = CompactionSettings {
        keep_recent_tokens: keep,
        ..state.planning()
    };
    let truncated = match prepare_compaction(&state.session, None, settings)? {
        Ok(truncated) => truncated,
        Err(
            NoPlanReason::AlreadyCompacted
            | NoPlanReason::NothingToCompact
            | NoPlanReason::NothingToSummarize,
        ) => {
            return Err(EngineError::Summarization(error.to_owned()));
        }
    };
    let dropped = truncated.messages_to_summarize.len() + truncated.turn_prefix_messages.len();
    let mut summary = format!(
        "Compaction failed ({error}), so no summary was written: the {dropped} oldest messages \
         were dropped and the newest part of the conversation (about {percent}% of \
         {tokens} tokens) is kept verbatim. Ask the user about anything from before this point \
         that is not in the kept messages.",
        tokens = plan.tokens_before,
    );
    if let Some(previous) = &truncated.previous_summary {
        summary.push_str("\n\nThe summary of an earlier compaction, kept as it was:\n\n");
        summary.push_str(previous);
    }
    let lists = truncated.file_operations.lists();
    summary.push_str(&lists.blocks());
    let mut details = lists.details();
    if let Some(object) = details.as_object_mut() {
        object.insert("fallback".to_owned(), json!("truncate"));
        object.insert("error".to_owned(), json!(error));
    }
    Ok(NewCompaction {
        summary,
        first_kept_entry_id: truncated.first_kept_entry_id,
        tokens_before: truncated.tokens_before,
        details: Some(details),
        source: SummarySource::Ctxkit,
    })
}
