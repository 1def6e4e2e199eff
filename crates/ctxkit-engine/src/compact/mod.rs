//! Compaction in the agent loop: the checks after a run, before a prompt and after a tool batch,
//! overflow recovery (compact, then retry), manual compaction, cancellation, and the fallback when
//! summarization fails.

mod spacing;
mod write;

use std::sync::atomic::Ordering;

use crate::check::{CheckInput, Decision, SkipReason, Trigger, decide, decide_by_length};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::events::{CompactionEnd, CompactionReason, EngineEvent};
use crate::messages::{latest_compaction_ms, shared_transcript};
use crate::state::State;

/// Overflow compactions in a row (without a successful reply between them) before recovery gives
/// up. Each plans to fit with the provider's over-count seen so far and keeps less than the one
/// before, so a provider that counts more tokens than ctxkit's estimate is still caught up with.
pub const MAX_OVERFLOW_ATTEMPTS: u32 = 6;

/// Reported when replies keep overflowing after [`MAX_OVERFLOW_ATTEMPTS`] compactions in a row.
pub const RECOVERY_EXHAUSTED: &str = "Context overflow recovery failed after repeated compactions; the request still does not fit. Try a shorter message or a model with a larger context window.";

/// Reported when the provider refuses a request no larger than recovery planned for: its limit is
/// smaller than the model's window as configured, and another compaction would not help.
fn limit_disagrees(tokens: u64, context_window: u64, configured_window: u64) -> String {
    let window = crate::error::window_phrase(context_window, configured_window);
    format!(
        "Context overflow recovery stopped: the provider refused the request again at about {tokens} tokens, after a compaction that planned for its limit, so its limit is smaller than {window}. Set the model's `contextWindow` to the provider's real limit, or switch models."
    )
}

/// Reported when the provider, after a compaction of the streak, counts the retried request at
/// not even a quarter of the tokens fewer it needed (the request it refused before, over the limit
/// this refusal states or the window): what it counts is not what compacting shrinks (a system
/// prompt, tools or attachments it counts far above ctxkit's estimate), and each later compaction,
/// cutting later, has less to remove. QA (2026-12-07): a provider stating 9,500 tokens each time
/// drew five compactions from one prompt, four of which made the context larger; one whose count
/// fell by 10 tokens a time against an overshoot of 1,500 drew five too. `None` when no compaction
/// of the streak was written, a count is unknown, or the refusal stated a limit lower than the one
/// known before it (recovery plans with that one now).
fn count_did_not_fall(
    state: &crate::state::State,
    (counted_before, limit_before): (Option<u64>, Option<u64>),
    error_text: Option<&str>,
) -> Option<String> {
    let (before, now) = (counted_before?, state.refused_count?);
    let limit_fell = match (state.limit_tokens, limit_before) {
        (Some(limit), Some(known)) => limit < known,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if state.overflow_written == 0 || limit_fell {
        return None;
    }
    let limit = error_text
        .and_then(ctxkit_overflow::stated_limit)
        .unwrap_or_else(|| state.limit_window());
    let needed = before.saturating_sub(limit);
    let fell = before.saturating_sub(now);
    let written = write::written_before(state.overflow_written);
    let cause = "so it counts something compacting does not shrink (the system prompt, tools or attachments)";
    let advice = "Shorten those, or switch to a model with a larger context window.";
    if now >= before {
        Some(format!(
            "Context overflow recovery stopped: after a compaction the provider counted the request at {now} tokens, no fewer than the {before} it refused before it, {cause}{written}. {advice}"
        ))
    } else if fell.saturating_mul(4) < needed {
        Some(format!(
            "Context overflow recovery stopped: after a compaction the provider counted the request at {now} tokens, only {fell} fewer than the {before} it refused before it where {needed} fewer were needed, {cause}{written}. {advice}"
        ))
    } else {
        None
    }
}

/// What a check did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub decision: Decision,
    /// The end of the compaction the check ran, or of the exhausted recovery.
    pub compaction: Option<CompactionEnd>,
    /// The loop must now run the model again without a new user message (overflow recovery).
    pub retry: bool,
}

