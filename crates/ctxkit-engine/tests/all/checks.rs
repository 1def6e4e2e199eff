//! The automatic checks, scenario by scenario: threshold, overflow and retry, overflows in a row,
//! stale-usage guards, model switches, the error estimate, aborted replies, window 0, failures and
//! the fallback.

use ctxkit_engine::{
    CompactionEnd, CompactionReason, Decision, EngineEvent, MAX_OVERFLOW_ATTEMPTS,
    RECOVERY_EXHAUSTED, SkipReason,
};
use ctxkit_settings::FallbackPolicy;

use crate::support::*;

fn end(events: &[EngineEvent]) -> CompactionEnd {
    events
        .iter()
        .find_map(|event| {
            if let EngineEvent::CompactionEnd(end) = event {
                Some(end.clone())
            } else {
                None
            }
        })
        .expect("a compaction_end event")
}

fn starts(events: &[EngineEvent]) -> Vec<CompactionReason> {
    events
        .iter()
        .filter_map(|event| {
            if let EngineEvent::CompactionStart { reason } = event {
                Some(*reason)
            } else {
                None
            }
        })
        .collect()
}

#[tokio::test]
async fn threshold_compacts_after_a_run_without_retry() {
    // usage over window − reserve.
    let mut harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 8_001).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 8_001 });
    assert!(!report.retry);
    let events = harness.drain();
    assert_eq!(starts(&events), [CompactionReason::Threshold]);
    let end = end(&events);
    assert!(!end.aborted && !end.will_retry && end.error.is_none());
    assert!(end.tokens_before.is_some() && end.entry_id.is_some());
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn threshold_is_strict() {
    // usage exactly window − reserve does nothing.
    let mut harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 8_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    assert!(harness.drain().is_empty());
}

#[tokio::test]
async fn disabled_auto_compaction_still_allows_manual() {
    let mut settings = settings(2_000);
    settings.compaction.enabled = false;
    let mut harness = Harness::with(settings, Some(model(10_000)), Default::default(), []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Skip(SkipReason::Disabled)
    );
    assert_eq!(
        harness.engine.before_prompt().await.unwrap().decision,
        Decision::Skip(SkipReason::Disabled)
    );
    assert!(harness.drain().is_empty());
    harness.engine.compact(None).await.unwrap();
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn overflow_compacts_and_retries_once_keeping_the_error_in_the_file() {
    let mut harness = Harness::new(200_000, 16_384, []);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply(
            "prompt is too long: 250000 tokens > 200000 maximum",
        ))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(
        report.retry,
        "the view ends in a user message, so a retry runs"
    );
    let events = harness.drain();
    assert_eq!(starts(&events), [CompactionReason::Overflow]);
    assert!(end(&events).will_retry);
    // The error reply stays in the file, before the compaction entry…
    let types = harness.entry_types().await;
    let error_at = types.iter().rposition(|kind| kind == "message").unwrap();
    let compaction_at = types.iter().position(|kind| kind == "compaction").unwrap();
    assert!(error_at < compaction_at, "{types:?}");
    // …and out of the model's view, which ends in the user message the retry answers.
    let view = harness.engine.model_view().await.unwrap();
    assert_eq!(view.messages.last().unwrap().role(), "user");
}

#[tokio::test]
async fn an_overflow_that_compaction_cannot_fix_is_reported_once_and_the_next_prompt_recovers() {
    // ctxkit escalates instead of the reference's single attempt.
    let mut harness = Harness::new(200_000, 16_384, []);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    assert!(harness.engine.after_run().await.unwrap().retry);
    harness.drain();
    // The retry overflows again, and everything before the current turn is compacted already.
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(!report.retry);
    let events = harness.drain();
    let failed = end(&events);
    let error = failed.error.as_deref().unwrap();
    // A turn this small that does not fit says the provider's limit is below the window.
    assert!(
        error.contains("its real limit is smaller") && error.contains("200000-token"),
        "{error}"
    );
    assert!(!failed.will_retry);
    assert_eq!(harness.compactions().await, 1);
    // Before the next prompt nothing is repeated…
    let report = harness.engine.before_prompt().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::OverflowHandled));
    assert!(harness.drain().is_empty());
    // …and an overflow after it compacts the turn that could not be compacted before.
    harness.engine.append(user("third")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(report.retry);
    assert_eq!(harness.compactions().await, 2);
}

