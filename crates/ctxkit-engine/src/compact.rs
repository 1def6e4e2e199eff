//! Compaction in the agent loop: the checks after a run, before a prompt and after a tool batch,
//! overflow recovery (compact, then retry), manual compaction, cancellation, and the fallback when
//! summarization fails.

use std::sync::atomic::Ordering;

use ctxkit_compaction::{CompactOptions, Preparation, check_after_compaction};
use ctxkit_session::{NewCompaction, SummarySource};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::check::{CheckInput, Decision, SkipReason, Trigger, decide, decide_by_length};
use crate::engine::{Engine, Running, State, latest_compaction_ms, shared_transcript};
use crate::error::{EngineError, Result};
use crate::events::{CompactionEnd, CompactionFailed, CompactionReason, EngineEvent};
use crate::hooks::{AfterCompact, BeforeCompact};
use crate::settings::CompactionBudgets as _;
use ctxkit_settings::FallbackPolicy;

/// Overflow compactions in a row (without a successful reply between them) before recovery gives
/// up. Each plans to fit with the provider's over-count seen so far and keeps less than the one
/// before, so a provider that counts more tokens than ctxkit's estimate is still caught up with.
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

/// A compaction entry about to be written, and where it came from.
struct Summarized {
    compaction: NewCompaction,
    from_hook: bool,
    /// The background summary was taken.
    from_background: bool,
    /// Summarization failed and the `truncate` fallback wrote this compaction.
    fallback_error: Option<String>,
}

impl Summarized {
    fn ctxkit(compaction: NewCompaction) -> Self {
        Self {
            compaction,
            from_hook: false,
            from_background: false,
            fallback_error: None,
        }
    }
}

/// Why no compaction entry was written, and whether a hook had supplied the summary.
struct Failure {
    error: EngineError,
    from_hook: bool,
}

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        Self {
            error,
            from_hook: false,
        }
    }
}

/// A compaction entry that was written.
struct Written {
    entry_id: String,
    first_kept_entry_id: String,
    /// Estimated like `tokens_after`.
    tokens_before: u64,
    tokens_after: u64,
    from_hook: bool,
    from_background: bool,
    fallback_error: Option<String>,
    advice: Option<String>,
}

impl Engine {
    /// The check after an agent run (aborted replies are skipped). Call it when a run ends; when
    /// the report says `retry`, run the model again on the new view.
    pub async fn after_run(&self) -> Result<CheckReport> {
        self.check(Trigger::AfterRun, None).await
    }

