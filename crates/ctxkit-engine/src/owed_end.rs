//! The end a started compaction or branch summary owes its subscribers: every `CompactionStart`
//! is followed by a `CompactionEnd` and every `BranchSummaryStart` by a `BranchSummaryEnd`, even
//! when the caller drops the operation's future midway (a timeout, a `select!`, an aborted task).
//! A UI that shows "Compacting…" from start to end would otherwise show it for ever.

use crate::compact::empty_end;
use crate::engine::Engine;
use crate::events::{CompactionEnd, CompactionFailed, CompactionReason, EngineEvent};

/// What was started and not ended yet.
enum Started {
    Compaction(CompactionReason),
    BranchSummary { target_id: String },
}

/// Emits a start event and, unless [`OwedEnd::paid`] is called first, the end of a cancelled
/// operation when dropped: what `cancel_compaction` (or `cancel_branch_summary`) leads to.
#[must_use = "dropped at once, it ends the operation it started as cancelled"]
pub(crate) struct OwedEnd {
    engine: Engine,
    started: Option<Started>,
}

impl OwedEnd {
    /// Emits `CompactionStart` for `reason`.
    pub(crate) fn compaction(engine: &Engine, reason: CompactionReason) -> Self {
        engine
            .inner
            .bus
            .emit(EngineEvent::CompactionStart { reason });
        Self {
            engine: engine.clone(),
            started: Some(Started::Compaction(reason)),
        }
    }

    /// Emits `BranchSummaryStart` for `target_id`.
    pub(crate) fn branch_summary(engine: &Engine, target_id: &str) -> Self {
        engine.inner.bus.emit(EngineEvent::BranchSummaryStart {
            target_id: target_id.to_owned(),
        });
        Self {
            engine: engine.clone(),
            started: Some(Started::BranchSummary {
                target_id: target_id.to_owned(),
            }),
        }
    }

    /// The operation emits its own end now: nothing is owed any more.
    pub(crate) fn paid(mut self) {
        self.started = None;
    }
}

impl Drop for OwedEnd {
    fn drop(&mut self) {
        let Some(started) = self.started.take() else {
            return;
        };
        let inner = &self.engine.inner;
        let bus = &inner.bus;
        match started {
            Started::Compaction(reason) => {
                // Not running any more by the time its end is heard (its `Running` is dropped
                // after this guard).
                inner.stop_running(&inner.compaction_cancel);
                tracing::info!(
                    ?reason,
                    "compaction dropped by its caller: ended as cancelled"
                );
                let end = CompactionEnd {
                    aborted: true,
                    ..empty_end(reason)
                };
                bus.emit(EngineEvent::CompactionEnd(end.clone()));
                if let Some(failed) = CompactionFailed::from_end(&end) {
                    bus.emit(EngineEvent::CompactionFailed(failed.clone()));
                    notify_hooks(&self.engine, failed);
                }
            }
            Started::BranchSummary { target_id } => {
                inner.stop_running(&inner.branch_summary_cancel);
                tracing::info!(%target_id, "branch summary dropped by its caller: ended as cancelled");
                bus.emit(EngineEvent::BranchSummaryEnd {
                    target_id,
                    aborted: true,
                    summary_entry_id: None,
                    error: None,
                });
            }
        }
    }
}

/// Tells the hooks about the cancelled compaction as a cancel does, on a task of its own: a drop
/// cannot wait for them. Without a runtime (the engine dropped outside one) they are not told.
fn notify_hooks(engine: &Engine, failed: CompactionFailed) {
    if engine.inner.hooks.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let engine = engine.clone();
    runtime.spawn(async move {
        engine
            .inner
            .hooks
            .compaction_failed(&engine.inner.bus, &failed)
            .await;
    });
}
