//! `compaction_failed` (Pi 1.6's `session_compact_failed`): after the `compaction_end` of every
//! compaction that failed or was cancelled, to subscribers and to hooks, with the reason, the error,
//! whether it was cancelled and whether the turn is retried all the same.

use std::sync::{Arc, Mutex};

use ctxkit_engine::{
    BeforeCompact, BeforeCompactResult, CompactionFailed, CompactionReason, EngineEvent,
    HookFuture, HookSet, Hooks, MAX_OVERFLOW_ATTEMPTS, RECOVERY_EXHAUSTED,
};
use ctxkit_settings::{CommandHookConfig, FallbackPolicy};
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// Records every `compaction_failed` a hook is given; optionally cancels every compaction.
struct FailureLog {
    failures: Arc<Mutex<Vec<CompactionFailed>>>,
    cancel: bool,
}

impl Hooks for FailureLog {
    fn name(&self) -> String {
        "failure-log".to_owned()
    }

    fn before_compact<'a>(
        &'a self,
        _event: &'a BeforeCompact,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        let answer = self.cancel.then(|| BeforeCompactResult {
            cancel: true,
            compaction: None,
        });
        Box::pin(async move { Ok(answer) })
    }

    fn compaction_failed<'a>(&'a self, event: &'a CompactionFailed) -> HookFuture<'a, ()> {
        self.failures.lock().unwrap().push(event.clone());
        Box::pin(async { Ok(()) })
    }
}

/// A harness whose hooks log failures, and that log.
fn logged(
    settings: ctxkit_engine::EngineSettings,
    window: u64,
    cancel: bool,
    answers: impl IntoIterator<Item = Answer>,
) -> (Harness, Arc<Mutex<Vec<CompactionFailed>>>) {
    let failures = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = HookSet::new();
    hooks.push(Arc::new(FailureLog {
        failures: failures.clone(),
        cancel,
    }));
    let harness = Harness::with(settings, Some(model(window)), hooks, answers);
    (harness, failures)
}

/// The `compaction_failed` events, each checked to come right after a `compaction_end`.
fn failures(events: &[EngineEvent]) -> Vec<CompactionFailed> {
    events
        .iter()
        .enumerate()
        .filter_map(|(index, event)| {
            let EngineEvent::CompactionFailed(failed) = event else {
                return None;
            };
            assert!(
                matches!(events[index - 1], EngineEvent::CompactionEnd(_)),
                "{events:?}"
            );
            Some(failed.clone())
        })
        .collect()
}

fn failed(
    reason: CompactionReason,
    error_message: Option<&str>,
    aborted: bool,
    will_retry: bool,
) -> CompactionFailed {
    CompactionFailed {
        reason,
        error_message: error_message.map(str::to_owned),
        aborted,
        will_retry,
        from_hook: false,
        fallback: false,
    }
}

#[tokio::test]
async fn a_summarizer_that_errors_is_reported_to_subscribers_and_hooks() {
    let (mut harness, hooked) = logged(
        settings(2_000),
        10_000,
        false,
        [Answer::Fail("boom"), Answer::Fail("down")],
    );
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    harness.engine.after_run().await.unwrap();
    let threshold = failed(
        CompactionReason::Threshold,
        Some("Auto-compaction failed: Summarization failed: boom"),
        false,
        false,
    );
    assert_eq!(failures(&harness.drain()), std::slice::from_ref(&threshold));
    harness.engine.compact(None).await.unwrap_err();
    let manual = failed(
        CompactionReason::Manual,
        Some("Compaction failed: Summarization failed: down"),
        false,
        false,
    );
    assert_eq!(failures(&harness.drain()), std::slice::from_ref(&manual));
    assert_eq!(*hooked.lock().unwrap(), [threshold, manual]);
    assert_eq!(harness.compactions().await, 0);
}