#[tokio::test]
async fn overflows_in_a_row_end_with_one_clear_message() {
    let mut harness = Harness::new(200_000, 16_384, []);
    for turn in 0..(MAX_OVERFLOW_ATTEMPTS + 2) {
        harness.turn(&format!("turn {turn}"), 1_000).await;
    }
    harness.engine.append(user("last")).await.unwrap();
    let mut compactions = 0;
    for _ in 0..MAX_OVERFLOW_ATTEMPTS {
        harness
            .engine
            .append(error_reply("prompt is too long"))
            .await
            .unwrap();
        let report = harness.engine.after_run().await.unwrap();
        harness.drain();
        if report.retry {
            compactions += 1;
        }
    }
    assert!(compactions >= 1);
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::RecoveryExhausted);
    assert_eq!(
        end(&harness.drain()).error.as_deref(),
        Some(RECOVERY_EXHAUSTED)
    );
    // A successful reply ends the streak.
    harness.engine.append(reply("fine", 1_000)).await.unwrap();
    harness.engine.append(user("again")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Overflow
    );
}

#[tokio::test]
async fn overflow_with_a_failing_summarizer_and_the_error_policy_writes_nothing() {
    // A failing summarizer with the reference's policy.
    let mut settings = settings(16_384);
    settings.compaction.overflow_fallback = FallbackPolicy::Error;
    let mut harness = Harness::with(
        settings,
        Some(model(200_000)),
        Default::default(),
        [Answer::Fail("quota exceeded")],
    );
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry);
    let failed = end(&harness.drain());
    assert_eq!(
        failed.error.as_deref(),
        Some("Context overflow recovery failed: Summarization failed: quota exceeded")
    );
    assert!(!failed.will_retry);
    assert_eq!(harness.compactions().await, 0);
    let view = harness.engine.model_view().await.unwrap();
    assert_eq!(view.messages.last().unwrap().role(), "user");
}

#[tokio::test]
async fn overflow_with_a_failing_summarizer_falls_back_to_truncation_by_default() {
    // A failing summarizer with ctxkit's default: keep the newest part, say why, and retry.
    let mut harness = Harness::new(200_000, 16_384, [Answer::Fail("quota exceeded")]);
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
    let end = end(&harness.drain());
    assert!(end.fallback && end.will_retry);
    assert_eq!(
        end.error.as_deref(),
        Some("Summarization failed: quota exceeded")
    );
    let summary = harness
        .engine
        .with_session(|session| {
            let entry = session.entry(end.entry_id.as_deref().unwrap()).unwrap();
            entry.raw().unwrap().to_string()
        })
        .await;
    assert!(
        summary.contains("Compaction failed (Summarization failed: quota exceeded)"),
        "{summary}"
    );
    assert!(summary.contains("\"fallback\":\"truncate\""), "{summary}");
    // The kept part never starts at a tool result and is the newer part of the conversation.
    let view = harness.engine.model_view().await.unwrap();
    assert!(view.messages.len() < 14, "{}", view.messages.len());
    assert_eq!(view.messages.last().unwrap().role(), "user");
}

#[tokio::test]
async fn threshold_failure_is_reported_with_its_prefix() {
    let mut harness = Harness::new(10_000, 2_000, [Answer::Fail("boom")]);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    harness.engine.after_run().await.unwrap();
    let failed = end(&harness.drain());
    assert_eq!(
        failed.error.as_deref(),
        Some("Auto-compaction failed: Summarization failed: boom")
    );
    assert_eq!(harness.compactions().await, 0);
}

#[tokio::test]
async fn an_overflow_from_another_model_is_ignored_after_a_switch() {
    let mut harness = Harness::new(200_000, 16_384, []);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let mut other = model(200_000);
    other.id = "other".to_owned();
    harness.engine.set_model(Some(other)).await;
    let report = harness.engine.before_prompt().await.unwrap();
    assert_ne!(report.decision, Decision::Overflow);
    assert!(harness.drain().is_empty());
}

