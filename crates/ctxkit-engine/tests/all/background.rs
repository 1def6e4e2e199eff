//! Background compaction: the summary is written from `backgroundPercent` of the window on, and the
//! compaction at the threshold appends it without asking the summarizer again, unless the branch
//! moved past it.

use ctxkit_engine::Decision;

use crate::support::*;

fn background_settings() -> ctxkit_engine::EngineSettings {
    let mut settings = settings(20_000); // window 100,000: threshold 80,000
    settings.compaction.background = true;
    settings.compaction.background_percent = 75;
    settings
}

async fn wait_for_requests(harness: &Harness, count: usize) {
    // A generous deadline: a loaded machine may take seconds to run the background task.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if harness.summarizer.request_count() >= count {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!(
        "the summarizer got {} requests",
        harness.summarizer.request_count()
    );
}

#[tokio::test]
async fn the_threshold_compaction_appends_the_summary_written_in_the_background() {
    let harness = Harness::with(
        background_settings(),
        Some(model(100_000)),
        Default::default(),
        [Answer::Text("WRITTEN IN THE BACKGROUND")],
    );
    harness.turn("first", 1_000).await;
    assert_eq!(harness.summarizer.request_count(), 0, "under 75%: nothing");
    assert_eq!(harness.engine.background_summaries_started(), 0);
    harness.turn("second", 76_000).await;
    assert_eq!(harness.engine.background_summaries_started(), 1);
    wait_for_requests(&harness, 1).await;
    let report = harness.engine.after_run().await.unwrap();
    assert!(matches!(report.decision, ctxkit_engine::Decision::Skip(_)));
    assert_eq!(harness.compactions().await, 0);

    // Its requests (history, and the turn prefix of a split turn) are done by now.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let asked = harness.summarizer.request_count();
    harness.turn("third", 85_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert!(matches!(report.decision, Decision::Threshold { .. }));
    assert!(report.compaction.as_ref().unwrap().from_background);
    assert_eq!(harness.compactions().await, 1);
    assert_eq!(
        harness.summarizer.request_count(),
        asked,
        "the threshold compaction asked for no new summary"
    );
    let summary = harness
        .engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .rev()
                .find(|entry| entry.type_name() == "compaction")
                .unwrap()
                .raw()
                .unwrap()
                .to_string()
        })
        .await;
    assert!(summary.contains("WRITTEN IN THE BACKGROUND"), "{summary}");
}

/// QA 2026-12-07: on a 16,000-token window the background summary started between the checks'
/// threshold (its reserve at least the output room a request needs) and the planned one, where a
/// check compacts at once: after the user cancelled that compaction with Esc, the same summary
/// was sent again 6 ms later. It starts only under the checks' threshold.
#[tokio::test]
async fn no_background_summary_starts_where_a_check_compacts_at_once() {
    let window = 16_000;
    let mut settings = settings(1_000);
    settings.compaction.background = true;
    settings.compaction.background_percent = 50;
    let checks_threshold = window - ctxkit_overflow::output_room(window, 0).max(1_000);
    assert!(
        checks_threshold < window - 1_000,
        "the output room is the larger reserve"
    );
    let harness = Harness::with(
        settings,
        Some(model(window)),
        Default::default(),
        [Answer::Text("WRITTEN IN THE BACKGROUND")],
    );
    harness.turn("first", checks_threshold + 300).await;
    assert_eq!(harness.engine.background_summaries_started(), 0);
    harness.turn("second", checks_threshold - 300).await;
    assert_eq!(harness.engine.background_summaries_started(), 1);
}

#[tokio::test]
async fn a_background_summary_the_branch_moved_past_is_dropped() {
    let harness = Harness::with(
        background_settings(),
        Some(model(100_000)),
        Default::default(),
        [
            Answer::Text("STALE BACKGROUND"),
            Answer::Text("MANUAL"),
            Answer::Text("FRESH"),
        ],
    );
    harness.turn("first", 1_000).await;
    harness.turn("second", 76_000).await;
    wait_for_requests(&harness, 1).await;
    // A manual compaction in between: the background summary no longer fits the branch.
    harness.engine.compact(None).await.unwrap();
    harness.turn("third", 2_000).await;
    harness.turn("fourth", 85_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert!(matches!(report.decision, Decision::Threshold { .. }));
    assert!(!report.compaction.as_ref().unwrap().from_background);
    let raw = harness
        .engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .rev()
                .find(|entry| entry.type_name() == "compaction")
                .unwrap()
                .raw()
                .unwrap()
                .to_string()
        })
        .await;
    assert!(!raw.contains("STALE BACKGROUND"), "{raw}");
    assert!(
        harness.summarizer.request_count() >= 3,
        "a fresh summary was written"
    );
}

/// Cancelling a threshold compaction that waits for the summary still being written in the
/// background ends it at once, aborted, with nothing written: the wait watched no cancel, so a
/// `compact.cancel`, a `shutdown` or Esc was acknowledged while the compaction ran on and was
/// written (or, with a deadline, was abandoned with no `compaction_end`).
#[tokio::test]
async fn cancelling_a_threshold_compaction_waiting_for_the_background_summary_aborts_it() {
    let harness = Harness::with(
        background_settings(),
        Some(model(100_000)),
        Default::default(),
        [Answer::Hang],
    );
    harness.turn("first", 1_000).await;
    harness.turn("second", 76_000).await;
    assert_eq!(harness.engine.background_summaries_started(), 1);
    harness.summarizer.started.notified().await;
    harness.turn("third", 85_000).await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.after_run().await });
    while !harness.engine.is_compacting() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    harness.engine.cancel_compaction();
    let report = tokio::time::timeout(std::time::Duration::from_secs(5), running)
        .await
        .expect("the cancelled compaction ends at once")
        .unwrap()
        .unwrap();
    assert!(matches!(report.decision, Decision::Threshold { .. }));
    let end = report.compaction.unwrap();
    assert!(
        end.aborted && end.error.is_none() && !end.will_retry,
        "{end:?}"
    );
    assert!(!harness.engine.is_compacting());
    assert_eq!(harness.compactions().await, 0);
}
