//! Cache-prefix summaries: the engine continues the request the agent recorded, with the messages
//! appended since; a request the branch has left, or none, gives the fresh prompt and a reason.

use std::sync::atomic::Ordering;

use ctxkit_engine::{EngineSettings, HookSet, NavigateOptions};
use ctxkit_summarizer::ConversationPrefix;
use serde_json::Value;

use crate::support::*;

fn cache_prefix_settings(on: bool) -> EngineSettings {
    let mut settings = settings(2_000);
    settings.compaction.cache_prefix = on;
    settings
}

fn harness(on: bool) -> Harness {
    let harness = Harness::with(
        cache_prefix_settings(on),
        Some(model(100_000)),
        HookSet::new(),
        [],
    );
    harness.summarizer.continues.store(true, Ordering::SeqCst);
    harness
}

/// Records the request the agent would send now.
async fn record(harness: &Harness) -> Vec<ctxkit_protocol::AgentMessage> {
    record_by(harness, Recording::Moved).await
}

/// How a request is handed to the engine.
#[derive(Clone, Copy)]
enum Recording {
    /// `record_model_request`, as the agent does.
    Moved,
    /// `record_model_request_copied`, as the simulator does.
    Lent,
}

async fn record_by(harness: &Harness, recording: Recording) -> Vec<ctxkit_protocol::AgentMessage> {
    let view = harness.engine.model_view().await.unwrap();
    let prefix = ConversationPrefix {
        provider: PROVIDER.into(),
        model: MODEL.into(),
        system_prompt: "You are a coding agent.".into(),
        request_messages: 0,
        messages: view.messages.clone(),
        tools: Vec::new(),
        reasoning: None,
        cache: ctxkit_summarizer::CacheHints::default(),
    };
    match recording {
        Recording::Moved => harness.engine.record_model_request(prefix).await,
        Recording::Lent => harness.engine.record_model_request_copied(&prefix).await,
    }
    view.messages
}

/// The continued request of a compaction after three turns, the last one recorded `recording`.
async fn continued_after_three_turns(recording: Recording) -> ConversationPrefix {
    let harness = harness(true);
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    harness.engine.append(user("third")).await.unwrap();
    record_by(&harness, recording).await;
    harness
        .engine
        .append(reply("answer three", 300))
        .await
        .unwrap();
    harness.engine.compact(None).await.unwrap();
    harness.summarizer.continued.lock().unwrap()[0].clone()
}

#[tokio::test]
async fn a_request_lent_to_the_engine_is_continued_as_one_handed_over() {
    // The two runs differ only in their messages' times.
    let untimed = |prefix: ConversationPrefix| {
        let messages: Vec<Value> = prefix
            .messages
            .iter()
            .map(|message| {
                let mut value = serde_json::to_value(message).unwrap();
                value.as_object_mut().unwrap().remove("timestamp");
                value
            })
            .collect();
        (prefix.request_messages, prefix.system_prompt, messages)
    };
    let lent = untimed(continued_after_three_turns(Recording::Lent).await);
    assert_eq!(
        lent,
        untimed(continued_after_three_turns(Recording::Moved).await)
    );
    assert_eq!((lent.0, lent.2.len()), (5, 6));
}

async fn details(harness: &Harness) -> Value {
    harness
        .engine
        .with_session(|session| {
            let raw = session.leaf_entry().unwrap().raw().unwrap();
            serde_json::from_str::<Value>(&raw).unwrap()["details"].clone()
        })
        .await
}

#[tokio::test]
async fn the_recorded_request_is_continued_with_what_came_after_it() {
    let harness = harness(true);
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    harness.engine.append(user("third")).await.unwrap();
    let sent = record(&harness).await;
    harness
        .engine
        .append(reply("answer three", 300))
        .await
        .unwrap();
    harness.engine.compact(None).await.unwrap();
    let prefix = harness.summarizer.continued.lock().unwrap()[0].clone();
    assert_eq!(prefix.request_messages, sent.len());
    assert_eq!(prefix.messages[..sent.len()], sent[..]);
    assert_eq!(prefix.messages.len(), sent.len() + 1);
    let tail = serde_json::to_string(&prefix.messages[sent.len()]).unwrap();
    assert!(tail.contains("answer three"), "{tail}");
    assert_eq!(details(&harness).await["cachePrefix"]["used"], true);
}

#[tokio::test]
async fn a_request_the_branch_left_is_not_continued() {
    let harness = harness(true);
    let (first_user, _) = harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    record(&harness).await;
    harness
        .engine
        .navigate(&first_user, NavigateOptions::default())
        .await
        .unwrap();
    harness.turn("another way", 150).await;
    harness.turn("and on", 160).await;
    harness.engine.compact(None).await.unwrap();
    assert!(harness.summarizer.continued.lock().unwrap().is_empty());
    let reason = details(&harness).await["cachePrefix"]["reason"].clone();
    assert!(
        reason.as_str().unwrap().contains("another branch"),
        "{reason}"
    );
}

#[tokio::test]
async fn with_the_setting_off_nothing_is_recorded_or_said() {
    let harness = harness(false);
    harness.turn("first", 100).await;
    harness.turn("second", 200).await;
    record(&harness).await;
    harness.engine.compact(None).await.unwrap();
    assert!(harness.summarizer.continued.lock().unwrap().is_empty());
    assert!(details(&harness).await.get("cachePrefix").is_none());
}

/// After the provider refused the recorded request as too long, the summary is not asked for by
/// continuing it (that request plus an instruction would be refused too, however far under the
/// window ctxkit's estimate of it is): the fresh prompt goes out at once, and the compaction says
/// why.
#[tokio::test]
async fn a_request_that_overflowed_is_not_continued() {
    let harness = harness(true);
    harness.turn("first", 1_000).await;
    harness.turn("second", 2_000).await;
    harness.engine.append(user("third")).await.unwrap();
    record(&harness).await;
    harness
        .engine
        .append(error_reply(
            "prompt is too long: 131000 tokens > 100000 maximum",
        ))
        .await
        .unwrap();
    let report = harness.engine.after_run().await.unwrap();
    assert_eq!(report.decision, ctxkit_engine::Decision::Overflow);
    assert!(harness.summarizer.continued.lock().unwrap().is_empty());
    let details = details(&harness).await;
    assert_eq!(details["cachePrefix"]["used"], false);
    let reason = details["cachePrefix"]["reason"].clone();
    assert!(reason.as_str().unwrap().contains("overflowed"), "{reason}");
}
