//! Forgetting a span: tool calls and their results go together, either order of the ends, what is
//! carried after it (with the copies' ids), and pins keeping their ids through it and through an
//! undone compaction.

use ctxkit_engine::{EngineError, NavigateOptions, Recalled};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use serde_json::json;

use crate::support::*;

fn view_text(view: &ctxkit_engine::ModelView) -> String {
    serde_json::to_string(&view.messages).unwrap()
}

fn calling(call_id: &str) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [
            {"type": "text", "text": "reading it"},
            {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "config.toml"}},
        ],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

fn result(call_id: &str, text: &str) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": call_id, "toolName": "read",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": now_ms(),
    }))
    .unwrap()
}

/// The tester's session: a prompt, a reply reading a secret, its result, and a closing reply.
fn secret_read() -> (Session, String, String) {
    let mut session = Session::in_memory("/p");
    session.append_message(user("show me the config")).unwrap();
    let call = session.append_message(calling("c1")).unwrap();
    let answer = session
        .append_message(result("c1", "password = \"hunter2\""))
        .unwrap();
    session.append_message(reply("done", 100)).unwrap();
    (session, call, answer)
}

async fn assert_nothing_of_the_secret_left(harness: &Harness) {
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(!text.contains("hunter2") && !text.contains("c1"), "{text}");
    assert!(text.contains("done"), "{text}");
    assert_eq!(harness.engine.fetch_pruned("c1").await.unwrap(), None);
    assert!(matches!(
        harness.engine.recall("c1", None).await,
        Recalled::Missing(_)
    ));
    let orphans = harness
        .engine
        .with_session(|session| session.orphaned_tool_results().unwrap())
        .await;
    assert!(orphans.is_empty(), "{orphans:?}");
}

/// A tester forgot a reply that had read a secret: its result was appended again without its
/// call, so `recall` still read the secret back and Pi 1.6 sent the orphan (providers reject it).
#[tokio::test]
async fn a_forgotten_reply_takes_its_tool_results_with_it() {
    let (session, call, answer) = secret_read();
    let harness = Harness::with_session(session);
    let outcome = harness
        .engine
        .forget(&call, Some(&call), Some("a config read".to_owned()))
        .await
        .unwrap();
    assert_eq!(outcome.results_left_out, vec![answer]);
    assert_eq!(outcome.reappended, 1, "only the closing reply comes back");
    assert_nothing_of_the_secret_left(&harness).await;
}

/// Forgetting a result alone would leave its call without an answer.
#[tokio::test]
async fn a_forgotten_tool_result_takes_the_reply_that_called_it() {
    let (session, call, answer) = secret_read();
    let harness = Harness::with_session(session);
    let outcome = harness
        .engine
        .forget(&answer, Some(&answer), Some("a config read".to_owned()))
        .await
        .unwrap();
    assert_eq!((outcome.from_id, outcome.to_id), (call, answer));
    assert!(outcome.results_left_out.is_empty());
    assert_nothing_of_the_secret_left(&harness).await;
}

/// A tester's `forget {from_id: <4th>, to_id: <2nd>}` was refused as "not on the current branch".
#[tokio::test]
async fn the_ends_of_a_span_may_come_in_either_order() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("keep this", 100).await;
    let (detour, _) = harness.turn("a DETOUR", 100).await;
    let (_, detour_end) = harness.turn("more DETOUR", 100).await;
    harness.turn("after the detour", 100).await;
    let outcome = harness
        .engine
        .forget(&detour_end, Some(&detour), Some("gone".to_owned()))
        .await
        .unwrap();
    assert_eq!((outcome.from_id, outcome.to_id), (detour, detour_end));
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(
        !text.contains("DETOUR") && text.contains("after the detour"),
        "{text}"
    );
    assert!(matches!(
        harness
            .engine
            .forget("nope", Some("x"), None)
            .await
            .unwrap_err(),
        EngineError::NotOnBranch(_)
    ));
}

