//! The offline summarizer on the shipped demo session: format, budget, and the span's paths kept
//! against the verbatim tail of the same length.

use std::path::Path;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, Prompts, compact, prepare_compaction, serialize_messages,
};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::{OFFLINE_NOTICE, OfflineSummarizer};
use tokio_util::sync::CancellationToken;

fn demo() -> Session {
    Session::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl"))
        .unwrap()
}

/// The distinct path-like words of `text` (a `/` and a `.` after it).
fn paths(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "`'\",;()[]{}<>".contains(c))
        .map(|word| word.trim_end_matches(['.', ':']))
        .filter(|word| {
            word.contains('/')
                && word
                    .rsplit('/')
                    .next()
                    .is_some_and(|name| name.contains('.'))
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// The last part of `text` of at most `chars` characters.
fn tail(text: &str, chars: usize) -> &str {
    let skip = text.chars().count().saturating_sub(chars);
    text.char_indices()
        .nth(skip)
        .map_or("", |(offset, _)| &text[offset..])
}

#[tokio::test]
async fn offline_summary_is_structured_bounded_and_keeps_more_paths_than_the_verbatim_tail() {
    let session = demo();
    for keep in [500, 2_000] {
        let settings = CompactionSettings {
            enabled: true,
            reserve_tokens: 4_000,
            keep_recent_tokens: keep,
        };
        let preparation = prepare_compaction(&session, None, settings)
            .unwrap()
            .unwrap();
        let result = compact(
            &preparation,
            &OfflineSummarizer::default(),
            &Prompts::default(),
            &CompactOptions::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        let history = result.summary.split("\n\n---\n\n").next().unwrap();
        assert!(history.starts_with(OFFLINE_NOTICE));
        for heading in [
            "## Goal",
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
            "## Critical Context",
        ] {
            assert!(history.contains(heading), "{heading} missing in\n{history}");
        }
        assert!(ctxkit_tokens::utf16_len(history) <= 4 * settings.max_summary_tokens() as usize);
        let span = serialize_messages(&preparation.messages_to_summarize);
        let wanted = paths(&span);
        let baseline = tail(&span, history.chars().count());
        let kept = |text: &str| wanted.iter().filter(|path| text.contains(*path)).count();
        assert!(wanted.len() > 5, "{wanted:?}");
        assert!(
            kept(history) > kept(baseline),
            "keep {keep}: {} of {} paths against the tail's {}\n{history}",
            kept(history),
            wanted.len(),
            kept(baseline)
        );
    }
}

#[tokio::test]
async fn offline_summaries_are_deterministic() {
    let session = demo();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 4_000,
        keep_recent_tokens: 1_000,
    };
    let preparation = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    let (prompts, options, cancel) = (
        Prompts::default(),
        CompactOptions::default(),
        CancellationToken::new(),
    );
    let first = compact(
        &preparation,
        &OfflineSummarizer::default(),
        &prompts,
        &options,
        &cancel,
    )
    .await
    .unwrap();
    let second = compact(
        &preparation,
        &OfflineSummarizer::default(),
        &prompts,
        &options,
        &cancel,
    )
    .await
    .unwrap();
    assert_eq!(first.summary, second.summary);
}

/// QA r98: a branch summary's request leaves tool results out of its text (as Pi's does), and the
/// offline summarizer, which read only that, wrote every call of the branch as "no result yet". The
/// request's structure now carries the results; its text is unchanged.
#[tokio::test]
async fn an_offline_branch_summary_knows_what_the_branch_s_calls_did() {
    let session = demo();
    let first_prompt = session
        .branch_path(None)
        .iter()
        .find(|entry| entry.role() == Some("user"))
        .map(|entry| entry.id().to_owned())
        .unwrap();
    let leaf = session.leaf_id().unwrap().to_owned();
    let branch =
        ctxkit_compaction::collect_branch_entries(&session, Some(&leaf), Some(&first_prompt));
    let summary = ctxkit_compaction::summarize_branch(
        &session,
        &branch.entries,
        &OfflineSummarizer::default(),
        &Prompts::default(),
        &ctxkit_compaction::BranchSummaryOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        !summary.summary.contains("no result yet"),
        "{}",
        summary.summary
    );
    assert!(
        summary.summary.contains("passed after"),
        "{}",
        summary.summary
    );
    // What a model is sent: no tool result, as Pi sends it.
    assert!(
        !summary.request.user_text.contains("[Tool result]"),
        "{}",
        summary.request.user_text
    );
    assert!(
        summary
            .request
            .source
            .messages
            .iter()
            .any(|message| message.as_tool_result().is_some())
    );
}