    /// The check before a prompt, awaited before the user message is appended. Waits for a
    /// compaction in flight instead of starting a second one.
    pub async fn before_prompt(&self) -> Result<CheckReport> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| {
                i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
            });
        self.before_prompt_at(now_ms).await
    }

    /// [`Engine::before_prompt`] for a prompt sent at `prompt_ms` (epoch ms; a replay passes the
    /// recorded time): after a pause longer than the prompt cache's lifetime
    /// (`transforms.cacheLifetimeSeconds`) the context is also measured against
    /// `compaction.idleThresholdTokens`.
    pub async fn before_prompt_at(&self, prompt_ms: i64) -> Result<CheckReport> {
        self.check(Trigger::BeforePrompt, Some(prompt_ms)).await
    }

    /// The check inside a run, after a tool batch's results are appended and before the next model
    /// call (skip it when the batch ends the run): a threshold compaction of the projected context,
    /// splitting the running turn when the cut falls inside it. The run then goes on with the next
    /// model call; the report never says `retry`.
    pub async fn after_tool_batch(&self) -> Result<CheckReport> {
        self.check(Trigger::AfterToolBatch, None).await
    }

    /// Compacts before a model call whose output room would fall below the floor (the provider
    /// layer measured the request; see `ctxkit_overflow::output_floor`), as a threshold compaction
    /// between tool calls does: the run then goes on with the next model call. Nothing happens when
    /// compaction is off or there is nothing to summarize.
    pub async fn make_output_room(&self, tokens: u64) -> Result<CheckReport> {
        let mut state = self.lock().await;
        let decision = Decision::Threshold { tokens };
        let skip = |reason| {
            Ok(CheckReport {
                decision: Decision::Skip(reason),
                compaction: None,
                retry: false,
            })
        };
        if !state.settings.compaction.enabled {
            return skip(SkipReason::Disabled);
        }
        let plan = match crate::planning::plan_for(&mut state, CompactionReason::Threshold) {
            Ok(plan) => plan,
            Err(EngineError::NothingToCompact | EngineError::AlreadyCompacted) => {
                return skip(SkipReason::NothingToCompact);
            }
            Err(error) => return Err(error),
        };
        tracing::debug!(
            tokens,
            "compaction before a model call: the reply's room is under the floor"
        );
        let end = match self
            .run_locked(
                &mut state,
                CompactionReason::Threshold,
                Some(plan),
                None,
                false,
            )
            .await
        {
            Ok(end) | Err((end, _)) => end,
        };
        Ok(CheckReport {
            decision,
            retry: false,
            compaction: Some(end),
        })
    }

    async fn check(&self, trigger: Trigger, prompt_ms: Option<i64>) -> Result<CheckReport> {
        let mut state = self.lock().await;
        // A context too long to send is compacted before a message of it is read: a session of a
        // million messages is never held whole beside its compaction (`decide_by_length`).
        let mut by_length = decide_by_length(&check_input(&state, trigger, &[], None), None);
        if by_length.is_some() {
            // An overflowed last reply is recovered as the reference does: read it alone.
            let last = last_reply(&state)?;
            by_length = decide_by_length(&check_input(&state, trigger, &[], None), last.as_ref());
        }
        let (decision, transcript) = match by_length {
            Some(decision) => (decision, Vec::new()),
            None => {
                let transcript = shared_transcript(&mut state)?;
                let idle_threshold_tokens =
                    prompt_ms.and_then(|at| idle_threshold(&state, &transcript, at));
                let input = check_input(&state, trigger, &transcript, idle_threshold_tokens);
                (decide(&input), transcript)
            }
        };
        tracing::debug!(
            ?trigger,
            ?decision,
            by_length = by_length.is_some(),
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
        // The plan a threshold check already made, handed on instead of made twice.
        let mut planned = None;
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
                self.emit_end(&end).await;
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
                let error_text = transcript
                    .iter()
                    .rev()
                    .find_map(|message| message.as_assistant())
                    .and_then(|reply| reply.error_message.clone());
                crate::recovery::learn_from_overflow(&mut state, error_text.as_deref())?;
                state.overflow_attempts += 1;
                // The transcript and the cache are let go before the span is read.
                drop(transcript);
                crate::engine::release_messages(&mut state);
                // A plan that fits, planned here to note where it cuts (the next attempt of the
                // streak cuts later); without one, the compaction reports why and asks for no
                // summary.
                if let Ok((plan, cut)) = crate::recovery::overflow_plan(&state) {
                    state.overflow_cut = Some(cut);
                    planned = Some(plan);
                }
                CompactionReason::Overflow
            }
            Decision::Threshold { .. } => {
                drop(transcript);
                // Over the threshold with nothing to summarize (everything fits in the keep
                // budget): no compaction starts, so a UI shows nothing.
                match crate::planning::plan_for(&mut state, CompactionReason::Threshold) {
                    Ok(plan) => planned = Some(plan),
                    Err(EngineError::NothingToCompact | EngineError::AlreadyCompacted) => {
                        return skip(Decision::Skip(SkipReason::NothingToCompact));
                    }
                    Err(error) => return Err(error),
                }
                CompactionReason::Threshold
            }
        };
        let retry_allowed = trigger == Trigger::AfterRun;
        let end = match self
            .run_locked(&mut state, reason, planned, None, retry_allowed)
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
            self.emit_end(&end).await;
            return Err(EngineError::Cancelled);
        }
        let focus = focus.filter(|text| !text.trim().is_empty());
        // Nothing to summarize: said by the result alone, no compaction starts (no events).
        let plan = crate::planning::plan_for(&mut state, CompactionReason::Manual)?;
        self.run_locked(
            &mut state,
            CompactionReason::Manual,
            Some(plan),
            focus,
            false,
        )
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
        plan: Option<Preparation>,
        focus: Option<String>,
        retry_allowed: bool,
    ) -> std::result::Result<CompactionEnd, (CompactionEnd, EngineError)> {
        let cancel = CancellationToken::new();
        let running = Running::start(&self.inner, &self.inner.compaction_cancel, &cancel);
        self.inner.bus.emit(EngineEvent::CompactionStart { reason });
        let outcome = self
            .write_compaction(state, reason, plan, focus, &cancel)
            .await;
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
            Err(failure) => {
                tracing::info!(?reason, error = %failure.error, "compaction not written")
            }
        }
        let (end, error) = match outcome {
            Ok(written) => {
                let will_retry = reason == CompactionReason::Overflow
                    && retry_allowed
                    && crate::planning::can_continue(state);
                let (files_read, files_modified) = tracked_files(state, &written.entry_id);
                let end = CompactionEnd {
                    will_retry,
                    files_read,
                    files_modified,
                    tokens_before: Some(written.tokens_before),
                    tokens_after: Some(written.tokens_after),
                    first_kept_entry_id: Some(written.first_kept_entry_id),
                    entry_id: Some(written.entry_id),
                    from_hook: written.from_hook,
                    from_background: written.from_background,
                    fallback: written.fallback_error.is_some(),
                    error: written.fallback_error,
                    advice: written.advice,
                    ..empty_end(reason)
                };
                (end, None)
            }
            Err(Failure { error, from_hook }) => {
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
                (CompactionEnd { from_hook, ..end }, Some(error))
            }
        };
        self.emit_end(&end).await;
        if let Ok(Some(usage)) = crate::engine::context_usage(state) {
            self.inner.bus.emit(EngineEvent::ContextUsage(usage));
        }
        match error {
            None => Ok(end),
            Some(error) => Err((end, error)),
        }
    }

    /// Emits `end`, and after it `compaction_failed` (to subscribers and hooks) when `end` reports
    /// a failure or a cancel.
    async fn emit_end(&self, end: &CompactionEnd) {
        self.inner.bus.emit(EngineEvent::CompactionEnd(end.clone()));
        if let Some(failed) = CompactionFailed::from_end(end) {
            self.inner
                .bus
                .emit(EngineEvent::CompactionFailed(failed.clone()));
            self.inner
                .hooks
                .compaction_failed(&self.inner.bus, &failed)
                .await;
        }
    }

    /// Summarizes `plan` (planned here when the caller has none) or takes a hook's or the
    /// background summary, and appends one compaction.
    async fn write_compaction(
        &self,
        state: &mut State,
        reason: CompactionReason,
        plan: Option<Preparation>,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) -> std::result::Result<Written, Failure> {
        let plan = match plan {
            Some(plan) => plan,
            None => crate::planning::plan_for(state, reason).map_err(Failure::from)?,
        };
        let summarized = self
            .summarize(state, &plan, reason, focus, cancel)
            .await
            .map_err(Failure::from)?;
        let from_hook = summarized.from_hook;
        self.append_compaction(state, reason, summarized)
            .await
            .map_err(|error| Failure { error, from_hook })
    }

    /// The new compaction entry: a hook's, the background one (threshold only), or the
    /// summarizer's, with the fallback policy applied when summarization fails.
    async fn summarize(
        &self,
        state: &mut State,
        plan: &Preparation,
        reason: CompactionReason,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Summarized> {
        if let Some(supplied) = self
            .hook_compaction(state, plan, reason, &focus, cancel)
            .await?
        {
            return Ok(Summarized {
                compaction: NewCompaction {
                    summary: supplied.summary,
                    first_kept_entry_id: supplied.first_kept_entry_id,
                    tokens_before: supplied.tokens_before,
                    details: supplied.details,
                    source: SummarySource::Hook,
                },
                from_hook: true,
                from_background: false,
                fallback_error: None,
            });
        }
        // A threshold compaction takes the summary written in the background when it still fits.
        let background = match reason {
            CompactionReason::Threshold => self.take_background(state).await,
            CompactionReason::Overflow | CompactionReason::Manual => None,
        };
        if let Some(result) = background {
            return Ok(Summarized {
                from_background: true,
                ..Summarized::ctxkit(NewCompaction {
                    summary: result.summary,
                    first_kept_entry_id: result.first_kept_entry_id,
                    tokens_before: plan.tokens_before,
                    details: Some(result.details),
                    source: SummarySource::Ctxkit,
                })
            });
        }
        let options = CompactOptions {
            focus,
            thinking_level: state.thinking_level.clone(),
            file_context: if state.settings.compaction.file_context {
                ctxkit_compaction::read_file_context(
                    plan,
                    std::path::Path::new(state.session.cwd()),
                )
            } else {
                String::new()
            },
            cache_prefix: crate::cache_prefix::cache_prefix(state),
            append_below_tokens: state
                .compaction_config()
                .append_below_tokens(state.context_window()),
        };
        let on_demand = crate::on_demand::plan_on_demand(state, plan);
        let summarized = crate::on_demand::summarize(
            self.inner.summarizer.as_ref(),
            &self.inner.prompts,
            plan,
            &options,
            on_demand,
            cancel,
        )
        .await;
        if cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        if let Ok(result) = &summarized {
            log_cache_prefix(&result.details);
        }
        match summarized.map_err(EngineError::from) {
            Ok(result) => Ok(Summarized::ctxkit(NewCompaction {
                summary: result.summary,
                first_kept_entry_id: result.first_kept_entry_id,
                tokens_before: result.tokens_before,
                details: Some(result.details),
                source: SummarySource::Ctxkit,
            })),
            Err(error @ EngineError::Summarization(_)) => {
                let policy = match reason {
                    CompactionReason::Overflow => state.settings.compaction.overflow_fallback,
                    CompactionReason::Threshold | CompactionReason::Manual => {
                        state.settings.compaction.fallback
                    }
                };
                match policy {
                    FallbackPolicy::Error => Err(error),
                    FallbackPolicy::Truncate => {
                        let message = error.to_string();
                        Ok(Summarized {
                            compaction: crate::fallback::truncate_fallback(state, plan, &message)?,
                            from_hook: false,
                            from_background: false,
                            fallback_error: Some(message),
                        })
                    }
                }
            }
            Err(error) => Err(error),
        }
    }

    /// The compaction a `before_compact` hook supplies, if any; a hook's cancel (or the user's,
    /// while the hooks ran) is `Cancelled`.
    async fn hook_compaction(
        &self,
        state: &State,
        plan: &Preparation,
        reason: CompactionReason,
        focus: &Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Option<crate::hooks::HookCompaction>> {
        if self.inner.hooks.is_empty() {
            return Ok(None);
        }
        let event = BeforeCompact {
            reason,
            preparation: plan.into(),
            branch_entries: branch_entries(state)?,
            custom_instructions: focus.clone(),
        };
        let answer = self
            .inner
            .hooks
            .before_compact(&self.inner.bus, &event, cancel)
            .await;
        // A cancel that arrived while the hooks ran wins over what they answered.
        if cancel.is_cancelled() || answer.as_ref().is_some_and(|answer| answer.cancel) {
            return Err(EngineError::Cancelled);
        }
        Ok(answer.and_then(|answer| answer.compaction))
    }

    /// Appends the compaction; what follows (pins, measuring, hooks) can only be reported.
    async fn append_compaction(
        &self,
        state: &mut State,
        reason: CompactionReason,
        summarized: Summarized,
    ) -> Result<Written> {
        let Summarized {
            mut compaction,
            from_hook,
            from_background,
            fallback_error,
        } = summarized;
        crate::carried::carry_names(state, &mut compaction);
        let first_kept_entry_id = compaction.first_kept_entry_id.clone();
        // Reported as the entry records it (the reference's `tokensBefore`, from provider usage
        // when there is some), so the chat, serve's events and `ctxkit compactions` show one number
        // for the same compaction.
        let tokens_before = compaction.tokens_before;
        let summary = compaction.summary.clone();
        let on_demand_failure = crate::on_demand::failure_note(compaction.details.as_ref());
        let entry_id = state.session.append_compaction(compaction)?;
        // The compaction is written: what follows can only be reported, never turn it into a
        // failure the caller would retry (and write twice).
        let mut notes: Vec<String> = on_demand_failure.into_iter().collect();
        if let Err(error) = crate::pins::reinject_after_compaction(state, &first_kept_entry_id) {
            notes.push(format!(
                "Pinned context could not be added back after the compaction: {error}"
            ));
        }
        let guard = check_after_compaction(
            &state.session,
            &entry_id,
            state.context_window(),
            &state.planning(),
        )
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
            tokens_before,
            tokens_after,
            from_hook,
            from_background,
            fallback_error,
            advice: guard
                .advice()
                .into_iter()
                .chain(notes)
                .reduce(|advice, note| format!("{advice}\n{note}")),
        })
    }
}

