//! Events for UIs and logs. Every subscriber gets every event, in order; a UI can show a
//! `Compacting…` status between `compaction_start` and `compaction_end` without polling.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// The context went over window − reserve.
    Threshold,
    /// The provider rejected the request as too long.
    Overflow,
    /// The user asked (`/compact`).
    Manual,
}

impl CompactionReason {
    /// The name used in events and settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Overflow => "overflow",
            Self::Manual => "manual",
        }
    }
}

/// The end of a compaction, successful or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionEnd {
    pub reason: CompactionReason,
    /// Cancelled by the caller or a hook; nothing was written.
    pub aborted: bool,
    /// A retry of the failed turn follows (overflow recovery); true only when one really runs.
    pub will_retry: bool,
    /// Context tokens before and after, when a compaction entry was written, on the scale a status
    /// line uses (`Engine::context_status` plus the system prompt and tools): before, the
    /// provider's count when a reply reported one (the entry's `tokensBefore`), else ctxkit's
    /// estimate of the messages and of the system prompt and tools; after, that estimate of what
    /// the next request sends. Before any request told the engine the system prompt and tools
    /// (`ctxkit compact`), both are the estimate of the messages alone. The entry's
    /// `tokensBefore` stays the reference's number.
    pub tokens_before: Option<u64>,
    pub tokens_after: Option<u64>,
    pub first_kept_entry_id: Option<String>,
    /// The compaction entry written.
    pub entry_id: Option<String>,
    /// The summary was written by a hook.
    pub from_hook: bool,
    /// The summary was the one written in the background (`compaction.background`), so the
    /// compaction did not wait for a summarizer call of its own.
    #[serde(default)]
    pub from_background: bool,
    /// Summarization failed and the `truncate` fallback wrote a compaction without a summary.
    pub fallback: bool,
    /// What went wrong (with the fallback: why it was needed).
    pub error: Option<String>,
    /// Advice when the compaction did not make enough room (the loop guard).
    pub advice: Option<String>,
    /// The files the compaction entry tracks (its `details`' `readFiles` and `modifiedFiles`).
    #[serde(default)]
    pub files_read: usize,
    #[serde(default)]
    pub files_modified: usize,
}

/// A compaction that failed or was cancelled (Pi 1.6's `session_compact_failed`, its fields in
/// ctxkit's spelling: `errorMessage` → `error_message`, `willRetry` → `will_retry`,
/// `fromExtension` → `from_hook`). Emitted right after the [`CompactionEnd`] of that compaction,
/// and given to the hooks' `compaction_failed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionFailed {
    pub reason: CompactionReason,
    /// What went wrong; `None` when the compaction was cancelled.
    pub error_message: Option<String>,
    /// Cancelled by the user, the caller or a hook; nothing was written.
    pub aborted: bool,
    /// The interrupted turn is retried all the same. Only an overflow recovery whose summary failed
    /// and whose `truncate` fallback made room does that; otherwise false, as in Pi (a failed
    /// compaction ends the recovery).
    pub will_retry: bool,
    /// The failing compaction's summary came from a `before_compact` hook.
    pub from_hook: bool,
    /// Summarization failed and the `truncate` fallback wrote a compaction without a summary
    /// (ctxkit's; Pi has no fallback).
    pub fallback: bool,
}

impl CompactionFailed {
    /// The failure `end` reports, if it is one: a cancel, an error with nothing written, or a
    /// summary that failed and was replaced by the `truncate` fallback.
    pub fn from_end(end: &CompactionEnd) -> Option<Self> {
        let failed = end.aborted || end.fallback || (end.error.is_some() && end.entry_id.is_none());
        failed.then(|| Self {
            reason: end.reason,
            error_message: if end.aborted { None } else { end.error.clone() },
            aborted: end.aborted,
            will_retry: end.will_retry,
            from_hook: end.from_hook,
            fallback: end.fallback,
        })
    }
}

/// Context usage: tokens in the model's view of a window. `tokens` is unknown right after a
/// compaction until the next reply reports usage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    /// The window in force: the model's, or the provider's real limit once it stated one below it
    /// (compactions fire against it, so the context is read against it too).
    pub context_window: u64,
    /// The model's configured window (`contextWindow`): `context_window` unless the provider
    /// stated a lower limit.
    pub configured_window: u64,
    /// `context_window` is the limit the provider stated in an overflow error (below
    /// `configured_window`).
    pub limit_learned: bool,
    /// `tokens` as a percentage of `context_window`.
    pub percent: Option<f64>,
}

/// Something that happened in the engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd(CompactionEnd),
    /// After the `compaction_end` of a compaction that failed or was cancelled.
    CompactionFailed(CompactionFailed),
    BranchSummaryStart {
        target_id: String,
    },
    BranchSummaryEnd {
        target_id: String,
        aborted: bool,
        summary_entry_id: Option<String>,
        error: Option<String>,
    },
    ContextUsage(ContextUsage),
    /// A hook failed; it was ignored and the default behaviour went on.
    HookError {
        hook: String,
        event: String,
        error: String,
    },
}

/// A subscriber called as each event happens, on the emitting thread; it returns `false` to stop
/// receiving events.
pub type EventSink = Box<dyn Fn(&EngineEvent) -> bool + Send + Sync>;

/// The subscribers of one engine.
#[derive(Default)]
pub(crate) struct EventBus {
    subscribers: Mutex<Vec<mpsc::UnboundedSender<EngineEvent>>>,
    sinks: Mutex<Vec<EventSink>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("EventBus").finish_non_exhaustive()
    }
}

impl EventBus {
    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<EngineEvent> {
        let (sender, receiver) = mpsc::unbounded_channel();
        if let Ok(mut subscribers) = self.subscribers.lock() {
            subscribers.push(sender);
        }
        receiver
    }

    pub(crate) fn add_sink(&self, sink: EventSink) {
        if let Ok(mut sinks) = self.sinks.lock() {
            sinks.push(sink);
        }
    }

    pub(crate) fn emit(&self, event: EngineEvent) {
        if let Ok(mut sinks) = self.sinks.lock() {
            sinks.retain(|sink| sink(&event));
        }
        if let Ok(mut subscribers) = self.subscribers.lock() {
            subscribers.retain(|subscriber| subscriber.send(event.clone()).is_ok());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_sink_sees_each_event_before_emit_returns_until_it_declines() {
        let bus = EventBus::default();
        let seen = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&seen);
        bus.add_sink(Box::new(move |_| {
            counted.fetch_add(1, Ordering::SeqCst) < 1
        }));
        let start = || EngineEvent::CompactionStart {
            reason: CompactionReason::Manual,
        };
        bus.emit(start());
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        bus.emit(start());
        bus.emit(start());
        assert_eq!(
            seen.load(Ordering::SeqCst),
            2,
            "the sink declined after the second"
        );
    }
}
