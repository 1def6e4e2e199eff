//! Tree navigation with and without branch summaries, and forks.

use std::sync::Arc;

use ctxkit_engine::{
    BeforeFork, BeforeForkResult, BeforeTree, BeforeTreeResult, EngineError, EngineEvent,
    ForkPosition, HookFuture, HookSet, HookSummary, Hooks, NavigateOptions,
};
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// u1 → a1 → u2 → a2 → u3 → a3; returns the six ids.
async fn six(harness: &Harness) -> Vec<String> {
    let mut ids = Vec::new();
    for text in ["u1", "u2", "u3"] {
        let (user, reply) = harness.turn(text, 100).await;
        ids.push(user);
        ids.push(reply);
    }
    ids
}

async fn leaf(harness: &Harness) -> Option<String> {
    harness
        .engine
        .with_session(|session| session.leaf_id().map(str::to_owned))
        .await
}

#[tokio::test]
async fn navigating_to_a_user_message_puts_its_text_back() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    let count = harness.entry_types().await.len();
    let outcome = harness
        .engine
        .navigate(&ids[2], NavigateOptions::default())
        .await
        .unwrap();
    assert_eq!(outcome.editor_text.as_deref(), Some("u2"));
    assert_eq!(leaf(&harness).await.as_deref(), Some(ids[1].as_str()));
    let roles: Vec<String> = harness
        .engine
        .transcript()
        .await
        .unwrap()
        .iter()
        .map(|message| message.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(harness.entry_types().await.len(), count);
}

/// Found by a chat sweep: on a model of 8k tokens the default `branchSummary.reserveTokens`
/// (16,384) left no budget, and every branch summary said there was nothing to summarize.
#[tokio::test]
async fn a_small_window_still_gets_a_branch_summary() {
    let harness = Harness::new(8_000, 1_000, [Answer::Text("BRANCH")]);
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(
            &ids[2],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(outcome.summary_entry_id.is_some(), "{outcome:?}");
    let request = harness.summarizer.last_request();
    assert!(request.user_text.contains("u3"), "{}", request.user_text);
}

#[tokio::test]
async fn a_branch_summary_attaches_at_the_new_leaf() {
    let mut harness = Harness::new(100_000, 2_000, [Answer::Text("BRANCH")]);
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(
            &ids[2],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    let summary_id = outcome.summary_entry_id.unwrap();
    let (parent, children) = harness
        .engine
        .with_session(|session| {
            (
                session
                    .entry(&summary_id)
                    .unwrap()
                    .parent_id()
                    .map(str::to_owned),
                session.children(&ids[1]).len(),
            )
        })
        .await;
    assert_eq!(parent.as_deref(), Some(ids[1].as_str()));
    assert_eq!(children, 2);
    assert_eq!(leaf(&harness).await, Some(summary_id));
    let request = harness.summarizer.last_request();
    assert!(request.user_text.contains("u3"), "{}", request.user_text);
    assert!(!request.user_text.contains("u2"), "{}", request.user_text);
    let events = harness.drain();
    assert!(matches!(
        events.first(),
        Some(EngineEvent::BranchSummaryStart { .. })
    ));
    assert!(matches!(
        events.last(),
        Some(EngineEvent::BranchSummaryEnd { aborted: false, .. })
    ));
}

#[tokio::test]
async fn a_label_marks_the_summary_and_becomes_the_leaf() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(
            &ids[1],
            NavigateOptions {
                summarize: true,
                label: Some("L".to_owned()),
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    let summary_id = outcome.summary_entry_id.unwrap();
    let new_leaf = outcome.new_leaf_id.unwrap();
    assert_ne!(new_leaf, summary_id);
    let label = harness
        .engine
        .with_session(|session| session.label(&summary_id).map(str::to_owned))
        .await;
    assert_eq!(label.as_deref(), Some("L"));
    assert_eq!(leaf(&harness).await, Some(new_leaf));
}

#[tokio::test]
async fn moving_forward_has_nothing_to_summarize() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    harness
        .engine
        .navigate(&ids[1], NavigateOptions::default())
        .await
        .unwrap();
    let outcome = harness
        .engine
        .navigate(
            &ids[3],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.summary_entry_id, None);
    assert!(outcome.nothing_to_summarize);
    assert_eq!(leaf(&harness).await.as_deref(), Some(ids[3].as_str()));
    assert_eq!(harness.summarizer.request_count(), 0);
}

/// A tester's report: a branch left behind holding only a label got the summary "No content to
/// summarize" in the model's context (as Pi 1.6 writes it). Now the leaf moves with no summary
/// entry, and the outcome says there was nothing to summarize.
#[tokio::test]
async fn a_branch_without_messages_gets_no_summary() {
    let mut harness = Harness::new(100_000, 2_000, [Answer::Text("BRANCH")]);
    let ids = six(&harness).await;
    harness.engine.set_label(&ids[0], Some("hi")).await.unwrap();
    harness
        .engine
        .append_custom_entry("x.state", Some(serde_json::json!({"n": 1})))
        .await
        .unwrap();
    let before = harness.entry_types().await;
    let outcome = harness
        .engine
        .navigate(
            &ids[5],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.summary_entry_id, None);
    assert!(outcome.nothing_to_summarize);
    assert!(!outcome.cancelled);
    assert_eq!(leaf(&harness).await.as_deref(), Some(ids[5].as_str()));
    assert_eq!(harness.summarizer.request_count(), 0);
    assert_eq!(harness.entry_types().await, before, "nothing written");
    // Nothing was summarized, so no summary was announced: a tester's `branch --summarize` said
    // "Summarizing without a model" before "nothing to summarize".
    let events = harness.drain();
    assert!(
        !events.iter().any(|event| matches!(
            event,
            EngineEvent::BranchSummaryStart { .. } | EngineEvent::BranchSummaryEnd { .. }
        )),
        "{events:?}"
    );
}

struct TreeHook(BeforeTreeResult);

impl Hooks for TreeHook {
    fn name(&self) -> String {
        "tree".to_owned()
    }

    fn before_tree<'a>(
        &'a self,
        _event: &'a BeforeTree,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeTreeResult>> {
        let answer = self.0.clone();
        Box::pin(async move { Ok(Some(answer)) })
    }

    fn before_fork<'a>(
        &'a self,
        _event: &'a BeforeFork,
    ) -> HookFuture<'a, Option<BeforeForkResult>> {
        let cancel = self.0.cancel;
        Box::pin(async move {
            Ok(Some(BeforeForkResult {
                cancel,
                summary: None,
            }))
        })
    }
}

