//! A summary a model writes is kept without the credentials it shows by their shape, on every path
//! a summary is written through: a compaction (manual, at the threshold from the background
//! summary), a branch summary, an on-demand compaction's readable summary and a provider-side
//! compaction's entry. Before, each was stored as the model wrote it, and sent again with every
//! later request, exported and shared.

use ctxkit_engine::{Decision, EngineSettings, HookSet, NavigateOptions};
use ctxkit_protocol::AgentMessage;
use ctxkit_settings::SummaryProvider;
use serde_json::json;

use crate::support::*;

/// A Stripe key, as a model might copy it from a `.env` it read.
const KEY: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const WRITTEN: &str = "## Goal\n- charge with STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc";

/// Every summary the session holds, as stored, and that none holds the key.
async fn assert_no_summary_holds_the_key(harness: &Harness, expected_summaries: usize) {
    let stored = harness
        .engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .filter(|entry| matches!(entry.type_name(), "compaction" | "branch_summary"))
                .map(|entry| entry.raw().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .await;
    assert_eq!(stored.len(), expected_summaries, "{stored:?}");
    for line in &stored {
        assert!(!line.contains(KEY), "the key was kept: {line}");
        assert!(line.contains("STRIPE_KEY=<redacted>"), "{line}");
    }
    let view = serde_json::to_string(&harness.engine.model_view().await.unwrap().messages).unwrap();
    assert!(!view.contains(KEY), "the key is sent again: {view}");
}

#[tokio::test]
async fn a_manual_compaction_keeps_no_key_the_model_wrote() {
    let harness = Harness::new(
        100_000,
        2_000,
        [Answer::Text(WRITTEN), Answer::Text(WRITTEN)],
    );
    harness.turn("first", 3_000).await;
    harness.turn("second", 3_000).await;
    harness.engine.compact(None).await.unwrap();
    assert!(harness.summarizer.request_count() >= 1);
    assert_no_summary_holds_the_key(&harness, 1).await;
}

#[tokio::test]
async fn the_background_summary_keeps_no_key_the_model_wrote() {
    let mut settings = settings(20_000);
    settings.compaction.background = true;
    settings.compaction.background_percent = 75;
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        Default::default(),
        [Answer::Text(WRITTEN), Answer::Text(WRITTEN)],
    );
    harness.turn("first", 1_000).await;
    harness.turn("second", 76_000).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while harness.summarizer.request_count() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    harness.engine.after_run().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    harness.turn("third", 85_000).await;
    let report = harness.engine.after_run().await.unwrap();
    assert!(matches!(report.decision, Decision::Threshold { .. }));
    assert!(report.compaction.as_ref().unwrap().from_background);
    assert_no_summary_holds_the_key(&harness, 1).await;
}

#[tokio::test]
async fn a_branch_summary_keeps_no_key_the_model_wrote() {
    let harness = Harness::new(100_000, 2_000, [Answer::Text(WRITTEN)]);
    let (_, target) = harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let options = NavigateOptions {
        summarize: true,
        ..NavigateOptions::default()
    };
    let outcome = harness.engine.navigate(&target, options).await.unwrap();
    assert!(outcome.summary_entry_id.is_some());
    assert_no_summary_holds_the_key(&harness, 1).await;
}

#[tokio::test]
async fn an_on_demand_summary_keeps_no_key_in_its_readable_text() {
    let mut settings: EngineSettings = settings(2_000);
    settings.compaction.provider = SummaryProvider::OnDemand;
    let harness = Harness::with(settings, Some(model(100_000)), HookSet::new(), []);
    *harness.summarizer.on_demand.lock().unwrap() = Some(Ok(WRITTEN));
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    let view = harness.engine.model_view().await.unwrap();
    harness
        .engine
        .record_model_request(ctxkit_summarizer::ConversationPrefix {
            provider: PROVIDER.into(),
            model: MODEL.into(),
            system_prompt: "You are a coding agent.".into(),
            request_messages: 0,
            messages: view.messages,
            tools: Vec::new(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        })
        .await;
    harness.engine.compact(None).await.unwrap();
    let summary = harness
        .engine
        .with_session(|session| {
            let raw = session.leaf_entry().unwrap().raw().unwrap();
            serde_json::from_str::<serde_json::Value>(&raw).unwrap()["summary"].clone()
        })
        .await;
    let summary = summary.as_str().unwrap();
    assert!(
        summary.starts_with("## Goal\n- charge with STRIPE_KEY=<redacted>"),
        "{summary}"
    );
}

#[tokio::test]
async fn a_provider_compaction_entry_keeps_no_key_in_its_summary() {
    let harness = Harness::new(200_000, 16_384, []);
    let engine = &harness.engine;
    engine.append(user("charge the card")).await.unwrap();
    let mut reply: ctxkit_protocol::AssistantMessage = serde_json::from_value(json!({
        "role": "assistant", "content": [{"type": "text", "text": "Done."}],
        "provider": PROVIDER, "model": MODEL, "api": "anthropic-messages", "stopReason": "stop",
        "usage": {"input": 900, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 930},
        "timestamp": now_ms(),
    }))
    .unwrap();
    reply.set_provider_compaction(json!({"type": "compaction", "content": WRITTEN}));
    engine.append(AgentMessage::Assistant(reply)).await.unwrap();
    let summary = engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .find_map(|entry| entry.parse().ok()?.kind.as_compaction().cloned())
        })
        .await
        .unwrap()
        .summary;
    assert_eq!(summary, "## Goal\n- charge with STRIPE_KEY=<redacted>");
}