impl Engine {
    /// The context size (the provider's count) past which a threshold check compacts now, as the
    /// checks measure it (the reserve at least the reply's output room, the threshold spaced
    /// after a compaction); `None` while the window is unknown or compaction is off. For a user
    /// interface (`/context`; QA: window − reserve named 14,336 for a 16k window that compacts at
    /// 13,312).
    pub async fn threshold_tokens(&self) -> Option<u64> {
        let mut state = self.lock().await;
        let window = state.context_window();
        if window == 0 || !state.settings.compaction.enabled {
            return None;
        }
        if let Some(spaced) = spaced_threshold(&mut state) {
            return Some(spaced);
        }
        let reserve = state.planning().reserve_tokens.max(state.output_reserve());
        let limit = state.threshold_limit().unwrap_or(window);
        Some(ctxkit_tokens::compaction_threshold(limit, reserve))
    }

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
            // The keep budget holds everything since the last compaction: one large message
            // (a prompt attaching files) crosses it, so the cut lands before that message and
            // nothing is left to summarize. A plan keeping less, as an overflow's recovery plans
            // it, makes the room (QA: from 90% of a 32k window every prompt was refused, and
            // `/compact` said there was nothing to compact).
            Err(EngineError::NothingToCompact | EngineError::AlreadyCompacted) => {
                match crate::recovery::overflow_plan(&state) {
                    Ok((plan, _)) => plan,
                    Err(_) => return skip(SkipReason::NothingToCompact),
                }
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
                // Only an enabled check measures the next request.
                let projected = if state.settings.compaction.enabled {
                    crate::projection::next_request_tokens(&mut state, 0)?
                } else {
                    None
                };
                let messages = crate::messages::plain(&transcript);
                let input = CheckInput {
                    projected_tokens: projected,
                    ..check_input(&state, trigger, &messages, idle_threshold_tokens)
                };
                let decision = decide(&input);
                (decision, transcript)
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
                return Ok(self.recovery_given_up(RECOVERY_EXHAUSTED.to_owned()).await);
            }
            Decision::Overflow => {
                // An overflow already handled when it happened (compacted and retried, or
                // reported) is not handled again before the next prompt: that prompt moves the
                // turn boundary, so a new overflow after it can compact what this one could not.
                if trigger == Trigger::BeforePrompt && state.overflow_attempts > 0 {
                    return skip(Decision::Skip(SkipReason::OverflowHandled));
                }
                if let Some(tokens) = crate::recovery::refused_within_plan(&state) {
                    let message =
                        limit_disagrees(tokens, state.limit_window(), state.context_window());
                    return Ok(self.recovery_given_up(message).await);
                }
                let error_text = transcript
                    .iter()
                    .rev()
                    .find_map(|message| message.as_assistant())
                    .and_then(|reply| reply.error_message.clone());
                let before = (state.refused_count, state.limit_tokens);
                crate::recovery::learn_from_overflow(&mut state, error_text.as_deref())?;
                if let Some(message) = count_did_not_fall(&state, before, error_text.as_deref()) {
                    return Ok(self.recovery_given_up(message).await);
                }
                if let Some(recorded) = state.last_request.as_mut() {
                    recorded.overflowed();
                }
                state.overflow_attempts += 1;
                // The transcript and the cache are let go before the span is read.
                drop(transcript);
                crate::messages::release_messages(&mut state);
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
        // A session another process writes is refused before its summary is paid for, as
        // `compact` refuses it (the write after the summary would be refused anyway).
        state.session.hold_lock()?;
        let end = match self
            .run_locked(&mut state, reason, planned, None, retry_allowed)
            .await
        {
            Ok(end) | Err((end, _)) => end,
        };
        if reason == CompactionReason::Overflow && end.entry_id.is_some() {
            state.overflow_written += 1;
        }
        Ok(CheckReport {
            decision,
            retry: end.will_retry,
            compaction: Some(end),
        })
    }