#[tokio::test]
async fn switching_to_a_smaller_window_compacts_before_the_next_prompt() {
    // nothing at the switch; threshold compaction before the prompt.
    let mut harness = Harness::new(200_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 2_577).await;
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Skip(SkipReason::UnderThreshold)
    );
    harness.engine.set_model(Some(model(4_000))).await;
    assert!(harness.drain().is_empty());
    let report = harness.engine.before_prompt().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 2_577 });
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn usage_from_before_a_compaction_is_stale() {
    // a kept pre-compaction reply with huge usage does not compact again.
    let harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_500).await;
    harness.engine.compact(None).await.unwrap();
    let report = harness.engine.before_prompt().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::Stale));
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn an_error_reply_is_measured_from_the_last_successful_usage() {
    // 190k + trailing estimates.
    let harness = Harness::new(200_000, 16_384, []);
    harness.turn("first", 190_000).await;
    harness.engine.append(user("again")).await.unwrap();
    harness
        .engine
        .append(error_reply("529 overloaded"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    let Decision::Threshold { tokens } = report.decision else {
        panic!("expected a threshold compaction, got {:?}", report.decision)
    };
    assert!(tokens > 190_000, "{tokens}");
}

#[tokio::test]
async fn an_error_reply_without_any_usage_does_nothing() {
    let harness = Harness::new(200_000, 16_384, []);
    harness.engine.append(user("hello")).await.unwrap();
    harness
        .engine
        .append(error_reply("529 overloaded"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::NoUsage));
}

#[tokio::test]
async fn an_error_after_a_compaction_with_only_kept_usage_does_nothing() {
    // the error-after-compaction guard.
    let harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_500).await;
    harness.engine.compact(None).await.unwrap();
    harness.engine.append(user("third")).await.unwrap();
    harness
        .engine
        .append(error_reply("529 overloaded"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::NoUsage));
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn an_aborted_reply_is_skipped_after_the_run_but_counted_before_the_prompt() {
    let harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(reply_with("aborted", None, 9_000, 10))
        .await
        .unwrap();
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Skip(SkipReason::Aborted)
    );
    assert_eq!(
        harness.engine.before_prompt().await.unwrap().decision,
        Decision::Threshold { tokens: 9_010 }
    );
}

#[tokio::test]
async fn a_silent_overflow_compacts_without_announcing_a_retry() {
    // The reference's quirk fixed: will_retry is true only when a retry really runs.
    let mut harness = Harness::new(100_000, 16_384, []);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("second")).await.unwrap();
    harness
        .engine
        .append(reply_with("stop", None, 100_001, 5))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(!report.retry);
    assert!(!end(&harness.drain()).will_retry);
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn an_unknown_window_never_compacts_automatically() {
    // The reference compacts after every turn with window 0; ctxkit does not.
    let harness = Harness::new(0, 16_384, []);
    harness.turn("first", 100).await;
    harness.turn("second", 50).await;
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Skip(SkipReason::UnknownWindow)
    );
    assert_eq!(harness.engine.context_usage().await.unwrap(), None);
    assert_eq!(harness.compactions().await, 0);
}

#[tokio::test]
async fn cancelling_an_automatic_compaction_writes_nothing() {
    let mut harness = Harness::new(10_000, 2_000, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.after_run().await });
    harness.summarizer.started.notified().await;
    assert!(harness.engine.is_compacting());
    harness.engine.cancel_compaction();
    let report = running.await.unwrap().unwrap();
    let end = report.compaction.unwrap();
    assert!(end.aborted && end.error.is_none() && !end.will_retry);
    assert!(!harness.engine.is_compacting());
    assert_eq!(harness.compactions().await, 0);
    harness.drain();
}

#[tokio::test]
async fn a_prompt_during_a_compaction_waits_for_it_instead_of_starting_another() {
    // single flight.
    let mut harness = Harness::new(10_000, 2_000, [Answer::Hang]);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    let engine = harness.engine.clone();
    let first = tokio::spawn(async move { engine.after_run().await });
    harness.summarizer.started.notified().await;
    let engine = harness.engine.clone();
    let prompt = tokio::spawn(async move { engine.before_prompt().await });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!prompt.is_finished(), "the prompt waits for the compaction");
    harness.summarizer.release.notify_one();
    first.await.unwrap().unwrap();
    let report = prompt.await.unwrap().unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::Stale));
    assert_eq!(harness.compactions().await, 1);
    let history_requests = harness
        .summarizer
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|request| request.purpose == ctxkit_summarizer::SummaryPurpose::History)
        .count();
    assert_eq!(history_requests, 1);
    assert_eq!(starts(&harness.drain()).len(), 1);
}