fn tree_hook(answer: BeforeTreeResult) -> Harness {
    let mut hooks = HookSet::new();
    hooks.push(Arc::new(TreeHook(answer)));
    Harness::with(settings(2_000), Some(model(100_000)), hooks, [])
}

#[tokio::test]
async fn a_hook_summary_is_used_only_when_a_summary_was_asked_for() {
    let answer = BeforeTreeResult {
        summary: Some(HookSummary {
            summary: "EXT".to_owned(),
            details: None,
        }),
        ..BeforeTreeResult::default()
    };
    let harness = tree_hook(answer.clone());
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(&ids[1], NavigateOptions::default())
        .await
        .unwrap();
    assert_eq!(outcome.summary_entry_id, None);
    let harness = tree_hook(answer);
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(
            &ids[1],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    let id = outcome.summary_entry_id.unwrap();
    let raw = harness
        .engine
        .with_session(|session| session.entry(&id).unwrap().raw().unwrap().to_string())
        .await;
    assert!(
        raw.contains("\"summary\":\"EXT\"") && raw.contains("\"fromHook\":true"),
        "{raw}"
    );
    assert_eq!(harness.summarizer.request_count(), 0);
}

#[tokio::test]
async fn hook_instructions_replace_the_prompt() {
    let harness = tree_hook(BeforeTreeResult {
        custom_instructions: Some("ONLY THIS".to_owned()),
        replace_instructions: Some(true),
        ..BeforeTreeResult::default()
    });
    let ids = six(&harness).await;
    harness
        .engine
        .navigate(
            &ids[1],
            NavigateOptions {
                summarize: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    let request = harness.summarizer.last_request();
    assert!(
        request.user_text.ends_with("ONLY THIS"),
        "{}",
        request.user_text
    );
    assert!(!request.user_text.contains("Additional focus"));
}

#[tokio::test]
async fn a_cancelling_tree_hook_changes_nothing() {
    let harness = tree_hook(BeforeTreeResult {
        cancel: true,
        ..BeforeTreeResult::default()
    });
    let ids = six(&harness).await;
    let before = leaf(&harness).await;
    let outcome = harness
        .engine
        .navigate(&ids[1], NavigateOptions::default())
        .await
        .unwrap();
    assert!(outcome.cancelled);
    assert_eq!(leaf(&harness).await, before);
    assert!(!harness.engine.is_compacting());
}

#[tokio::test]
async fn aborting_or_failing_a_branch_summary_changes_nothing() {
    let harness = Harness::new(100_000, 2_000, [Answer::Hang, Answer::Fail("E")]);
    let ids = six(&harness).await;
    let before = (leaf(&harness).await, harness.entry_types().await);
    let engine = harness.engine.clone();
    let target = ids[1].clone();
    let summarize = NavigateOptions {
        summarize: true,
        ..NavigateOptions::default()
    };
    let options = summarize.clone();
    let running = tokio::spawn(async move { engine.navigate(&target, options).await });
    harness.summarizer.started.notified().await;
    assert!(harness.engine.is_compacting());
    harness.engine.cancel_branch_summary();
    let outcome = running.await.unwrap().unwrap();
    assert!(outcome.cancelled && outcome.aborted);
    assert_eq!((leaf(&harness).await, harness.entry_types().await), before);
    let error = harness
        .engine
        .navigate(&ids[1], summarize)
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "Summarization failed: E");
    assert_eq!((leaf(&harness).await, harness.entry_types().await), before);
}

#[tokio::test]
async fn navigating_to_the_leaf_is_a_no_op_and_unknown_ids_are_errors() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .navigate(&ids[5], NavigateOptions::default())
        .await
        .unwrap();
    assert!(!outcome.cancelled);
    let error = harness
        .engine
        .navigate("nope", NavigateOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "Entry nope not found");
}

#[tokio::test]
async fn forking_before_a_user_message_keeps_the_path_and_the_parent_link() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    let old = harness
        .engine
        .with_session(|session| session.path().unwrap().to_path_buf())
        .await;
    let old_bytes = std::fs::read(&old).unwrap();
    let outcome = harness
        .engine
        .fork(&ids[2], ForkPosition::Before)
        .await
        .unwrap();
    assert_eq!(outcome.selected_text.as_deref(), Some("u2"));
    let new_file = outcome.session_file.unwrap();
    assert_ne!(new_file, old.display().to_string());
    let text = std::fs::read_to_string(&new_file).unwrap();
    assert!(
        text.contains(&old.display().to_string()),
        "parentSession names the old file"
    );
    assert_eq!(text.lines().count(), 3, "header + u1 + a1:\n{text}");
    assert_eq!(std::fs::read(&old).unwrap(), old_bytes);
}

