//! Writing one compaction: the summary (a hook's, the background one or the summarizer's, with
//! the fallback policy), the entry appended, the events and hooks around it.

use ctxkit_compaction::{CompactOptions, Preparation, check_after_compaction};
use ctxkit_session::{NewCompaction, SummarySource};
use ctxkit_settings::FallbackPolicy;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::empty_end;
use crate::engine::{Engine, Running};
use crate::error::{EngineError, Result};
use crate::events::{CompactionEnd, CompactionFailed, CompactionReason, EngineEvent};
use crate::hooks::{AfterCompact, BeforeCompact};
use crate::owed_end::OwedEnd;
use crate::settings::CompactionBudgets as _;
use crate::state::State;

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
    /// The context before and after, as a status line shows it ([`crate::context_status::Before`]).
    tokens_before: u64,
    tokens_after: u64,
    from_hook: bool,
    from_background: bool,
    fallback_error: Option<String>,
    advice: Option<String>,
}

/// What a failed overflow recovery leaves in the session: the compactions of its streak written
/// before the one that failed (nothing is said when there were none).
pub(super) fn written_before(written: u32) -> String {
    match written {
        0 => String::new(),
        1 => "; the compaction this recovery wrote before stays in the session".to_owned(),
        count => {
            format!("; the {count} compactions this recovery wrote before stay in the session")
        }
    }
}

impl Engine {
    pub(super) async fn run_locked(
        &self,
        state: &mut State,
        reason: CompactionReason,
        plan: Option<Preparation>,
        focus: Option<String>,
        retry_allowed: bool,
    ) -> std::result::Result<CompactionEnd, (CompactionEnd, EngineError)> {
        let cancel = CancellationToken::new();
        let running = Running::start(
            &self.inner,
            &self.inner.compaction_cancel,
            &cancel,
            &state.session,
        );
        let owed = OwedEnd::compaction(self, reason);
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
                        error: Some(format!(
                            "Context overflow recovery failed: {error}{}",
                            written_before(state.overflow_written)
                        )),
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
        owed.paid();
        self.emit_end(&end).await;
        if let Ok(Some(usage)) = crate::messages::context_usage(state) {
            self.inner.bus.emit(EngineEvent::ContextUsage(usage));
        }
        match error {
            None => Ok(end),
            Some(error) => Err((end, error)),
        }
    }

    /// Emits `end`, and after it `compaction_failed` (to subscribers and hooks) when `end` reports
    /// a failure or a cancel.
    pub(super) async fn emit_end(&self, end: &CompactionEnd) {
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
            CompactionReason::Threshold => self.take_background(state, cancel).await?,
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
                ctxkit_compaction::read_file_context(plan, &self.inner.project.get())
            } else {
                String::new()
            },
            cache_prefix: crate::cache_prefix::cache_prefix(state),
            append_below_tokens: state
                .compaction_config()
                .append_below_tokens(state.context_window()),
        };
        let on_demand = crate::on_demand::plan_on_demand(state, plan);
        let summarizer = self.summarizer();
        let summarized = crate::on_demand::summarize(
            summarizer.as_ref(),
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
        // Measured as a status line measures the context, before the entry changes it.
        let before = crate::context_status::Before::measure(state)?;
        let entry_tokens_before = compaction.tokens_before;
        let summary = compaction.summary.clone();
        let on_demand_failure = crate::on_demand::failure_note(compaction.details.as_ref());
        let entry_id = state.session.append_compaction(compaction)?;
        // The compaction is written: what follows can only be reported, never turn it into a
        // failure the caller would retry (and write twice).
        let mut notes: Vec<String> = on_demand_failure.into_iter().collect();
        if let Err(error) =
            crate::pins::reinject_after_compaction(state, &entry_id, &first_kept_entry_id)
        {
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
        let measured = match &guard {
            ctxkit_compaction::LoopGuard::Clear { tokens_after, .. }
            | ctxkit_compaction::LoopGuard::StillOver { tokens_after, .. }
            | ctxkit_compaction::LoopGuard::Unknown { tokens_after } => *tokens_after,
        };
        // The messages the next request sends, as the status line counts them.
        let messages_after = crate::context_status::sent_tokens(state).unwrap_or(measured);
        let (tokens_before, tokens_after) = before.reported(
            entry_tokens_before,
            messages_after,
            state.request_overhead,
            state.unrecorded_overhead,
        );
        let after = AfterCompact {
            reason,
            entry_id: entry_id.clone(),
            summary,
            first_kept_entry_id: first_kept_entry_id.clone(),
            // The entry's (the reference's) number, as hooks receive it from Pi.
            tokens_before: entry_tokens_before,
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
            Ok(ctxkit_protocol::from_str_repaired(&raw)
                .unwrap_or_else(|_| Value::String(raw.to_string())))
        })
        .collect()
}