#[tokio::test]
async fn context_usage_follows_the_reference() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.engine.append(user("hello")).await.unwrap();
    harness.engine.append(reply("ok", 12_500)).await.unwrap();
    harness.engine.append(user(&"x".repeat(40))).await.unwrap();
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert_eq!(usage.tokens, Some(12_510));
    assert_eq!(usage.context_window, 100_000);
    harness.engine.append(reply("ok", 12_600)).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert_eq!((usage.tokens, usage.percent), (None, None));
    harness.engine.append(user("after")).await.unwrap();
    harness.engine.append(reply("ok", 700)).await.unwrap();
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert_eq!(usage.tokens, Some(700));
    // A later reply whose usage is all zeros counted nothing (an imported reasoning or tool-call
    // reply the source recorded no count for): as in Pi 1.6.0, the figure stays known.
    harness.engine.append(reply("ok", 0)).await.unwrap();
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert!(
        usage.tokens.is_some_and(|tokens| tokens >= 700),
        "{usage:?}"
    );
}

/// Where no reply's usage tells the context (every request failed, or just compacted), the status
/// figure is ctxkit's estimate of the messages sent next (a failed reply is not sent), marked as
/// one; a reply's usage replaces it.
#[tokio::test]
async fn context_status_estimates_where_no_reply_reports_usage() {
    let harness = Harness::new(100_000, 2_000, []);
    let prompt = user(&"p".repeat(400));
    harness.engine.append(prompt.clone()).await.unwrap();
    harness
        .engine
        .append(error_reply("HTTP 500: internal boom"))
        .await
        .unwrap();
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!(
        status,
        ctxkit_engine::ContextStatus {
            tokens: ctxkit_tokens::estimate_tokens(&prompt),
            context_window: 100_000,
            configured_window: 100_000,
            estimated: true,
        }
    );
    harness.engine.append(user("again")).await.unwrap();
    harness.engine.append(reply("ok", 12_500)).await.unwrap();
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!((status.tokens, status.estimated), (12_500, false));
    harness.engine.append(user(&"x".repeat(40))).await.unwrap();
    harness.engine.append(reply("ok", 12_600)).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert_eq!(usage.tokens, None, "the reference's figure is unknown");
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert!(status.estimated, "{status:?}");
    assert!(status.tokens > 0 && status.tokens < 12_600, "{status:?}");
    harness.engine.append(user("after")).await.unwrap();
    harness.engine.append(reply("ok", 700)).await.unwrap();
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!((status.tokens, status.estimated), (700, false));
}

fn tool_call_reply(total: u64) -> ctxkit_protocol::AgentMessage {
    serde_json::from_value(serde_json::json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

fn tool_result(chars: usize) -> ctxkit_protocol::AgentMessage {
    serde_json::from_value(serde_json::json!({
        "role": "toolResult", "toolCallId": "call_1", "toolName": "read",
        "content": [{"type": "text", "text": "x".repeat(chars)}], "isError": false,
        "timestamp": now_ms(),
    }))
    .unwrap()
}

#[tokio::test]
async fn the_check_after_a_tool_batch_counts_the_results_after_the_last_usage() {
    let mut harness = Harness::new(10_000, 2_000, []);
    harness.turn("first", 1_000).await;
    harness.engine.append(user("read a.txt")).await.unwrap();
    harness.engine.append(tool_call_reply(7_000)).await.unwrap();
    // The reply's usage alone is under window − reserve: the checks after a run see nothing.
    let quiet = harness.engine.after_run().await.unwrap();
    assert_eq!(quiet.decision, Decision::Skip(SkipReason::UnderThreshold));
    // Its result (about 2000 tokens) pushes the next request over: compacted before it is sent.
    harness.engine.append(tool_result(8_000)).await.unwrap();
    let report = harness.engine.after_tool_batch().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 9_000 });
    assert!(!report.retry);
    let events = harness.drain();
    assert_eq!(starts(&events), [CompactionReason::Threshold]);
    assert!(end(&events).entry_id.is_some());
    // After the compaction the usage predates it: the whole context is estimated, under the
    // threshold now.
    let again = harness.engine.after_tool_batch().await.unwrap();
    assert_eq!(again.decision, Decision::Skip(SkipReason::UnderThreshold));
}

