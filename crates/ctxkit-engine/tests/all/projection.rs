//! The next request is measured as it will be sent: after a tool batch the context transforms cut
//! the previous result to a marker, and every decision that weighs the next request (the threshold
//! check, the status line) subtracts that cut from the provider's count of the last request. QA
//! r101: the reference's projection (the last usage plus the messages after it) kept the previous
//! result whole, so a run compacted, or with compaction off stopped, one tool result early.

use ctxkit_engine::{Decision, EngineSettings, SkipReason};
use ctxkit_protocol::AgentMessage;
use serde_json::json;

use crate::support::*;

/// The system prompt and tools every request carries, as the provider counts them.
const OVERHEAD: u64 = 1_000;

fn call(id: &str, counted: u64) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": format!("cat {id}.log")}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": counted, "output": if counted == 0 { 0 } else { 20 }, "cacheRead": 0, "cacheWrite": 0, "totalTokens": if counted == 0 { 0 } else { counted + 20 }},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

/// A 35 KB log (about 8,750 tokens), unique per call.
fn log(id: &str) -> AgentMessage {
    let text: String = (0..800)
        .map(|line| format!("{id} line {line:04} worker processed batch ok status=fine\n"))
        .collect::<String>()
        .chars()
        .take(35_000)
        .collect();
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": text}], "isError": false,
        "timestamp": now_ms(),
    }))
    .unwrap()
}

/// What a provider counting ctxkit's estimate would count of the view the engine builds now.
async fn request_size(harness: &Harness) -> u64 {
    let view = harness.engine.model_view().await.unwrap();
    OVERHEAD
        + view
            .messages
            .iter()
            .map(ctxkit_tokens::estimate_tokens)
            .sum::<u64>()
}

/// One model call answered with a tool call the provider counted at the request's size, its
/// result appended: the size of the request sent.
async fn tool_call(harness: &Harness, id: &str) -> u64 {
    let sent = request_size(harness).await;
    let view = harness.engine.model_view().await.unwrap();
    harness
        .engine
        .record_model_request(ctxkit_summarizer::ConversationPrefix {
            provider: PROVIDER.into(),
            model: MODEL.into(),
            system_prompt: "x".repeat(4 * OVERHEAD as usize),
            request_messages: 0,
            messages: view.messages,
            tools: Vec::new(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        })
        .await;
    harness.engine.append(call(id, sent)).await.unwrap();
    harness.engine.append(log(id)).await.unwrap();
    sent
}

/// The recommended strategy (empty settings), with `thresholdTokens` at `threshold`.
fn harness(threshold: u64) -> Harness {
    let mut settings = EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!({})));
    settings.compaction.threshold_tokens = threshold;
    Harness::with(
        settings,
        Some(model(200_000)),
        ctxkit_engine::HookSet::new(),
        [],
    )
}

#[tokio::test]
async fn the_check_after_a_tool_batch_measures_the_request_the_transforms_make() {
    // Five calls first: their requests as the provider counted them.
    let mut harness = harness(1_000_000);
    harness
        .engine
        .append(user("Task 1: inspect"))
        .await
        .unwrap();
    let mut sent = Vec::new();
    for index in 0..5 {
        sent.push(tool_call(&harness, &format!("call_{index}")).await);
        assert_eq!(
            harness.engine.after_tool_batch().await.unwrap().decision,
            Decision::Skip(SkipReason::UnderThreshold)
        );
    }
    // The earlier results are pruned: each request grows by far less than a result.
    let growth = sent[4] - sent[3];
    assert!(growth < 2_000, "{sent:?}");
    let next = request_size(&harness).await;
    // The status line shows the next request, not the last one plus a whole result.
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert!(!status.estimated, "{status:?}");
    assert!(status.tokens.abs_diff(next) < 100, "{status:?} next {next}");
    // A threshold between the next request and the reference's projection (the last request
    // plus the reply and the new result whole) does not compact: the request fits it.
    let reference = sent[4] + 20 + 8_750;
    assert!(
        next + 5_000 < reference,
        "next {next}, reference {reference}"
    );
    harness
        .engine
        .set_settings({
            let mut settings = harness.engine.settings().await;
            settings.compaction.threshold_tokens = next + 2_000;
            settings
        })
        .await;
    let report = harness.engine.after_tool_batch().await.unwrap();
    assert_eq!(report.decision, Decision::Skip(SkipReason::UnderThreshold));
    assert_eq!(harness.compactions().await, 0);
    // Under a threshold the next request passes, it compacts, at the projected size.
    harness
        .engine
        .set_settings({
            let mut settings = harness.engine.settings().await;
            settings.compaction.threshold_tokens = next - 2_000;
            settings
        })
        .await;
    let report = harness.engine.after_tool_batch().await.unwrap();
    let Decision::Threshold { tokens } = report.decision else {
        panic!("{report:?}");
    };
    assert!(tokens.abs_diff(next) < 100, "{tokens} next {next}");
    let started = harness
        .drain()
        .iter()
        .filter(|event| matches!(event, ctxkit_engine::EngineEvent::CompactionStart { .. }))
        .count();
    assert_eq!(started, 1);
}

#[tokio::test]
async fn without_a_recorded_request_the_reference_s_projection_stands() {
    let harness = harness(1_000_000);
    harness
        .engine
        .append(user("Task 1: inspect"))
        .await
        .unwrap();
    // Replies appended without their requests recorded (a session opened from a file, a client
    // whose requests ctxkit never sees): the last usage plus what came after it.
    harness.engine.append(call("call_0", 5_000)).await.unwrap();
    harness.engine.append(log("call_0")).await.unwrap();
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert_eq!(status.tokens, 5_000 + 20 + 8_750, "{status:?}");
    assert_eq!(
        harness.engine.projected_input_tokens(&[]).await.unwrap(),
        None
    );
}

/// With no reply's count to go by, the status line's estimate is of the view: the results the prune
/// layer cuts count as their markers (QA r101: after a compaction that kept a long span, it
/// counted every kept result whole, 127,265 tokens before a 19k request).
#[tokio::test]
async fn the_estimated_status_counts_pruned_results_as_their_markers() {
    let harness = harness(1_000_000);
    harness
        .engine
        .append(user("Task 1: inspect"))
        .await
        .unwrap();
    for index in 0..5 {
        let id = format!("call_{index}");
        // Replies without usage: nothing counted.
        harness.engine.append(call(&id, 0)).await.unwrap();
        harness.engine.append(log(&id)).await.unwrap();
    }
    let status = harness.engine.context_status().await.unwrap().unwrap();
    assert!(status.estimated, "{status:?}");
    let next = request_size(&harness).await - OVERHEAD;
    assert!(status.tokens.abs_diff(next) < 100, "{status:?} next {next}");
    assert!(status.tokens < 2 * 8_750, "{status:?}");
}
