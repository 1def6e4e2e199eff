//! A turn, compaction or branch summary whose caller drops its future midway (a timeout, a `select!`,
//! an aborted task) ends as a cancelled one does: the turn fires its token; a start event gets its end,
//! nothing is written, and the engine no longer says it is compacting.

use ctxkit_engine::{CompactionReason, EngineEvent, NavigateOptions};
use tokio::task::JoinHandle;

use crate::support::*;

/// Drops the operation `running` once the summarizer was asked, as a caller's timeout would.
async fn drop_midway<T: std::fmt::Debug>(harness: &Harness, running: JoinHandle<T>) {
    harness.summarizer.started.notified().await;
    assert!(harness.engine.is_compacting());
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert!(!harness.engine.is_compacting());
}

/// The events of a compaction for `reason` ended as cancelled, with nothing else about it.
fn assert_cancelled_compaction(events: &[EngineEvent], reason: CompactionReason) {
    let [
        EngineEvent::CompactionStart { reason: started },
        EngineEvent::CompactionEnd(end),
        EngineEvent::CompactionFailed(failed),
    ] = events
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        (*started, end.reason, failed.reason),
        (reason, reason, reason)
    );
    assert!(
        end.aborted && end.error.is_none() && end.entry_id.is_none(),
        "{end:?}"
    );
    assert_eq!(failed.error_message, None);
}

#[tokio::test]
async fn a_dropped_manual_compaction_ends_as_cancelled() {
    let mut harness = Harness::new(100_000, 2_000, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let before = harness.entry_types().await;
    harness.drain();
    let engine = harness.engine.clone();
    drop_midway(
        &harness,
        tokio::spawn(async move { engine.compact(None).await }),
    )
    .await;
    assert_cancelled_compaction(&harness.drain(), CompactionReason::Manual);
    assert_eq!(harness.entry_types().await, before);
}

#[tokio::test]
async fn a_dropped_threshold_compaction_ends_as_cancelled() {
    let mut harness = Harness::new(10_000, 2_000, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    let before = harness.entry_types().await;
    harness.drain();
    let engine = harness.engine.clone();
    drop_midway(
        &harness,
        tokio::spawn(async move { engine.after_run().await }),
    )
    .await;
    assert_cancelled_compaction(&harness.drain(), CompactionReason::Threshold);
    assert_eq!(harness.entry_types().await, before);
}

#[tokio::test]
async fn a_dropped_overflow_compaction_ends_as_cancelled() {
    let mut harness = Harness::new(200_000, 16_384, [Answer::Hang]);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply(
            "prompt is too long: 250000 tokens > 200000 maximum",
        ))
        .await
        .unwrap();
    let before = harness.entry_types().await;
    harness.drain();
    let engine = harness.engine.clone();
    drop_midway(
        &harness,
        tokio::spawn(async move { engine.after_run().await }),
    )
    .await;
    assert_cancelled_compaction(&harness.drain(), CompactionReason::Overflow);
    assert_eq!(harness.entry_types().await, before);
}

#[tokio::test]
async fn a_dropped_branch_summary_ends_as_cancelled_and_the_leaf_stays() {
    let mut harness = Harness::new(100_000, 2_000, [Answer::Hang]);
    let mut ids = Vec::new();
    for text in ["u1", "u2", "u3"] {
        ids.push(harness.turn(text, 100).await.0);
    }
    let leaf = |harness: &Harness| {
        let engine = harness.engine.clone();
        async move {
            engine
                .with_session(|session| session.leaf_id().map(str::to_owned))
                .await
        }
    };
    let before = (leaf(&harness).await, harness.entry_types().await);
    harness.drain();
    let engine = harness.engine.clone();
    let target = ids[1].clone();
    let options = NavigateOptions {
        summarize: true,
        ..NavigateOptions::default()
    };
    drop_midway(
        &harness,
        tokio::spawn(async move { engine.navigate(&target, options).await }),
    )
    .await;
    let events = harness.drain();
    let [
        EngineEvent::BranchSummaryStart { target_id: started },
        EngineEvent::BranchSummaryEnd {
            target_id: ended,
            aborted: true,
            summary_entry_id: None,
            error: None,
        },
    ] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!((started, ended), (&ids[1], &ids[1]));
    assert_eq!((leaf(&harness).await, harness.entry_types().await), before);
}

/// What a turn started with its token (a `bash` command, a model request) stops when the turn's
/// future, which holds its guard, is dropped.
#[tokio::test]
async fn a_turn_whose_guard_is_dropped_fires_its_token() {
    let harness = Harness::new(100_000, 2_000, []);
    let turn = harness.engine.begin_turn();
    let token = turn.cancel_token();
    assert!(!token.is_cancelled());
    drop(turn);
    assert!(token.is_cancelled());
}