#[tokio::test]
async fn a_model_override_sets_the_threshold_of_the_model_running_now() {
    // The ordinary reserve (2,000) puts the threshold at 8,000; the faux model's override
    // (`compaction.modelOverrides["faux/faux-1"]`) at 5,000. Another model has no entry.
    let mut settings = settings(2_000);
    settings.compaction.model_overrides.insert(
        ctxkit_settings::model_override_key(PROVIDER, MODEL),
        ctxkit_settings::CompactionModelOverride {
            reserve_tokens: Some(5_000),
            keep_recent_tokens: None,
        },
    );
    let other = ctxkit_engine::ModelInfo {
        provider: PROVIDER.to_owned(),
        id: "faux-2".to_owned(),
        context_window: 10_000,
        cache: None,
    };
    let mut harness = Harness::with(settings, Some(other.clone()), Default::default(), []);
    harness.turn("first", 100).await;
    harness.turn("second", 6_000).await;
    assert_eq!(harness.engine.planning().await.reserve_tokens, 2_000);
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Skip(SkipReason::UnderThreshold)
    );
    // The user switches to the model with an override: the next check reads its budget.
    harness.engine.set_model(Some(model(10_000))).await;
    assert_eq!(harness.engine.planning().await.reserve_tokens, 5_000);
    harness.turn("third", 6_000).await;
    assert_eq!(
        harness.engine.after_run().await.unwrap().decision,
        Decision::Threshold { tokens: 6_000 }
    );
    assert_eq!(starts(&harness.drain()), [CompactionReason::Threshold]);
    // And back: the ordinary budget again.
    harness.engine.set_model(Some(other)).await;
    assert_eq!(harness.engine.planning().await.reserve_tokens, 2_000);
}

/// An engine with a `window`-token model over a session of `count` one-word messages without usage
/// (an import, a generated session): the reference counts such a context as 0 tokens.
async fn silent_session(count: usize, window: u64) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut session =
        ctxkit_session::Session::create(&dir.path().display().to_string(), dir.path());
    let messages = (0..count)
        .map(|index| {
            let message = if index % 2 == 0 {
                serde_json::json!({"role": "user", "content": "word", "timestamp": index})
            } else {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "word"}],
                    "provider": PROVIDER, "model": MODEL, "api": "faux", "stopReason": "stop",
                    "timestamp": index})
            };
            serde_json::from_value(message).unwrap()
        })
        .collect();
    session.append_messages(messages).unwrap();
    let mut harness = Harness::with_session(session);
    harness.dir = dir;
    harness.engine.set_model(Some(model(window))).await;
    harness
}

#[tokio::test]
async fn a_context_of_more_messages_than_the_threshold_has_tokens_compacts_before_the_prompt() {
    // 8,002 messages without usage: 0 tokens by the reference's rule, over the threshold
    // (10,000 − 2,000) by their count, so the check compacts before any is read.
    let mut harness = silent_session(8_002, 10_000).await;
    let report = harness.engine.before_prompt().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 8_002 });
    assert_eq!(starts(&harness.drain()), [CompactionReason::Threshold]);
    assert_eq!(harness.compactions().await, 1);
    // What the compaction kept is short: the next check is the reference's again.
    let again = harness.engine.before_prompt().await.unwrap();
    assert!(matches!(again.decision, Decision::Skip(_)), "{again:?}");
    assert_eq!(harness.compactions().await, 1);
}

#[tokio::test]
async fn a_long_context_under_the_threshold_in_messages_keeps_the_reference_rule() {
    // 7,000 messages: under the threshold by their count, 0 tokens by the last reply.
    let harness = silent_session(7_000, 10_000).await;
    let report = harness.engine.before_prompt().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    assert_eq!(harness.compactions().await, 0);
}

