//! A provider that states a limit below the configured window: recovery plans with the stated
//! limit, and what it reports names that limit.

use ctxkit_engine::{CompactionEnd, CompactionReason, Decision, EngineEvent, EngineSettings};
use ctxkit_protocol::AgentMessage;
use serde_json::json;

use crate::support::*;

const OVERFLOW_5000: &str = "400 {\"error\": {\"message\": \"This model's maximum context length is 5000 tokens. However, your messages resulted in 6308 tokens.\", \"type\": \"invalid_request_error\"}}";

fn calls(id: &str, total: u64) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": id, "name": "read", "arguments": {"path": id}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": total, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total + 20},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

fn result(id: &str, chars: usize) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": "line of a file\n".repeat(chars / 15)}], "isError": false,
        "timestamp": now_ms(),
    }))
    .unwrap()
}

/// Records the current view as the request sent (a system prompt of about 1,000 tokens), as the
/// agent does before each reply is appended.
async fn sent(harness: &Harness) {
    let view = harness.engine.model_view().await.unwrap();
    harness
        .engine
        .record_model_request(ctxkit_summarizer::ConversationPrefix {
            provider: PROVIDER.into(),
            model: MODEL.into(),
            system_prompt: "You are a coding agent. ".repeat(170),
            request_messages: 0,
            messages: view.messages,
            tools: Vec::new(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        })
        .await;
}

fn compaction_end(events: &[EngineEvent]) -> CompactionEnd {
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

/// One prompt, four tool calls of 2,000 to 2,800 tokens each in a 16,000 window; the fifth request
/// is refused by a provider stating 5,000. The repro of the chat's round-97 report: recovery
/// planned its summary's room in the configured window (a quarter of 16,000), found no plan under
/// the 5,000 and gave up, naming 16,000.
#[tokio::test]
async fn a_stated_limit_below_the_window_is_recovered_by_a_split_turn_within_it() {
    let mut harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    harness
        .engine
        .append(user("Explore the project and fix main"))
        .await
        .unwrap();
    let sizes = [
        ("config", 11_000, 1_250),
        ("mod1", 9_000, 4_300),
        ("mod2", 9_000, 3_850),
        ("wc", 200, 3_950),
    ];
    for (id, chars, counted) in sizes {
        sent(&harness).await;
        harness.engine.append(calls(id, counted)).await.unwrap();
        harness.engine.append(result(id, chars)).await.unwrap();
    }
    sent(&harness).await;
    harness
        .engine
        .append(error_reply(OVERFLOW_5000))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    let events = harness.drain();
    let end = compaction_end(&events);
    assert_eq!(end.reason, CompactionReason::Overflow);
    assert!(end.error.is_none(), "{:?}", end.error);
    assert!(report.retry && end.will_retry, "{report:?}");
    // serve's `context_usage` (event and method) reads against the limit in force too.
    let usage = harness.engine.context_usage().await.unwrap().unwrap();
    assert_eq!(
        (usage.context_window, usage.configured_window),
        (5_000, 16_000)
    );
    assert_eq!(harness.compactions().await, 1);
    // A status line reads the context against the limit in force, the configured window beside it.
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!(
        (status.context_window, status.configured_window),
        (5_000, 16_000)
    );
    // The retried request (its messages, the 1,000-token system prompt, counted 15% over) fits
    // the stated 5,000 with room for the reply.
    let view = harness.engine.model_view().await.unwrap();
    let messages: u64 = view
        .messages
        .iter()
        .map(ctxkit_tokens::estimate_tokens)
        .sum();
    assert!((messages + 1_000) * 115 / 100 < 4_000, "{messages}");
    // The retry is refused too, the provider now stating 1,500: under the system prompt and a
    // summary's room, no compaction fits. The message names that limit and the compaction the
    // recovery did write.
    harness
        .engine
        .append(error_reply(
            &OVERFLOW_5000.replace("5000 tokens", "1500 tokens"),
        ))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry);
    let error = compaction_end(&harness.drain()).error.unwrap();
    assert!(
        error.contains("the provider's 1500-token limit (16000 configured)"),
        "{error}"
    );
    assert!(!error.contains("16000-token"), "{error}");
    assert!(
        error.ends_with("; the compaction this recovery wrote before stays in the session"),
        "{error}"
    );
    assert_eq!(harness.compactions().await, 1);
}

/// A provider stating a limit no compaction can fit under: recovery asks for no summary, and its
/// message names the stated limit and claims no compaction it did not write.
#[tokio::test]
async fn a_stated_limit_nothing_fits_under_is_named_and_nothing_is_claimed() {
    let mut harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    harness.engine.append(user("Explore")).await.unwrap();
    for (id, counted) in [("a", 1_250), ("b", 4_300)] {
        sent(&harness).await;
        harness.engine.append(calls(id, counted)).await.unwrap();
        harness.engine.append(result(id, 9_000)).await.unwrap();
    }
    sent(&harness).await;
    harness
        .engine
        .append(error_reply(
            &OVERFLOW_5000.replace("5000 tokens", "1200 tokens"),
        ))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry);
    let error = compaction_end(&harness.drain()).error.unwrap();
    assert!(
        error.contains("the provider's 1200-token limit (16000 configured)"),
        "{error}"
    );
    assert!(!error.contains("nothing older left"), "{error}");
    assert!(!error.contains("wrote"), "{error}");
    assert_eq!(harness.summarizer.request_count(), 0);
    assert_eq!(harness.compactions().await, 0);
}

