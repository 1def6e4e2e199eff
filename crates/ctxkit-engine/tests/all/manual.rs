//! Manual compaction: focus text, a running turn aborted first, cancel, already compacted,
//! tokens before.

use std::sync::Arc;

use ctxkit_engine::{
    BeforeCompact, BeforeCompactResult, CompactionPlan, CompactionReason, EngineError, EngineEvent,
    HookFuture, HookSet, Hooks, NoCompaction,
};
use tokio_util::sync::CancellationToken;

use crate::support::*;

#[tokio::test]
async fn a_running_turn_is_aborted_first_and_the_focus_reaches_the_summarizer() {
    // the view afterwards starts with the summary, and file and view agree.
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    harness.engine.append(user("third")).await.unwrap();
    let guard = harness.engine.begin_turn();
    let cancel = guard.cancel_token();
    let engine = harness.engine.clone();
    let turn = tokio::spawn(async move {
        cancel.cancelled().await;
        // The loop records what it had, then ends the turn.
        engine
            .append(reply_with("aborted", None, 300, 3))
            .await
            .unwrap();
        drop(guard);
    });
    let end = harness
        .engine
        .compact(Some("focus X".to_owned()))
        .await
        .unwrap();
    turn.await.unwrap();
    assert_eq!(end.reason, CompactionReason::Manual);
    assert!(
        harness
            .summarizer
            .last_request()
            .user_text
            .contains("Additional focus: focus X")
    );
    let view = harness.engine.model_view().await.unwrap();
    let first = serde_json::to_string(&view.messages[0]).unwrap();
    assert!(first.contains("SUMMARY"), "{first}");
    // The aborted reply is in the file and left out of the view, before and after a reload.
    let transcript = harness.engine.transcript().await.unwrap();
    assert!(
        transcript
            .iter()
            .any(|message| message.role() == "compactionSummary")
    );
}

#[tokio::test]
async fn compacting_twice_says_already_compacted() {
    let mut harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    harness.drain();
    let error = harness.engine.compact(None).await.unwrap_err();
    assert!(matches!(error, EngineError::AlreadyCompacted));
    assert_eq!(error.to_string(), "Already compacted");
    // Nothing started, so no compaction events: a UI shows the answer instead.
    assert!(harness.drain().is_empty());
}

#[tokio::test]
async fn an_empty_session_has_nothing_to_compact_and_calls_no_model() {
    let harness = Harness::new(100_000, 2_000, []);
    let error = harness.engine.compact(None).await.unwrap_err();
    assert!(matches!(error, EngineError::NothingToCompact));
    assert_eq!(harness.summarizer.request_count(), 0);
}

#[tokio::test]
async fn a_context_within_the_keep_budget_is_not_compacted() {
    // The reference would summarize an empty span and append it (a longer context, a model call).
    let mut settings = settings(2_000);
    settings.compaction.keep_recent_tokens = 20_000;
    let harness = Harness::with(settings, Some(model(100_000)), Default::default(), []);
    harness.turn("first", 100).await;
    let before = harness.entry_types().await;
    let error = harness.engine.compact(None).await.unwrap_err();
    assert!(matches!(error, EngineError::NothingToCompact), "{error}");
    assert_eq!(harness.summarizer.request_count(), 0);
    assert_eq!(harness.entry_types().await, before);
}

#[tokio::test]
async fn the_plan_says_what_a_compaction_now_would_cover_and_why_not() {
    let mut settings = settings(2_000);
    settings.compaction.keep_recent_tokens = 20_000;
    let harness = Harness::with(settings, Some(model(100_000)), Default::default(), []);
    assert!(matches!(
        harness.engine.plan().await.unwrap(),
        CompactionPlan::Nothing(NoCompaction::EmptyBranch)
    ));
    harness.turn("first", 100).await;
    let CompactionPlan::Nothing(NoCompaction::AllKept {
        context_tokens,
        keep_recent_tokens,
    }) = harness.engine.plan().await.unwrap()
    else {
        panic!("a context within the keep budget has nothing to summarize");
    };
    assert_eq!(keep_recent_tokens, 20_000);
    assert!(
        context_tokens > 0 && context_tokens < 20_000,
        "{context_tokens}"
    );

    // With a tiny keep budget the plan is the one `compact` carries out.
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let CompactionPlan::Ready(plan) = harness.engine.plan().await.unwrap() else {
        panic!("two turns over a keep budget of one token are a plan");
    };
    let end = harness.engine.compact(None).await.unwrap();
    assert_eq!(
        end.first_kept_entry_id.as_deref(),
        Some(plan.first_kept_entry_id.as_str())
    );
    assert!(matches!(
        harness.engine.plan().await.unwrap(),
        CompactionPlan::Nothing(NoCompaction::AlreadyCompacted)
    ));
}