#[tokio::test]
async fn an_overflow_in_a_context_longer_than_the_threshold_is_recovered_with_a_retry() {
    // The length rule leaves an overflowed reply to the reference's recovery: compact, then retry.
    let harness = silent_session(8_002, 10_000).await;
    harness.engine.append(user("go on")).await.unwrap();
    harness
        .engine
        .append(error_reply(
            "prompt is too long: 12000 tokens > 10000 maximum",
        ))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(report.retry, "{report:?}");
    assert_eq!(harness.compactions().await, 1);
}

/// Tells the engine the model was sent its current view with `system_prompt`, as the agent does
/// when the reply comes: the reply's usage then teaches it the provider's over-count.
async fn record_view_as_sent(harness: &Harness, system_prompt: &str) {
    let view = harness.engine.model_view().await.unwrap();
    harness
        .engine
        .record_model_request(ctxkit_summarizer::ConversationPrefix {
            provider: PROVIDER.into(),
            model: MODEL.into(),
            system_prompt: system_prompt.into(),
            request_messages: 0,
            messages: view.messages,
            tools: Vec::new(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        })
        .await;
}

/// A request of about 15,000 estimated tokens, sent and answered by a reply the provider counted
/// at `counted`: the over-count it teaches is `counted` over 15,000.
async fn teach_over_count(harness: &Harness, counted: u64) {
    harness
        .engine
        .append(user(&"word ".repeat(12_000)))
        .await
        .unwrap();
    record_view_as_sent(harness, "").await;
    harness.engine.append(reply("ok", counted)).await.unwrap();
}

/// A long reply is output, not more of the request than ctxkit estimated: the over-count learned
/// from it must not scale what comes after it (it used to: the reply's output was counted as part
/// of the request, and every later estimate grew by the reply's length over the request's).
#[tokio::test]
async fn a_long_reply_teaches_no_over_count() {
    let mut harness = Harness::new(10_000, 2_000, []);
    // A request over an eighth of the window (about 1,900 estimated tokens), recorded as sent.
    harness
        .engine
        .append(user(&"word ".repeat(1_500)))
        .await
        .unwrap();
    record_view_as_sent(&harness, "You are a coding agent.").await;
    // The provider counted fewer input tokens than estimated; the reply was 5,000 tokens long.
    let reply = serde_json::from_value(serde_json::json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": 1_000, "output": 5_000, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 6_000},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap();
    harness.engine.append(reply).await.unwrap();
    // 6,000 counted plus a result of about 2,000 estimated tokens is the threshold, not over it.
    harness.engine.append(tool_result(8_000)).await.unwrap();
    let report = harness.engine.after_tool_batch().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    assert!(starts(&harness.drain()).is_empty());
}

/// A harness whose `thresholdTokens` is `threshold` in a 100,000 window (its own reserve far away).
fn threshold_harness(threshold: u64) -> Harness {
    threshold_harness_in(threshold, 100_000)
}

/// A harness whose `thresholdTokens` is `threshold` in a `window`-token window.
fn threshold_harness_in(threshold: u64, window: u64) -> Harness {
    let settings = ctxkit_engine::EngineSettings {
        compaction: ctxkit_settings::CompactionConfig {
            threshold_tokens: threshold,
            keep_recent_tokens: 1,
            ..ctxkit_settings::CompactionConfig::default()
        },
        ..ctxkit_engine::EngineSettings::default()
    };
    Harness::with(
        settings,
        Some(model(window)),
        ctxkit_engine::HookSet::new(),
        [],
    )
}

#[tokio::test]
async fn after_a_compaction_the_threshold_makes_room_for_what_the_provider_counts_more() {
    let mut harness = threshold_harness(40_000);
    // A request of about 15,000 estimated tokens that the provider counts at 30,000: twice.
    teach_over_count(&harness, 30_000).await;
    harness.turn("second", 40_001).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 40_001 });
    assert_eq!(harness.compactions().await, 1);
    harness.drain();

    // The first request after it counts 30,000: ctxkit's estimate of it is about 15,000, so the
    // budgets meant 25,000 of room, and the next threshold compaction waits for 55,000.
    harness.turn("third", 30_000).await;
    harness.turn("fourth", 50_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    harness.turn("fifth", 55_500).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 55_500 });
    assert_eq!(harness.compactions().await, 2);
}