/// The replies of the turn report little usage (a provider counting only part of the request):
/// the stated limit is planned with as it is, not capped by the largest request accepted (half
/// the target then, and no plan fitted under it).
#[tokio::test]
async fn a_stated_limit_is_not_capped_by_the_largest_request_accepted() {
    let mut harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    harness
        .engine
        .append(user("Read three files"))
        .await
        .unwrap();
    for id in ["a", "b", "c"] {
        sent(&harness).await;
        harness.engine.append(calls(id, 200)).await.unwrap();
        harness.engine.append(result(id, 9_000)).await.unwrap();
    }
    sent(&harness).await;
    harness
        .engine
        .append(error_reply(OVERFLOW_5000))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    let end = compaction_end(&harness.drain());
    assert!(end.error.is_none(), "{:?}", end.error);
    assert!(report.retry);
    assert_eq!(harness.compactions().await, 1);
}

/// QA (smaller finding): the provider counted 14000 against its stated 12000 for a turn ctxkit
/// estimates at about 3000 tokens, and the message said the turn "(about 3004 tokens) does not
/// fit the provider's 12000-token limit". It names the provider's count.
#[tokio::test]
async fn giving_up_names_what_the_provider_counted() {
    let mut harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    let prompt = format!("final prompt {}", "big ".repeat(3_000));
    harness.engine.append(user(&prompt)).await.unwrap();
    let refusal = OVERFLOW_5000
        .replace("5000 tokens", "12000 tokens")
        .replace("6308 tokens", "14000 tokens");
    harness.engine.append(error_reply(&refusal)).await.unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry);
    let error = compaction_end(&harness.drain()).error.unwrap();
    assert!(
        error.contains("the provider counted 14000 tokens for the request, over the provider's 12000-token limit"),
        "{error}"
    );
    assert!(!error.contains("turn alone"), "{error}");
}

/// QA r107 (defect 1): a Chinese chat in a 16,000 window. The provider counted the first request
/// at 2.8 times ctxkit's estimate; the second prompt (as long again) is refused with Anthropic's
/// `12024 + 4096 > 16000`: the input and the reply's room together, against a limit that is the
/// window. Recovery gave up ("even the smallest compaction would leave about 13313 tokens"): it
/// read the refusal as a limit below the window (aiming at the largest request accepted) and
/// scaled the summary's room by the over-count. A compaction keeping the second prompt fits.
#[tokio::test]
async fn a_chinese_prompt_refused_with_the_reply_room_is_recovered() {
    let mut harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    let clause = "第{}段：汇率转换逻辑需要仔细检查，不要修改公共接口。".repeat(220);
    harness
        .engine
        .append(user(&clause.replace("{}", "一")))
        .await
        .unwrap();
    sent(&harness).await;
    harness.engine.append(reply("收到。", 6_599)).await.unwrap();
    harness
        .engine
        .append(user(&clause.replace("{}", "二")))
        .await
        .unwrap();
    sent(&harness).await;
    let refusal = "400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 12024 + 4096 > 16000, decrease input length or `max_tokens` and try again\"}}";
    harness.engine.append(error_reply(refusal)).await.unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, Decision::Overflow);
    let end = compaction_end(&harness.drain());
    assert!(end.error.is_none(), "{:?}", end.error);
    assert!(report.retry && end.will_retry, "{report:?}");
    assert_eq!(harness.compactions().await, 1);
    // The limit stays the window: nothing below it was inferred.
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!(status.context_window, 16_000);
}