/// Says how the summary requests were sent, when cache-prefix requests are on.
fn log_cache_prefix(details: &Value) {
    let Some(cache_prefix) = details.get("cachePrefix") else {
        return;
    };
    match cache_prefix.get("reason").and_then(Value::as_str) {
        Some(reason) => tracing::info!(reason, "summary sent as a fresh prompt"),
        None => tracing::info!("summary sent as a continuation of the cached conversation"),
    }
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
        from_background: false,
        fallback: false,
        error: None,
        advice: None,
        files_read: 0,
        files_modified: 0,
    }
}

/// How many files the compaction entry `id` tracks as read and as modified.
fn tracked_files(state: &State, id: &str) -> (usize, usize) {
    let details = state
        .session
        .entry(id)
        .and_then(|entry| entry.parse().ok())
        .and_then(|entry| {
            if let ctxkit_protocol::EntryKind::Compaction(compaction) = entry.kind {
                compaction.details
            } else {
                None
            }
        });
    let count = |key: &str| {
        details
            .as_ref()
            .and_then(|details| details.get(key))
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    (count("readFiles"), count("modifiedFiles"))
}

/// Every entry on the current branch as stored (unparsable lines as strings); an error when a line
/// can no longer be read from the file.
pub(crate) fn branch_entries(state: &State) -> Result<Vec<Value>, ctxkit_session::SessionError> {
    state
        .session
        .branch_path(None)
        .iter()
        .map(|entry| {
            let raw = entry.raw()?;
            Ok(serde_json::from_str(&raw).unwrap_or_else(|_| Value::String(raw.to_string())))
        })
        .collect()
}

/// `compaction.idleThresholdTokens` when it is set and a prompt at `prompt_ms` comes longer than
/// the prompt cache's lifetime after the transcript's last message (its cache has expired).
/// The context's last assistant message, read alone: the roles come from the session's index, so
/// no other message is parsed.
fn last_reply(state: &State) -> Result<Option<ctxkit_protocol::AssistantMessage>> {
    let context = state.session.leaf_context();
    for message in context.messages.iter().rev() {
        let stored = message.kind == ctxkit_session::ContextMessageKind::Stored;
        let is_reply = state
            .session
            .index()
            .get(message.entry)
            .is_some_and(|entry| entry.role() == Some("assistant"));
        if stored
            && is_reply
            && let ctxkit_protocol::AgentMessage::Assistant(reply) =
                state.session.message(message)?
        {
            return Ok(Some(reply));
        }
    }
    Ok(None)
}

/// The inputs of a check of `state`'s context, over `transcript` (the length rule reads none).
fn check_input<'a>(
    state: &'a State,
    trigger: Trigger,
    transcript: &'a [std::sync::Arc<ctxkit_protocol::AgentMessage>],
    idle_threshold_tokens: Option<u64>,
) -> CheckInput<'a, std::sync::Arc<ctxkit_protocol::AgentMessage>> {
    CheckInput {
        trigger,
        enabled: state.settings.compaction.enabled,
        // The reply's room is planned with the threshold: never less than the output floor.
        reserve_tokens: state.planning().reserve_tokens.max(state.output_reserve()),
        limit_tokens: state.threshold_limit(),
        over_count: state.over_count,
        model: state.model.as_ref(),
        transcript,
        latest_compaction_ms: latest_compaction_ms(&state.session),
        fresh_from: Some(crate::planning::fresh_from(&state.session)),
        overflow_recovery_attempted: state.overflow_attempts >= MAX_OVERFLOW_ATTEMPTS,
        idle_threshold_tokens,
        context_messages: state.session.leaf_context().messages.len(),
    }
}

fn idle_threshold(
    state: &State,
    transcript: &[std::sync::Arc<ctxkit_protocol::AgentMessage>],
    prompt_ms: i64,
) -> Option<u64> {
    let threshold = state.settings.compaction.idle_threshold_tokens;
    let lifetime_ms = i64::try_from(state.settings.transforms.cache_lifetime_seconds)
        .ok()?
        .checked_mul(1000)?;
    if threshold == 0 || lifetime_ms == 0 {
        return None;
    }
    let last = transcript
        .iter()
        .rev()
        .find_map(|message| message.timestamp())?;
    (prompt_ms.saturating_sub(last) > lifetime_ms).then_some(threshold)
}