    /// Overflow recovery ends without a compaction: `message` says why.
    async fn recovery_given_up(&self, message: String) -> CheckReport {
        let end = CompactionEnd {
            error: Some(message),
            ..empty_end(CompactionReason::Overflow)
        };
        // Every `compaction_end` follows a `compaction_start`, so a UI pairs them.
        self.inner.bus.emit(EngineEvent::CompactionStart {
            reason: CompactionReason::Overflow,
        });
        self.emit_end(&end).await;
        CheckReport {
            decision: Decision::RecoveryExhausted,
            compaction: Some(end),
            retry: false,
        }
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
        let focus = focus.filter(|text| !text.trim().is_empty());
        // Nothing to summarize: said by the result alone, no compaction starts (no events).
        let plan = crate::planning::plan_for(&mut state, CompactionReason::Manual)?;
        // Checked once planned, right before the run takes its cancellation: a cancel while it
        // waited for the turn, a compaction in flight or its planning (a first exact token count
        // takes a while) found no compaction to cancel. QA r97: a `compact.cancel` pipelined right
        // behind its `compact` came during the planning and was lost.
        if self.inner.cancel_requests.load(Ordering::SeqCst) != requests {
            drop(state);
            return self.compact_cancelled().await;
        }
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

    /// A manual compaction cancelled before it started (a server's `compact.cancel` read after
    /// the `compact` it follows, before that one ran): its start and its aborted end are emitted,
    /// as for one cancelled while it waited, and nothing is written. Always `Err(Cancelled)`.
    pub async fn compact_cancelled(&self) -> Result<CompactionEnd> {
        let end = CompactionEnd {
            aborted: true,
            ..empty_end(CompactionReason::Manual)
        };
        self.inner.bus.emit(EngineEvent::CompactionStart {
            reason: CompactionReason::Manual,
        });
        self.emit_end(&end).await;
        Err(EngineError::Cancelled)
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
}

/// A compaction end that reports nothing yet: the fields every end starts from.
pub(crate) fn empty_end(reason: CompactionReason) -> CompactionEnd {
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
    transcript: &'a [&'a ctxkit_protocol::AgentMessage],
    idle_threshold_tokens: Option<u64>,
) -> CheckInput<'a, &'a ctxkit_protocol::AgentMessage> {
    CheckInput {
        trigger,
        enabled: state.settings.compaction.enabled,
        // The reply's room is planned with the threshold: never less than the output floor.
        reserve_tokens: spacing::check_reserve(state, transcript),
        limit_tokens: state.threshold_limit(),
        over_count: state.over_count,
        model: state.model.as_ref(),
        transcript,
        latest_compaction_ms: latest_compaction_ms(&state.session),
        fresh_from: Some(crate::planning::fresh_from(&state.session)),
        overflow_recovery_attempted: state.overflow_attempts >= MAX_OVERFLOW_ATTEMPTS,
        idle_threshold_tokens,
        context_messages: state.session.leaf_context().messages.len(),
        projected_tokens: None,
    }
}

/// The context size (the provider's count) a threshold check compacts at now when the threshold
/// is spaced after a compaction (`spacing`); `None` when it is not (the planned threshold holds) or
/// the transcript cannot be read.
pub(crate) fn spaced_threshold(state: &mut State) -> Option<u64> {
    if !spacing::spaces(state) {
        return None;
    }
    let transcript = shared_transcript(state).ok()?;
    let reserve = spacing::check_reserve(state, &crate::messages::plain(&transcript));
    Some(ctxkit_tokens::compaction_threshold(
        state.context_window(),
        reserve,
    ))
}

/// `compaction.idleThresholdTokens` when it is set and a prompt at `prompt_ms` comes longer than
/// the prompt cache's lifetime after the transcript's last message (its cache has expired).
fn idle_threshold(
    state: &State,
    transcript: &[std::sync::Arc<ctxkit_transform::MeasuredMessage>],
    prompt_ms: i64,
) -> Option<u64> {
    let threshold = state.settings.compaction.idle_threshold_tokens;
    let lifetime = state
        .model_settings()
        .transforms
        .cache_lifetime_seconds_or_default();
    let lifetime_ms = i64::try_from(lifetime).ok()?.checked_mul(1000)?;
    if threshold == 0 || lifetime_ms == 0 {
        return None;
    }
    let last = transcript
        .iter()
        .rev()
        .find_map(|message| message.timestamp())?;
    (prompt_ms.saturating_sub(last) > lifetime_ms).then_some(threshold)
}