#[tokio::test]
async fn without_an_over_count_the_threshold_stays_where_it_was() {
    let mut harness = threshold_harness(4_000);
    harness.turn("first", 100).await;
    harness.turn("second", 4_001).await;
    harness.engine.after_run().await.unwrap();
    harness.drain();
    harness.turn("third", 3_500).await;
    harness.turn("fourth", 4_001).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 4_001 });
}

/// A provider counting three times ctxkit's estimate reaches a 60,000 threshold at about 20,000
/// estimated tokens, under an eighth of a 200,000 window: the requests before the compaction must
/// still teach the over-count, or the threshold's spacing never acts and such a session compacts
/// every few calls (it did: 48 compactions in 144 calls on a real one, docs/simulator.md).
#[tokio::test]
async fn a_request_under_an_eighth_of_the_window_teaches_the_over_count_the_threshold_needs() {
    let mut harness = threshold_harness_in(60_000, 200_000);
    // About 17,500 estimated tokens (under 25,000, the window's eighth), counted at 52,500.
    harness
        .engine
        .append(user(&"word ".repeat(14_000)))
        .await
        .unwrap();
    record_view_as_sent(&harness, "").await;
    harness.engine.append(reply("ok", 52_500)).await.unwrap();
    harness.turn("second", 60_001).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 60_001 });
    harness.drain();

    // The first request after the compaction counts 52,000, about 17,300 estimated: the next
    // compaction waits for about 94,700, not 60,000.
    harness.turn("third", 52_000).await;
    harness.turn("fourth", 61_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    harness.turn("fifth", 95_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 95_000 });
    assert_eq!(harness.compactions().await, 2);
}

/// Under `thresholdTokens`, read against the provider's count, the keep budget is read in that
/// count too: a provider counting twice ctxkit's estimate keeps half of `keepRecentTokens` in
/// the estimate, or each compaction left the context close to the threshold (docs/simulator.md,
/// twenty-seventh round).
#[tokio::test]
async fn under_a_threshold_the_keep_budget_is_read_in_the_providers_count() {
    let settings = ctxkit_engine::EngineSettings {
        compaction: ctxkit_settings::CompactionConfig {
            threshold_tokens: 40_000,
            keep_recent_tokens: 4_000,
            ..ctxkit_settings::CompactionConfig::default()
        },
        ..ctxkit_engine::EngineSettings::default()
    };
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    // A request of about 15,000 estimated tokens that the provider counts at 30,000: twice.
    teach_over_count(&harness, 30_000).await;
    // Six turns of about 1,000 estimated tokens each.
    let mut users = Vec::new();
    for turn in 1..=6_u64 {
        let (user_id, _) = harness
            .turn(&"word ".repeat(800), 30_000 + turn * 1_700)
            .await;
        users.push(user_id);
    }
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 40_200 });
    let first_kept = report.compaction.unwrap().first_kept_entry_id.unwrap();
    // 2,000 estimated tokens: the last two turns, where 4,000 kept the last four.
    assert_eq!(first_kept, users[4]);
}