/// A tester's `pin.remove` with the id `pin.add` returned failed after a forget, and the model's
/// `<pinned id>` named a pin that no longer existed; ids held from before the forget could not be
/// followed either (an undo returns its copies' ids, a forget did not).
#[tokio::test]
async fn a_pin_keeps_its_id_through_a_forget_which_returns_its_copies() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("keep this", 100).await;
    let (detour, detour_end) = harness.turn("a detour", 100).await;
    let (later, later_reply) = harness.turn("after the detour", 100).await;
    let pin = harness.engine.pin_text("always use tabs").await.unwrap();
    let outcome = harness
        .engine
        .forget(&detour, Some(&detour_end), Some("gone".to_owned()))
        .await
        .unwrap();
    let originals: Vec<&str> = outcome
        .carried
        .iter()
        .map(|entry| entry.original_id.as_str())
        .collect();
    assert_eq!(
        &originals[..3],
        [later.as_str(), later_reply.as_str(), pin.id.as_str()]
    );
    assert_eq!(outcome.carried.len(), outcome.reappended);
    assert_eq!(
        outcome.carried.last().map(|entry| entry.copy_id.as_str()),
        outcome.new_leaf_id.as_deref()
    );
    assert_eq!(harness.engine.pins().await, vec![pin.clone()]);
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(
        text.contains(&format!("<pinned id=\\\"{}\\\">", pin.id)),
        "{text}"
    );
    // A second forget, of the first turn, copies the copies: the pin still has its first id.
    let first = harness
        .engine
        .with_session(|session| session.branch_path(None)[0].id().to_owned())
        .await;
    harness
        .engine
        .forget(&first, Some(&first), Some("x".to_owned()))
        .await
        .unwrap();
    assert_eq!(harness.engine.pins().await, vec![pin.clone()]);
    harness.engine.unpin(&pin.id).await.unwrap();
    assert!(harness.engine.pins().await.is_empty());
}

#[tokio::test]
async fn a_pin_keeps_its_id_through_an_undone_compaction() {
    let harness = Harness::new(100_000, 2_000, []);
    for round in 0..4 {
        harness.turn(&format!("turn {round}"), 100).await;
    }
    harness.engine.compact(None).await.unwrap();
    let pin = harness
        .engine
        .pin_text("added after the compaction")
        .await
        .unwrap();
    harness.engine.undo_compaction().await.unwrap().unwrap();
    assert_eq!(harness.engine.pins().await, vec![pin.clone()]);
    harness.engine.unpin(&pin.id).await.unwrap();
    assert!(harness.engine.pins().await.is_empty());
}

/// A tester's `forget` of a span before a branch summary left the summary out of what came back:
/// it stayed in the file, on the old branch, and the model no longer saw what the abandoned branch
/// had found. A summary after the span is on the current branch, and comes back with the rest.
#[tokio::test]
async fn a_branch_summary_after_the_span_comes_back_with_it() {
    let harness = Harness::new(100_000, 2_000, [Answer::Text("the EXPLORATION found x")]);
    harness.turn("keep this", 100).await;
    let (detour, detour_end) = harness.turn("a DETOUR", 100).await;
    harness.turn("an abandoned exploration", 100).await;
    let options = NavigateOptions {
        summarize: true,
        keep_target: true,
        ..NavigateOptions::default()
    };
    let navigated = harness.engine.navigate(&detour_end, options).await.unwrap();
    let summary = navigated.summary_entry_id.expect("a branch summary");
    harness.turn("after the detour", 100).await;
    let outcome = harness
        .engine
        .forget(&detour, Some(&detour_end), Some("gone".to_owned()))
        .await
        .unwrap();
    assert!(
        outcome
            .carried
            .iter()
            .any(|entry| entry.original_id == summary),
        "{:?}",
        outcome.carried
    );
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(
        !text.contains("DETOUR")
            && text.contains("the EXPLORATION found x")
            && text.contains("after the detour"),
        "{text}"
    );
}