#[tokio::test]
async fn forking_before_an_assistant_entry_is_invalid_but_cloning_at_it_works() {
    let harness = Harness::new(100_000, 2_000, []);
    let ids = six(&harness).await;
    let error = harness
        .engine
        .fork(&ids[1], ForkPosition::Before)
        .await
        .unwrap_err();
    assert!(matches!(error, EngineError::InvalidForkEntry));
    let outcome = harness
        .engine
        .fork(&ids[3], ForkPosition::At)
        .await
        .unwrap();
    assert!(!outcome.cancelled && outcome.selected_text.is_none());
    assert_eq!(harness.engine.transcript().await.unwrap().len(), 4);
}

#[tokio::test]
async fn a_cancelling_fork_hook_changes_nothing() {
    let harness = tree_hook(BeforeTreeResult {
        cancel: true,
        ..BeforeTreeResult::default()
    });
    let ids = six(&harness).await;
    let outcome = harness
        .engine
        .fork(&ids[2], ForkPosition::Before)
        .await
        .unwrap();
    assert!(outcome.cancelled && outcome.selected_text.is_none());
    assert_eq!(harness.engine.transcript().await.unwrap().len(), 6);
}

#[tokio::test]
async fn cloning_an_empty_session_is_an_error() {
    let harness = Harness::new(100_000, 2_000, []);
    let error = harness.engine.clone_session().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Cannot clone session: no current entry selected"
    );
}