/// After a compaction the provider counted more of than ctxkit's estimate, the threshold is spaced
/// past `thresholdTokens`, and the background summary starts at `backgroundPercent` of the spaced
/// threshold. Started at the share of the planned one, it summarized up to where the context stood
/// then and the compaction at the spaced threshold kept all the context grew since: at ratios of
/// 1.4–2.2 the defaults' compactions kept more and more each time (docs/simulator.md, twenty-second
/// round).
#[tokio::test]
async fn the_background_summary_starts_at_its_share_of_the_spaced_threshold() {
    let settings = ctxkit_engine::EngineSettings {
        compaction: ctxkit_settings::CompactionConfig {
            threshold_tokens: 40_000,
            keep_recent_tokens: 1,
            background: true,
            background_percent: 80,
            ..ctxkit_settings::CompactionConfig::default()
        },
        ..ctxkit_engine::EngineSettings::default()
    };
    let mut harness = Harness::with(
        settings,
        Some(model(100_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    // A request of about 15,000 estimated tokens that the provider counts at 30,000: twice.
    teach_over_count(&harness, 30_000).await;
    harness.turn("second", 40_001).await;
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Threshold { tokens: 40_001 });
    harness.drain();
    let started = harness.engine.background_summaries_started();

    // The first request after the compaction counts 30,000 (about 15,000 estimated): the next
    // compaction waits for 55,000, and the background summary for 80% of it, 44,000.
    harness.turn("third", 30_000).await;
    harness.turn("fourth", 36_000).await;
    assert_eq!(
        harness.engine.background_summaries_started(),
        started,
        "36,000 is past 80% of the planned 40,000, not of the spaced 55,000"
    );
    harness.turn("fifth", 45_000).await;
    assert_eq!(harness.engine.background_summaries_started(), started + 1);
}

/// With `thresholdTokens` the planned reserve is the window less the threshold; overflow recovery
/// used it to size the summary's room and the reply's, and once the provider counted three times
/// the estimate no plan fit: the request was refused instead of compacted and retried (a real
/// Claude Code session, docs/simulator.md, twenty-sixth round). Recovery sizes both by the
/// window's own reserve.
#[tokio::test]
async fn an_overflow_recovers_under_a_threshold_when_the_provider_counts_far_more() {
    let mut harness = threshold_harness(40_000);
    // About 15,000 estimated tokens, counted at 52,500: three and a half times.
    teach_over_count(&harness, 52_500).await;
    harness.engine.append(user("go on")).await.unwrap();
    harness
        .engine
        .append(error_reply("prompt is too long"))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    assert!(report.retry, "{report:?}");
    let events = harness.drain();
    assert!(end(&events).error.is_none(), "{events:?}");
    assert_eq!(harness.compactions().await, 1);
}

/// `/context` names the size the checks compact past (QA: it said window − reserve, 14,336 for a
/// 16k window whose checks compact past 13,312, the reply's output room being larger).
#[tokio::test]
async fn the_threshold_named_is_the_one_the_checks_compact_past() {
    for (window, reserve) in [(16_384, 2_048), (200_000, 16_384)] {
        let harness = Harness::new(window, reserve, []);
        let threshold = harness.engine.threshold_tokens().await.unwrap();
        assert!(
            threshold < window - reserve || reserve >= 16_384,
            "{window}: {threshold}"
        );
        harness.turn("first", 1_000).await;
        harness.turn("at the threshold", threshold).await;
        let report = harness.engine.after_run().await.unwrap();
        assert_eq!(
            report.decision,
            Decision::Skip(SkipReason::UnderThreshold),
            "{window}"
        );
        harness.turn("past it", threshold + 1).await;
        let report = harness.engine.after_run().await.unwrap();
        assert_eq!(
            report.decision,
            Decision::Threshold {
                tokens: threshold + 1
            },
            "{window}"
        );
    }
}

/// QA (verifier): one large prompt (two 44 KB files) in a 32k window, then short turns: the keep
/// budget reached back to that prompt, so nothing was left to summarize, and from 90% of the
/// window every prompt was refused. The room a reply needs is made by keeping less.
#[tokio::test]
async fn room_is_made_when_one_large_message_fills_the_keep_budget() {
    let mut settings = settings(4_000);
    settings.compaction.keep_recent_tokens = 8_000;
    let mut harness = Harness::with(
        settings,
        Some(model(32_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    harness.turn("first", 500).await;
    let files = format!(
        "read these\n{}",
        "the file's line of text 0123\n".repeat(3_000)
    );
    harness.turn(&files, 22_000).await;
    // A first compaction summarizes the turn before the large prompt.
    let first = harness.engine.make_output_room(25_000).await.unwrap();
    assert!(first.compaction.is_some(), "{first:?}");
    harness.drain();
    for index in 0..6 {
        harness
            .turn(
                &format!("a short question {index} {}", "word ".repeat(100)),
                22_500,
            )
            .await;
    }
    // The plan keeping 8,000 tokens keeps from the large prompt: nothing to summarize.
    let report = harness.engine.make_output_room(29_500).await.unwrap();
    assert!(report.compaction.is_some(), "{report:?}");
    let events = harness.drain();
    assert!(end(&events).entry_id.is_some(), "{events:?}");
    // The large prompt went into the summary: the context left is a fraction of the window.
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert!(status.tokens < 16_000, "{status:?}");
}