/// A 16,000-token window, a prompt and three tool calls reading 9,000 to 11,000 characters each:
/// the next request is refused and recovery compacts.
async fn three_reads_in_a_16k_window() -> Harness {
    let harness = Harness::with(
        EngineSettings::recommended(),
        Some(model(16_000)),
        ctxkit_engine::HookSet::new(),
        [],
    );
    harness
        .engine
        .append(user("Explore the project and fix main"))
        .await
        .unwrap();
    for (id, chars, counted) in [
        ("config", 11_000, 1_250),
        ("mod1", 9_000, 4_300),
        ("mod2", 9_000, 7_850),
    ] {
        sent(&harness).await;
        harness.engine.append(calls(id, counted)).await.unwrap();
        harness.engine.append(result(id, chars)).await.unwrap();
    }
    harness
}

/// QA (2026-12-07): a provider that counted every request at 9,500 tokens against its 8,000
/// limit, however much was compacted, drew five compactions from one prompt, four of them making
/// the context larger. After a compaction, a refusal counting no fewer tokens than the one before
/// stops the recovery: compacting does not shrink what the provider counts.
#[tokio::test]
async fn a_refusal_counting_as_much_after_a_compaction_stops_the_recovery() {
    let mut harness = three_reads_in_a_16k_window().await;
    let refusal = OVERFLOW_5000
        .replace("5000 tokens", "16000 tokens")
        .replace("6308 tokens", "17000 tokens");
    sent(&harness).await;
    harness.engine.append(error_reply(&refusal)).await.unwrap();
    let report = harness.engine.after_run().await.unwrap();
    let end = compaction_end(&harness.drain());
    assert!(end.error.is_none(), "{:?}", end.error);
    assert!(report.retry, "{report:?}");
    assert_eq!(harness.compactions().await, 1);
    // The retry, smaller by ctxkit's estimate, counted the same by the provider.
    sent(&harness).await;
    harness.engine.append(error_reply(&refusal)).await.unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry, "{report:?}");
    let error = compaction_end(&harness.drain()).error.unwrap();
    assert!(
        error.contains("counted the request at 17000 tokens, no fewer than the 17000"),
        "{error}"
    );
    assert!(
        error.contains("; the compaction this recovery wrote before stays in the session."),
        "{error}"
    );
    assert_eq!(harness.compactions().await, 1);
}

/// QA (2026-12-07, verification): a count that fell by 10 tokens a compaction, against an
/// overshoot of 1,500, drew five compactions. A fall of less than a quarter of what was needed
/// stops the recovery too; a real fall goes on (the other tests of this file).
#[tokio::test]
async fn a_refusal_counting_barely_fewer_after_a_compaction_stops_the_recovery() {
    let mut harness = three_reads_in_a_16k_window().await;
    let refusal = |count: &str| {
        OVERFLOW_5000
            .replace("5000 tokens", "16000 tokens")
            .replace("6308 tokens", &format!("{count} tokens"))
    };
    sent(&harness).await;
    harness
        .engine
        .append(error_reply(&refusal("17500")))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(report.retry, "{report:?}");
    harness.drain();
    sent(&harness).await;
    harness
        .engine
        .append(error_reply(&refusal("17490")))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert!(!report.retry, "{report:?}");
    let error = compaction_end(&harness.drain()).error.unwrap();
    assert!(
        error.contains("at 17490 tokens, only 10 fewer than the 17500 it refused before it where 1500 fewer were needed"),
        "{error}"
    );
    assert_eq!(harness.compactions().await, 1);
}