#[tokio::test]
async fn cancelling_a_manual_compaction_writes_nothing() {
    let mut harness = Harness::new(100_000, 2_000, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let before = harness.entry_types().await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.compact(None).await });
    harness.summarizer.started.notified().await;
    harness.engine.cancel_compaction();
    let error = running.await.unwrap().unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    assert_eq!(harness.entry_types().await, before);
    let events = harness.drain();
    // The compaction's end, then the failure it reports.
    let [
        ..,
        EngineEvent::CompactionEnd(end),
        EngineEvent::CompactionFailed(_),
    ] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert!(end.aborted && end.error.is_none());
}

#[tokio::test]
async fn tokens_before_is_the_last_usage_plus_trailing_estimates() {
    // independent of the previous compaction's tokensBefore.
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    harness.engine.append(user("kept")).await.unwrap();
    harness.engine.append(reply("ok", 5_000)).await.unwrap();
    let trailing = "u".repeat(41);
    harness.engine.append(user(&trailing)).await.unwrap();
    let end = harness.engine.compact(None).await.unwrap();
    // The entry holds the reference's number; the event's before → after is estimated.
    let raw = harness
        .engine
        .with_session(|session| {
            session
                .entry(end.entry_id.as_deref().unwrap())
                .unwrap()
                .raw()
                .unwrap()
                .to_string()
        })
        .await;
    assert!(raw.contains(r#""tokensBefore":5011"#), "{raw}");
}

struct Cancelling;

impl Hooks for Cancelling {
    fn name(&self) -> String {
        "cancelling".to_owned()
    }

    fn before_compact<'a>(
        &'a self,
        _event: &'a BeforeCompact,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        Box::pin(async {
            Ok(Some(BeforeCompactResult {
                cancel: true,
                compaction: None,
            }))
        })
    }
}

#[tokio::test]
async fn a_cancelling_hook_rejects_a_manual_compaction() {
    // rejected, aborted, and the view still matches the file.
    let mut hooks = HookSet::new();
    hooks.push(Arc::new(Cancelling));
    let mut harness = Harness::with(settings(2_000), Some(model(100_000)), hooks, []);
    harness.turn("first", 100).await;
    let before = harness.entry_types().await;
    let error = harness
        .engine
        .compact(Some("focus".into()))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    let events = harness.drain();
    // The compaction's end, then the failure it reports.
    let [
        ..,
        EngineEvent::CompactionEnd(end),
        EngineEvent::CompactionFailed(_),
    ] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert!(end.aborted);
    assert_eq!(harness.entry_types().await, before);
    assert_eq!(harness.summarizer.request_count(), 0);
}

#[tokio::test]
async fn the_durability_setting_reaches_the_session_file() {
    let mut settings = settings(2_000);
    settings.session.durability = ctxkit_settings::DurabilityMode::Sync;
    let harness = Harness::with(
        settings.clone(),
        Some(model(100_000)),
        Default::default(),
        [],
    );
    let durability = harness
        .engine
        .with_session(|session| session.durability())
        .await;
    assert_eq!(durability, ctxkit_session::Durability::SyncEach);
    settings.session.durability = ctxkit_settings::DurabilityMode::Batch;
    settings.session.sync_every = 7;
    let harness = Harness::with(settings, Some(model(100_000)), Default::default(), []);
    let durability = harness
        .engine
        .with_session(|session| session.durability())
        .await;
    assert_eq!(
        durability,
        ctxkit_session::Durability::SyncEvery(std::num::NonZeroU32::new(7).unwrap())
    );
}

#[tokio::test]
async fn a_cancel_while_the_compaction_waits_for_the_turn_is_not_lost() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    let before = harness.entry_types().await;
    let turn = harness.engine.begin_turn();
    let engine = harness.engine.clone();
    let waiting = tokio::spawn(async move { engine.compact(None).await });
    // The compaction has asked the turn to stop and waits for it; the user cancels meanwhile.
    turn.cancel_token().cancelled().await;
    harness.engine.cancel_compaction();
    drop(turn);
    let error = waiting.await.unwrap().unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    assert_eq!(harness.entry_types().await, before);
    assert_eq!(harness.summarizer.request_count(), 0);
}