#[tokio::test]
async fn a_cancelled_compaction_is_aborted_without_an_error() {
    let (mut harness, hooked) = logged(settings(2_000), 100_000, false, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.compact(None).await });
    harness.summarizer.started.notified().await;
    harness.engine.cancel_compaction();
    running.await.unwrap().unwrap_err();
    let cancelled = failed(CompactionReason::Manual, None, true, false);
    assert_eq!(failures(&harness.drain()), std::slice::from_ref(&cancelled));
    assert_eq!(*hooked.lock().unwrap(), [cancelled]);
}

#[tokio::test]
async fn a_compaction_a_hook_cancels_is_aborted_too() {
    let (mut harness, hooked) = logged(settings(2_000), 10_000, true, []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    harness.engine.after_run().await.unwrap();
    let cancelled = failed(CompactionReason::Threshold, None, true, false);
    assert_eq!(failures(&harness.drain()), std::slice::from_ref(&cancelled));
    assert_eq!(*hooked.lock().unwrap(), [cancelled]);
}

#[tokio::test]
async fn an_overflow_recovery_whose_summary_fails_says_it_retries_after_the_fallback() {
    let (mut harness, hooked) = logged(
        settings(16_384),
        200_000,
        false,
        [Answer::Fail("quota exceeded")],
    );
    for index in 0..6 {
        harness
            .turn(&format!("question {index} {}", "x".repeat(400)), 1_000)
            .await;
    }
    harness.engine.append(user("last")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(report.retry);
    let retried = CompactionFailed {
        fallback: true,
        ..failed(
            CompactionReason::Overflow,
            Some("Summarization failed: quota exceeded"),
            false,
            true,
        )
    };
    assert_eq!(failures(&harness.drain()), std::slice::from_ref(&retried));
    assert_eq!(*hooked.lock().unwrap(), [retried]);
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn an_overflow_recovery_that_fails_does_not_retry() {
    let mut settings = settings(16_384);
    settings.compaction.overflow_fallback = FallbackPolicy::Error;
    let (mut harness, _) = logged(settings, 200_000, false, [Answer::Fail("quota exceeded")]);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    assert!(!harness.engine.after_run().await.unwrap().retry);
    assert_eq!(
        failures(&harness.drain()),
        [failed(
            CompactionReason::Overflow,
            Some("Context overflow recovery failed: Summarization failed: quota exceeded"),
            false,
            false,
        )]
    );
}

#[tokio::test]
async fn an_exhausted_recovery_and_a_success_report_as_pi_does() {
    let (mut harness, hooked) = logged(settings(2_000), 10_000, false, []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    // A compaction that is written reports no failure.
    harness.engine.after_run().await.unwrap();
    assert_eq!(failures(&harness.drain()), []);
    // Overflows in a row past the limit: the recovery gives up and says so.
    for _ in 0..=MAX_OVERFLOW_ATTEMPTS {
        harness.engine.append(user("again")).await.unwrap();
        harness
            .engine
            .append(error_reply("prompt is too long"))
            .await
            .unwrap();
        harness.engine.after_run().await.unwrap();
    }
    let reported = failures(&harness.drain());
    let exhausted = failed(
        CompactionReason::Overflow,
        Some(RECOVERY_EXHAUSTED),
        false,
        false,
    );
    assert_eq!(reported.last(), Some(&exhausted), "{reported:?}");
    assert_eq!(hooked.lock().unwrap().last(), Some(&exhausted));
}

#[tokio::test]
async fn a_command_hook_reads_compaction_failed_on_stdin() {
    let mut settings = settings(2_000);
    settings.hooks = vec![CommandHookConfig {
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "cat > failed.json".to_owned(),
        ],
        events: vec!["compaction_failed".to_owned()],
        timeout_ms: 10_000,
        pass_env: Vec::new(),
        pinned_scripts: Vec::new(),
    }];
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        HookSet::new(),
        [Answer::Fail("no credit")],
    );
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap_err();
    let saved = std::fs::read_to_string(harness.dir.path().join("failed.json")).unwrap();
    let event: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        event,
        serde_json::json!({"event": "compaction_failed", "payload": {
            "reason": "manual",
            "error_message": "Compaction failed: Summarization failed: no credit",
            "aborted": false, "will_retry": false, "from_hook": false, "fallback": false,
        }})
    );
}
