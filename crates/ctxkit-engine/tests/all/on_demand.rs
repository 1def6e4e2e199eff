//! On-demand compaction in the engine: the span before the cut goes to the summarizer with the
//! recorded request's system prompt and tools; the entry keeps the block, the next view carries it on
//! the summary; a failure falls back to the offline summarizer; without a recorded request, or a
//! summarizer that cannot, the configured summarizer writes the summary and the entry says why.

use ctxkit_engine::{EngineSettings, HookSet};
use ctxkit_protocol::{AgentMessage, ON_DEMAND_COMPACTION_FIELD};
use ctxkit_settings::SummaryProvider;
use ctxkit_summarizer::ConversationPrefix;
use serde_json::Value;

use crate::support::*;

fn on_demand_settings() -> EngineSettings {
    let mut settings = settings(2_000);
    settings.compaction.provider = SummaryProvider::OnDemand;
    settings
}

fn harness(answer: Option<Result<&'static str, &'static str>>) -> Harness {
    let harness = Harness::with(
        on_demand_settings(),
        Some(model(100_000)),
        HookSet::new(),
        [],
    );
    *harness.summarizer.on_demand.lock().unwrap() = answer;
    harness
}

async fn record(harness: &Harness) {
    let view = harness.engine.model_view().await.unwrap();
    harness
        .engine
        .record_model_request(ConversationPrefix {
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
}

async fn leaf(harness: &Harness) -> Value {
    harness
        .engine
        .with_session(|session| {
            let raw = session.leaf_entry().unwrap().raw().unwrap();
            serde_json::from_str::<Value>(&raw).unwrap()
        })
        .await
}

#[tokio::test]
async fn the_span_before_the_cut_is_compacted_on_demand_and_its_block_rides_on_the_view() {
    let harness = harness(Some(Ok("ON DEMAND")));
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    record(&harness).await;
    harness.engine.compact(None).await.unwrap();
    let spans = harness.summarizer.on_demand_spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].system_prompt, "You are a coding agent.");
    // The keep budget of one token cuts at the last reply: the span is the split turn's beginning
    // and everything before it.
    let sent = serde_json::to_string(&spans[0].messages).unwrap();
    assert_eq!(spans[0].messages.len(), 3, "{sent}");
    assert!(
        matches!(&spans[0].messages[2], AgentMessage::User(_)),
        "{sent}"
    );
    assert!(sent.contains("first") && sent.contains("second"), "{sent}");
    assert_eq!(harness.summarizer.request_count(), 0, "no other summary");
    let entry = leaf(&harness).await;
    assert_eq!(entry["type"], "compaction");
    assert!(entry["summary"].as_str().unwrap().starts_with("ON DEMAND"));
    assert_eq!(entry["details"]["providerCompaction"]["mode"], "on-demand");
    // The view's summary carries the block for the request builders.
    let view = harness.engine.model_view().await.unwrap();
    let AgentMessage::User(summary) = &view.messages[0] else {
        panic!("{:?}", view.messages[0]);
    };
    let carried = &summary.extra[ON_DEMAND_COMPACTION_FIELD];
    assert_eq!(carried["block"]["content"], "ON DEMAND");
    assert_eq!(carried["model"], MODEL);
}

#[tokio::test]
async fn a_failed_request_falls_back_to_the_offline_summarizer() {
    let harness = harness(Some(Err("529 overloaded")));
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    record(&harness).await;
    let end = harness.engine.compact(None).await.unwrap();
    // The user is told, not only the log.
    let advice = end.advice.unwrap_or_default();
    assert!(
        advice.contains("On-demand compaction failed")
            && advice.contains("529 overloaded")
            && advice.contains("offline summarizer"),
        "{advice}"
    );
    let entry = leaf(&harness).await;
    assert_eq!(entry["details"]["summarizer"], "offline");
    assert_eq!(
        entry["details"]["onDemand"]["error"],
        "summarization failed: 529 overloaded"
    );
    assert_eq!(
        harness.summarizer.request_count(),
        0,
        "the configured one is not asked"
    );
}

#[tokio::test]
async fn without_a_recorded_request_or_a_capable_summarizer_the_configured_one_writes_it() {
    let harness = harness(Some(Ok("ON DEMAND")));
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    harness.engine.compact(None).await.unwrap();
    let reason = leaf(&harness).await["details"]["onDemand"]["reason"].clone();
    assert!(
        reason.as_str().unwrap().contains("no model request"),
        "{reason}"
    );
    assert!(harness.summarizer.request_count() >= 1);
    assert!(
        harness
            .summarizer
            .on_demand_spans
            .lock()
            .unwrap()
            .is_empty()
    );

    let harness = self::harness(None);
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    record(&harness).await;
    harness.engine.compact(None).await.unwrap();
    let reason = leaf(&harness).await["details"]["onDemand"]["reason"].clone();
    assert!(
        reason.as_str().unwrap().contains("cannot compact"),
        "{reason}"
    );
}
